// SPDX-License-Identifier: GPL-2.0
/*
 * shstk_flow - control flow with shadow stacks: #CP, signals, RSTORSSP, WRSS, fork,
 * threads, vfork. All cases need shadow-stack hardware.
 *
 *   shstk_flow cperr      a corrupted return raises SIGSEGV with si_code SEGV_CPERR
 *   shstk_flow signal     handler frame on the shadow stack: restorer + token, SSP restored
 *   shstk_flow sigforge   sigreturn refuses a forged token (bit 63 clear, unaligned, kernel)
 *   shstk_flow pivot      RSTORSSP onto a mapped stack and back; no token -> #CP
 *   shstk_flow wrss       WRSS only when enabled (else #UD = SIGILL), only on ss memory
 *   shstk_flow fork       the child has a working CoW copy, the parent is unaffected
 *   shstk_flow threads    each thread has its own shadow stack, freed at exit
 *   shstk_flow vfork      the vfork child runs on the parent's shadow stack
 */
#include "shstk.h"

#include <pthread.h>

#ifndef SA_RESTORER
#define SA_RESTORER 0x04000000	/* x86 uapi; glibc hides it */
#endif

#define SS_SIZE (16 * PAGE)

static bool exited_with(int st, int code, const char *what)
{
	return check(WIFEXITED(st) && WEXITSTATUS(st) == code, "%s (%s; exit %d expected)", what, wstr(st), code);
}

static bool killed_by(int st, int sig, const char *what)
{
	return check(WIFSIGNALED(st) && WTERMSIG(st) == sig, "%s (%s; killed by %s expected)", what, wstr(st),
		     sigabbrev_np(sig));
}

/* ---------------------------------------------------------------- cperr */
__attribute__((noreturn)) static void case_cperr(void)
{
	pid_t pid;
	int st;

	require_hw();
	/* control: without shadow stacks the same code runs fine */
	pid = fork();
	if (pid == 0) {
		corrupted_return();
		_exit(0);
	}
	exited_with(wait_child(pid), 0, "corrupted return without shadow stack: no fault (control)");

	ENABLE_SHSTK_OR_SKIP();
	pid = fork();
	if (pid == 0) {
		catch_faults_with_code();
		corrupted_return();
		_exit(0);
	}
	st = wait_child(pid);
	exited_with(st, 100 + SEGV_CPERR_CODE, "corrupted return: SIGSEGV with si_code SEGV_CPERR (10)");
	pid = fork();
	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL);
		corrupted_return();
		_exit(0);
	}
	killed_by(wait_child(pid), SIGSEGV, "corrupted return without a handler kills with SIGSEGV");
	check(recurse(50) == 50, "the parent is unaffected");
	finish();
}

/* ---------------------------------------------------------------- signal */
static volatile unsigned long h_ssp, h_top0, h_top1, h_count;

static void sig_record(int sig)
{
	unsigned long ssp = read_ssp();

	(void)sig;
	h_ssp = ssp;
	if (ssp) {
		h_top0 = ((unsigned long *)ssp)[0];
		h_top1 = ((unsigned long *)ssp)[1];
	}
	h_count++;
	recurse(20);	/* calls inside the handler work */
}

/* raise() through an inline syscall, so the SSP at delivery is the one read here */
static inline __attribute__((always_inline)) unsigned long raise_inline(int sig)
{
	unsigned long ssp = read_ssp();
	long ret;
	register long a1 asm("rdi") = getpid();
	register long a2 asm("rsi") = sig;

	asm volatile("syscall" : "=a"(ret) : "0"((long)SYS_kill), "r"(a1), "r"(a2) : "rcx", "r11", "memory", "cc");
	return ssp;
}

__attribute__((noreturn)) static void case_signal(void)
{
	struct sigaction sa, cur;
	unsigned long before;

	require_hw();
	ENABLE_SHSTK_OR_SKIP();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sig_record;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR1, NULL, &cur);
	unsigned long restorer = (unsigned long)cur.sa_restorer;
	check(restorer != 0 && (cur.sa_flags & SA_RESTORER), "glibc installed a restorer %#lx", restorer);

	before = raise_inline(SIGUSR1);
	check(h_count == 1, "handler ran once");
	check(h_ssp != 0, "handler ran with shadow stack on (SSP %#lx)", h_ssp);
	check(h_ssp == before - 16, "handler SSP %#lx == pre-signal SSP %#lx - 16", h_ssp, before);
	check(h_top0 == restorer, "top of the handler's shadow stack is the restorer (%#lx)", h_top0);
	check(h_top1 == (before | TOKEN_BIT63), "next is the token: old SSP | bit 63 = %#lx (got %#lx)",
	      before | TOKEN_BIT63, h_top1);
	check(read_ssp() == before, "sigreturn restored SSP %#lx (now %#lx)", before, read_ssp());
	/* many more, with calls in between */
	for (int i = 0; i < 100; i++) {
		raise_inline(SIGUSR1);
		recurse(i % 10);
	}
	check(h_count == 101, "101 signals handled");
	check(read_ssp() == before, "SSP unchanged after 100 more signals");

	/* SA_ONSTACK on an alternate stack: the shadow stack is still the thread's */
	stack_t alt = { .ss_sp = malloc(65536), .ss_size = 65536, .ss_flags = 0 };
	sigaltstack(&alt, NULL);
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR2, &sa, NULL);
	before = raise_inline(SIGUSR2);
	check(h_ssp == before - 16, "SA_ONSTACK handler uses the same shadow stack (SSP %#lx)", h_ssp);
	check(read_ssp() == before, "SSP restored after SA_ONSTACK handler");
	finish();
}

/* ---------------------------------------------------------------- sigforge */
static volatile int forge_mode;

static void sig_forge(int sig)
{
	unsigned long *ssp = (unsigned long *)read_ssp();
	unsigned long tok = ssp[1], old = tok & ~TOKEN_BIT63;

	(void)sig;
	switch (forge_mode) {
	case 0:
		wrss(&ssp[1], tok);			/* rewrite the same value (control) */
		break;
	case 1:
		wrss(&ssp[1], old);			/* bit 63 clear: not a signal token */
		break;
	case 2:
		wrss(&ssp[1], (old + 4) | TOKEN_BIT63);	/* unaligned SSP */
		break;
	case 3:
		wrss(&ssp[1], 0x0000800000000000UL | TOKEN_BIT63);	/* SSP at/after TASK_SIZE */
		break;
	}
}

__attribute__((noreturn)) static void case_sigforge(void)
{
	static const char *what[] = {
		"token rewritten unchanged: sigreturn succeeds (control)",
		"token with bit 63 clear: sigreturn refused, SIGSEGV",
		"token with an unaligned SSP: sigreturn refused, SIGSEGV",
		"token with a non-user SSP: sigreturn refused, SIGSEGV",
	};
	struct sigaction sa;

	require_hw();
	ENABLE_SHSTK_OR_SKIP();
	ENABLE_WRSS_OR_FAIL();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sig_forge;
	sigaction(SIGUSR1, &sa, NULL);
	for (int m = 0; m < 4; m++) {
		pid_t pid = fork();

		if (pid == 0) {
			forge_mode = m;
			raise_inline(SIGUSR1);
			_exit(0);
		}
		int st = wait_child(pid);
		if (m == 0)
			exited_with(st, 0, what[m]);
		else
			killed_by(st, SIGSEGV, what[m]);
	}
	finish();
}

/* ---------------------------------------------------------------- pivot */
static volatile unsigned long probe_ssp;

__attribute__((noinline)) static void probe(void)
{
	probe_ssp = read_ssp();
	recurse(30);
}

/*
 * Switch to the stack whose restore token is at `token`, call something there, and
 * switch back. Everything between the two RSTORSSPs stays in this one frame.
 */
__attribute__((noinline)) static bool pivot(unsigned long token, unsigned long *on_new, unsigned long *after)
{
	unsigned long old = read_ssp();

	asm volatile("rstorssp (%0)\n\tsaveprevssp" : : "r"(token) : "memory");
	*on_new = read_ssp();
	probe();
	/* SAVEPREVSSP left a restore token for `old` just below it on the old stack */
	asm volatile("rstorssp (%0)\n\tsaveprevssp" : : "r"(old - 8) : "memory");
	*after = read_ssp();
	return *after == old;
}

__attribute__((noreturn)) static void case_pivot(void)
{
	unsigned long a, top, on_new = 0, after = 0, own;

	require_hw();
	ENABLE_SHSTK_OR_SKIP();
	own = read_ssp();
	a = map_shadow_stack(0, SS_SIZE, SHADOW_STACK_SET_TOKEN);
	if (!check((long)a > 0, "map_shadow_stack -> %#lx", a))
		finish();
	top = a + SS_SIZE;
	check(pivot(top - 8, &on_new, &after), "pivot and back: SSP restored (%#lx)", after);
	check(on_new == top, "on the new stack SSP was its top %#lx (got %#lx)", top, on_new);
	check(probe_ssp == top - 8, "a call there pushed onto the new stack (SSP %#lx in the callee)", probe_ssp);
	check(*(unsigned long *)(top - 8) == (top | 1), "leaving it wrote a fresh restore token (%#lx)",
	      *(unsigned long *)(top - 8));
	/* so it can be entered again */
	on_new = after = 0;
	check(pivot(top - 8, &on_new, &after) && on_new == top, "second pivot onto the same stack works");
	check(read_ssp() == own, "own SSP unchanged");
	check(recurse(50) == 50, "calls work after the round trips");

	/* RSTORSSP to a stack without a token: #CP in a child */
	unsigned long b = map_shadow_stack(0, SS_SIZE, 0);
	pid_t pid = fork();
	if (pid == 0) {
		catch_faults_with_code();
		pivot(b + SS_SIZE - 8, &on_new, &after);
		_exit(0);
	}
	exited_with(wait_child(pid), 100 + SEGV_CPERR_CODE, "RSTORSSP without a restore token: SIGSEGV/SEGV_CPERR");
	/* and to normal memory: a shadow-stack access to a non-ss page faults */
	unsigned long *n = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	n[PAGE / 8 - 1] = ((unsigned long)n + PAGE) | 1;	/* a perfect-looking token */
	pid = fork();
	if (pid == 0) {
		catch_faults_with_code();
		pivot((unsigned long)n + PAGE - 8, &on_new, &after);
		_exit(0);
	}
	int st = wait_child(pid);
	check(WIFEXITED(st) && WEXITSTATUS(st) >= 100 && WEXITSTATUS(st) < 150,
	      "RSTORSSP to a token in normal memory: SIGSEGV (%s)", wstr(st));
	finish();
}

/* ---------------------------------------------------------------- wrss */
static void wrss_child(unsigned long addr)
{
	pid_t pid = fork();

	if (pid == 0) {
		catch_faults_with_code();
		wrss((unsigned long *)addr, 0x4242);
		_exit(*(unsigned long *)addr == 0x4242 ? 0 : 1);
	}
	int st = wait_child(pid);
	h_count = (unsigned long)st;
}

__attribute__((noreturn)) static void case_wrss(void)
{
	unsigned long a;

	require_hw();
	a = map_shadow_stack(0, SS_SIZE, 0);
	if (!check((long)a > 0, "map_shadow_stack -> %#lx", a))
		finish();
	wrss_child(a);
	exited_with(h_count, 150 + ILL_ILLOPN, "WRSS with shadow stacks off: #UD -> SIGILL/ILL_ILLOPN");
	ENABLE_SHSTK_OR_SKIP();
	wrss_child(a);
	exited_with(h_count, 150 + ILL_ILLOPN, "WRSS with SHSTK but not WRSS enabled: SIGILL/ILL_ILLOPN");
	ENABLE_WRSS_OR_FAIL();
	wrss_child(a);
	exited_with(h_count, 0, "WRSS enabled: writes the shadow stack");
	wrss((unsigned long *)(a + 8), 0x77);
	check(*(unsigned long *)(a + 8) == 0x77, "value visible to normal loads");
	unsigned long *n = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	n[0] = 1;
	wrss_child((unsigned long)n);
	exited_with(h_count, 100 + SEGV_ACCERR, "WRSS to normal writable memory: SIGSEGV/SEGV_ACCERR");
	check_ret(arch_prctl_raw(ARCH_SHSTK_DISABLE, F_WRSS), 0, "DISABLE(WRSS)");
	wrss_child(a);
	exited_with(h_count, 150 + ILL_ILLOPN, "WRSS after DISABLE(WRSS): SIGILL again");
	finish();
}

/* ---------------------------------------------------------------- fork */
/*
 * The parent recurses DEPTH deep, which leaves DEPTH stale return addresses below its
 * SSP. The deep half of them is out of reach of the few frames the parent uses later
 * (fork, waitpid), so it must stay bit-identical however the child writes its copy.
 */
#define DEPTH 2000
#define KEEP 1000	/* slots [ssp - DEPTH*8, ssp - (DEPTH-KEEP)*8) are compared */
__attribute__((noinline)) static int recurse_other(int n)
{
	int r;

	if (n <= 0)
		return 0;
	r = recurse_other(n - 1) + 2;
	asm volatile("" : : : "memory");
	return r / 2 * 2;
}

static bool same_slots(const unsigned long *snap, unsigned long ssp)
{
	const volatile unsigned long *p = (const unsigned long *)(ssp - DEPTH * 8);

	for (int i = 0; i < KEEP; i++)
		if (p[i] != snap[i])
			return false;
	return true;
}

__attribute__((noreturn)) static void case_fork(void)
{
	static unsigned long snap[KEEP];
	unsigned long ssp;
	pid_t pid;
	int st;

	require_hw();
	ENABLE_SHSTK_OR_SKIP();
	recurse(DEPTH);
	ssp = read_ssp();
	for (int i = 0; i < KEEP; i++)
		snap[i] = ((volatile unsigned long *)(ssp - DEPTH * 8))[i];
	check(snap[0] != 0 && snap[KEEP - 1] != 0, "recursion left return addresses on the shadow stack");
	pid = fork();
	if (pid == 0) {
		if (read_ssp() != ssp)
			_exit(10);
		if (shstk_status() != F_SHSTK)
			_exit(11);
		/* different return addresses over the same slots: CoW break of the deep pages */
		if (recurse_other(DEPTH) != 2 * DEPTH)
			_exit(12);
		if (same_slots(snap, ssp))
			_exit(13);
		/* still enforced in the child */
		pid_t g = fork();
		if (g == 0) {
			catch_faults_with_code();
			corrupted_return();
			_exit(0);
		}
		int gs = wait_child(g);
		if (!WIFEXITED(gs) || WEXITSTATUS(gs) != 100 + SEGV_CPERR_CODE)
			_exit(14);
		_exit(0);
	}
	st = wait_child(pid);
	exited_with(st, 0, "child: same SSP, STATUS shstk, own writes, still enforced (10-14: which failed)");
	check(same_slots(snap, ssp), "parent's shadow stack unchanged by the child's writes");
	check(read_ssp() == ssp && recurse(DEPTH) == DEPTH, "parent keeps working");
	pid = fork();
	if (pid == 0) {
		catch_faults_with_code();
		corrupted_return();
		_exit(0);
	}
	exited_with(wait_child(pid), 100 + SEGV_CPERR_CODE, "a second child is enforced too");
	finish();
}

/* ---------------------------------------------------------------- threads */
static pthread_barrier_t tbar;
static volatile unsigned long t_ssp[2];

static void *thread_fn(void *arg)
{
	long i = (long)arg;

	t_ssp[i] = read_ssp();
	recurse(100);
	pthread_barrier_wait(&tbar);	/* main inspects */
	pthread_barrier_wait(&tbar);
	return NULL;
}

__attribute__((noreturn)) static void case_threads(void)
{
	unsigned long main_ssp, s[3] = { 0 }, e[3] = { 0 };
	int before, during, after = -1;
	pthread_t t[2];

	require_hw();
	ENABLE_SHSTK_OR_SKIP();
	main_ssp = read_ssp();
	before = count_ss_vmas(0);
	check(before == 1, "one ss VMA before the threads (found %d)", before);
	pthread_barrier_init(&tbar, NULL, 3);
	for (long i = 0; i < 2; i++)
		if (!check(!pthread_create(&t[i], NULL, thread_fn, (void *)i), "pthread_create %ld", i))
			finish();
	pthread_barrier_wait(&tbar);
	during = count_ss_vmas(0);
	check(during == before + 2, "%d ss VMAs with two threads (expected %d)", during, before + 2);
	check(t_ssp[0] && t_ssp[1], "threads run with shadow stacks (%#lx, %#lx)", t_ssp[0], t_ssp[1]);
	check(addr_in_ss_vma(main_ssp - 8, &s[0], &e[0]) == 1, "main SSP in an ss VMA");
	check(addr_in_ss_vma(t_ssp[0] - 8, &s[1], &e[1]) == 1, "thread 0 SSP in an ss VMA");
	check(addr_in_ss_vma(t_ssp[1] - 8, &s[2], &e[2]) == 1, "thread 1 SSP in an ss VMA");
	check(s[0] != s[1] && s[0] != s[2] && s[1] != s[2], "three different shadow stacks (%#lx %#lx %#lx)",
	      s[0], s[1], s[2]);
	/* glibc's clone child calls start_thread, which calls thread_fn: a few entries deep */
	check(e[1] - t_ssp[0] <= 64 && e[2] - t_ssp[1] <= 64,
	      "each thread started at the top of its own stack (%lu, %lu bytes below)", e[1] - t_ssp[0],
	      e[2] - t_ssp[1]);
	pthread_barrier_wait(&tbar);
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	/* the kernel unmaps a thread's shadow stack before it wakes the joiner */
	for (int i = 0; i < 100; i++) {
		after = count_ss_vmas(0);
		if (after == before)
			break;
		usleep(10000);
	}
	check(after == before, "ss VMAs back to %d after the threads exited (found %d)", before, after);
	check(addr_in_ss_vma(s[1], NULL, NULL) != 1 && addr_in_ss_vma(s[2], NULL, NULL) != 1,
	      "the threads' shadow stacks are unmapped");
	check(read_ssp() == main_ssp, "main SSP unchanged");
	finish();
}

/* ---------------------------------------------------------------- vfork */
static volatile unsigned long vfork_child_ssp, vfork_child_status;

/*
 * vfork by hand: the child shares the parent's memory and, with no new shadow stack,
 * its SSP. It must not call or return (that would change the shared stacks under the
 * parent), so its whole life is this asm block: record SSP and STATUS, _exit(0).
 */
__attribute__((noinline)) static long do_vfork(void)
{
	long pid;

	asm volatile(
		"mov %[nr_vfork], %%eax\n\t"
		"syscall\n\t"
		"test %%rax, %%rax\n\t"
		"jnz 1f\n\t"
		"xor %%rdx, %%rdx\n\t"
		"rdsspq %%rdx\n\t"
		"mov %%rdx, (%[slot])\n\t"
		"mov %[nr_prctl], %%eax\n\t"
		"mov %[status], %%edi\n\t"
		"mov %[st], %%rsi\n\t"
		"syscall\n\t"
		"mov %[nr_exit], %%eax\n\t"
		"xor %%edi, %%edi\n\t"
		"syscall\n\t"
		"1:"
		: "=&a"(pid)
		: [nr_vfork] "i"(SYS_vfork), [nr_prctl] "i"(NR_arch_prctl), [nr_exit] "i"(SYS_exit),
		  [status] "i"(ARCH_SHSTK_STATUS), [slot] "r"(&vfork_child_ssp), [st] "r"(&vfork_child_status)
		: "rcx", "r11", "rdx", "rdi", "rsi", "memory", "cc");
	return pid;
}

__attribute__((noreturn)) static void case_vfork(void)
{
	int before;

	require_hw();
	ENABLE_SHSTK_OR_SKIP();
	before = count_ss_vmas(0);
	vfork_child_ssp = 0;
	vfork_child_status = 99;
	unsigned long expect = read_ssp() - 8;	/* inside do_vfork: its return address is on top */
	long pid = do_vfork();
	if (!check(pid > 0, "vfork -> %ld", pid))
		finish();
	int st = wait_child(pid);
	exited_with(st, 0, "vfork child exited");
	check(vfork_child_ssp == expect, "child ran on the parent's shadow stack (SSP %#lx, parent %#lx)",
	      vfork_child_ssp, expect);
	check(vfork_child_status == F_SHSTK, "child STATUS %#lx (expected shstk)", vfork_child_status);
	check(count_ss_vmas(0) == before, "no shadow stack was allocated or freed (%d ss VMAs)", count_ss_vmas(0));
	check(recurse(50) == 50, "parent keeps working");
	finish();
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc < 2) {
		fprintf(stderr, "usage: %s cperr|signal|sigforge|pivot|wrss|fork|threads|vfork\n", argv[0]);
		exit(2);
	}
	const char *c = argv[1];

	if (!strcmp(c, "cperr"))
		case_cperr();
	if (!strcmp(c, "signal"))
		case_signal();
	if (!strcmp(c, "sigforge"))
		case_sigforge();
	if (!strcmp(c, "pivot"))
		case_pivot();
	if (!strcmp(c, "wrss"))
		case_wrss();
	if (!strcmp(c, "fork"))
		case_fork();
	if (!strcmp(c, "threads"))
		case_threads();
	if (!strcmp(c, "vfork"))
		case_vfork();
	fprintf(stderr, "%s: unknown case '%s'\n", argv[0], c);
	exit(2);
}
