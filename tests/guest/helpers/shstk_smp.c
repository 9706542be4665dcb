// SPDX-License-Identifier: GPL-2.0
/*
 * shstk_smp - shadow stacks on more than one CPU (issue 22, tests/guest/smp.bats).
 *
 *   shstk_smp [--dry] pinned|cow|migrate [SECS]
 *
 *   pinned   one thread pinned to each allowed CPU (sched_setaffinity). Each proves, on
 *            its CPU (sched_getcpu()), that its shadow stack is active there: RDSSP is
 *            non-zero and inside an `ss` VMA of /proc/self/smaps, and
 *            /proc/self/task/TID/status says `x86_Thread_features: ... shstk`; then it
 *            recurses DEPTH frames deep again and again, and at the bottom of every
 *            recursion reads its shadow stack: the DEPTH slots above SSP must all hold
 *            the recursive call's return address (sched_getcpu() is checked there too).
 *   cow      the pinned threads keep recursing on every CPU while the main thread forks
 *            again and again from the bottom of a call chain of a different depth each
 *            time (fork write-protects every shadow-stack page of the process, including
 *            the ones the other CPUs are pushing to). Before each fork the parent snapshots
 *            its shadow stack from SSP up: the chain's return addresses, a pattern known in
 *            advance (the marker). Each child checks: its SSP is the parent's, the slots
 *            equal the snapshot and the pattern, SSP is in an `ss` VMA, STATUS says shstk,
 *            a deep recursion of its own (writes below SSP: CoW breaks of shadow-stack
 *            pages) leaves the inherited slots intact; then it returns through the whole
 *            inherited chain (the CPU checks every return) and exits 0. Failures are exit
 *            codes 11-18 (below); a #CP makes the inherited SIGSEGV handler exit with
 *            100 + si_code (110 = SEGV_CPERR). The parent also re-checks its own slots
 *            after the child exists (the child's writes must not show through).
 *   migrate  a thread hops between the CPUs with sched_setaffinity in a loop (it checks
 *            that sched_getcpu() changed to the target every time and that its SSP is the
 *            same on every CPU) and recurses with the slot check after every hop; another
 *            thread maps, touches, mprotects and unmaps unrelated memory all along, so the
 *            hopping thread's CPU gets TLB shootdowns (the "TLB:" line of /proc/interrupts
 *            must grow).
 *
 * A fault in any thread (SIGSEGV, SIGBUS, SIGILL) prints a FAIL line with si_code and
 * exits 100 + si_code (150 + si_code for SIGILL).
 *
 * --dry: no shadow stack (for a guest without CET, e.g. QEMU): only the scheduling parts
 * run (pinning, forks, hops, shootdowns); every shadow-stack check is left out (printed).
 *
 * Environment:
 *   SHSTK_SMP_BREAK   a deliberately broken variant, to show that the checks can fail:
 *                       cpu      pinned: expect each thread on the next CPU, not its own
 *                       marker   cow: the child changes one inherited slot with WRSS
 *                                before comparing (must fail with exit 12)
 *                       ret      cow: the child changes an inherited return address with
 *                                WRSS after comparing, then returns through it (must #CP:
 *                                exit 110)
 *                       hop      migrate: expect the CPU not to change
 *   SHSTK_SMP_MIN     minimum iterations/forks/hops per case (default 20), whatever SECS
 *
 * Exit: 0 all checks passed, 1 some failed, 77 skipped (fewer than 2 CPUs, or no
 * shadow-stack hardware without --dry), 100+ a fault (above).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

#include "shstk.h"

#define MAXCPU 8
#define DEPTH 1200		/* frames per recursion: 9600 bytes of shadow stack, 3 pages */
#define CHAIN_MIN 40		/* the cow marker chain: CHAIN_MIN .. CHAIN_MIN+CHAIN_VAR-1 frames */
#define CHAIN_VAR 200

static bool dry;
static const char *breakv = "";
static int ncpu, cpus[MAXCPU];
static unsigned long min_iters = 20;
static atomic_int stop;
static volatile bool fault_quiet;	/* a fork child after the first few: no FAIL line */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static bool pin_to(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	return sched_setaffinity(0, sizeof(s), &s) == 0;
}

/* ---- faults: a FAIL line, then exit 100 + si_code (also in fork children) ---- */
static void fault(int sig, siginfo_t *si, void *uc)
{
	char b[160];
	int n;

	(void)uc;
	if (fault_quiet)
		_exit((sig == SIGILL ? 150 : 100) + si->si_code);
	n = snprintf(b, sizeof(b), "  FAIL pid %d tid %d: %s si_code %d%s at %p\n", (int)getpid(), (int)gettid_(),
		     sigabbrev_np(sig), si->si_code,
		     sig == SIGSEGV && si->si_code == SEGV_CPERR_CODE ? " (SEGV_CPERR: #CP)" : "", si->si_addr);
	if (write(2, b, n) < 0)
		_exit(99);
	_exit((sig == SIGILL ? 150 : 100) + si->si_code);
}

static void catch_faults(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fault;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);
}

/* ---- the recursion with its check at the bottom ---- */
struct bottom {
	unsigned long bad_slots;	/* slots above SSP that were not the recursive return address */
	int cpu;			/* sched_getcpu() at the bottom */
};

/*
 * At the bottom (n == 0), SSP points at deep(0)'s return address; it and the DEPTH - 1
 * slots above it were pushed by the recursive call below, so all hold the same address,
 * which is also deep(0)'s return address on the normal stack. Reading a shadow stack
 * with ordinary loads is allowed.
 */
__attribute__((noinline, noclone)) static int deep(int n, struct bottom *b)
{
	int r;

	if (n <= 0) {
		unsigned long ssp = read_ssp();
		unsigned long ra = (unsigned long)__builtin_return_address(0);

		b->cpu = sched_getcpu();
		if (ssp) {
			const volatile unsigned long *s = (const unsigned long *)ssp;

			for (int i = 0; i < DEPTH; i++)
				b->bad_slots += s[i] != ra;
		}
		return 0;
	}
	r = deep(n - 1, b) + 1;
	asm volatile("" : : : "memory");
	return r;
}

/* x86_Thread_features of a task names shstk (the value is a list of words) */
static bool task_says_shstk(pid_t tid)
{
	char path[64], v[128], *tok, *save;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
	if (!status_field(path, "x86_Thread_features", v, sizeof(v)))
		return false;
	for (tok = strtok_r(v, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save))
		if (!strcmp(tok, "shstk"))
			return true;
	return false;
}

/* ---- pinned recursing threads (cases pinned and cow) ---- */
struct worker {
	pthread_t th;
	int cpu;			/* pinned to */
	bool pinned;
	pid_t tid;
	int cpu_seen;			/* sched_getcpu() after pinning */
	unsigned long ssp;		/* SSP at the loop level, on that CPU */
	int ssp_in_ss;			/* addr_in_ss_vma(ssp) */
	bool status_shstk;
	unsigned long iters, wrong_cpu, ssp_moved, bad_slots, bad_depth;
	double secs;			/* run at least this long (pinned), or until stop (cow) */
};

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	int expect = w->cpu;
	double t0 = now();

	if (!strcmp(breakv, "cpu"))
		expect = cpus[0] == w->cpu ? cpus[1] : cpus[0];	/* broken: another CPU */
	w->tid = gettid_();
	w->pinned = pin_to(w->cpu);
	w->cpu_seen = sched_getcpu();
	w->ssp = read_ssp();
	w->ssp_in_ss = w->ssp ? addr_in_ss_vma(w->ssp, NULL, NULL) : -2;
	w->status_shstk = task_says_shstk(w->tid);
	for (;;) {
		struct bottom b = { 0, -1 };

		/* pinned: SECS; cow: until the forks are done (at least min_iters either way) */
		if (w->iters >= min_iters && (w->secs ? now() - t0 >= w->secs : atomic_load(&stop)))
			break;
		if (sched_getcpu() != expect)
			w->wrong_cpu++;
		if (deep(DEPTH, &b) != DEPTH)
			w->bad_depth++;
		w->bad_slots += b.bad_slots;
		if (b.cpu != expect)
			w->wrong_cpu++;
		if (read_ssp() != w->ssp)
			w->ssp_moved++;
		w->iters++;
	}
	return NULL;
}

static void start_workers(struct worker *w, double secs)
{
	for (int i = 0; i < ncpu; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].cpu = cpus[i];
		w[i].secs = secs;
		if (!check(!pthread_create(&w[i].th, NULL, worker_fn, &w[i]), "pthread_create (CPU %d)", cpus[i]))
			finish();
	}
}

static unsigned long check_workers(struct worker *w)
{
	unsigned long recursions = 0;

	for (int i = 0; i < ncpu; i++) {
		struct worker *x = &w[i];

		pthread_join(x->th, NULL);
		recursions += x->iters;
		check(x->pinned, "thread %d: sched_setaffinity to CPU %d", x->tid, x->cpu);
		check(!x->wrong_cpu, "thread %d pinned to CPU %d: sched_getcpu() said so in all %lu checks "
		      "(first said %d, %lu wrong)", x->tid, x->cpu, 2 * x->iters, x->cpu_seen, x->wrong_cpu);
		if (dry) {
			info("thread %d on CPU %d: %lu recursions of %d frames (dry: no shadow stack, SSP %#lx)",
			     x->tid, x->cpu, x->iters, DEPTH, x->ssp);
			continue;
		}
		check(x->ssp != 0 && x->ssp_in_ss == 1, "thread %d on CPU %d: SSP %#lx non-zero and in an ss VMA",
		      x->tid, x->cpu_seen, x->ssp);
		check(x->status_shstk, "thread %d on CPU %d: /proc/self/task/%d/status x86_Thread_features has shstk",
		      x->tid, x->cpu_seen, x->tid);
		check(!x->bad_slots && !x->bad_depth && !x->ssp_moved,
		      "thread %d on CPU %d: %lu recursions of %d frames, every slot the return address "
		      "(%lu bad slots, %lu bad depths, SSP moved %lu times)",
		      x->tid, x->cpu, x->iters, DEPTH, x->bad_slots, x->bad_depth, x->ssp_moved);
	}
	return recursions;
}

__attribute__((noinline)) static void case_pinned(double secs)
{
	struct worker w[MAXCPU];

	start_workers(w, secs);
	unsigned long n = check_workers(w);
	info("pinned: %d threads on CPUs %d..%d, %lu recursions of %d frames", ncpu, cpus[0], cpus[ncpu - 1], n,
	     DEPTH);
}

/* ---- cow: forks from the bottom of a known call chain ---- */
static unsigned long snap[CHAIN_MIN + CHAIN_VAR + 4];
static int chain_len;
static unsigned long rec_site, fork_site, top_site;
static unsigned long parent_bad_rounds, parent_bad_slots;
static unsigned long cow_shown;	/* failed children described so far */

/* exit codes of a child */
enum { C_SSP = 11, C_SNAP = 12, C_PATTERN = 13, C_VMA = 14, C_DEEP = 15, C_AFTER = 16, C_STATUS = 17,
       C_CHAIN = 18, C_WRSS = 19 };

static const char *child_why(int code)
{
	switch (code) {
	case C_SSP: return "SSP differs from the parent's at fork";
	case C_SNAP: return "inherited shadow-stack slots differ from the parent's snapshot";
	case C_PATTERN: return "inherited slots are not the call chain's return addresses";
	case C_VMA: return "SSP not in an ss VMA of /proc/self/smaps";
	case C_DEEP: return "own recursion: wrong slots or depth";
	case C_AFTER: return "inherited slots changed by the child's own recursion below them";
	case C_STATUS: return "ARCH_SHSTK_STATUS is not shstk";
	case C_CHAIN: return "returns through the inherited chain gave a wrong result";
	case C_WRSS: return "(broken variant) enabling WRSS failed";
	case 100 + SEGV_CPERR_CODE: return "SIGSEGV SEGV_CPERR: #CP";
	}
	if (code > 100 && code < 150)
		return "SIGSEGV/SIGBUS (100 + si_code)";
	if (code > 150)
		return "SIGILL (150 + si_code)";
	return "?";
}

static bool slots_match_pattern(const volatile unsigned long *s, int n)
{
	if (s[0] != fork_site)
		return false;
	for (int i = 1; i <= n; i++)
		if (s[i] != rec_site)
			return false;
	return s[n + 1] == top_site;
}

/* the child's side, still inside fork_point: exits on any failure */
static void child_checks(unsigned long ssp)
{
	const volatile unsigned long *s = (const unsigned long *)ssp;
	int n = chain_len + 2;
	struct bottom b = { 0, -1 };

	if (dry) {
		if (deep(DEPTH, &b) != DEPTH)
			_exit(C_DEEP);
		return;
	}
	if (!strcmp(breakv, "marker") || !strcmp(breakv, "ret")) {
		long r = arch_prctl_raw(ARCH_SHSTK_ENABLE, F_WRSS);

		if (r)
			_exit(C_WRSS);
		if (!strcmp(breakv, "marker"))	/* broken: change a slot before comparing */
			wrss((unsigned long *)&s[n / 2], s[n / 2] ^ 0x10);
	}
	for (int i = 0; i < n; i++)
		if (s[i] != snap[i])
			_exit(C_SNAP);
	if (!slots_match_pattern(s, chain_len))
		_exit(C_PATTERN);
	if (addr_in_ss_vma(ssp, NULL, NULL) != 1)
		_exit(C_VMA);
	if (deep(DEPTH, &b) != DEPTH || b.bad_slots)
		_exit(C_DEEP);
	for (int i = 0; i < n; i++)
		if (s[i] != snap[i])
			_exit(C_AFTER);
	if ((shstk_status() & F_SHSTK) != F_SHSTK)
		_exit(C_STATUS);
	if (!strcmp(breakv, "ret"))	/* broken: a return address of the chain, after the compare */
		wrss((unsigned long *)&s[2], s[2] ^ 0x10);
}

__attribute__((noinline, noclone)) static pid_t fork_point(unsigned long rec)
{
	unsigned long ssp = read_ssp();
	const volatile unsigned long *s = (const unsigned long *)ssp;
	int n = chain_len + 2;
	pid_t pid;

	rec_site = rec;
	fork_site = (unsigned long)__builtin_return_address(0);
	if (ssp)
		for (int i = 0; i < n; i++)
			snap[i] = s[i];
	pid = fork();
	if (pid == 0) {
		fault_quiet = cow_shown >= 5;	/* the parent tells only the first 5 too */
		if (read_ssp() != ssp)
			_exit(C_SSP);
		child_checks(ssp);
		return 0;	/* back through the inherited chain */
	}
	if (ssp) {
		/* the parent writes below SSP too (CoW break on its side), then its slots must be
		 * the snapshot still, and the snapshot the pattern */
		struct bottom b = { 0, -1 };

		if (deep(DEPTH, &b) != DEPTH || b.bad_slots)
			parent_bad_rounds++;
		for (int i = 0; i < n; i++)
			parent_bad_slots += s[i] != snap[i];
		if (!slots_match_pattern(snap, chain_len))
			parent_bad_rounds++;
	}
	return pid;
}

__attribute__((noinline, noclone)) static pid_t chain(int n)
{
	pid_t r;

	if (n == chain_len)
		top_site = (unsigned long)__builtin_return_address(0);
	if (n <= 0)
		r = fork_point((unsigned long)__builtin_return_address(0));
	else
		r = chain(n - 1);
	asm volatile("" : : : "memory");	/* no tail calls: each frame keeps its return */
	return r;
}

static unsigned long child_codes[256], child_signals, cow_children;

/* one fork; the child ends here after returning through the chain */
__attribute__((noinline, noclone)) static void cow_round(unsigned long i)
{
	pid_t pid;
	int st;

	/* chain(chain_len) is entered from here (top_site), chain_len frames below it from
	 * chain's recursive call (rec_site), fork_point from chain(0) (fork_site) */
	chain_len = CHAIN_MIN + (int)(i * 37 % CHAIN_VAR);
	pid = chain(chain_len);
	if (pid == 0)
		_exit(0);	/* the child: every check passed and every return held */
	if (pid < 0) {
		check(false, "fork %lu: %s", i, strerror(errno));
		finish();
	}
	st = wait_child(pid);
	cow_children++;
	if (WIFEXITED(st))
		child_codes[WEXITSTATUS(st)]++;
	else
		child_signals++;
	if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0) && cow_shown++ < 5)
		info("fork %lu (chain %d): child %s: %s", i, chain_len, wstr(st),
		     WIFEXITED(st) ? child_why(WEXITSTATUS(st)) : "killed by a signal");
}

__attribute__((noinline)) static void case_cow(double secs)
{
	struct worker w[MAXCPU];
	unsigned long i = 0, bad = 0;
	double t0;

	start_workers(w, 0);	/* recursing on every CPU until stop */
	t0 = now();
	while (i < min_iters || now() - t0 < secs)
		cow_round(i++);
	atomic_store(&stop, 1);
	unsigned long n = check_workers(w);
	for (int c = 1; c < 256; c++)
		bad += child_codes[c];
	check(cow_children == i && child_codes[0] == i,
	      "%lu forks: %lu children passed every check and returned through the inherited chain", i,
	      child_codes[0]);
	for (int c = 1; c < 256; c++)
		if (child_codes[c])
			check(false, "%lu children exited %d: %s", child_codes[c], c, child_why(c));
	check(!child_signals, "no child killed by a signal (%lu)", child_signals);
	check(!child_codes[100 + SEGV_CPERR_CODE], "no child died of SIGSEGV with si_code SEGV_CPERR (%d): %lu",
	      SEGV_CPERR_CODE, child_codes[100 + SEGV_CPERR_CODE]);
	if (!dry)
		check(!parent_bad_rounds && !parent_bad_slots,
		      "parent: its slots equal the snapshot after every fork and its own recursion "
		      "(%lu bad rounds, %lu bad slots)", parent_bad_rounds, parent_bad_slots);
	info("cow: %lu forks (chains of %d..%d frames) while %d threads recursed: %lu recursions of %d frames",
	     i, CHAIN_MIN, CHAIN_MIN + CHAIN_VAR - 1, ncpu, n, DEPTH);
	(void)bad;
}

/* ---- migrate: one thread hops, another causes TLB shootdowns ---- */
struct hopper {
	pthread_t th;
	pid_t tid;
	unsigned long hops, wrong_cpu, unchanged, ssp_moved, bad_slots, bad_depth, iters;
	unsigned long ssp;
	int ssp_in_ss;
	bool status_shstk, setaff_failed;
	double secs;
};

static void *hopper_fn(void *arg)
{
	struct hopper *h = arg;
	double t0 = now();
	int prev = sched_getcpu();

	h->tid = gettid_();
	h->ssp = read_ssp();
	h->ssp_in_ss = h->ssp ? addr_in_ss_vma(h->ssp, NULL, NULL) : -2;
	h->status_shstk = task_says_shstk(h->tid);
	for (unsigned long k = 0; h->iters < min_iters * 3 || now() - t0 < h->secs; k++) {
		int target = cpus[k % ncpu], c;
		struct bottom b = { 0, -1 };

		if (target == prev)	/* always a different CPU from the one we are on */
			target = cpus[(k + 1) % ncpu];
		if (!pin_to(target)) {
			h->setaff_failed = true;
			break;
		}
		c = sched_getcpu();
		if (!strcmp(breakv, "hop") ? c != prev : c != target)	/* broken: expect no move */
			h->wrong_cpu++;
		if (c != prev)
			h->hops++;
		else
			h->unchanged++;
		prev = c;
		if (read_ssp() != h->ssp)
			h->ssp_moved++;
		if (deep(DEPTH, &b) != DEPTH)
			h->bad_depth++;
		h->bad_slots += b.bad_slots;
		if (b.cpu != target)
			h->wrong_cpu++;
		h->iters++;
	}
	return NULL;
}

static unsigned long churn_ops;

static void *churn_fn(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		size_t len = 16 * PAGE;
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			continue;
		for (size_t o = 0; o < len; o += PAGE)
			p[o] = 1;
		mprotect(p, len / 2, PROT_READ);
		munmap(p + len / 2, len / 2);
		munmap(p, len / 2);
		churn_ops += 3;
	}
	return NULL;
}

/* sum of the "TLB:" line of /proc/interrupts (shootdowns received), per CPU */
static bool tlb_counts(unsigned long *per_cpu, int max)
{
	FILE *f = fopen("/proc/interrupts", "r");
	char line[4096];
	bool found = false;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *end;

		while (*p == ' ')
			p++;
		if (strncmp(p, "TLB:", 4))
			continue;
		p += 4;
		for (int i = 0; i < max; i++) {
			per_cpu[i] = strtoul(p, &end, 10);
			if (end == p)
				break;
			p = end;
		}
		found = true;
		break;
	}
	fclose(f);
	return found;
}

__attribute__((noinline)) static void case_migrate(double secs)
{
	struct hopper h;
	pthread_t churn;
	unsigned long tlb0[MAXCPU] = { 0 }, tlb1[MAXCPU] = { 0 }, dtotal = 0;
	bool have_tlb = tlb_counts(tlb0, MAXCPU);
	char per[128] = "";

	memset(&h, 0, sizeof(h));
	h.secs = secs;
	if (!check(!pthread_create(&churn, NULL, churn_fn, NULL), "pthread_create (churn)") ||
	    !check(!pthread_create(&h.th, NULL, hopper_fn, &h), "pthread_create (hopper)"))
		finish();
	pthread_join(h.th, NULL);
	atomic_store(&stop, 1);
	pthread_join(churn, NULL);
	check(!h.setaff_failed, "thread %d: sched_setaffinity to each CPU in turn", h.tid);
	check(!h.wrong_cpu && h.hops >= h.iters - 1 && h.iters >= min_iters * 3,
	      "thread %d: %lu hops in %lu iterations, sched_getcpu() the target CPU each time "
	      "(%lu wrong, %lu without a move)", h.tid, h.hops, h.iters, h.wrong_cpu, h.unchanged);
	if (!dry) {
		check(h.ssp && h.ssp_in_ss == 1 && h.status_shstk,
		      "thread %d: SSP %#lx in an ss VMA, x86_Thread_features has shstk", h.tid, h.ssp);
		check(!h.ssp_moved && !h.bad_slots && !h.bad_depth,
		      "thread %d: same SSP on every CPU, %lu recursions of %d frames with every slot right "
		      "(SSP moved %lu times, %lu bad slots, %lu bad depths)",
		      h.tid, h.iters, DEPTH, h.ssp_moved, h.bad_slots, h.bad_depth);
	}
	if (have_tlb && tlb_counts(tlb1, MAXCPU)) {
		for (int i = 0; i < ncpu && i < MAXCPU; i++) {
			size_t l = strlen(per);
			int c = cpus[i];

			snprintf(per + l, sizeof(per) - l, " cpu%d +%lu", c, tlb1[c] - tlb0[c]);
			dtotal += tlb1[c] - tlb0[c];
		}
		check(dtotal > 0, "TLB shootdowns received meanwhile:%s (%lu mmap/mprotect/munmap)", per, churn_ops);
	} else {
		info("no TLB line in /proc/interrupts: shootdowns not counted (%lu mmap/mprotect/munmap)", churn_ops);
	}
	info("migrate: %lu hops, %lu recursions of %d frames, %lu memory operations", h.hops, h.iters, DEPTH,
	     churn_ops);
}

int main(int argc, char **argv)
{
	cpu_set_t s;
	const char *c;
	double secs;
	int a = 1;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc > a && !strcmp(argv[a], "--dry")) {
		dry = true;
		a++;
	}
	if (argc <= a) {
		fprintf(stderr, "usage: %s [--dry] pinned|cow|migrate [SECS]\n", argv[0]);
		exit(2);
	}
	c = argv[a];
	if (strcmp(c, "pinned") && strcmp(c, "cow") && strcmp(c, "migrate")) {
		fprintf(stderr, "%s: unknown case '%s'\n", argv[0], c);
		exit(2);
	}
	secs = argc > a + 1 ? atof(argv[a + 1]) : 5;
	if (getenv("SHSTK_SMP_BREAK"))
		breakv = getenv("SHSTK_SMP_BREAK");
	if (getenv("SHSTK_SMP_MIN"))
		min_iters = strtoul(getenv("SHSTK_SMP_MIN"), NULL, 10);

	CPU_ZERO(&s);
	if (sched_getaffinity(0, sizeof(s), &s))
		skip("sched_getaffinity: %s", strerror(errno));
	for (int i = 0; i < CPU_SETSIZE && ncpu < MAXCPU; i++)
		if (CPU_ISSET(i, &s))
			cpus[ncpu++] = i;
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		skip("1 CPU online: the SMP cases need 2");
	if (ncpu < 2)
		skip("only CPU %d allowed (affinity) of %ld online: the SMP cases need 2", cpus[0],
		     sysconf(_SC_NPROCESSORS_ONLN));
	if (*breakv)
		info("SHSTK_SMP_BREAK=%s: a deliberately broken variant, checks must fail", breakv);
	catch_faults();
	if (dry) {
		info("--dry: no shadow stack; only the scheduling parts run on CPUs %d..%d", cpus[0],
		     cpus[ncpu - 1]);
	} else {
		require_hw();
		/* main never returns: finish() exits (shstk.h) */
		ENABLE_SHSTK_OR_SKIP();
		info("shadow stack enabled, SSP %#lx, %d CPUs allowed", read_ssp(), ncpu);
	}
	if (!strcmp(c, "pinned"))
		case_pinned(secs);
	else if (!strcmp(c, "cow"))
		case_cow(secs);
	else
		case_migrate(secs);
	finish();
}
