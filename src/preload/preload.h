/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the preload library's two halves share: preload.c (setjmp/longjmp)
 * and ucontext.c (makecontext/getcontext/setcontext/swapcontext, with the
 * shadow stacks of contexts in ucontext-stacks.c).
 */
#ifndef CETCTL_PRELOAD_H
#define CETCTL_PRELOAD_H

#define STR_(x) #x
#define STR(x) STR_(x)

/*
 * CETCTL_PRELOAD_FAKE_SSP (host tests only, never installed): RDSSP
 * "reads" a constant and INCSSP does nothing, so the longjmp path -- the
 * buffer copy, pointer mangling, glibc's jump to our landing pad and the
 * jump on to the caller -- runs on machines without shadow stacks. The
 * ucontext functions read no SSP at all there (UC_RDSSP is 0): their real
 * path switches shadow stacks with RSTORSSP, which cannot be faked, so the
 * host tier checks them as the pass-through they are without a shadow stack.
 */
#ifdef CETCTL_PRELOAD_FAKE_SSP
#define RDSSP(reg)	"	movabs $0x7ff0000ff000, " reg "\n"
#define INCSSP(reg)	"	nop\n"
#define UC_RDSSP(reg)	"	xor " reg ", " reg "\n"
#define RSTORSSP(mem)	"	ud2\n"		/* never reached: identities never differ */
#define SAVEPREVSSP	"	ud2\n"
#else
#define RDSSP(reg)	"	rdsspq " reg "\n"
#define INCSSP(reg)	"	incsspq " reg "\n"
#define UC_RDSSP(reg)	"	rdsspq " reg "\n"
#define RSTORSSP(mem)	"	rstorssp " mem "\n"
#define SAVEPREVSSP	"	saveprevssp\n"
#endif

/* The system's implementations, found with dlsym(RTLD_NEXT). The assembly
 * hard-codes the indices (checked where the names are listed). */
enum { F_SETJMP, F__SETJMP, F_SIGSETJMP, F___SIGSETJMP,
       F_LONGJMP, F__LONGJMP, F_SIGLONGJMP, F___LONGJMP_CHK,
       F_MAKECONTEXT, F_GETCONTEXT, F_SETCONTEXT, F_SWAPCONTEXT, F_MUNMAP, F_MAX };

extern void *cetctl_preload_real[F_MAX];
extern int cetctl_preload_off;

/*
 * Which shadow stack this thread runs on, as glibc 2.39 keeps it (its
 * SSP_BASE in the TCB): the base of a context's shadow stack once a switch
 * went there, 0 while on the thread's own. A saved context and a setjmp
 * buffer record the identity (cetctl_ss_identity), so that a switch back
 * knows whether it is an unwind of the same shadow stack or a move to
 * another one. The thread's own shadow stack is named by the address of
 * this variable with bit 0 set: per thread, never a mapping's (page-aligned)
 * base, known without a system call.
 */
extern __thread unsigned long cetctl_ss_cur __attribute__((tls_model("initial-exec")));

static inline unsigned long cetctl_ss_identity(void)
{
	unsigned long cur = cetctl_ss_cur;

	return cur ? cur : ((unsigned long)&cetctl_ss_cur | 1);
}

/* The same in assembly: @out = the identity, @tmp clobbered. */
#define SS_IDENTITY(out, tmp)						\
	"	mov cetctl_ss_cur@gottpoff(%rip), " tmp "\n"		\
	"	mov %fs:(" tmp "), " out "\n"				\
	"	test " out ", " out "\n"				\
	"	jnz 8f\n"						\
	"	mov %fs:0, " out "\n"					\
	"	add " tmp ", " out "\n"					\
	"	or $1, " out "\n"					\
	"8:\n"

/* Record that this thread now runs on the shadow stack named @reg. */
#define SS_SET_CURRENT(reg, tmp)					\
	"	mov cetctl_ss_cur@gottpoff(%rip), " tmp "\n"		\
	"	mov " reg ", %fs:(" tmp ")\n"

/*
 * Tail-jump to the real function @idx with the arguments untouched. The
 * slow path (a call before our constructor ran) saves every argument
 * register and %rax (the vector count of a variadic call: makecontext)
 * around the resolver; seven pushes on top of the return address keep
 * %rsp 16-byte aligned.
 */
#define TAILJUMP(idx)							\
	"	mov cetctl_preload_real+8*" STR(idx) "(%rip), %r11\n"	\
	"	test %r11, %r11\n"					\
	"	jnz 7f\n"						\
	"	push %rdi\n"						\
	"	push %rsi\n"						\
	"	push %rdx\n"						\
	"	push %rcx\n"						\
	"	push %r8\n"						\
	"	push %r9\n"						\
	"	push %rax\n"						\
	"	mov $" STR(idx) ", %edi\n"				\
	"	call cetctl_preload_resolve\n"				\
	"	mov %rax, %r11\n"					\
	"	pop %rax\n"						\
	"	pop %r9\n"						\
	"	pop %r8\n"						\
	"	pop %rcx\n"						\
	"	pop %rdx\n"						\
	"	pop %rsi\n"						\
	"	pop %rdi\n"						\
	"7:	jmp *%r11\n"

#define ENTRY(name)							\
	".globl " #name "\n"						\
	".type " #name ", @function\n"					\
	#name ":\n"							\
	"	endbr64\n"

#define HIDDEN_ENTRY(name)						\
	".hidden " #name "\n"						\
	ENTRY(name)

#define END(name) ".size " #name ", .-" #name "\n"

/*
 * The shadow stacks of contexts (ucontext-stacks.c). A new one is mapped
 * (or a spare taken), primed for the context's first switch and recorded
 * with the end of the context's stack, @hi; its base is returned. Never
 * fails: no memory is a fatal error.
 */
unsigned long cetctl_uc_stack_new(unsigned long size, unsigned long hi);
/* The context that ran on the shadow stack @base has finished and we have
 * left it: unmap it or keep it as a spare (nothing if it is not ours). */
void cetctl_uc_stack_release(unsigned long base);
/* The program is about to unmap [@addr, @addr + @len): the shadow stacks
 * of contexts whose stack was in there are given up. */
void cetctl_uc_stack_unmapped(unsigned long addr, unsigned long len);
/* Prime the shadow stack whose restore token is at @token and whose top is
 * @top: the trampoline's entry on top, a restore token below it
 * (ucontext.c). Signals blocked. */
void cetctl_uc_prime(unsigned long token, unsigned long top);

/* One line on stderr, "libcetctl-preload: @what[: strerror(@err)]", then
 * abort(): the program must not go on without a consistent shadow stack. */
__attribute__((noreturn)) void cetctl_preload_fatal(const char *what, int err);

#endif
