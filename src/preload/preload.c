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
 *  longjmp: hand the real longjmp a copy of the buffer that resumes at our
 *           landing pad, which INCSSPs the shadow stack back to the stored
 *           SSP plus one entry (setjmp's own return address, which `ret`
 *           would have popped) and jumps to the real resume address. Popping
 *           before calling glibc cannot work: its longjmp ends by *calling*
 *           the noreturn __longjmp, and that push would overwrite a live
 *           entry (both measured on emulated CET, see LONGJMP below).
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

/*
 * CETCTL_PRELOAD_FAKE_SSP (host tests only, never installed): RDSSP
 * "reads" a constant and INCSSP does nothing, so the shadow-stack path --
 * the buffer copy, pointer mangling, glibc's jump to our landing pad and
 * the jump on to the caller -- runs on machines without shadow stacks.
 */
#ifdef CETCTL_PRELOAD_FAKE_SSP
#define RDSSP(reg)	"	movabs $0x7ff0000ff000, " reg "\n"
#define INCSSP(reg)	"	nop\n"
#else
#define RDSSP(reg)	"	rdsspq " reg "\n"
#define INCSSP(reg)	"	incsspq " reg "\n"
#endif

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
	RDSSP("%rax")						\
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
 * Where a longjmp through us must land, per thread: the SSP of the setjmp's
 * caller and the real resume address. Initial-exec TLS: the library is
 * loaded at start-up (LD_PRELOAD), so it lives in static TLS.
 */
struct landing {
	unsigned long ssp;
	unsigned long pc;
};
static __thread struct landing landing __attribute__((tls_model("initial-exec")));

__attribute__((visibility("hidden"))) struct landing *cetctl_preload_landing(void)
{
	return &landing;
}

/*
 * longjmp family. glibc's longjmp is C code that restores the signal mask,
 * unwinds cleanup buffers and then *calls* the noreturn assembly __longjmp:
 * that call pushes a shadow-stack entry nobody pops, so popping before
 * handing over cannot work (the push would overwrite a live entry of the
 * frame we return to; measured on emulated CET). Instead the real longjmp
 * is given a copy of the buffer whose resume address (pointer-mangled the
 * way glibc does: xor %fs:0x30, rol 17) is our landing pad; glibc does all
 * its work and jumps there with the caller's registers and stack restored;
 * the pad pops the shadow stack to the recorded SSP + 8 (setjmp's own
 * return entry, which `ret` would have popped) and jumps to the real
 * resume address. Nothing is done unless shadow stacks are on and the
 * buffer carries our check word: then it is a plain tail call.
 *
 * The copy sits in our own frame: 208 bytes = the 200-byte buffer plus the
 * fake return slot at 0(%rsp), which keeps %rsp as a function entry expects.
 */
#define LONGJMP(name, idx)						\
	ENTRY(name)							\
	"	xor %eax, %eax\n"					\
	RDSSP("%rax")						\
	"	test %rax, %rax\n"					\
	"	jz 2f\n"						\
	"	mov " STR(JB_SSP_OFFSET) "(%rdi), %rcx\n"		\
	"	mov " STR(JB_CHECK_OFFSET) "(%rdi), %rdx\n"		\
	"	movabs $" STR(JB_CHECK_MAGIC) ", %r8\n"			\
	"	xor %r8, %rdx\n"					\
	"	cmp %rcx, %rdx\n"					\
	"	jne 2f\n"						\
	"	push %rdi\n"						\
	"	push %rsi\n"						\
	"	push %rcx\n"						\
	"	call cetctl_preload_landing\n"				\
	"	pop %rcx\n"						\
	"	pop %rsi\n"						\
	"	pop %rdi\n"						\
	"	add $8, %rcx\n"						\
	"	mov %rcx, (%rax)\n"					\
	"	mov 56(%rdi), %rdx\n"		/* JB_PC, mangled */	\
	"	ror $0x11, %rdx\n"					\
	"	xor %fs:0x30, %rdx\n"					\
	"	mov %rdx, 8(%rax)\n"					\
	"	sub $208, %rsp\n"					\
	"	mov %rsi, %r9\n"					\
	"	mov %rdi, %rsi\n"					\
	"	lea 8(%rsp), %rdi\n"					\
	"	mov $25, %ecx\n"					\
	"	rep movsq\n"						\
	"	lea cetctl_preload_pad(%rip), %rdx\n"			\
	"	xor %fs:0x30, %rdx\n"					\
	"	rol $0x11, %rdx\n"					\
	"	mov %rdx, 8+56(%rsp)\n"					\
	"	lea 8(%rsp), %rdi\n"					\
	"	mov %r9, %rsi\n"					\
	"2:\n"								\
	TAILJUMP(idx)							\
	END(name)

/*
 * The landing pad: entered by glibc's final jump with %rsp, %rbp, %rbx,
 * %r12-%r15 as at the setjmp and %eax = its return value; every other
 * register is free (a setjmp return is a function return). %rsp is 16-byte
 * aligned here (as right after a call returned), so after saving %rax and
 * 8 bytes of padding the call is aligned; it is balanced, like every call
 * before the INCSSP loop.
 */
#define LANDING_PAD							\
	".globl cetctl_preload_pad\n"					\
	".hidden cetctl_preload_pad\n"					\
	".type cetctl_preload_pad, @function\n"				\
	"cetctl_preload_pad:\n"						\
	"	endbr64\n"						\
	"	push %rax\n"						\
	"	sub $8, %rsp\n"						\
	"	call cetctl_preload_landing\n"				\
	"	mov %rax, %rdx\n"					\
	"	add $8, %rsp\n"						\
	"	pop %rax\n"						\
	"	mov (%rdx), %rcx\n"					\
	"	mov 8(%rdx), %r8\n"					\
	"	xor %r9d, %r9d\n"					\
	RDSSP("%r9")						\
	"	sub %r9, %rcx\n"					\
	"	jbe 3f\n"						\
	"	shr $3, %rcx\n"						\
	"	cmp $0x20000000, %rcx\n"	/* > 4 GiB: not ours */	\
	"	ja 3f\n"						\
	"1:	mov $255, %edx\n"					\
	"	cmp %rdx, %rcx\n"					\
	"	cmovb %rcx, %rdx\n"					\
	INCSSP("%rdx")						\
	"	sub %rdx, %rcx\n"					\
	"	jnz 1b\n"						\
	"3:	jmp *%r8\n"						\
	".size cetctl_preload_pad, .-cetctl_preload_pad\n"

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
	LANDING_PAD
);
