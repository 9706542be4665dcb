// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The stopped program, through ptrace: every request (launch_pt()), the
 * failure recorded in the result, its registers and text (each write
 * counted only when read back), the system-call instruction poked for
 * the injected calls and put back, and the end of a failed start-up: an
 * injected exit_group, or SIGKILL. Calls the events part (waits for the
 * stops it causes).
 */
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shstk-launch-internal.h"

#define INSN_INT80	0x80cdUL	/* cd 80: the 32-bit entry */
#define NR32_EXIT_GROUP	252

/*
 * ptrace() with every argument a full 64-bit word: glibc reads addr and data
 * as pointers through varargs, so an int there would leave the upper half
 * unspecified.
 */
long launch_pt(int req, pid_t pid, unsigned long addr, unsigned long data)
{
	return ptrace((enum __ptrace_request)req, pid, (void *)addr, (void *)data);
}

/* A failed step, in the result: -1, for `return launch_fail(...)`. */
int launch_result_fail(struct launch_result *res, enum launch_stage stage, int err,
		       const char *what)
{
	res->stage = stage;
	res->err = err;
	res->what = what;
	return -1;
}

int launch_fail(struct launch *l, enum launch_stage stage, int err, const char *what)
{
	return launch_result_fail(l->res, stage, err, what);
}

/*
 * The registers, as read: a PTRACE_GETREGS answered 0 by a filter writes
 * nothing, so the buffer is filled with a pattern no real register set has
 * (cs is 0x33 or 0x23) and an untouched one is a failure.
 */
int launch_get_regs(struct launch *l, struct user_regs_struct *regs)
{
	memset(regs, 0xa5, sizeof(*regs));
	if (launch_pt(PTRACE_GETREGS, l->pid, 0, (unsigned long)regs) < 0)
		return launch_fail(l, LAUNCH_TRACE, -errno, "PTRACE_GETREGS");
	if (regs->cs == 0xa5a5a5a5a5a5a5a5ULL)
		return launch_fail(l, LAUNCH_TRACE, -EPROTO, "PTRACE_GETREGS returned no registers");
	return 0;
}

/*
 * Set the registers and read them back: they count as set only when
 * PTRACE_GETREGS shows them (a PTRACE_SETREGS answered 0 changes nothing,
 * and resuming then would run the program's own code).
 */
int launch_set_regs(struct launch *l, const struct user_regs_struct *want)
{
	struct user_regs_struct got;

	if (launch_pt(PTRACE_SETREGS, l->pid, 0, (unsigned long)want) < 0)
		return launch_fail(l, LAUNCH_TRACE, -errno, "PTRACE_SETREGS");
	if (launch_get_regs(l, &got) < 0)
		return -1;
	if (got.rip != want->rip || got.rax != want->rax || got.orig_rax != want->orig_rax ||
	    got.rdi != want->rdi || got.rsi != want->rsi || got.rdx != want->rdx ||
	    got.rbx != want->rbx || got.rsp != want->rsp || got.cs != want->cs)
		return launch_fail(l, LAUNCH_TRACE, -EPROTO,
			    "PTRACE_SETREGS: the registers read back are not the ones set");
	return 0;
}

/* The same through the other interface, PTRACE_SETREGSET (NT_PRSTATUS),
 * and read back through PTRACE_GETREGSET: the way out when the first was
 * answered without effect, to make the program exit by itself. */
static int set_regs_regset(struct launch *l, const struct user_regs_struct *want)
{
	struct user_regs_struct got, w = *want;
	struct iovec iov = { &w, sizeof(w) };

	if (launch_pt(PTRACE_SETREGSET, l->pid, NT_PRSTATUS, (unsigned long)&iov) < 0)
		return -1;
	memset(&got, 0xa5, sizeof(got));
	iov = (struct iovec){ &got, sizeof(got) };
	if (launch_pt(PTRACE_GETREGSET, l->pid, NT_PRSTATUS, (unsigned long)&iov) < 0 ||
	    iov.iov_len != sizeof(got) || got.rip != want->rip || got.rax != want->rax ||
	    got.orig_rax != want->orig_rax || got.rdi != want->rdi || got.rbx != want->rbx ||
	    got.cs != want->cs)
		return -1;
	return 0;
}

/*
 * The program's text as the kernel has it, read with process_vm_readv(),
 * which answers with a byte count (a filter answering 0 cannot pass for
 * it). 0, or -1 with the result filled.
 */
static int read_text(struct launch *l, unsigned long addr, unsigned long *word)
{
	struct iovec local = { word, sizeof(*word) };
	struct iovec remote = { (void *)addr, sizeof(*word) };
	ssize_t n = process_vm_readv(l->pid, &local, 1, &remote, 1, 0);

	if (n != (ssize_t)sizeof(*word))
		return launch_fail(l, LAUNCH_TRACE, n < 0 ? -errno : -EPROTO,
			    "reading the program's text (process_vm_readv)");
	return 0;
}

/* PTRACE_POKETEXT, counted as done only when the text reads back so. */
static int write_text(struct launch *l, unsigned long addr, unsigned long word)
{
	unsigned long back;

	if (launch_pt(PTRACE_POKETEXT, l->pid, addr, word) < 0)
		return launch_fail(l, LAUNCH_TRACE, -errno, "PTRACE_POKETEXT at the entry point");
	if (read_text(l, addr, &back) < 0)
		return -1;
	if (back != word)
		return launch_fail(l, LAUNCH_TRACE, -EPROTO,
			    "PTRACE_POKETEXT: the text read back is not the one written");
	return 0;
}

/*
 * Put the 2-byte instruction @insn at @addr, keeping the original text:
 * PEEK/POKE work on aligned words, so an instruction at the last byte of a
 * word takes two (the second may be on the next page, which must be mapped).
 */
int launch_poke_at(struct launch *l, unsigned long addr, unsigned long insn)
{
	unsigned long aligned = addr & ~7UL, shift = (addr & 7) * 8, patched;
	int i;

	if (!l->poked) {
		l->spot = addr;
		l->nwords = (addr & 7) == 7 ? 2 : 1;
		for (i = 0; i < l->nwords; i++)
			if (read_text(l, aligned + 8UL * i, &l->word[i]) < 0)
				return -1;
	}
	if (l->nwords == 1) {
		patched = (l->word[0] & ~(0xffffUL << shift)) | (insn << shift);
		if (write_text(l, aligned, patched) < 0)
			return -1;
	} else {
		patched = (l->word[0] & ~(0xffUL << 56)) | ((insn & 0xff) << 56);
		l->poked = true;	/* from here, launch_restore() puts the first word back */
		if (write_text(l, aligned, patched) < 0)
			return -1;
		patched = (l->word[1] & ~0xffUL) | (insn >> 8);
		if (write_text(l, aligned + 8, patched) < 0)
			return -1;
	}
	l->poked = true;
	return 0;
}

/* Whether the instruction poked at l->spot is still there. */
bool launch_poke_intact(struct launch *l, unsigned long insn)
{
	unsigned long aligned = l->spot & ~7UL, w;

	if (read_text(l, aligned, &w) < 0)
		return false;
	if (l->nwords == 1)
		return ((w >> ((l->spot & 7) * 8)) & 0xffff) == insn;
	if ((w >> 56) != (insn & 0xff))
		return false;
	return read_text(l, aligned + 8, &w) == 0 && (w & 0xff) == (insn >> 8);
}

/*
 * A system-call instruction for the injected calls, where it fits: at the
 * entry point, unless it would straddle two words there (maybe two pages);
 * then at the start of the entry point's page, mapped and executable too.
 */
int launch_poke_insn(struct launch *l, unsigned long insn)
{
	unsigned long rip = l->saved.rip;

	if (l->poked)
		return launch_poke_at(l, l->spot, insn);
	return launch_poke_at(l, (rip & 7) != 7 ? rip : (rip & ~0xfffUL), insn);
}

/* The original text back where the instruction was poked. */
int launch_unpoke(struct launch *l)
{
	int i;

	for (i = 0; l->poked && i < l->nwords; i++)
		if (write_text(l, (l->spot & ~7UL) + 8UL * i, l->word[i]) < 0)
			return -1;
	l->poked = false;
	return 0;
}

/* Put the program back as exec left it. */
int launch_restore(struct launch *l)
{
	if (launch_unpoke(l) < 0)
		return -1;
	return launch_set_regs(l, &l->saved);
}

/*
 * The start-up failed after the exec: the program must not run. Make it
 * exit with @code before its first instruction (an injected exit_group at
 * the execve exit stop), or kill it. It is resumed only once the kernel
 * shows the system-call instruction in its text and the registers that
 * make it exit_group(@code) (read back); any doubt is a SIGKILL.
 */
void launch_stop_program(struct launch *l, int code)
{
	struct user_regs_struct regs;
	struct event ev;
	bool compat;
	int status, i;

	if (l->pid <= 0)
		return;
	if (!l->have_regs)
		goto kill;
	compat = l->saved.cs != USER_CS_64;
	if (launch_poke_insn(l, compat ? INSN_INT80 : INSN_SYSCALL) < 0)
		goto kill;
	regs = l->saved;
	regs.rip = l->spot;
	regs.rax = compat ? NR32_EXIT_GROUP : SYS_exit_group;
	regs.orig_rax = (unsigned long long)-1;
	regs.rdi = regs.rbx = (unsigned long long)code;
	if (launch_set_regs(l, &regs) < 0 && set_regs_regset(l, &regs) < 0)
		goto kill;
	/* signals arriving meanwhile stop it before the instruction: dropped */
	for (i = 0; i < 16; i++) {
		if (launch_pt(PTRACE_CONT, l->pid, 0, 0) < 0)
			break;
		launch_drain_chld();	/* after the request: see resume() */
		if (launch_wait_bounded(l->pid, &status) < 0)
			break;
		ev = launch_classify(status);
		if (ev.kind == EV_EXITED || ev.kind == EV_KILLED)
			return;
	}
kill:
	/* Not waited for: the init of a pid namespace ignores a SIGKILL from
	 * inside it; the kernel's kill-on-exit, when the tracer leaves right
	 * after this, does not (every caller exits next). */
	kill(l->pid, SIGKILL);
}

/* Whether the tracee, which we saw stopped, was killed since: a stopped
 * tracee answers PTRACE_GETREGS, a dying one says ESRCH (then reap it). */
bool launch_killed(struct launch *l)
{
	struct user_regs_struct regs;
	int status;

	if (launch_pt(PTRACE_GETREGS, l->pid, 0, (unsigned long)&regs) == 0 || errno != ESRCH)
		return false;
	return launch_wait_tracee(l->pid, &status) == 0 && !WIFSTOPPED(status);
}
