/* A signal handler that runs inside glibc's siglongjmp (the mask it
 * restores unblocks a pending signal) and does its own setjmp/longjmp. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static sigjmp_buf outer;
static volatile int inner_landed;

static void handler(int sig)
{
	jmp_buf in;

	(void)sig;
	if (setjmp(in) == 0)
		longjmp(in, 1);
	inner_landed++;
}

int main(void)
{
	volatile int rounds = 0;
	sigset_t set;

	signal(SIGUSR1, handler);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	if (sigsetjmp(outer, 1) < 3) {
		rounds++;
		sigprocmask(SIG_BLOCK, &set, NULL);
		raise(SIGUSR1);
		siglongjmp(outer, rounds);
	}
	printf("outer landed: rounds=%d inner=%d\n", rounds, inner_landed);
	return 0;
}
