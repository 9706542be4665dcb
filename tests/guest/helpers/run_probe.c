// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * run_probe - the program that tests/guest/cetctl-run.bats launches under
 * `cetctl run`. It never enables anything itself: it reports and exercises
 * what the launcher set up.
 *
 *   run_probe status    print the x86_Thread_features lines and the SSP
 *   run_probe disable   try ARCH_SHSTK_DISABLE; print "disable: ok" or the errno name
 *   run_probe wrss      write its own top shadow-stack entry back with WRSS
 *                       (SIGILL/SIGSEGV without WRSS enabled)
 *   run_probe rop       overwrite its own return address; with a shadow stack
 *                       the `ret` faults: prints "SEGV si_code=N" and exits 42
 *   run_probe rop-nohandler   the same without a handler (dies of SIGSEGV)
 *   run_probe threads   4 threads, each with its own SSP, recursing and returning
 *   run_probe fork      a fork child calls and returns on its inherited stack
 *   run_probe exit N    exit with status N
 *   run_probe workers N CODE   print the status lines, fork N workers that call
 *                       and return on their shadow stacks and exit CODE, reap them
 *                       with wait() (anything else reaped: a message and 9), exit
 *                       with the last worker's status (a container's server)
 *   run_probe subreaper PROG ARGS...   become a child subreaper, then exec PROG
 *                       (a supervisor's process that adopts its orphans)
 * Exit: 0 ok, 1 a check failed, 42 the ROP case's handler ran.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cet-abi.h"

static unsigned long rdssp(void)
{
	unsigned long ssp = 0;

	__asm__ volatile("rdsspq %0" : "+r"(ssp));
	return ssp;
}

static int print_status(void)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "x86_Thread_features", 19) == 0)
			fputs(line, stdout);
	fclose(f);
	printf("ssp: %s\n", rdssp() ? "nonzero" : "zero");
	return 0;
}

static int try_disable(void)
{
	long r = syscall(SYS_arch_prctl, ARCH_SHSTK_DISABLE, ARCH_SHSTK_SHSTK);

	/* After a successful disable returning from here is still fine: the
	 * hardware no longer checks. */
	if (r == 0)
		printf("disable: ok\n");
	else
		printf("disable: %s\n", strerrorname_np(errno));
	return 0;
}

static int try_wrss(void)
{
	unsigned long ssp = rdssp(), val;

	if (!ssp) {
		printf("wrss: no shadow stack\n");
		return 1;
	}
	val = *(volatile unsigned long *)ssp;
	/* Rewrite the top entry with its own value: harmless if it works. */
	__asm__ volatile("wrssq %0, (%1)" : : "r"(val), "r"(ssp) : "memory");
	printf("wrss: ok\n");
	return 0;
}

static void cperr_handler(int sig, siginfo_t *si, void *uc)
{
	char buf[64];
	int n;

	(void)uc;
	n = snprintf(buf, sizeof(buf), "SEGV si_code=%d\n", sig == SIGSEGV ? si->si_code : -1);
	if (write(STDOUT_FILENO, buf, (size_t)n) < 0)
		_exit(2);
	_exit(42);
}

static void __attribute__((noinline, used)) gadget(void)
{
	/* Entered by a `ret` with the stack misaligned: no printf here. */
	static const char msg[] = "ROP reached the gadget: no shadow stack\n";

	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(4);
	_exit(3);
}

/* Overwrite our own return address with gadget's address, then return. */
static void __attribute__((noinline)) victim(void)
{
	void **ret = (void **)__builtin_frame_address(0) + 1;

	*(volatile void **)ret = (void *)gadget;
	__asm__ volatile("" ::: "memory");
}

static int rop(int handler)
{
	if (handler) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = cperr_handler;
		sa.sa_flags = SA_SIGINFO;
		sigaction(SIGSEGV, &sa, NULL);
	}
	victim();
	printf("ROP: victim returned normally?\n");
	return 1;
}

static unsigned long __attribute__((noinline)) recurse(int n)
{
	if (n == 0)
		return rdssp();
	return recurse(n - 1) + 0 * (unsigned long)n;
}

/* All threads alive at once, so their shadow stacks must differ (a finished
 * thread's shadow stack is unmapped and its address may be reused). */
static pthread_barrier_t all_started;

static void *thread_fn(void *arg)
{
	unsigned long *out = arg;

	out[0] = rdssp();
	out[1] = recurse(50);
	pthread_barrier_wait(&all_started);
	return NULL;
}

static int threads(void)
{
	pthread_t t[4];
	unsigned long ssp[4][2];
	int i, j, bad = 0;

	pthread_barrier_init(&all_started, NULL, 4);
	for (i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, thread_fn, ssp[i]))
			return 1;
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < 4; i++) {
		if (!ssp[i][0] || !ssp[i][1])
			bad = 1;
		for (j = 0; j < i; j++)
			if (ssp[i][0] == ssp[j][0])
				bad = 1;
	}
	if (bad)
		for (i = 0; i < 4; i++)
			printf("thread %d: ssp %#lx, in recursion %#lx\n", i, ssp[i][0], ssp[i][1]);
	printf("threads: %s (main ssp %s)\n", bad ? "FAIL" : "ok", rdssp() ? "nonzero" : "zero");
	return bad;
}

static int forked(void)
{
	int st;
	pid_t p = fork();

	if (p == 0)
		_exit(recurse(20) && rdssp() ? 0 : 1);
	if (p < 0 || waitpid(p, &st, 0) != p)
		return 1;
	printf("fork: child %s\n", WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "ok" :
	       WIFSIGNALED(st) ? strsignal(WTERMSIG(st)) : "FAIL");
	return !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static int workers(int n, int code)
{
	pid_t w[16], r;
	int i, j, st = 0;

	if (n < 1 || n > 16 || print_status())
		return 1;
	for (i = 0; i < n; i++) {
		w[i] = fork();
		if (w[i] == 0) {
			usleep(20000 * (unsigned)(i + 1));
			_exit(recurse(20) && rdssp() ? code : 1);
		}
		if (w[i] < 0)
			return 1;
	}
	for (i = 0; i < n; i++) {
		r = wait(&st);
		for (j = 0; j < n && w[j] != r; j++)
			;
		if (j == n) {
			printf("wait() reaped %d, not a worker\n", (int)r);
			return 9;
		}
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 10;
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "status";

	setvbuf(stdout, NULL, _IONBF, 0);
	if (!strcmp(c, "status"))
		return print_status();
	if (!strcmp(c, "disable"))
		return try_disable();
	if (!strcmp(c, "wrss"))
		return try_wrss();
	if (!strcmp(c, "rop"))
		return rop(1);
	if (!strcmp(c, "rop-nohandler"))
		return rop(0);
	if (!strcmp(c, "threads"))
		return threads();
	if (!strcmp(c, "fork"))
		return forked();
	if (!strcmp(c, "exit") && argc > 2)
		return atoi(argv[2]);
	if (!strcmp(c, "workers") && argc > 3)
		return workers(atoi(argv[2]), atoi(argv[3]));
	if (!strcmp(c, "subreaper") && argc > 2) {
		/* kept across the exec: PROG is the subreaper */
		if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) {
			perror("PR_SET_CHILD_SUBREAPER");
			return 1;
		}
		execv(argv[2], argv + 2);
		perror(argv[2]);
		return 127;
	}
	fprintf(stderr, "usage: run_probe status|disable|wrss|rop|rop-nohandler|threads|fork|exit N|workers N CODE|subreaper PROG ARGS...\n");
	return 2;
}
