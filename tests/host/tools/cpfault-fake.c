// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cpfault-fake - drives the preload library's diagnosis of a
 * control-protection fault (src/preload/cpfault.c) on a host without
 * shadow stacks. fake_cp() puts a chosen return address on the stack and
 * queues itself a SIGSEGV with si_code SEGV_CPERR (a process may send
 * itself any si_code), so that the handler finds what a #CP at a `ret`
 * leaves: the instruction after the syscall is that `ret`, the stack holds
 * the address it will try. The handler returns, the `ret` runs (no fault
 * here) and lands in landing(), which says whether SIGSEGV is back at its
 * default and exits 3. With the library built with CETCTL_PRELOAD_FAKE_SSP
 * its handler is installed (its RDSSP reads a constant); the shadow stack
 * itself cannot be read here, so what it expected is the guest's to test.
 *
 * Modes: plain, jit (fake_cp copied into an anonymous executable mapping),
 * stack (run on a stack of its own), thread, fork (in a child, whose status
 * the parent prints), own-handler (the program's
 * SIGSEGV handler, installed after the library's with signal()),
 * own-siginfo (the same with sigaction(), SA_SIGINFO | SA_RESETHAND: what
 * it reads back before and inside its handler, the siginfo it gets),
 * own-kill (that handler and a SIGSEGV sent by kill), own-dfl (a handler
 * set, then SIG_DFL again), kill (SIGSEGV sent by kill), null (a NULL
 * dereference).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define SEGV_CPERR_ 10

/* fake_cp(tgid, tid, siginfo, target): never returns to its caller */
void fake_cp(long tgid, long tid, siginfo_t *si, void (*target)(void));
void fake_cp_end(void);
/* the same on the stack @top */
void fake_cp_on(void *top, long tgid, long tid, siginfo_t *si, void (*target)(void));

__asm__(".text\n"
	".globl fake_cp\n"
	".type fake_cp, @function\n"
	"fake_cp:\n"
	"	endbr64\n"
	"	push %rcx\n"			/* what the ret below will try */
	"	mov %rdx, %r10\n"
	"	mov $11, %edx\n"		/* SIGSEGV */
	"	mov $297, %eax\n"		/* rt_tgsigqueueinfo */
	"	syscall\n"
	"	ret\n"				/* the signal arrives here */
	".size fake_cp, .-fake_cp\n"
	".globl fake_cp_end\n"
	"fake_cp_end:\n"
	".globl fake_cp_on\n"
	".type fake_cp_on, @function\n"
	"fake_cp_on:\n"
	"	endbr64\n"
	"	mov %rdi, %rsp\n"
	"	mov %rsi, %rdi\n"
	"	mov %rdx, %rsi\n"
	"	mov %rcx, %rdx\n"
	"	mov %r8, %rcx\n"
	"	call fake_cp\n"
	"	ud2\n"
	".size fake_cp_on, .-fake_cp_on\n");

void landing(void)
{
	struct sigaction sa;

	sigaction(SIGSEGV, NULL, &sa);
	printf("landed dfl=%d\n", sa.sa_handler == SIG_DFL);
	fflush(stdout);
	_exit(3);
}

static siginfo_t si;

static void fake(void)
{
	si.si_signo = SIGSEGV;
	si.si_code = SEGV_CPERR_;
	fake_cp(getpid(), syscall(SYS_gettid), &si, landing);
}

static void *thread_main(void *arg)
{
	(void)arg;
	fake();
	return NULL;
}

static void own(int sig)
{
	static const char m[] = "own handler\n";

	(void)sig;
	if (write(1, m, sizeof(m) - 1) < 0)
		_exit(1);
	_exit(42);
}

static void own_info(int sig, siginfo_t *info, void *ctx)
{
	struct sigaction q;
	char m[64];
	int n;

	(void)sig;
	(void)ctx;
	sigaction(SIGSEGV, NULL, &q);
	n = snprintf(m, sizeof(m), "own si_code=%d dfl=%d\n", info->si_code,
		     q.sa_handler == SIG_DFL);
	if (write(1, m, (size_t)n) < 0)
		_exit(1);
	_exit(42);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "plain";

	setvbuf(stdout, NULL, _IONBF, 0);
	if (!strcmp(mode, "plain")) {
		fake();
	} else if (!strcmp(mode, "jit")) {
		size_t n = (size_t)((char *)fake_cp_end - (char *)fake_cp);
		void *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		void (*copy)(long, long, siginfo_t *, void (*)(void));

		if (code == MAP_FAILED)
			return 1;
		memcpy(code, (void *)fake_cp, n);
		copy = (void (*)(long, long, siginfo_t *, void (*)(void)))code;
		si.si_signo = SIGSEGV;
		si.si_code = SEGV_CPERR_;
		copy(getpid(), syscall(SYS_gettid), &si, landing);
	} else if (!strcmp(mode, "stack")) {
		size_t size = 1 << 20;
		char *st = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				-1, 0);

		if (st == MAP_FAILED)
			return 1;
		si.si_signo = SIGSEGV;
		si.si_code = SEGV_CPERR_;
		fake_cp_on(st + size - 64, getpid(), syscall(SYS_gettid), &si, landing);
	} else if (!strcmp(mode, "thread")) {
		pthread_t t;

		if (pthread_create(&t, NULL, thread_main, NULL) != 0)
			return 1;
		pthread_join(t, NULL);
	} else if (!strcmp(mode, "fork")) {
		int st;
		pid_t c = fork();

		if (c == 0)
			fake();
		if (c < 0 || waitpid(c, &st, 0) != c)
			return 1;
		printf("child %ld: %s %d\n", (long)c, WIFEXITED(st) ? "exit" : "signal",
		       WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		return 0;
	} else if (!strcmp(mode, "own-handler")) {
		signal(SIGSEGV, own);
		fake();
	} else if (!strcmp(mode, "own-siginfo")) {
		struct sigaction sa, q;

		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = own_info;
		sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGSEGV, &sa, NULL);
		sigaction(SIGSEGV, NULL, &q);
		printf("reads back own=%d siginfo=%d\n", q.sa_sigaction == own_info,
		       !!(q.sa_flags & SA_SIGINFO));
		fake();
	} else if (!strcmp(mode, "own-kill")) {
		signal(SIGSEGV, own);
		kill(getpid(), SIGSEGV);
		sleep(1);
		puts("survived");
	} else if (!strcmp(mode, "own-dfl")) {
		void (*was)(int);

		signal(SIGSEGV, own);
		was = signal(SIGSEGV, SIG_DFL);
		printf("signal() gave back own=%d\n", was == own);
		fake();
	} else if (!strcmp(mode, "kill")) {
		kill(getpid(), SIGSEGV);
		sleep(1);
		puts("survived");
	} else if (!strcmp(mode, "null")) {
		*(volatile int *)(long)(argc - 2) = 1;
		puts("survived");
	}
	return 1;
}
