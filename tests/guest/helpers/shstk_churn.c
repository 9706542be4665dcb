// SPDX-License-Identifier: GPL-2.0
/*
 * shstk_churn - time-bounded kernel stress for tests/guest/stress.bats (issue 7)
 *
 *   shstk_churn map SECS THREADS       hardware: THREADS threads map_shadow_stack/munmap
 *                                      (sizes 4K..1M, with and without a token) for SECS
 *   shstk_churn map-nohw SECS THREADS  no hardware: the same calls, every one EOPNOTSUPP
 *   shstk_churn threads SECS THREADS   hardware: the main thread runs on a shadow stack and
 *                                      keeps creating THREADS threads (each gets one from the
 *                                      kernel) that recurse, take signals, disable and enable
 *                                      their own, exit; without hardware: the same churn,
 *                                      ENABLE/DISABLE must fail with EOPNOTSUPP and every
 *                                      thread's x86_Thread_features line stays empty
 *   shstk_churn fork SECS              fork/exit churn from a task on a shadow stack (children
 *                                      inherit it, recurse, exit 0); without hardware each
 *                                      child checks the errnos and its status lines
 *   shstk_churn signals SECS           hardware: a 200 us interval timer and synchronous
 *                                      signals (also on an alternate signal stack) while
 *                                      recursing on a shadow stack; SSP unchanged around each
 *
 * Afterwards every case counts its ss VMAs: the churn must leave exactly what it started
 * with (only the main thread's shadow stack, when it has one).
 * Output: "  FAIL ..." for the first 20 failed checks, "  info ..." counters, then the
 * RESULT line of shstk.h. Exit 0 passed, 1 failed, 77 skipped (shstk.h conventions).
 * The enabling arch_prctl is inline (shstk.h) and a function that enabled a shadow stack
 * disables it again before it returns, or never returns.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sys/time.h>
#include <time.h>

#include "shstk.h"

static volatile int stop;
static int nfails;		/* atomic: failures across threads */
static long ncalls;		/* atomic: operations done */
static bool hw;

__attribute__((format(printf, 1, 2)))
static void bad(const char *fmt, ...)
{
	va_list ap;
	char buf[256];

	if (__atomic_fetch_add(&nfails, 1, __ATOMIC_RELAXED) >= 20)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	printf("  FAIL %s\n", buf);
	fflush(stdout);
}

static void counted(void)
{
	__atomic_fetch_add(&ncalls, 1, __ATOMIC_RELAXED);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Balanced calls: each pushes and pops on the shadow stack when one is active. */
__attribute__((noinline)) static unsigned long depth(int n)
{
	unsigned long v;

	if (n <= 0)
		return 1;
	v = depth(n - 1) + (unsigned long)n;
	asm volatile("" : "+r"(v));
	return v;
}

static volatile sig_atomic_t nsig;

static void on_signal(int sig)
{
	(void)sig;
	depth(8);
	nsig++;
}

/* A thread's own line, e.g. "" (nothing enabled) or "shstk". */
static bool own_features(char *out, size_t size)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/thread-self/status");
	return status_field(path, "x86_Thread_features", out, size);
}

/* ---------------------------------------------------------------- map */
static void *map_worker(void *arg)
{
	static const unsigned long sizes[] = { PAGE, 2 * PAGE, 16 * PAGE, 64 * 1024, 1024 * 1024 };
	unsigned int seed = (unsigned int)(uintptr_t)arg;

	while (!stop) {
		unsigned long size = sizes[rand_r(&seed) % 5];
		unsigned long flags = rand_r(&seed) % 2 ? SHADOW_STACK_SET_TOKEN : 0;
		long r = map_shadow_stack(0, size, flags);

		counted();
		if (!hw) {
			if (r != -EOPNOTSUPP)
				bad("map_shadow_stack(0, %lu, %lu) without hardware -> %ld, not EOPNOTSUPP",
				    size, flags, r);
			if (r > 0)
				munmap((void *)r, size);
			/* an unknown flag: support is checked first */
			if (map_shadow_stack(0, PAGE, 2) != -EOPNOTSUPP)
				bad("map_shadow_stack bad flags without hardware: not EOPNOTSUPP");
			continue;
		}
		if (r < 0 || (r & (PAGE - 1))) {
			bad("map_shadow_stack(0, %lu, %lu) -> %ld", size, flags, r);
			continue;
		}
		if (flags) {
			/* the restore token at the top: (its address + 8) | 1 in 64-bit mode */
			unsigned long want = ((unsigned long)r + size) | 1, got;

			got = *(volatile unsigned long *)(r + size - 8);
			if (got != want)
				bad("token at %#lx: %#lx, expected %#lx", r + size - 8, got, want);
		}
		if (munmap((void *)r, size))
			bad("munmap(%#lx, %lu): %s", r, size, strerror(errno));
	}
	return NULL;
}

__attribute__((noreturn)) static void case_map(double secs, int nthreads)
{
	pthread_t t[64];
	int before, after, n = nthreads > 64 ? 64 : nthreads;
	double end = now() + secs;

	before = count_ss_vmas(0);
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, map_worker, (void *)(uintptr_t)(i + 1)))
			bad("pthread_create: %s", strerror(errno));
	while (now() < end)
		usleep(50000);
	stop = 1;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	after = count_ss_vmas(0);
	info("%ld map_shadow_stack calls in %.0f s from %d threads", ncalls, secs, n);
	check(nfails == 0, "%d failed calls", nfails);
	check(after == before, "ss VMAs back to where they were: %d before, %d after", before, after);
	finish();
}

/* ---------------------------------------------------------------- threads */
static void *thread_churn(void *arg)
{
	char line[128];
	unsigned long ssp;
	long r;

	(void)arg;
	counted();
	if (hw) {
		/* started by a task on a shadow stack: the kernel gave us our own */
		if (!(shstk_status() & F_SHSTK))
			bad("new thread: shadow stack not inherited (status %#lx)", shstk_status());
		ssp = read_ssp();
		if (!ssp)
			bad("new thread: RDSSP reads 0");
		depth(64);
		raise(SIGUSR1);
		if (read_ssp() != ssp)
			bad("thread: SSP %#lx changed to %#lx around a signal", ssp, read_ssp());
		if (own_features(line, sizeof(line)) && strncmp(line, "shstk", 5))
			bad("thread: x86_Thread_features is '%s', expected shstk", line);
		/* off and on again: a fresh shadow stack, then off before returning
		 * (the frames below us are not on the new one) */
		r = arch_prctl_raw(ARCH_SHSTK_DISABLE, F_SHSTK);
		if (r)
			bad("thread: DISABLE -> %s", errname(-r));
		r = arch_prctl_raw(ARCH_SHSTK_ENABLE, F_SHSTK);
		if (r)
			bad("thread: ENABLE again -> %s", errname(-r));
		depth(32);
		r = arch_prctl_raw(ARCH_SHSTK_DISABLE, F_SHSTK);
		if (r)
			bad("thread: final DISABLE -> %s", errname(-r));
		return NULL;
	}
	r = arch_prctl_raw(ARCH_SHSTK_ENABLE, F_SHSTK);
	if (r != -EOPNOTSUPP)
		bad("thread: ENABLE without hardware -> %s, not EOPNOTSUPP", errname(-r));
	r = arch_prctl_raw(ARCH_SHSTK_DISABLE, F_SHSTK);
	if (r != -EOPNOTSUPP)
		bad("thread: DISABLE without hardware -> %s, not EOPNOTSUPP", errname(-r));
	if (shstk_status() != 0)
		bad("thread: STATUS without hardware -> %#lx, not 0", shstk_status());
	if (!own_features(line, sizeof(line)))
		bad("thread: no x86_Thread_features line in /proc/thread-self/status");
	else if (line[0])
		bad("thread: x86_Thread_features is '%s' without hardware", line);
	raise(SIGUSR1);
	return NULL;
}

__attribute__((noreturn)) static void case_threads(double secs, int nthreads)
{
	pthread_t t[64];
	int before, after, n = nthreads > 64 ? 64 : nthreads;
	long rounds = 0;
	double end = now() + secs;

	signal(SIGUSR1, on_signal);
	before = count_ss_vmas(0);
	if (hw) {
		long r = arch_prctl_raw(ARCH_SHSTK_ENABLE, F_SHSTK);

		if (r)
			enable_failed(r, "ENABLE(SHSTK) in main");
		/* from here on main never returns: finish() exits */
		before = count_ss_vmas(0);
	}
	while (now() < end) {
		int made = 0;

		for (int i = 0; i < n; i++) {
			if (pthread_create(&t[i], NULL, thread_churn, NULL)) {
				bad("pthread_create: %s", strerror(errno));
				break;
			}
			made++;
		}
		for (int i = 0; i < made; i++)
			pthread_join(t[i], NULL);
		rounds++;
	}
	after = count_ss_vmas(0);
	info("%ld threads in %ld rounds of %d, %d signals handled, %s", ncalls, rounds, n,
	     (int)nsig, hw ? "main on a shadow stack" : "no hardware");
	check(nfails == 0, "%d failed checks in the threads", nfails);
	check(after == before, "ss VMAs back to where they were: %d before, %d after", before, after);
	finish();
}

/* ---------------------------------------------------------------- fork */
__attribute__((noreturn)) static void case_fork(double secs)
{
	int before, after;
	long forks = 0, badexit = 0;
	double end = now() + secs;

	before = count_ss_vmas(0);
	if (hw) {
		long r = arch_prctl_raw(ARCH_SHSTK_ENABLE, F_SHSTK);

		if (r)
			enable_failed(r, "ENABLE(SHSTK)");
		before = count_ss_vmas(0);
	}
	while (now() < end) {
		pid_t pid = fork();
		int st;

		if (pid < 0) {
			bad("fork: %s", strerror(errno));
			usleep(1000);
			continue;
		}
		if (pid == 0) {
			char line[128];
			int code = 0;

			if (hw) {
				if (!(shstk_status() & F_SHSTK) || !read_ssp())
					code = 2;	/* not inherited */
				depth(64);
			} else {
				if (arch_prctl_raw(ARCH_SHSTK_ENABLE, F_SHSTK) != -EOPNOTSUPP)
					code = 3;
				if (!own_features(line, sizeof(line)) || line[0])
					code = 4;
			}
			_exit(code);	/* no return through pre-fork frames */
		}
		forks++;
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
			badexit++;
			bad("fork child %d: %s %d", (int)pid,
			    WIFSIGNALED(st) ? "killed by signal" : "exit", WIFSIGNALED(st) ?
			    WTERMSIG(st) : WEXITSTATUS(st));
		}
	}
	after = count_ss_vmas(0);
	info("%ld forks in %.0f s, %ld bad child exits", forks, secs, badexit);
	check(nfails == 0, "%d failed checks", nfails);
	check(after == before, "ss VMAs back to where they were: %d before, %d after", before, after);
	finish();
}

/* ---------------------------------------------------------------- signals */
__attribute__((noreturn)) static void case_signals(double secs)
{
	static char altstack[64 * 1024];
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	struct sigaction sa = { .sa_handler = on_signal };
	struct itimerval it = { { 0, 200 }, { 0, 200 } };
	double end = now() + secs;
	long raised = 0;
	int before, after;
	long r;

	require_hw();
	sigaction(SIGALRM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR2, &sa, NULL);
	if (sigaltstack(&ss, NULL))
		bad("sigaltstack: %s", strerror(errno));
	r = arch_prctl_raw(ARCH_SHSTK_ENABLE, F_SHSTK);
	if (r)
		enable_failed(r, "ENABLE(SHSTK)");
	before = count_ss_vmas(0);
	setitimer(ITIMER_REAL, &it, NULL);
	while (now() < end) {
		unsigned long ssp = read_ssp();

		depth(100);	/* the timer lands at arbitrary depths */
		raise(raised % 2 ? SIGUSR1 : SIGUSR2);
		raised++;
		if (read_ssp() != ssp)
			bad("SSP %#lx changed to %#lx around a signal", ssp, read_ssp());
	}
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	after = count_ss_vmas(0);
	info("%ld synchronous signals (half on the alternate stack), %d handled in all", raised,
	     (int)nsig);
	check(nfails == 0, "%d failed checks", nfails);
	check(nsig >= raised, "every raised signal was handled (%d of %ld)", (int)nsig, raised);
	check(after == before, "ss VMAs unchanged: %d before, %d after", before, after);
	finish();
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";
	double secs = argc > 2 ? atof(argv[2]) : 5;
	int n = argc > 3 ? atoi(argv[3]) : 8;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (secs <= 0 || n <= 0) {
		fprintf(stderr, "%s: SECS and THREADS must be positive\n", argv[0]);
		return 2;
	}
	require_kernel_support();
	hw = cpu_has_user_shstk();
	if (!strcmp(c, "map")) {
		require_hw();
		case_map(secs, n);
	}
	if (!strcmp(c, "map-nohw")) {
		require_no_hw();
		case_map(secs, n);
	}
	if (!strcmp(c, "threads"))
		case_threads(secs, n);
	if (!strcmp(c, "fork"))
		case_fork(secs);
	if (!strcmp(c, "signals"))
		case_signals(secs);
	fprintf(stderr, "usage: %s map|map-nohw|threads|fork|signals [SECS [THREADS]]\n", argv[0]);
	return 2;
}
