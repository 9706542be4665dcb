// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * makecontext/getcontext/setcontext/swapcontext that keep the shadow stack
 * right, for programs started by `cetctl run --shstk` on a glibc without
 * shadow-stack code (Debian 12's 2.36). Without them a context switch
 * leaves the shadow stack where it was and the first `ret` in the new
 * context dies with a control-protection fault: glibc's setcontext itself
 * ends with push+ret, and a context's function runs on the caller's shadow
 * stack. QEMU's coroutines (qemu-img), OpenSSL's ASYNC jobs and others.
 *
 * The design is glibc 2.39's, the ABI glibc itself uses:
 *  - every context started by makecontext runs on its own shadow stack
 *    (map_shadow_stack with SHADOW_STACK_SET_TOKEN), of the context's stack
 *    size / 32, rounded up to 8, plus 20 entries for signal handlers, which
 *    share it;
 *  - a saved context records in ucontext_t.__ssp[] the SSP to resume at
 *    ([0]) and which shadow stack that is ([1], cetctl_ss_identity());
 *  - a switch within one shadow stack INCSSPs up to the saved SSP; a switch
 *    to another one finds the restore token left at or below the saved SSP
 *    when that stack was switched away from, RSTORSSPs to it and
 *    SAVEPREVSSPs, which leaves such a token on the stack we leave;
 *  - the first switch enters the context's function with the trampoline's
 *    address on both stacks, so that its return reaches the trampoline,
 *    which switches to uc_link (or exits).
 * Where we differ from 2.39:
 *  - the shadow stack is mapped at a made context's first switch, not in
 *    makecontext ([0] = 0 and [2] = the size to map until then): a context
 *    that is made but never run costs nothing, and switching to the same
 *    made ucontext_t twice starts the function twice, each on a fresh
 *    shadow stack;
 *  - a context whose function returned gives its shadow stack up (kept
 *    for the next context, or unmapped) once the trampoline has switched
 *    to uc_link, and so does a context whose stack memory the program
 *    unmaps (munmap is interposed for that, and a sweep catches the
 *    munmaps we do not see); 2.39 never frees one. ucontext-stacks.c has
 *    the bound;
 *  - [3] holds a check word over [0..2]: a context we did not save (a
 *    signal handler's ucontext, one saved without a shadow stack) is
 *    refused with a message instead of being searched for a token;
 *  - resuming, on the same shadow stack, a context below the current SSP
 *    (its frames have returned) is refused with a message.
 * Contexts are never matched by their stack or ucontext_t address: shared-
 * stack coroutine libraries run many live contexts on one stack, and QEMU
 * makes every coroutine with the same local ucontext_t.
 *
 * Without a shadow stack (RDSSP reads 0: the host, a descendant, the
 * library switched off) every function is a plain tail jump to glibc's.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* REG_* */
#endif
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <ucontext.h>

#include "preload.h"

/* ucontext_t on x86-64 (the same in glibc 2.36 and 2.39) */
#define UC_RBP		120
#define UC_RBX		128
#define UC_R12		72
#define UC_R13		80
#define UC_R14		88
#define UC_R15		96
#define UC_RDI		104
#define UC_RSI		112
#define UC_RDX		136
#define UC_RCX		152
#define UC_R8		40
#define UC_R9		48
#define UC_RSP		160
#define UC_RIP		168
#define UC_FPREGS	224
#define UC_SIGMASK	296
#define UC_FPREGS_MEM	424
#define UC_MXCSR	448
#define UC_SSP		936

#define G(r) offsetof(ucontext_t, uc_mcontext.gregs[r])
_Static_assert(G(REG_RBP) == UC_RBP && G(REG_RBX) == UC_RBX && G(REG_R12) == UC_R12 &&
	       G(REG_R13) == UC_R13 && G(REG_R14) == UC_R14 && G(REG_R15) == UC_R15 &&
	       G(REG_RDI) == UC_RDI && G(REG_RSI) == UC_RSI && G(REG_RDX) == UC_RDX &&
	       G(REG_RCX) == UC_RCX && G(REG_R8) == UC_R8 && G(REG_R9) == UC_R9 &&
	       G(REG_RSP) == UC_RSP && G(REG_RIP) == UC_RIP, "ucontext_t register offsets");
_Static_assert(offsetof(ucontext_t, uc_mcontext.fpregs) == UC_FPREGS &&
	       offsetof(ucontext_t, uc_sigmask) == UC_SIGMASK &&
	       offsetof(ucontext_t, __fpregs_mem) == UC_FPREGS_MEM &&
	       offsetof(ucontext_t, __fpregs_mem.mxcsr) == UC_MXCSR &&
	       offsetof(ucontext_t, __ssp) == UC_SSP, "ucontext_t offsets");
#undef G

#define UC_CHECK_MAGIC	0x7563747843455443ULL	/* "CETCxtcu": a check, not a secret */

/* __ssp[0..3] of a made context not yet run / of a saved one */
#define SSP0	STR(UC_SSP) "+0"
#define SSP1	STR(UC_SSP) "+8"
#define SSP2	STR(UC_SSP) "+16"
#define SSP3	STR(UC_SSP) "+24"

/* Shadow stack entries for signal handlers on a context's shadow stack. */
#define UC_SIGNAL_FRAMES	20

/* Where the function of a made context returns to (see cetctl_uc_prime). */
extern const char cetctl_uc_start[];

/*
 * makecontext with a shadow stack. The layout is the calling convention's:
 * %rsp at the function's entry points at its return address (the
 * trampoline), the arguments past the sixth follow it, then uc_link, which
 * the trampoline finds through %rbx (callee-saved, so the function keeps
 * it); (%rsp + 8) is 16-byte aligned. Arguments are taken as 64-bit values
 * (greg_t), as glibc does.
 */
__attribute__((visibility("hidden"))) void
cetctl_uc_makecontext(ucontext_t *ucp, void (*func)(void), int argc, ...)
{
	static const int argreg[6] = { REG_RDI, REG_RSI, REG_RDX, REG_RCX, REG_R8, REG_R9 };
	unsigned long lo = (unsigned long)ucp->uc_stack.ss_sp;
	unsigned long hi = lo + ucp->uc_stack.ss_size;
	int nstack = argc > 6 ? argc - 6 : 0;
	unsigned long entry = ((hi - 8UL * (nstack + 1)) & -16UL) - 8;
	greg_t *sp = (greg_t *)entry;
	unsigned long long *ss = ucp->__ssp;
	unsigned long size;
	va_list ap;
	int i;

	ucp->uc_mcontext.gregs[REG_RIP] = (greg_t)func;
	ucp->uc_mcontext.gregs[REG_RSP] = (greg_t)entry;
	ucp->uc_mcontext.gregs[REG_RBX] = (greg_t)&sp[nstack + 1];
	sp[0] = (greg_t)cetctl_uc_start;
	sp[nstack + 1] = (greg_t)ucp->uc_link;
	va_start(ap, argc);
	for (i = 0; i < argc; i++) {
		greg_t v = va_arg(ap, greg_t);

		if (i < 6)
			ucp->uc_mcontext.gregs[argreg[i]] = v;
		else
			sp[i - 5] = v;
	}
	va_end(ap);

	/* glibc 2.39's size: the stack below the entry frame / 32, then room
	 * for signal frames */
	size = entry > lo ? entry - lo : 0;
	size = (((size >> 5) + 7) & ~7UL) + UC_SIGNAL_FRAMES * 8;
	ss[0] = 0;
	ss[1] = 0;
	ss[2] = size;
	ss[3] = ss[0] ^ ss[1] ^ ss[2] ^ UC_CHECK_MAGIC;
}

/* What cetctl_uc_go does; filled by cetctl_uc_plan in the caller's frame. */
struct uc_plan {
	unsigned long ssp;	/* the SSP to resume at */
	unsigned long token;	/* another shadow stack: its restore token is at token - 8; 0: ours */
	unsigned long ident;	/* the shadow stack we are on afterwards */
	unsigned long release;	/* the shadow stack to unmap once left, or 0 */
};
_Static_assert(sizeof(struct uc_plan) == 32, "the assembly reserves 32 bytes");

/* The restore token at or below @ssp on the shadow stack @ident (glibc
 * 2.39's search). A context's own shadow stack is searched down to its
 * base only; the thread's own one until a token turns up. */
static unsigned long find_token(unsigned long ssp, unsigned long ident)
{
	unsigned long s;

	for (s = ssp;; s -= 8) {
		if (!(ident & 1) && s - 8 < ident)
			cetctl_preload_fatal("setcontext/swapcontext: no restore token on the shadow stack "
					     "of the context to resume (it runs already, or was resumed before)", 0);
		if ((*(volatile unsigned long *)(s - 8) & ~7UL) == s)
			return s;
	}
}

/*
 * How to switch from here (SSP @cur) to @ucp. @finished: we come from the
 * trampoline, the context on this shadow stack has returned.
 */
__attribute__((visibility("hidden"))) void
cetctl_uc_plan(const ucontext_t *ucp, unsigned long cur, long finished, struct uc_plan *p)
{
	const unsigned long long *ss = ucp->__ssp;
	unsigned long me = cetctl_ss_identity();

	if (ss[3] != (ss[0] ^ ss[1] ^ ss[2] ^ UC_CHECK_MAGIC))
		cetctl_preload_fatal("setcontext/swapcontext: the context to resume was not saved or made "
				     "under the shadow stack (a signal handler's context?)", 0);
	if (ss[0] == 0) {
		/* made, not run yet: its shadow stack now */
		unsigned long hi = (unsigned long)ucp->uc_stack.ss_sp + ucp->uc_stack.ss_size;
		unsigned long base = cetctl_uc_stack_new(ss[2], hi);

		p->ssp = base + ss[2] - 8;
		p->token = p->ssp;
		p->ident = base;
	} else if (ss[1] == me) {
		if (ss[0] < cur)
			cetctl_preload_fatal("setcontext/swapcontext: the context to resume is below the "
					     "shadow-stack pointer (its frames have returned)", 0);
		p->ssp = ss[0];
		p->token = 0;
		p->ident = me;
	} else {
		p->ssp = ss[0];
		p->token = find_token(ss[0], ss[1]);
		p->ident = ss[1];
	}
	p->release = finished && p->token ? me : 0;
}

/* rt_sigprocmask failed (-@err): as glibc, -1 with errno set. */
__attribute__((visibility("hidden"))) int cetctl_uc_fail(long err)
{
	errno = (int)-err;
	return -1;
}

/* Shadow stack on and the library not switched off? Else to @label (the
 * tail jump to glibc). The SSP stays in %r11; %rax is left alone (the
 * vector count of a variadic call). */
#define UC_ACTIVE_OR(label)						\
	"	cmpl $0, cetctl_preload_off(%rip)\n"			\
	"	jne " label "\n"					\
	"	xor %r11d, %r11d\n"					\
	UC_RDSSP("%r11")						\
	"	test %r11, %r11\n"					\
	"	jz " label "\n"

/* __ssp[] of the context at @uc: resume at the SSP in @ssp, on the shadow
 * stack we are on; @t1 and @t2 clobbered. */
#define SAVE_SSP(uc, ssp, t1, t2)					\
	"	mov " ssp ", " SSP0 "(" uc ")\n"			\
	SS_IDENTITY(t1, t2)						\
	"	mov " t1 ", " SSP1 "(" uc ")\n"				\
	"	movq $0, " SSP2 "(" uc ")\n"				\
	"	xor " ssp ", " t1 "\n"					\
	"	movabs $" STR(UC_CHECK_MAGIC) ", " t2 "\n"		\
	"	xor " t2 ", " t1 "\n"					\
	"	mov " t1 ", " SSP3 "(" uc ")\n"

/* rt_sigprocmask(SIG_SETMASK, @set, %rdx, _NSIG / 8); to @err on failure */
#define SIGMASK_OR(set, err)						\
	"	lea " set ", %rsi\n"					\
	"	mov $2, %edi\n"						\
	"	mov $8, %r10d\n"					\
	"	mov $14, %eax\n"					\
	"	syscall\n"						\
	"	cmp $-4095, %rax\n"					\
	"	jae " err "\n"

__asm__(
	".text\n"

	/* makecontext: variadic, so a tail jump to the C one keeps the arguments. */
	ENTRY(makecontext)
	UC_ACTIVE_OR("9f")
	"	jmp cetctl_uc_makecontext\n"
	"9:\n"
	TAILJUMP(8)
	END(makecontext)

	/* getcontext: record the SSP our caller will have once we returned,
	 * then glibc's, jumped to so that it sees our caller's frame. */
	ENTRY(getcontext)
	UC_ACTIVE_OR("9f")
	"	lea 8(%r11), %r11\n"
	SAVE_SSP("%rdi", "%r11", "%rcx", "%rdx")
	"9:\n"
	TAILJUMP(9)
	END(getcontext)

	ENTRY(setcontext)
	UC_ACTIVE_OR("9f")
	"	xor %esi, %esi\n"
	"	xor %edx, %edx\n"
	"	jmp cetctl_uc_set\n"
	"9:\n"
	TAILJUMP(10)
	END(setcontext)

	/*
	 * setcontext's work, swapcontext's second half: %rdi = the context,
	 * %esi = 1 when we come from the trampoline, %rdx = where the old
	 * signal mask goes (swapcontext) or 0. Returns (-1, errno) only when
	 * the signal mask cannot be set, with nothing else changed; else it
	 * does not return. The pushes keep the callee-saved registers for that
	 * return and align the calls; 32 bytes for the plan.
	 */
	HIDDEN_ENTRY(cetctl_uc_set)
	"	push %rbx\n"
	"	push %r12\n"
	"	push %r13\n"
	"	sub $32, %rsp\n"
	"	mov %rdi, %r12\n"
	"	mov %esi, %r13d\n"
	SIGMASK_OR(STR(UC_SIGMASK) "(%rdi)", "6f")
	"	xor %esi, %esi\n"
	UC_RDSSP("%rsi")
	"	mov %r12, %rdi\n"
	"	mov %r13d, %edx\n"
	"	mov %rsp, %rcx\n"
	"	call cetctl_uc_plan\n"
	"	mov %r12, %rdx\n"
	"	jmp cetctl_uc_go\n"
	"6:	mov %rax, %rdi\n"
	"	add $32, %rsp\n"
	"	pop %r13\n"
	"	pop %r12\n"
	"	pop %rbx\n"
	"	jmp cetctl_uc_fail\n"
	END(cetctl_uc_set)

	/* swapcontext: save as getcontext does (the SSP is the one after our
	 * return), then as setcontext, the old signal mask going to %rdi's. */
	ENTRY(swapcontext)
	UC_ACTIVE_OR("9f")
	"	mov %rbx, " STR(UC_RBX) "(%rdi)\n"
	"	mov %rbp, " STR(UC_RBP) "(%rdi)\n"
	"	mov %r12, " STR(UC_R12) "(%rdi)\n"
	"	mov %r13, " STR(UC_R13) "(%rdi)\n"
	"	mov %r14, " STR(UC_R14) "(%rdi)\n"
	"	mov %r15, " STR(UC_R15) "(%rdi)\n"
	"	mov %rdi, " STR(UC_RDI) "(%rdi)\n"
	"	mov %rsi, " STR(UC_RSI) "(%rdi)\n"
	"	mov %rdx, " STR(UC_RDX) "(%rdi)\n"
	"	mov %rcx, " STR(UC_RCX) "(%rdi)\n"
	"	mov %r8, " STR(UC_R8) "(%rdi)\n"
	"	mov %r9, " STR(UC_R9) "(%rdi)\n"
	"	mov (%rsp), %rcx\n"
	"	mov %rcx, " STR(UC_RIP) "(%rdi)\n"
	"	lea 8(%rsp), %rcx\n"
	"	mov %rcx, " STR(UC_RSP) "(%rdi)\n"
	"	lea " STR(UC_FPREGS_MEM) "(%rdi), %rcx\n"
	"	mov %rcx, " STR(UC_FPREGS) "(%rdi)\n"
	"	fnstenv (%rcx)\n"
	"	fldenv (%rcx)\n"		/* fnstenv masked the exceptions */
	"	stmxcsr " STR(UC_MXCSR) "(%rdi)\n"
	"	lea 8(%r11), %r11\n"
	SAVE_SSP("%rdi", "%r11", "%rcx", "%rdx")
	"	lea " STR(UC_SIGMASK) "(%rdi), %rdx\n"
	"	mov %rsi, %rdi\n"
	"	xor %esi, %esi\n"
	"	jmp cetctl_uc_set\n"
	"9:\n"
	TAILJUMP(11)
	END(swapcontext)

	/*
	 * munmap: while context shadow stacks exist, those of contexts whose
	 * stack is in the range go (ucontext-stacks.c); then glibc's.
	 */
	ENTRY(munmap)
	"	cmpl $0, cetctl_preload_off(%rip)\n"
	"	jne 9f\n"
	"	cmpq $0, cetctl_uc_live(%rip)\n"
	"	je 9f\n"
	"	push %rdi\n"
	"	push %rsi\n"
	"	sub $8, %rsp\n"
	"	call cetctl_uc_stack_unmapped\n"
	"	add $8, %rsp\n"
	"	pop %rsi\n"
	"	pop %rdi\n"
	"9:\n"
	TAILJUMP(12)
	END(munmap)

	/*
	 * The switch, past the point of no return: %rdx = the context, the
	 * plan at (%rsp). The SSP is the one the plan was made for (every call
	 * since returned). On another shadow stack: RSTORSSP to its token,
	 * SAVEPREVSSP (a token on the one we leave), note where we are, unmap
	 * the left one if its context finished (a call on the new shadow
	 * stack, in the slot of the token just used, and on the old normal
	 * stack, which is still the program's). Then INCSSP up to the saved
	 * SSP, load the registers, jump.
	 */
	HIDDEN_ENTRY(cetctl_uc_go)
	"	mov 0(%rsp), %rcx\n"
	"	mov 8(%rsp), %rdi\n"
	"	mov 16(%rsp), %r8\n"
	"	mov 24(%rsp), %r9\n"
	"	mov " STR(UC_FPREGS) "(%rdx), %rax\n"
	"	fldenv (%rax)\n"
	"	ldmxcsr " STR(UC_MXCSR) "(%rdx)\n"
	"	test %rdi, %rdi\n"
	"	jz 1f\n"
	RSTORSSP("-8(%rdi)")
	SAVEPREVSSP
	SS_SET_CURRENT("%r8", "%rax")
	"	test %r9, %r9\n"
	"	jz 2f\n"
	"	mov %rsp, %rbx\n"
	"	and $-16, %rsp\n"
	"	push %rdx\n"
	"	push %rcx\n"
	"	push %rdi\n"
	"	push %rbx\n"
	"	mov %r9, %rdi\n"
	"	call cetctl_uc_stack_release\n"
	"	pop %rbx\n"
	"	pop %rdi\n"
	"	pop %rcx\n"
	"	pop %rdx\n"
	"	mov %rbx, %rsp\n"
	"2:	mov %rdi, %rax\n"
	"	jmp 3f\n"
	"1:	xor %eax, %eax\n"
	UC_RDSSP("%rax")
	"3:	sub %rax, %rcx\n"
	"	shr $3, %rcx\n"
	"	jz 5f\n"
	"4:	mov $255, %eax\n"
	"	cmp %rax, %rcx\n"
	"	cmovb %rcx, %rax\n"
	INCSSP("%rax")
	"	sub %rax, %rcx\n"
	"	jnz 4b\n"
	"5:	mov " STR(UC_RSP) "(%rdx), %rsp\n"
	"	mov " STR(UC_RBX) "(%rdx), %rbx\n"
	"	mov " STR(UC_RBP) "(%rdx), %rbp\n"
	"	mov " STR(UC_R12) "(%rdx), %r12\n"
	"	mov " STR(UC_R13) "(%rdx), %r13\n"
	"	mov " STR(UC_R14) "(%rdx), %r14\n"
	"	mov " STR(UC_R15) "(%rdx), %r15\n"
	"	mov " STR(UC_RDI) "(%rdx), %rdi\n"
	"	mov " STR(UC_RSI) "(%rdx), %rsi\n"
	"	mov " STR(UC_RCX) "(%rdx), %rcx\n"
	"	mov " STR(UC_R8) "(%rdx), %r8\n"
	"	mov " STR(UC_R9) "(%rdx), %r9\n"
	"	mov " STR(UC_RIP) "(%rdx), %r10\n"
	"	mov " STR(UC_RDX) "(%rdx), %rdx\n"
	"	xor %eax, %eax\n"
	"	jmp *%r10\n"
	END(cetctl_uc_go)

	/*
	 * Prime a shadow stack for a context's first switch (%rdi = a restore
	 * token on it: the one map_shadow_stack put at its top, or the one a
	 * finished context left on a spare; %rsi = its top), as glibc 2.39's
	 * __push___start_context does: move onto it, pop what is left above
	 * the token, CALL so that the trampoline's address is its top entry
	 * (the normal-stack copy is dropped: the context's stack holds it, see
	 * cetctl_uc_makecontext), move back. Each move leaves a restore token
	 * on the stack it leaves: ours is used at once, the new one's (below
	 * the entry) is what the first switch finds. Signals are blocked by
	 * the caller: a handler would run on the new, small shadow stack.
	 */
	HIDDEN_ENTRY(cetctl_uc_prime)
	"	xor %ecx, %ecx\n"
	UC_RDSSP("%rcx")
	RSTORSSP("(%rdi)")
	SAVEPREVSSP
	"	lea 8(%rdi), %rax\n"
	"	sub %rax, %rsi\n"
	"	shr $3, %rsi\n"
	"	jz 3f\n"
	"2:	mov $255, %eax\n"
	"	cmp %rax, %rsi\n"
	"	cmovb %rsi, %rax\n"
	INCSSP("%rax")
	"	sub %rax, %rsi\n"
	"	jnz 2b\n"
	"3:	call 1f\n"
	".globl cetctl_uc_start\n"
	".hidden cetctl_uc_start\n"
	"cetctl_uc_start:\n"
	"	jmp cetctl_uc_trampoline\n"
	"1:	add $8, %rsp\n"
	RSTORSSP("-8(%rcx)")
	SAVEPREVSSP
	"	ret\n"
	END(cetctl_uc_prime)

	/*
	 * A made context's function returned here (its `ret` took the entry
	 * cetctl_uc_prime pushed). %rbx points at uc_link (cetctl_uc_makecontext).
	 * To uc_link, unmapping this shadow stack once left; none: exit(0).
	 * If the switch fails, exit with its -1, as glibc.
	 */
	HIDDEN_ENTRY(cetctl_uc_trampoline)
	"	mov %rbx, %rsp\n"
	"	mov (%rsp), %rdi\n"
	"	and $-16, %rsp\n"
	"	test %rdi, %rdi\n"
	"	jz 1f\n"
	"	mov $1, %esi\n"
	"	xor %edx, %edx\n"
	"	call cetctl_uc_set\n"
	"	mov %eax, %edi\n"
	"	jmp 2f\n"
	"1:	xor %edi, %edi\n"
	"2:	call exit@PLT\n"
	"	hlt\n"
	END(cetctl_uc_trampoline)
);
