// SPDX-License-Identifier: GPL-2.0
/*
 * shstk_hazard - regression tests for the kernel bugs that a review against
 * mainline found in the series (issue 11). Each case is written so that the
 * bug, where present, shows as a failed check, a dead helper, a hung child or
 * an oops in the kernel log; never as a pass.
 *
 *   shstk_hazard regset          PTRACE_GET/SETREGSET with every note type and iov
 *                                size; note type 0 must be EINVAL (it oopsed: a hole
 *                                in x86_64_regsets[] divided by a zero size)
 *   shstk_hazard sigframe-fail   a signal frame that can not be written leaves SSP
 *                                where it was (SSP moved before the frame was written)
 *   shstk_hazard sigreturn-lock [N]   rt_sigreturn reading a token from a page that
 *                                faults while other threads queue for mmap_lock:
 *                                the task dies of SIGSEGV, never hangs in D state
 *   shstk_hazard placement       map_shadow_stack(0, ...) never puts a shadow stack
 *                                right above another mapping (its guard gap)
 *   shstk_hazard thp-mprotect    mprotect() of a shadow-stack huge page (it hit a
 *                                BUG_ON in change_huge_pmd())
 *   shstk_hazard mlock           mlock() of a shadow stack: ENOMEM, nothing faulted in
 *                                (forced populate faulted in whole shadow stacks)
 *   shstk_hazard iouring-core    core dump of a shadow-stack process with an io_uring
 *                                worker: no WARN (ssp_get() on the worker, which has no
 *                                shadow stack), and the worker's /proc status does not
 *                                claim shstk (issue 22, F1)
 *   shstk_hazard munmap-enomem   a thread exits after its shadow stack was replaced by a
 *                                larger mapping, at vm.max_map_count: the failed munmap
 *                                (ENOMEM) must not WARN (issue 22, F2)
 *   shstk_hazard clone-fail      clone() failing in copy_thread() (bad TLS) after the new
 *                                thread's shadow stack was mapped: nothing leaks (F3)
 *
 * Every case but regset needs shadow-stack hardware (the Bochs tier).
 */
#include "shstk.h"

#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <sched.h>
#include <pthread.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>

#ifndef NT_X86_XSTATE
#define NT_X86_XSTATE 0x202
#endif

/* ---------------------------------------------------------------- regset */

/*
 * Note types worth trying: 0 (the crash), the ones x86 knows, their
 * neighbours, and a few far away. Everything but the known ones must be EINVAL.
 */
static const unsigned long note_types[] = {
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0x10, 0x11,
	0x200, 0x201, 0x202, 0x203, 0x204, 0x205, 0x206, 0x207, 0x208,
	0x300, 0x400, 0x401, 0x46494c45, 0x46e62b7f, 0x53494749, 0x7fffffff,
	0x80000000UL, 0xffffffffUL, 0x100000000UL, ~0UL,
};

static const size_t iov_sizes[] = { 0, 1, 4, 7, 8, 9, 16, 64, 512, 4096, 65536 };

static bool known_type(unsigned long t)
{
	switch (t) {
	case NT_PRSTATUS:
	case NT_PRFPREG:
	case NT_X86_XSTATE:
	case NT_386_IOPERM:
	case NT_X86_SHSTK_REGSET:
		return true;
	}
	return false;
}

__attribute__((noreturn)) static void case_regset(void)
{
	static unsigned char buf[65536];
	unsigned long n = 0, unknown_ok = 0;
	pid_t pid;
	int st;

	require_kernel_support();
	pid = fork();
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGSTOP);
		_exit(0);
	}
	if (!check(pid > 0, "fork"))
		finish();
	waitpid(pid, &st, 0);
	if (!check(WIFSTOPPED(st), "tracee stopped (%s)", wstr(st)))
		finish();

	for (size_t i = 0; i < sizeof(note_types) / sizeof(note_types[0]); i++) {
		unsigned long t = note_types[i];

		for (size_t j = 0; j < sizeof(iov_sizes) / sizeof(iov_sizes[0]); j++) {
			struct iovec iov = { buf, iov_sizes[j] };
			long r;
			int e;

			memset(buf, 0, sizeof(buf));
			errno = 0;
			r = ptrace(PTRACE_GETREGSET, pid, (void *)t, &iov);
			e = errno;
			n++;
			if (!known_type(t)) {
				if (r == -1 && e == EINVAL)
					unknown_ok++;
				else
					check(false, "GETREGSET type %#lx size %zu -> %ld %s (EINVAL expected)",
					      t, iov_sizes[j], r, errname(e));
			}
			/* Writing back zeroes of the 1-word SSP set: ENODEV/EINVAL, never a crash */
			if (t == 0 || t == NT_X86_SHSTK_REGSET) {
				errno = 0;
				r = ptrace(PTRACE_SETREGSET, pid, (void *)t, &iov);
				e = errno;
				n++;
				if (t == 0)
					check(r == -1 && e == EINVAL, "SETREGSET type 0 size %zu -> %ld %s (EINVAL expected)",
					      iov_sizes[j], r, errname(e));
			}
		}
	}
	check(unknown_ok > 0, "%lu GETREGSET calls with unknown note types all failed with EINVAL", unknown_ok);

	/* Without shadow stack enabled in the tracee, the SSP set is not active. */
	{
		unsigned long ssp = 0;
		struct iovec iov = { &ssp, sizeof(ssp) };
		long r = ptrace(PTRACE_GETREGSET, pid, (void *)NT_X86_SHSTK_REGSET, &iov);

		check(r == -1 && errno == ENODEV, "GETREGSET NT_X86_SHSTK of a tracee without shadow stack -> %s (ENODEV expected)",
		      r == -1 ? errname(errno) : "success");
	}
	info("%lu regset calls made, the kernel survived them", n);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	finish();
}

/* ---------------------------------------------------------------- sigframe-fail */

static volatile sig_atomic_t segv_seen, segv_code;

static void segv_note(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	segv_seen = 1;
	segv_code = si->si_code;
}

static void usr1_never(int sig)
{
	(void)sig;
	_exit(4);	/* the frame could not be written: the handler must never run */
}

static pid_t self_pid, self_tid;

/* tgkill as one inline `syscall`; self_pid/self_tid must be set first. */
static inline __attribute__((always_inline)) void tgkill_self(int sig)
{
	long ret;
	/* no function calls from here to the asm: they would clobber these */
	register long a1 asm("rdi") = self_pid;
	register long a2 asm("rsi") = self_tid;
	register long a3 asm("rdx") = sig;

	asm volatile("syscall"
		     : "=a"(ret)
		     : "0"((long)SYS_tgkill), "r"(a1), "r"(a2), "r"(a3)
		     : "rcx", "r11", "memory", "cc");
	(void)ret;
}

static unsigned long ssp_before, ssp_after;

/* Called after ENABLE, so its return address is on the shadow stack. */
__attribute__((noinline)) static void deliver_unwritable_frame(void)
{
	ssp_before = read_ssp();
	tgkill_self(SIGUSR1);
	ssp_after = read_ssp();
	asm volatile("" : : : "memory");
}

__attribute__((noreturn)) static void sigframe_child(void)
{
	struct sigaction sa;
	stack_t alt;
	void *bad;

	/* An alternate stack the kernel can not write the frame to */
	bad = mmap(NULL, 64 * 1024, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (bad == MAP_FAILED)
		_exit(5);
	alt.ss_sp = bad;
	alt.ss_size = 64 * 1024;
	alt.ss_flags = 0;
	if (sigaltstack(&alt, NULL))
		_exit(5);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = usr1_never;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);

	/* The SIGSEGV of the failed delivery: handled once on the normal stack */
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = segv_note;
	sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
	sigaction(SIGSEGV, &sa, NULL);

	self_pid = getpid();
	self_tid = gettid();
	{
		long r = arch_prctl_raw(ARCH_SHSTK_ENABLE, F_SHSTK);

		if (r)
			_exit(6);
	}
	deliver_unwritable_frame();
	/* Reaching here means the return above found its address on the shadow stack */
	if (!segv_seen)
		_exit(7);
	_exit(ssp_before == ssp_after ? 0 : 8);
}

__attribute__((noreturn)) static void case_sigframe_fail(void)
{
	pid_t pid;
	int st;

	require_hw();
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		sigframe_child();
	st = wait_child(pid);
	switch (WIFEXITED(st) ? WEXITSTATUS(st) : -1) {
	case 0:
		check(true, "failed SIGUSR1 delivery -> SIGSEGV handled, SSP unchanged, the function returned normally");
		break;
	case 4:
		check(false, "the SIGUSR1 handler ran although its frame is on a PROT_NONE stack");
		break;
	case 5:
	case 6:
		check(false, "child set-up failed (%s)", wstr(st));
		break;
	case 7:
		check(false, "no SIGSEGV for the failed signal delivery");
		break;
	case 8:
		check(false, "SSP moved by a failed signal delivery (the return survived anyway)");
		break;
	default:
		check(false, "child %s: SSP left 16 bytes deep by the failed delivery makes the next RET fault (#CP)",
		      wstr(st));
	}
	finish();
}

/* ---------------------------------------------------------------- sigreturn-lock */

static volatile unsigned long token_page;

#define CHURN_SIZE (8UL << 20)

/*
 * Keep mmap_lock busy for writing: munmap() of a populated 8 MiB mapping
 * holds it for a long time, so with two of these threads one of them is
 * nearly always queued for it. rt_sigreturn then gets its read lock from
 * the queue with a writer behind it, and a fault that takes the lock again
 * from there (the old get_user()) waits behind that writer for ever.
 */
static void *mmap_writer(void *arg)
{
	(void)arg;
	for (;;) {
		void *p = mmap(NULL, CHURN_SIZE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

		if (p != MAP_FAILED)
			munmap(p, CHURN_SIZE);
	}
	return NULL;
}

static void usr1_unmap_token(int sig)
{
	(void)sig;
	/*
	 * The frame token is at token_page; this handler's own shadow stack
	 * entries are in the page below. Make the token's page fault for
	 * rt_sigreturn, which reads it with mmap_lock held.
	 */
	mprotect((void *)token_page, PAGE, PROT_NONE);
}

/* Recurse until the signal token lands at the start of a page, then raise. */
__attribute__((noinline)) static int raise_at_page_boundary(int depth)
{
	unsigned long ssp = read_ssp();
	int r;

	if (depth > 2048)
		return -1;
	if (((ssp - 8) & (PAGE - 1)) == 0) {
		token_page = ssp - 8;
		tgkill_self(SIGUSR1);
		return 0;
	}
	r = raise_at_page_boundary(depth + 1);
	asm volatile("" : : : "memory");
	return r;
}

__attribute__((noreturn)) static void sigreturn_child(void)
{
	struct sigaction sa;
	pthread_t th;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = usr1_unmap_token;
	sigaction(SIGUSR1, &sa, NULL);
	self_pid = getpid();
	self_tid = gettid();
	if (arch_prctl_raw(ARCH_SHSTK_ENABLE, F_SHSTK))
		_exit(6);
	for (int i = 0; i < 2; i++)
		if (pthread_create(&th, NULL, mmap_writer, NULL))
			_exit(5);
	usleep(2000);
	raise_at_page_boundary(0);
	_exit(3);	/* rt_sigreturn accepted a frame it could not read */
}

/* Wait for a child up to ms milliseconds: 1 and *st set when it ended, 0 if not. */
static int wait_ms(pid_t pid, int *st, int ms)
{
	for (int i = 0; i < ms; i++) {
		pid_t r = waitpid(pid, st, WNOHANG);

		if (r == pid)
			return 1;
		usleep(1000);
	}
	return 0;
}

static char proc_state(pid_t pid, char *wchan, size_t wsz)
{
	char path[64], buf[512], *p;
	int fd;
	ssize_t n;

	wchan[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/wchan", (int)pid, (int)pid);
	fd = open(path, O_RDONLY);
	if (fd >= 0) {
		n = read(fd, wchan, wsz - 1);
		wchan[n > 0 ? n : 0] = 0;
		close(fd);
	}
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return '?';
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return '?';
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] && p[2] ? p[2] : '?';
}

__attribute__((noreturn)) static void case_sigreturn_lock(int attempts)
{
	int segv = 0, hung = 0, other = 0, i;

	require_hw();
	for (i = 0; i < attempts; i++) {
		pid_t pid;
		int st = 0;

		fflush(stdout);
		pid = fork();
		if (pid == 0)
			sigreturn_child();
		if (!wait_ms(pid, &st, 5000)) {
			char wchan[128];
			char s = proc_state(pid, wchan, sizeof(wchan));

			hung++;
			check(false, "attempt %d: child %d stuck for 5 s in state %c (wchan %s): rt_sigreturn deadlocked on mmap_lock",
			      i, (int)pid, s, wchan[0] ? wchan : "?");
			kill(pid, SIGKILL);
			if (!wait_ms(pid, &st, 10000))
				check(false, "child %d did not even die of SIGKILL", (int)pid);
			if (hung >= 3) {
				i++;
				break;
			}
			continue;
		}
		if (WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV) {
			segv++;
		} else {
			other++;
			check(false, "attempt %d: child %s (SIGSEGV for the unreadable frame expected)", i, wstr(st));
		}
	}
	info("%d attempts: %d SIGSEGV as expected, %d hung, %d other", i, segv, hung, other);
	check(hung == 0 && other == 0, "rt_sigreturn with an unreadable token and mmap_lock contention: never hangs");
	finish();
}

/* ---------------------------------------------------------------- placement */

__attribute__((noreturn)) static void case_placement(void)
{
	unsigned long area, mapped[4096];
	int n = 0, bad = 0;
	void *p;

	require_hw();
	p = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!check(p != MAP_FAILED, "mmap 4 pages"))
		finish();
	munmap(p, 4 * PAGE);
	area = (unsigned long)p;
	/* One normal page at the bottom of the free hole, three free pages above it */
	p = mmap((void *)area, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (!check(p == (void *)area, "one normal page at %#lx", area))
		finish();

	/*
	 * Let map_shadow_stack() pick addresses (top-down) until it has gone
	 * below the normal page. None may be right above it: that page
	 * would be the new shadow stack's guard gap.
	 */
	while (n < 4096) {
		long a = map_shadow_stack(0, PAGE, 0);

		if (a < 0) {
			check(false, "map_shadow_stack(0, 4096, 0) -> %s", errname(-a));
			break;
		}
		mapped[n++] = a;
		if ((unsigned long)a == area + PAGE) {
			bad = 1;
			check(false, "new shadow stack at %#lx: right above the normal page at %#lx, in its guard gap",
			      (unsigned long)a, area);
			break;
		}
		if ((unsigned long)a < area)
			break;
	}
	if (!bad)
		check(n > 0 && mapped[n - 1] < area,
		      "%d shadow stacks placed down to below %#lx, none in the page above it", n, area);
	for (int i = 0; i < n; i++)
		munmap((void *)mapped[i], PAGE);
	munmap((void *)area, PAGE);
	finish();
}

/* ---------------------------------------------------------------- thp-mprotect */

#define HPAGE (2UL << 20)

/* A "Field: N kB" line of the smaps entry of the VMA holding @addr; -1 if none. */
static long smaps_kb(unsigned long addr, const char *field)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	size_t fl = strlen(field);
	bool in = false;
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e;

		if (sscanf(line, "%lx-%lx ", &s, &e) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = addr >= s && addr < e;
			continue;
		}
		if (in && !strncmp(line, field, fl) && line[fl] == ':' &&
		    sscanf(line + fl + 1, "%ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

static bool thp_always(void)
{
	int fd = open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDWR);
	char buf[128] = "";
	ssize_t n;

	if (fd < 0)
		return false;
	n = write(fd, "always", 6);
	lseek(fd, 0, SEEK_SET);
	if (read(fd, buf, sizeof(buf) - 1) < 0)
		buf[0] = 0;
	close(fd);
	return n == 6 && strstr(buf, "[always]");
}

__attribute__((noreturn)) static void case_thp_mprotect(void)
{
	unsigned long ss, huge;
	long r, kb;

	require_hw();
	if (!thp_always())
		skip("transparent huge pages can not be set to 'always' (no CONFIG_TRANSPARENT_HUGEPAGE?)");

	ENABLE_SHSTK_OR_SKIP();
	ENABLE_WRSS_OR_FAIL();
	r = map_shadow_stack(0, 2 * HPAGE, 0);
	if (!check(r > 0, "map_shadow_stack 4 MiB -> %s", r > 0 ? "mapped" : errname(-r)))
		finish();
	ss = r;
	huge = (ss + HPAGE - 1) & ~(HPAGE - 1);
	/* A shadow-stack write fault on a 2 MiB aligned, fully covered range: a THP */
	wrss((unsigned long *)huge, 0x1111);
	kb = smaps_kb(huge, "AnonHugePages");
	info("shadow stack %#lx-%#lx, huge range %#lx, AnonHugePages %ld kB", ss, ss + 2 * HPAGE, huge, kb);
	if (kb < 2048)
		skip("no huge page was made for the shadow stack (AnonHugePages %ld kB)", kb);

	/* The old change_huge_pmd() hit its BUG_ON() here */
	r = mprotect((void *)huge, HPAGE, PROT_READ);
	check(r == 0, "mprotect(PROT_READ) of the shadow-stack huge page -> %s", r ? errname(errno) : "0");
	check(*(volatile unsigned long *)huge == 0x1111, "the huge page still reads what WRSS wrote");
	r = mprotect((void *)huge, HPAGE, PROT_READ | PROT_WRITE);
	check(r == 0, "mprotect(PROT_READ|PROT_WRITE) back -> %s", r ? errname(errno) : "0");
	wrss((unsigned long *)huge + 1, 0x2222);
	check(((volatile unsigned long *)huge)[1] == 0x2222, "WRSS writes the huge page again");
	check(addr_in_ss_vma(huge, NULL, NULL) == 1, "the range is still a shadow-stack VMA (ss)");
	finish();
}

/* ---------------------------------------------------------------- mlock */

#define MLOCK_SS_SIZE (64UL << 20)

__attribute__((noreturn)) static void case_mlock(void)
{
	long ss, r, kb;

	require_hw();
	ss = map_shadow_stack(0, MLOCK_SS_SIZE, 0);
	if (!check(ss > 0, "map_shadow_stack 64 MiB -> %s", ss > 0 ? "mapped" : errname(-ss)))
		finish();
	/*
	 * mlock() populates with a write fault; forced, it made every page of
	 * the shadow stack present (6.1 populate uses FOLL_FORCE). Mainline
	 * refuses: ENOMEM.
	 */
	r = mlock((void *)ss, MLOCK_SS_SIZE);
	check(r == -1 && errno == ENOMEM, "mlock of a shadow stack -> %s (ENOMEM expected, as mainline)",
	      r ? errname(errno) : "0");
	munlock((void *)ss, MLOCK_SS_SIZE);
	kb = smaps_kb(ss, "Rss");
	check(kb >= 0 && kb < 1024, "the shadow stack was not faulted in (Rss %ld kB of 65536)", kb);
	/* mlockall() skips what it cannot populate, and must not fault it in either */
	r = mlockall(MCL_CURRENT);
	check(r == 0, "mlockall(MCL_CURRENT) -> %s", r ? errname(errno) : "0");
	kb = smaps_kb(ss, "Rss");
	check(kb >= 0 && kb < 1024, "after mlockall the shadow stack is still not faulted in (Rss %ld kB)", kb);
	munlockall();
	munmap((void *)ss, MLOCK_SS_SIZE);
	finish();
}

/* ---------------------------------------------------------------- kernel log */

/*
 * The bugs below show as a WARN in the kernel log, not as a wrong result.
 * kmsg_open() marks the end of the log; kmsg_check() fails on every WARNING,
 * BUG or Oops logged after the mark. /dev/kmsg is root's: the Bochs tier runs
 * the suites as root.
 */
static int kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);

	if (!check(fd >= 0, "open /dev/kmsg to watch the kernel log (%s)", fd >= 0 ? "ok" : errname(errno)))
		return -1;
	lseek(fd, 0, SEEK_END);
	return fd;
}

static void kmsg_check(int fd, const char *what)
{
	char rec[2048];
	int bad = 0;

	if (fd < 0)
		return;
	for (;;) {
		ssize_t n = read(fd, rec, sizeof(rec) - 1);
		char *msg;

		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten records: keep reading */
		if (n <= 0)
			break;
		rec[n] = 0;
		msg = strchr(rec, ';');
		msg = msg ? msg + 1 : rec;
		msg[strcspn(msg, "\n")] = 0;
		if (strstr(msg, "WARNING:") || strstr(msg, "BUG:") || strstr(msg, "Oops")) {
			bad++;
			check(false, "kernel log after %s: %s", what, msg);
		}
	}
	close(fd);
	check(bad == 0, "no WARNING, BUG or Oops in the kernel log after %s", what);
}

/* ---------------------------------------------------------------- iouring-core */

static int sync_pipe[2], go_pipe[2];

/* A read that io_uring must hand to an io-wq worker (IOSQE_ASYNC), blocking there. */
static int start_io_worker(int rfd)
{
	static char buf[16];
	struct io_uring_params p;
	struct io_uring_sqe *sqes;
	unsigned int *sq_tail, *sq_array, *sq_mask;
	char *sq;
	int ring;
	long r;

	memset(&p, 0, sizeof(p));
	ring = syscall(__NR_io_uring_setup, 4, &p);
	if (ring < 0)
		return -errno;
	sq = mmap(NULL, p.sq_off.array + p.sq_entries * sizeof(unsigned int),
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQ_RING);
	sqes = mmap(NULL, p.sq_entries * sizeof(*sqes), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQES);
	if (sq == MAP_FAILED || sqes == MAP_FAILED)
		return -errno;
	sq_tail = (unsigned int *)(sq + p.sq_off.tail);
	sq_mask = (unsigned int *)(sq + p.sq_off.ring_mask);
	sq_array = (unsigned int *)(sq + p.sq_off.array);

	memset(&sqes[0], 0, sizeof(sqes[0]));
	sqes[0].opcode = IORING_OP_READ;
	sqes[0].flags = IOSQE_ASYNC;
	sqes[0].fd = rfd;
	sqes[0].addr = (unsigned long)buf;
	sqes[0].len = sizeof(buf);
	sqes[0].off = -1;
	sq_array[*sq_tail & *sq_mask] = 0;
	__atomic_store_n(sq_tail, *sq_tail + 1, __ATOMIC_RELEASE);
	r = syscall(__NR_io_uring_enter, ring, 1, 0, 0, NULL, 0);
	return r == 1 ? ring : (r < 0 ? -errno : -EIO);
}

static int count_tasks(pid_t pid)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return -1;
	while ((d = readdir(dir)))
		n += d->d_name[0] != '.';
	closedir(dir);
	return n;
}

__attribute__((noreturn)) static void iouring_child(void)
{
	struct rlimit rl = { 64UL << 20, 64UL << 20 };
	int rfd[2], r;
	char c = 0;

	setrlimit(RLIMIT_CORE, &rl);
	if (pipe(rfd))
		_exit(5);
	if (arch_prctl_raw(ARCH_SHSTK_ENABLE, F_SHSTK))
		_exit(6);
	r = start_io_worker(rfd[0]);
	if (r < 0)
		_exit(r == -ENOSYS ? 9 : 5);
	/* the worker is created on the first queued work; give it up to 2 s */
	for (int i = 0; i < 200 && count_tasks(getpid()) < 2; i++)
		usleep(10000);
	if (count_tasks(getpid()) < 2)
		_exit(10);
	if (write(sync_pipe[1], &c, 1) != 1)
		_exit(5);
	/* the parent looks at the worker, then kills us with SIGQUIT: a core dump */
	if (read(go_pipe[0], &c, 1) < 0)
		_exit(5);
	_exit(11);
}

/* The features line of every task of pid but the main thread; 1 if any claims shstk. */
static int worker_claims_shstk(pid_t pid, int *workers)
{
	char path[384], comm[64], feat[128];
	struct dirent *d;
	DIR *dir;
	int claims = 0;

	*workers = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.' || atoi(d->d_name) == pid)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/status", (int)pid, d->d_name);
		if (!status_field(path, "Name", comm, sizeof(comm)))
			snprintf(comm, sizeof(comm), "?");
		if (!status_field(path, "x86_Thread_features", feat, sizeof(feat)))
			snprintf(feat, sizeof(feat), "(no line)");
		info("task %s (%s): x86_Thread_features: %s", d->d_name, comm, feat);
		(*workers)++;
		if (strstr(feat, "shstk"))
			claims = 1;
	}
	closedir(dir);
	return claims;
}

static bool write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_TRUNC);
	bool ok;

	if (fd < 0)
		return false;
	ok = write(fd, val, strlen(val)) == (ssize_t)strlen(val);
	close(fd);
	return ok;
}

static bool read_file(const char *path, char *buf, size_t sz)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, buf, sz - 1);
	close(fd);
	if (n < 0)
		return false;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return true;
}

__attribute__((noreturn)) static void case_iouring_core(void)
{
	char dir[] = "/tmp/shstk-core.XXXXXX", pattern[256], old_pattern[256], main_feat[128], path[128];
	int kfd, st, workers, claims;
	struct stat sb;
	pid_t pid;
	char c = 0;

	require_hw();
	if (!mkdtemp(dir) || !read_file("/proc/sys/kernel/core_pattern", old_pattern, sizeof(old_pattern)))
		skip("no temporary directory or no /proc/sys/kernel/core_pattern (CONFIG_COREDUMP?)");
	if (pipe(sync_pipe) || pipe(go_pipe)) {
		check(false, "pipe: %s", errname(errno));
		finish();
	}
	/* From here on every path restores kernel.core_pattern */
	snprintf(pattern, sizeof(pattern), "%s/core", dir);
	if (!write_file("/proc/sys/kernel/core_pattern", pattern))
		skip("cannot set kernel.core_pattern (not root?)");
	kfd = kmsg_open();
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		iouring_child();
	close(sync_pipe[1]);
	if (read(sync_pipe[0], &c, 1) != 1) {
		st = wait_child(pid);
		write_file("/proc/sys/kernel/core_pattern", old_pattern);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 9)
			skip("kernel without io_uring (io_uring_setup: ENOSYS)");
		check(false, "child set-up failed: %s (10: no io worker appeared)", wstr(st));
		finish();
	}
	/* The main thread runs on a shadow stack; its io worker has none */
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	status_field(path, "x86_Thread_features", main_feat, sizeof(main_feat));
	check(strstr(main_feat, "shstk") != NULL, "main thread: x86_Thread_features: %s", main_feat);
	claims = worker_claims_shstk(pid, &workers);
	check(workers >= 1 && claims == 0,
	      "%d io worker(s); none claims shstk in /proc/PID/task/TID/status (it has no shadow stack)", workers);

	/* The core dump writes the SSP note of every thread that has shadow stack active */
	kill(pid, SIGQUIT);
	st = wait_child(pid);
	write_file("/proc/sys/kernel/core_pattern", old_pattern);
	check(WIFSIGNALED(st) && WTERMSIG(st) == SIGQUIT && WCOREDUMP(st),
	      "child %s%s (SIGQUIT with a core dump expected)", wstr(st), WCOREDUMP(st) ? ", core dumped" : "");
	/* "core", or "core.PID" with kernel.core_uses_pid */
	snprintf(path, sizeof(path), "%s/core", dir);
	if (stat(path, &sb))
		snprintf(path, sizeof(path), "%s/core.%d", dir, (int)pid);
	check(stat(path, &sb) == 0 && sb.st_size > 0, "core file %s written (%ld bytes)", path,
	      stat(path, &sb) == 0 ? (long)sb.st_size : -1L);
	unlink(path);
	rmdir(dir);
	kmsg_check(kfd, "the core dump of a shadow-stack process with an io worker");
	finish();
}

/* ---------------------------------------------------------------- munmap-enomem */

static volatile int t_ready, t_go;
static volatile unsigned long t_ssp;

static inline __attribute__((always_inline)) long raw_syscall3(long nr, long a, long b, long c)
{
	long ret;
	register long a1 asm("rdi") = a;
	register long a2 asm("rsi") = b;
	register long a3 asm("rdx") = c;

	asm volatile("syscall"
		     : "=a"(ret)
		     : "0"(nr), "r"(a1), "r"(a2), "r"(a3)
		     : "rcx", "r11", "memory", "cc");
	return ret;
}

/*
 * A thread whose shadow stack the main thread replaces: from then on it must
 * neither call nor return (both use the shadow stack), so it waits with inline
 * futex calls and ends with an inline exit.
 */
static void *enomem_thread(void *arg)
{
	(void)arg;
	t_ssp = read_ssp();
	t_ready = 1;
	while (!t_go)
		raw_syscall3(SYS_futex, (long)&t_go, 0 /* FUTEX_WAIT */, 0);
	for (;;)
		raw_syscall3(SYS_exit, 0, 0, 0);
	return NULL;
}

static int count_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += !strstr(line, "[vsyscall]");
	fclose(f);
	return n;
}

/* The page at addr is unmapped, or mapped ---p (a guard page). */
static bool page_free_or_prot_none(unsigned long addr)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512], perms[8];
	bool ok = true;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e;

		if (sscanf(line, "%lx-%lx %7s", &s, &e, perms) == 3 && addr >= s && addr < e) {
			ok = !strcmp(perms, "---p");
			break;
		}
	}
	fclose(f);
	return ok;
}

__attribute__((noreturn)) static void enomem_child(void)
{
	unsigned long start, end;
	char val[32];
	pthread_t th;
	int n, filled = 0;
	void *p;

	ENABLE_SHSTK_OR_SKIP();
	if (pthread_create(&th, NULL, enomem_thread, NULL)) {
		check(false, "pthread_create: %s", errname(errno));
		finish();
	}
	while (!t_ready)
		usleep(1000);
	if (!check(addr_in_ss_vma(t_ssp - 8, &start, &end) == 1, "the thread's SSP %#lx is in an ss VMA", t_ssp))
		finish();
	info("thread shadow stack %#lx-%#lx", start, end);
	/*
	 * munmap() only needs a new VMA, and so only fails at the limit, when
	 * the range is strictly inside a VMA: the replacement must reach past
	 * both ends. Below is the shadow stack's guard gap (free); above is
	 * the guard page of the thread's stack that glibc mapped just before
	 * (PROT_NONE), or nothing.
	 */
	p = mmap((void *)(start - PAGE), PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (!check(p == (void *)(start - PAGE), "the page below the thread's shadow stack is free"))
		finish();
	if (!check(page_free_or_prot_none(end), "the page above it (%#lx) is free or PROT_NONE", end))
		finish();
	/* One normal mapping, a page larger at each end, over the shadow stack */
	p = mmap((void *)(start - PAGE), end - start + 2 * PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (!check(p == (void *)(start - PAGE), "shadow stack replaced by one larger normal mapping"))
		finish();
	/* Unmapping the old range now splits a VMA: let no split fit under the limit */
	n = count_maps();
	snprintf(val, sizeof(val), "%d", n + 8);
	if (!check(write_file("/proc/sys/vm/max_map_count", val), "vm.max_map_count = %s", val))
		finish();
	for (int i = 0; i < 64; i++) {
		p = mmap(NULL, PAGE, i & 1 ? PROT_READ : PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			break;
		filled++;
	}
	check(p == MAP_FAILED && errno == ENOMEM, "%d more mappings, then mmap: ENOMEM (at vm.max_map_count)", filled);
	/* The thread exits: the kernel unmaps its shadow stack range, and can not */
	t_go = 1;
	raw_syscall3(SYS_futex, (long)&t_go, 1 /* FUTEX_WAKE */, 1);
	pthread_join(th, NULL);
	check(true, "the thread exited");
	info("its old shadow-stack range is %s", addr_in_ss_vma(start, NULL, NULL) == 0 ? "still mapped (normal memory)" :
	     addr_in_ss_vma(start, NULL, NULL) < 0 ? "unmapped" : "a shadow stack again?");
	finish();
}

__attribute__((noreturn)) static void case_munmap_enomem(void)
{
	char old[32];
	int kfd, st;
	pid_t pid;

	require_hw();
	if (!read_file("/proc/sys/vm/max_map_count", old, sizeof(old)))
		skip("no /proc/sys/vm/max_map_count");
	kfd = kmsg_open();
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		enomem_child();
	st = wait_child(pid);
	write_file("/proc/sys/vm/max_map_count", old);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
		skip("see above");
	check(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child %s", wstr(st));
	kmsg_check(kfd, "a thread exit whose shadow-stack munmap failed with ENOMEM");
	finish();
}

/* ---------------------------------------------------------------- clone-fail */

/* Shadow-stack VMAs of this process: how many and how many bytes. */
static int ss_usage(unsigned long *bytes)
{
	struct vma_info v[1024];
	int n = read_vmas(0, v, 1024), c = 0;

	*bytes = 0;
	for (int i = 0; i < n; i++)
		if (v[i].ss) {
			c++;
			*bytes += v[i].end - v[i].start;
		}
	return n < 0 ? -1 : c;
}

/* clone() as one inline `syscall`; a child that should not exist exits at once. */
static inline __attribute__((always_inline)) long raw_clone(unsigned long flags, void *stack, unsigned long tls)
{
	long ret;
	register long a1 asm("rdi") = flags;
	register long a2 asm("rsi") = (long)stack;
	register long a3 asm("rdx") = 0;
	register long a4 asm("r10") = 0;
	register long a5 asm("r8") = tls;

	asm volatile("syscall\n\t"
		     "test %%rax, %%rax\n\t"
		     "jnz 1f\n\t"
		     "mov %[exit], %%eax\n\t"
		     "xor %%edi, %%edi\n\t"
		     "syscall\n\t"
		     "1:"
		     : "=a"(ret)
		     : "0"((long)SYS_clone), "r"(a1), "r"(a2), "r"(a3), "r"(a4), "r"(a5), [exit] "i"(SYS_exit)
		     : "rcx", "r11", "memory", "cc");
	return ret;
}

__attribute__((noreturn)) static void case_clone_fail(void)
{
	const unsigned long flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
				    CLONE_THREAD | CLONE_SYSVSEM | CLONE_SETTLS;
	unsigned long before_b, after_b;
	int before, after, eperm = 0;
	static char stack[16384] __attribute__((aligned(16)));

	require_hw();
	ENABLE_SHSTK_OR_SKIP();
	before = ss_usage(&before_b);
	/* A non-canonical TLS: copy_thread() fails in set_new_tls(), after the shadow stack */
	for (int i = 0; i < 3; i++) {
		long r = raw_clone(flags, stack + sizeof(stack), 1UL << 63);

		eperm += r == -EPERM;
		if (r >= 0)
			check(false, "clone with a non-canonical TLS made thread %ld", r);
	}
	check(eperm == 3, "3 clone(CLONE_VM|CLONE_THREAD|CLONE_SETTLS) with a non-canonical TLS -> EPERM (%d did)", eperm);
	after = ss_usage(&after_b);
	check(after == before && after_b == before_b,
	      "shadow-stack VMAs before %d (%lu kB), after the failed clones %d (%lu kB): nothing leaked",
	      before, before_b >> 10, after, after_b >> 10);
	finish();
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2) {
		fprintf(stderr, "usage: shstk_hazard regset|sigframe-fail|sigreturn-lock [N]|placement|thp-mprotect|mlock|\n"
			"       iouring-core|munmap-enomem|clone-fail\n");
		return 2;
	}
	if (!strcmp(argv[1], "regset"))
		case_regset();
	if (!strcmp(argv[1], "sigframe-fail"))
		case_sigframe_fail();
	if (!strcmp(argv[1], "sigreturn-lock"))
		case_sigreturn_lock(argc > 2 ? atoi(argv[2]) : 50);
	if (!strcmp(argv[1], "placement"))
		case_placement();
	if (!strcmp(argv[1], "thp-mprotect"))
		case_thp_mprotect();
	if (!strcmp(argv[1], "mlock"))
		case_mlock();
	if (!strcmp(argv[1], "iouring-core"))
		case_iouring_core();
	if (!strcmp(argv[1], "munmap-enomem"))
		case_munmap_enomem();
	if (!strcmp(argv[1], "clone-fail"))
		case_clone_fail();
	fprintf(stderr, "shstk_hazard: unknown case '%s'\n", argv[1]);
	return 2;
}
