// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ldso_fail - fails dlopen() and dlsym() on purpose, for the preload
 * library's mending of the loader's own longjmp (tests/guest/
 * preload-ldso.bats). Dynamic, so that `cetctl run --shstk` preloads
 * libcetctl-preload.so into it.
 *
 *   ldso_fail MODE N
 *   main     N rounds in the main thread of: dlopen() of a missing library,
 *            dlsym(RTLD_DEFAULT) and dlsym(handle) of undefined symbols, each
 *            failing as it must (NULL, dlerror() says why), with values in
 *            callee-saved and SSE registers across the calls
 *   thread   the same in a second thread
 *   handler  the same with the program's own SIGSEGV handler installed
 *            (SA_SIGINFO | SA_RESETHAND): it must never run, and must still be
 *            installed after
 * Prints "MODE: ok rounds=N ssp=same|grew|zero err=<first dlerror>" and exits
 * 0, or says what went wrong and exits 1. ssp: the shadow-stack pointer
 * (RDSSP) before and after the rounds; "grew" would mean entries left behind.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static unsigned long ssp(void)
{
	unsigned long v = 0;

	__asm__ volatile("rdsspq %0" : "+r"(v));
	return v;
}

static char first_err[200];

static void own_handler(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)ctx;
	dprintf(2, "own handler called: si_code=%d\n", si->si_code);
	_exit(42);
}

/* One round; 0 or -1 with the reason said. @x rides in an SSE register and
 * @k in a callee-saved one across the failing calls. */
static int __attribute__((noinline)) round_once(int i, volatile double *acc)
{
	double x = 1.5 * (i + 1);
	long k = 7L * i;
	void *h, *self;
	const char *e;

	h = dlopen("/nonexistent-cetctl/libnone-cetctl.so", RTLD_NOW);
	e = dlerror();
	if (h || !e) {
		printf("round %d: dlopen of a missing library: %p, dlerror %s\n", i, h,
		       e ? e : "(none)");
		return -1;
	}
	if (!first_err[0])
		snprintf(first_err, sizeof(first_err), "%s", e);
	if (dlsym(RTLD_DEFAULT, "cetctl_no_such_symbol") || !dlerror()) {
		printf("round %d: dlsym(RTLD_DEFAULT) of an undefined symbol did not fail\n", i);
		return -1;
	}
	self = dlopen(NULL, RTLD_NOW);
	if (!self || dlsym(self, "cetctl_no_such_symbol_either") || !dlerror()) {
		printf("round %d: dlsym(handle) of an undefined symbol did not fail\n", i);
		return -1;
	}
	dlclose(self);
	if (x != 1.5 * (i + 1) || k != 7L * i) {
		printf("round %d: registers lost: x=%g k=%ld\n", i, x, k);
		return -1;
	}
	*acc += x;
	return 0;
}

static int rounds(int n)
{
	volatile double acc = 0;
	unsigned long before = ssp(), after;
	int i;

	for (i = 0; i < n; i++)
		if (round_once(i, &acc) != 0)
			return -1;
	after = ssp();
	if (acc != 0.75 * n * (n + 1)) {
		printf("sum of the SSE values wrong: %g\n", acc);
		return -1;
	}
	printf("ok rounds=%d ssp=%s err=%s\n", n,
	       !before ? "zero" : before == after ? "same" : after < before ? "grew" : "shrank",
	       first_err);
	return 0;
}

static void *thread_main(void *arg)
{
	return (void *)(long)rounds(*(int *)arg);
}

int main(int argc, char **argv)
{
	struct sigaction sa, back;
	pthread_t t;
	void *r;
	int n;

	if (argc != 3) {
		fprintf(stderr, "usage: ldso_fail main|thread|handler N\n");
		return 2;
	}
	n = atoi(argv[2]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("%s: ", argv[1]);
	if (!strcmp(argv[1], "main"))
		return rounds(n) ? 1 : 0;
	if (!strcmp(argv[1], "thread")) {
		if (pthread_create(&t, NULL, thread_main, &n) || pthread_join(t, &r))
			return 1;
		return r ? 1 : 0;
	}
	if (!strcmp(argv[1], "handler")) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = own_handler;
		sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGSEGV, &sa, NULL))
			return 1;
		if (rounds(n))
			return 1;
		if (sigaction(SIGSEGV, NULL, &back) || back.sa_sigaction != own_handler ||
		    !(back.sa_flags & SA_RESETHAND)) {
			printf("the program's handler is no longer installed\n");
			return 1;
		}
		return 0;
	}
	fprintf(stderr, "ldso_fail: unknown mode %s\n", argv[1]);
	return 2;
}
