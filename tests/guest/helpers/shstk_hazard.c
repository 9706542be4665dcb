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
 *
 * Every case but regset needs shadow-stack hardware (the Bochs tier).
 */
#include "shstk.h"

#include <elf.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/ptrace.h>
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

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2) {
		fprintf(stderr, "usage: shstk_hazard regset|sigframe-fail|sigreturn-lock [N]|placement|thp-mprotect|mlock\n");
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
	fprintf(stderr, "shstk_hazard: unknown case '%s'\n", argv[1]);
	return 2;
}
