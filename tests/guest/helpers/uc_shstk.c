// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uc_shstk MODE [ARGS] - ucontext programs for libcetctl-preload.so
 * (tests/guest/preload-ucontext.bats under `cetctl run --shstk`, and
 * tests/host/preload-ucontext.bats without a shadow stack). Dynamic on
 * purpose: the preload library interposes glibc's functions.
 *
 *   pingpong N        main -> A -> B -> main, N rounds, recursion in each,
 *                     then A and B return through uc_link
 *   link              a context returns into a made one (uc_link chain of
 *                     two), which returns to main; eight arguments
 *   nested            a context makes and runs a context of its own
 *   longjmp           longjmp out of a context into main; QEMU's coroutine
 *                     pattern (sigsetjmp/siglongjmp between stacks)
 *   signal            swapcontext to a context and back inside a handler
 *   migrate           a context started by one thread ends in another
 *   churn N KIND      N contexts: KIND finish (run to their end),
 *                     unstarted (made, dropped), unmapped (left in the
 *                     middle, stack unmapped); prints the most "ss" VMAs seen
 *   enomem            no address space left when a context starts
 *
 * Each mode prints "MODE: ok ..." and exits 0, or "FAIL ..." and exits 1.
 * "ssp=same" means the SSP in main is what it was before (a shadow stack
 * is on), "ssp=zero" that there is none; "ss=a/b" counts the shadow-stack
 * VMAs in /proc/self/smaps while contexts live / after they ended.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <ucontext.h>
#include <unistd.h>

#define STACK	(64 * 1024)

static int fails;

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			printf("FAIL %s:%d: ", __func__, __LINE__);	\
			printf(__VA_ARGS__);				\
			printf("\n");					\
			fails++;					\
		}							\
	} while (0)

static unsigned long rdssp(void)
{
	unsigned long ssp = 0;

	__asm__ volatile("rdsspq %0" : "+r"(ssp));
	return ssp;
}

static const char *ssp_word(unsigned long before, unsigned long after)
{
	if (!before && !after)
		return "zero";
	return before == after ? "same" : "moved";
}

/* "ss" in the VmFlags of /proc/self/smaps */
static int ss_vmas(void)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "VmFlags:", 8) == 0 && strstr(line, " ss"))
			n++;
	fclose(f);
	return n;
}

static void *stack_alloc(void)
{
	void *p = malloc(STACK);

	if (!p) {
		perror("malloc");
		exit(2);
	}
	return p;
}

static void make(ucontext_t *uc, void *stack, ucontext_t *link)
{
	if (getcontext(uc) != 0) {
		perror("getcontext");
		exit(2);
	}
	uc->uc_stack.ss_sp = stack;
	uc->uc_stack.ss_size = STACK;
	uc->uc_link = link;
}

/* Calls and returns through several frames: each return is checked against
 * the shadow stack. */
static int __attribute__((noinline)) deep(int n)
{
	int r;

	if (n == 0)
		return 1;
	r = deep(n - 1) + 1;
	__asm__ volatile("" ::: "memory");	/* not a tail call */
	return r;
}

/* ---- pingpong ------------------------------------------------------------ */

static ucontext_t main_uc, a_uc, b_uc;
static char trace[64];
static size_t tn;
static int rounds, sum_a, sum_b;

static void note(char c)
{
	if (tn < sizeof(trace) - 1)
		trace[tn++] = c;
}

static void ctx_a(void)
{
	int i;

	for (i = 0; i < rounds; i++) {
		note('a');
		sum_a += deep(10);
		swapcontext(&a_uc, &b_uc);
	}
}

static void ctx_b(void)
{
	int i;

	for (i = 0; i < rounds; i++) {
		note('b');
		sum_b += deep(12);
		swapcontext(&b_uc, &main_uc);
	}
}

static int pingpong(int n)
{
	void *sa = stack_alloc(), *sb = stack_alloc();
	unsigned long before = rdssp(), after;
	int i, during, end;

	rounds = n;
	make(&a_uc, sa, &main_uc);
	makecontext(&a_uc, ctx_a, 0);
	make(&b_uc, sb, &main_uc);
	makecontext(&b_uc, ctx_b, 0);
	for (i = 0; i < n; i++)
		swapcontext(&main_uc, &a_uc);
	during = ss_vmas();
	/* both are inside their loop's last swapcontext: let them return */
	swapcontext(&main_uc, &a_uc);	/* A returns into main (uc_link) */
	swapcontext(&main_uc, &b_uc);	/* B returns into main */
	end = ss_vmas();
	after = rdssp();
	CHECK(sum_a == n * 11 && sum_b == n * 13, "sums %d %d", sum_a, sum_b);
	for (i = 0; i < 2 * n && i < (int)tn; i++)
		CHECK(trace[i] == "ab"[i % 2], "trace %s", trace);
	CHECK(deep(30) == 31, "deep after");
	printf("pingpong: ok rounds=%d trace=%.8s ssp=%s ss=%d/%d\n", n, trace,
	       ssp_word(before, after), during, end);
	free(sa);
	free(sb);
	return fails;
}

/* ---- link: a chain of two made contexts, eight arguments ------------------- */

static ucontext_t l1_uc, l2_uc;
static long got[8];
static int l2_ran;

static void ctx_args(long a, long b, long c, long d, long e, long f, long g, long h)
{
	got[0] = a; got[1] = b; got[2] = c; got[3] = d;
	got[4] = e; got[5] = f; got[6] = g; got[7] = h;
	deep(5);
}

static void ctx_second(void)
{
	l2_ran = deep(7);
}

static int link_chain(void)
{
	void *s1 = stack_alloc(), *s2 = stack_alloc();
	unsigned long before = rdssp(), after;
	volatile int back = 0;
	int i, end;

	make(&l2_uc, s2, &main_uc);
	makecontext(&l2_uc, ctx_second, 0);
	make(&l1_uc, s1, &l2_uc);
	makecontext(&l1_uc, (void (*)(void))ctx_args, 8, 11L, 22L, 33L, 44L, 55L, 66L, 77L, 88L);
	getcontext(&main_uc);
	if (!back) {
		back = 1;
		setcontext(&l1_uc);
		CHECK(0, "setcontext returned");
	}
	after = rdssp();
	end = ss_vmas();
	for (i = 0; i < 8; i++)
		CHECK(got[i] == 11L * (i + 1), "argument %d = %ld", i + 1, got[i]);
	CHECK(l2_ran == 8, "second context ran %d", l2_ran);
	printf("link: ok args=8 chain=2 ssp=%s ss=%d\n", ssp_word(before, after), end);
	free(s1);
	free(s2);
	return fails;
}

/* ---- nested: a context runs a context of its own --------------------------- */

static ucontext_t outer_uc, inner_uc, outer_saved;
static int inner_ran, outer_after;

static void ctx_inner(void)
{
	inner_ran = deep(9);
}

static void ctx_outer(void)
{
	void *s = stack_alloc();

	make(&inner_uc, s, &outer_saved);
	makecontext(&inner_uc, ctx_inner, 0);
	swapcontext(&outer_saved, &inner_uc);	/* inner returns here */
	outer_after = deep(3);
	free(s);
}

static int nested(void)
{
	void *s = stack_alloc();
	unsigned long before = rdssp(), after;

	make(&outer_uc, s, &main_uc);
	makecontext(&outer_uc, ctx_outer, 0);
	swapcontext(&main_uc, &outer_uc);
	after = rdssp();
	CHECK(inner_ran == 10 && outer_after == 4, "inner %d outer %d", inner_ran, outer_after);
	printf("nested: ok ssp=%s ss=%d\n", ssp_word(before, after), ss_vmas());
	free(s);
	return fails;
}

/* ---- longjmp: out of a context into main; QEMU's coroutines ----------------- */

static jmp_buf out;
static ucontext_t lj_uc;

static void __attribute__((noinline)) jump_out(int depth)
{
	if (depth < 0)
		return;
	if (depth > 0) {
		jump_out(depth - 1);
		__asm__ volatile("" ::: "memory");
		return;
	}
	longjmp(out, 7);
}

static void ctx_jumper(void)
{
	jump_out(15);
}

/* A coroutine as QEMU's coroutine-ucontext.c does it: the first switch by
 * swapcontext, every later one by sigsetjmp/siglongjmp. */
struct coro {
	sigjmp_buf env;
	sigjmp_buf *caller;
	void *stack;
	int count;
};
static struct coro *starting;

static void __attribute__((noinline)) coro_yield(struct coro *co)
{
	if (!sigsetjmp(co->env, 0))
		siglongjmp(*co->caller, 1);
}

static void coro_entry(void)
{
	struct coro *co = starting;

	if (!sigsetjmp(co->env, 0))
		siglongjmp(*co->caller, 1);	/* back to coro_new */
	for (;;) {
		co->count += deep(4);
		coro_yield(co);
	}
}

static void coro_new(struct coro *co, sigjmp_buf *caller)
{
	ucontext_t uc, old;

	co->stack = stack_alloc();
	co->caller = caller;
	make(&uc, co->stack, NULL);
	makecontext(&uc, coro_entry, 0);
	starting = co;
	if (!sigsetjmp(*caller, 0))
		swapcontext(&old, &uc);
}

static void __attribute__((noinline)) coro_enter(struct coro *co, sigjmp_buf *me)
{
	co->caller = me;
	if (!sigsetjmp(*me, 0))
		siglongjmp(co->env, 1);
}

static int jumps(void)
{
	void *s = stack_alloc();
	unsigned long before = rdssp(), after;
	static struct coro co[3];
	static sigjmp_buf self;
	volatile int r;
	int i, k;

	make(&lj_uc, s, &main_uc);
	makecontext(&lj_uc, ctx_jumper, 0);
	r = setjmp(out);
	if (r == 0) {
		swapcontext(&main_uc, &lj_uc);
		CHECK(0, "the context came back instead of jumping");
	}
	CHECK(r == 7, "setjmp returned %d", r);
	CHECK(deep(20) == 21, "deep after the jump");
	for (k = 0; k < 3; k++)
		coro_new(&co[k], &self);
	for (i = 0; i < 50; i++)
		for (k = 0; k < 3; k++)
			coro_enter(&co[k], &self);
	after = rdssp();
	for (k = 0; k < 3; k++)
		CHECK(co[k].count == 50 * 5, "coroutine %d counted %d", k, co[k].count);
	printf("longjmp: ok out-of-context=1 coroutines=3x50 ssp=%s ss=%d\n",
	       ssp_word(before, after), ss_vmas());
	free(s);
	return fails;
}

/* ---- signal: swapcontext inside a handler ----------------------------------- */

static ucontext_t h_uc, sig_uc;
static volatile int in_ctx, handler_back;

static void ctx_from_handler(void)
{
	for (;;) {
		in_ctx += deep(6);
		swapcontext(&sig_uc, &h_uc);
	}
}

static void on_usr1(int sig)
{
	(void)sig;
	swapcontext(&h_uc, &sig_uc);
	handler_back++;
}

static int in_signal(void)
{
	void *s = stack_alloc();
	unsigned long before = rdssp(), after;
	int i;

	make(&sig_uc, s, NULL);
	makecontext(&sig_uc, ctx_from_handler, 0);
	signal(SIGUSR1, on_usr1);
	for (i = 0; i < 5; i++)
		raise(SIGUSR1);
	after = rdssp();
	CHECK(in_ctx == 35 && handler_back == 5, "context %d handler %d", in_ctx, handler_back);
	printf("signal: ok swaps-in-handler=5 ssp=%s\n", ssp_word(before, after));
	return fails;
}

/* ---- migrate: started by main, ended by a thread ------------------------------ */

static ucontext_t mig_uc, t_uc;
static int mig_parts;

static void ctx_migrant(void)
{
	mig_parts += deep(2);
	swapcontext(&mig_uc, &main_uc);	/* park; a thread resumes us */
	mig_parts += deep(4);
}

static void *thread_resume(void *arg)
{
	unsigned long before = rdssp();

	(void)arg;
	swapcontext(&t_uc, &mig_uc);	/* the context ends into t_uc */
	return (void *)(long)(before == rdssp());
}

static int migrate(void)
{
	void *s = stack_alloc();
	pthread_t t;
	void *same;

	make(&mig_uc, s, &t_uc);
	makecontext(&mig_uc, ctx_migrant, 0);
	swapcontext(&main_uc, &mig_uc);
	pthread_create(&t, NULL, thread_resume, NULL);
	pthread_join(t, &same);
	CHECK(mig_parts == 8, "parts %d", mig_parts);
	CHECK(same, "the thread's SSP moved");
	printf("migrate: ok ss=%d\n", ss_vmas());
	return fails;
}

/* ---- churn: many contexts, the shadow stacks they leave ----------------------- */

static ucontext_t churn_uc;

static void ctx_short(void)
{
	deep(3);
}

static void ctx_park(void)
{
	deep(3);
	swapcontext(&churn_uc, &main_uc);	/* never resumed */
}

static int churn(long n, const char *kind)
{
	long i;
	int most = 0, v;

	for (i = 0; i < n; i++) {
		void *s;

		if (strcmp(kind, "unmapped") == 0) {
			s = mmap(NULL, STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			CHECK(s != MAP_FAILED, "mmap");
			if (s == MAP_FAILED)
				break;
		} else {
			s = stack_alloc();
		}
		make(&churn_uc, s, &main_uc);
		if (strcmp(kind, "finish") == 0) {
			makecontext(&churn_uc, ctx_short, 0);
			swapcontext(&main_uc, &churn_uc);
			free(s);
		} else if (strcmp(kind, "unstarted") == 0) {
			makecontext(&churn_uc, ctx_short, 0);
			free(s);
		} else if (strcmp(kind, "unmapped") == 0) {
			makecontext(&churn_uc, ctx_park, 0);
			swapcontext(&main_uc, &churn_uc);
			munmap(s, STACK);
		} else {
			printf("FAIL unknown kind %s\n", kind);
			return 1;
		}
		if (i % 1000 == 999 && (v = ss_vmas()) > most)
			most = v;
	}
	if ((v = ss_vmas()) > most)
		most = v;
	printf("churn: ok %ld %s contexts, most ss VMAs=%d, at the end=%d\n", i, kind, most, ss_vmas());
	return fails;
}

/* ---- enomem -------------------------------------------------------------------- */

static int enomem(void)
{
	void *s = stack_alloc();
	struct rlimit rl;
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long pages;

	if (!f || fscanf(f, "%lu", &pages) != 1) {
		printf("FAIL statm\n");
		return 1;
	}
	fclose(f);
	make(&churn_uc, s, &main_uc);
	makecontext(&churn_uc, ctx_short, 0);
	printf("enomem: switching\n");	/* stdout's buffer exists from here */
	f = fopen("/proc/self/statm", "r");
	if (!f || fscanf(f, "%lu", &pages) != 1)
		return 1;
	fclose(f);
	/* not one page more of address space */
	getrlimit(RLIMIT_AS, &rl);
	rl.rlim_cur = pages * 4096;
	setrlimit(RLIMIT_AS, &rl);
	swapcontext(&main_uc, &churn_uc);
	printf("enomem: the context ran (no shadow stack to map?)\n");
	return 3;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(m, "pingpong") == 0)
		return pingpong(argc > 2 ? atoi(argv[2]) : 5) ? 1 : 0;
	if (strcmp(m, "link") == 0)
		return link_chain() ? 1 : 0;
	if (strcmp(m, "nested") == 0)
		return nested() ? 1 : 0;
	if (strcmp(m, "longjmp") == 0)
		return jumps() ? 1 : 0;
	if (strcmp(m, "signal") == 0)
		return in_signal() ? 1 : 0;
	if (strcmp(m, "migrate") == 0)
		return migrate() ? 1 : 0;
	if (strcmp(m, "churn") == 0 && argc > 3)
		return churn(atol(argv[2]), argv[3]) ? 1 : 0;
	if (strcmp(m, "enomem") == 0)
		return enomem();
	fprintf(stderr, "usage: uc_shstk pingpong N|link|nested|longjmp|signal|migrate|churn N KIND|enomem\n");
	return 2;
}
