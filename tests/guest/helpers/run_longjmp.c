// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * run_longjmp - setjmp/longjmp in every flavour, each followed by returns
 * through frames that were entered before the setjmp. Without the preload
 * library under `cetctl run --shstk` (glibc < 2.39) the first such return
 * meets a stale shadow-stack entry and dies with SEGV_CPERR; with it, the
 * SSP after the jump equals the SSP before the setjmp.
 * Built dynamically (the preload library needs the dynamic loader) and
 * with -D_FORTIFY_SOURCE=2, so plain longjmp goes through __longjmp_chk too.
 *
 * Prints one "ok <case> ssp=<same|zero>" line per case; exit 0 when all
 * cases came back and their SSPs matched, 1 otherwise.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void __longjmp_chk(struct __jmp_buf_tag env[1], int val) __attribute__((noreturn));

static unsigned long rdssp(void)
{
	unsigned long ssp = 0;

	__asm__ volatile("rdsspq %0" : "+r"(ssp));
	return ssp;
}

static jmp_buf jb;
static sigjmp_buf sjb;
static int fails;

enum how { H_LONGJMP, H__LONGJMP, H_SIGLONGJMP, H_CHK, H_SIGNAL };

static void __attribute__((noinline)) jump(enum how how, int depth)
{
	if (depth > 0) {
		jump(how, depth - 1);
		__asm__ volatile("" ::: "memory");	/* not a tail call */
		return;
	}
	switch (how) {
	case H_LONGJMP:
		longjmp(jb, 1);
	case H__LONGJMP:
		_longjmp(jb, 1);
	case H_SIGLONGJMP:
		siglongjmp(sjb, 1);
	case H_CHK:
		__longjmp_chk(jb, 1);
	case H_SIGNAL:
		raise(SIGUSR1);		/* the handler jumps out */
		break;
	}
}

static void on_usr1(int sig)
{
	(void)sig;
	siglongjmp(sjb, 2);
}

/* The case runs one frame below main, so that returning from here after
 * the jump is a return the shadow stack must agree with. */
static void __attribute__((noinline)) one(const char *name, enum how how)
{
	volatile unsigned long before = rdssp(), after;
	int r;

	if (how == H_SIGLONGJMP || how == H_SIGNAL)
		r = sigsetjmp(sjb, 1);
	else if (how == H__LONGJMP)
		r = _setjmp(jb);
	else
		r = setjmp(jb);
	if (r == 0) {
		jump(how, 20);
		printf("FAIL %s: no jump\n", name);
		fails++;
		return;
	}
	after = rdssp();
	if (after != before) {
		printf("FAIL %s: ssp %#lx after the jump, %#lx before\n", name, after, before);
		fails++;
	} else {
		printf("ok %s ssp=%s\n", name, before ? "same" : "zero");
	}
}

int main(int argc, char **argv)
{
	int i, rounds = argc > 1 ? atoi(argv[1]) : 1;

	setvbuf(stdout, NULL, _IONBF, 0);
	signal(SIGUSR1, on_usr1);
	for (i = 0; i < rounds; i++) {
		one("longjmp", H_LONGJMP);
		one("_longjmp", H__LONGJMP);
		one("siglongjmp", H_SIGLONGJMP);
		one("__longjmp_chk", H_CHK);
		one("signal-handler", H_SIGNAL);
	}
	printf("%s\n", fails ? "FAILED" : "all returned");
	return fails ? 1 : 0;
}
