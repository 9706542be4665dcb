// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Part of libcetctl-preload.so: the dynamic loader's own error unwinding,
 * mended at the fault it causes.
 *
 * Glibc reports a failed dlopen(), dlsym() or dlmopen() (a library that is
 * not there, a symbol that is not defined: lighttpd probes its modules with
 * dlsym(RTLD_DEFAULT, ...), perl's DynaLoader and NSS load what may be
 * missing) by a longjmp of its own, from _dl_signal_error() back to the
 * setjmp in _dl_catch_exception(), inside libc or the loader. A glibc built with CET
 * (2.39 and later, configured --enable-cet) unwinds the shadow stack there
 * too, with INCSSP up to the SSP the setjmp saved. Debian's glibc 2.36 and
 * 2.41 are built without it: the shadow stack keeps the frames the longjmp
 * left, and the `ret` that ends _dl_catch_exception() meets one of theirs
 * and raises #CP. The preload library's longjmp() cannot help: glibc calls
 * its internal __longjmp, which no interposition reaches.
 *
 * So the fault is mended where it happens, and only there. When the
 * SIGSEGV is SEGV_CPERR, the faulting instruction is a `ret` of
 * _dl_catch_exception() (its address range: the dynamic symbol tables of
 * libc and the loader, read in memory at start-up; 2.36 has a copy in
 * each), and the shadow stack holds the return address the stack
 * gives a few entries further up (with no signal or context token between:
 * the same shadow stack, the same context), the handler does what a CET
 * glibc's longjmp would have done before that `ret`: INCSSP past the
 * entries left behind, and then the `ret` itself: the registers of the
 * interrupted context (x87/SSE state too, its signal mask), the stack
 * pointer past the return address, a jump to it. The handler is put back
 * as it was (SA_RESETHAND took it). Anything else falls through to the
 * diagnosis and the death as before.
 *
 * This unwinds the shadow stack to a return address that is already on it,
 * as a CET glibc's longjmp does to its setjmp's SSP; it never returns to an
 * address the shadow stack does not hold, and only at that one `ret`. The
 * jump to it is indirect: with user IBT (which Linux does not offer) a
 * return site would need an ENDBR64.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "cpfault.h"

/* _dl_catch_exception(): [start, end) of each copy, 0 when not found. Glibc
 * 2.36 has two, libc's (which dlopen() and dlsym() use) and the loader's;
 * 2.41 only the loader's, which libc calls. */
static struct {
	unsigned long start, end;
} catch_fn[2];

static bool in_catch(unsigned long ip)
{
	for (unsigned int i = 0; i < sizeof(catch_fn) / sizeof(catch_fn[0]); i++)
		if (catch_fn[i].start && ip >= catch_fn[i].start && ip < catch_fn[i].end)
			return true;
	return false;
}

/*
 * cetctl_ldso_jump(gregs, ssp, fpregs): pop the shadow stack up to @ssp
 * (INCSSP, at most 255 entries each), restore x87/SSE from @fpregs (FXSAVE
 * layout, the start of the kernel's XSAVE area) and the general registers
 * from @gregs (gregs_t order), and continue at the return address the
 * interrupted `ret` would have taken: gregs[REG_RSP] is the stack just past
 * it, so it is the word below, which is read after the switch (the kernel
 * keeps the 128 bytes below the stack pointer when it delivers a signal;
 * @gregs, below them on the handler's stack, is read before). Never
 * returns. %r11 is clobbered: at a function's return it holds nothing the
 * caller may read (SysV ABI), as are the upper halves of the AVX registers.
 */
void cetctl_ldso_jump(const greg_t *gregs, unsigned long ssp, const void *fpregs)
	__attribute__((noreturn, visibility("hidden")));

_Static_assert(REG_R8 == 0 && REG_R9 == 1 && REG_R10 == 2 && REG_R11 == 3 && REG_R12 == 4 &&
	       REG_R13 == 5 && REG_R14 == 6 && REG_R15 == 7 && REG_RDI == 8 && REG_RSI == 9 &&
	       REG_RBP == 10 && REG_RBX == 11 && REG_RDX == 12 && REG_RAX == 13 &&
	       REG_RCX == 14 && REG_RSP == 15 && REG_RIP == 16,
	       "the offsets of cetctl_ldso_jump");

__asm__(".text\n"
	".globl cetctl_ldso_jump\n"
	".hidden cetctl_ldso_jump\n"
	".type cetctl_ldso_jump, @function\n"
	"cetctl_ldso_jump:\n"
	"	rdsspq %rax\n"
	"	mov %rsi, %rcx\n"
	"	sub %rax, %rcx\n"
	"	shr $3, %rcx\n"
	"1:	cmp $255, %rcx\n"
	"	jbe 2f\n"
	"	mov $255, %eax\n"
	"	incsspq %rax\n"
	"	sub $255, %rcx\n"
	"	jmp 1b\n"
	"2:	test %rcx, %rcx\n"
	"	jz 3f\n"
	"	incsspq %rcx\n"
	"3:	fxrstor64 (%rdx)\n"
	"	cld\n"
	"	mov 0*8(%rdi), %r8\n"
	"	mov 1*8(%rdi), %r9\n"
	"	mov 2*8(%rdi), %r10\n"
	"	mov 4*8(%rdi), %r12\n"
	"	mov 5*8(%rdi), %r13\n"
	"	mov 6*8(%rdi), %r14\n"
	"	mov 7*8(%rdi), %r15\n"
	"	mov 9*8(%rdi), %rsi\n"
	"	mov 10*8(%rdi), %rbp\n"
	"	mov 11*8(%rdi), %rbx\n"
	"	mov 12*8(%rdi), %rdx\n"
	"	mov 13*8(%rdi), %rax\n"
	"	mov 14*8(%rdi), %rcx\n"
	"	mov 15*8(%rdi), %r11\n"
	"	mov 8*8(%rdi), %rdi\n"
	"	mov %r11, %rsp\n"
	"	jmp *-8(%rsp)\n"
	".size cetctl_ldso_jump, .-cetctl_ldso_jump\n");

bool cetctl_ldso_mend(void *ctx, void (*reinstall)(void))
{
	ucontext_t *uc = ctx;
	unsigned long ip = (unsigned long)uc->uc_mcontext.gregs[REG_RIP];
	unsigned long sp = (unsigned long)uc->uc_mcontext.gregs[REG_RSP];
	unsigned long ssp, tried, up;
	greg_t regs[NGREG];
	int saved = errno;

	if (!in_catch(ip) || !uc->uc_mcontext.fpregs)
		return false;
	if (!cetctl_cpfault_is_ret(ip) || !cetctl_cpfault_word(sp, &tried) ||
	    !cetctl_cpfault_interrupted_ssp(&ssp))
		return false;
	up = cetctl_cpfault_found_above(ssp, tried);
	if (!up)
		return false;
	for (int i = 0; i < NGREG; i++)
		regs[i] = uc->uc_mcontext.gregs[i];
	regs[REG_RSP] = (greg_t)(sp + 8);	/* the `ret` pops @tried */
	if (reinstall)
		reinstall();
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &uc->uc_sigmask, NULL, _NSIG / 8);
	errno = saved;
	/* the entry that held @tried is the one the `ret` pops */
	cetctl_ldso_jump(regs, ssp + (up + 1) * 8, uc->uc_mcontext.fpregs);
}

/* The number of symbols of a DT_GNU_HASH table: past the last chain's end. */
static unsigned long gnu_hash_count(const uint32_t *h)
{
	uint32_t nbuckets = h[0], symoffset = h[1], bloom = h[2];
	const uint32_t *buckets = h + 4 + bloom * (sizeof(ElfW(Addr)) / 4);
	const uint32_t *chain = buckets + nbuckets;
	uint32_t last = 0;

	for (uint32_t i = 0; i < nbuckets; i++)
		if (buckets[i] > last)
			last = buckets[i];
	if (last < symoffset)
		return symoffset;
	while (!(chain[last - symoffset] & 1))
		last++;
	return last + 1;
}

/* Whether @path names libc or the dynamic loader (their copies of the
 * function). */
static bool wanted(const char *path)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	return !strcmp(b, "libc.so.6") || !strcmp(b, "ld-linux-x86-64.so.2");
}

/* dl_iterate_phdr(): _dl_catch_exception defined in the dynamic symbol
 * table of libc or the loader, read in memory. No dlsym(): a lookup that
 * fails takes the very path this file mends, before it is ready (on
 * Debian 12 the loader's handle does not give its own copy). */
static int each_object(struct dl_phdr_info *info, size_t size, void *data)
{
	const ElfW(Dyn) *dyn = NULL;
	const ElfW(Sym) *symtab = NULL;
	const uint32_t *gnu_hash = NULL;
	const char *strtab = NULL;
	unsigned long count, *n = data;

	(void)size;
	if (!info->dlpi_name || !wanted(info->dlpi_name) || *n >= 2)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const void *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
		/* the loader has relocated these to addresses */
		if (dyn->d_tag == DT_SYMTAB)
			symtab = (const void *)dyn->d_un.d_ptr;
		else if (dyn->d_tag == DT_STRTAB)
			strtab = (const void *)dyn->d_un.d_ptr;
		else if (dyn->d_tag == DT_GNU_HASH)
			gnu_hash = (const void *)dyn->d_un.d_ptr;
	}
	if (!symtab || !strtab || !gnu_hash)
		return 0;
	count = gnu_hash_count(gnu_hash);
	for (unsigned long i = 1; i < count; i++) {
		const ElfW(Sym) *sym = &symtab[i];

		if (sym->st_shndx == SHN_UNDEF || ELF64_ST_TYPE(sym->st_info) != STT_FUNC ||
		    !sym->st_size || strcmp(strtab + sym->st_name, "_dl_catch_exception"))
			continue;
		catch_fn[*n].start = info->dlpi_addr + sym->st_value;
		catch_fn[*n].end = catch_fn[*n].start + sym->st_size;
		(*n)++;
		break;
	}
	return 0;
}

/* At start-up: where _dl_catch_exception() is in libc and in the loader. */
__attribute__((constructor)) static void cetctl_ldso_init(void)
{
	unsigned long n = 0;

	dl_iterate_phdr(each_object, &n);
}
