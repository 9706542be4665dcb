// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The exec-stop injection (see inject.h). Sequence of stops, with
 * PTRACE_O_TRACESYSGOOD so that syscall stops read SIGTRAP|0x80:
 *   vfork child: PTRACE_TRACEME, execve     -> SIGTRAP stop at the entry point
 *   tracer: SETOPTIONS
 *   per feature: regs = entry, syscall      -> syscall-enter, syscall-exit
 *   lock, restore, verify, DETACH(first pending signal)
 * Any other signal-delivery-stop on the way is recorded, suppressed, and
 * handed back at detach, so signals sent during start-up are not lost.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cet-abi.h"
#include "inject.h"
#include "shstk.h"

#define MAX_PENDING	32
#define USER_CS_64	0x33	/* __USER_CS: a 64-bit process */

struct tracee {
	pid_t pid;
	int pending[MAX_PENDING];
	int npending;
	struct inject_result *res;
};

/*
 * ptrace() with every argument a full 64-bit word: glibc reads addr and data
 * as pointers through varargs, so an int there would leave the upper half
 * unspecified.
 */
static long pt(int req, pid_t pid, unsigned long addr, unsigned long data)
{
	return ptrace((enum __ptrace_request)req, pid, (void *)addr, (void *)data);
}

static int fail(struct tracee *t, enum inject_stage stage, int err, const char *what)
{
	t->res->stage = stage;
	t->res->err = err;
	t->res->what = what;
	return -1;
}

static int wait_tracee(pid_t pid, int *status)
{
	for (;;) {
		pid_t r = waitpid(pid, status, 0);

		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
	}
}

/*
 * Resume with @req (PTRACE_CONT or PTRACE_SYSCALL) until a stop that
 * satisfies @want (an exact status>>8 value) arrives. Signal-delivery-stops
 * on the way are recorded and suppressed. Returns 0, or -1 with the result
 * filled (the child died: INJ_DIED; ptrace failed: INJ_TRACE).
 */
static int resume_until(struct tracee *t, int req, int want)
{
	int status, ret;

	for (;;) {
		if (pt(req, t->pid, 0, 0) < 0)
			return fail(t, INJ_TRACE, -errno,
				    req == PTRACE_CONT ? "PTRACE_CONT" : "PTRACE_SYSCALL");
		ret = wait_tracee(t->pid, &status);
		if (ret < 0)
			return fail(t, INJ_TRACE, ret, "waitpid");
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			t->res->wstatus = status;
			t->pid = 0;	/* reaped */
			return fail(t, INJ_DIED, 0, NULL);
		}
		if (!WIFSTOPPED(status))
			continue;
		if ((status >> 8) == want)
			return 0;
		/* A plain signal-delivery-stop: keep the signal for later.
		 * Event stops we did not ask for (none are enabled) and
		 * syscall stops out of sequence are just resumed. */
		if ((status >> 16) == 0 && WSTOPSIG(status) != (SIGTRAP | 0x80) &&
		    t->npending < MAX_PENDING)
			t->pending[t->npending++] = WSTOPSIG(status);
	}
}

/* Run system call @nr(@a1, @a2) in the tracee at @saved's rip (the poked
 * `syscall`); the return value in *result. */
static int remote_syscall(struct tracee *t, const struct user_regs_struct *saved,
			  long nr, unsigned long a1, unsigned long a2, long *result)
{
	struct user_regs_struct regs = *saved;

	regs.rax = (unsigned long long)nr;
	regs.orig_rax = (unsigned long long)-1;
	regs.rdi = a1;
	regs.rsi = a2;
	if (pt(PTRACE_SETREGS, t->pid, 0, (unsigned long)&regs) < 0)
		return fail(t, INJ_TRACE, -errno, "PTRACE_SETREGS");
	/* From the stop at the entry point (or an earlier injected call): back
	 * to user mode, which runs the poked `syscall` -> enter stop; then -> exit
	 * stop with the result. */
	if (resume_until(t, PTRACE_SYSCALL, SIGTRAP | 0x80) < 0)
		return -1;
	if (pt(PTRACE_GETREGS, t->pid, 0, (unsigned long)&regs) < 0)
		return fail(t, INJ_TRACE, -errno, "PTRACE_GETREGS");
	if (regs.orig_rax != (unsigned long long)nr || regs.rip != saved->rip + 2)
		return fail(t, INJ_TRACE, -EPROTO, "syscall-enter stop of the injected call");
	if (resume_until(t, PTRACE_SYSCALL, SIGTRAP | 0x80) < 0)
		return -1;
	if (pt(PTRACE_GETREGS, t->pid, 0, (unsigned long)&regs) < 0)
		return fail(t, INJ_TRACE, -errno, "PTRACE_GETREGS");
	*result = (long)regs.rax;
	return 0;
}

/* Everything between the execve exit stop and detaching. */
static int inject_at_entry(struct tracee *t, const struct inject_opts *o)
{
	struct user_regs_struct saved;
	struct shstk_proc_features f;
	unsigned long word, patched;
	long result;
	int ret;

	if (pt(PTRACE_GETREGS, t->pid, 0, (unsigned long)&saved) < 0)
		return fail(t, INJ_TRACE, -errno, "PTRACE_GETREGS");
	if (saved.cs != USER_CS_64)
		return fail(t, INJ_NOT64, -ENOEXEC, NULL);
	t->res->entry = saved.rip;

	errno = 0;
	word = (unsigned long)pt(PTRACE_PEEKTEXT, t->pid, saved.rip, 0);
	if (errno)
		return fail(t, INJ_TRACE, -errno, "PTRACE_PEEKTEXT at the entry point");
	/* Little endian: the first two bytes at rip become 0f 05 (syscall). */
	patched = (word & ~0xffffUL) | 0x050fUL;
	if (pt(PTRACE_POKETEXT, t->pid, saved.rip, patched) < 0)
		return fail(t, INJ_TRACE, -errno, "PTRACE_POKETEXT at the entry point");

	if (!o->enable) {
		/* Trace-only: prove the machinery with a harmless getpid(). */
		ret = remote_syscall(t, &saved, SYS_getpid, 0, 0, &result);
		if (ret == 0 && result != t->pid)
			ret = fail(t, INJ_TRACE, -EPROTO, "injected getpid()");
		goto restore;
	}
	ret = remote_syscall(t, &saved, SYS_arch_prctl, ARCH_SHSTK_ENABLE, ARCH_SHSTK_SHSTK,
			     &result);
	if (ret == 0 && result < 0)
		ret = fail(t, INJ_ENABLE_SHSTK, (int)result, NULL);
	if (ret == 0 && (o->enable & ARCH_SHSTK_WRSS)) {
		ret = remote_syscall(t, &saved, SYS_arch_prctl, ARCH_SHSTK_ENABLE, ARCH_SHSTK_WRSS,
				     &result);
		if (ret == 0 && result < 0)
			ret = fail(t, INJ_ENABLE_WRSS, (int)result, NULL);
	}
	if (ret == 0 && o->lock &&
	    pt(PTRACE_ARCH_PRCTL, t->pid, o->lock, ARCH_SHSTK_LOCK) < 0)
		ret = fail(t, INJ_LOCK, -errno, NULL);
restore:
	if (!t->pid)
		return -1;	/* died: nothing left to restore */

	/* Put the program back as exec left it, whatever happened above. */
	if (pt(PTRACE_POKETEXT, t->pid, saved.rip, word) < 0)
		return ret ? ret : fail(t, INJ_TRACE, -errno, "PTRACE_POKETEXT (restore)");
	if (pt(PTRACE_SETREGS, t->pid, 0, (unsigned long)&saved) < 0)
		return ret ? ret : fail(t, INJ_TRACE, -errno, "PTRACE_SETREGS (restore)");
	if (ret || !o->enable)
		return ret;

	/* Trust, but verify: what the kernel reports for the stopped child. */
	ret = shstk_features_read(o->proc_root, t->pid, &f);
	if (ret < 0)
		return fail(t, INJ_VERIFY, ret, NULL);
	t->res->status_lines = f.present;
	t->res->got_enabled = f.enabled;
	t->res->got_locked = f.locked;
	if (!f.present || (f.enabled & o->enable) != o->enable ||
	    (f.locked & o->lock) != o->lock)
		return fail(t, INJ_VERIFY, -EPROTO, NULL);
	return 0;
}

static void kill_and_reap(struct tracee *t)
{
	int status;

	if (t->pid <= 0)
		return;
	kill(t->pid, SIGKILL);
	wait_tracee(t->pid, &status);
	t->pid = 0;
}

/* What the child reports through the pipe when it could not exec. */
struct spawn_error {
	int stage;	/* INJ_TRACE: PTRACE_TRACEME failed; INJ_EXEC: execve */
	int err;	/* errno */
};

pid_t inject_spawn(const char *path, char *const argv[], char *const envp[],
		   const struct inject_opts *opts, struct inject_result *res)
{
	struct tracee t = { .res = res };
	struct spawn_error se;
	int pfd[2], status, ret, err, i;
	ssize_t n;

	memset(res, 0, sizeof(*res));
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return fail(&t, INJ_SPAWN, -errno, "pipe2");
	/*
	 * vfork: cetctl stays stopped until the child has exec'd (or failed
	 * to), and no page tables are copied for a child that only execs.
	 * The child asks to be traced and execs; a traced exec without
	 * PTRACE_O_TRACEEXEC stops the new program with a SIGTRAP before its
	 * first instruction, execve already complete. That one stop replaces
	 * a SIGSTOP stop, an exec-event stop and an execve syscall-exit stop.
	 */
	t.pid = vfork();
	if (t.pid < 0) {
		err = -errno;
		close(pfd[0]);
		close(pfd[1]);
		return fail(&t, INJ_SPAWN, err, "vfork");
	}
	if (t.pid == 0) {
		/* Child, sharing cetctl's memory: system calls only. */
		struct spawn_error e = { INJ_TRACE, 0 };

		if (pt(PTRACE_TRACEME, 0, 0, 0) == 0) {
			e.stage = INJ_EXEC;
			execve(path, argv, envp);
		}
		e.err = errno;
		n = write(pfd[1], &e, sizeof(e));
		(void)n;
		_exit(127);
	}
	close(pfd[1]);
	if (opts->child_pid)
		*opts->child_pid = t.pid;

	/* The write end is closed in both: a report, or EOF after the exec. */
	do
		n = read(pfd[0], &se, sizeof(se));
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)sizeof(se)) {
		wait_tracee(t.pid, &status);
		t.pid = 0;
		fail(&t, (enum inject_stage)se.stage, -se.err,
		     se.stage == INJ_TRACE ? "PTRACE_TRACEME" : NULL);
		goto out;
	}

	/* The exec's SIGTRAP. Signals sent to the new process before it are
	 * recorded and handed back at the detach. */
	for (;;) {
		ret = wait_tracee(t.pid, &status);
		if (ret < 0) {
			fail(&t, INJ_TRACE, ret, "waitpid");
			goto out_kill;
		}
		if (!WIFSTOPPED(status))
			break;
		if (WSTOPSIG(status) == SIGTRAP)
			break;
		if (t.npending < MAX_PENDING)
			t.pending[t.npending++] = WSTOPSIG(status);
		pt(PTRACE_CONT, t.pid, 0, 0);
	}
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		t.pid = 0;
		res->wstatus = status;
		fail(&t, INJ_DIED, 0, NULL);
		goto out;
	}
	if (pt(PTRACE_SETOPTIONS, t.pid, 0, PTRACE_O_EXITKILL | PTRACE_O_TRACESYSGOOD) < 0) {
		fail(&t, INJ_TRACE, -errno, "PTRACE_SETOPTIONS");
		goto out_kill;
	}
	if (inject_at_entry(&t, opts) < 0)
		goto out_kill;

	/* Hand back the signals that arrived during start-up: all but the
	 * first are queued now, the first goes with the detach. */
	res->signals_forwarded = t.npending;
	for (i = 1; i < t.npending; i++)
		kill(t.pid, t.pending[i]);
	if (pt(PTRACE_DETACH, t.pid, 0, t.npending ? (unsigned long)t.pending[0] : 0) < 0) {
		fail(&t, INJ_TRACE, -errno, "PTRACE_DETACH");
		goto out_kill;
	}
	close(pfd[0]);
	return t.pid;

out_kill:
	kill_and_reap(&t);
out:
	close(pfd[0]);
	return -1;
}

const char *inject_stage_str(enum inject_stage stage)
{
	switch (stage) {
	case INJ_OK:		return "ok";
	case INJ_SPAWN:		return "starting the child";
	case INJ_EXEC:		return "executing the program";
	case INJ_DIED:		return "the program died during start-up";
	case INJ_TRACE:		return "tracing the start-up";
	case INJ_NOT64:		return "the program is not a 64-bit x86 program";
	case INJ_ENABLE_SHSTK:	return "enabling the shadow stack";
	case INJ_ENABLE_WRSS:	return "enabling WRSS";
	case INJ_LOCK:		return "locking the features";
	case INJ_VERIFY:	return "verifying the features in /proc";
	}
	return "?";
}
