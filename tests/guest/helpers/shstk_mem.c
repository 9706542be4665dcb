// SPDX-License-Identifier: GPL-2.0
/*
 * shstk_mem - shadow-stack memory: map_shadow_stack, smaps, stores, GUP, ptrace
 * PEEK/POKE, mprotect, MADV_DONTNEED, userfaultfd, guard gaps.
 *
 *   shstk_mem map-nohw        map_shadow_stack without hardware: EOPNOTSUPP
 *   shstk_mem map             token / no token / fixed address / overlap / errnos
 *   shstk_mem smaps           `ss` in VmFlags exactly on shadow-stack VMAs
 *   shstk_mem store           normal stores (user and kernel copy_to_user) fault
 *   shstk_mem gup             /proc/self/mem (FOLL_FORCE) vs process_vm_writev
 *   shstk_mem peekpoke        PTRACE_PEEKDATA/POKEDATA on a tracee's shadow stack
 *   shstk_mem mprotect        PROT_READ makes it read-only for shadow-stack writes too
 *   shstk_mem madvise         MADV_DONTNEED zaps, the next access re-faults a ss page
 *   shstk_mem uffd works|refused   userfaultfd MISSING registration on a shadow stack
 *   shstk_mem guard           no mapping is placed in the page below a shadow stack
 *
 * Facts follow mainline v6.6 (arch/x86/kernel/shstk.c, mm/gup.c, test_shadow_stack.c).
 */
#include "shstk.h"

#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

#define SS_SIZE (16 * PAGE)

/* An unused, page-aligned area of `size` bytes above 4 GiB (mapped then unmapped). */
static unsigned long free_area(unsigned long size)
{
	void *p = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return 0;
	munmap(p, size);
	return (unsigned long)p;
}

/* Run fn(arg) in a child; returns its wait status. */
static int in_child(void (*fn)(unsigned long), unsigned long arg)
{
	pid_t pid = fork();

	if (pid == 0) {
		catch_faults_with_code();
		fn(arg);
		_exit(0);
	}
	return wait_child(pid);
}

static bool died_with_code(int st, int want, const char *what)
{
	return check(WIFEXITED(st) && WEXITSTATUS(st) == want, "%s (%s; %d expected)", what, wstr(st), want);
}

static void child_store(unsigned long addr)
{
	*(volatile unsigned long *)addr = 0x1234;
}

static void child_wrss(unsigned long addr)
{
	wrss((unsigned long *)addr, 0x5678);
}

static bool is_ss(unsigned long addr)
{
	return addr_in_ss_vma(addr, NULL, NULL) == 1;
}

/* ---------------------------------------------------------------- map-nohw */
__attribute__((noreturn)) static void case_map_nohw(void)
{
	require_no_hw();
	check_ret(map_shadow_stack(0, PAGE, 0), EOPNOTSUPP, "map_shadow_stack(0, 4096, 0)");
	check_ret(map_shadow_stack(0, SS_SIZE, SHADOW_STACK_SET_TOKEN), EOPNOTSUPP, "map_shadow_stack with token");
	check_ret(map_shadow_stack(0, PAGE, 2), EOPNOTSUPP, "map_shadow_stack bad flags (support is checked first)");
	check(count_ss_vmas(0) == 0, "no ss VMA exists");
	finish();
}

/* ---------------------------------------------------------------- map */
__attribute__((noreturn)) static void case_map(void)
{
	unsigned long a, b, area, s = 0, e = 0;
	long r;

	require_hw();
	/* without a token: zeroed, page aligned, above 4 GiB, ss VMA of exactly that size */
	r = map_shadow_stack(0, SS_SIZE, 0);
	if (!check(r > 0, "map_shadow_stack(0, 64K, 0) -> %#lx", r))
		finish();
	a = r;
	check(a % PAGE == 0, "address page aligned");
	check(a >= (1UL << 32), "address above 4 GiB (MAP_ABOVE4G)");
	check(addr_in_ss_vma(a, &s, &e) == 1 && s == a && e == a + SS_SIZE, "one ss VMA [%#lx, %#lx)", s, e);
	check(((unsigned long *)a)[SS_SIZE / 8 - 1] == 0, "no token at the top without SET_TOKEN");
	check(((unsigned long *)a)[0] == 0, "memory reads as zero");
	check(!munmap((void *)a, SS_SIZE), "munmap");
	check(addr_in_ss_vma(a, NULL, NULL) == -1, "gone after munmap");

	/* with a token: 64-bit restore token at top-8 pointing at top */
	r = map_shadow_stack(0, SS_SIZE, SHADOW_STACK_SET_TOKEN);
	if (!check(r > 0, "map_shadow_stack(0, 64K, SET_TOKEN) -> %#lx", r))
		finish();
	a = r;
	unsigned long tok = *(unsigned long *)(a + SS_SIZE - 8);
	check(tok == ((a + SS_SIZE) | 1), "token %#lx == (top %#lx) | 1", tok, a + SS_SIZE);
	check(((unsigned long *)a)[SS_SIZE / 8 - 2] == 0, "nothing else written below the token");
	munmap((void *)a, SS_SIZE);

	/* the size is rounded up to pages; the token goes at addr + size - 8 */
	r = map_shadow_stack(0, PAGE + 8, SHADOW_STACK_SET_TOKEN);
	if (check(r > 0, "map_shadow_stack(0, 4104, SET_TOKEN) -> %#lx", r)) {
		a = r;
		check(addr_in_ss_vma(a, &s, &e) == 1 && e - s == 2 * PAGE, "4104 bytes map two pages");
		tok = *(unsigned long *)(a + PAGE);
		check(tok == ((a + PAGE + 8) | 1), "token at addr+4096 is %#lx (expected %#lx)", tok, (a + PAGE + 8) | 1);
		munmap((void *)a, 2 * PAGE);
	}
	r = map_shadow_stack(0, 100, 0);
	if (check(r > 0, "map_shadow_stack(0, 100, 0) -> %#lx", r)) {
		check(addr_in_ss_vma(r, &s, &e) == 1 && e - s == PAGE, "100 bytes map one page");
		munmap((void *)r, PAGE);
	}
	check_ret(map_shadow_stack(0, PAGE + 4, SHADOW_STACK_SET_TOKEN), EINVAL,
		  "SET_TOKEN with a size that is not 8-aligned (token would be unaligned)");

	/* fixed address, and no replacement of what is there */
	area = free_area(4 * SS_SIZE);
	b = area + SS_SIZE;
	r = map_shadow_stack(b, SS_SIZE, SHADOW_STACK_SET_TOKEN);
	check(r > 0 && (unsigned long)r == b, "map_shadow_stack at fixed %#lx -> %#lx", b, r);
	check_ret(map_shadow_stack(b, SS_SIZE, 0), EEXIST, "same address again");
	check_ret(map_shadow_stack(b + SS_SIZE - PAGE, 2 * PAGE, 0), EEXIST, "overlapping the top page");
	check_ret(map_shadow_stack(b - PAGE, 2 * PAGE, 0), EEXIST, "overlapping the bottom page");
	void *n = mmap((void *)(area + 3 * SS_SIZE), PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (n != MAP_FAILED) {
		check_ret(map_shadow_stack((unsigned long)n, PAGE, 0), EEXIST, "over a normal mapping");
		check(*(volatile char *)n == 0 && !is_ss((unsigned long)n), "the normal mapping is untouched");
		munmap(n, PAGE);
	}
	check(*(unsigned long *)(b + SS_SIZE - 8) == ((b + SS_SIZE) | 1), "the first stack's token survived");
	munmap((void *)b, SS_SIZE);

	/* errnos */
	check_ret(map_shadow_stack(0, PAGE, 2), EINVAL, "unknown flag 1<<1");
	check_ret(map_shadow_stack(0, PAGE, 1UL << 31), EINVAL, "unknown flag 1<<31");
	check_ret(map_shadow_stack(0, 0, 0), EINVAL, "size 0");
	check_ret(map_shadow_stack(0, 4, SHADOW_STACK_SET_TOKEN), ENOSPC, "SET_TOKEN with size 4 (< 8)");
	check_ret(map_shadow_stack(0x10000000UL, PAGE, 0), ERANGE, "address below 4 GiB");
	check_ret(map_shadow_stack(b + 8, PAGE, 0), EINVAL, "address not page aligned");
	check_ret(map_shadow_stack(0, ~0UL - 100, 0), EOVERFLOW, "size overflowing page alignment");
	check(count_ss_vmas(0) == 0, "no ss VMA left behind by the failures (found %d)", count_ss_vmas(0));
	finish();
}

/* ---------------------------------------------------------------- smaps */
__attribute__((noreturn)) static void case_smaps(void)
{
	struct vma_info v[1024];
	unsigned long ssp, m;
	int n, ss = 0;

	require_hw();
	check(count_ss_vmas(0) == 0, "no ss VMA before ENABLE");
	ENABLE_SHSTK_OR_SKIP();
	ssp = read_ssp();
	m = map_shadow_stack(0, SS_SIZE, SHADOW_STACK_SET_TOKEN);
	check((long)m > 0, "map_shadow_stack -> %#lx", m);
	n = read_vmas(0, v, 1024);
	for (int i = 0; i < n; i++) {
		bool own = (ssp - 8 >= v[i].start && ssp - 8 < v[i].end);
		bool mapped = (m >= v[i].start && m < v[i].end);

		ss += v[i].ss;
		if (own || mapped)
			check(v[i].ss, "%s shadow stack %#lx-%#lx has ss", own ? "thread" : "mapped", v[i].start, v[i].end);
		else if (v[i].ss)
			check(false, "VMA %#lx-%#lx has ss but is no shadow stack", v[i].start, v[i].end);
	}
	check(ss == 2, "exactly 2 ss VMAs (found %d)", ss);
	munmap((void *)m, SS_SIZE);
	check(count_ss_vmas(0) == 1, "1 ss VMA after munmap of the mapped stack");
	check_ret(arch_prctl_raw(ARCH_SHSTK_DISABLE, F_SHSTK), 0, "DISABLE");
	check(count_ss_vmas(0) == 0, "0 ss VMA after DISABLE");
	finish();
}

/* ---------------------------------------------------------------- store */
__attribute__((noreturn)) static void case_store(void)
{
	unsigned long a;
	int st, fd;

	require_hw();
	a = map_shadow_stack(0, SS_SIZE, SHADOW_STACK_SET_TOKEN);
	if (!check((long)a > 0, "map_shadow_stack -> %#lx", a))
		finish();
	/* populated page (the token page) and a never-touched page */
	st = in_child(child_store, a + SS_SIZE - 16);
	died_with_code(st, 100 + SEGV_ACCERR, "store to a populated ss page: SIGSEGV/SEGV_ACCERR");
	st = in_child(child_store, a);
	died_with_code(st, 100 + SEGV_ACCERR, "store to an untouched ss page: SIGSEGV/SEGV_ACCERR");
	check(*(unsigned long *)a == 0 && *(unsigned long *)(a + SS_SIZE - 16) == 0, "nothing was written");
	/* the kernel's own copy_to_user is a normal store too */
	fd = open("/dev/zero", O_RDONLY);
	errno = 0;
	ssize_t r = read(fd, (void *)(a + PAGE), 64);
	check(r == -1 && errno == EFAULT, "read(/dev/zero) into shadow stack -> %zd %s (expected EFAULT)",
	      r, strerrorname_np(errno) ?: "0");
	close(fd);
	/* and a normal mapping next to it is writable (the child helper can succeed) */
	void *n = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	st = in_child(child_store, (unsigned long)n);
	died_with_code(st, 0, "store to a normal page works (control)");
	finish();
}

/* ---------------------------------------------------------------- gup */
__attribute__((noreturn)) static void case_gup(void)
{
	unsigned long a, v = 0, w;
	int fd, st;

	require_hw();
	a = map_shadow_stack(0, SS_SIZE, SHADOW_STACK_SET_TOKEN);
	if (!check((long)a > 0, "map_shadow_stack -> %#lx", a))
		finish();
	fd = open("/proc/self/mem", O_RDWR);
	check(fd >= 0, "open /proc/self/mem");
	check(pread(fd, &v, 8, a + SS_SIZE - 8) == 8 && v == ((a + SS_SIZE) | 1),
	      "/proc/self/mem read of the token: %#lx", v);
	/* FOLL_FORCE writes are allowed (as for debuggers) and keep the page a ss page */
	w = 0xfeedface;
	check(pwrite(fd, &w, 8, a + 8) == 8, "/proc/self/mem write to the shadow stack (FOLL_FORCE): %s",
	      strerrorname_np(errno) ?: "ok");
	check(*(unsigned long *)(a + 8) == w, "the value is visible: %#lx", *(unsigned long *)(a + 8));
	w = 0xabcd;
	check(pwrite(fd, &w, 8, a + 5 * PAGE) == 8, "/proc/self/mem write to an untouched ss page");
	check(*(unsigned long *)(a + 5 * PAGE) == w, "value visible in the freshly faulted page");
	check(is_ss(a + 8) && is_ss(a + 5 * PAGE), "still ss VMAs after the writes");
	st = in_child(child_store, a + 8);
	died_with_code(st, 100 + SEGV_ACCERR, "a normal store to the written page still faults");
	st = in_child(child_store, a + 5 * PAGE);
	died_with_code(st, 100 + SEGV_ACCERR, "a normal store to the GUP-faulted page still faults");
	close(fd);

	/* non-FOLL_FORCE GUP writes are refused */
	struct iovec local = { .iov_base = &w, .iov_len = 8 };
	struct iovec remote = { .iov_base = (void *)(a + 16), .iov_len = 8 };
	errno = 0;
	ssize_t r = process_vm_writev(getpid(), &local, 1, &remote, 1, 0);
	if (r == -1 && errno == ENOSYS) {
		info("process_vm_writev: ENOSYS (kernel without CONFIG_CROSS_MEMORY_ATTACH): not tested");
	} else {
		check(r == -1 && errno == EFAULT, "process_vm_writev to the shadow stack -> %zd %s (expected EFAULT)",
		      r, strerrorname_np(errno) ?: "0");
		check(*(unsigned long *)(a + 16) == 0, "nothing written by process_vm_writev");
		v = 0;
		local.iov_base = &v;
		remote.iov_base = (void *)(a + 8);
		r = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
		check(r == 8 && v == 0xfeedface, "process_vm_readv reads it (%zd, %#lx)", r, v);
	}

	/* CoW: a child's /proc/self/mem write does not reach the parent */
	pid_t pid = fork();
	if (pid == 0) {
		int cfd = open("/proc/self/mem", O_RDWR);
		unsigned long x = 0x1111;
		if (cfd < 0 || pwrite(cfd, &x, 8, a + 8) != 8 || *(unsigned long *)(a + 8) != x)
			_exit(1);
		_exit(0);
	}
	st = wait_child(pid);
	check(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child wrote its copy through /proc/self/mem (%s)", wstr(st));
	check(*(unsigned long *)(a + 8) == 0xfeedface, "parent's shadow stack unchanged: %#lx",
	      *(unsigned long *)(a + 8));
	finish();
}

/* ---------------------------------------------------------------- peekpoke */
__attribute__((noreturn)) static void case_peekpoke(void)
{
	unsigned long a, tokaddr;
	pid_t pid;
	int st;

	require_hw();
	a = map_shadow_stack(0, SS_SIZE, SHADOW_STACK_SET_TOKEN);
	if (!check((long)a > 0, "map_shadow_stack -> %#lx", a))
		finish();
	tokaddr = a + SS_SIZE - 8;
	pid = fork();
	if (pid == 0) {
		catch_faults_with_code();
		if (ptrace(PTRACE_TRACEME, 0, 0, 0))
			_exit(91);
		raise(SIGSTOP);
		if (*(unsigned long *)tokaddr != 0x600dUL)
			_exit(92);
		if (*(unsigned long *)(a + 3 * PAGE) != 0x700dUL)
			_exit(93);
		*(volatile unsigned long *)(a + 3 * PAGE) = 1;	/* must still fault */
		_exit(94);
	}
	st = wait_child(pid);
	if (!check(WIFSTOPPED(st), "tracee stopped (%s)", wstr(st))) {
		kill(pid, SIGKILL);
		finish();
	}
	errno = 0;
	long v = ptrace(PTRACE_PEEKDATA, pid, (void *)tokaddr, 0);
	check(errno == 0 && (unsigned long)v == ((a + SS_SIZE) | 1), "PEEKDATA of the tracee's token: %#lx", v);
	check(!ptrace(PTRACE_POKEDATA, pid, (void *)tokaddr, (void *)0x600dUL), "POKEDATA over the token: %s",
	      strerrorname_np(errno) ?: "ok");
	check(!ptrace(PTRACE_POKEDATA, pid, (void *)(a + 3 * PAGE), (void *)0x700dUL),
	      "POKEDATA into an untouched ss page: %s", strerrorname_np(errno) ?: "ok");
	errno = 0;
	v = ptrace(PTRACE_PEEKDATA, pid, (void *)tokaddr, 0);
	check(errno == 0 && v == 0x600d, "PEEKDATA reads back %#lx", v);
	check(*(unsigned long *)tokaddr == ((a + SS_SIZE) | 1), "tracer's own copy is unchanged (CoW)");
	/* detach: its SIGSEGV must go to its own handler, not stop it for us */
	ptrace(PTRACE_DETACH, pid, 0, 0);
	st = wait_child(pid);
	died_with_code(st, 100 + SEGV_ACCERR,
		       "tracee sees both values and its normal store still faults (92/93: value missing)");
	finish();
}

/* ---------------------------------------------------------------- mprotect */
__attribute__((noreturn)) static void case_mprotect(void)
{
	unsigned long a;
	int st;

	require_hw();
	ENABLE_SHSTK_OR_SKIP();
	ENABLE_WRSS_OR_FAIL();
	a = map_shadow_stack(0, SS_SIZE, SHADOW_STACK_SET_TOKEN);
	if (!check((long)a > 0, "map_shadow_stack -> %#lx", a))
		finish();
	st = in_child(child_wrss, a);
	died_with_code(st, 0, "WRSS to the new shadow stack works");
	check(!mprotect((void *)a, SS_SIZE, PROT_READ), "mprotect(PROT_READ): %s", strerrorname_np(errno) ?: "ok");
	check(is_ss(a), "still an ss VMA");
	st = in_child(child_wrss, a);
	died_with_code(st, 100 + SEGV_ACCERR, "WRSS to the read-only shadow stack faults");
	check(*(unsigned long *)(a + SS_SIZE - 8) == ((a + SS_SIZE) | 1), "still readable");
	check(!mprotect((void *)a, SS_SIZE, PROT_READ | PROT_WRITE), "mprotect(PROT_READ|PROT_WRITE): %s",
	      strerrorname_np(errno) ?: "ok");
	check(is_ss(a), "still an ss VMA, not a normal writable one");
	st = in_child(child_wrss, a);
	died_with_code(st, 0, "WRSS works again");
	st = in_child(child_store, a);
	died_with_code(st, 100 + SEGV_ACCERR, "a normal store still faults after PROT_WRITE");
	/* a part of it: the VMA splits, both halves stay ss */
	check(!mprotect((void *)a, PAGE, PROT_READ), "mprotect of the first page only");
	check(is_ss(a) && is_ss(a + PAGE), "both parts are ss VMAs");
	check(count_ss_vmas(0) == 3, "3 ss VMAs: thread + two halves (found %d)", count_ss_vmas(0));
	finish();
}

/* ---------------------------------------------------------------- madvise */
__attribute__((noinline)) static int deep(int n)
{
	return recurse(n);
}

__attribute__((noreturn)) static void case_madvise(void)
{
	unsigned long a, ssp, base = 0;
	int st;

	require_hw();
	ENABLE_SHSTK_OR_SKIP();
	ENABLE_WRSS_OR_FAIL();
	a = map_shadow_stack(0, SS_SIZE, SHADOW_STACK_SET_TOKEN);
	if (!check((long)a > 0, "map_shadow_stack -> %#lx", a))
		finish();
	wrss((unsigned long *)(a + PAGE), 0x1357);
	check(*(unsigned long *)(a + PAGE) == 0x1357, "WRSS wrote %#lx", *(unsigned long *)(a + PAGE));
	check(!madvise((void *)a, SS_SIZE, MADV_DONTNEED), "MADV_DONTNEED: %s", strerrorname_np(errno) ?: "ok");
	check(*(unsigned long *)(a + PAGE) == 0, "value gone after MADV_DONTNEED");
	check(*(unsigned long *)(a + SS_SIZE - 8) == 0, "token gone too (anonymous memory is zapped)");
	wrss((unsigned long *)(a + PAGE), 0x2468);
	check(*(unsigned long *)(a + PAGE) == 0x2468, "WRSS after re-fault: %#lx", *(unsigned long *)(a + PAGE));
	check(is_ss(a + PAGE), "still an ss VMA");
	st = in_child(child_store, a + PAGE);
	died_with_code(st, 100 + SEGV_ACCERR, "the re-faulted page is a shadow-stack page (store faults)");

	/*
	 * The thread's own shadow stack: zap pages below SSP that hold only stale entries,
	 * then use them again. Keep 1K of headroom: the madvise() call itself pushes its
	 * return address just below SSP, and zapping that would fault its `ret`.
	 */
	ssp = read_ssp();
	addr_in_ss_vma(ssp - 8, &base, NULL);
	unsigned long hi = (ssp - 1024) & ~(PAGE - 1);
	deep(2000);	/* touch ~16K of shadow stack */
	check(hi - 3 * PAGE >= base, "own shadow stack is large enough");
	check(!madvise((void *)(hi - 3 * PAGE), 3 * PAGE, MADV_DONTNEED), "MADV_DONTNEED of 3 pages below own SSP");
	check(deep(2000) == 2000, "deep recursion through the zapped pages works");
	check(read_ssp() == ssp, "SSP back where it was");
	finish();
}

/* ---------------------------------------------------------------- uffd */
static int uffd_fd;
static unsigned long uffd_page;
static char uffd_src[PAGE] __attribute__((aligned(4096)));

/* The faulting main thread stays blocked until the page is filled: on any error, end all. */
__attribute__((noreturn)) static void uffd_abort(const char *what)
{
	check(false, "userfaultfd handler: %s (%s)", what, strerrorname_np(errno) ?: "-");
	finish();
}

static void *uffd_handler(void *arg)
{
	struct pollfd p = { .fd = uffd_fd, .events = POLLIN };
	struct uffd_msg msg;

	(void)arg;
	if (poll(&p, 1, 30000) != 1)
		uffd_abort("no fault event within 30 s");
	if (read(uffd_fd, &msg, sizeof(msg)) != sizeof(msg) || msg.event != UFFD_EVENT_PAGEFAULT)
		uffd_abort("bad event");
	if ((msg.arg.pagefault.address & ~(PAGE - 1)) != uffd_page)
		uffd_abort("fault at an unexpected address");
	((unsigned long *)uffd_src)[1] = 0xc0ffee;
	struct uffdio_copy c = { .dst = uffd_page, .src = (unsigned long)uffd_src, .len = PAGE, .mode = 0 };
	if (ioctl(uffd_fd, UFFDIO_COPY, &c))
		uffd_abort("UFFDIO_COPY failed");
	return NULL;
}

__attribute__((noreturn)) static void case_uffd(const char *expect)
{
	struct uffdio_api api = { .api = UFFD_API, .features = 0 };
	struct uffdio_register reg;
	unsigned long a;
	pthread_t t;
	void *res;
	int st;

	require_hw();
	if (!expect || (strcmp(expect, "works") && strcmp(expect, "refused"))) {
		printf("usage: shstk_mem uffd works|refused\n");
		exit(2);
	}
	uffd_fd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd_fd < 0)
		skip("userfaultfd unavailable: %s", strerrorname_np(errno) ?: "?");
	if (ioctl(uffd_fd, UFFDIO_API, &api))
		skip("UFFDIO_API: %s", strerrorname_np(errno) ?: "?");
	ENABLE_SHSTK_OR_SKIP();
	ENABLE_WRSS_OR_FAIL();
	a = map_shadow_stack(0, SS_SIZE, 0);
	if (!check((long)a > 0, "map_shadow_stack -> %#lx", a))
		finish();
	uffd_page = a + 2 * PAGE;
	memset(&reg, 0, sizeof(reg));
	reg.range.start = uffd_page;
	reg.range.len = PAGE;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	int r = ioctl(uffd_fd, UFFDIO_REGISTER, &reg);
	int e = errno;
	if (!strcmp(expect, "refused")) {
		check(r == -1 && e == EINVAL, "UFFDIO_REGISTER on a shadow stack refused: %s (expected EINVAL)",
		      r ? strerrorname_np(e) ?: "?" : "it succeeded");
		finish();
	}
	if (!check(r == 0, "UFFDIO_REGISTER(MISSING) on a shadow stack: %s", r ? strerrorname_np(e) ?: "?" : "ok"))
		finish();
	check(pthread_create(&t, NULL, uffd_handler, NULL) == 0, "handler thread");
	/* a shadow-stack write to the missing page: the handler fills it with UFFDIO_COPY */
	wrss((unsigned long *)(uffd_page + 16), 0xbeef);
	pthread_join(t, &res);
	check(res == NULL, "the fault reached the handler and UFFDIO_COPY succeeded (code %ld)", (long)res);
	check(((unsigned long *)uffd_page)[1] == 0xc0ffee, "copied content present: %#lx",
	      ((unsigned long *)uffd_page)[1]);
	check(((unsigned long *)uffd_page)[2] == 0xbeef, "the WRSS completed after the copy: %#lx",
	      ((unsigned long *)uffd_page)[2]);
	check(is_ss(uffd_page), "still an ss VMA");
	st = in_child(child_store, uffd_page);
	died_with_code(st, 100 + SEGV_ACCERR, "the UFFDIO_COPY page is a shadow-stack page (normal store faults)");
	st = in_child(child_wrss, uffd_page + 24);
	died_with_code(st, 0, "and WRSS to it works");
	finish();
}

/* ---------------------------------------------------------------- guard */
__attribute__((noreturn)) static void case_guard(void)
{
	unsigned long area, ss, n, ctl;
	void *p;

	require_hw();
	area = free_area(8 * SS_SIZE);
	if (!area)
		skip("no free area");
	ss = area + 4 * SS_SIZE;
	if (!check((unsigned long)map_shadow_stack(ss, SS_SIZE, 0) == ss, "shadow stack at %#lx", ss))
		finish();
	/* control: a normal VMA of the same size; a hint right below it is honoured */
	ctl = area + 2 * SS_SIZE;
	p = mmap((void *)ctl, SS_SIZE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	check(p == (void *)ctl, "control mapping at %#lx", ctl);
	p = mmap((void *)(ctl - PAGE), PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	check(p == (void *)(ctl - PAGE), "hint right below a normal VMA is honoured (%p)", p);
	if (p != MAP_FAILED)
		munmap(p, PAGE);
	/* the same hint below the shadow stack falls in its guard gap: placed elsewhere */
	p = mmap((void *)(ss - PAGE), PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	n = (unsigned long)p;
	check(p != MAP_FAILED && n != ss - PAGE, "hint in the page below the shadow stack is not honoured (%p)", p);
	if (p != MAP_FAILED)
		munmap(p, PAGE);
	/* a hint two pages below is fine: the gap is one page */
	p = mmap((void *)(ss - 2 * PAGE), PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	check(p == (void *)(ss - 2 * PAGE), "hint two pages below the shadow stack is honoured (%p)", p);
	if (p != MAP_FAILED)
		munmap(p, PAGE);
	/* and the gap page itself stays unmapped */
	check(addr_in_ss_vma(ss - PAGE, NULL, NULL) == -1, "the guard page below the shadow stack is unmapped");
	finish();
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc < 2) {
		fprintf(stderr, "usage: %s map-nohw|map|smaps|store|gup|peekpoke|mprotect|madvise|uffd|guard\n",
			argv[0]);
		exit(2);
	}
	const char *c = argv[1];

	if (!strcmp(c, "map-nohw"))
		case_map_nohw();
	if (!strcmp(c, "map"))
		case_map();
	if (!strcmp(c, "smaps"))
		case_smaps();
	if (!strcmp(c, "store"))
		case_store();
	if (!strcmp(c, "gup"))
		case_gup();
	if (!strcmp(c, "peekpoke"))
		case_peekpoke();
	if (!strcmp(c, "mprotect"))
		case_mprotect();
	if (!strcmp(c, "madvise"))
		case_madvise();
	if (!strcmp(c, "uffd"))
		case_uffd(argc > 2 ? argv[2] : NULL);
	if (!strcmp(c, "guard"))
		case_guard();
	fprintf(stderr, "%s: unknown case '%s'\n", argv[0], c);
	exit(2);
}
