// SPDX-License-Identifier: GPL-2.0
/*
 * shstk_api - arch_prctl(ARCH_SHSTK_*), its ptrace side, exec, /proc status, NT_X86_SHSTK.
 *
 *   shstk_api nohw           errnos and status lines on a kernel without CET hardware
 *   shstk_api prctl          ENABLE/DISABLE/LOCK/STATUS and their errnos (hardware)
 *   shstk_api ptrace-prctl   PTRACE_ARCH_PRCTL: ENABLE refused, LOCK/UNLOCK/STATUS allowed
 *   shstk_api exec           exec resets enabled and locked features
 *   shstk_api status-threads /proc/PID/task/TID/status lines are per thread
 *   shstk_api regset         PTRACE_GETREGSET/SETREGSET NT_X86_SHSTK (hardware)
 *   shstk_api regset-nohw    NT_X86_SHSTK without hardware: ENODEV
 */
#include "shstk.h"

#include <pthread.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

static bool status_is(const char *path, const char *key, const char *want)
{
	char v[128] = "";

	if (!status_field(path, key, v, sizeof(v)))
		return check(false, "%s: no '%s:' line", path, key);
	return check(!strcmp(v, want), "%s %s: '%s' (expected '%s')", path, key, v, want);
}

static void self_status_is(const char *feat, const char *locked)
{
	status_is("/proc/self/status", "x86_Thread_features", feat);
	status_is("/proc/self/status", "x86_Thread_features_locked", locked);
}

/*
 * UNLOCK works only through ptrace. By the task itself on a locked feature it fails and
 * the lock stays (mainline: EPERM from the locked check; EINVAL would be as good).
 * Mainline lets a self-UNLOCK of an unlocked feature fall through to the ENABLE path,
 * so that case is not tested.
 */
static void self_unlock_refused(void)
{
	long r = arch_prctl_raw(ARCH_SHSTK_UNLOCK, F_SHSTK);
	char v[128] = "";

	check(r == -EPERM || r == -EINVAL, "UNLOCK(SHSTK) of a locked feature by the task itself -> %s "
	      "(expected EPERM or EINVAL)", errname(-r));
	status_field("/proc/self/status", "x86_Thread_features_locked", v, sizeof(v));
	check(strstr(v, "shstk") != NULL, "still locked after the self-UNLOCK ('%s')", v);
}

/* ---------------------------------------------------------------- nohw */
__attribute__((noreturn)) static void case_nohw(void)
{
	unsigned long f = 12345;

	require_no_hw();
	self_status_is("", "");
	check_ret(arch_prctl_raw(ARCH_SHSTK_STATUS, (unsigned long)&f), 0, "STATUS");
	check(f == 0, "STATUS reports %#lx (expected 0)", f);
	check_ret(arch_prctl_raw(ARCH_SHSTK_STATUS, 0), EFAULT, "STATUS with a NULL pointer");
	check_ret(arch_prctl_raw(ARCH_SHSTK_ENABLE, F_SHSTK), EOPNOTSUPP, "ENABLE(SHSTK) without hardware");
	check_ret(arch_prctl_raw(ARCH_SHSTK_ENABLE, F_WRSS), EOPNOTSUPP, "ENABLE(WRSS) without hardware");
	check_ret(arch_prctl_raw(ARCH_SHSTK_DISABLE, F_SHSTK), EOPNOTSUPP, "DISABLE(SHSTK) without hardware");
	check_ret(arch_prctl_raw(ARCH_SHSTK_DISABLE, F_WRSS), EOPNOTSUPP, "DISABLE(WRSS) without hardware");
	check_ret(arch_prctl_raw(ARCH_SHSTK_ENABLE, F_SHSTK | F_WRSS), EINVAL, "ENABLE(SHSTK|WRSS): two bits");
	check_ret(arch_prctl_raw(ARCH_SHSTK_ENABLE, 1UL << 2), EINVAL, "ENABLE(1<<2): unknown feature");
	check_ret(arch_prctl_raw(ARCH_SHSTK_DISABLE, 1UL << 5), EINVAL, "DISABLE(1<<5): unknown feature");
	check_ret(arch_prctl_raw(ARCH_SHSTK_ENABLE, 0), EINVAL, "ENABLE(0)");
	check_ret(map_shadow_stack(0, PAGE, 0), EOPNOTSUPP, "map_shadow_stack without hardware");
	check_ret(map_shadow_stack(0, PAGE, SHADOW_STACK_SET_TOKEN), EOPNOTSUPP,
		  "map_shadow_stack(SET_TOKEN) without hardware");
	/* LOCK needs no hardware; afterwards the locked check comes first */
	check_ret(arch_prctl_raw(ARCH_SHSTK_LOCK, F_SHSTK), 0, "LOCK(SHSTK)");
	self_status_is("", "shstk");
	self_unlock_refused();
	self_status_is("", "shstk");
	check_ret(arch_prctl_raw(ARCH_SHSTK_ENABLE, F_SHSTK), EPERM, "ENABLE(SHSTK) after LOCK");
	check_ret(arch_prctl_raw(ARCH_SHSTK_ENABLE, F_WRSS), EOPNOTSUPP, "ENABLE(WRSS), not locked");
	check_ret(arch_prctl_raw(ARCH_SHSTK_LOCK, F_WRSS), 0, "LOCK(WRSS)");
	self_status_is("", "shstk wrss");
	f = 99;
	check_ret(arch_prctl_raw(ARCH_SHSTK_STATUS, (unsigned long)&f), 0, "STATUS after LOCK");
	check(f == 0, "STATUS still reports %#lx (expected 0: locked is not enabled)", f);
	finish();
}

/* ---------------------------------------------------------------- prctl (hardware) */
__attribute__((noreturn)) static void case_prctl(void)
{
	unsigned long ssp, top = 0;

	require_hw();
	check(read_ssp() == 0, "SSP is 0 before ENABLE");
	check(shstk_status() == 0, "STATUS 0 before ENABLE");
	ENABLE_SHSTK_OR_SKIP();
	ssp = read_ssp();
	check(ssp != 0, "SSP %#lx after ENABLE", ssp);
	/* SSP starts at the top (end) of the new shadow stack: the entry below it is inside */
	check(addr_in_ss_vma(ssp - 8, NULL, &top) == 1 && top == ssp, "SSP %#lx is the top of an ss VMA", ssp);
	check(shstk_status() == F_SHSTK, "STATUS %#lx (expected 0x1)", shstk_status());
	self_status_is("shstk", "");
	check_ret(arch_prctl_raw(ARCH_SHSTK_ENABLE, F_SHSTK), 0, "ENABLE(SHSTK) again is a no-op");
	check(read_ssp() == ssp, "SSP unchanged by the second ENABLE");
	check_ret(arch_prctl_raw(ARCH_SHSTK_ENABLE, F_SHSTK | F_WRSS), EINVAL, "ENABLE(SHSTK|WRSS): two bits");
	check_ret(arch_prctl_raw(ARCH_SHSTK_DISABLE, F_SHSTK | F_WRSS), EINVAL, "DISABLE(SHSTK|WRSS): two bits");
	check_ret(arch_prctl_raw(ARCH_SHSTK_ENABLE, 1UL << 2), EINVAL, "ENABLE(1<<2): unknown feature");
	check_ret(arch_prctl_raw(ARCH_SHSTK_DISABLE, 1UL << 3), EINVAL, "DISABLE(1<<3): unknown feature");
	check_ret(arch_prctl_raw(ARCH_SHSTK_ENABLE, 0), EINVAL, "ENABLE(0)");
	check_ret(arch_prctl_raw(ARCH_SHSTK_STATUS, 0), EFAULT, "STATUS with a NULL pointer");

	check_ret(arch_prctl_raw(ARCH_SHSTK_ENABLE, F_WRSS), 0, "ENABLE(WRSS)");
	check(shstk_status() == (F_SHSTK | F_WRSS), "STATUS %#lx (expected 0x3)", shstk_status());
	self_status_is("shstk wrss", "");
	check_ret(arch_prctl_raw(ARCH_SHSTK_DISABLE, F_WRSS), 0, "DISABLE(WRSS)");
	check(shstk_status() == F_SHSTK, "STATUS %#lx after DISABLE(WRSS) (expected 0x1)", shstk_status());
	check(recurse(100) == 100, "calls and returns still work with the shadow stack on");

	/* DISABLE frees the shadow stack; this function never returns, so that is fine */
	check_ret(arch_prctl_raw(ARCH_SHSTK_DISABLE, F_SHSTK), 0, "DISABLE(SHSTK)");
	check(read_ssp() == 0, "SSP 0 after DISABLE");
	check(shstk_status() == 0, "STATUS 0 after DISABLE");
	check(count_ss_vmas(0) == 0, "no ss VMA left after DISABLE (found %d)", count_ss_vmas(0));
	self_status_is("", "");
	check_ret(arch_prctl_raw(ARCH_SHSTK_DISABLE, F_SHSTK), 0, "DISABLE(SHSTK) again is a no-op");
	check_ret(arch_prctl_raw(ARCH_SHSTK_ENABLE, F_WRSS), EPERM, "ENABLE(WRSS) without SHSTK");

	/* re-enable, then lock */
	check_ret(arch_prctl_raw(ARCH_SHSTK_ENABLE, F_SHSTK), 0, "ENABLE(SHSTK) after DISABLE");
	check(read_ssp() != 0, "SSP set again");
	check_ret(arch_prctl_raw(ARCH_SHSTK_LOCK, F_SHSTK), 0, "LOCK(SHSTK)");
	self_status_is("shstk", "shstk");
	check_ret(arch_prctl_raw(ARCH_SHSTK_DISABLE, F_SHSTK), EPERM, "DISABLE(SHSTK) when locked");
	self_unlock_refused();
	check_ret(arch_prctl_raw(ARCH_SHSTK_ENABLE, F_SHSTK), EPERM, "ENABLE(SHSTK) when locked");
	check(read_ssp() != 0 && shstk_status() == F_SHSTK, "still enabled after the refused DISABLE");
	check_ret(arch_prctl_raw(ARCH_SHSTK_ENABLE, F_WRSS), 0, "ENABLE(WRSS): not locked");
	check_ret(arch_prctl_raw(ARCH_SHSTK_LOCK, F_WRSS), 0, "LOCK(WRSS)");
	check_ret(arch_prctl_raw(ARCH_SHSTK_DISABLE, F_WRSS), EPERM, "DISABLE(WRSS) when locked");
	self_status_is("shstk wrss", "shstk wrss");
	finish();
}

/* ---------------------------------------------------------------- ptrace-prctl */
static long ptrace_prctl(pid_t pid, int op, unsigned long arg)
{
	long r = ptrace(PTRACE_ARCH_PRCTL_REQ, pid, (void *)arg, (void *)(long)op);

	return r == -1 ? -errno : r;
}

/* The traced child: it never returns from here (it may have enabled its shadow stack). */
__attribute__((noreturn)) static void ptrace_child(bool hw)
{
	if (hw) {
		long r = arch_prctl_raw(ARCH_SHSTK_ENABLE, F_SHSTK);
		if (r)
			_exit(90);
	}
	if (ptrace(PTRACE_TRACEME, 0, 0, 0))
		_exit(91);
	raise(SIGSTOP);
	/* the tracer locked SHSTK|WRSS and unlocked WRSS again */
	long u = arch_prctl_raw(ARCH_SHSTK_UNLOCK, F_SHSTK);
	if (u != -EPERM && u != -EINVAL)
		_exit(92);
	if (arch_prctl_raw(hw ? ARCH_SHSTK_DISABLE : ARCH_SHSTK_ENABLE, F_SHSTK) != -EPERM)
		_exit(93);
	if (hw && shstk_status() != F_SHSTK)
		_exit(94);
	_exit(0);
}

__attribute__((noreturn)) static void case_ptrace_prctl(void)
{
	bool hw = cpu_has_user_shstk();
	char path[64];
	unsigned long f;
	pid_t pid;
	int st;

	require_kernel_support();
	pid = fork();
	if (pid == 0)
		ptrace_child(hw);
	st = wait_child(pid);
	if (!check(WIFSTOPPED(st), "traced child stopped (%s)", wstr(st))) {
		kill(pid, SIGKILL);
		finish();
	}
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	check_ret(ptrace_prctl(pid, ARCH_SHSTK_ENABLE, F_SHSTK), EINVAL, "PTRACE_ARCH_PRCTL ENABLE(SHSTK) refused");
	check_ret(ptrace_prctl(pid, ARCH_SHSTK_ENABLE, F_WRSS), EINVAL, "PTRACE_ARCH_PRCTL ENABLE(WRSS) refused");
	check_ret(ptrace_prctl(pid, ARCH_SHSTK_DISABLE, F_SHSTK), EINVAL, "PTRACE_ARCH_PRCTL DISABLE(SHSTK) refused");
	f = 77;
	check_ret(ptrace_prctl(pid, ARCH_SHSTK_STATUS, (unsigned long)&f), 0, "PTRACE_ARCH_PRCTL STATUS");
	check(f == (hw ? F_SHSTK : 0), "tracee STATUS %#lx (expected %#lx)", f, hw ? F_SHSTK : 0UL);
	status_is(path, "x86_Thread_features", hw ? "shstk" : "");
	check_ret(ptrace_prctl(pid, ARCH_SHSTK_LOCK, F_SHSTK | F_WRSS), 0, "PTRACE_ARCH_PRCTL LOCK(SHSTK|WRSS)");
	status_is(path, "x86_Thread_features_locked", "shstk wrss");
	check_ret(ptrace_prctl(pid, ARCH_SHSTK_UNLOCK, F_WRSS), 0, "PTRACE_ARCH_PRCTL UNLOCK(WRSS)");
	status_is(path, "x86_Thread_features_locked", "shstk");
	check(!ptrace(PTRACE_CONT, pid, 0, 0), "PTRACE_CONT");
	st = wait_child(pid);
	check(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "tracee: own UNLOCK refused, locked SHSTK -> EPERM (%s; 92: UNLOCK, 93: EPERM, 94: status)",
	      wstr(st));
	finish();
}

/* ---------------------------------------------------------------- exec */
__attribute__((noreturn)) static void case_exec_child(void)
{
	/* the new image: everything must be reset */
	check(shstk_status() == 0, "after exec: STATUS %#lx (expected 0)", shstk_status());
	check(read_ssp() == 0, "after exec: SSP %#lx (expected 0)", read_ssp());
	self_status_is("", "");
	check(count_ss_vmas(0) == 0, "after exec: no ss VMA (found %d)", count_ss_vmas(0));
	if (cpu_has_user_shstk()) {
		/* the locks are gone too: ENABLE works (and this function never returns) */
		long r = arch_prctl_raw(ARCH_SHSTK_ENABLE, F_SHSTK);
		check_ret(r, 0, "after exec: ENABLE(SHSTK) allowed again");
	} else {
		check_ret(arch_prctl_raw(ARCH_SHSTK_ENABLE, F_SHSTK), EOPNOTSUPP,
			  "after exec: ENABLE(SHSTK) -> EOPNOTSUPP, no longer EPERM");
	}
	finish();
}

__attribute__((noreturn)) static void case_exec(char *self)
{
	require_kernel_support();
	if (cpu_has_user_shstk()) {
		ENABLE_SHSTK_OR_SKIP();
		ENABLE_WRSS_OR_FAIL();
		check(arch_prctl_raw(ARCH_SHSTK_LOCK, F_SHSTK | F_WRSS) == 0, "LOCK(SHSTK|WRSS)");
		self_status_is("shstk wrss", "shstk wrss");
	} else {
		check(arch_prctl_raw(ARCH_SHSTK_LOCK, F_SHSTK | F_WRSS) == 0, "LOCK(SHSTK|WRSS) (no hardware)");
		self_status_is("", "shstk wrss");
	}
	fflush(stdout);
	if (t_fails)
		finish();
	char *argv[] = { self, "exec-child", NULL };
	execv("/proc/self/exe", argv);
	check(false, "execv /proc/self/exe: %s", strerror(errno));
	finish();
}

/* ---------------------------------------------------------------- status-threads */
static pthread_barrier_t bar;
static pid_t thread_tid;

static void *status_thread(void *arg)
{
	bool hw = arg != NULL;

	thread_tid = gettid();
	/* this thread alone: give up the shadow stack, lock both features */
	if (hw && arch_prctl_raw(ARCH_SHSTK_DISABLE, F_SHSTK))
		thread_tid = -1;
	if (arch_prctl_raw(ARCH_SHSTK_LOCK, F_SHSTK))
		thread_tid = -1;
	pthread_barrier_wait(&bar);	/* main checks */
	pthread_barrier_wait(&bar);	/* main done */
	return NULL;
}

__attribute__((noreturn)) static void case_status_threads(void)
{
	bool hw = cpu_has_user_shstk();
	char path[96];
	pthread_t t;

	require_kernel_support();
	if (hw)
		ENABLE_SHSTK_OR_SKIP();
	check_ret(arch_prctl_raw(ARCH_SHSTK_LOCK, F_WRSS), 0, "main thread LOCK(WRSS)");
	pthread_barrier_init(&bar, NULL, 2);
	if (!check(!pthread_create(&t, NULL, status_thread, hw ? (void *)1 : NULL), "pthread_create"))
		finish();
	pthread_barrier_wait(&bar);
	check(thread_tid > 0, "thread: DISABLE/LOCK in the thread succeeded");
	/* the thread inherited the WRSS lock and added SHSTK; main is unchanged */
	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)gettid());
	status_is(path, "x86_Thread_features", hw ? "shstk" : "");
	status_is(path, "x86_Thread_features_locked", "wrss");
	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)thread_tid);
	status_is(path, "x86_Thread_features", "");
	status_is(path, "x86_Thread_features_locked", "shstk wrss");
	/* /proc/PID/status is the thread-group leader's view */
	snprintf(path, sizeof(path), "/proc/%d/status", (int)getpid());
	status_is(path, "x86_Thread_features_locked", "wrss");
	pthread_barrier_wait(&bar);
	pthread_join(t, NULL);
	finish();
}

/* ---------------------------------------------------------------- regset */
static long getregset_ssp(pid_t pid, unsigned long *ssp, size_t len)
{
	struct iovec iov = { .iov_base = ssp, .iov_len = len };
	long r = ptrace(PTRACE_GETREGSET, pid, (void *)NT_X86_SHSTK_REGSET, &iov);

	return r == -1 ? -errno : (long)iov.iov_len;
}

static long setregset_ssp(pid_t pid, unsigned long ssp, size_t len)
{
	unsigned long buf[2] = { ssp, 0 };
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	long r = ptrace(PTRACE_SETREGSET, pid, (void *)NT_X86_SHSTK_REGSET, &iov);

	return r == -1 ? -errno : r;
}

static volatile unsigned long *shared_ssp;

/*
 * Stops itself with the SSP published; returns normally when resumed. The stop is an
 * inline `syscall`, so the SSP the tracer sees is exactly the one published here.
 */
__attribute__((noinline)) static void regset_stop(void)
{
	long ret;
	register long a1 asm("rdi") = getpid();
	register long a2 asm("rsi") = SIGSTOP;

	*shared_ssp = read_ssp();
	asm volatile("syscall" : "=a"(ret) : "0"((long)SYS_kill), "r"(a1), "r"(a2)
		     : "rcx", "r11", "memory", "cc");
}

/* One frame more, so that "SSP + 8" lands on a mismatching return address, not past the top. */
__attribute__((noinline)) static void regset_mid(void)
{
	regset_stop();
	asm volatile("" : : : "memory");
}

__attribute__((noreturn)) static void regset_child(void)
{
	ENABLE_SHSTK_OR_SKIP();
	catch_faults_with_code();
	if (ptrace(PTRACE_TRACEME, 0, 0, 0))
		_exit(91);
	regset_mid();
	_exit(0);
}

/* Starts an enabled, traced child stopped inside regset_stop(). */
static pid_t start_regset_child(void)
{
	pid_t pid = fork();
	int st;

	if (pid == 0)
		regset_child();
	st = wait_child(pid);
	if (!check(WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP, "child stopped (%s)", wstr(st))) {
		kill(pid, SIGKILL);
		finish();
	}
	return pid;
}

__attribute__((noreturn)) static void case_regset(void)
{
	unsigned long ssp = 0, want;
	pid_t pid;
	int st;

	require_hw();
	shared_ssp = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared_ssp == MAP_FAILED)
		skip("mmap failed");

	/* 1: get, bad sets, set the same value: the child carries on */
	pid = start_regset_child();
	want = *shared_ssp;
	check(want != 0, "child's SSP %#lx", want);
	check(getregset_ssp(pid, &ssp, 8) == 8, "GETREGSET NT_X86_SHSTK returns 8 bytes");
	check(ssp == want, "GETREGSET SSP %#lx == the SSP the child read before stopping", ssp);
	check_ret(setregset_ssp(pid, ssp, 0), EINVAL, "SETREGSET with size 0");
	check_ret(setregset_ssp(pid, ssp, 9), EINVAL, "SETREGSET with size 9");
	check_ret(setregset_ssp(pid, ssp, 4), EINVAL, "SETREGSET with size 4");
	check_ret(setregset_ssp(pid, ssp + 1, 8), EINVAL, "SETREGSET unaligned SSP");
	check_ret(setregset_ssp(pid, ssp + 4, 8), EINVAL, "SETREGSET 4-aligned SSP");
	check_ret(setregset_ssp(pid, 0xffff800000001000UL, 8), EINVAL, "SETREGSET kernel-address SSP");
	check_ret(setregset_ssp(pid, 0x800000000000UL, 8), EINVAL, "SETREGSET SSP at TASK_SIZE");
	check_ret(setregset_ssp(pid, ssp, 8), 0, "SETREGSET the same SSP");
	unsigned long back = 0;
	getregset_ssp(pid, &back, 8);
	check(back == ssp, "GETREGSET after the refused sets: %#lx (unchanged)", back);
	check(!ptrace(PTRACE_DETACH, pid, 0, 0), "PTRACE_DETACH");
	st = wait_child(pid);
	check(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child with its SSP rewritten unchanged exits 0 (%s)", wstr(st));

	/* 2: skip one shadow-stack entry: the next return must raise #CP */
	pid = start_regset_child();
	getregset_ssp(pid, &ssp, 8);
	check_ret(setregset_ssp(pid, ssp + 8, 8), 0, "SETREGSET SSP + 8");
	back = 0;
	getregset_ssp(pid, &back, 8);
	check(back == ssp + 8, "GETREGSET reads back %#lx", back);
	ptrace(PTRACE_DETACH, pid, 0, 0);
	st = wait_child(pid);
	check(WIFEXITED(st) && WEXITSTATUS(st) == 100 + SEGV_CPERR_CODE,
	      "child with SSP + 8 dies of SIGSEGV/SEGV_CPERR at its next return (%s; 110 expected)", wstr(st));
	finish();
}

__attribute__((noreturn)) static void case_regset_nohw(void)
{
	unsigned long ssp = 0;
	pid_t pid;
	int st;

	require_kernel_support();
	pid = fork();
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, 0, 0))
			_exit(91);
		raise(SIGSTOP);
		_exit(0);
	}
	st = wait_child(pid);
	check(WIFSTOPPED(st), "child stopped (%s)", wstr(st));
	/* with hardware, a tracee that did not enable shadow stacks has no SSP either */
	check_ret(getregset_ssp(pid, &ssp, 8), ENODEV, "GETREGSET NT_X86_SHSTK of a task without shadow stack");
	check_ret(setregset_ssp(pid, 0x7f0000000000UL, 8), ENODEV, "SETREGSET NT_X86_SHSTK of a task without shadow stack");
	ptrace(PTRACE_CONT, pid, 0, 0);
	st = wait_child(pid);
	check(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child exits 0 (%s)", wstr(st));
	finish();
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc < 2) {
		fprintf(stderr, "usage: %s nohw|prctl|ptrace-prctl|exec|status-threads|regset|regset-nohw\n", argv[0]);
		exit(2);
	}
	const char *c = argv[1];

	if (!strcmp(c, "nohw"))
		case_nohw();
	if (!strcmp(c, "prctl"))
		case_prctl();
	if (!strcmp(c, "ptrace-prctl"))
		case_ptrace_prctl();
	if (!strcmp(c, "exec"))
		case_exec(argv[0]);
	if (!strcmp(c, "exec-child"))
		case_exec_child();
	if (!strcmp(c, "status-threads"))
		case_status_threads();
	if (!strcmp(c, "regset"))
		case_regset();
	if (!strcmp(c, "regset-nohw"))
		case_regset_nohw();
	fprintf(stderr, "%s: unknown case '%s'\n", argv[0], c);
	exit(2);
}
