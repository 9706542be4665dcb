// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libcetctl-preload.so - setjmp/longjmp that keep the shadow stack right,
 * for programs started by `cetctl run --shstk` on a glibc that does not
 * manage shadow stacks (Debian 12's 2.36 has no RDSSP/INCSSP at all).
 *
 * The problem: longjmp restores %rsp and jumps, but leaves the shadow
 * stack where it was, deeper than the frame it returns to; the next `ret`
 * compares against a stale entry and the program dies with a
 * control-protection fault (SEGV_CPERR).
 *
 * The fix, glibc 2.39's own, done around the system's functions:
 *  setjmp:  RDSSP and store the SSP in the jmp_buf, then tail-jump to the
 *           real setjmp (a jump, not a call: it must see our caller's frame);
 *  longjmp: RDSSP again and INCSSP the shadow stack back to the stored SSP
 *           plus one entry (setjmp's own return address, which `ret` would
 *           have popped) plus one more, then tail-jump to the real longjmp.
 *           The real one (glibc's C __libc_siglongjmp / __longjmp_chk) makes
 *           balanced calls and then *calls* the noreturn assembly __longjmp,
 *           which pushes one entry that is never popped: we make room for
 *           it. Measured on emulated CET: without that entry accounted for,
 *           the SSP lands one entry deep and the next return faults.
 * Where: bytes 80..95 of struct __jmp_buf_tag, inside __saved_mask past the
 * 8 bytes the kernel's sigset uses; glibc 2.28+ built with CET keeps its
 * SSP at the same offset. Stored with a check word so a buffer filled by a
 * setjmp we did not see (one inside libc) is left alone.
 * When RDSSP reads 0 (shadow stacks off, or a CPU without CET, where RDSSP
 * is a NOP) everything is a plain pass-through and the buffer is not
 * touched: programs exec'd from the launched one inherit LD_PRELOAD but
 * not the shadow stack, and must not notice.
 * Not covered: makecontext/swapcontext/setcontext (ucontext), which need
 * shadow-stack tokens and a new shadow stack per context.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define JB_SSP_OFFSET	80
#define JB_CHECK_OFFSET	88
#define JB_CHECK_MAGIC	0x5353505f43455443ULL	/* "CETC_PSS": a check, not a secret */

_Static_assert(JB_CHECK_OFFSET + 8 <= 200, "struct __jmp_buf_tag is 200 bytes on x86-64");

#define STR_(x) #x
#define STR(x) STR_(x)

/* The system's implementations, found with dlsym(RTLD_NEXT). */
enum { F_SETJMP, F__SETJMP, F_SIGSETJMP, F___SIGSETJMP,
       F_LONGJMP, F__LONGJMP, F_SIGLONGJMP, F___LONGJMP_CHK, F_MAX };

/*
 * Only names glibc really exports: a failing dlsym() reports its error with
 * a longjmp inside the dynamic loader, which this library cannot see and
 * which, under a shadow stack, faults at the loader's next return
 * (measured: _dl_catch_exception). glibc has no "sigsetjmp" symbol (the
 * header maps it to __sigsetjmp), so ours forwards to __sigsetjmp.
 */
static const char *const names[F_MAX] = {
	"setjmp", "_setjmp", "__sigsetjmp", "__sigsetjmp",
	"longjmp", "_longjmp", "siglongjmp", "__longjmp_chk",
};

/* The assembly below hard-codes these indices. */
_Static_assert(F_SETJMP == 0 && F__SETJMP == 1 && F_SIGSETJMP == 2 && F___SIGSETJMP == 3 &&
	       F_LONGJMP == 4 && F__LONGJMP == 5 && F_SIGLONGJMP == 6 && F___LONGJMP_CHK == 7,
	       "entry indices");

/* Read by the assembly below; an index into it per entry point. */
__attribute__((visibility("hidden"))) void *cetctl_preload_real[F_MAX];

static void die(const char *what)
{
	static const char msg[] = "libcetctl-preload: cannot find the C library's ";
	ssize_t r;

	r = write(STDERR_FILENO, msg, sizeof(msg) - 1);
	r = write(STDERR_FILENO, what, strlen(what));
	r = write(STDERR_FILENO, "\n", 1);
	(void)r;
	abort();
}

/* Called from the assembly when a pointer is still NULL (a setjmp before
 * our constructor ran); also the constructor's worker. */
__attribute__((visibility("hidden"))) void *cetctl_preload_resolve(long idx)
{
	void *p = cetctl_preload_real[idx];

	if (p)
		return p;
	p = dlsym(RTLD_NEXT, names[idx]);
	if (!p)
		die(names[idx]);
	__atomic_store_n(&cetctl_preload_real[idx], p, __ATOMIC_RELEASE);
	return p;
}

__attribute__((constructor)) static void cetctl_preload_init(void)
{
	long i;

	for (i = 0; i < F_MAX; i++)
		cetctl_preload_resolve(i);
}

/*
 * Tail-jump to the real function @idx with the arguments untouched.
 * The slow path saves the three argument registers around the resolver;
 * three pushes on top of the return address keep %rsp 16-byte aligned.
 */
#define TAILJUMP(idx)							\
	"	mov cetctl_preload_real+8*" STR(idx) "(%rip), %rax\n"	\
	"	test %rax, %rax\n"					\
	"	jnz 7f\n"						\
	"	push %rdi\n"						\
	"	push %rsi\n"						\
	"	push %rdx\n"						\
	"	mov $" STR(idx) ", %edi\n"				\
	"	call cetctl_preload_resolve\n"				\
	"	pop %rdx\n"						\
	"	pop %rsi\n"						\
	"	pop %rdi\n"						\
	"7:	jmp *%rax\n"

#define ENTRY(name)							\
	".globl " #name "\n"						\
	".type " #name ", @function\n"					\
	#name ":\n"							\
	"	endbr64\n"

#define END(name) ".size " #name ", .-" #name "\n"

/* setjmp family: record the SSP (if any) in the buffer (%rdi). */
#define SETJMP(name, idx)						\
	ENTRY(name)							\
	"	xor %eax, %eax\n"					\
	"	rdsspq %rax\n"						\
	"	test %rax, %rax\n"					\
	"	jz 1f\n"						\
	"	mov %rax, " STR(JB_SSP_OFFSET) "(%rdi)\n"		\
	"	movabs $" STR(JB_CHECK_MAGIC) ", %rcx\n"		\
	"	xor %rax, %rcx\n"					\
	"	mov %rcx, " STR(JB_CHECK_OFFSET) "(%rdi)\n"		\
	"1:\n"								\
	TAILJUMP(idx)							\
	END(name)

/*
 * longjmp family: pop the shadow stack back to the recorded SSP + 16 (the
 * setjmp return entry, and the entry glibc's own `call __longjmp` will push).
 * Nothing is done unless shadow stacks are on, the buffer carries our
 * check word, and the target lies above the current SSP within 4 GiB
 * (otherwise it is another shadow stack, or not ours to fix). INCSSP
 * takes at most 255 entries at a time.
 */
#define LONGJMP(name, idx)						\
	ENTRY(name)							\
	"	xor %eax, %eax\n"					\
	"	rdsspq %rax\n"						\
	"	test %rax, %rax\n"					\
	"	jz 2f\n"						\
	"	mov " STR(JB_SSP_OFFSET) "(%rdi), %rcx\n"		\
	"	mov " STR(JB_CHECK_OFFSET) "(%rdi), %rdx\n"		\
	"	movabs $" STR(JB_CHECK_MAGIC) ", %r8\n"			\
	"	xor %r8, %rdx\n"					\
	"	cmp %rcx, %rdx\n"					\
	"	jne 2f\n"						\
	"	add $16, %rcx\n"					\
	"	sub %rax, %rcx\n"					\
	"	jbe 2f\n"						\
	"	shr $3, %rcx\n"						\
	"	cmp $0x20000000, %rcx\n"				\
	"	ja 2f\n"						\
	"1:	mov $255, %edx\n"					\
	"	cmp %rdx, %rcx\n"					\
	"	cmovb %rcx, %rdx\n"					\
	"	incsspq %rdx\n"						\
	"	sub %rdx, %rcx\n"					\
	"	jnz 1b\n"						\
	"2:\n"								\
	TAILJUMP(idx)							\
	END(name)

__asm__(
	".text\n"
	SETJMP(setjmp, 0)
	SETJMP(_setjmp, 1)
	SETJMP(sigsetjmp, 2)
	SETJMP(__sigsetjmp, 3)
	LONGJMP(longjmp, 4)
	LONGJMP(_longjmp, 5)
	LONGJMP(siglongjmp, 6)
	LONGJMP(__longjmp_chk, 7)
);
