// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Part of libcetctl-preload.so: why a program started by `cetctl run
 * --shstk` died of a control-protection fault.
 *
 * A #CP (a `ret` whose return address disagrees with the shadow stack)
 * reaches the program as SIGSEGV with si_code SEGV_CPERR, and by default it
 * just dies: nothing says where or why. At start-up, when the shadow stack
 * is on (RDSSP != 0) and SIGSEGV is at its default, this installs a handler
 * (SA_RESETHAND: the default is back the moment it runs). On SEGV_CPERR it
 * writes one message to stderr: the faulting instruction, the return
 * address the stack held (what `ret` tried) and the one the shadow stack
 * expected, each with its object and nearest symbol, and the likely class
 * by evidence only (generated code, a stack switch, a non-local jump, else
 * unknown). Then it returns: the `ret` runs again, faults again, and the
 * process dies of SIGSEGV as it would have (core dump and exit status
 * unchanged). Any other SIGSEGV: a fault returns and repeats; one sent by
 * kill(2) and the like is sent again, now to the default action.
 *
 * The program's own SIGSEGV handler, installed after ours, runs behind
 * the diagnosis: cpfault-chain.c interposes sigaction() and signal() for
 * SIGSEGV, and what the program reads back is what it set. Fork children
 * keep the handler (and the library and their shadow stack); exec drops
 * all three. The diagnosis is said once per process.
 *
 * Async-signal-safe throughout: only system calls (open, pread, read,
 * write, fstat, process_vm_readv, tgkill, sigaction); no stdio, no malloc,
 * no locks. The object and symbol come from /proc/self/maps and the
 * object's own file (.symtab, else .dynsym), not from dladdr(): dladdr
 * takes the dynamic loader's lock, and a fault while another thread holds
 * it (in dlopen) would turn a death into a hang. Every read of the
 * process's memory goes through process_vm_readv on itself, so a wild
 * address fails with EFAULT instead of faulting in the handler.
 * The buffers are static: one diagnosis per process (cetctl_cpfault_say()).
 *
 * No alternate signal stack: a #CP is raised by a `ret` that has just read
 * its return address from the stack, so the stack is there; an alternate
 * stack would be the main thread's only (threads start without one), and
 * the program would see it as its own. A fault that finds no room on the
 * stack for the signal frame kills the process as before, unexplained.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

#include "cet-abi.h"
#include "cpfault.h"

#define SHSTK_TOKEN_BIT		(1UL << 63)	/* the kernel's signal-frame token */
#define TOKEN_SCAN		512		/* shadow-stack entries searched for it */
#define UNWIND_SCAN		4096		/* entries searched for the return address */

/* See preload.c: CETCTL_PRELOAD_FAKE_SSP is the host tests' build. */
static unsigned long read_ssp(void)
{
	unsigned long ssp = 0;

#ifdef CETCTL_PRELOAD_FAKE_SSP
	ssp = 0x7ff0000ff000UL;
#else
	__asm__ volatile("rdsspq %0" : "+r"(ssp));
#endif
	return ssp;
}

/* @n bytes at @addr of this process, or false (unmapped, unreadable). */
static bool peek(unsigned long addr, void *buf, size_t n)
{
	struct iovec local = { buf, n }, remote = { (void *)addr, n };

	return syscall(SYS_process_vm_readv, getpid(), &local, 1UL, &remote, 1UL, 0UL) ==
	       (long)n;
}

static bool peek_word(unsigned long addr, unsigned long *w)
{
	return peek(addr, w, sizeof(*w));
}

__attribute__((visibility("hidden"))) bool cetctl_cpfault_word(unsigned long addr,
								  unsigned long *w)
{
	return peek_word(addr, w);
}

/* ---- the message, built in one buffer and written once --------------- */

static char msg[3072];
static size_t msg_len;

/* Append @s; bytes that are not printable ASCII (a file name may hold any,
 * a newline too) as \xNN: the message's lines are its own (next_line()). */
static void put(const char *s)
{
	static const char hex[] = "0123456789abcdef";

	for (; *s && msg_len + 6 < sizeof(msg); s++) {
		unsigned char c = (unsigned char)*s;

		if (c >= 0x20 && c < 0x7f) {
			msg[msg_len++] = (char)c;
		} else {
			msg[msg_len++] = '\\';
			msg[msg_len++] = 'x';
			msg[msg_len++] = hex[c >> 4];
			msg[msg_len++] = hex[c & 15];
		}
	}
}

/* A new line of the message, indented, starting with @label. */
static void next_line(const char *label)
{
	if (msg_len + 2 < sizeof(msg))
		msg[msg_len++] = '\n';
	put("  ");
	put(label);
}

static void put_hex(unsigned long v)
{
	char b[19];
	int i = (int)sizeof(b);

	b[--i] = '\0';
	do {
		b[--i] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	b[--i] = 'x';
	b[--i] = '0';
	put(b + i);
}

static void put_dec(unsigned long v)
{
	char b[21];
	int i = (int)sizeof(b);

	b[--i] = '\0';
	do {
		b[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put(b + i);
}

/* ---- /proc/self/maps ----------------------------------------------------- */

struct mapping {
	bool found;
	unsigned long start, end, offset, inode;
	unsigned int major, minor;
	char perms[5];
	char path[256];
};

enum { Q_IP, Q_TRIED, Q_EXPECTED, Q_SP, Q_TCB, Q_MAX };

static struct mapping maps[Q_MAX], stack_map;
static unsigned long query[Q_MAX];

static unsigned long hexnum(const char **p)
{
	unsigned long v = 0;

	for (;; (*p)++) {
		char c = **p;

		if (c >= '0' && c <= '9')
			v = v * 16 + (unsigned long)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v * 16 + (unsigned long)(c - 'a' + 10);
		else
			return v;
	}
}

static unsigned long decnum(const char **p)
{
	unsigned long v = 0;

	for (; **p >= '0' && **p <= '9'; (*p)++)
		v = v * 10 + (unsigned long)(**p - '0');
	return v;
}

/* "start-end perms offset major:minor inode   path" */
static void maps_line(const char *l)
{
	struct mapping m = { .found = true };
	const char *p = l;

	m.start = hexnum(&p);
	if (*p++ != '-')
		return;
	m.end = hexnum(&p);
	if (*p++ != ' ')
		return;
	for (int i = 0; i < 4 && *p; i++)
		m.perms[i] = *p++;
	if (*p++ != ' ')
		return;
	m.offset = hexnum(&p);
	p++;
	m.major = (unsigned int)hexnum(&p);
	p++;
	m.minor = (unsigned int)hexnum(&p);
	p++;
	m.inode = decnum(&p);
	while (*p == ' ')
		p++;
	strncpy(m.path, p, sizeof(m.path) - 1);
	for (int q = 0; q < Q_MAX; q++)
		if (query[q] >= m.start && query[q] < m.end)
			maps[q] = m;
	if (strcmp(m.path, "[stack]") == 0)
		stack_map = m;
}

static void read_maps(void)
{
	static char buf[4096], line[1024];
	size_t len = 0;
	ssize_t n;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] != '\n') {
				if (len < sizeof(line) - 1)
					line[len++] = buf[i];	/* a longer path is cut */
				continue;
			}
			line[len] = '\0';
			maps_line(line);
			len = 0;
		}
	}
	close(fd);
}

/* ---- the nearest symbol, from the object's own file -------------------- */

static bool pread_full(int fd, void *buf, size_t n, unsigned long off)
{
	return pread(fd, buf, n, (off_t)off) == (ssize_t)n;
}

/* The virtual address (as in the file's symbols) of file offset @off. */
static bool file_vaddr(int fd, const Elf64_Ehdr *eh, unsigned long off, unsigned long *va)
{
	for (unsigned int i = 0; i < eh->e_phnum && i < 256; i++) {
		Elf64_Phdr ph;

		if (!pread_full(fd, &ph, sizeof(ph), eh->e_phoff + (unsigned long)i * sizeof(ph)))
			return false;
		if (ph.p_type == PT_LOAD && off >= ph.p_offset && off - ph.p_offset < ph.p_filesz) {
			*va = off - ph.p_offset + ph.p_vaddr;
			return true;
		}
	}
	return false;
}

struct nearest {
	bool found;
	unsigned long value, size;
	unsigned int name;		/* st_name */
	unsigned long strtab;		/* file offset of its string table */
};

/* The nearest symbol at or below @va in the symbol table @sh. */
static void scan_symtab(int fd, const Elf64_Ehdr *eh, const Elf64_Shdr *sh, unsigned long va,
			struct nearest *best)
{
	static Elf64_Sym chunk[64];
	Elf64_Shdr str;
	unsigned long n;

	if (sh->sh_entsize != sizeof(Elf64_Sym) || sh->sh_link >= eh->e_shnum ||
	    !pread_full(fd, &str, sizeof(str), eh->e_shoff + sh->sh_link * sizeof(str)))
		return;
	n = sh->sh_size / sizeof(Elf64_Sym);
	if (n > (1UL << 22))
		n = 1UL << 22;		/* bounded: a dying process does not linger */
	for (unsigned long i = 0; i < n; i += 64) {
		unsigned long k = n - i < 64 ? n - i : 64;

		if (!pread_full(fd, chunk, k * sizeof(Elf64_Sym), sh->sh_offset + i * sizeof(Elf64_Sym)))
			return;
		for (unsigned long j = 0; j < k; j++) {
			const Elf64_Sym *s = &chunk[j];
			unsigned char t = ELF64_ST_TYPE(s->st_info);

			if (s->st_shndx == SHN_UNDEF || s->st_name == 0 || s->st_value > va ||
			    (t != STT_FUNC && t != STT_NOTYPE && t != STT_GNU_IFUNC))
				continue;
			/* the closest below; among equals, one that has a size */
			if (!best->found || s->st_value > best->value ||
			    (s->st_value == best->value && s->st_size && !best->size)) {
				best->found = true;
				best->value = s->st_value;
				best->size = s->st_size;
				best->name = s->st_name;
				best->strtab = str.sh_offset;
			}
		}
	}
}

/* "name+0xoff" of @addr in the object of mapping @m, appended; or nothing. */
static void put_symbol(const struct mapping *m, unsigned long addr)
{
	static char name[128];
	struct nearest best = { 0 };
	Elf64_Ehdr eh;
	struct stat st;
	unsigned long va;
	int fd;

	if (m->path[0] != '/' || !m->inode)
		return;
	fd = open(m->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	/* the mapped file, not one renamed over it since */
	if (fstat(fd, &st) < 0 || st.st_ino != m->inode || major(st.st_dev) != m->major ||
	    minor(st.st_dev) != m->minor || !pread_full(fd, &eh, sizeof(eh), 0) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) ||
	    !file_vaddr(fd, &eh, addr - m->start + m->offset, &va))
		goto out;
	/* .symtab when the file has one (static functions too), else .dynsym */
	for (int pass = 0; pass < 2 && !best.found; pass++) {
		unsigned int want = pass ? SHT_DYNSYM : SHT_SYMTAB;

		for (unsigned int i = 0; i < eh.e_shnum; i++) {
			Elf64_Shdr sh;

			if (!pread_full(fd, &sh, sizeof(sh), eh.e_shoff + (unsigned long)i * sizeof(sh)))
				goto out;
			if (sh.sh_type == want)
				scan_symtab(fd, &eh, &sh, va, &best);
		}
	}
	if (best.found) {
		ssize_t r = pread(fd, name, sizeof(name) - 1, (off_t)(best.strtab + best.name));

		name[r > 0 ? r : 0] = '\0';
		if (name[0]) {
			put(" (");
			put(name);
			put("+");
			put_hex(va - best.value);
			put(")");
		}
	}
out:
	close(fd);
}

/* "0x... /path (sym+0xoff)", or what the address is when not in a file. */
static void put_where(unsigned long addr, const struct mapping *m)
{
	put_hex(addr);
	if (!m->found) {
		put(" (not mapped)");
		return;
	}
	put(" ");
	if (m->path[0] == '/') {
		put(m->path);
		put_symbol(m, addr);
	} else if (m->path[0]) {
		put(m->path);		/* [vdso], [stack], [heap] */
	} else {
		put(m->perms[2] == 'x' ? "(anonymous executable mapping)" : "(anonymous mapping)");
	}
}

static bool anon_exec(const struct mapping *m)
{
	return m->found && m->perms[2] == 'x' && !m->path[0];
}

/* ---- the diagnosis ----------------------------------------------------- */

/* Whether the instruction at @ip is a near return (c3, c2 iw; prefixed). */
__attribute__((visibility("hidden"))) bool cetctl_cpfault_is_ret(unsigned long ip)
{
	unsigned char b[4] = { 0 };
	int i = 0;

	if (!peek(ip, b, sizeof(b)) && !peek(ip, b, 1))
		return false;
	/* bnd/rep (f2/f3) and a REX prefix are all a compiler puts there */
	while (i < 2 && (b[i] == 0xf2 || b[i] == 0xf3 || (b[i] & 0xf0) == 0x40))
		i++;
	return b[i] == 0xc3 || b[i] == 0xc2;
}

/*
 * The interrupted SSP: the kernel's signal frame on the shadow stack is a
 * token (the SSP before the signal | bit 63) stored right above it, with
 * the restorer's address below the token; the handler's own calls are
 * below that. The token is the entry at A whose value is (A + 8) | bit 63.
 */
__attribute__((visibility("hidden"))) bool cetctl_cpfault_interrupted_ssp(unsigned long *ssp)
{
	unsigned long a = read_ssp(), w;

	if (!a)
		return false;
	for (int i = 0; i < TOKEN_SCAN; i++, a += 8) {
		if (!peek_word(a, &w))
			return false;
		if (w == ((a + 8) | SHSTK_TOKEN_BIT)) {
			*ssp = a + 8;
			return true;
		}
	}
	return false;
}

/* How many entries above @ssp the shadow stack holds @ret; 0: not found. */
__attribute__((visibility("hidden"))) unsigned long cetctl_cpfault_found_above(unsigned long ssp,
										unsigned long ret)
{
	unsigned long w;

	for (unsigned long i = 1; i < UNWIND_SCAN; i++) {
		if (!peek_word(ssp + i * 8, &w) || (w & SHSTK_TOKEN_BIT))
			return 0;	/* the end, or another frame's token */
		if (w == ret)
			return i;
	}
	return 0;
}

static unsigned long thread_pointer(void)
{
	unsigned long tp;

	/* glibc keeps its thread descriptor's own address at %fs:0 */
	__asm__ volatile("mov %%fs:0, %0" : "=r"(tp));
	return tp;
}

static void diagnose(const ucontext_t *uc)
{
	unsigned long ip = (unsigned long)uc->uc_mcontext.gregs[REG_RIP];
	unsigned long sp = (unsigned long)uc->uc_mcontext.gregs[REG_RSP];
	unsigned long ssp = 0, tried = 0, expected = 0, up = 0;
	long tid = syscall(SYS_gettid);
	bool ret = cetctl_cpfault_is_ret(ip), have_tried, have_expected, main_thread = tid == getpid();
	const struct mapping *own_stack;

	memset(maps, 0, sizeof(maps));
	memset(&stack_map, 0, sizeof(stack_map));
	have_tried = ret && peek_word(sp, &tried);
	have_expected = cetctl_cpfault_interrupted_ssp(&ssp) && peek_word(ssp, &expected);
	query[Q_IP] = ip;
	query[Q_TRIED] = tried;
	query[Q_EXPECTED] = expected;
	query[Q_SP] = sp;
	/* a thread's descriptor sits at the top of its stack mapping (glibc);
	 * the main thread's stack is [stack] */
	query[Q_TCB] = main_thread ? 0 : thread_pointer();
	read_maps();
	own_stack = main_thread ? &stack_map : &maps[Q_TCB];

	msg_len = 0;
	put("libcetctl-preload: control-protection fault (SIGSEGV, SEGV_CPERR) in process ");
	put_dec((unsigned long)getpid());
	put(", thread ");
	put_dec((unsigned long)tid);
	put(":");
	next_line("at           ");
	put_where(ip, &maps[Q_IP]);
	if (!ret)
		next_line("             not a return: a shadow-stack instruction refused a token");
	if (have_tried) {
		next_line("returning to ");
		put_where(tried, &maps[Q_TRIED]);
		put(" (on the stack at ");
		put_hex(sp);
		put(")");
	}
	if (ret && have_expected) {
		next_line("expected     ");
		put_where(expected, &maps[Q_EXPECTED]);
		put(" (on the shadow stack at ");
		put_hex(ssp);
		put(")");
	} else if (ret) {
		next_line("expected     (the shadow stack could not be read)");
	}
	if (have_tried && have_expected)
		up = cetctl_cpfault_found_above(ssp, tried);

	/* the class, by evidence only, the strongest first */
	next_line("likely:      ");
	if (anon_exec(&maps[Q_IP])) {
		put("generated code (JIT): the faulting code is in an anonymous executable mapping");
	} else if ((have_tried && anon_exec(&maps[Q_TRIED])) ||
		   (have_expected && anon_exec(&maps[Q_EXPECTED]))) {
		put("generated code (JIT): a return address is in an anonymous executable mapping");
	} else if (own_stack->found && (sp < own_stack->start || sp >= own_stack->end)) {
		put("stack switch: the stack pointer ");
		put_hex(sp);
		put(" is outside this thread's stack ");
		put_hex(own_stack->start);
		put("-");
		put_hex(own_stack->end);
		put(" (or a signal handler runs on an alternate stack)");
	} else if (up) {
		put("non-local jump (longjmp, or a switch back to an earlier context): the shadow "
		    "stack holds the return address ");
		put_dec(up);
		put(up == 1 ? " entry" : " entries");
		put(" further up; it was not unwound");
	} else {
		put("unknown: no evidence of a stack switch, a non-local jump or generated code");
	}
	msg[msg_len++] = '\n';		/* room kept by put() */
	if (write(STDERR_FILENO, msg, msg_len) < 0)
		return;		/* nowhere to say it */
}

__attribute__((visibility("hidden"))) void cetctl_cpfault_say(void *ctx)
{
	static int said;

	if (!__atomic_exchange_n(&said, 1, __ATOMIC_SEQ_CST))
		diagnose(ctx);
}

static void reinstall_own(void)
{
	cetctl_cpfault_install();
}

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
	int saved = errno;
	struct sigaction cur;

	/* SA_RESETHAND put the default back (the kernel's view, past our
	 * sigaction): anything else means another handler, installed with
	 * the raw system call, called us; its business, not ours */
	if (__sigaction(SIGSEGV, NULL, &cur) != 0 || cur.sa_handler != SIG_DFL) {
		errno = saved;
		return;
	}
	if (si->si_code <= 0) {
		/* sent (kill, tgkill, sigqueue): no fault to repeat; again, to
		 * the default action now, delivered when we return */
		syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig);
	} else if (si->si_code == SEGV_CPERR) {
		/* the loader's own longjmp: mended, and the program goes on */
		cetctl_ldso_mend(ctx, reinstall_own);
		cetctl_cpfault_say(ctx);
	}
	/* a fault: returning runs the instruction again, which faults again */
	errno = saved;
}

__attribute__((visibility("hidden"))) bool cetctl_cpfault_managed;

__attribute__((visibility("hidden"))) int cetctl_cpfault_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	return __sigaction(SIGSEGV, &sa, NULL);
}

__attribute__((constructor)) static void cetctl_cpfault_init(void)
{
	struct sigaction old;

	if (!read_ssp() || __sigaction(SIGSEGV, NULL, &old) != 0)
		return;
	if (old.sa_handler != SIG_DFL)
		return;		/* the program (or a sanitizer) has its own */
	if (cetctl_cpfault_install() == 0)
		cetctl_cpfault_managed = true;
}
