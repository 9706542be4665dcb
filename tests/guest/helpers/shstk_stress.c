// SPDX-License-Identifier: GPL-2.0
/*
 * shstk_stress [ROUNDS [noise]] - does shadow-stack state survive what the kernel does to a task?
 *
 * Written for the Bochs tier (tests/guest/bochs-quirks.bats): Bochs 2.7 loses or leaks
 * the CET_U state (U_CET, PL3_SSP) across XSAVES/XRSTORS unless the test kernel carries
 * vm/bochs/cet-bochs27-quirks.patch. Every round checks, after each kind of event, that
 *   - the kernel's view (ARCH_SHSTK_STATUS) and the CPU's (RDSSP returns non-zero only
 *     with an active shadow stack) agree, and
 *   - enforcement still works: a return through a forged return address in a fork child
 *     must kill it with SIGSEGV (the #CP), while legitimate deep call chains do not.
 * Events: sched_yield/usleep (context switches), fork+wait, three threads (own shadow
 * stacks, yields, enforcement from inside a thread), 20 synchronous signals (SSP unchanged
 * around each), timer signals (setitimer 500 us) arriving while computing.
 *
 * With "noise", a child (without shadow stack) wakes up every 1 ms for the whole run, so
 * that the tested task is also switched out at arbitrary points (one CPU under Bochs).
 *
 * Output: "[FAIL] ..." per failed check (first 40), one "[STRESS] ..." summary line.
 * Exit: 0 all checks passed, 1 some failed, 77 shadow stack cannot be enabled (skip).
 * Build: static, -fcf-protection=none (tests/guest/helpers/CMakeLists.txt). The enabling arch_prctl is an inline syscall and main()
 * disables the shadow stack before it returns: the frames that existed before ENABLE
 * have no entries on the new shadow stack, so returning through them would raise #CP.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cet-abi.h"
#define FEAT_SHSTK		1UL

static inline long arch_prctl_inline(long code, unsigned long arg)
{
	long ret;
	register long rdi asm("rdi") = code;
	register unsigned long rsi asm("rsi") = arg;

	asm volatile("syscall"
		     : "=a"(ret)
		     : "0"(158L), "r"(rdi), "r"(rsi)
		     : "rcx", "r11", "memory", "cc");
	return ret;
}

static inline unsigned long read_ssp(void)
{
	unsigned long ssp = 0;	/* RDSSP is a NOP (leaves 0) without an active shadow stack */

	asm volatile("rdsspq %0" : "+r"(ssp));
	return ssp;
}

static int nfail, nchecks;

__attribute__((format(printf, 2, 3)))
static void check(int ok, const char *fmt, ...)
{
	va_list ap;

	nchecks++;
	if (ok)
		return;
	if (++nfail <= 40) {
		va_start(ap, fmt);
		fputs("[FAIL] ", stdout);
		vprintf(fmt, ap);
		fputc('\n', stdout);
		va_end(ap);
	}
}

static unsigned long kernel_status(void)
{
	unsigned long feat = 0;

	if (arch_prctl_inline(ARCH_SHSTK_STATUS, (unsigned long)&feat))
		return ~0UL;
	return feat;
}

static void consistent(const char *where, int round)
{
	unsigned long st = kernel_status(), ssp = read_ssp();

	check(st != ~0UL && (st & FEAT_SHSTK) && ssp != 0,
	      "round %d, %s: kernel says features=%#lx, CPU says SSP=%#lx", round, where, st, ssp);
}

__attribute__((noinline)) static int descend(int depth)
{
	int r;

	if (depth == 0)
		return 0;
	r = descend(depth - 1) + 1;
	asm volatile("" ::: "memory");	/* keep it a real call, not a tail call */
	return r;
}

/* push a return address that no call pushed, then return through it */
__attribute__((noinline)) static void forged_return(void)
{
	asm volatile("lea 1f(%%rip), %%rax\n\tpush %%rax\n\tret\n1:" ::: "rax", "memory");
}

/* 1 when a child doing a forged return is killed by SIGSEGV (and legit calls are fine) */
static int enforcement_works(void)
{
	int st;
	pid_t pid = fork();

	if (pid < 0)
		return 0;
	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL);
		for (int i = 0; i < 50; i++)
			if (descend(20) != 20)
				_exit(3);
		sched_yield();
		forged_return();
		_exit(7);	/* reached only when the shadow stack did not object */
	}
	if (waitpid(pid, &st, 0) != pid)
		return 0;
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV;
}

static volatile sig_atomic_t h_calls, h_without_ssp;

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)sig; (void)si; (void)uc;
	h_calls++;
	if (!read_ssp())
		h_without_ssp++;
	for (volatile int i = 0; i < 3000; i++)
		;		/* a wider window for preemption inside the handler */
	descend(10);
}

static void *thread_body(void *parent_ssp)
{
	unsigned long ssp = read_ssp();
	long bad = 0;

	if (!ssp)
		bad |= 1;	/* no shadow stack in the new thread */
	if (ssp == (unsigned long)parent_ssp)
		bad |= 2;	/* shares the creator's shadow stack */
	for (int i = 0; i < 200; i++) {
		descend(15);
		if (i % 20 == 0)
			sched_yield();
		if (!read_ssp())
			bad |= 4;
	}
	if (!enforcement_works())
		bad |= 8;
	return (void *)bad;
}

static pid_t noise = -1;

static void stop_noise(void)
{
	if (noise > 0) {
		kill(noise, SIGKILL);
		waitpid(noise, NULL, 0);
	}
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 10;
	int per[5] = { 0 }, f0;
	struct sigaction sa;
	long rc;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc > 2 && !strcmp(argv[2], "noise")) {
		noise = fork();
		if (noise == 0) {
			struct timespec ts = { 0, 1000000 };

			for (;;)
				nanosleep(&ts, NULL);
		}
	}
	rc = arch_prctl_inline(ARCH_SHSTK_ENABLE, FEAT_SHSTK);
	if (rc) {
		printf("SKIP: ARCH_SHSTK_ENABLE failed (%ld): no shadow-stack support\n", rc);
		stop_noise();
		return 77;
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);

	for (int r = 0; r < rounds; r++) {
		/* 0: plain context switches */
		f0 = nfail;
		for (int i = 0; i < 50; i++) {
			sched_yield();
			descend(10);
		}
		usleep(300);
		consistent("after yield/usleep", r);
		per[0] += nfail - f0;

		/* 1: fork */
		f0 = nfail;
		check(enforcement_works(), "round %d: fork child with a forged return was not killed", r);
		consistent("after fork/wait", r);
		per[1] += nfail - f0;

		/* 2: threads */
		f0 = nfail;
		{
			pthread_t t[3];
			void *res;
			int made[3];

			for (int i = 0; i < 3; i++) {
				made[i] = !pthread_create(&t[i], NULL, thread_body, (void *)read_ssp());
				check(made[i], "round %d: pthread_create %d", r, i);
			}
			for (int i = 0; i < 3; i++) {
				if (!made[i])
					continue;
				pthread_join(t[i], &res);
				check(res == NULL, "round %d: thread %d: problems %#lx (1 no SSP, 2 shared SSP, 4 lost SSP, 8 not enforced)",
				      r, i, (long)res);
			}
		}
		consistent("after threads", r);
		per[2] += nfail - f0;

		/* 3: synchronous signals */
		f0 = nfail;
		h_without_ssp = 0;
		for (int i = 0; i < 20; i++) {
			unsigned long before = read_ssp();

			raise(SIGUSR1);
			check(read_ssp() == before, "round %d: SSP %#lx -> %#lx across a signal", r, before, read_ssp());
		}
		check(!h_without_ssp, "round %d: %d signal handlers ran without a shadow stack", r, (int)h_without_ssp);
		per[3] += nfail - f0;

		/* 4: asynchronous timer signals */
		f0 = nfail;
		{
			struct itimerval it = { { 0, 500 }, { 0, 500 } };

			h_without_ssp = 0;
			h_calls = 0;
			setitimer(ITIMER_REAL, &it, NULL);
			for (int i = 0; i < 3000 && h_calls < 40; i++)
				descend(30);
			memset(&it, 0, sizeof(it));
			setitimer(ITIMER_REAL, &it, NULL);
		}
		check(!h_without_ssp, "round %d: %d of %d timer handlers ran without a shadow stack",
		      r, (int)h_without_ssp, (int)h_calls);
		consistent("after timer signals", r);
		check(enforcement_works(), "round %d: enforcement lost after signals", r);
		per[4] += nfail - f0;
	}

	printf("[STRESS] rounds=%d checks=%d fails=%d (yield %d, fork %d, threads %d, signals %d, timer %d)\n",
	       rounds, nchecks, nfail, per[0], per[1], per[2], per[3], per[4]);
	arch_prctl_inline(ARCH_SHSTK_DISABLE, FEAT_SHSTK);
	stop_noise();
	return nfail ? 1 : 0;
}
