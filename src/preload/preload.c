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
 *           entry (both measured on emulated CET, see LONGJMP below). When
 *           the buffer was filled on another shadow stack (a context's, see
 *           ucontext.c), the pad switches to it first, as 2.39 does.
 * Where: bytes 80..103 of struct __jmp_buf_tag, inside __saved_mask past
 * the 8 bytes the kernel's sigset uses: the SSP (glibc 2.28+ built with CET
 * keeps its SSP at the same offset, 80), a check word, and which shadow
 * stack the SSP is on (cetctl_ss_identity). The check word makes a buffer
 * filled by a setjmp we did not see (one inside libc) be left alone.
 * When RDSSP reads 0 (shadow stacks off, or a CPU without CET, where RDSSP
 * is a NOP) everything is a plain pass-through and the buffer is not
 * touched: programs exec'd from the launched one inherit LD_PRELOAD but
 * not the shadow stack, and must not notice.
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

#include "preload.h"

/*
 * Where in struct __jmp_buf_tag (200 bytes): __saved_mask starts at 72 and
 * the kernel's sigset uses its first 8 bytes; the rest is ours.
 */
#define JB_RBX_OFFSET	0
#define JB_RSP_OFFSET	48
#define JB_PC_OFFSET	56
#define JB_SSP_OFFSET	80
#define JB_CHECK_OFFSET	88
#define JB_IDENT_OFFSET	96
#define JB_CHECK_MAGIC	0x5353505f43455443ULL	/* "CETC_PSS": a check, not a secret */

_Static_assert(JB_IDENT_OFFSET + 8 <= 200, "struct __jmp_buf_tag is 200 bytes on x86-64");

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
	"makecontext", "getcontext", "setcontext", "swapcontext", "munmap",
};

/* The assembly hard-codes these indices. */
_Static_assert(F_SETJMP == 0 && F__SETJMP == 1 && F_SIGSETJMP == 2 && F___SIGSETJMP == 3 &&
	       F_LONGJMP == 4 && F__LONGJMP == 5 && F_SIGLONGJMP == 6 && F___LONGJMP_CHK == 7 &&
	       F_MAKECONTEXT == 8 && F_GETCONTEXT == 9 && F_SETCONTEXT == 10 &&
	       F_SWAPCONTEXT == 11 && F_MUNMAP == 12, "entry indices");

/* Read by the assembly; an index into it per entry point. */
__attribute__((visibility("hidden"))) void *cetctl_preload_real[F_MAX];

__attribute__((visibility("hidden"))) __thread unsigned long cetctl_ss_cur
	__attribute__((tls_model("initial-exec")));

__attribute__((visibility("hidden"), noreturn)) void cetctl_preload_fatal(const char *what, int err)
{
	static const char pfx[] = "libcetctl-preload: ";
	char line[512];
	size_t n = 0;
	const char *parts[4] = { pfx, what, err ? ": " : "", err ? strerror(err) : "" };
	size_t i, len;
	ssize_t r;

	/* one write: stderr is shared with the program */
	for (i = 0; i < 4; i++) {
		len = strlen(parts[i]);
		if (len > sizeof(line) - 1 - n)
			len = sizeof(line) - 1 - n;
		memcpy(line + n, parts[i], len);
		n += len;
	}
	line[n++] = '\n';
	r = write(STDERR_FILENO, line, n);
	(void)r;
	abort();
}

static void die(const char *what)
{
	char msg[128] = "cannot find the C library's ";

	strncat(msg, what, sizeof(msg) - strlen(msg) - 1);
	cetctl_preload_fatal(msg, 0);
}

/* Called from the assembly when a pointer is still NULL (a call before
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

/* setjmp family: record the SSP and the shadow stack's identity (if any) in
 * the buffer (%rdi), with a check word over both. */
#define SETJMP(name, idx)						\
	ENTRY(name)							\
	"	cmpl $0, cetctl_preload_off(%rip)\n"			\
	"	jne 1f\n"						\
	"	xor %eax, %eax\n"					\
	RDSSP("%rax")							\
	"	test %rax, %rax\n"					\
	"	jz 1f\n"						\
	"	mov %rax, " STR(JB_SSP_OFFSET) "(%rdi)\n"		\
	SS_IDENTITY("%rcx", "%rdx")					\
	"	mov %rcx, " STR(JB_IDENT_OFFSET) "(%rdi)\n"		\
	"	xor %rax, %rcx\n"					\
	"	movabs $" STR(JB_CHECK_MAGIC) ", %rax\n"		\
	"	xor %rax, %rcx\n"					\
	"	mov %rcx, " STR(JB_CHECK_OFFSET) "(%rdi)\n"		\
	"1:\n"								\
	TAILJUMP(idx)							\
	END(name)

/*
 * Where a longjmp through us must land: per thread, a ring of records
 * {target %rsp, SSP and shadow-stack identity of the setjmp, real resume
 * address, the caller's %rbx}, each named by a sequence number. The copy
 * of the buffer that glibc jumps with carries that number in its %rbx slot
 * (stored plain, unlike %rsp, %rbp and the PC), so the landing pad finds
 * exactly its own record and puts the real %rbx back.
 *
 * A record whose longjmp never lands (a signal handler that ran inside
 * glibc's siglongjmp jumped elsewhere: an escape) is simply overwritten
 * when the ring comes round. Issue 31: the records used to be a stack
 * searched by the landing %rsp, and escaped records stayed in it; after 31
 * escapes it was full, a longjmp nested in a handler overwrote the outer
 * longjmp's record, and the outer one landed on a stale record with the
 * same %rsp: another setjmp call of the same frame. Now a record can only
 * be lost when LANDINGS newer longjmps started while its own was under way
 * (handlers nested that deep), and then the pad says so and aborts instead
 * of guessing.
 *
 * Signal safety: the number is taken with one atomic add before the slot
 * is filled, and the record is valid only once its number is stored (last),
 * so a handler interrupting a push uses the next slot. Initial-exec TLS:
 * the library is loaded at start-up (LD_PRELOAD), so it lives in static TLS.
 */
#define LANDINGS	32	/* a power of two */

struct landing {
	unsigned long seq;	/* 0: free */
	unsigned long sp, ssp, pc, rbx, ident;
};
struct landings {
	unsigned long last;
	struct landing e[LANDINGS];
};
static __thread struct landings landings __attribute__((tls_model("initial-exec")));

__attribute__((visibility("hidden"))) unsigned long
cetctl_preload_push(unsigned long sp, unsigned long ssp, unsigned long pc,
		    unsigned long rbx, unsigned long ident)
{
	struct landings *l = &landings;
	unsigned long seq = __atomic_add_fetch(&l->last, 1, __ATOMIC_RELAXED);
	struct landing *e = &l->e[seq % LANDINGS];

	e->seq = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	e->sp = sp;
	e->ssp = ssp;
	e->pc = pc;
	e->rbx = rbx;
	e->ident = ident;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	e->seq = seq;
	return seq;
}

/* What the landing pad needs, in its own frame (a handler cannot touch it). */
struct land {
	unsigned long ssp, pc, rbx, ident, same;
};
_Static_assert(sizeof(struct land) == 40, "the pad reserves 40 bytes");

/* A longjmp landed that we have no record for: continuing would jump
 * nowhere or to the wrong place (and fault later, far from the cause). */
static __attribute__((noreturn)) void lost(void)
{
	cetctl_preload_fatal("a longjmp landed without its record", 0);
}

__attribute__((visibility("hidden"))) void
cetctl_preload_land(unsigned long seq, unsigned long sp, struct land *out)
{
	struct landing *e = &landings.e[seq % LANDINGS];

	if (seq == 0 || e->seq != seq || e->sp != sp)
		lost();
	out->ssp = e->ssp;
	out->pc = e->pc;
	out->rbx = e->rbx;
	out->ident = e->ident;
	out->same = e->ident == cetctl_ss_identity();
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	e->seq = 0;
}

/*
 * longjmp family. glibc's longjmp is C code that restores the signal mask,
 * unwinds cleanup buffers and then *calls* the noreturn assembly __longjmp:
 * that call pushes a shadow-stack entry nobody pops, so popping before
 * handing over cannot work (the push would overwrite a live entry of the
 * frame we return to; measured on emulated CET). Instead the real longjmp
 * is given a copy of the buffer whose resume address (pointer-mangled the
 * way glibc does: xor %fs:0x30, rol 17) is our landing pad and whose %rbx
 * is the record's number; glibc does all its work and jumps there with the
 * caller's stack restored; the pad moves the shadow stack to the recorded
 * SSP + 8 (setjmp's own return entry, which `ret` would have popped) and
 * jumps to the real resume address. Nothing is done unless shadow stacks
 * are on and the buffer carries our check word: then it is a plain tail
 * call.
 *
 * The copy sits in our own frame: 208 bytes = the 200-byte buffer plus the
 * fake return slot at 0(%rsp), which keeps %rsp as a function entry expects.
 */
#define LONGJMP(name, idx)						\
	ENTRY(name)							\
	"	cmpl $0, cetctl_preload_off(%rip)\n"			\
	"	jne 2f\n"						\
	"	xor %eax, %eax\n"					\
	RDSSP("%rax")							\
	"	test %rax, %rax\n"					\
	"	jz 2f\n"						\
	"	mov " STR(JB_SSP_OFFSET) "(%rdi), %rcx\n"		\
	"	mov " STR(JB_IDENT_OFFSET) "(%rdi), %r9\n"		\
	"	mov " STR(JB_CHECK_OFFSET) "(%rdi), %rdx\n"		\
	"	movabs $" STR(JB_CHECK_MAGIC) ", %r8\n"			\
	"	xor %r8, %rdx\n"					\
	"	xor %r9, %rdx\n"					\
	"	cmp %rcx, %rdx\n"					\
	"	jne 2f\n"						\
	"	push %rdi\n"						\
	"	push %rsi\n"						\
	"	sub $8, %rsp\n"						\
	"	mov %rcx, %rsi\n"		/* the setjmp's SSP */	\
	"	mov %r9, %r8\n"			/* its shadow stack */	\
	"	mov " STR(JB_RBX_OFFSET) "(%rdi), %rcx\n"		\
	"	mov " STR(JB_PC_OFFSET) "(%rdi), %rdx\n"		\
	"	ror $0x11, %rdx\n"					\
	"	xor %fs:0x30, %rdx\n"					\
	"	mov " STR(JB_RSP_OFFSET) "(%rdi), %rdi\n"		\
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
	"	mov %rax, 8+" STR(JB_RBX_OFFSET) "(%rsp)\n"		\
	"	lea cetctl_preload_pad(%rip), %rdx\n"			\
	"	xor %fs:0x30, %rdx\n"					\
	"	rol $0x11, %rdx\n"					\
	"	mov %rdx, 8+" STR(JB_PC_OFFSET) "(%rsp)\n"		\
	"	lea 8(%rsp), %rdi\n"					\
	"	mov %r9, %rsi\n"					\
	"2:\n"								\
	TAILJUMP(idx)							\
	END(name)

/*
 * The landing pad: entered by glibc's final jump with %rsp, %rbp, %r12-%r15
 * as at the setjmp, %rbx = the record's number and %eax = the setjmp's
 * return value; every other register is free (a setjmp return is a
 * function return). %rsp is 16-byte aligned here (as right after a call
 * returned), so after saving %rax and the 40-byte struct land the call is
 * aligned; it is balanced, like every call before the shadow-stack work.
 *
 * The shadow stack, as glibc 2.39's __longjmp moves it: on the same shadow
 * stack INCSSP up to the recorded SSP + 8; on another one (a longjmp from
 * one context to another, QEMU's coroutines do it) look for the restore
 * token that was left on it when it was switched away from, at or below
 * the recorded SSP, RSTORSSP to it (leaving a token on the stack we leave,
 * SAVEPREVSSP, so that it can be resumed in turn) and INCSSP from there.
 * The search stops at our own SSP: then it was this shadow stack after all.
 */
#define LANDING_PAD							\
	HIDDEN_ENTRY(cetctl_preload_pad)				\
	"	mov %rbx, %rdi\n"		/* the record's number */	\
	"	mov %rsp, %rsi\n"		/* where we landed */	\
	"	push %rax\n"						\
	"	sub $40, %rsp\n"					\
	"	mov %rsp, %rdx\n"					\
	"	call cetctl_preload_land\n"				\
	"	mov 0(%rsp), %rcx\n"		/* the setjmp's SSP */	\
	"	mov 8(%rsp), %r8\n"		/* where to resume */	\
	"	mov 16(%rsp), %rbx\n"		/* the caller's %rbx */	\
	"	mov 24(%rsp), %r9\n"		/* its shadow stack */	\
	"	mov 32(%rsp), %r10\n"		/* ... is ours? */	\
	"	add $40, %rsp\n"					\
	"	pop %rax\n"						\
	"	xor %edx, %edx\n"					\
	RDSSP("%rdx")							\
	"	test %r10, %r10\n"					\
	"	jnz 5f\n"						\
	"	mov %rcx, %rsi\n"					\
	"1:	mov -8(%rsi), %rdi\n"					\
	"	and $-8, %rdi\n"					\
	"	cmp %rsi, %rdi\n"					\
	"	je 2f\n"						\
	"	sub $8, %rsi\n"						\
	"	cmp %rsi, %rdx\n"					\
	"	jne 1b\n"						\
	"	jmp 5f\n"						\
	"2:\n"								\
	RSTORSSP("-8(%rsi)")						\
	SAVEPREVSSP							\
	SS_SET_CURRENT("%r9", "%rdi")					\
	"	mov %rsi, %rdx\n"					\
	"5:	lea 8(%rcx), %rcx\n"					\
	"	sub %rdx, %rcx\n"					\
	"	jbe 3f\n"						\
	"	shr $3, %rcx\n"						\
	"	cmp $0x20000000, %rcx\n"	/* > 4 GiB: not ours */	\
	"	ja 3f\n"						\
	"4:	mov $255, %edx\n"					\
	"	cmp %rdx, %rcx\n"					\
	"	cmovb %rcx, %rdx\n"					\
	INCSSP("%rdx")							\
	"	sub %rdx, %rcx\n"					\
	"	jnz 4b\n"						\
	"3:	jmp *%r8\n"						\
	END(cetctl_preload_pad)

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
