// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * preload-escape [N] - N escapes, then a nested longjmp that must land at
 * its own setjmp site.
 *
 * An escape: a siglongjmp whose restored mask unblocks a pending signal,
 * and the handler siglongjmps elsewhere, so the first jump never lands.
 * Under libcetctl-preload the first jump had already left a landing record
 * behind. Then the same setjmp function, at its other setjmp call (same
 * stack pointer, other resume address), does a siglongjmp inside which a
 * handler does its own setjmp/longjmp. It must come back at the second
 * call site. Issue 31: after 31 escapes the records of the escaped jumps
 * filled the library's record stack, the nested push overwrote the outer
 * jump's record and the outer jump landed at the first call site.
 *
 * Prints "escapes=N landed_at=1 inner=1 same_sp=1" when all is well
 * (same_sp=1: both call sites really share the stack pointer, so the test
 * means what it says); exit 0 then, 1 otherwise.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

static sigjmp_buf escape, site_a, site_b;
static volatile int nested, inner, landed_at = -1;

static void on_usr1(int sig)
{
	jmp_buf in;

	(void)sig;
	if (!nested)
		siglongjmp(escape, 1);	/* the interrupted siglongjmp never lands */
	if (setjmp(in) == 0)
		longjmp(in, 1);
	inner++;
}

static void pending_usr1(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	raise(SIGUSR1);
}

/* Two setjmp calls in one frame: the same stack pointer, two resume addresses. */
static int __attribute__((noinline)) site(int which)
{
	if (which == 0) {
		if (sigsetjmp(site_a, 1)) {
			landed_at = 0;
			return 0;
		}
	} else {
		if (sigsetjmp(site_b, 1)) {
			landed_at = 1;
			return 1;
		}
	}
	pending_usr1();
	siglongjmp(which ? site_b : site_a, 1);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 31;
	volatile int i;
	int same_sp;

	signal(SIGUSR1, on_usr1);
	for (i = 0; i < n; i++)
		if (sigsetjmp(escape, 1) == 0)
			site(0);
	nested = 1;
	site(1);
	/* JB_RSP, pointer-mangled the same way in both buffers */
	same_sp = ((long *)site_a)[6] == ((long *)site_b)[6];
	printf("escapes=%d landed_at=%d inner=%d same_sp=%d\n", n, landed_at, inner, same_sp);
	return landed_at == 1 && inner == 1 && same_sp ? 0 : 1;
}
