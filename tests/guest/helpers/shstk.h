/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shstk.h - shared bits of the kernel conformance helpers (tests/guest/helpers).
 *
 * The ABI is the one merged in Linux 6.6 (its uapi headers). Debian 12's kernel headers
 * predate it, so every number is defined here.
 *
 * Conventions of every helper:
 *   helper CASE [args]      run one test case
 *   stdout                  "  ok   ..." / "  FAIL ..." per check, "SKIP: why" for a skip
 *   exit status             0 passed, 1 failed, 77 skipped, anything else: crashed
 *
 * A case that enables the shadow stack itself must never return from the function that
 * enabled it: right after ARCH_SHSTK_ENABLE the new shadow stack is empty, so the `ret`
 * of that function would find no return address on it and raise #CP. Every case
 * function is therefore noreturn (it ends in finish()), and the enabling arch_prctl is
 * an inline `syscall` instruction, never a call into libc's syscall().
 */
#ifndef CETCTL_TEST_SHSTK_H
#define CETCTL_TEST_SHSTK_H

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* the ABI: one copy, src/lib/cet-abi.h, for cetctl and its tests */
#include "cet-abi.h"
#define F_SHSTK			((unsigned long)ARCH_SHSTK_SHSTK)
#define F_WRSS			((unsigned long)ARCH_SHSTK_WRSS)
#define NR_map_shadow_stack	__NR_map_shadow_stack
#define SEGV_CPERR_CODE		SEGV_CPERR
#define NT_X86_SHSTK_REGSET	NT_X86_SHSTK
#define PTRACE_ARCH_PRCTL_REQ	PTRACE_ARCH_PRCTL
#define NR_arch_prctl		158
#define TOKEN_BIT63		(1UL << 63)

#define PAGE 4096UL

/* Test harness state: one counter of failed checks per process. */
static int t_fails;

static void t_out(const char *tag, const char *fmt, va_list ap)
{
	char buf[512];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	printf("  %s %s\n", tag, buf);
}

__attribute__((format(printf, 2, 3)))
static bool check(bool cond, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	t_out(cond ? "ok  " : "FAIL", fmt, ap);
	va_end(ap);
	if (!cond)
		t_fails++;
	return cond;
}

__attribute__((format(printf, 1, 2)))
static void info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	t_out("info", fmt, ap);
	va_end(ap);
}

static const char *errname(long err)
{
	const char *n;

	if (err == 0)
		return "0 (success)";
	n = strerrorname_np((int)err);
	return n ? n : "unknown-errno";
}

/* A syscall result (0 or -errno) must equal the expected one (0 or an errno). */
static bool check_ret(long got, int want, const char *what)
{
	long g = got < 0 ? -got : got;

	return check(g == want, "%s -> %s (expected %s)", what, errname(g), errname(want));
}

__attribute__((noreturn))
static void finish(void)
{
	fflush(stdout);
	if (t_fails)
		printf("RESULT: %d check(s) failed\n", t_fails);
	else
		printf("RESULT: all checks passed\n");
	fflush(stdout);
	exit(t_fails ? 1 : 0);
}

__attribute__((noreturn, format(printf, 1, 2)))
static void skip(const char *fmt, ...)
{
	va_list ap;
	char buf[512];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	printf("SKIP: %s\n", buf);
	fflush(stdout);
	exit(77);
}

/* arch_prctl as one inline `syscall` (no call frame): returns 0 or -errno. */
static inline __attribute__((always_inline)) long arch_prctl_raw(long op, unsigned long arg)
{
	long ret;
	register long a1 asm("rdi") = op;
	register unsigned long a2 asm("rsi") = arg;

	asm volatile("syscall"
		     : "=a"(ret)
		     : "0"((long)NR_arch_prctl), "r"(a1), "r"(a2)
		     : "rcx", "r11", "memory", "cc");
	return ret;
}

/* RDSSP is a NOP while shadow stacks are off, so this reads 0 then. */
static inline __attribute__((always_inline)) unsigned long read_ssp(void)
{
	unsigned long v = 0;

	asm volatile("rdsspq %0" : "+r"(v));
	return v;
}

static inline __attribute__((always_inline)) void wrss(unsigned long *addr, unsigned long val)
{
	asm volatile("wrssq %[v], (%[a])" : : [a] "r"(addr), [v] "r"(val) : "memory");
}

static long map_shadow_stack(unsigned long addr, unsigned long size, unsigned long flags)
{
	long r = syscall(NR_map_shadow_stack, addr, size, flags);

	return r == -1 ? -errno : r;
}

static unsigned long shstk_status(void)
{
	unsigned long f = ~0UL;
	long r = arch_prctl_raw(ARCH_SHSTK_STATUS, (unsigned long)&f);

	return r ? ~0UL : f;
}

/* /proc/cpuinfo lists the CPU (and kernel) capability `user_shstk`. */
static bool cpu_has_user_shstk(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[8192];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *tok, *save;

		if (strncmp(line, "flags", 5))
			continue;
		for (tok = strtok_r(line, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save))
			if (!strcmp(tok, "user_shstk"))
				found = true;
		break;
	}
	fclose(f);
	return found;
}

/* Value of a "Key:" line of a status file, trailing blanks stripped; false if absent. */
static bool status_field(const char *path, const char *key, char *out, size_t outsz)
{
	FILE *f = fopen(path, "r");
	char line[512];
	size_t kl = strlen(key);
	bool found = false;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, kl) || line[kl] != ':')
			continue;
		char *v = line + kl + 1;
		while (*v == ' ' || *v == '\t')
			v++;
		size_t n = strlen(v);
		while (n && (v[n - 1] == '\n' || v[n - 1] == ' ' || v[n - 1] == '\t'))
			v[--n] = 0;
		snprintf(out, outsz, "%s", v);
		found = true;
		break;
	}
	fclose(f);
	return found;
}

static bool kernel_has_status_lines(void)
{
	char v[128];

	return status_field("/proc/self/status", "x86_Thread_features", v, sizeof(v));
}

/* The kernel must be built with user shadow stacks, else nothing here applies. */
static void require_kernel_support(void)
{
	if (!kernel_has_status_lines())
		skip("kernel without user shadow-stack support (no x86_Thread_features in /proc/self/status)");
}

static void require_hw(void)
{
	require_kernel_support();
	if (!cpu_has_user_shstk())
		skip("no shadow-stack hardware (cpuinfo lacks user_shstk)");
}

static void require_no_hw(void)
{
	require_kernel_support();
	if (cpu_has_user_shstk())
		skip("shadow-stack hardware present: the no-hardware behaviour does not apply");
}

/* ENABLE failed: a skip without hardware, a failure with it. */
__attribute__((noreturn))
static void enable_failed(long r, const char *what)
{
	if (cpu_has_user_shstk()) {
		check(false, "%s failed: %s although cpuinfo has user_shstk", what, errname(-r));
		finish();
	}
	skip("no shadow-stack hardware (cpuinfo lacks user_shstk); %s: %s", what, errname(-r));
}

/* Must be expanded in a function that never returns (see the top of this file). */
#define ENABLE_SHSTK_OR_SKIP() do {						\
	long _r = arch_prctl_raw(ARCH_SHSTK_ENABLE, F_SHSTK);			\
	if (_r)									\
		enable_failed(_r, "ARCH_SHSTK_ENABLE(SHSTK)");			\
} while (0)

#define ENABLE_WRSS_OR_FAIL() do {						\
	long _r = arch_prctl_raw(ARCH_SHSTK_ENABLE, F_WRSS);			\
	if (_r) {								\
		check(false, "ARCH_SHSTK_ENABLE(WRSS) failed: %s", errname(-_r)); \
		finish();							\
	}									\
} while (0)

/* ---- /proc/self/smaps: which VMAs carry the `ss` VmFlag ---- */
struct vma_info {
	unsigned long start, end;
	bool ss;
};

/* Fills up to max VMAs; returns the number read, or -1. */
static int read_vmas(pid_t pid, struct vma_info *v, int max)
{
	char path[64], line[1024];
	FILE *f;
	int n = 0;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/smaps");
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e;

		if (sscanf(line, "%lx-%lx ", &s, &e) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			if (n == max)
				break;
			v[n].start = s;
			v[n].end = e;
			v[n].ss = false;
			n++;
		} else if (n && !strncmp(line, "VmFlags:", 8)) {
			char *tok, *save;

			for (tok = strtok_r(line + 8, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
				if (!strcmp(tok, "ss"))
					v[n - 1].ss = true;
		}
	}
	fclose(f);
	return n;
}

static int count_ss_vmas(pid_t pid)
{
	struct vma_info v[1024];
	int n = read_vmas(pid, v, 1024), c = 0;

	if (n < 0)
		return -1;
	for (int i = 0; i < n; i++)
		c += v[i].ss;
	return c;
}

/* 1: addr is in an ss VMA, 0: in a normal VMA, -1: unmapped. */
static int addr_in_ss_vma(unsigned long addr, unsigned long *start, unsigned long *end)
{
	struct vma_info v[1024];
	int n = read_vmas(0, v, 1024);

	for (int i = 0; i < n; i++)
		if (addr >= v[i].start && addr < v[i].end) {
			if (start)
				*start = v[i].start;
			if (end)
				*end = v[i].end;
			return v[i].ss;
		}
	return -1;
}

/* ---- children ---- */

/* Describe a wait status for the log. */
static const char *wstr(int st)
{
	static char buf[96];

	if (WIFEXITED(st))
		snprintf(buf, sizeof(buf), "exit %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(buf, sizeof(buf), "killed by %s", sigabbrev_np(WTERMSIG(st)) ?: "?");
	else
		snprintf(buf, sizeof(buf), "status 0x%x", st);
	return buf;
}

static int wait_child(pid_t pid)
{
	int st = 0;

	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return st;
}

/*
 * A SIGSEGV/SIGILL handler for children that must die of a specific fault: it exits
 * with 100 + si_code, so the parent sees which fault it was. _exit() never returns,
 * so the handler's shadow-stack frame does not matter.
 */
static void fault_exit_handler(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	_exit((sig == SIGILL ? 150 : 100) + si->si_code);
}

static void catch_faults_with_code(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fault_exit_handler;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);
}

/*
 * A return whose normal-stack copy was replaced: push our own label and `ret` to it.
 * The normal stack agrees, the shadow stack still holds the caller's address: #CP.
 */
__attribute__((noinline)) static void corrupted_return(void)
{
	asm volatile("lea 1f(%%rip), %%rax\n\tpush %%rax\n\tret\n1:" : : : "rax", "memory");
}

__attribute__((noinline)) static int recurse(int n)
{
	int r;

	if (n <= 0)
		return 0;
	r = recurse(n - 1) + 1;
	asm volatile("" : : : "memory");
	return r;
}

#endif
