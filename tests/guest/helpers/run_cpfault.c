// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * run_cpfault - dies of a control-protection fault in a chosen way, for the
 * preload library's diagnosis (tests/guest/run-diagnose.bats). Dynamic, so
 * that `cetctl run --shstk` preloads libcetctl-preload.so into it.
 *
 *   ret      smash() overwrites its own return address with landing() and
 *            returns: the shadow stack expects do_ret()'s return point
 *   longjmp  a longjmp by glibc's own longjmp (not the preload's, which
 *            would have popped the shadow stack): back in jumper(), its
 *            return meets a stale entry; its real return address is
 *            further up the shadow stack
 *   jit      code copied into an anonymous executable mapping returns to
 *            landing() instead of its caller
 *   switch   a return on a stack of its own (mmap) whose top is landing()
 *   thread   "ret" in a second thread
 *   fork     "ret" in a child; the parent prints the child's end
 *   handler  "ret" after installing its own SIGSEGV handler (exit 42)
 *   handler-info  the same with sigaction(SA_SIGINFO): it prints the
 *            si_code it got ("own handler si_code=N", exit 42)
 * Every way to land in landing() prints "survived" and exits 0: under a
 * shadow stack none does.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

void landing(void);
/* smash(target): its own return address becomes @target, then it returns */
void smash(void (*target)(void));
/* switch_to(top): the stack pointer becomes @top, then a return */
void switch_to(void *top);

__asm__(".text\n"
	".globl smash\n"
	".type smash, @function\n"
	"smash:\n"
	"	endbr64\n"
	"	mov %rdi, (%rsp)\n"
	"	ret\n"
	".size smash, .-smash\n"
	".globl switch_to\n"
	".type switch_to, @function\n"
	"switch_to:\n"
	"	endbr64\n"
	"	mov %rdi, %rsp\n"
	"	ret\n"
	".size switch_to, .-switch_to\n");

void landing(void)
{
	puts("survived");
	fflush(stdout);
	_exit(0);
}

void __attribute__((noinline)) do_ret(void)
{
	smash(landing);
	__asm__ volatile("" ::: "memory");	/* not a tail call */
}

static jmp_buf jb;
static void (*libc_longjmp)(struct __jmp_buf_tag *, int);

void __attribute__((noinline)) deeper(volatile int n)
{
	if (n > 0)
		deeper(n - 1);
	else
		libc_longjmp(jb, 1);
	__asm__ volatile("" ::: "memory");	/* not a tail call */
}

/* setjmp here, longjmp from below: this function's return then faults */
int __attribute__((noinline)) jumper(void)
{
	volatile int r = setjmp(jb);

	if (r == 0)
		deeper(3);
	return r;
}

void __attribute__((noinline)) do_longjmp(void)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);

	/* glibc's own longjmp: it leaves the shadow stack where it is */
	libc_longjmp = libc ? dlsym(libc, "longjmp") : NULL;
	if (!libc_longjmp) {
		puts("no libc longjmp");
		exit(2);
	}
	jumper();
	landing();
}

void __attribute__((noinline)) do_jit(void)
{
	/* mov %rdi, (%rsp); ret */
	static const unsigned char code[] = { 0x48, 0x89, 0x3c, 0x24, 0xc3 };
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		exit(2);
	memcpy(p, code, sizeof(code));
	((void (*)(void (*)(void)))p)(landing);
	__asm__ volatile("" ::: "memory");
}

void __attribute__((noinline)) do_switch(void)
{
	size_t size = 1 << 16;
	char *st = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void **top;

	if (st == MAP_FAILED)
		exit(2);
	top = (void **)(st + size - 64);
	*top = (void *)landing;
	switch_to(top);
}

static void *thread_main(void *arg)
{
	(void)arg;
	do_ret();
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

static void own_info(int sig, siginfo_t *si, void *ctx)
{
	char m[48];
	int n;

	(void)sig;
	(void)ctx;
	n = snprintf(m, sizeof(m), "own handler si_code=%d\n", si->si_code);
	if (write(1, m, (size_t)n) < 0)
		_exit(1);
	_exit(42);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "ret";

	setvbuf(stdout, NULL, _IONBF, 0);
	if (!strcmp(mode, "ret")) {
		do_ret();
	} else if (!strcmp(mode, "longjmp")) {
		do_longjmp();
	} else if (!strcmp(mode, "jit")) {
		do_jit();
	} else if (!strcmp(mode, "switch")) {
		do_switch();
	} else if (!strcmp(mode, "thread")) {
		pthread_t t;

		if (pthread_create(&t, NULL, thread_main, NULL) != 0)
			return 2;
		pthread_join(t, NULL);
	} else if (!strcmp(mode, "fork")) {
		int st;
		pid_t c = fork();

		if (c == 0)
			do_ret();
		if (c < 0 || waitpid(c, &st, 0) != c)
			return 2;
		printf("child %ld: %s %d\n", (long)c, WIFEXITED(st) ? "exit" : "signal",
		       WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		return 0;
	} else if (!strcmp(mode, "handler")) {
		signal(SIGSEGV, own);
		do_ret();
	} else if (!strcmp(mode, "handler-info")) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = own_info;
		sa.sa_flags = SA_SIGINFO;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGSEGV, &sa, NULL);
		do_ret();
	} else {
		fprintf(stderr, "run_cpfault: unknown mode %s\n", mode);
		return 2;
	}
	puts("returned");
	return 1;
}
