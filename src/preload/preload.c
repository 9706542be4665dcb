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
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* dladdr, RTLD_NEXT */
#endif
#include <dlfcn.h>
#include <link.h>
#include <stdbool.h>
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

/* Set when the library must stay out of the way: plain pass-through. */
__attribute__((visibility("hidden"))) int cetctl_preload_off;

/*
 * Take our own path out of LD_PRELOAD: the shadow stack is the launched
 * program's only (exec resets it), so its descendants have nothing to gain
 * from the library and much to lose (a 32-bit child's loader complains, an
 * ASan child refuses to start, a set-user-ID child has it ignored).
 */
static void unexport_self(void)
{
	const char *cur = getenv("LD_PRELOAD");
	Dl_info info;
	char *out, *tok, *save, *copy;
	size_t n;

	if (!cur || !dladdr((void *)unexport_self, &info) || !info.dli_fname)
		return;
	n = strlen(cur) + 1;
	copy = malloc(n);
	out = malloc(n);
	if (!copy || !out)
		goto done;
	memcpy(copy, cur, n);
	out[0] = '\0';
	for (tok = strtok_r(copy, ": \t", &save); tok; tok = strtok_r(NULL, ": \t", &save)) {
		if (strcmp(tok, info.dli_fname) == 0)
			continue;
		if (out[0])
			strcat(out, ":");
		strcat(out, tok);
	}
	if (out[0])
		setenv("LD_PRELOAD", out, 1);
	else
		unsetenv("LD_PRELOAD");
done:
	free(copy);
	free(out);
}

/* A shared sanitizer runtime among the loaded objects (by name: a failing
 * dlsym() would longjmp inside the loader, see names[] above). */
static int sanitizer_loaded(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *n = info->dlpi_name;

	(void)size;
	(void)data;
	return n && (strstr(n, "/libasan.so") || strstr(n, "/libtsan.so") ||
		     strstr(n, "/libhwasan.so") || strstr(n, "libclang_rt."));
}

__attribute__((constructor)) static void cetctl_preload_init(void)
{
	long i;

	unexport_self();
	/* A sanitizer runtime owns setjmp/longjmp (it intercepts them): keep out. */
	if (dl_iterate_phdr(sanitizer_loaded, NULL))
		cetctl_preload_off = 1;
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
	"	cmpl $0, cetctl_preload_off(%rip)\n"			\
	"	jne 1f\n"						\
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
 * Where a longjmp through us must land: per thread, a small stack of
 * records {target %rsp, SSP to return to, real resume address}, keyed by
 * the stack pointer the longjmp restores. One record is not enough: a
 * signal handler may run inside glibc's siglongjmp (when it restores a mask
 * that unblocks a pending signal) and do its own setjmp/longjmp; the outer
 * longjmp must still find its own record when it lands. Slots are reserved
 * with one instruction before they are filled, so a handler interrupting a
 * push gets the slot above. Initial-exec TLS: the library is loaded at
 * start-up (LD_PRELOAD), so it lives in static TLS.
 */
#define LANDINGS	32

struct landing {
	unsigned long sp, ssp, pc;
};
struct landings {
	unsigned int n;
	struct landing e[LANDINGS];
};
static __thread struct landings landings __attribute__((tls_model("initial-exec")));

struct resume {
	unsigned long ssp, pc;	/* returned in %rax:%rdx */
};

__attribute__((visibility("hidden"))) void
cetctl_preload_push(unsigned long sp, unsigned long ssp, unsigned long pc)
{
	struct landings *l = &landings;
	unsigned int i = __atomic_fetch_add(&l->n, 1, __ATOMIC_RELAXED);

	if (i >= LANDINGS) {
		/* Deeper than any real nesting: the oldest records are for
		 * longjmps that never landed. Keep the newest. */
		i = LANDINGS - 1;
		__atomic_store_n(&l->n, LANDINGS, __ATOMIC_RELAXED);
	}
	l->e[i].sp = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	l->e[i].ssp = ssp;
	l->e[i].pc = pc;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	l->e[i].sp = sp;
}

/* The newest record for a longjmp landing with %rsp = @sp, popped with
 * every record above it (longjmps that never landed); {0, 0} if none. */
__attribute__((visibility("hidden"))) struct resume cetctl_preload_take(unsigned long sp)
{
	struct landings *l = &landings;
	struct resume r = { 0, 0 };
	unsigned int i = __atomic_load_n(&l->n, __ATOMIC_RELAXED);

	if (i > LANDINGS)
		i = LANDINGS;
	while (i-- > 0) {
		if (l->e[i].sp == sp) {
			r.ssp = l->e[i].ssp;
			r.pc = l->e[i].pc;
			l->e[i].sp = 0;
			__atomic_store_n(&l->n, i, __ATOMIC_RELAXED);
			break;
		}
	}
	return r;
}

/* A longjmp landed that we have no record for: continuing would jump
 * nowhere (and fault later, far from the cause). */
__attribute__((visibility("hidden"), noreturn)) void cetctl_preload_lost(void)
{
	static const char msg[] = "libcetctl-preload: a longjmp landed without its record\n";
	ssize_t r = write(STDERR_FILENO, msg, sizeof(msg) - 1);

	(void)r;
	abort();
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
	"	cmpl $0, cetctl_preload_off(%rip)\n"			\
	"	jne 2f\n"						\
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
	"	sub $8, %rsp\n"						\
	"	lea 8(%rcx), %rsi\n"					\
	"	mov 56(%rdi), %rdx\n"		/* JB_PC, mangled */	\
	"	ror $0x11, %rdx\n"					\
	"	xor %fs:0x30, %rdx\n"					\
	"	mov 48(%rdi), %rdi\n"		/* JB_RSP, mangled */	\
	"	ror $0x11, %rdi\n"					\
	"	xor %fs:0x30, %rdi\n"					\
	"	call cetctl_preload_push\n"				\
	"	add $8, %rsp\n"						\
	"	pop %rsi\n"						\
	"	pop %rdi\n"						\
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
	"	mov %rsp, %rdi\n"		/* the key: where we landed */	\
	"	push %rax\n"						\
	"	sub $8, %rsp\n"						\
	"	call cetctl_preload_take\n"				\
	"	mov %rax, %rcx\n"					\
	"	mov %rdx, %r8\n"					\
	"	add $8, %rsp\n"						\
	"	pop %rax\n"						\
	"	test %r8, %r8\n"					\
	"	jnz 4f\n"						\
	"	call cetctl_preload_lost\n"				\
	"4:\n"								\
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
