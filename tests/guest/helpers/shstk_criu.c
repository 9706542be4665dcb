// SPDX-License-Identifier: GPL-2.0
/*
 * shstk_criu - a process for CRIU to checkpoint and restore (tests/guest/criu.bats).
 *
 *   cetctl run --shstk -- shstk_criu serve DIR     (or --wrss: WRSS enabled too)
 *
 * It must be started with its shadow stack enabled (it refuses to run otherwise).
 * It becomes a session leader (so that CRIU dumps it without --shell-job), then builds
 * the state a checkpoint has to carry:
 *   - the main thread DEPTH calls deep, inside a SIGUSR2 handler (a signal frame and
 *     its token on the shadow stack), blocked in sigsuspend();
 *   - NTHREADS threads, each with its own depth, blocked in read() on a pipe;
 *   - a second shadow stack from map_shadow_stack() with a restore token (and, when
 *     WRSS is on, a pattern written with WRSS below it).
 * For each thread it records where it waits: SSP, the shadow-stack mapping around it,
 * a hash of the shadow stack from SSP to the end of the mapping, ARCH_SHSTK_STATUS and
 * /proc/thread-self/status; and every "ss" mapping of the process. Then it writes
 * DIR/ready and waits for SIGUSR1.
 *
 * The test dumps and restores it in between. On SIGUSR1 every thread records the same
 * things again at the same places and checks that they are identical, then the
 * threads and the main thread return through every frame (each level folds its depth
 * into a checksum the top compares with the closed form), and two forked children of
 * the restored process check that the restored shadow stacks still work: one pivots
 * onto the second shadow stack with RSTORSSP and makes a call there, one overwrites a
 * return address and must die with SIGSEGV/SEGV_CPERR. The same two children also run
 * before the checkpoint, so a failure after restore is not a failure of the test.
 *
 * Output (stdout, normally DIR/log): "  ok   "/"  FAIL "/"  info " lines, then
 * "RESULT: ..."; exit 0 when every check passed, 1 otherwise, 77 skipped (no shadow
 * stack). Lines "  info T<n> features pre=... post=..." and "locked pre=... post=..."
 * let the test compare what CRIU does not carry (see tests/guest/criu.bats).
 */
#include "shstk.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>

#define NTHREADS	2
#define DEPTH		96
#define SS2_SIZE	(4 * PAGE)
#define MAX_SS		64

struct snap {
	unsigned long ssp;		/* caller's SSP */
	unsigned long vstart, vend;	/* the ss mapping that holds it */
	unsigned long hash;		/* FNV-1a of [ssp, vend) */
	unsigned long words;
	unsigned long status;		/* ARCH_SHSTK_STATUS */
	char features[96], locked[96];	/* /proc/thread-self/status */
};

struct tstate {
	int id, depth;
	struct snap pre, post;
	unsigned long sum;		/* checksum returned through the frames */
	int fails;
	char log[4096];
};

static const char *dir;
static int release_pipe[2];
static atomic_int parked;
static volatile sig_atomic_t got_usr1;
static struct tstate ts[NTHREADS + 1];	/* [0] main thread */
static unsigned long ss2;		/* second shadow stack */
static unsigned long ss2_hash_pre;
static struct vma_info ss_pre[MAX_SS], ss_post[MAX_SS];
static int nss_pre, nss_post;

static unsigned long fnv(const unsigned long *p, unsigned long n)
{
	unsigned long h = 0xcbf29ce484222325UL;

	for (unsigned long i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3UL;
	}
	return h;
}

/* The state at the caller's SSP (read by the caller: same place, same value). */
static void take_snap(struct snap *s, unsigned long ssp)
{
	struct vma_info v[1024];
	int n = read_vmas(0, v, 1024);

	memset(s, 0, sizeof(*s));
	s->ssp = ssp;
	for (int i = 0; i < n; i++)
		if (v[i].ss && ssp >= v[i].start && ssp < v[i].end) {
			s->vstart = v[i].start;
			s->vend = v[i].end;
		}
	if (s->vend) {
		s->words = (s->vend - ssp) / 8;
		s->hash = fnv((const unsigned long *)ssp, s->words);
	}
	s->status = shstk_status();
	if (!status_field("/proc/thread-self/status", "x86_Thread_features", s->features,
			  sizeof(s->features)))
		strcpy(s->features, "(none)");
	if (!status_field("/proc/thread-self/status", "x86_Thread_features_locked", s->locked,
			  sizeof(s->locked)))
		strcpy(s->locked, "(none)");
}

/* checks into the thread's own buffer: threads must not interleave stdout lines */
__attribute__((format(printf, 3, 4)))
static void tcheck(struct tstate *t, bool ok, const char *fmt, ...)
{
	char buf[400];
	size_t len = strlen(t->log);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	snprintf(t->log + len, sizeof(t->log) - len, "  %s T%d %s\n", ok ? "ok  " : "FAIL", t->id, buf);
	if (!ok)
		t->fails++;
}

static void compare_snaps(struct tstate *t)
{
	const struct snap *a = &t->pre, *b = &t->post;

	tcheck(t, a->ssp && a->ssp == b->ssp, "SSP %#lx after restore (before %#lx)", b->ssp, a->ssp);
	tcheck(t, a->vend && a->vstart == b->vstart && a->vend == b->vend,
	       "shadow-stack mapping %#lx-%#lx after restore (before %#lx-%#lx)",
	       b->vstart, b->vend, a->vstart, a->vend);
	tcheck(t, a->words && a->words == b->words && a->hash == b->hash,
	       "shadow-stack contents above SSP: %lu words hash %#lx after restore (before %lu words %#lx)",
	       b->words, b->hash, a->words, a->hash);
	tcheck(t, (a->status & F_SHSTK) && (b->status & F_SHSTK),
	       "ARCH_SHSTK_STATUS has SHSTK after restore (%#lx, before %#lx)", b->status, a->status);
	tcheck(t, strstr(b->locked, "shstk") != NULL,
	       "shadow stack still locked after restore (locked: %s)", b->locked);
	snprintf(t->log + strlen(t->log), sizeof(t->log) - strlen(t->log),
		 "  info T%d features pre=%s post=%s\n  info T%d locked pre=%s post=%s\n"
		 "  info T%d status pre=%#lx post=%#lx\n",
		 t->id, a->features, b->features, t->id, a->locked, b->locked,
		 t->id, a->status, b->status);
}

/* ---- the threads ---- */

static void thread_park(struct tstate *t)
{
	char c;

	take_snap(&t->pre, read_ssp());
	atomic_fetch_add(&parked, 1);
	while (read(release_pipe[0], &c, 1) < 0 && errno == EINTR)
		;
	take_snap(&t->post, read_ssp());
	compare_snaps(t);
}

__attribute__((noinline)) static unsigned long walk(struct tstate *t, int d)
{
	unsigned long r;

	if (d == 0) {
		thread_park(t);
		r = 0;
	} else {
		r = walk(t, d - 1);
	}
	/* after the call: a return to the wrong frame would fold the wrong d in */
	asm volatile("" : "+r"(r));
	return r * 3 + (unsigned long)d;
}

static unsigned long walk_expected(int depth)
{
	unsigned long r = 0;

	for (int d = 0; d <= depth; d++)
		r = r * 3 + (unsigned long)d;
	return r;
}

static void *thread_main(void *arg)
{
	struct tstate *t = arg;

	t->sum = walk(t, t->depth);
	return NULL;
}

/* ---- children of the (restored) process ---- */

__attribute__((noinline)) static unsigned long leaf(unsigned long x)
{
	asm volatile("" : "+r"(x));
	return x * 7 + 1;
}

/* A child switches onto the second shadow stack (its restore token) and calls there. */
static void pivot_check(const char *when)
{
	pid_t p = fork();
	int st;

	if (p == 0) {
		unsigned long tok = ss2 + SS2_SIZE - 8, ssp;

		catch_faults_with_code();
		asm volatile("rstorssp (%0)" : : "r"(tok) : "memory");
		ssp = read_ssp();
		if (ssp < ss2 || ssp >= ss2 + SS2_SIZE)
			_exit(3);
		_exit(leaf(ssp) == ssp * 7 + 1 ? 0 : 4);
	}
	st = wait_child(p);
	check(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "%s: a child pivots onto the second shadow stack and calls there (%s)", when, wstr(st));
}

/* A child overwrites a return address: the shadow stack must stop it. */
static void rop_check(const char *when)
{
	pid_t p = fork();
	int st;

	if (p == 0) {
		catch_faults_with_code();
		corrupted_return();
		_exit(2);
	}
	st = wait_child(p);
	check(WIFEXITED(st) && WEXITSTATUS(st) == 100 + SEGV_CPERR_CODE,
	      "%s: a return-address overwrite dies with SIGSEGV/SEGV_CPERR (%s)", when, wstr(st));
}

static int collect_ss(struct vma_info *out)
{
	struct vma_info v[1024];
	int n = read_vmas(0, v, 1024), k = 0;

	for (int i = 0; i < n && k < MAX_SS; i++)
		if (v[i].ss)
			out[k++] = v[i];
	return k;
}

static void touch_file(const char *name)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0)
		close(fd);
}

/* ---- the main thread, inside its signal handler ---- */

static void on_usr1(int sig)
{
	(void)sig;
	got_usr1 = 1;
}

static void main_park(void)
{
	struct tstate *t = &ts[0];
	sigset_t wait_mask;

	take_snap(&t->pre, read_ssp());
	while (atomic_load(&parked) < NTHREADS)
		usleep(1000);
	nss_pre = collect_ss(ss_pre);
	for (int i = 0; i < nss_pre; i++)
		info("ss mapping before: %#lx-%#lx", ss_pre[i].start, ss_pre[i].end);
	info("checkpoint me: pid %d, %d threads parked", (int)getpid(), NTHREADS + 1);
	fflush(stdout);
	touch_file("ready");

	sigprocmask(SIG_BLOCK, NULL, &wait_mask);
	sigdelset(&wait_mask, SIGUSR1);
	while (!got_usr1)
		sigsuspend(&wait_mask);

	take_snap(&t->post, read_ssp());
	nss_post = collect_ss(ss_post);
	compare_snaps(t);
}

static void on_usr2(int sig)
{
	(void)sig;
	main_park();
}

__attribute__((noinline)) static unsigned long main_walk(int d)
{
	unsigned long r;

	if (d == 0) {
		raise(SIGUSR2);	/* its handler parks: a signal frame on the shadow stack */
		r = 0;
	} else {
		r = main_walk(d - 1);
	}
	asm volatile("" : "+r"(r));
	return r * 3 + (unsigned long)d;
}

static int serve(void)
{
	pthread_t th[NTHREADS];
	struct sigaction sa;
	unsigned long st = shstk_status();

	if (st == ~0UL || !(st & F_SHSTK))
		skip("the shadow stack is not enabled (start me with cetctl run --shstk)");
	if (setsid() < 0)
		info("setsid: %s (already a session leader?)", strerror(errno));
	info("pid %d, ARCH_SHSTK_STATUS %#lx", (int)getpid(), st);

	long r = map_shadow_stack(0, SS2_SIZE, SHADOW_STACK_SET_TOKEN);
	if (!check(r > 0, "map_shadow_stack(0, %lu, SET_TOKEN) -> %#lx", SS2_SIZE, (unsigned long)r))
		finish();
	ss2 = (unsigned long)r;
	if (st & F_WRSS) {
		/* a pattern below the token, written the only way user space can */
		for (unsigned long i = 0; i < 16; i++)
			wrss((unsigned long *)(ss2 + SS2_SIZE - 16 - 8 * i), 0x5a5a000000000000UL | i);
	}
	ss2_hash_pre = fnv((const unsigned long *)ss2, SS2_SIZE / 8);
	pivot_check("before the checkpoint");
	rop_check("before the checkpoint");

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_usr2;
	sigaction(SIGUSR2, &sa, NULL);
	if (pipe(release_pipe))
		return perror("pipe"), 1;

	for (int i = 0; i <= NTHREADS; i++) {
		ts[i].id = i;
		ts[i].depth = DEPTH + 7 * i;
	}
	for (int i = 1; i <= NTHREADS; i++)
		if (pthread_create(&th[i - 1], NULL, thread_main, &ts[i]))
			return perror("pthread_create"), 1;

	ts[0].sum = main_walk(ts[0].depth);	/* returns after SIGUSR1 */

	/* restored: release the threads, let them unwind */
	for (int i = 0; i < NTHREADS; i++)
		if (write(release_pipe[1], "g", 1) != 1)
			check(false, "releasing a thread: %s", strerror(errno));
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i <= NTHREADS; i++) {
		fputs(ts[i].log, stdout);
		t_fails += ts[i].fails;
		check(ts[i].sum == walk_expected(ts[i].depth),
		      "T%d returned through all %d frames (checksum %#lx, expected %#lx)",
		      i, ts[i].depth + 1, ts[i].sum, walk_expected(ts[i].depth));
	}

	/*
	 * Every mapping from before the checkpoint, at the same address with the
	 * same size. CRIU 4.2 leaves one more per restored non-main thread: the
	 * shadow stack the kernel gave the thread when CRIU's restorer cloned it,
	 * which the restorer switches away from and never unmaps.
	 */
	int found = 0, extra = 0;
	for (int i = 0; i < nss_post; i++) {
		bool was = false;

		for (int j = 0; j < nss_pre; j++)
			was |= ss_pre[j].start == ss_post[i].start && ss_pre[j].end == ss_post[i].end;
		found += was;
		if (!was) {
			extra++;
			info("ss mapping after:  %#lx-%#lx (new: %lu KiB)", ss_post[i].start,
			     ss_post[i].end, (ss_post[i].end - ss_post[i].start) / 1024);
		} else {
			info("ss mapping after:  %#lx-%#lx", ss_post[i].start, ss_post[i].end);
		}
	}
	check(nss_pre == NTHREADS + 2 && found == nss_pre,
	      "all %d shadow-stack mappings (%d threads + the second one) are back at the same addresses with the same sizes (%d found)",
	      nss_pre, NTHREADS + 1, found);
	check(extra == NTHREADS,
	      "%d new shadow-stack mapping(s), one per restored non-main thread (CRIU 4.2: the restorer's clone leaves it)",
	      extra);
	check(fnv((const unsigned long *)ss2, SS2_SIZE / 8) == ss2_hash_pre,
	      "the second shadow stack's contents are identical after restore");
	pivot_check("after restore");
	rop_check("after restore");
	finish();
}

int main(int argc, char **argv)
{
	if (argc != 3 || strcmp(argv[1], "serve")) {
		fprintf(stderr, "usage: %s serve DIR\n", argv[0]);
		return 2;
	}
	dir = argv[2];
	return serve();
}
