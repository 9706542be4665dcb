// SPDX-License-Identifier: GPL-2.0
/*
 * shstk_fuzz - a seeded, time-bounded fuzzer of the user shadow-stack interfaces
 * (issue 11, tests/guest/fuzz-shstk.bats; needs shadow-stack hardware: the Bochs tier).
 *
 *   shstk_fuzz [SECS [OPS]]
 *   shstk_fuzz selftest      the belief check on fixed layouts: it must pass on the ones
 *                            the kernel may rightly produce, fail on wrong ones
 *
 * Environment (the arguments win):
 *   SHSTK_FUZZ_SEED   PRNG seed (default: from the clock; always printed: rerun with it)
 *   SHSTK_FUZZ_SECS   time budget in seconds (default 120)
 *   SHSTK_FUZZ_OPS    operation budget (default 100000)
 *   SHSTK_FUZZ_HANG   seconds after which a child counts as hung (default 60)
 *   SHSTK_FUZZ_THP    1 (default): switch /sys/kernel/mm/transparent_hugepage/enabled
 *                     between always/madvise/never from round to round (restored at the end)
 *   SHSTK_FUZZ_THREADS  extra threads per phase, 0..3 (default 3)
 *   SHSTK_FUZZ_INJECT the report's own test (fuzz-shstk.bats): worker-abort makes the
 *                     worker abort() in its first op_touch (the run must fail, naming the
 *                     worker, its threads' operations and its trail); child-abort makes
 *                     every sigreturn child abort() (named, not a failure)
 *
 * Structure. The supervisor (this process, no shadow stack) runs rounds until the time
 * or the operation budget is spent. Each round forks a worker with its own seed; the
 * worker enables its shadow stack and WRSS (inline arch_prctl, and it never returns from
 * there), then runs phases: in each phase 1-3 threads and the main thread draw random
 * operations on a pool of shadow stacks it created with map_shadow_stack, and on
 * children it forks. After each phase, with every thread joined, it compares the pages
 * of its `ss` VMAs in /proc/self/smaps with the pages it believes it has mapped (plus the
 * main thread's own shadow stack), in itself and in a forked child.
 *
 * Operations: map_shadow_stack (random addresses, sizes, flags), munmap / mprotect /
 * madvise (DONTNEED FREE WIPEONFORK MERGEABLE HUGEPAGE NOHUGEPAGE PAGEOUT COLD COLLAPSE
 * and random advice) / mremap (shrink, grow, move, DONTUNMAP) / mlock / mmap MAP_FIXED
 * over / userfaultfd registration / process_vm_writev / /proc/self/mem on pool shadow
 * stacks; shadow-stack writes (WRSS) and reads; kernel writes into shadow stacks (read(2),
 * ARCH_SHSTK_STATUS, PTRACE_GETREGSET, clock_gettime); and in forked children:
 * arch_prctl 0x5000-0x5006 sequences with random arguments, a tracee driven by a tracer
 * with PTRACE_GETREGSET/SETREGSET (every note type, many iov sizes, NT_X86_SHSTK with
 * random SSPs), PTRACE_ARCH_PRCTL, PEEK/POKE and PTRACE_CONT; signal handlers that
 * corrupt their restore token, SSP or context before rt_sigreturn, a raw rt_sigreturn
 * on random data, signal delivery onto an alternate stack that is a shadow stack;
 * short-lived threads, forks, vforks.
 *
 * Children are expected to die of SIGSEGV/SIGBUS/SIGILL/SIGTRAP/SIGKILL (#CP, bad frames,
 * random registers); the bats suite declares those kernel log lines. Failures (exit 1):
 *   - a normal store into a live shadow-stack page succeeded (in a child that first
 *     checked in smaps that the page is in an `ss` VMA), or process_vm_writev or a kernel
 *     write (read(2), ARCH_SHSTK_STATUS, PTRACE_GETREGSET) changed a shadow-stack page;
 *   - userfaultfd registration on a shadow stack succeeded;
 *   - the ss pages in smaps differ from the fuzzer's belief (pool pages plus the own
 *     shadow stack as it was enabled, whatever VMAs the kernel merged or split them
 *     into), in a quiescent process; after a call that failed but may unmap part of
 *     its range first (a shrinking mremap() move, mmap MAP_FIXED), a believed page that
 *     is neither unmapped nor a shadow-stack page;
 *   - a child or worker did not finish in SHSTK_FUZZ_HANG s: its tasks' state, wchan
 *     and kernel stack are printed, and the fuzzer stops;
 *   - a worker died of a signal or exited other than 0 (it only does what is safe for
 *     itself) or ARCH_SHSTK_STATUS of the worker changed;
 *   - the supervisor itself dying (bats sees the status).
 * Kernel WARN/BUG/oops lines are the kernel-log check's business (vm/parse-results.py).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <malloc.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <time.h>

#include "shstk.h"

#ifndef MADV_COLD
#define MADV_COLD 20
#endif
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif
#ifndef MLOCK_ONFAULT
#define MLOCK_ONFAULT 1
#endif

/* ------------------------------------------------------------------ PRNG */

struct rng {
	uint64_t s;
};

static uint64_t rnext(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static unsigned long rn(struct rng *r, unsigned long n)
{
	return n ? rnext(r) % n : 0;
}

#define PICK(r, arr) ((arr)[rn((r), sizeof(arr) / sizeof((arr)[0]))])

/* ------------------------------------------------------------- reporting */

static int nfails;		/* failures (atomic; shared through the worker's exit code) */
static long nops_local;
static long *nops_p = &nops_local;	/* operations done; shared with the supervisor */
#define nops (*nops_p)
static double deadline;		/* CLOCK_MONOTONIC seconds */
static long ops_budget;
static double hang_secs = 60;
static int max_threads = 3;	/* extra threads per phase: 0..max_threads */
static enum { INJECT_NONE, INJECT_WORKER_ABORT, INJECT_CHILD_ABORT } inject;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* write(2) only: also usable in forked children of a threaded process */
__attribute__((format(printf, 1, 2)))
static void say(const char *fmt, ...)
{
	char buf[600];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(1, buf, n) < 0)
		_exit(98);
}

__attribute__((format(printf, 1, 2)))
static void bad(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (__atomic_fetch_add(&nfails, 1, __ATOMIC_RELAXED) < 30)
		say("  FAIL [%d] %s", (int)getpid(), buf);
}

/* Print every task's state, wchan and kernel stack: what a hung child was doing. */
static void report_tasks(pid_t pid)
{
	char path[512], buf[4096];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d) {
		say("  info pid %d: no /proc entry (%s)", (int)pid, strerror(errno));
		return;
	}
	while ((de = readdir(d))) {
		static const char *const files[] = { "stat", "wchan", "stack", "syscall" };

		if (de->d_name[0] == '.')
			continue;
		for (unsigned i = 0; i < 4; i++) {
			int fd;
			ssize_t n;

			snprintf(path, sizeof(path), "/proc/%d/task/%s/%s", (int)pid, de->d_name, files[i]);
			fd = open(path, O_RDONLY);
			if (fd < 0)
				continue;
			n = read(fd, buf, sizeof(buf) - 1);
			close(fd);
			if (n <= 0)
				continue;
			buf[n] = 0;
			while (n && buf[n - 1] == '\n')
				buf[--n] = 0;
			say("  info hung %d/%s %s: %s", (int)pid, de->d_name, files[i], buf);
		}
	}
	closedir(d);
}

/*
 * Wait for pid (any state change that `flags` asks for) at most hang_secs. Returns 1 and
 * *st on a change, 0 on a hang (after reporting it and counting a failure).
 */
static int wait_bounded(pid_t pid, int *st, int flags, const char *what)
{
	double end = now() + hang_secs;
	struct timespec ts = { 0, 2000000 };

	for (;;) {
		pid_t r = waitpid(pid, st, WNOHANG | __WALL | flags);

		if (r == pid)
			return 1;
		if (r < 0 && errno != EINTR) {
			bad("waitpid(%d) for %s: %s", (int)pid, what, strerror(errno));
			return 1;
		}
		if (now() > end)
			break;
		nanosleep(&ts, NULL);
		if (ts.tv_nsec < 50000000)
			ts.tv_nsec *= 2;
	}
	bad("HANG: %s (pid %d) did not finish within %.0f s", what, (int)pid, hang_secs);
	report_tasks(pid);
	return 0;
}

/* A child we no longer need: kill it and reap it, bounded. 0 if it hung. */
static int reap(pid_t pid, const char *what, int *st)
{
	kill(pid, SIGKILL);
	return wait_bounded(pid, st, 0, what);
}

/* A child that must end by itself (exit or any signal). */
static int wait_end(pid_t pid, const char *what, int *st)
{
	if (!wait_bounded(pid, st, 0, what)) {
		kill(pid, SIGKILL);
		return 0;
	}
	return 1;
}

/* ------------------------------------------------------------ the pool */

#define MAXENT 24
#define ENT_MAX_PAGES 2048		/* 8 MiB */
#define POOL_MAX_PAGES 6144		/* what the pool may hold at once (24 MiB) */

struct ent {
	bool used;
	bool safe;			/* never mprotected: readable and shadow-stack writable */
	unsigned long base;
	unsigned long npages;
	uint64_t bits[ENT_MAX_PAGES / 64];	/* pages believed mapped as shadow stack */
};

static struct ent pool[MAXENT];
/*
 * The process's own shadow stack as the kernel made it when the worker enabled shadow
 * stacks. A pool shadow stack mapped right next to it merges with it (same flags), so
 * the VMA that holds the SSP may be larger: the belief check uses this range, not that
 * VMA. No operation touches it (they only act on believed pool pages).
 */
static unsigned long own_s0, own_e0;
/*
 * The pool lock also orders the worker's address space: every change of it that a
 * thread of the worker makes happens under the lock: the pool operations, the
 * short-lived threads' own shadow stacks, and pthread_create() (glibc maps the thread's
 * stack, the kernel its shadow stack, both top-down into the highest free gap; malloc
 * has one arena, see worker()). Else a hole an operation leaves for a moment, e.g.
 * the reservation a failed MREMAP_FIXED unmapped before failing, or the tail a failed
 * shrinking move unmapped, is the highest free gap, another thread's new mapping lands
 * in it, and the operation's own clean-up (munmap of the reservation) or bookkeeping
 * (forget_unmapped() reading smaps) takes that mapping for its own: a believed page that
 * is unmapped or someone else's, into which later operations write.
 */
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static int in_child;			/* forked child: no locking (one thread) */

static void plock(void)
{
	if (!in_child)
		pthread_mutex_lock(&pool_lock);
}

static void punlock(void)
{
	if (!in_child)
		pthread_mutex_unlock(&pool_lock);
}

static bool pg(const struct ent *e, unsigned long i)
{
	return e->bits[i / 64] >> (i % 64) & 1;
}

static void pg_set(struct ent *e, unsigned long i, bool v)
{
	if (v)
		e->bits[i / 64] |= 1ULL << (i % 64);
	else
		e->bits[i / 64] &= ~(1ULL << (i % 64));
}

static unsigned long ent_count(const struct ent *e)
{
	unsigned long c = 0;

	for (unsigned long i = 0; i < e->npages; i++)
		c += pg(e, i);
	return c;
}

static unsigned long pool_pages(void)
{
	unsigned long c = 0;

	for (int i = 0; i < MAXENT; i++)
		if (pool[i].used)
			c += ent_count(&pool[i]);
	return c;
}

static void ent_fill(struct ent *e, unsigned long base, unsigned long npages)
{
	memset(e, 0, sizeof(*e));
	e->used = true;
	e->safe = true;
	e->base = base;
	e->npages = npages;
	for (unsigned long i = 0; i < npages; i++)
		pg_set(e, i, true);
}

static void ent_clear_range(struct ent *e, unsigned long first, unsigned long n)
{
	for (unsigned long i = first; i < first + n && i < e->npages; i++)
		pg_set(e, i, false);
	if (!ent_count(e))
		e->used = false;
}

/* Under the lock: a random used entry, or NULL. */
static struct ent *pick_ent(struct rng *r)
{
	int start = rn(r, MAXENT);

	for (int k = 0; k < MAXENT; k++) {
		struct ent *e = &pool[(start + k) % MAXENT];

		if (e->used)
			return e;
	}
	return NULL;
}

/* A random mapped page of e (index), or -1. */
static long pick_page(struct rng *r, const struct ent *e)
{
	unsigned long start = rn(r, e->npages);

	for (unsigned long k = 0; k < e->npages; k++) {
		unsigned long i = (start + k) % e->npages;

		if (pg(e, i))
			return i;
	}
	return -1;
}

/*
 * A random page range inside e, [*first, *first + *n), made only of pages believed
 * mapped (the rest of the entry's span may hold anyone's mappings by now): often the
 * whole run of mapped pages around a random one, sometimes a 2 MiB-shaped piece.
 * *n is 0 when e has no mapped page.
 */
static void pick_range(struct rng *r, const struct ent *e, unsigned long *first, unsigned long *n)
{
	long p = pick_page(r, e);
	unsigned long lo, hi;

	*first = 0;
	*n = 0;
	if (p < 0)
		return;
	lo = hi = p;
	while (lo > 0 && pg(e, lo - 1))
		lo--;
	while (hi + 1 < e->npages && pg(e, hi + 1))
		hi++;
	if (rn(r, 3) == 0) {
		*first = lo;
		*n = hi - lo + 1;
	} else if (rn(r, 4) == 0 && hi - lo + 1 >= 512) {
		*first = lo;
		*n = 512;
	} else {
		*first = lo + rn(r, hi - lo + 1);
		*n = 1 + rn(r, hi - *first + 1);
	}
}

/*
 * What the worker did last, for the report of a failed round: a ring of its last
 * operations (each with the thread that did it and, for children, their end) and what
 * each of its threads is doing now. In the worker it lives in a page the supervisor shares
 * (MAP_SHARED, madvise DONTFORK in the worker: its children never see it), so a worker
 * that dies of a signal (glibc's abort after "stack smashing detected", SIGKILL after a
 * hang) is explained by the supervisor from the console log alone. Elsewhere (the
 * supervisor, a forked child, the selftest) it is private memory.
 */
#define TRAIL 64
#define NSLOT 4				/* the worker's main thread and its 0..3 op threads */
struct diag {
	unsigned trail_n;
	char trail[TRAIL][128];
	struct {
		int tid;
		int op;			/* index into ops[], -1: between operations, -2: done */
		long n;			/* operations this thread started */
	} slot[NSLOT];
	int aborts;			/* sacrificial children that died of SIGABRT */
};
static struct diag diag_private;
static struct diag *dg = &diag_private;
static struct diag *wdiag;		/* the page shared by the supervisor and its worker */
static __thread int my_tid;

static int tid(void)
{
	if (!my_tid)
		my_tid = gettid();
	return my_tid;
}

__attribute__((format(printf, 1, 2)))
static void note(const char *fmt, ...)
{
	unsigned i = __atomic_fetch_add(&dg->trail_n, 1, __ATOMIC_RELAXED) % TRAIL;
	char *t = dg->trail[i];
	int k = snprintf(t, sizeof(dg->trail[i]), "%d ", tid());
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t + k, sizeof(dg->trail[i]) - k, fmt, ap);
	va_end(ap);
}

static void print_trail(const struct diag *d, const char *whose)
{
	for (unsigned i = 0; i < TRAIL; i++) {
		unsigned j = (d->trail_n + i) % TRAIL;

		if (d->trail[j][0])
			say("  info trail%s: %s", whose, d->trail[j]);
	}
}

/* Worker only: an unexpected SIGSEGV/SIGBUS. Report and exit 4 (not async-safe: it ends). */
static void worker_fault(int sig, siginfo_t *si, void *uc)
{
	unsigned long a = (unsigned long)si->si_addr, s = 0, e = 0;
	int in_ss = addr_in_ss_vma(a, &s, &e);

	(void)uc;
	say("  FAIL %s %d/%d: %s si_code %d at %#lx (VMA %#lx-%#lx, ss=%d)", in_child ? "fork child" : "worker",
	    (int)getpid(), (int)gettid(), sigabbrev_np(sig), si->si_code, a, s, e, in_ss);
	for (int k = 0; k < MAXENT; k++) {
		const struct ent *en = &pool[k];

		if (en->used && a >= en->base && a < en->base + en->npages * PAGE)
			say("  info pool entry %d: %#lx+%lu pages, page %lu believed %d, safe %d", k,
			    en->base, en->npages, (a - en->base) / PAGE, pg(en, (a - en->base) / PAGE), en->safe);
	}
	/* the trail: the supervisor prints the worker's (a child has none) */
	_exit(4);
}

static void catch_worker_faults(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = worker_fault;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
}

/* ---------------------------------------------------- shadow-stack access */

static inline __attribute__((always_inline)) unsigned long shstk_load(unsigned long *p)
{
	return *(volatile unsigned long *)p;
}

/* A VMA of /proc/self/smaps with its VmFlags, for the belief check and its report. */
struct vma_fl {
	unsigned long start, end;
	bool ss;
	char flags[128];
};

static int read_vmas_fl(struct vma_fl *v, int max)
{
	char line[1024];
	FILE *f = fopen("/proc/self/smaps", "r");
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e;

		if (sscanf(line, "%lx-%lx ", &s, &e) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			if (n == max)
				break;
			v[n] = (struct vma_fl){ .start = s, .end = e };
			n++;
		} else if (n && !strncmp(line, "VmFlags:", 8)) {
			size_t k = strcspn(line + 9, "\n");
			char *tok, *save;

			if (k >= sizeof(v[n - 1].flags))
				k = sizeof(v[n - 1].flags) - 1;
			memcpy(v[n - 1].flags, line + 9, k);
			v[n - 1].flags[k] = 0;
			for (tok = strtok_r(line + 8, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
				if (!strcmp(tok, "ss"))
					v[n - 1].ss = true;
		}
	}
	fclose(f);
	return n;
}

/* smaps lists the VMAs in address order: the index of the one holding a, or -1. */
static int vma_find(const struct vma_fl *v, int n, unsigned long a)
{
	int lo = 0, hi = n - 1;

	while (lo <= hi) {
		int m = (lo + hi) / 2;

		if (a < v[m].start)
			hi = m - 1;
		else if (a >= v[m].end)
			lo = m + 1;
		else
			return m;
	}
	return -1;
}

/* Where a page is, for a report: "unmapped" or its VMA and flags. */
static const char *where_is(const struct vma_fl *v, int n, unsigned long a, char *buf, size_t sz)
{
	int i = vma_find(v, n, a);

	if (i < 0)
		snprintf(buf, sz, "unmapped");
	else
		snprintf(buf, sz, "in VMA %#lx-%#lx [%s]", v[i].start, v[i].end, v[i].flags);
	return buf;
}

/* ------------------------------------------------------------ operations */

static const unsigned long sizes_pages[] = { 0, 1, 1, 2, 3, 4, 8, 16, 64, 511, 512, 513, 1024, 2048 };

static void op_map(struct rng *r)
{
	unsigned long size, addr = 0, flags;
	long ret;

	switch (rn(r, 6)) {
	case 0:
		size = PICK(r, sizes_pages) * PAGE - rn(r, 2) * rn(r, PAGE);
		break;
	case 1:
		size = rnext(r);		/* anything */
		break;
	case 2:
		size = 1UL << rn(r, 48);
		break;
	default:
		size = (1 + rn(r, 32)) * PAGE;
		break;
	}
	switch (rn(r, 8)) {
	case 0:	/* near the top of user space */
		addr = 0x7ffffffff000UL - rn(r, 64) * PAGE;
		break;
	case 1:	/* a kernel address, non-canonical, unaligned */
		addr = PICK(r, ((unsigned long[]){ 0xffff800000000000UL, 0x800000000000UL,
						   0x1000UL, 0x10000UL, 0x7ffffffff001UL, 1 }));
		break;
	case 2: {	/* 2 MiB-aligned, for huge pages */
		addr = (0x200000000000UL + rn(r, 1 << 12) * 0x200000UL);
		break;
	}
	case 3: {	/* next to a pool entry (inside, adjacent or in its guard gap) */
		plock();
		struct ent *e = pick_ent(r);

		if (e)
			addr = e->base + ((long)rn(r, e->npages + 4) - 2) * PAGE;
		punlock();	/* a window: harmless, a fixed map_shadow_stack never replaces */
		break;
	}
	case 4:
		addr = rnext(r) & 0x7fffffffffffUL & ~(rn(r, 4) ? PAGE - 1 : 0);
		break;
	default:
		addr = 0;
	}
	flags = rn(r, 4) ? SHADOW_STACK_SET_TOKEN * rn(r, 2) : (rn(r, 2) ? rnext(r) : rn(r, 8));
	/* every change of the worker's address space under the lock: see pool_lock */
	plock();
	ret = map_shadow_stack(addr, size, flags);
	__atomic_fetch_add(&nops, 1, __ATOMIC_RELAXED);
	if (ret < 0 && ret > -4096) {
		punlock();
		return;
	}
	if (ret & (PAGE - 1)) {
		punlock();
		bad("map_shadow_stack(%#lx, %#lx, %#lx) returned the unaligned %#lx", addr, size, flags, ret);
		return;
	}
	if (addr && ret != (long)addr)
		bad("map_shadow_stack(%#lx, %#lx, %#lx) = %#lx, not at the address asked for", addr, size, flags, ret);
	unsigned long npages = (size + PAGE - 1) / PAGE;

	note("map_shadow_stack(%#lx, %#lx, %#lx) = %#lx", addr, size, flags, ret);
	for (int i = 0; i < MAXENT; i++) {
		const struct ent *e = &pool[i];

		for (unsigned long k = 0; e->used && k < e->npages; k++)
			if (pg(e, k) && e->base + k * PAGE >= (unsigned long)ret &&
			    e->base + k * PAGE < ret + npages * PAGE) {
				bad("map_shadow_stack(%#lx, %#lx, %#lx) = %#lx replaced shadow stack %#lx of ours",
				    addr, size, flags, ret, e->base + k * PAGE);
				break;
			}
	}
	int slot = -1;

	for (int i = 0; i < MAXENT && npages <= ENT_MAX_PAGES; i++)
		if (!pool[i].used) {
			slot = i;
			break;
		}
	if (slot >= 0 && pool_pages() + npages <= POOL_MAX_PAGES) {
		ent_fill(&pool[slot], ret, npages);
		punlock();
		return;
	}
	if (munmap((void *)ret, npages * PAGE))
		bad("munmap of a fresh shadow stack %#lx+%#lx: %s", ret, npages * PAGE, strerror(errno));
	punlock();
}

/*
 * Under the lock, after a call that failed but may have unmapped part of its range before
 * it failed: every believed page of [first, first + n) must still be a shadow-stack page
 * or be unmapped; the unmapped ones are forgotten. A page in any other VMA is a failure
 * (the kernel may drop a range, never turn it into something else).
 */
static void forget_unmapped(struct ent *e, unsigned long first, unsigned long n, const char *what)
{
	static struct vma_fl v[4096];
	int nv = read_vmas_fl(v, 4096);
	unsigned long gone = 0;
	char buf[200];

	if (nv < 0) {
		bad("%s: cannot read smaps", what);
		return;
	}
	for (unsigned long i = first; i < first + n && i < e->npages; i++) {
		unsigned long a = e->base + i * PAGE;
		int j = vma_find(v, nv, a);

		if (!pg(e, i))
			continue;
		if (j < 0) {
			pg_set(e, i, false);
			gone++;
		} else if (!v[j].ss) {
			bad("after %s, page %#lx of a shadow stack is %s", what, a, where_is(v, nv, a, buf, sizeof(buf)));
		}
	}
	if (gone)
		note("%s: %lu page(s) from %#lx were unmapped", what, gone, e->base + first * PAGE);
	if (!ent_count(e))
		e->used = false;
}

/*
 * The model of a failed mremap(). A move (MREMAP_FIXED or MREMAP_DONTUNMAP: mremap_to())
 * that shrinks unmaps the tail [new size, old size) before it looks at the old range,
 * and keeps it unmapped when it then fails, e.g. with EFAULT because the range spans
 * two VMAs (6.1 and mainline alike). Any other failure changes nothing.
 */
static void after_failed_mremap(struct ent *e, unsigned long nsz, unsigned long fl)
{
	if (e && (fl & (MREMAP_FIXED | MREMAP_DONTUNMAP)) && nsz / PAGE < e->npages)
		forget_unmapped(e, nsz / PAGE, e->npages - nsz / PAGE, "a failed shrinking mremap");
}

static void op_unmap(struct rng *r)
{
	unsigned long first, n;
	struct ent *e;

	plock();
	e = pick_ent(r);
	if (e) {
		pick_range(r, e, &first, &n);
		if (rn(r, 3) == 0) {	/* mmap MAP_FIXED over it, then away */
			void *p = mmap((void *)(e->base + first * PAGE), n * PAGE, PROT_READ | PROT_WRITE,
				       MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			note("mmap-fixed-over %#lx+%#lx = %p", e->base + first * PAGE, n * PAGE, p);
			if (p == MAP_FAILED) {
				/* mmap_region() unmaps what it replaces before it may fail (accounting) */
				say("  info mmap MAP_FIXED over a shadow stack: %s", strerror(errno));
				forget_unmapped(e, first, n, "a failed mmap MAP_FIXED");
			} else {
				if (munmap(p, n * PAGE))
					bad("munmap of the mapping put over a shadow stack: %s", strerror(errno));
				ent_clear_range(e, first, n);
			}
		} else if (note("munmap %#lx+%#lx", e->base + first * PAGE, n * PAGE),
			   munmap((void *)(e->base + first * PAGE), n * PAGE)) {
			bad("munmap of a shadow stack range: %s", strerror(errno));
		} else {
			ent_clear_range(e, first, n);
		}
	}
	punlock();
	__atomic_fetch_add(&nops, 1, __ATOMIC_RELAXED);
}

static void op_mprotect(struct rng *r)
{
	static const int prots[] = { PROT_NONE, PROT_READ, PROT_READ | PROT_WRITE, PROT_WRITE,
				     PROT_EXEC, PROT_READ | PROT_EXEC, PROT_READ | PROT_WRITE | PROT_EXEC,
				     PROT_READ | PROT_WRITE | PROT_GROWSDOWN, 0x7f };
	unsigned long first, n;
	struct ent *e;

	plock();
	e = pick_ent(r);
	if (e) {
		pick_range(r, e, &first, &n);
		int prot = PICK(r, prots);

		e->safe = false;
		note("mprotect %#lx+%#lx %#x = %d", e->base + first * PAGE, n * PAGE, prot,
		     mprotect((void *)(e->base + first * PAGE), n * PAGE, prot) ? -errno : 0);
	}
	punlock();
	__atomic_fetch_add(&nops, 1, __ATOMIC_RELAXED);
}

static void op_madvise(struct rng *r)
{
	static const int advs[] = { MADV_DONTNEED, MADV_FREE, MADV_WIPEONFORK, MADV_KEEPONFORK,
				    MADV_MERGEABLE, MADV_UNMERGEABLE, MADV_HUGEPAGE, MADV_NOHUGEPAGE,
				    MADV_PAGEOUT, MADV_COLD, MADV_COLLAPSE, MADV_WILLNEED,
				    MADV_SEQUENTIAL, MADV_RANDOM, MADV_NORMAL, MADV_REMOVE,
				    MADV_DONTDUMP, MADV_DODUMP, 22 /* POPULATE_READ */,
				    23 /* POPULATE_WRITE */, -1 };
	unsigned long first, n;
	struct ent *e;
	int adv;

	plock();
	e = pick_ent(r);
	if (e) {
		pick_range(r, e, &first, &n);
		adv = PICK(r, advs);
		if (adv < 0) {	/* random advice, but never DONTFORK (the belief) or poison */
			adv = rn(r, 30);
			if (adv == MADV_DONTFORK || adv == MADV_DOFORK)
				adv = MADV_COLD;
		}
		note("madvise %#lx+%#lx %d = %d", e->base + first * PAGE, n * PAGE, adv,
		     madvise((void *)(e->base + first * PAGE), n * PAGE, adv) ? -errno : 0);
	}
	punlock();
	__atomic_fetch_add(&nops, 1, __ATOMIC_RELAXED);
}

static void op_mremap(struct rng *r)
{
	struct ent *e;

	plock();
	e = pick_ent(r);
	if (!e || ent_count(e) != e->npages) {
		punlock();
		return;
	}
	unsigned long old = e->base, osz = e->npages * PAGE, nsz = osz, fl = 0;
	void *rsv = MAP_FAILED, *want = NULL;
	int mode = rn(r, 4);

	if (mode == 0 && e->npages > 1) {		/* shrink in place */
		nsz = (1 + rn(r, e->npages - 1)) * PAGE;
	} else if (mode == 1) {				/* grow, maybe moving */
		nsz = osz + (1 + rn(r, 16)) * PAGE;
		fl = rn(r, 2) ? MREMAP_MAYMOVE : 0;
	} else if (mode == 2) {				/* move to a place we reserved */
		nsz = rn(r, 2) ? osz : (1 + rn(r, e->npages + 8)) * PAGE;
		rsv = mmap(NULL, nsz, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (rsv == MAP_FAILED) {
			punlock();
			return;
		}
		want = rsv;
		fl = MREMAP_MAYMOVE | MREMAP_FIXED;
	} else {					/* DONTUNMAP: same size */
		fl = MREMAP_MAYMOVE | MREMAP_DONTUNMAP;
	}
	if (nsz / PAGE > ENT_MAX_PAGES || pool_pages() + nsz / PAGE > POOL_MAX_PAGES) {
		if (rsv != MAP_FAILED)
			munmap(rsv, nsz);
		punlock();
		return;
	}
	void *p = mremap((void *)old, osz, nsz, fl, want);

	note("mremap %#lx+%#lx -> %#lx fl %#lx want %p = %p", old, osz, nsz, fl, want, p);

	if (p == MAP_FAILED) {
		if (rsv != MAP_FAILED)
			munmap(rsv, nsz);
		after_failed_mremap(e, nsz, fl);
	} else if (fl & MREMAP_DONTUNMAP) {
		/* the old range stays, an empty shadow stack; the new one is another entry */
		int slot = -1;

		for (int i = 0; i < MAXENT; i++)
			if (!pool[i].used)
				slot = i;
		if (slot >= 0) {
			ent_fill(&pool[slot], (unsigned long)p, nsz / PAGE);
			pool[slot].safe = e->safe;
		} else if (munmap(p, nsz)) {
			bad("munmap after mremap: %s", strerror(errno));
		}
	} else {
		bool safe = e->safe;

		ent_fill(e, (unsigned long)p, nsz / PAGE);
		e->safe = safe;
	}
	punlock();
	__atomic_fetch_add(&nops, 1, __ATOMIC_RELAXED);
}

static void op_mlock(struct rng *r)
{
	unsigned long first, n;
	struct ent *e;

	plock();
	e = pick_ent(r);
	if (e) {
		void *a;

		pick_range(r, e, &first, &n);
		a = (void *)(e->base + first * PAGE);
		note("mlock-ish %p+%#lx", a, n * PAGE);
		switch (rn(r, 3)) {
		case 0:
			mlock(a, n * PAGE);
			break;
		case 1:
			syscall(SYS_mlock2, a, n * PAGE, MLOCK_ONFAULT);
			break;
		default:
			munlock(a, n * PAGE);
		}
	}
	punlock();
	__atomic_fetch_add(&nops, 1, __ATOMIC_RELAXED);
}

static void op_uffd(struct rng *r)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	struct ent *e;
	int fd;

	fd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return;
	if (ioctl(fd, UFFDIO_API, &api)) {
		close(fd);
		return;
	}
	plock();
	e = pick_ent(r);
	if (e) {
		unsigned long first, n;

		pick_range(r, e, &first, &n);
		memset(&reg, 0, sizeof(reg));
		reg.range.start = e->base + first * PAGE;
		reg.range.len = n * PAGE;
		reg.mode = 1 + rn(r, 7);	/* MISSING, WP, MINOR and combinations */
		if (!ioctl(fd, UFFDIO_REGISTER, &reg)) {
			bad("userfaultfd UFFDIO_REGISTER (mode %#llx) on shadow stack %#llx+%#llx succeeded",
			    (unsigned long long)reg.mode, (unsigned long long)reg.range.start,
			    (unsigned long long)reg.range.len);
			ioctl(fd, UFFDIO_UNREGISTER, &reg.range);
		}
	}
	punlock();
	close(fd);
	__atomic_fetch_add(&nops, 1, __ATOMIC_RELAXED);
}

/* Under the lock: is a in a believed page of a safe entry (as pick_safe_addr() gives)? */
static bool safe_page(unsigned long a)
{
	for (int k = 0; k < MAXENT; k++) {
		const struct ent *e = &pool[k];

		if (e->used && e->safe && a >= e->base && a < e->base + e->npages * PAGE)
			return pg(e, (a - e->base) / PAGE);
	}
	return false;
}

/* Under the lock: a readable, shadow-stack-writable address of the pool, or 0. */
static unsigned long pick_safe_addr(struct rng *r)
{
	for (int k = 0; k < 4; k++) {
		struct ent *e = pick_ent(r);
		long i;

		if (!e || !e->safe)
			continue;
		i = pick_page(r, e);
		if (i >= 0)
			return e->base + i * PAGE + rn(r, PAGE / 8) * 8;
	}
	return 0;
}

/* Shadow-stack writes (WRSS) and normal reads of pool pages: populate, fault, THP. */
static void op_touch(struct rng *r)
{
	unsigned long a;

	if (inject == INJECT_WORKER_ABORT)
		abort();
	plock();
	a = pick_safe_addr(r);
	if (a) {
		int n = 1 + rn(r, 8);

		for (int i = 0; i < n; i++) {
			unsigned long *p = (unsigned long *)(a & ~(PAGE - 1)) + rn(r, PAGE / 8);

			if (rn(r, 3)) {
				unsigned long v = rnext(r);

				note("wrss %p %#lx", (void *)p, v);
				wrss(p, v);
			}
			else
				(void)shstk_load(p);
		}
	}
	punlock();
	__atomic_fetch_add(&nops, 1, __ATOMIC_RELAXED);
}

/*
 * Writes that must never reach a shadow-stack page: process_vm_writev (no FOLL_FORCE)
 * and the kernel's own user copies. /proc/self/mem (FOLL_FORCE, like a debugger) may.
 */
static void op_kwrite(struct rng *r)
{
	unsigned char before[64], after[64], junk[64];
	unsigned long a;
	const char *how = "?";
	long ret = 0;

	plock();
	a = pick_safe_addr(r);
	if (!a) {
		punlock();
		return;
	}
	a &= ~63UL;
	memcpy(before, (void *)a, 64);
	for (int i = 0; i < 64; i++)
		junk[i] = rnext(r) | 1;
	int kind = rn(r, 6);
	static const char *const kinds[] = { "process_vm_writev", "read(/dev/urandom)", "ARCH_SHSTK_STATUS",
					     "clock_gettime", "read(pipe)", "/proc/self/mem" };

	note("kwrite %s at %#lx", kinds[kind], a);
	switch (kind) {
	case 0: {
		struct iovec l = { junk, 1 + rn(r, 64) }, rv = { (void *)a, l.iov_len };

		how = "process_vm_writev";
		ret = syscall(SYS_process_vm_writev, getpid(), &l, 1, &rv, 1, 0);
		break;
	}
	case 1: {
		int fd = open("/dev/urandom", O_RDONLY);

		how = "read(/dev/urandom)";
		ret = read(fd, (void *)a, 1 + rn(r, 64));
		close(fd);
		break;
	}
	case 2:
		how = "ARCH_SHSTK_STATUS";
		ret = arch_prctl_raw(ARCH_SHSTK_STATUS, a);
		break;
	case 3:
		how = "clock_gettime";
		ret = syscall(SYS_clock_gettime, CLOCK_MONOTONIC, (void *)a);
		break;
	case 4: {
		int pfd[2];

		how = "read(pipe)";
		if (pipe(pfd))
			break;
		if (write(pfd[1], junk, 64) != 64)
			bad("pipe write");
		ret = read(pfd[0], (void *)a, 64);
		close(pfd[0]);
		close(pfd[1]);
		break;
	}
	default: {	/* /proc/self/mem: allowed (FOLL_FORCE); it must then read back */
		int fd = open("/proc/self/mem", O_RDWR);

		how = "/proc/self/mem";
		ret = pwrite(fd, junk, 8, a);
		close(fd);
		memcpy(after, (void *)a, 64);
		if (ret == 8 && memcmp(after, junk, 8))
			bad("/proc/self/mem wrote 8 bytes at %#lx but they do not read back", a);
		punlock();
		__atomic_fetch_add(&nops, 1, __ATOMIC_RELAXED);
		return;
	}
	}
	memcpy(after, (void *)a, 64);
	if (memcmp(before, after, 64))
		bad("%s changed shadow-stack memory at %#lx (returned %ld): a normal write got through",
		    how, a, ret);
	punlock();
	__atomic_fetch_add(&nops, 1, __ATOMIC_RELAXED);
}

/* ------------------------------------------------ children (fork-based ops) */

/*
 * A forked process never outlives the thread that forked it: a worker that
 * dies (a failed round, the injected abort) left its sacrificial children to
 * init, and one whose random sigreturn frame blocked SIGALRM, or that was
 * left stopped, lived on with the fuzzer's output open: the caller's read
 * of that output never ended (the guest suite's 1800 s bound ended it).
 */
static void die_with_parent(pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(0);	/* it died before the line above */
}

static pid_t fork_child(void)
{
	pid_t parent = getpid(), p = fork();

	if (p == 0) {
		die_with_parent(parent);
		in_child = 1;
		my_tid = 0;
		dg = &diag_private;	/* the worker's shared record is not ours (nor mapped) */
		signal(SIGSEGV, SIG_DFL);	/* children die of their faults as they come */
		signal(SIGBUS, SIG_DFL);
		alarm((unsigned)hang_secs + 5);	/* belt and braces: never outlive the fuzzer */
	}
	return p;
}

/* A wait status in words, into buf (wstr() has one static buffer: the threads share it). */
static const char *wdesc(int st, char *buf, size_t n)
{
	if (WIFEXITED(st))
		snprintf(buf, n, "exit %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(buf, n, "killed by %s%s", sigabbrev_np(WTERMSIG(st)) ?: "?",
			 WCOREDUMP(st) ? " (core)" : "");
	else
		snprintf(buf, n, "status %#x", st);
	return buf;
}

/*
 * The end of a child whose death is its own business (sacrificial: its registers,
 * context or shadow stack were corrupted on purpose). Every end goes into the trail. A
 * SIGABRT is also said at once: it is the death that prints, glibc's "*** stack smashing
 * detected ***: terminated" (a corrupted RSP, RIP or FS base reaches a canary check) or
 * another fatal message of glibc, on the child's stderr; this line says whose it was.
 */
static void child_ended(const char *what, pid_t pid, int st, const char *how)
{
	char buf[48];

	note("%s %d (%s): %s", what, (int)pid, how, wdesc(st, buf, sizeof(buf)));
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT &&
	    __atomic_fetch_add(&dg->aborts, 1, __ATOMIC_RELAXED) < 10)
		say("  info [%d/%d] %s %d (%s): %s, its own abort after a corruption on purpose (not a failure)",
		    (int)getpid(), tid(), what, (int)pid, how, buf);
}

/* Invariant: a normal store into a live ss page faults, whatever the instruction. */
static void op_store_check(struct rng *r)
{
	unsigned long a, val = rnext(r);
	int how = rn(r, 5), st;
	pid_t pid;

	plock();
	{
		struct ent *e = pick_ent(r);
		long i = e ? pick_page(r, e) : -1;

		a = i >= 0 ? e->base + i * PAGE + rn(r, PAGE / 8) * 8 : 0;
	}
	/* forking under the lock: the child's copy of the pool is consistent */
	pid = a ? fork_child() : -1;
	if (pid == 0) {
		if (addr_in_ss_vma(a, NULL, NULL) != 1) {
			say("  FAIL store check: %#lx believed in a shadow stack, smaps disagrees", a);
			_exit(5);
		}
		catch_faults_with_code();
		switch (how) {
		case 0:
			*(volatile unsigned long *)a = val;
			break;
		case 1:
			asm volatile("lock xaddq %0, (%1)" : "+r"(val) : "r"(a) : "memory");
			break;
		case 2: {
			unsigned long d = a, c = 8;

			asm volatile("rep stosb" : "+D"(d), "+c"(c) : "a"(val) : "memory");
			break;
		}
		case 3:
			asm volatile("movnti %1, (%0)" : : "r"(a), "r"(val) : "memory");
			break;
		default:
			asm volatile("xchgq %0, (%1)" : "+r"(val) : "r"(a) : "memory");
		}
		_exit(3);	/* the store went through */
	}
	punlock();
	if (pid < 0)
		return;
	if (!wait_end(pid, "store-check child", &st))
		return;
	char buf[48];

	note("store-check child %d (variant %d at %#lx): %s", (int)pid, how, a, wdesc(st, buf, sizeof(buf)));
	if (WIFEXITED(st) && WEXITSTATUS(st) == 3)
		bad("a normal store (variant %d) to shadow-stack page %#lx succeeded (child %d)", how, a, (int)pid);
	else if (WIFEXITED(st) && WEXITSTATUS(st) == 5)
		bad("belief/smaps mismatch at %#lx (store check, child %d)", a, (int)pid);
	else if (!(WIFEXITED(st) && (WEXITSTATUS(st) == 100 + SEGV_ACCERR ||
				     WEXITSTATUS(st) == 100 + SEGV_MAPERR)) &&
		 !(WIFSIGNALED(st) && (WTERMSIG(st) == SIGBUS || WTERMSIG(st) == SIGKILL)))
		bad("store-check child %d (variant %d at %#lx): %s (expected a SIGSEGV)", (int)pid, how, a, buf);
	__atomic_fetch_add(&nops, 1, __ATOMIC_RELAXED);
}

static unsigned long rand_arg(struct rng *r, unsigned long ssaddr)
{
	static unsigned long buf[4];

	switch (rn(r, 9)) {
	case 0: return 0;
	case 1: return F_SHSTK;
	case 2: return F_WRSS;
	case 3: return F_SHSTK | F_WRSS;
	case 4: return (unsigned long)buf;
	case 5: return ssaddr;
	case 6: return 0xffff888000000000UL;
	case 7: return ~0UL;
	default: return rnext(r);
	}
}

static long rand_op(struct rng *r)
{
	return rn(r, 8) ? 0x5001 + (long)rn(r, 5) : PICK(r, ((long[]){ 0x5000, 0x5006, 0x3001, 0x1001, 0x5005 }));
}

static void *recurse_thread(void *arg)
{
	(void)arg;
	recurse(8);
	return NULL;
}

/* A child runs a random arch_prctl sequence, then calls and returns; it may #CP. */
__attribute__((noreturn)) static void prctl_child(struct rng *r, unsigned long ssaddr)
{
	int n = 1 + rn(r, 6);

	for (int i = 0; i < n; i++) {
		long op = rand_op(r);
		unsigned long arg = rand_arg(r, ssaddr);

		arch_prctl_raw(op, arg);
	}
	if (rn(r, 2)) {
		pthread_t t;

		/* a thread with the features as they are now */
		if (!pthread_create(&t, NULL, recurse_thread, NULL))
			pthread_join(t, NULL);
	}
	recurse(4 + rn(r, 8));
	_exit(0);
}

static void op_prctl(struct rng *r)
{
	unsigned long ssaddr;
	int st;
	pid_t pid;

	plock();
	ssaddr = pick_safe_addr(r);
	punlock();
	/* in the worker itself: STATUS into a shadow stack must fail and change nothing */
	if (ssaddr) {
		plock();
		ssaddr = pick_safe_addr(r);
		if (ssaddr) {
			unsigned long before = shstk_load((unsigned long *)ssaddr);
			long ret = arch_prctl_raw(ARCH_SHSTK_STATUS, ssaddr);

			if (ret != -EFAULT || shstk_load((unsigned long *)ssaddr) != before)
				bad("ARCH_SHSTK_STATUS into shadow stack %#lx: %s, value %s", ssaddr,
				    errname(-ret), shstk_load((unsigned long *)ssaddr) != before ? "changed" : "kept");
		}
		punlock();
	}
	{
		unsigned long f = 0;
		long ret = arch_prctl_raw(ARCH_SHSTK_STATUS, (unsigned long)&f);

		if (ret || f != (F_SHSTK | F_WRSS))
			bad("worker ARCH_SHSTK_STATUS: %s features %#lx (want SHSTK|WRSS)", errname(-ret), f);
	}
	pid = fork_child();
	if (pid == 0)
		prctl_child(r, ssaddr);
	rnext(r);	/* the parent's stream moves on like the child's did not */
	if (pid > 0 && wait_end(pid, "arch_prctl child", &st))
		child_ended("arch_prctl child", pid, st, "random arch_prctl sequence");
	__atomic_fetch_add(&nops, 1, __ATOMIC_RELAXED);
}

/* -------------------------------------------------------------- ptrace */

static const unsigned long note_types[] = {
	0, 1, 2, 3, 4, 5, 6, 7, 8, 0x10, 0x200, 0x201, 0x202, 0x203, 0x204, 0x204, 0x204,
	0x205, 0x206, 0x300, 0x46494c45, 0x53494749, 0x80000000UL, ~0UL,
};
static const size_t iov_sizes[] = { 0, 1, 4, 7, 8, 8, 9, 15, 16, 24, 64, 216, 512, 832, 1024,
				    4096, 4100, 65536 };

__attribute__((noreturn)) static void tracee(void)
{
	ptrace(PTRACE_TRACEME, 0, 0, 0);
	for (;;) {
		raise(SIGSTOP);
		recurse(6);
	}
}

static void op_ptrace(struct rng *r)
{
	static unsigned char buf[65536 + 64];
	unsigned long ssp = 0, ss_pool = 0;
	int st, n;
	pid_t pid;

	pid = fork_child();
	if (pid == 0)
		tracee();
	if (pid < 0)
		return;
	if (!wait_bounded(pid, &st, WUNTRACED, "tracee's first stop")) {
		kill(pid, SIGKILL);
		return;
	}
	if (!WIFSTOPPED(st))
		goto out;
	{
		struct iovec iov = { &ssp, 8 };

		ptrace(PTRACE_GETREGSET, pid, NT_X86_SHSTK_REGSET, &iov);
	}
	plock();
	ss_pool = pick_safe_addr(r);
	punlock();
	n = 1 + rn(r, 10);
	for (int i = 0; i < n; i++) {
		unsigned long type = PICK(r, note_types);
		size_t sz = rn(r, 4) ? PICK(r, iov_sizes) : rn(r, 70000);
		struct iovec iov = { buf, sz > 65536 ? 65536 : sz };
		long ret;

		if (rn(r, 10) == 0)
			type = rnext(r) & 0xffff;
		switch (rn(r, 7)) {
		case 0:
		case 1:	/* GET, sometimes into a shadow stack of ours: must not land */
			if (ss_pool && rn(r, 3) == 0) {
				unsigned long a;
				unsigned char b[64];

				plock();
				a = pick_safe_addr(r) & ~63UL;
				if (a) {
					memcpy(b, (void *)a, 64);
					iov.iov_base = (void *)a;
					iov.iov_len = 64;
					ret = ptrace(PTRACE_GETREGSET, pid, type, &iov);
					if (memcmp(b, (void *)a, 64))
						bad("PTRACE_GETREGSET type %#lx wrote into shadow stack %#lx (ret %ld)",
						    type, a, ret);
				}
				punlock();
			} else {
				ptrace(PTRACE_GETREGSET, pid, type, &iov);
			}
			break;
		case 2:
		case 3: {	/* SET: a GET result, mutated, or random bytes */
			struct iovec g = { buf, sizeof(buf) - 64 };

			if (rn(r, 3) && !ptrace(PTRACE_GETREGSET, pid, type, &g)) {
				size_t len = g.iov_len;

				for (int k = rn(r, 4); k > 0 && len; k--)
					buf[rn(r, len)] ^= 1 << rn(r, 8);
				iov.iov_len = rn(r, 2) ? len : iov.iov_len;
			} else {
				for (size_t k = 0; k < iov.iov_len && k < 4096; k++)
					buf[k] = rnext(r);
			}
			if (type == NT_X86_SHSTK_REGSET || rn(r, 4) == 0) {
				static const long deltas[] = { 0, 8, -8, 16, -16, 1, 4, 4096, -4096, 1 << 20 };
				unsigned long v;

				switch (rn(r, 6)) {
				case 0: v = ssp + PICK(r, deltas); break;
				case 1: v = ss_pool ? (ss_pool | rn(r, 2) * 4) : ssp; break;
				case 2: v = PICK(r, ((unsigned long[]){ 0, 8, 0x7ffffffff000UL,
							 0x800000000000UL, 0xffff800000000000UL, ~7UL })); break;
				case 3: v = rnext(r) & ~7UL; break;
				case 4: v = rnext(r); break;
				default: v = ssp;
				}
				memcpy(buf, &v, 8);
				if (type == NT_X86_SHSTK_REGSET && rn(r, 3))
					iov.iov_len = 8;
			}
			note("SETREGSET %d type %#lx len %zu", (int)pid, type, iov.iov_len);
			ptrace(PTRACE_SETREGSET, pid, type, &iov);
			break;
		}
		case 4: {	/* PTRACE_ARCH_PRCTL: op in data, argument in addr */
			static unsigned long res[2];
			unsigned long arg = rn(r, 2) ? (unsigned long)res : rand_arg(r, ss_pool);
			long op = rand_op(r);

			/*
			 * An output argument (ARCH_SHSTK_STATUS) is written in the TRACER's
			 * memory, this worker's: a pool address picked before the lock was
			 * dropped may be anything by now (another thread's stack). Under the
			 * lock, and only while it is still a safe pool page: then the write
			 * must fail and change nothing, like the worker's own STATUS.
			 */
			if (arg == ss_pool && ss_pool) {
				unsigned long before;

				plock();
				if (!safe_page(ss_pool)) {
					punlock();
					note("PTRACE_ARCH_PRCTL %d op %#lx: %#lx is no longer a pool page, skipped",
					     (int)pid, op, arg);
					break;
				}
				before = shstk_load((unsigned long *)arg);
				ret = ptrace(PTRACE_ARCH_PRCTL_REQ, pid, arg, op);
				if (shstk_load((unsigned long *)arg) != before)
					bad("PTRACE_ARCH_PRCTL op %#lx wrote into the tracer's shadow stack %#lx (ret %ld)",
					    op, arg, ret);
				punlock();
			} else {
				ret = ptrace(PTRACE_ARCH_PRCTL_REQ, pid, arg, op);
			}
			note("PTRACE_ARCH_PRCTL %d op %#lx arg %#lx = %ld", (int)pid, op, arg, ret);
			break;
		}
		case 5:	/* PEEK / POKE the tracee's shadow stack (FOLL_FORCE: allowed) */
			unsigned long vs, ve;

			/*
			 * Only inside its shadow stack: above the top may lie anything,
			 * e.g. a MAP_SHARED page of ours, which POKE rightly writes.
			 */
			if (ssp && addr_in_ss_vma(ssp, &vs, &ve) == 1 && ve > ssp) {
				unsigned long room = (ve - ssp) / 8;
				unsigned long a = ssp + rn(r, room < 8 ? room : 8) * 8;
				long v = ptrace(PTRACE_PEEKDATA, pid, a, 0);

				if (rn(r, 2))
					ptrace(PTRACE_POKEDATA, pid, a, rn(r, 2) ? v : (long)rnext(r));
			}
			break;
		default:	/* let it run to its next stop, or die */
			int sig = rn(r, 4) ? 0 : PICK(r, ((int[]){ SIGUSR1, SIGSEGV, SIGSTOP }));

			note("PTRACE_CONT %d sig %d", (int)pid, sig);
			if (ptrace(PTRACE_CONT, pid, 0, sig))
				goto out;
			if (!wait_bounded(pid, &st, WUNTRACED, "tracee after PTRACE_CONT")) {
				kill(pid, SIGKILL);
				return;
			}
			if (!WIFSTOPPED(st))
				goto out_reaped;
			break;
		}
	}
out:
	if (reap(pid, "tracee", &st))
		child_ended("tracee", pid, st, "killed at the end");
	__atomic_fetch_add(&nops, 1, __ATOMIC_RELAXED);
	return;
out_reaped:
	child_ended("tracee", pid, st, "ended after PTRACE_CONT");
	__atomic_fetch_add(&nops, 1, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------ rt_sigreturn */

static int sig_mode;
static unsigned long sig_val;

static void corrupting_handler(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	unsigned long ssp = read_ssp();	/* points at the restorer's address */

	(void)sig;
	(void)si;
	switch (sig_mode) {
	case 0:	/* the restore token: random */
		wrss((unsigned long *)(ssp + 8), sig_val);
		break;
	case 1:	/* the token without its bit 63, or pointing elsewhere */
		wrss((unsigned long *)(ssp + 8), (shstk_load((unsigned long *)(ssp + 8)) &
		     (sig_val & 1 ? ~TOKEN_BIT63 : ~0UL)) ^ (sig_val & 0xff8));
		break;
	case 2:	/* the restorer's address */
		wrss((unsigned long *)ssp, sig_val);
		break;
	case 3: {	/* skip entries: SSP moves past the token */
		unsigned long k = 1 + (sig_val & 3);

		asm volatile("incsspq %0" : : "r"(k));
		break;
	}
	case 4:	/* the normal-stack context */
		uc->uc_mcontext.gregs[sig_val & 1 ? REG_RIP : REG_RSP] ^= (sig_val >> 8) & 0xfff8;
		break;
	case 5:	/* a token naming another shadow stack (sig_val is one of the pool's) */
		wrss((unsigned long *)(ssp + 8), sig_val | TOKEN_BIT63);
		break;
	default:	/* nothing: a clean return must work */
		break;
	}
}

/* What a sigreturn child does: drawn in the child, and the same on a copy in the parent. */
struct sigplan {
	bool nodefer;
	int mode;		/* sig_mode */
	unsigned long val;	/* sig_val */
	int how;		/* 0: raw rt_sigreturn, 1: on a shadow-stack altstack, else raise */
};

static void sigreturn_plan(struct rng *r, unsigned long ssaddr, struct sigplan *p)
{
	p->nodefer = rn(r, 2);
	p->mode = rn(r, 8);
	p->val = p->mode == 5 && ssaddr ? ssaddr : rnext(r);
	p->how = rn(r, 4);
}

__attribute__((noreturn)) static void sigreturn_child(struct rng *r, unsigned long ssaddr)
{
	struct sigaction sa;
	struct sigplan pl;

	sigreturn_plan(r, ssaddr, &pl);
	if (inject == INJECT_CHILD_ABORT)
		abort();
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = corrupting_handler;
	sa.sa_flags = SA_SIGINFO | (pl.nodefer ? SA_NODEFER : 0);
	sigaction(SIGUSR1, &sa, NULL);
	sig_mode = pl.mode;
	sig_val = pl.val;
	switch (pl.how) {
	case 0: {	/* a raw rt_sigreturn on random stack contents */
		static unsigned long frame[256] __attribute__((aligned(64)));

		for (int i = 0; i < 256; i++)
			frame[i] = rn(r, 2) ? rnext(r) : 0;
		asm volatile("mov %0, %%rsp\n\tmov $15, %%eax\n\tsyscall\n\tud2"
			     : : "r"(frame + rn(r, 64)) : "memory");
		break;
	}
	case 1:
		if (ssaddr) {	/* the alternate signal stack is a shadow stack */
			stack_t ss = { .ss_sp = (void *)(ssaddr & ~(PAGE - 1)), .ss_size = PAGE * 2 };

			sigaltstack(&ss, NULL);
			sa.sa_flags |= SA_ONSTACK;
			sigaction(SIGUSR1, &sa, NULL);
		}
		/* fall through */
	default:
		raise(SIGUSR1);
		recurse(4);
	}
	_exit(0);
}

static void op_sigreturn(struct rng *r)
{
	unsigned long ssaddr;
	int st;
	pid_t pid;

	plock();
	ssaddr = pick_safe_addr(r);
	punlock();
	struct rng copy = *r;
	struct sigplan pl;
	char how[96];

	pid = fork_child();
	if (pid == 0)
		sigreturn_child(r, ssaddr);
	sigreturn_plan(&copy, ssaddr, &pl);	/* what the child drew (r itself moves on as before) */
	snprintf(how, sizeof(how), "%s, handler mode %d val %#lx%s",
		 pl.how == 0 ? "raw rt_sigreturn" : pl.how == 1 && ssaddr ? "raise on a shadow-stack altstack" : "raise",
		 pl.mode, pl.val, pl.nodefer ? " nodefer" : "");
	if (pid > 0 && wait_end(pid, "sigreturn child", &st))
		child_ended("sigreturn child", pid, st, how);
	__atomic_fetch_add(&nops, 1, __ATOMIC_RELAXED);
}

/* ------------------------------------------------ threads, forks, vforks */

static void *short_thread(void *arg)
{
	struct rng r = { (uintptr_t)arg };
	long a;

	unsigned long sz = (1 + rn(&r, 8)) * PAGE;

	recurse(3 + rn(&r, 20));
	plock();	/* its shadow stack is not the pool's, but the address space is shared */
	a = map_shadow_stack(0, sz, SHADOW_STACK_SET_TOKEN);
	if (a > 0 && rn(&r, 4))
		munmap((void *)a, PAGE);	/* partial on purpose; the rest below */
	if (a > 0)
		munmap((void *)a, sz);
	punlock();
	if (rn(&r, 2))
		pthread_exit(NULL);	/* from deep inside glibc's unwinder-free exit path */
	return NULL;
}

static void op_thread(struct rng *r)
{
	pthread_t t;
	int err;

	plock();	/* its stack and shadow stack are mapped in here */
	err = pthread_create(&t, NULL, short_thread, (void *)(uintptr_t)rnext(r));
	punlock();
	if (!err)
		pthread_join(t, NULL);
	__atomic_fetch_add(&nops, 1, __ATOMIC_RELAXED);
}

static void op_fork(struct rng *r)
{
	int st;
	pid_t pid;

	if (rn(r, 4) == 0) {
		/*
		 * vfork: the child runs on the parent's shadow stack, so it must neither
		 * return nor call (glibc 2.36's vfork() returns in the child and the next
		 * call overwrites the parent's return address there: #CP in the parent).
		 * One asm block: vfork, and in the child exit at once.
		 */
		long ret;

		asm volatile("syscall\n\t"
			     "test %%rax, %%rax\n\t"
			     "jnz 1f\n\t"
			     "mov $60, %%eax\n\t"
			     "xor %%edi, %%edi\n\t"
			     "syscall\n"
			     "1:"
			     : "=a"(ret) : "0"((long)SYS_vfork) : "rcx", "r11", "rdi", "memory");
		pid = ret;
		if (pid > 0 && wait_end(pid, "vfork child", &st))
			child_ended("vfork child", pid, st, "exits at once");
		return;
	}
	plock();
	pid = fork_child();
	if (pid == 0) {	/* touch its copies (COW of shadow-stack pages), unmap some, exit */
		catch_worker_faults();
		for (int i = 0; i < 8; i++) {
			unsigned long a = pick_safe_addr(r);

			if (a)
				wrss((unsigned long *)a, rnext(r));
		}
		if (rn(r, 2)) {
			struct ent *e = pick_ent(r);

			/* only its own pages: the span may hold other mappings by now */
			for (unsigned long k = 0; e && k < e->npages; k++)
				if (pg(e, k))
					munmap((void *)(e->base + k * PAGE), PAGE);
		}
		recurse(5);
		_exit(0);
	}
	punlock();
	if (pid > 0) {
		char buf[48];

		if (wait_end(pid, "fork child", &st)) {
			note("fork child %d: %s", (int)pid, wdesc(st, buf, sizeof(buf)));
			if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0))
				bad("fork child %d (touching its COW shadow stacks): %s", (int)pid, buf);
		}
	}
	__atomic_fetch_add(&nops, 1, __ATOMIC_RELAXED);
}

/* --------------------------------------------------------------- checks */

static bool believed(unsigned long a)
{
	for (int k = 0; k < MAXENT; k++) {
		const struct ent *e = &pool[k];

		if (e->used && a >= e->base && a < e->base + e->npages * PAGE && pg(e, (a - e->base) / PAGE))
			return true;
	}
	return false;
}

/*
 * The ss pages of smaps are exactly the pool's believed pages plus the own shadow stack
 * [own_s0, own_e0), whatever VMAs the kernel merged or split them into; the own SSP is
 * in the own shadow stack.
 */
static int check_beliefs(const char *where)
{
	static struct vma_fl v[4096];
	unsigned long ssp = read_ssp(), extra = 0, missing = 0, own_lost = 0;
	int n = read_vmas_fl(v, 4096), nss = 0, bad_n = 0;
	char buf[200];

	if (n < 0) {
		say("  FAIL %s: cannot read smaps", where);
		return 1;
	}
	for (int i = 0; i < n; i++) {
		if (!v[i].ss)
			continue;
		nss++;
		for (unsigned long a = v[i].start; a < v[i].end; a += PAGE)
			if (!(a >= own_s0 && a < own_e0) && !believed(a) && extra++ < 3)
				say("  info %s: ss page %#lx in smaps (%s%s) is not in the pool", where, a,
				    where_is(v, n, a, buf, sizeof(buf)),
				    ssp >= v[i].start && ssp < v[i].end ? ", with the own SSP" : "");
	}
	for (int k = 0; k < MAXENT; k++) {
		const struct ent *e = &pool[k];

		if (!e->used)
			continue;
		for (unsigned long i = 0; i < e->npages; i++) {
			unsigned long a = e->base + i * PAGE;
			int j = vma_find(v, n, a);

			if (!pg(e, i))
				continue;
			/* a pool page inside the own range: the model is wrong, whatever smaps says */
			if ((j < 0 || !v[j].ss || (a >= own_s0 && a < own_e0)) && missing++ < 3)
				say("  info %s: pool page %#lx (entry %d: %#lx+%lu pages) is not an ss page of smaps: %s%s",
				    where, a, k, e->base, e->npages, where_is(v, n, a, buf, sizeof(buf)),
				    a >= own_s0 && a < own_e0 ? ", inside the own shadow stack" : "");
		}
	}
	for (unsigned long a = own_s0; a < own_e0; a += PAGE) {
		int j = vma_find(v, n, a);

		if ((j < 0 || !v[j].ss) && own_lost++ < 3)
			say("  info %s: page %#lx of the own shadow stack %#lx-%#lx is not an ss page: %s",
			    where, a, own_s0, own_e0, where_is(v, n, a, buf, sizeof(buf)));
	}
	if (!own_s0 || ssp <= own_s0 || ssp > own_e0) {
		say("  FAIL %s: the own SSP %#lx is not in the own shadow stack %#lx-%#lx", where, ssp, own_s0, own_e0);
		bad_n++;
	}
	if (extra || missing || own_lost) {
		say("  FAIL %s: %lu ss page(s) in smaps not in the pool, %lu pool page(s) not ss, %lu page(s) of the own shadow stack not ss (%d ss VMAs, pool %lu pages)",
		    where, extra, missing, own_lost, nss, pool_pages());
		bad_n++;
	}
	return bad_n;
}

static void quiescent_checks(int phase)
{
	char where[64];
	int st;
	pid_t pid;

	snprintf(where, sizeof(where), "phase %d (worker)", phase);
	if (check_beliefs(where))
		__atomic_fetch_add(&nfails, 1, __ATOMIC_RELAXED);
	pid = fork_child();
	if (pid == 0) {
		snprintf(where, sizeof(where), "phase %d (forked child)", phase);
		_exit(check_beliefs(where) ? 1 : 0);
	}
	if (pid > 0 && wait_end(pid, "belief-check child", &st) && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
		char buf[48];

		bad("belief check in forked child %d: %s", (int)pid, wdesc(st, buf, sizeof(buf)));
	}
}

/* ---------------------------------------------------------------- worker */

typedef void (*op_fn)(struct rng *);
static const struct {
	op_fn fn;
	int weight;
	const char *name;
} ops[] = {
#define OP(f, w) { f, w, #f }
	OP(op_map, 14), OP(op_unmap, 5), OP(op_mprotect, 5), OP(op_madvise, 10), OP(op_mremap, 5),
	OP(op_mlock, 3), OP(op_uffd, 3), OP(op_touch, 12), OP(op_kwrite, 6), OP(op_store_check, 4),
	OP(op_prctl, 4), OP(op_ptrace, 5), OP(op_sigreturn, 5), OP(op_thread, 3), OP(op_fork, 3),
#undef OP
};

/*
 * A shared page with a known pattern that no operation may write: the worker and all
 * its children have it. Checked after every operation of the worker; a change means a
 * write went where none should (a kernel write to the wrong page, or a wild child).
 */
static unsigned long *sentinel;
#define SENTINEL_WORD 0x5a5aa5a5c3c33c3cUL

static bool sentinel_check(const char *after)
{
	bool changed = false;

	for (unsigned i = 0; sentinel && i < PAGE / 8; i++)
		if (sentinel[i] != SENTINEL_WORD) {
			bad("sentinel page %p word %u is %#lx after %s: a write landed where none may",
			    (void *)sentinel, i, sentinel[i], after);
			sentinel[i] = SENTINEL_WORD;
			changed = true;
		}
	return changed;
}

static bool out_of_budget(void)
{
	return now() > deadline || __atomic_load_n(&nops, __ATOMIC_RELAXED) >= ops_budget ||
	       __atomic_load_n(&nfails, __ATOMIC_RELAXED) > 0;
}

/* slot: the thread's entry in dg->slot (0 the worker's main thread, 1.. its op threads) */
static void run_ops(struct rng *r, int n, int slot)
{
	int total = 0;

	dg->slot[slot].tid = tid();
	dg->slot[slot].op = -1;
	dg->slot[slot].n = 0;
	for (unsigned i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		total += ops[i].weight;
	for (int k = 0; k < n && !out_of_budget(); k++) {
		int w = rn(r, total);
		unsigned i = 0;

		while (w >= ops[i].weight)
			w -= ops[i++].weight;
		dg->slot[slot].op = i;
		dg->slot[slot].n++;
		ops[i].fn(r);
		dg->slot[slot].op = -1;
		sentinel_check(ops[i].name);
	}
	dg->slot[slot].op = -2;
}

struct targ {
	struct rng r;
	int n;
	int slot;
};

static void *op_thread_main(void *p)
{
	struct targ *t = p;

	run_ops(&t->r, t->n, t->slot);
	return NULL;
}

/* After the enabling arch_prctl: never returns (its caller's frame is not on the new stack). */
__attribute__((noreturn)) static void worker_body(uint64_t seed, int phases, int per_phase)
{
	struct rng r = { seed };

	for (int ph = 0; ph < phases && !out_of_budget(); ph++) {
		int nt = rn(&r, max_threads + 1);
		pthread_t t[3];
		struct targ a[3];
		int started = 0;

		for (int i = 0; i < nt; i++) {
			a[i].r.s = rnext(&r);
			a[i].n = per_phase;
			a[i].slot = 1 + i;
			plock();	/* the started threads are at work already */
			int err = pthread_create(&t[i], NULL, op_thread_main, &a[i]);

			punlock();
			if (err)
				break;
			started++;
		}
		note("phase %d: %d op thread(s)", ph, started);
		run_ops(&r, per_phase, 0);
		for (int i = 0; i < started; i++)
			pthread_join(t[i], NULL);
		note("phase %d: threads joined, belief check", ph);
		quiescent_checks(ph);
	}
	/* tear down: everything unmapped, only the own shadow stack left */
	for (int i = 0; i < MAXENT; i++)
		if (pool[i].used) {
			for (unsigned long k = 0; k < pool[i].npages; k++)
				if (pg(&pool[i], k))
					munmap((void *)(pool[i].base + k * PAGE), PAGE);
			pool[i].used = false;
		}
	if (count_ss_vmas(0) != 1)
		bad("after unmapping the pool: %d ss VMAs (want only the own shadow stack)", count_ss_vmas(0));
	say("  info worker ops=%ld aborted-children=%d", __atomic_load_n(&nops, __ATOMIC_RELAXED), dg->aborts);
	_exit(nfails ? 2 : 0);
}

__attribute__((noreturn)) static void worker(uint64_t seed, int phases, int per_phase)
{
	long ret = arch_prctl_raw(ARCH_SHSTK_ENABLE, F_SHSTK);

	catch_worker_faults();
	/* one malloc arena (brk): no thread maps an arena of its own outside the pool lock */
	mallopt(M_ARENA_MAX, 1);
	madvise(nops_p, PAGE, MADV_DONTFORK);	/* the op counter: the worker's alone */
	if (wdiag) {				/* its record, for the supervisor alone */
		madvise(wdiag, (sizeof(*wdiag) + PAGE - 1) & ~(PAGE - 1), MADV_DONTFORK);
		dg = wdiag;
	}
	if (ret) {
		say("  FAIL worker: ARCH_SHSTK_ENABLE(SHSTK): %s", errname(-ret));
		_exit(2);
	}
	ret = arch_prctl_raw(ARCH_SHSTK_ENABLE, F_WRSS);
	if (ret) {
		say("  FAIL worker: ARCH_SHSTK_ENABLE(WRSS): %s", errname(-ret));
		_exit(2);
	}
	/* nothing pushed yet: the SSP is the top, the end of the VMA */
	if (addr_in_ss_vma(read_ssp() - 1, &own_s0, &own_e0) != 1) {
		say("  FAIL worker: no ss VMA holds the own SSP %#lx", read_ssp());
		_exit(2);
	}
	worker_body(seed, phases, per_phase);
}

/* -------------------------------------------------------------- selftest */

/*
 * `shstk_fuzz selftest`: the belief check itself on fixed layouts, each in a forked child
 * of a process with a shadow stack. Consistent layouts are what the kernel may
 * rightly produce (the check must pass); inconsistent ones are a model that disagrees
 * with the kernel, as a kernel bug would make it (the check must fail).
 */
/* A shadow stack of npages at addr (0: anywhere), entered in the pool if record. 0 if refused. */
static unsigned long st_map(unsigned long addr, unsigned long npages, bool record)
{
	long a = map_shadow_stack(addr, npages * PAGE, 0);

	if (a < 0 && a > -4096) {
		say("  info selftest: map_shadow_stack(%#lx, %lu pages): %s", addr, npages, errname(-a));
		return 0;
	}
	note("map_shadow_stack(%#lx, %lu pages) = %#lx%s", addr, npages, a, record ? "" : ", not in the pool");
	for (int i = 0; record && i < MAXENT; i++)
		if (!pool[i].used) {
			ent_fill(&pool[i], a, npages);
			break;
		}
	return a;
}

static struct ent *st_ent(unsigned long base)
{
	for (int i = 0; i < MAXENT; i++)
		if (pool[i].used && pool[i].base == base)
			return &pool[i];
	return NULL;
}

/* Each returns 0 when the layout is set up, -1 when the kernel refused it (skip), -2 when it misbehaved. */

static int st_merge_below_own(void)	/* consistent: a pool stack merged into the own one */
{
	unsigned long a = st_map(own_s0 - PAGE, 1, true), s = 0, e = 0;

	if (!a)
		return -1;
	addr_in_ss_vma(a, &s, &e);
	say("  info selftest: pool page %#lx is in the VMA %#lx-%#lx (own shadow stack %#lx-%#lx): %s",
	    a, s, e, own_s0, own_e0, e >= own_e0 ? "merged with it" : "not merged");
	return 0;
}

/*
 * A failed shrinking move: the tail is unmapped (consistent), or with normal_tail a
 * page of it is normal memory, as if the kernel had put something else there
 * (inconsistent: forget_unmapped() must count a failure).
 */
static int st_failed_mremap_how(bool normal_tail)
{
	unsigned long a = st_map(0, 16, true);
	void *rsv, *p;

	if (!a)
		return -1;
	/* the first 4 pages become a VMA of their own: the shrunk range spans two VMAs */
	if (madvise((void *)a, 4 * PAGE, MADV_DONTDUMP)) {
		say("  info selftest: madvise(DONTDUMP): %s", strerror(errno));
		return -1;
	}
	rsv = mmap(NULL, 8 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (rsv == MAP_FAILED)
		return -1;
	p = mremap((void *)a, 16 * PAGE, 8 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, rsv);
	note("mremap %#lx+16 pages -> 8 pages at %p = %p (%s)", a, rsv, p, p == MAP_FAILED ? strerror(errno) : "ok");
	if (p != MAP_FAILED || errno != EFAULT) {
		say("  FAIL selftest: mremap of a range that spans two VMAs = %p (%s), expected EFAULT",
		    p, p == MAP_FAILED ? strerror(errno) : "moved");
		return -2;
	}
	munmap(rsv, 8 * PAGE);
	if (normal_tail && mmap((void *)(a + 12 * PAGE), PAGE, PROT_READ | PROT_WRITE,
				MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED)
		return -1;
	after_failed_mremap(st_ent(a), 8 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED);
	return 0;
}

static int st_failed_mremap(void)
{
	return st_failed_mremap_how(false);
}

static int st_failed_mremap_normal(void)
{
	return st_failed_mremap_how(true);
}

static int st_lost_flag(void)		/* inconsistent: a believed page is normal memory */
{
	unsigned long a = st_map(0, 8, true);

	if (!a)
		return -1;
	/* what a kernel that lost VM_SHADOW_STACK on a split would leave: a normal page */
	if (mmap((void *)(a + 3 * PAGE), PAGE, PROT_READ | PROT_WRITE,
		 MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED)
		return -1;
	return 0;
}

static int st_unknown_ss(void)		/* inconsistent: a shadow stack the pool does not hold */
{
	return st_map(0, 4, false) ? 0 : -1;
}

static int st_foreign_in_own(void)	/* inconsistent: an unknown shadow stack merged into the own */
{
	return st_map(own_s0 - PAGE, 1, false) ? 0 : -1;
}

static int st_own_lost(void)		/* inconsistent: the own shadow stack's lowest page is normal */
{
	if (mmap((void *)own_s0, PAGE, PROT_READ | PROT_WRITE,
		 MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED)
		return -1;
	return 0;
}

static const struct {
	int (*setup)(void);
	bool consistent;
	const char *name;
} st_cases[] = {
	{ st_merge_below_own, true, "a pool shadow stack merged into the own one" },
	{ st_failed_mremap, true, "a failed shrinking mremap() unmapped the tail" },
	{ st_failed_mremap_normal, false, "a failed shrinking mremap() left normal memory in the tail" },
	{ st_lost_flag, false, "a believed page became normal memory (lost VM_SHADOW_STACK)" },
	{ st_unknown_ss, false, "a shadow stack the model does not know" },
	{ st_foreign_in_own, false, "an unknown shadow stack merged into the own one" },
	{ st_own_lost, false, "a page of the own shadow stack became normal memory" },
};

/* After the enabling arch_prctl: never returns. */
__attribute__((noreturn)) static void selftest_case_body(unsigned i)
{
	int r;

	/* the SSP of an empty shadow stack is its top, the end of its VMA: look below it */
	if (addr_in_ss_vma(read_ssp() - 1, &own_s0, &own_e0) != 1) {
		say("  FAIL selftest: no ss VMA holds the own SSP %#lx", read_ssp());
		_exit(2);
	}
	memset(pool, 0, sizeof(pool));
	r = st_cases[i].setup();
	if (r < 0)
		_exit(r == -1 ? 77 : 78);
	/* the failures counted on the way (forget_unmapped()) count too */
	_exit(check_beliefs(st_cases[i].name) || nfails ? 1 : 0);
}

/*
 * Each case in a child of this process (which has no shadow stack) that enables its own,
 * like a worker: a shadow stack inherited through fork() has a longer anon_vma chain,
 * and the kernel merges nothing into it, so no merge would be tried.
 */
__attribute__((noreturn)) static void selftest_case(unsigned i)
{
	long ret = arch_prctl_raw(ARCH_SHSTK_ENABLE, F_SHSTK);

	if (ret) {
		say("  FAIL selftest: ARCH_SHSTK_ENABLE(SHSTK): %s", errname(-ret));
		_exit(2);
	}
	selftest_case_body(i);
}

__attribute__((noreturn)) static void selftest(void)
{
	int wrong = 0, skipped = 0;

	for (unsigned i = 0; i < sizeof(st_cases) / sizeof(st_cases[0]); i++) {
		int st, r;
		pid_t pid = fork_child();

		if (pid == 0)
			selftest_case(i);
		if (pid < 0 || !wait_end(pid, "selftest child", &st) || !WIFEXITED(st)) {
			say("selftest: %s: the child did not exit (%s)", st_cases[i].name, pid < 0 ? "fork" : wstr(st));
			wrong++;
			continue;
		}
		r = WEXITSTATUS(st);
		if (r == 77) {
			say("selftest: %s: skipped, the kernel refused the layout", st_cases[i].name);
			skipped++;
		} else if (r == 78 || r > 1) {
			say("selftest: %s: WRONG, the layout could not be set up (%s)", st_cases[i].name, wstr(st));
			wrong++;
		} else {
			bool ok = (r == 0) == st_cases[i].consistent;

			say("selftest: %s: the check %s (%s layout): %s", st_cases[i].name, r ? "failed" : "passed",
			    st_cases[i].consistent ? "consistent" : "inconsistent", ok ? "ok" : "WRONG");
			wrong += !ok;
		}
	}
	say("RESULT: selftest %s (%d wrong, %d skipped)", wrong ? "failed" : "passed", wrong, skipped);
	_exit(wrong ? 1 : 0);
}

/* ------------------------------------------------------------ supervisor */

static const char thp_path[] = "/sys/kernel/mm/transparent_hugepage/enabled";
static const char thp_scan[] = "/sys/kernel/mm/transparent_hugepage/khugepaged/scan_sleep_millisecs";

static bool read_file(const char *p, char *buf, size_t n)
{
	int fd = open(p, O_RDONLY);
	ssize_t k;

	if (fd < 0)
		return false;
	k = read(fd, buf, n - 1);
	close(fd);
	if (k <= 0)
		return false;
	buf[k] = 0;
	while (k && buf[k - 1] == '\n')
		buf[--k] = 0;
	return true;
}

static bool write_file(const char *p, const char *v)
{
	int fd = open(p, O_WRONLY);
	bool ok;

	if (fd < 0)
		return false;
	ok = write(fd, v, strlen(v)) == (ssize_t)strlen(v);
	close(fd);
	return ok;
}

/* "always [madvise] never" -> "madvise" */
static void thp_mode(const char *line, char *out, size_t n)
{
	const char *a = strchr(line, '['), *b = a ? strchr(a, ']') : NULL;

	snprintf(out, n, "%.*s", a && b ? (int)(b - a - 1) : 0, a ? a + 1 : "");
}

/* A failed round: what the worker's threads were doing and its last operations. */
static void worker_report(pid_t pid)
{
	const struct diag *d = wdiag;

	for (int i = 0; i < NSLOT; i++) {
		int op = d->slot[i].op;

		if (!d->slot[i].tid)
			continue;
		if (op >= 0)
			say("  info worker %d thread %d: in %s (its operation %ld)", (int)pid, d->slot[i].tid,
			    ops[op].name, d->slot[i].n);
		else
			say("  info worker %d thread %d: %s (%ld operations)", (int)pid, d->slot[i].tid,
			    op == -2 ? "finished" : "between operations", d->slot[i].n);
	}
	say("  info worker %d: its last operations (oldest first; thread id, what):", (int)pid);
	print_trail(d, "");
}

static uint64_t env_u64(const char *name, uint64_t dflt)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : dflt;
}

int main(int argc, char **argv)
{
	uint64_t seed = env_u64("SHSTK_FUZZ_SEED", 0);
	double secs = env_u64("SHSTK_FUZZ_SECS", 120);
	long max_ops = env_u64("SHSTK_FUZZ_OPS", 100000);
	bool thp = env_u64("SHSTK_FUZZ_THP", 1);
	char thp_orig[128] = "", thp_mode_orig[32] = "", scan_orig[32] = "";
	long total_ops = 0;
	int rounds = 0, worker_sig = 0;
	double t0 = now(), end;
	pid_t self = getpid();

	setvbuf(stdout, NULL, _IONBF, 0);
	/* glibc's fatal messages ("*** stack smashing detected ***") to stderr, never /dev/tty */
	setenv("LIBC_FATAL_STDERR_", "1", 1);
	if (argc > 1 && !strcmp(argv[1], "selftest")) {
		require_hw();
		hang_secs = 20;
		selftest();
	}
	nops_p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	sentinel = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	wdiag = mmap(NULL, sizeof(*wdiag), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (nops_p == MAP_FAILED || sentinel == MAP_FAILED || wdiag == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	for (unsigned i = 0; i < PAGE / 8; i++)
		sentinel[i] = SENTINEL_WORD;
	hang_secs = env_u64("SHSTK_FUZZ_HANG", 60);
	if (getenv("SHSTK_FUZZ_INJECT")) {
		const char *v = getenv("SHSTK_FUZZ_INJECT");

		if (!strcmp(v, "worker-abort"))
			inject = INJECT_WORKER_ABORT;
		else if (!strcmp(v, "child-abort"))
			inject = INJECT_CHILD_ABORT;
		else if (*v) {
			say("shstk_fuzz: SHSTK_FUZZ_INJECT=%s: not worker-abort or child-abort", v);
			return 2;
		}
		if (inject)
			say("  info SHSTK_FUZZ_INJECT=%s: a test of the report, not a fuzz run", v);
	}
	max_threads = env_u64("SHSTK_FUZZ_THREADS", 3) > 3 ? 3 : env_u64("SHSTK_FUZZ_THREADS", 3);
	if (argc > 1)
		secs = strtod(argv[1], NULL);
	if (argc > 2)
		max_ops = strtol(argv[2], NULL, 0);
	if (!getenv("SHSTK_FUZZ_SEED") || !*getenv("SHSTK_FUZZ_SEED")) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		seed = (uint64_t)ts.tv_sec * 1000003u ^ ts.tv_nsec ^ (uint64_t)getpid() << 32;
	}
	require_hw();
	say("seed=%llu secs=%.0f ops=%ld hang=%.0f (reproduce: SHSTK_FUZZ_SEED=%llu)",
	    (unsigned long long)seed, secs, max_ops, hang_secs, (unsigned long long)seed);
	if (thp && read_file(thp_path, thp_orig, sizeof(thp_orig))) {
		thp_mode(thp_orig, thp_mode_orig, sizeof(thp_mode_orig));
		read_file(thp_scan, scan_orig, sizeof(scan_orig));
		write_file(thp_scan, "100");
	} else {
		thp = false;
	}
	end = t0 + secs;
	while (now() < end && total_ops < max_ops && !nfails) {
		struct rng r = { seed + 0x100000001b3ULL * (uint64_t)rounds };
		uint64_t wseed = rnext(&r);
		double left = end - now();
		int st;
		pid_t pid;

		if (thp) {
			const char *m = PICK(&r, ((const char *[]){ "always", "madvise", "never" }));

			if (!write_file(thp_path, m))
				say("  info cannot set THP to %s", m);
		}
		deadline = now() + (left < 20 ? left : 20);	/* each worker: at most 20 s */
		ops_budget = max_ops - total_ops < 400 ? max_ops - total_ops : 400;
		*nops_p = 0;
		memset(wdiag, 0, sizeof(*wdiag));
		pid = fork();
		if (pid == 0) {
			die_with_parent(self);
			worker(wseed, 2 + rn(&r, 3), 60 + rn(&r, 60));
		}
		if (pid < 0) {
			bad("fork: %s", strerror(errno));
			break;
		}
		double wend = deadline + hang_secs;

		for (;;) {
			pid_t w = waitpid(pid, &st, WNOHANG);

			if (w == pid)
				break;
			if (now() > wend) {
				bad("HANG: worker %d (round %d, seed %llu) still running %.0f s after its deadline",
				    (int)pid, rounds, (unsigned long long)wseed, hang_secs);
				report_tasks(pid);
				kill(pid, SIGKILL);
				worker_report(pid);
				goto done;
			}
			usleep(20000);
		}
		if (WIFSIGNALED(st)) {
			worker_sig++;
			bad("worker %d of round %d (seed %llu) died: %s", (int)pid, rounds, (unsigned long long)wseed,
			    wstr(st));
		} else if (WEXITSTATUS(st) != 0) {
			bad("worker %d of round %d (seed %llu): %s", (int)pid, rounds, (unsigned long long)wseed, wstr(st));
		}
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			worker_report(pid);
		total_ops += *nops_p;
		rounds++;
	}
done:
	if (thp) {
		write_file(thp_path, thp_mode_orig);
		if (*scan_orig)
			write_file(thp_scan, scan_orig);
	}
	if (sentinel_check("the last round"))
		print_trail(wdiag, " of the last worker");
	say("  info rounds=%d ops=%ld secs=%.1f worker-deaths=%d", rounds, total_ops,
	    now() - t0, worker_sig);
	if (nfails) {
		say("RESULT: %d failure(s); reproduce with SHSTK_FUZZ_SEED=%llu", nfails, (unsigned long long)seed);
		return 1;
	}
	say("RESULT: all checks passed (seed %llu)", (unsigned long long)seed);
	return 0;
}
