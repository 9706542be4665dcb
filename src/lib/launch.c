// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The fail-closed start-up (see launch.h). Processes and stops:
 *
 *   caller P (becomes the program)      tracer T (grandchild, own pgrp)
 *   clone C (no exit signal);
 *   C: setpgid, clone T (fork under Yama or ASan), exit
 *   [Yama scope 1: PR_SET_PTRACER C,
 *    "go" -->; C lives until P lets go]
 *                                       PTRACE_SEIZE(P, EXITKILL|TRACEEXEC|SYSGOOD)
 *                                  <-- SEIZED (or the errno)
 *                                       pidfd: P's pid as /proc numbers it
 *   reap C, execve                       wait: signal-delivery-stops before the
 *                                        exec pass through, group-stops LISTEN
 *                                        PTRACE_EVENT_EXEC stop
 *                                        PTRACE_SYSCALL -> execve exit stop
 *                                        AT_SECURE? x86-64? inject, lock,
 *                                        verify, DETACH(first held signal)
 *
 * One message on the critical path before the exec (SEIZED): T seizes as
 * soon as it runs, unless Yama's relational ptrace_scope needs P to name
 * a tracer first; then P names C (Yama accepts any descendant of the named
 * process, so T), which is known the moment it is cloned, and C stays
 * alive until the seize, since Yama forgets a relation whose tracer exits.
 * C is cloned without an exit signal: the caller's SIGCHLD disposition
 * cannot reap it, no SIGCHLD reaches P while it is traced, and P reaps it
 * (__WALL) right before its exec, by when it has long exited. Without
 * Yama, C has nothing to wait for, and neither C nor T copies P's memory:
 * C shares it while P sleeps (CLONE_VM | CLONE_VFORK, as posix_spawn
 * does), T shares it until P's exec and then keeps the old address space
 * to itself (see tracer_vm()). That saves two page-table copies per
 * start-up, and P's exec no longer tears cetctl's address space down on
 * the program's critical path: T's exit does, after the detach.
 *
 * P never runs the program unless T seized it first (it execs only after
 * SEIZED); from then on the kernel kills P if T exits (EXITKILL), and T lets
 * the program run only by the final detach. The exec event stop is a ptrace
 * event, not a signal: the caller's signal mask and dispositions do not
 * matter. After the exec, signals are held (suppressed at their
 * delivery-stops) and handed back at the detach, so the program sees them
 * once, as if sent just after its start.
 */
#include <errno.h>
#include <elf.h>
#include <sched.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <poll.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cet-abi.h"
#include "launch.h"
#include "shstk.h"

#ifndef PTRACE_EVENT_STOP
#define PTRACE_EVENT_STOP	128
#endif
#ifndef PR_SET_PTRACER
#define PR_SET_PTRACER		0x59616d61
#endif
#ifndef AT_SECURE
#define AT_SECURE		23
#endif

#define MAX_PENDING	32
#define USER_CS_64	0x33	/* __USER_CS: 64-bit mode (x86-64 and x32) */
#define INSN_SYSCALL	0x050fUL	/* 0f 05, little endian */
#define INSN_INT80	0x80cdUL	/* cd 80: the 32-bit entry */
#define NR32_EXIT_GROUP	252

struct tracee {
	pid_t pid;		/* in our pid namespace */
	pid_t proc_pid;		/* the same process as /proc numbers it */
	pid_t proc_self;	/* the tracer as /proc numbers it */
	int pending[MAX_PENDING];
	int npending;
	bool poked;		/* the syscall instruction is in place */
	unsigned long spot;	/* where */
	unsigned long word[2];	/* the original aligned word(s) there */
	int nwords;		/* 2 when the instruction straddles two words */
	unsigned long entry;	/* AT_ENTRY: the program's own entry point */
	struct user_regs_struct saved;	/* registers at the execve exit stop */
	bool have_regs;
	unsigned long long kernel_pending;	/* SigPnd|ShdPnd at the last check */
	struct launch_result *res;
};

/*
 * Fault injection, compiled only into the test build (cetctl-faults):
 * CETCTL_FAULT=<step>:<action> acts at a named step of the start-up, to
 * force the races the fail-closed tests need. Actions: kill (this process
 * dies of SIGKILL), exit (it exits 3), sig=N (signal N to the program),
 * pgsig=N (signal N to the program's process group), sleep=MS, closefds
 * (close every descriptor above stderr, then linger 300 ms).
 * CETCTL_FAULT2: a second one, the same way (two steps, two signals).
 * CETCTL_FAULT_VERIFY=1: the final check reads an empty /proc/PID/status.
 * CETCTL_FAULT_YAMA=1: the hand-shake Yama's relational ptrace_scope needs,
 * where there is no Yama (the protocol, not Yama's permission check).
 * CETCTL_FAULT_LOG=FILE: the tracer appends "verified PID" right before it
 * detaches, so a test can tell a program released by a verified start-up.
 */
#ifdef CETCTL_FAULT_HOOKS
static void fault_act(const char *f, const char *step, pid_t program)
{
	const char *colon;
	size_t n = strlen(step);

	if (!f || strncmp(f, step, n) || f[n] != ':')
		return;
	colon = f + n + 1;
	if (strcmp(colon, "kill") == 0)
		kill(getpid(), SIGKILL);
	else if (strcmp(colon, "exit") == 0)
		_exit(3);
	else if (strncmp(colon, "sig=", 4) == 0)
		kill(program, atoi(colon + 4));

	else if (strncmp(colon, "pgsig=", 6) == 0)
		kill(-getpgid(program), atoi(colon + 6));
	else if (strncmp(colon, "sleep=", 6) == 0)
		usleep((useconds_t)atoi(colon + 6) * 1000);
	else if (strcmp(colon, "closefds") == 0) {
		/* gone as far as the other side can tell, yet still here */
		syscall(SYS_close_range, 3U, ~0U, 0U);
		usleep(300 * 1000);
	}
}

/*
 * Every fault point, in the order a start-up reaches them, and the methods
 * that reach it: the middle process (c-*, ptrace method only), the caller
 * (p-*) and the tracer. The tests take this list from the binary
 * (CETCTL_FAULT_LIST, launch_fault_list()), not from a copy of their own.
 */
enum { FAULT_PTRACE = 1, FAULT_GLIBC = 2, FAULT_BOTH = 3 };
static const struct {
	const char *name;
	unsigned int methods;
} fault_steps[] = {
	{ "c-start",      FAULT_PTRACE },
	{ "c-forked",     FAULT_PTRACE },
	{ "p-forked",     FAULT_BOTH },
	{ "t-start",      FAULT_BOTH },
	{ "t-seize",      FAULT_BOTH },
	{ "t-seized",     FAULT_BOTH },
	{ "p-seized",     FAULT_BOTH },
	{ "exec-event",   FAULT_BOTH },
	{ "exec-exit",    FAULT_BOTH },
	{ "inject-enter", FAULT_PTRACE },
	{ "inject-exit",  FAULT_PTRACE },
	{ "injected",     FAULT_PTRACE },
	{ "loader",       FAULT_GLIBC },
	{ "entry",        FAULT_GLIBC },
	{ "verified",     FAULT_BOTH },
};

int launch_fault_list(FILE *out, const char *method)
{
	unsigned int want = FAULT_BOTH;
	size_t i;

	if (method && strcmp(method, "ptrace") == 0)
		want = FAULT_PTRACE;
	else if (method && strcmp(method, "glibc") == 0)
		want = FAULT_GLIBC;
	else if (method && *method && strcmp(method, "all") != 0)
		return -EINVAL;
	for (i = 0; i < sizeof(fault_steps) / sizeof(fault_steps[0]); i++)
		if (fault_steps[i].methods & want)
			fprintf(out, "%s\n", fault_steps[i].name);
	return 0;
}

static void fault_point(const char *step, pid_t program)
{
	size_t i;

	/* a point missing from the list would be missed by every test */
	for (i = 0; i < sizeof(fault_steps) / sizeof(fault_steps[0]); i++)
		if (strcmp(fault_steps[i].name, step) == 0)
			break;
	if (i == sizeof(fault_steps) / sizeof(fault_steps[0]))
		abort();
	fault_act(getenv("CETCTL_FAULT"), step, program);
	fault_act(getenv("CETCTL_FAULT2"), step, program);
}

static void fault_log(const char *what, pid_t pid)
{
	const char *log = getenv("CETCTL_FAULT_LOG");
	char line[64];
	int fd, n;

	if (!log)
		return;
	fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	n = snprintf(line, sizeof(line), "%s %d\n", what, (int)pid);
	if (write(fd, line, (size_t)n) < 0)
		n = 0;
	close(fd);
}
#else
#define fault_point(step, program)	do { } while (0)
#define fault_log(what, pid)		do { } while (0)
#endif

/*
 * ptrace() with every argument a full 64-bit word: glibc reads addr and data
 * as pointers through varargs, so an int there would leave the upper half
 * unspecified.
 */
static long pt(int req, pid_t pid, unsigned long addr, unsigned long data)
{
	return ptrace((enum __ptrace_request)req, pid, (void *)addr, (void *)data);
}

static int fail(struct tracee *t, enum launch_stage stage, int err, const char *what)
{
	t->res->stage = stage;
	t->res->err = err;
	t->res->what = what;
	return -1;
}

/*
 * The registers, as read: a PTRACE_GETREGS answered 0 by a filter writes
 * nothing, so the buffer is filled with a pattern no real register set has
 * (cs is 0x33 or 0x23) and an untouched one is a failure.
 */
static int get_regs(struct tracee *t, struct user_regs_struct *regs)
{
	memset(regs, 0xa5, sizeof(*regs));
	if (pt(PTRACE_GETREGS, t->pid, 0, (unsigned long)regs) < 0)
		return fail(t, LAUNCH_TRACE, -errno, "PTRACE_GETREGS");
	if (regs->cs == 0xa5a5a5a5a5a5a5a5ULL)
		return fail(t, LAUNCH_TRACE, -EPROTO, "PTRACE_GETREGS returned no registers");
	return 0;
}

/*
 * Set the registers and read them back: they count as set only when
 * PTRACE_GETREGS shows them (a PTRACE_SETREGS answered 0 changes nothing,
 * and resuming then would run the program's own code).
 */
static int set_regs(struct tracee *t, const struct user_regs_struct *want)
{
	struct user_regs_struct got;

	if (pt(PTRACE_SETREGS, t->pid, 0, (unsigned long)want) < 0)
		return fail(t, LAUNCH_TRACE, -errno, "PTRACE_SETREGS");
	if (get_regs(t, &got) < 0)
		return -1;
	if (got.rip != want->rip || got.rax != want->rax || got.orig_rax != want->orig_rax ||
	    got.rdi != want->rdi || got.rsi != want->rsi || got.rdx != want->rdx ||
	    got.rbx != want->rbx || got.rsp != want->rsp || got.cs != want->cs)
		return fail(t, LAUNCH_TRACE, -EPROTO,
			    "PTRACE_SETREGS: the registers read back are not the ones set");
	return 0;
}

/* The same through the other interface, PTRACE_SETREGSET (NT_PRSTATUS),
 * and read back through PTRACE_GETREGSET: the way out when the first was
 * answered without effect, to make the program exit by itself. */
static int set_regs_regset(struct tracee *t, const struct user_regs_struct *want)
{
	struct user_regs_struct got, w = *want;
	struct iovec iov = { &w, sizeof(w) };

	if (pt(PTRACE_SETREGSET, t->pid, NT_PRSTATUS, (unsigned long)&iov) < 0)
		return -1;
	memset(&got, 0xa5, sizeof(got));
	iov = (struct iovec){ &got, sizeof(got) };
	if (pt(PTRACE_GETREGSET, t->pid, NT_PRSTATUS, (unsigned long)&iov) < 0 ||
	    iov.iov_len != sizeof(got) || got.rip != want->rip || got.rax != want->rax ||
	    got.orig_rax != want->orig_rax || got.rdi != want->rdi || got.rbx != want->rbx ||
	    got.cs != want->cs)
		return -1;
	return 0;
}

/*
 * The program's text as the kernel has it, read with process_vm_readv(),
 * which answers with a byte count (a filter answering 0 cannot pass for
 * it). 0, or -1 with the result filled.
 */
static int read_text(struct tracee *t, unsigned long addr, unsigned long *word)
{
	struct iovec local = { word, sizeof(*word) };
	struct iovec remote = { (void *)addr, sizeof(*word) };
	ssize_t n = process_vm_readv(t->pid, &local, 1, &remote, 1, 0);

	if (n != (ssize_t)sizeof(*word))
		return fail(t, LAUNCH_TRACE, n < 0 ? -errno : -EPROTO,
			    "reading the program's text (process_vm_readv)");
	return 0;
}

/* PTRACE_POKETEXT, counted as done only when the text reads back so. */
static int write_text(struct tracee *t, unsigned long addr, unsigned long word)
{
	unsigned long back;

	if (pt(PTRACE_POKETEXT, t->pid, addr, word) < 0)
		return fail(t, LAUNCH_TRACE, -errno, "PTRACE_POKETEXT at the entry point");
	if (read_text(t, addr, &back) < 0)
		return -1;
	if (back != word)
		return fail(t, LAUNCH_TRACE, -EPROTO,
			    "PTRACE_POKETEXT: the text read back is not the one written");
	return 0;
}

/*
 * Wait for an event of @pid, with no bound in time: used only where the
 * program may legitimately stay stopped (job control before the exec, the
 * loader's phase). Every answer is an event or an error: a wait that
 * returns without a process (0, or another pid: a seccomp filter answering
 * wait4 with 0) is one, never a reason to ask again.
 */
static int wait_tracee(pid_t pid, int *status)
{
	for (;;) {
		pid_t r = waitpid(pid, status, __WALL);

		if (r == pid)
			return 0;
		if (r < 0 && errno == EINTR)
			continue;
		return r < 0 ? -errno : -EPROTO;
	}
}

/* How long the tracer waits for a stop it caused (the program runs none of
 * its own code there): generous, for emulators on a loaded machine. */
static int step_timeout_ms(void)
{
#ifdef CETCTL_FAULT_HOOKS
	const char *ms = getenv("CETCTL_FAULT_TIMEOUT_MS");

	if (ms)
		return atoi(ms);
#endif
	return 20000;
}

static long long now_ms(void)
{
	struct timespec ts;

	/* the vDSO: no system call a filter could answer */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Forget the SIGCHLDs of events already waited for (see wait_bounded()). */
static void drain_chld(void)
{
	struct timespec zero = { 0, 0 };
	sigset_t chld;
	int i;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	for (i = 0; i < 4 && sigtimedwait(&chld, NULL, &zero) == SIGCHLD; i++)
		;
}

/*
 * Wait for an event of @pid that the tracer caused, bounded in time: a
 * request the kernel did not carry out (answered 0 by a filter) leaves the
 * program where it was and no event comes. The tracer has SIGCHLD blocked
 * (tracer()); the kernel sends it one for each stop or death of its
 * tracee, so it sleeps in sigtimedwait between non-blocking waits. The
 * caller drains SIGCHLD (drain_chld()) before the request that causes the
 * event: a SIGCHLD from the program that no wait returns is then a lie
 * (the kernel makes a stop or death visible to wait before it signals).
 */
static int wait_bounded(pid_t pid, int *status)
{
	long long deadline = now_ms() + step_timeout_ms(), left;
	struct timespec ts;
	siginfo_t si;
	sigset_t chld;
	pid_t r;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	for (;;) {
		r = waitpid(pid, status, __WALL | WNOHANG);
		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r > 0)
			return -EPROTO;
		left = deadline - now_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		ts.tv_sec = left / 1000;
		ts.tv_nsec = (left % 1000) * 1000000;
		memset(&si, 0, sizeof(si));
		if (sigtimedwait(&chld, &si, &ts) != SIGCHLD || si.si_pid != pid)
			continue;
		r = waitpid(pid, status, __WALL | WNOHANG);
		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
		return -EPROTO;	/* the kernel said it stopped; wait says nothing */
	}
}

static bool is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* Drop the held signals @drop says to drop (as the kernel drops pending
 * ones when a stop or continue signal is sent). */
static void drop_held(struct tracee *t, bool (*drop)(int sig))
{
	int i, n = 0;

	for (i = 0; i < t->npending; i++)
		if (!drop(t->pending[i]))
			t->pending[n++] = t->pending[i];
	t->npending = n;
}

static bool is_cont(int sig)
{
	return sig == SIGCONT;
}

/*
 * Hold a signal for the detach, with the kernel's stop/continue rules
 * applied in arrival order: a SIGCONT cancels the stop signals held before
 * it, a stop signal the SIGCONTs. A SIGSTOP then SIGCONT pair leaves the
 * program running, as it would a plain child (handing both back, the
 * SIGCONT would act first, at its sending, and the stop last).
 */
static void hold_signal(struct tracee *t, int sig)
{
	int i;

	if (sig == SIGCONT)
		drop_held(t, is_stop_signal);
	else if (is_stop_signal(sig))
		drop_held(t, is_cont);

	for (i = 0; i < t->npending; i++)
		if (t->pending[i] == sig && sig < SIGRTMIN)
			return;	/* standard signals do not queue: once */
	if (t->npending < MAX_PENDING)
		t->pending[t->npending++] = sig;
}

/*
 * After the exec: resume with @req (PTRACE_CONT or PTRACE_SYSCALL) until a
 * stop whose status>>8 is @want. Signal-delivery-stops on the way are held
 * (suppressed now, handed back at the detach); other event stops are
 * resumed. Returns 0, or -1 with the result filled (the program died:
 * LAUNCH_DIED; ptrace failed: LAUNCH_TRACE).
 */
static int resume_until(struct tracee *t, int req, int want)
{
	int status, ret;

	for (;;) {
		drain_chld();
		if (pt(req, t->pid, 0, 0) < 0)
			return fail(t, LAUNCH_TRACE, -errno,
				    req == PTRACE_CONT ? "PTRACE_CONT" : "PTRACE_SYSCALL");
		ret = wait_bounded(t->pid, &status);
		if (ret < 0)
			return fail(t, LAUNCH_TRACE, ret, req == PTRACE_CONT ?
				    "waiting for the stop after PTRACE_CONT" :
				    "waiting for the stop after PTRACE_SYSCALL");
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			t->res->wstatus = status;
			t->pid = 0;	/* gone */
			return fail(t, LAUNCH_DIED, 0, NULL);
		}
		if (!WIFSTOPPED(status))
			continue;
		if ((status >> 8) == want)
			return 0;
		if ((status >> 16) == 0 && WSTOPSIG(status) != (SIGTRAP | 0x80))
			hold_signal(t, WSTOPSIG(status));
	}
}

/* ---- reading the tracee through /proc, the right one ---- */

static ssize_t read_file(const char *path, char *buf, size_t size)
{
	ssize_t n, total = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while ((size_t)total < size - 1) {
		n = read(fd, buf + total, size - 1 - (size_t)total);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			n = -errno;
			close(fd);
			return n;
		}
		if (n == 0)
			break;
		total += n;
	}
	close(fd);
	buf[total] = '\0';
	return total;
}

/* The number after "@key:" in @text, or -1. */
static long field_long(const char *text, const char *key)
{
	size_t n = strlen(key);
	const char *p = text;

	while (p && *p) {
		if (strncmp(p, key, n) == 0 && p[n] == ':')
			return strtol(p + n + 1, NULL, 10);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

/* The hexadecimal mask after "@key:" in @text, or 0. */
static unsigned long long field_hex(const char *text, const char *key)
{
	size_t n = strlen(key);
	const char *p = text;

	while (p && *p) {
		if (strncmp(p, key, n) == 0 && p[n] == ':')
			return strtoull(p + n + 1, NULL, 16);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return 0;
}

/*
 * The tracee's pid as /proc numbers it: in a child pid namespace with the
 * parent's /proc mounted (unshare -p without --mount-proc), /proc/<our pid>
 * is another process. A pidfd's fdinfo "Pid:" is translated into the pid
 * namespace of the /proc it is read from; 0 there means the process is not
 * visible in that /proc at all.
 */
static int resolve_proc_pid(struct tracee *t)
{
	char path[64], buf[4096], self[32];
	long pid;
	ssize_t n;
	int fd;

	n = readlink("/proc/self", self, sizeof(self) - 1);
	if (n <= 0)
		return fail(t, LAUNCH_VERIFY, n < 0 ? -errno : -EPROTO, "readlink /proc/self");
	self[n] = '\0';
	t->proc_self = (pid_t)atoi(self);

	fd = (int)syscall(SYS_pidfd_open, t->pid, 0);
	if (fd < 0) {
		/* No pidfds (before 5.3): only trust a /proc of our namespace. */
		if (t->proc_self != getpid())
			return fail(t, LAUNCH_VERIFY, -EXDEV, "/proc is another pid namespace's");
		t->proc_pid = t->pid;
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	n = read_file(path, buf, sizeof(buf));
	close(fd);
	if (n < 0)
		return fail(t, LAUNCH_VERIFY, (int)n, "reading the pidfd's fdinfo");
	pid = field_long(buf, "Pid");
	if (pid < 0 && t->proc_self == getpid())
		pid = t->pid;	/* fdinfo without Pid: (old kernel), same namespace */
	if (pid <= 0)
		return fail(t, LAUNCH_VERIFY, -EXDEV, "the program is not visible in /proc");
	t->proc_pid = (pid_t)pid;
	return 0;
}

/* 1 when the kernel set AT_SECURE in the new image's auxv, 0 not, or -1;
 * the entry point (AT_ENTRY) in t->entry. */
static int at_secure(struct tracee *t)
{
	char path[64];
	unsigned long auxv[2 * 64];
	ssize_t n;
	size_t i;
	int fd, ret = -1;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)t->proc_pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(t, LAUNCH_TRACE, -errno, "reading /proc/PID/auxv");
	n = read(fd, auxv, sizeof(auxv));
	close(fd);
	if (n < (ssize_t)(2 * sizeof(long)))
		return fail(t, LAUNCH_TRACE, n < 0 ? -errno : -EPROTO, "reading /proc/PID/auxv");
	for (i = 0; i + 1 < (size_t)n / sizeof(long) && auxv[i] != AT_NULL; i += 2) {
		if (auxv[i] == AT_ENTRY)
			t->entry = auxv[i + 1];
		if (auxv[i] == AT_SECURE)
			ret = auxv[i + 1] != 0;
	}
	if (ret < 0 || !t->entry)
		return fail(t, LAUNCH_TRACE, -EPROTO, "no AT_SECURE or AT_ENTRY in /proc/PID/auxv");
	return ret;
}

/* 0 when the new image is an x86-64 ELF program (not x32, not i386). */
static int check_x86_64(struct tracee *t)
{
	char path[64];
	Elf64_Ehdr eh;
	ssize_t n;
	int fd;

	if (t->saved.cs != USER_CS_64)
		return fail(t, LAUNCH_NOT64, -ENOEXEC, "a 32-bit program");
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)t->proc_pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(t, LAUNCH_TRACE, -errno, "opening /proc/PID/exe");
	n = pread(fd, &eh, sizeof(eh), 0);
	close(fd);
	if (n < (ssize_t)EI_NIDENT || memcmp(eh.e_ident, ELFMAG, SELFMAG))
		return fail(t, LAUNCH_NOT64, -ENOEXEC, "not an ELF image");
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || n != (ssize_t)sizeof(eh) ||
	    eh.e_machine != EM_X86_64)
		return fail(t, LAUNCH_NOT64, -ENOEXEC,
			    eh.e_ident[EI_CLASS] == ELFCLASS32 && eh.e_machine == EM_X86_64 ?
			    "an x32 program" : "not an x86-64 program");
	return 0;
}

/* ---- the injected calls ---- */

/*
 * Put the 2-byte instruction @insn at @addr, keeping the original text:
 * PEEK/POKE work on aligned words, so an instruction at the last byte of a
 * word takes two (the second may be on the next page, which must be mapped).
 */
static int poke_at(struct tracee *t, unsigned long addr, unsigned long insn)
{
	unsigned long aligned = addr & ~7UL, shift = (addr & 7) * 8, patched;
	int i;

	if (!t->poked) {
		t->spot = addr;
		t->nwords = (addr & 7) == 7 ? 2 : 1;
		for (i = 0; i < t->nwords; i++)
			if (read_text(t, aligned + 8UL * i, &t->word[i]) < 0)
				return -1;
	}
	if (t->nwords == 1) {
		patched = (t->word[0] & ~(0xffffUL << shift)) | (insn << shift);
		if (write_text(t, aligned, patched) < 0)
			return -1;
	} else {
		patched = (t->word[0] & ~(0xffUL << 56)) | ((insn & 0xff) << 56);
		t->poked = true;	/* from here, restore() puts the first word back */
		if (write_text(t, aligned, patched) < 0)
			return -1;
		patched = (t->word[1] & ~0xffUL) | (insn >> 8);
		if (write_text(t, aligned + 8, patched) < 0)
			return -1;
	}
	t->poked = true;
	return 0;
}

/* Whether the instruction poked at t->spot is still there. */
static bool poke_intact(struct tracee *t, unsigned long insn)
{
	unsigned long aligned = t->spot & ~7UL, w;

	if (read_text(t, aligned, &w) < 0)
		return false;
	if (t->nwords == 1)
		return ((w >> ((t->spot & 7) * 8)) & 0xffff) == insn;
	if ((w >> 56) != (insn & 0xff))
		return false;
	return read_text(t, aligned + 8, &w) == 0 && (w & 0xff) == (insn >> 8);
}

/*
 * A system-call instruction for the injected calls, where it fits: at the
 * entry point, unless it would straddle two words there (maybe two pages);
 * then at the start of the entry point's page, mapped and executable too.
 */
static int poke_insn(struct tracee *t, unsigned long insn)
{
	unsigned long rip = t->saved.rip;

	if (t->poked)
		return poke_at(t, t->spot, insn);
	return poke_at(t, (rip & 7) != 7 ? rip : (rip & ~0xfffUL), insn);
}

/* Run system call @nr(@a1, @a2) in the tracee at the poked instruction;
 * the return value in *result. */
static int remote_syscall(struct tracee *t, long nr, unsigned long a1, unsigned long a2,
			  long *result)
{
	struct user_regs_struct regs = t->saved;

	regs.rip = t->spot;
	regs.rax = (unsigned long long)nr;
	regs.orig_rax = (unsigned long long)-1;
	regs.rdi = a1;
	regs.rsi = a2;
	if (set_regs(t, &regs) < 0)
		return -1;
	fault_point("inject-enter", t->pid);
	if (resume_until(t, PTRACE_SYSCALL, SIGTRAP | 0x80) < 0)
		return -1;
	/* The syscall-enter stop: checked at the exit stop, where orig_rax and
	 * rip are still what the entry saw (one PTRACE_GETREGS fewer). */
	fault_point("inject-exit", t->pid);
	if (resume_until(t, PTRACE_SYSCALL, SIGTRAP | 0x80) < 0)
		return -1;
	if (get_regs(t, &regs) < 0)
		return -1;
	if (regs.orig_rax != (unsigned long long)nr || regs.rip != t->spot + 2)
		return fail(t, LAUNCH_TRACE, -EPROTO, "syscall stops of the injected call");
	*result = (long)regs.rax;
	return 0;
}

/* The original text back where the instruction was poked. */
static int unpoke(struct tracee *t)
{
	int i;

	for (i = 0; t->poked && i < t->nwords; i++)
		if (write_text(t, (t->spot & ~7UL) + 8UL * i, t->word[i]) < 0)
			return -1;
	t->poked = false;
	return 0;
}

/* Put the program back as exec left it. */
static int restore(struct tracee *t)
{
	if (unpoke(t) < 0)
		return -1;
	return set_regs(t, &t->saved);
}

/* Trust, but verify, from the kernel, for the stopped program. */
static int verify(struct tracee *t, const struct launch_opts *o)
{
	struct shstk_proc_features f;
	unsigned long status = 0;
	char path[64], buf[8192];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)t->proc_pid);
	n = read_file(path, buf, sizeof(buf));
	if (n < 0)
		return fail(t, LAUNCH_VERIFY, (int)n, "reading /proc/PID/status");
#ifdef CETCTL_FAULT_HOOKS
	if (getenv("CETCTL_FAULT_VERIFY"))
		buf[0] = '\0';	/* a status that proves nothing */
#endif
	/* Signals the kernel holds for it (arrived while it stayed stopped). */
	t->kernel_pending = field_hex(buf, "SigPnd") | field_hex(buf, "ShdPnd");
	/* The right process: the only one this tracer traces. */
	if (field_long(buf, "TracerPid") != t->proc_self)
		return fail(t, LAUNCH_VERIFY, -ESRCH, "/proc/PID/status is not the traced program");
	if (!o->enable)
		return 0;
	shstk_features_parse(buf, &f);
	t->res->status_lines = f.present;
	t->res->got_enabled = f.enabled;
	t->res->got_locked = f.locked;
	if (!f.present || (f.enabled & o->enable) != o->enable || (f.locked & o->lock) != o->lock)
		return fail(t, LAUNCH_VERIFY, -EPROTO, NULL);
	if (pt(PTRACE_ARCH_PRCTL, t->pid, (unsigned long)&status, ARCH_SHSTK_STATUS) < 0)
		return fail(t, LAUNCH_VERIFY, -errno, "PTRACE_ARCH_PRCTL(ARCH_SHSTK_STATUS)");
	if ((status & o->enable) != o->enable) {
		t->res->got_enabled = status;
		return fail(t, LAUNCH_VERIFY, -EPROTO, NULL);
	}
	return 0;
}

/*
 * The glibc method: the dynamic loader enables the shadow stack, so the
 * check comes after it and before the program's own code, at its entry
 * point (AT_ENTRY). A system-call instruction there marks it: the loader
 * (and the constructors of the libraries it loads) runs traced at every
 * system call, with signals and stops passed through as before the exec,
 * until the marker's syscall-enter stop. There the call is cancelled
 * (orig_rax -1), the text and registers are put back (rcx and r11, which
 * the instruction itself overwrote, hold nothing at an ELF entry point),
 * and the kernel is asked what the loader did. No breakpoint, no single
 * step: an int3 makes the kernel unblock and reset a blocked or ignored
 * SIGTRAP, and Bochs mishandles single steps. Should anything rewrite the
 * marker (a text relocation), it shows at the next system call, always
 * made after such a write (mprotect): then the start-up fails. A process
 * forked meanwhile (by a constructor) must not inherit the marker: it is
 * taken out across fork, vfork and clone, and put back at their exit stop.
 */
static int to_entry(struct tracee *t, const struct launch_opts *o)
{
	struct __ptrace_syscall_info info;
	struct user_regs_struct regs;
	int status, ret, sig = 0;
	bool resume = true;

	if (t->entry == t->saved.rip)
		return fail(t, LAUNCH_STATIC, -ENOEXEC, NULL);
	if (poke_at(t, t->entry, INSN_SYSCALL) < 0)
		return -1;
	fault_point("loader", t->pid);
	for (;;) {
		if (resume && pt(PTRACE_SYSCALL, t->pid, 0, (unsigned long)sig) < 0)
			return fail(t, LAUNCH_TRACE, -errno, "PTRACE_SYSCALL");
		sig = 0;
		resume = true;
		ret = wait_tracee(t->pid, &status);
		if (ret < 0)
			return fail(t, LAUNCH_TRACE, ret, "waitpid");
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			t->res->wstatus = status;
			t->pid = 0;
			return fail(t, LAUNCH_DIED, 0, NULL);
		}
		if (!WIFSTOPPED(status))
			continue;
		if ((status >> 8) == (SIGTRAP | 0x80)) {
			/* it answers with a size: 0 is no answer */
			if ((ret = (int)pt(PTRACE_GET_SYSCALL_INFO, t->pid, sizeof(info),
					   (unsigned long)&info)) <= 0)
				return fail(t, LAUNCH_TRACE, ret < 0 ? -errno : -EPROTO,
					    "PTRACE_GET_SYSCALL_INFO");
			if (!t->poked) {
				/* the exit stop of a fork: the marker back */
				if (info.op == PTRACE_SYSCALL_INFO_EXIT &&
				    poke_at(t, t->entry, INSN_SYSCALL) < 0)
					return -1;
				continue;
			}
			if (!poke_intact(t, INSN_SYSCALL))
				return fail(t, LAUNCH_TRACE, -EPROTO,
					    "the entry point was rewritten before the program started");
			if (info.op == PTRACE_SYSCALL_INFO_ENTRY &&
			    info.instruction_pointer == t->entry + 2)
				break;
			if (info.op == PTRACE_SYSCALL_INFO_ENTRY &&
			    (info.entry.nr == SYS_fork || info.entry.nr == SYS_vfork ||
			     info.entry.nr == SYS_clone || info.entry.nr == SYS_clone3) &&
			    unpoke(t) < 0)
				return -1;
		} else if ((status >> 16) == PTRACE_EVENT_EXEC) {
			return fail(t, LAUNCH_TRACE, -EPROTO, "an exec before the entry point");
		} else if ((status >> 16) == PTRACE_EVENT_STOP) {
			if (is_stop_signal(WSTOPSIG(status)) && pt(PTRACE_LISTEN, t->pid, 0, 0) == 0)
				resume = false;		/* a group-stop: until SIGCONT */
		} else if ((status >> 16) == 0) {
			sig = WSTOPSIG(status);	/* the program's libraries run: deliver */
		}
	}
	/* At the entry point, no instruction of the program run yet. */
	if (get_regs(t, &regs) < 0)
		return -1;
	regs.rax = regs.orig_rax;
	regs.orig_rax = (unsigned long long)-1;
	regs.rip = t->entry;
	t->saved = regs;
	fault_point("entry", t->pid);
	if (restore(t) < 0)
		return -1;
	return verify(t, o);
}

/* Everything between the exec event stop and the verified state. */
static int after_exec(struct tracee *t, const struct launch_opts *o)
{
	long result;
	int ret;

	fault_point("exec-event", t->pid);
	/* The exec event stop is inside execve: on to its syscall-exit stop,
	 * where rip is the entry point and no instruction has run. */
	if (resume_until(t, PTRACE_SYSCALL, SIGTRAP | 0x80) < 0)
		return -1;
	if (get_regs(t, &t->saved) < 0)
		return -1;
	t->have_regs = true;
	t->res->entry = t->saved.rip;
	fault_point("exec-exit", t->pid);
	if (t->proc_pid <= 0)
		return -1;	/* resolve_proc_pid() failed before the exec, said why */

	/* First: a 32-bit image has its own register view and auxv layout. */
	if (check_x86_64(t) < 0)
		return -1;
	ret = at_secure(t);
	if (ret < 0)
		return -1;
	if (ret)
		return fail(t, LAUNCH_SECURE, -EPERM, NULL);
	if ((t->saved.orig_rax != SYS_execve && t->saved.orig_rax != SYS_execveat) ||
	    t->saved.rax != 0)
		return fail(t, LAUNCH_TRACE, -EPROTO, "the execve syscall-exit stop");
	if (o->at_entry)
		return to_entry(t, o);

	if (poke_insn(t, INSN_SYSCALL) < 0)
		return -1;
	if (!o->enable) {
		/* Trace-only: prove the machinery with a harmless getpid(). */
		ret = remote_syscall(t, SYS_getpid, 0, 0, &result);
		if (ret == 0 && result != t->pid)
			ret = fail(t, LAUNCH_TRACE, -EPROTO, "injected getpid()");
	} else {
		ret = remote_syscall(t, SYS_arch_prctl, ARCH_SHSTK_ENABLE, ARCH_SHSTK_SHSTK,
				     &result);
		if (ret == 0 && result < 0)
			ret = fail(t, LAUNCH_ENABLE_SHSTK, (int)result, NULL);
		if (ret == 0 && (o->enable & ARCH_SHSTK_WRSS)) {
			ret = remote_syscall(t, SYS_arch_prctl, ARCH_SHSTK_ENABLE,
					     ARCH_SHSTK_WRSS, &result);
			if (ret == 0 && result < 0)
				ret = fail(t, LAUNCH_ENABLE_WRSS, (int)result, NULL);
		}
		if (ret == 0 && o->lock &&
		    pt(PTRACE_ARCH_PRCTL, t->pid, o->lock, ARCH_SHSTK_LOCK) < 0)
			ret = fail(t, LAUNCH_LOCK, -errno, NULL);
	}
	if (ret < 0)
		return -1;
	fault_point("injected", t->pid);
	if (restore(t) < 0)
		return -1;
	return verify(t, o);
}

/*
 * The start-up failed after the exec: the program must not run. Make it
 * exit with @code before its first instruction (an injected exit_group at
 * the execve exit stop), or kill it. It is resumed only once the kernel
 * shows the system-call instruction in its text and the registers that
 * make it exit_group(@code) (read back); any doubt is a SIGKILL.
 */
static void stop_program(struct tracee *t, int code)
{
	struct user_regs_struct regs;
	bool compat;
	int status, i;

	if (t->pid <= 0)
		return;
	if (!t->have_regs)
		goto kill;
	compat = t->saved.cs != USER_CS_64;
	if (poke_insn(t, compat ? INSN_INT80 : INSN_SYSCALL) < 0)
		goto kill;
	regs = t->saved;
	regs.rip = t->spot;
	regs.rax = compat ? NR32_EXIT_GROUP : SYS_exit_group;
	regs.orig_rax = (unsigned long long)-1;
	regs.rdi = regs.rbx = (unsigned long long)code;
	if (set_regs(t, &regs) < 0 && set_regs_regset(t, &regs) < 0)
		goto kill;
	/* signals arriving meanwhile stop it before the instruction: dropped */
	for (i = 0; i < 16; i++) {
		drain_chld();
		if (pt(PTRACE_CONT, t->pid, 0, 0) < 0 || wait_bounded(t->pid, &status) < 0)
			break;
		if (WIFEXITED(status) || WIFSIGNALED(status))
			return;
	}
kill:
	/* Not waited for: the init of a pid namespace ignores a SIGKILL from
	 * inside it; the kernel's kill-on-exit, when the tracer leaves right
	 * after this, does not (every caller exits next). */
	kill(t->pid, SIGKILL);
}

/* Messages from T to P. */
enum { MSG_SEIZED = 1, MSG_ERR };
/* The step that failed before the exec, for the message: which call. */
enum pre_step {
	STEP_FORK,		/* cloning the tracer (RLIMIT_NPROC: EAGAIN) */
	STEP_SEIZE,		/* PTRACE_SEIZE said no */
	STEP_PROC,		/* finding the program in /proc */
	STEP_INTERRUPT,		/* PTRACE_INTERRUPT said no */
	STEP_OBSERVE,		/* no ptrace stop of the program seen */
	STEP_TRACERPID,		/* /proc does not name the tracer */
	STEP_RESUME,		/* the caller was not seen resuming */
};
struct msg {
	int kind;
	int err;	/* ERR: errno of the failed step */
	int step;	/* ERR: enum pre_step */
};

static const char *pre_step_str(int step)
{
	switch (step) {
	case STEP_FORK:		return "fork of the tracer";
	case STEP_SEIZE:	return "PTRACE_SEIZE";
	case STEP_PROC:		return "finding the program in /proc";
	case STEP_INTERRUPT:	return "PTRACE_SEIZE answered, but PTRACE_INTERRUPT of the program failed";
	case STEP_OBSERVE:	return "PTRACE_SEIZE answered, but no ptrace stop of the program seen";
	case STEP_TRACERPID:	return "PTRACE_SEIZE answered, but /proc/PID/status names another tracer";
	case STEP_RESUME:	return "PTRACE_CONT answered, but the traced cetctl was not seen resuming";
	}
	return "starting the tracer";
}

static ssize_t xread(int fd, void *buf, size_t n)
{
	ssize_t r;

	do
		r = read(fd, buf, n);
	while (r < 0 && errno == EINTR);
	return r;
}

static void xwrite(int fd, const void *buf, size_t n)
{
	ssize_t r;

	do
		r = write(fd, buf, n);
	while (r < 0 && errno == EINTR);
}

/* Whether the tracee, which we saw stopped, was killed since: a stopped
 * tracee answers PTRACE_GETREGS, a dying one says ESRCH (then reap it). */
static bool killed(struct tracee *t)
{
	struct user_regs_struct regs;
	int status;

	if (pt(PTRACE_GETREGS, t->pid, 0, (unsigned long)&regs) == 0 || errno != ESRCH)
		return false;
	return wait_tracee(t->pid, &status) == 0 && !WIFSTOPPED(status);
}

/*
 * Whether Yama's relational ptrace_scope (1) is in force: then only an
 * ancestor, or a process the tracee named, may attach. Scope 0 and no Yama
 * need nothing; with 2 or 3 naming would not help (the seize says EPERM).
 */
static bool yama_relational(void)
{
	char buf[8];
	ssize_t n;

#ifdef CETCTL_FAULT_HOOKS
	if (getenv("CETCTL_FAULT_YAMA"))
		return true;
#endif
	n = read_file("/proc/sys/kernel/yama/ptrace_scope", buf, sizeof(buf));
	return n < 0 ? n != -ENOENT : atoi(buf) == 1;
}

/* The pipes: T -> P messages (SEIZED/ERR), P -> T "go" (Yama only; a
 * socket pair), and the one C waits on (Yama only: P closes its end after
 * the seize). */
struct launch_pipes {
	int msg[2], go[2], hold[2];
};

static void close_pipe(int p[2])
{
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
	p[0] = p[1] = -1;
}

/* Before the exec: pass a stop of the caller on as if it were not traced
 * (signals delivered, group-stops kept with PTRACE_LISTEN). True when it
 * asked for the caller to run on (PTRACE_CONT), which observe_resumed()
 * then checks. */
static bool pass_stop(pid_t pid, int status)
{
	if ((status >> 16) == PTRACE_EVENT_STOP) {
		if (is_stop_signal(WSTOPSIG(status))) {
			pt(PTRACE_LISTEN, pid, 0, 0);	/* a group-stop */
			return false;
		}
		pt(PTRACE_CONT, pid, 0, 0);
	} else if ((status >> 16) == 0) {
		pt(PTRACE_CONT, pid, 0, (unsigned long)WSTOPSIG(status));
	} else {
		pt(PTRACE_CONT, pid, 0, 0);
	}
	return true;
}

/*
 * Before the exec, a resume counts only when observed: the caller has left
 * its ptrace stop (/proc/PID/stat no longer says 't'), or a new event of it
 * (another stop, its death) is waiting. A PTRACE_CONT answered 0 without
 * resuming (a seccomp filter) would otherwise leave the caller stopped and
 * the tracer waiting for its exec for ever. 0, or -EPROTO once the step's
 * time is up; nothing here allocates (see tracer()).
 */
static int observe_resumed(const struct tracee *t)
{
	long long deadline = now_ms() + step_timeout_ms();
	struct timespec pause = { 0, 1000000 };
	char path[64], buf[512], *close_paren;
	siginfo_t si;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)t->proc_pid);
	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)t->pid, &si, WEXITED | WSTOPPED | WNOHANG | WNOWAIT | __WALL) == 0 &&
		    si.si_pid == t->pid)
			return 0;
		/* unreadable: not observed (its death shows in the wait above) */
		if (read_file(path, buf, sizeof(buf)) > 0) {
			close_paren = strrchr(buf, ')');
			if (close_paren && close_paren[1] == ' ' && close_paren[2] &&
			    close_paren[2] != 't')
				return 0;
		}
		if (now_ms() >= deadline)
			return -EPROTO;
		nanosleep(&pause, NULL);
	}
}

/* The TracerPid /proc/PID/status gives, or -1. */
static long tracer_pid(const struct tracee *t)
{
	char path[64], buf[4096];

	snprintf(path, sizeof(path), "/proc/%d/status", (int)t->proc_pid);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	return field_long(buf, "TracerPid");
}

/*
 * The seize counts only when observed: a ptrace stop of the caller, which
 * only its tracer's wait returns (we are not its parent), forced with
 * PTRACE_INTERRUPT; and /proc naming us as its tracer. A PTRACE_SEIZE that
 * answered 0 without attaching (a seccomp filter, a supervisor) fails
 * here, before the caller execs anything. 0; 1 when the caller died;
 * -errno with *step set.
 */
static int observe_seize(struct tracee *t, int *step)
{
	int status, ret;

	*step = STEP_PROC;
	if (resolve_proc_pid(t) < 0)
		return t->res->err;
	*step = STEP_INTERRUPT;
	drain_chld();
	if (pt(PTRACE_INTERRUPT, t->pid, 0, 0) < 0)
		return -errno;	/* ESRCH: not ours, whatever the seize said */
	*step = STEP_OBSERVE;
	ret = wait_bounded(t->pid, &status);
	if (ret < 0)
		return ret;
	if (!WIFSTOPPED(status))
		return 1;
	*step = STEP_TRACERPID;
	if (tracer_pid(t) != t->proc_self)
		return -EPROTO;
	/* a signal's stop may come first: the interrupt's follows, later */
	*step = STEP_RESUME;
	if (pass_stop(t->pid, status))
		return observe_resumed(t);
	return 0;
}

/* After a failure before the exec: the caller may be traced (kill-on-exit),
 * so let it say why and exit first; bounded. */
static void __attribute__((noreturn)) leave_after(pid_t pid)
{
	struct pollfd p = { .events = POLLIN };

	p.fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (p.fd > 0)
		poll(&p, 1, 5000);
	_exit(0);
}

static void __attribute__((noreturn))
tracer(pid_t pid, int wfd, int gofd, bool yama, const struct launch_opts *o,
       launch_report_fn report, void *arg)
{
	struct launch_result res = { 0 };
	struct tracee t = { .pid = pid, .res = &res };
	struct msg m;
	int status, i, devnull, step, ret;
	sigset_t chld;
	char go;

	/* Not stopped by the terminal (a write from a background group with
	 * TOSTOP), not hung up with it: short-lived, it finishes its job. */
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTTOU, SIG_IGN);
	signal(SIGTTIN, SIG_IGN);
	signal(SIGTSTP, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	/* the kernel's word that the tracee stopped or died (wait_bounded()) */
	signal(SIGCHLD, SIG_DFL);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	fault_point("t-start", pid);
	/* Under Yama, only once P has named C (whose descendant we are). */
	if (yama && xread(gofd, &go, 1) != 1)
		_exit(0);	/* the caller is gone: nothing was started */
	fault_point("t-seize", pid);
	if (pt(PTRACE_SEIZE, pid, 0,
	       PTRACE_O_EXITKILL | PTRACE_O_TRACEEXEC | PTRACE_O_TRACESYSGOOD) < 0) {
		m = (struct msg){ MSG_ERR, errno, STEP_SEIZE };
		xwrite(wfd, &m, sizeof(m));
		_exit(0);
	}
	fault_point("t-seized", pid);
	ret = observe_seize(&t, &step);
	if (ret > 0)
		_exit(0);	/* the caller died: nothing was started */
	if (ret < 0) {
		/* It may be stopped (by the interrupt) and ours: let it go, so
		 * that it can say why and exit; it runs nothing but cetctl. */
		pt(PTRACE_DETACH, pid, 0, 0);
		m = (struct msg){ MSG_ERR, -ret, step };
		xwrite(wfd, &m, sizeof(m));
		leave_after(pid);
	}
	m = (struct msg){ MSG_SEIZED, 0, 0 };
	xwrite(wfd, &m, sizeof(m));

	/* Keep only stderr (for the one line): the caller's files are the
	 * program's; a pipe must not stay open because of us. */
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull >= 0) {
		dup2(devnull, STDIN_FILENO);
		dup2(devnull, STDOUT_FILENO);
	}
	syscall(SYS_close_range, 3U, ~0U, 0U);

	/* Before the exec the caller is still cetctl: whatever happens to it
	 * happens as if it were not traced (signals pass, stops stay stops).
	 * Until then we may be running in its memory (tracer_vm()): nothing
	 * up to the exec event may allocate or use stdio. */
	for (;;) {
		if (wait_tracee(pid, &status) < 0 || WIFEXITED(status) || WIFSIGNALED(status))
			_exit(0);	/* died or failed its exec: it said so itself */
		if (!WIFSTOPPED(status))
			continue;
		if ((status >> 8) == (SIGTRAP | (PTRACE_EVENT_EXEC << 8)))
			break;
		if (pass_stop(pid, status) && observe_resumed(&t) < 0) {
			/* Still cetctl, stopped, the exec ahead: it must not
			 * run on untraced, so it dies; nothing was started. */
			static const char line[] = "cetctl: run: PTRACE_CONT answered, but the "
				"traced cetctl was not seen resuming before its exec: nothing was started\n";

			ssize_t w;

			kill(pid, SIGKILL);
			w = write(STDERR_FILENO, line, sizeof(line) - 1);
			_exit(w < 0);
		}
	}

	if (after_exec(&t, o) < 0) {
		/* Killed meanwhile (SIGKILL needs no stop; its /proc files go
		 * first, then ptrace says ESRCH): its death is the whole story. */
		if (res.stage != LAUNCH_DIED && t.pid > 0 && killed(&t))
			_exit(0);
		if (res.stage != LAUNCH_DIED) {
			int code = report(&res, arg);

			stop_program(&t, code);
		}
		_exit(0);
	}
	fault_point("verified", pid);
	fault_log("verified", pid);

	/* Signals still pending in the kernel arrived after every held one
	 * (a held signal was dequeued; and the kernel cancels a pending
	 * SIGCONT when a stop signal comes, and the other way round): their
	 * stop/continue rules apply to the held ones too. */
	if (t.kernel_pending & (1ULL << (SIGCONT - 1)))
		drop_held(&t, is_stop_signal);
	if (t.kernel_pending & ((1ULL << (SIGSTOP - 1)) | (1ULL << (SIGTSTP - 1)) |
				(1ULL << (SIGTTIN - 1)) | (1ULL << (SIGTTOU - 1))))
		drop_held(&t, is_cont);
	/* Hand back the signals that arrived during start-up: all but the
	 * first are queued now, the first goes with the detach. */
	for (i = 1; i < t.npending; i++)
		kill(pid, t.pending[i]);
	if (pt(PTRACE_DETACH, pid, 0, t.npending ? (unsigned long)t.pending[0] : 0) < 0) {
		fail(&t, LAUNCH_TRACE, -errno, "PTRACE_DETACH");
		if (killed(&t))
			_exit(0);	/* killed meanwhile */
		stop_program(&t, report(&res, arg));
	} else if (tracer_pid(&t) == t.proc_self) {
		/* answered, not done: still ours, still stopped before its
		 * first instruction (or a stop on its way) */
		fail(&t, LAUNCH_TRACE, -EPROTO,
		     "PTRACE_DETACH answered, but /proc/PID/status still names the tracer");
		stop_program(&t, report(&res, arg));
	}
	_exit(0);
}

/*
 * The middle process C: its own process group (terminal and group signals
 * are the program's business, not the tracer's; not a session: with
 * scheduler autogroups a new session is a new scheduling group, measured at
 * +5 ms per start-up on a loaded machine), the tracer T forked off, then
 * gone, so that T is nobody's child that the program could see. Under Yama
 * it stays until P closes the hold pipe: P named C as its tracer, and Yama
 * drops the relation when C exits.
 */
static void __attribute__((noreturn))
middle(pid_t self, struct launch_pipes *p, bool yama, const struct launch_opts *opts,
       launch_report_fn report, void *arg)
{
	struct msg m;
	pid_t tp;
	char c;

	close(p->msg[0]);
	close(p->go[1]);
	close(p->hold[1]);
	setpgid(0, 0);
	fault_point("c-start", self);
	tp = fork();
	if (tp == 0) {
		close(p->hold[0]);
		tracer(self, p->msg[1], p->go[0], yama, opts, report, arg);
	}
	if (tp < 0) {
		m = (struct msg){ MSG_ERR, errno, STEP_FORK };
		xwrite(p->msg[1], &m, sizeof(m));
	}
	fault_point("c-forked", self);
	close(p->msg[1]);
	if (yama && tp > 0)
		while (xread(p->hold[0], &c, 1) > 0)
			;
	_exit(0);
}

/*
 * Without Yama the middle process has nothing to wait for, so it shares
 * P's memory (CLONE_VM) instead of copying it, and P sleeps until it has
 * exited (CLONE_VFORK). C and T run on stacks of their own, with every
 * signal blocked from P's clone on, so no handler of the caller's runs in
 * memory P shares; T restores the caller's mask.
 */
struct middle_args {
	pid_t self;
	struct launch_pipes *p;
	const struct launch_opts *opts;
	launch_report_fn report;
	void *arg;
	sigset_t mask;		/* the caller's, for T */
	char *tstack;		/* top of T's stack */
	int wfd;		/* T's end of the message pipe (the caller
				 * closes its copy and clears p->msg[1]) */
};

#define MIDDLE_STACK	(64 * 1024)
#define TRACER_STACK	(256 * 1024)

/* AddressSanitizer cannot follow a process onto a stack of our own: the
 * sanitizer build copies the memory as fork() would. */
#if defined(__SANITIZE_ADDRESS__)
#define MIDDLE_SHARES_MEMORY	0
#else
#define MIDDLE_SHARES_MEMORY	1
#endif

/*
 * T when it shares the caller's memory: until the caller's exec, both run
 * in one address space with one thread pointer (one errno, one malloc
 * state). Before the exec T writes nothing outside its own stack: no
 * malloc, no stdio, and its failing calls set an errno the caller does not
 * read (it reads T's verdict from the pipe; after a failed execve it takes
 * errno at once). The arguments are copied first: the caller's frame that
 * holds them lives until the caller has read T's message, which T sends
 * after; values the caller changes after the clone (it closes its end of
 * the pipe and clears p->msg[1]) are taken before it (wfd). After the exec
 * the old address space is T's alone, frozen as the caller left it, and
 * T's exit releases it, off the program's critical path.
 */
static int tracer_vm(void *data)
{
	struct middle_args a = *(struct middle_args *)data;

	sigprocmask(SIG_SETMASK, &a.mask, NULL);
	tracer(a.self, a.wfd, -1, false, a.opts, a.report, a.arg);
}

static int middle_vm(void *data)
{
	struct middle_args *a = data;
	struct msg m;
	pid_t tp;

	close(a->p->msg[0]);
	setpgid(0, 0);
	fault_point("c-start", a->self);
	/* no exit signal; reparented at once, to init or a subreaper */
	tp = clone(tracer_vm, a->tstack, CLONE_VM, a);
	if (tp < 0) {
		m = (struct msg){ MSG_ERR, errno, STEP_FORK };
		xwrite(a->p->msg[1], &m, sizeof(m));
	}
	fault_point("c-forked", a->self);
	_exit(0);
}

/* The middle process as above; its pid, or -1 with errno set. */
static pid_t clone_middle_vm(struct middle_args *a)
{
	sigset_t all;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char *stack;
	pid_t c;
	int err;

	/* [guard][C's stack][guard][T's stack]; never unmapped here: T runs
	 * on it until it exits, the exec takes it out of the caller's view */
	stack = mmap(NULL, MIDDLE_STACK + TRACER_STACK, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
	if (stack == MAP_FAILED)
		return -1;
	/* guard pages: an overflow faults instead of writing other memory */
	if (mprotect(stack, page, PROT_NONE) < 0 ||
	    mprotect(stack + MIDDLE_STACK, page, PROT_NONE) < 0) {
		err = errno;
		munmap(stack, MIDDLE_STACK + TRACER_STACK);
		errno = err;
		return -1;
	}
	a->tstack = stack + MIDDLE_STACK + TRACER_STACK;
	a->wfd = a->p->msg[1];
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &a->mask);
	/* no exit signal (see the top of this file) */
	c = clone(middle_vm, stack + MIDDLE_STACK, CLONE_VM | CLONE_VFORK, a);
	err = errno;
	sigprocmask(SIG_SETMASK, &a->mask, NULL);
	if (c < 0)
		munmap(stack, MIDDLE_STACK + TRACER_STACK);	/* nobody runs on it */
	errno = err;
	return c;
}

int launch_exec(const char *path, char *const argv[], char *const envp[],
		const struct launch_opts *opts, launch_report_fn report, void *arg,
		struct launch_result *res)
{
	struct launch_pipes p = { { -1, -1 }, { -1, -1 }, { -1, -1 } };
	struct tracee t = { .res = res };
	pid_t self = getpid(), c, r;
	bool yama = yama_relational();
	int err, status;
	struct msg m;
	ssize_t n;

	memset(res, 0, sizeof(*res));
	/* "go" is a socket pair: sent with MSG_NOSIGNAL, it cannot kill us
	 * with SIGPIPE when the middle process died before forking T. */
	if (pipe2(p.msg, O_CLOEXEC) < 0 ||
	    (yama && (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p.go) < 0 ||
		      pipe2(p.hold, O_CLOEXEC) < 0))) {
		err = -errno;
		close_pipe(p.msg);
		close_pipe(p.go);
		return fail(&t, LAUNCH_SPAWN, err, "pipe2");
	}
	if (yama || !MIDDLE_SHARES_MEMORY) {
		/* Like fork(), but no exit signal: see the top of this file. */
		c = (pid_t)syscall(SYS_clone, 0UL, 0UL, 0UL, 0UL, 0UL);
		if (c == 0)
			middle(self, &p, yama, opts, report, arg);
	} else {
		struct middle_args ma = { self, &p, opts, report, arg, { { 0 } }, NULL, -1 };

		c = clone_middle_vm(&ma);
	}
	if (c < 0) {
		fail(&t, LAUNCH_SPAWN, -errno, "fork");
		goto out;
	}
	close(p.msg[1]);
	p.msg[1] = -1;
	if (yama) {
		close(p.go[0]);
		close(p.hold[0]);
		p.go[0] = p.hold[0] = -1;
		/* Yama (ptrace_scope 1) lets only ancestors trace: allow C and
		 * its descendants, for the moment of the seize. */
		prctl(PR_SET_PTRACER, (unsigned long)c, 0, 0, 0);
		/* no reader (C died early): the read below says so */
		while (send(p.go[1], "g", 1, MSG_NOSIGNAL) < 0 && errno == EINTR)
			;
	}
	fault_point("p-forked", self);

	n = xread(p.msg[0], &m, sizeof(m));
	if (yama)
		prctl(PR_SET_PTRACER, 0UL, 0, 0, 0);
	if (n != (ssize_t)sizeof(m) || m.kind != MSG_SEIZED) {
		if (n == (ssize_t)sizeof(m) && m.kind == MSG_ERR)
			fail(&t, m.step == STEP_FORK ? LAUNCH_SPAWN : LAUNCH_TRACE, -m.err,
			     pre_step_str(m.step));
		else
			fail(&t, LAUNCH_TRACER, -EPIPE, NULL);
		goto out;
	}
	/* Traced, with kill-on-exit: from here the program runs only once the
	 * tracer has verified it. */
	fault_point("p-seized", self);
	close_pipe(p.msg);
	close_pipe(p.go);
	close_pipe(p.hold);	/* C may go */
	do
		r = waitpid(c, &status, __WALL);
	while (r < 0 && errno == EINTR);
	execve(path, argv, envp);
	return fail(&t, LAUNCH_EXEC, -errno, NULL);
out:
	close_pipe(p.msg);
	close_pipe(p.go);
	close_pipe(p.hold);
	if (c > 0) {
		do
			r = waitpid(c, &status, __WALL);
		while (r < 0 && errno == EINTR);
	}
	return -1;
}

const char *launch_stage_str(enum launch_stage stage)
{
	switch (stage) {
	case LAUNCH_OK:			return "ok";
	case LAUNCH_SPAWN:		return "starting the tracer";
	case LAUNCH_EXEC:		return "executing the program";
	case LAUNCH_DIED:		return "the program died during start-up";
	case LAUNCH_TRACE:		return "tracing the start-up";
	case LAUNCH_TRACER:		return "the tracer went away";
	case LAUNCH_SECURE:		return "a privileged exec";
	case LAUNCH_NOT64:		return "the program is not a 64-bit x86 program";
	case LAUNCH_ENABLE_SHSTK:	return "enabling the shadow stack";
	case LAUNCH_ENABLE_WRSS:	return "enabling WRSS";
	case LAUNCH_LOCK:		return "locking the features";
	case LAUNCH_VERIFY:		return "verifying the features";
	case LAUNCH_STATIC:		return "a program without a dynamic loader";
	}
	return "?";
}
