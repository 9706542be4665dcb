// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The tracer T (see shstk-launch-internal.h for where it runs) is a state
 * machine (enum tstate, in shstk-launch-internal.h; launch_tracer() and
 * tracer_step() at the end of this file): it waits for one event of the
 * program at a time, classifies it once (launch_classify(): exited, killed,
 * signal-delivery-stop, group-stop, interrupt stop, syscall stop, exec
 * event), and acts on state + event with the request that leads to the
 * next event and the next state:
 *
 *   TS_SEIZED --stop seen, TracerPid is T, resume seen--> TS_BEFORE_EXEC
 *   TS_BEFORE_EXEC --exec event--> TS_EXECVE_EXIT   (other stops passed on)
 *   TS_EXECVE_EXIT --syscall-exit stop, checks--> TS_INJECT_ENTER (ptrace)
 *                                             or TS_LOADER        (glibc)
 *   TS_INJECT_ENTER --syscall stop--> TS_INJECT_EXIT
 *   TS_INJECT_EXIT --syscall stop--> TS_INJECT_ENTER (next call)
 *                                 or TS_VERIFIED (locked, verified)
 *   TS_LOADER --the marker's syscall-enter stop, verified--> TS_VERIFIED
 *   any state after the exec --a step not seen done--> TS_FAILED
 *                            --exited or killed--> TS_DIED
 *
 * A step counts as done only when its effect was observed (a stop, a
 * register or text read back, the kernel's own report), never because a
 * call returned 0. The final states: TS_VERIFIED detaches; TS_FAILED
 * prints one line and makes the program exit 125 before its first
 * instruction or kills it, never resumes it; TS_DIED and TS_GONE have
 * nothing left to do. A failure before the exec is sent to P, which says
 * why and exits without running anything.
 *
 * This file is the state machine: the states' actions and the
 * transitions. It calls the other parts for the work (the events, the
 * stopped program, /proc, the fault points) and the message pipe's
 * reads and writes (shstk-launch-spawn.c); up to the exec event it may run in the
 * caller's memory, under the rules at the top of shstk-launch-spawn.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <unistd.h>

#include "cet-abi.h"
#include "shstk-launch-internal.h"

/* After a failure before the exec: the caller may be traced (kill-on-exit),
 * so let it say why and exit first; bounded. */
static void __attribute__((noreturn)) leave_after(pid_t pid)
{
	struct pollfd p = { .events = POLLIN };

	p.fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (p.fd > 0)
		poll(&p, 1, 5000);
	_exit(0);
}

/* The action that leads to the next event: resume the program with @req
 * (PTRACE_SYSCALL or PTRACE_CONT), delivering @sig. @bounded: the next
 * event is one the tracer causes (the program runs none of its own code),
 * so the SIGCHLDs of events already waited for are forgotten (see
 * launch_wait_bounded()): after the request, not before it. A stop is
 * visible to wait before the stopping task signals it, so the tracer may
 * have waited for the last stop while its SIGCHLD is still to come; the
 * kernel answers a request only once the tracee is off the CPU, by which
 * time that signal has been sent. 0, or -1 with the result filled. */
static int resume(struct launch *l, int req, int sig, bool bounded)
{
	launch_fault_point("t-request", l->pid);
	if (launch_pt(req, l->pid, 0, (unsigned long)sig) < 0)
		return launch_fail(l, LAUNCH_TRACE, -errno,
			    req == PTRACE_CONT ? "PTRACE_CONT" : "PTRACE_SYSCALL");
	if (bounded)
		launch_drain_chld();
	l->req = req;
	l->bounded = bounded;
	return 0;
}

/* The program died during start-up: its status is the whole story. */
static enum tstate died(struct launch *l, const struct event *ev)
{
	l->res->wstatus = ev->status;
	l->pid = 0;	/* gone */
	launch_fail(l, LAUNCH_DIED, 0, NULL);
	return TS_DIED;
}

/* Before the exec: pass a stop of the caller on as if it were not traced
 * (signals delivered, group-stops kept with PTRACE_LISTEN). True when it
 * asked for the caller to run on (PTRACE_CONT), which launch_observe_resumed()
 * then checks. */
static bool pass_on(const struct launch *l, const struct event *ev)
{
	switch (ev->kind) {
	case EV_GROUP_STOP:
		launch_pt(PTRACE_LISTEN, l->pid, 0, 0);
		return false;
	case EV_SIGNAL:
		launch_pt(PTRACE_CONT, l->pid, 0, (unsigned long)ev->sig);
		return true;
	default:
		launch_pt(PTRACE_CONT, l->pid, 0, 0);
		return true;
	}
}

/* A failure before the exec: the caller may be stopped (by the interrupt)
 * and ours: let it go, so that it can say why and exit; it runs nothing
 * but cetctl. */
static void __attribute__((noreturn)) refuse_before_exec(struct launch *l, int step, int err)
{
	struct msg m = { MSG_ERR, err, step };

	launch_pt(PTRACE_DETACH, l->pid, 0, 0);
	launch_xwrite(l->wfd, &m, sizeof(m));
	leave_after(l->pid);
}

/*
 * The seize, before any event: it is answered here and counts only when
 * observed (TS_SEIZED): a ptrace stop of the caller, which only its
 * tracer's wait returns (we are not its parent), forced with
 * PTRACE_INTERRUPT; and /proc naming us as its tracer. A PTRACE_SEIZE
 * that answered 0 without attaching (a seccomp filter, a supervisor) fails
 * there, before the caller execs anything.
 */
static void seize(struct launch *l)
{
	struct msg m;

	launch_fault_point("t-seize", l->pid);
	if (launch_pt(PTRACE_SEIZE, l->pid, 0,
	       PTRACE_O_EXITKILL | PTRACE_O_TRACEEXEC | PTRACE_O_TRACESYSGOOD) < 0) {
		m = (struct msg){ MSG_ERR, errno, STEP_SEIZE };
		launch_xwrite(l->wfd, &m, sizeof(m));
		_exit(0);
	}
	launch_fault_point("t-seized", l->pid);
	if (launch_resolve_proc_pid(l) < 0)
		refuse_before_exec(l, STEP_PROC, -l->res->err);
	launch_drain_chld();
	if (launch_pt(PTRACE_INTERRUPT, l->pid, 0, 0) < 0)
		refuse_before_exec(l, STEP_INTERRUPT, errno);	/* ESRCH: not ours */
	l->bounded = true;
	l->state = TS_SEIZED;
}

/* TS_SEIZED: the interrupt's stop, or a signal's that came first. */
static enum tstate on_seized(struct launch *l, const struct event *ev)
{
	struct msg m = { MSG_SEIZED, 0, 0 };
	int devnull;

	if (ev->kind == EV_EXITED || ev->kind == EV_KILLED || ev->kind == EV_NOT_STOPPED)
		return TS_GONE;		/* the caller died: nothing was started */
	if (launch_tracer_pid(l) != l->proc_self)
		refuse_before_exec(l, STEP_TRACERPID, EPROTO);
	/* a signal's stop may come first: the interrupt's follows, later */
	if (pass_on(l, ev) && launch_observe_resumed(l) < 0)
		refuse_before_exec(l, STEP_RESUME, EPROTO);
	launch_xwrite(l->wfd, &m, sizeof(m));

	/* Keep only stderr (for the one line): the caller's files are the
	 * program's; a pipe must not stay open because of us. */
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull >= 0) {
		dup2(devnull, STDIN_FILENO);
		dup2(devnull, STDOUT_FILENO);
	}
	syscall(SYS_close_range, 3U, ~0U, 0U);
	l->bounded = false;	/* the caller runs its own course to the exec */
	return TS_BEFORE_EXEC;
}

/* Leaving TS_EXECVE_EXIT or TS_INJECT_EXIT: the next call to inject. */
static enum tstate inject(struct launch *l)
{
	const struct injected *c = &l->calls[l->call];
	struct user_regs_struct regs = l->saved;

	regs.rip = l->spot;
	regs.rax = (unsigned long long)c->nr;
	regs.orig_rax = (unsigned long long)-1;
	regs.rdi = c->a1;
	regs.rsi = c->a2;
	if (launch_set_regs(l, &regs) < 0)
		return TS_FAILED;
	launch_fault_point("inject-enter", l->pid);
	return resume(l, PTRACE_SYSCALL, 0, true) < 0 ? TS_FAILED : TS_INJECT_ENTER;
}

/* The program stopped before its first instruction, the text and the
 * registers put back: what does the kernel say? */
static enum tstate restore_and_verify(struct launch *l)
{
	if (launch_restore(l) < 0 || launch_verify(l, l->o) < 0)
		return TS_FAILED;
	return TS_VERIFIED;
}

/*
 * Leaving TS_EXECVE_EXIT for TS_LOADER (the glibc method): the dynamic
 * loader enables the shadow stack, so the check comes after it and before
 * the program's own code, at its entry point (AT_ENTRY). A system-call
 * instruction there marks it: the loader (and the constructors of the
 * libraries it loads) runs traced at every system call, with signals and
 * stops passed through as before the exec, until the marker's
 * syscall-enter stop. There the call is cancelled (orig_rax -1), the text
 * and registers are put back (rcx and r11, which the instruction itself
 * overwrote, hold nothing at an ELF entry point), and the kernel is asked
 * what the loader did. No breakpoint, no single step: an int3 makes the
 * kernel unblock and reset a blocked or ignored SIGTRAP, and Bochs
 * mishandles single steps. Should anything rewrite the marker (a text
 * relocation), it shows at the next system call, always made after such a
 * write (mprotect): then the start-up fails. A process forked meanwhile
 * (by a constructor) must not inherit the marker: it is taken out across
 * fork, vfork and clone, and put back at their exit stop.
 */
static enum tstate start_loader(struct launch *l)
{
	if (l->entry == l->saved.rip) {
		launch_fail(l, LAUNCH_STATIC, -ENOEXEC, NULL);
		return TS_FAILED;
	}
	if (launch_poke_at(l, l->entry, INSN_SYSCALL) < 0)
		return TS_FAILED;
	l->res->startup_ran = true;	/* the loader runs the program's code now */
	launch_fault_point("loader", l->pid);
	return resume(l, PTRACE_SYSCALL, 0, false) < 0 ? TS_FAILED : TS_LOADER;
}

/* TS_EXECVE_EXIT + syscall-exit stop: rip is the entry point, no
 * instruction has run. Check what the kernel made of the exec, then
 * inject or let the loader run. */
static enum tstate at_execve_exit(struct launch *l)
{
	int secure;

	if (launch_get_regs(l, &l->saved) < 0)
		return TS_FAILED;
	l->have_regs = true;
	l->res->entry = l->saved.rip;
	launch_fault_point("exec-exit", l->pid);
	if (l->proc_pid <= 0)
		return TS_FAILED;	/* not found in /proc before the exec */

	/* First: a 32-bit image has its own register view and auxv layout. */
	if (launch_check_x86_64(l) < 0)
		return TS_FAILED;
	secure = launch_at_secure(l);
	if (secure < 0)
		return TS_FAILED;
	if (secure) {
		launch_fail(l, LAUNCH_SECURE, -EPERM, NULL);
		return TS_FAILED;
	}
	if ((l->saved.orig_rax != SYS_execve && l->saved.orig_rax != SYS_execveat) ||
	    l->saved.rax != 0) {
		launch_fail(l, LAUNCH_TRACE, -EPROTO, "the execve syscall-exit stop");
		return TS_FAILED;
	}
	if (l->o->at_entry)
		return start_loader(l);

	if (launch_poke_insn(l, INSN_SYSCALL) < 0)
		return TS_FAILED;
	if (!l->o->enable) {
		/* Trace-only: prove the machinery with a harmless getpid(). */
		l->calls[l->ncalls++] = (struct injected){ SYS_getpid, 0, 0, LAUNCH_TRACE };
	} else {
		l->calls[l->ncalls++] = (struct injected){ SYS_arch_prctl, ARCH_SHSTK_ENABLE,
							   ARCH_SHSTK_SHSTK, LAUNCH_ENABLE_SHSTK };
		if (l->o->enable & ARCH_SHSTK_WRSS)
			l->calls[l->ncalls++] = (struct injected){
				SYS_arch_prctl, ARCH_SHSTK_ENABLE, ARCH_SHSTK_WRSS,
				LAUNCH_ENABLE_WRSS };
	}
	l->call = 0;
	return inject(l);
}

/* TS_INJECT_ENTER + syscall-enter stop: checked at the exit stop, where
 * orig_rax and rip are still what the entry saw (one PTRACE_GETREGS
 * fewer). */
static enum tstate at_inject_enter(struct launch *l)
{
	launch_fault_point("inject-exit", l->pid);
	return resume(l, PTRACE_SYSCALL, 0, true) < 0 ? TS_FAILED : TS_INJECT_EXIT;
}

/* TS_INJECT_EXIT + syscall-exit stop: the injected call's answer; then
 * the next call, or the lock and the verification. */
static enum tstate at_inject_exit(struct launch *l)
{
	const struct injected *c = &l->calls[l->call];
	struct user_regs_struct regs;
	long result;

	if (launch_get_regs(l, &regs) < 0)
		return TS_FAILED;
	if (regs.orig_rax != (unsigned long long)c->nr || regs.rip != l->spot + 2) {
		launch_fail(l, LAUNCH_TRACE, -EPROTO, "syscall stops of the injected call");
		return TS_FAILED;
	}
	result = (long)regs.rax;
	if (c->nr == SYS_getpid && result != l->pid) {
		launch_fail(l, LAUNCH_TRACE, -EPROTO, "injected getpid()");
		return TS_FAILED;
	}
	if (c->nr != SYS_getpid && result < 0) {
		launch_fail(l, c->stage, (int)result, NULL);
		return TS_FAILED;
	}
	if (++l->call < l->ncalls)
		return inject(l);
	if (l->o->enable && l->o->lock &&
	    launch_pt(PTRACE_ARCH_PRCTL, l->pid, l->o->lock, ARCH_SHSTK_LOCK) < 0) {
		launch_fail(l, LAUNCH_LOCK, -errno, NULL);
		return TS_FAILED;
	}
	launch_fault_point("injected", l->pid);
	return restore_and_verify(l);
}

/* TS_LOADER + the marker's syscall-enter stop: at the entry point, no
 * instruction of the program run yet. */
static enum tstate at_entry(struct launch *l)
{
	struct user_regs_struct regs;

	if (launch_get_regs(l, &regs) < 0)
		return TS_FAILED;
	regs.rax = regs.orig_rax;
	regs.orig_rax = (unsigned long long)-1;
	regs.rip = l->entry;
	l->saved = regs;
	launch_fault_point("entry", l->pid);
	return restore_and_verify(l);
}

/* TS_LOADER + a system-call stop: the marker's, or the loader's. */
static enum tstate loader_syscall(struct launch *l)
{
	struct __ptrace_syscall_info info;
	long ret;

	/* it answers with a size: 0 is no answer */
	ret = launch_pt(PTRACE_GET_SYSCALL_INFO, l->pid, sizeof(info), (unsigned long)&info);
	if ((int)ret <= 0) {
		launch_fail(l, LAUNCH_TRACE, (int)ret < 0 ? -errno : -EPROTO, "PTRACE_GET_SYSCALL_INFO");
		return TS_FAILED;
	}
	if (!l->poked) {
		/* the exit stop of a fork: the child held, the marker back */
		if (info.op == PTRACE_SYSCALL_INFO_EXIT &&
		    ((!info.exit.is_error && launch_hold_fork(l, info.exit.rval) < 0) ||
		     launch_poke_at(l, l->entry, INSN_SYSCALL) < 0))
			return TS_FAILED;
	} else if (!launch_poke_intact(l, INSN_SYSCALL)) {
		launch_fail(l, LAUNCH_TRACE, -EPROTO,
		     "the entry point was rewritten before the program started");
		return TS_FAILED;
	} else if (info.op == PTRACE_SYSCALL_INFO_ENTRY && info.instruction_pointer == l->entry + 2) {
		return at_entry(l);
	} else if (info.op == PTRACE_SYSCALL_INFO_ENTRY &&
		   (info.entry.nr == SYS_fork || info.entry.nr == SYS_vfork ||
		    info.entry.nr == SYS_clone || info.entry.nr == SYS_clone3) &&
		   launch_unpoke(l) < 0) {
		return TS_FAILED;
	}
	return resume(l, PTRACE_SYSCALL, 0, false) < 0 ? TS_FAILED : TS_LOADER;
}

/*
 * State + event -> action + next state. Every event is one wait status,
 * classified once; every action is the request that leads to the next
 * event (or none: a group-stop kept, waiting for SIGCONT).
 */
static enum tstate tracer_step(struct launch *l, const struct event *ev)
{
	switch (l->state) {
	case TS_SEIZED:
		return on_seized(l, ev);

	case TS_BEFORE_EXEC:
		/* The caller is still cetctl: whatever happens to it happens
		 * as if it were not traced (signals pass, stops stay stops). */
		if (ev->kind == EV_EXITED || ev->kind == EV_KILLED)
			return TS_GONE;	/* died or failed its exec: it said so itself */
		if (ev->kind == EV_NOT_STOPPED)
			return TS_BEFORE_EXEC;
		if (ev->kind == EV_EXEC) {
			launch_fault_point("exec-event", l->pid);
			/* inside execve: on to its syscall-exit stop */
			return resume(l, PTRACE_SYSCALL, 0, true) < 0 ? TS_FAILED : TS_EXECVE_EXIT;
		}
		if (pass_on(l, ev) && launch_observe_resumed(l) < 0) {
			/* Still cetctl, stopped, the exec ahead: it must not
			 * run on untraced, so it dies; nothing was started. */
			static const char line[] = "cetctl: run: PTRACE_CONT answered, but the "
				"traced cetctl was not seen resuming before its exec: nothing was started\n";
			ssize_t w;

			kill(l->pid, SIGKILL);
			w = write(STDERR_FILENO, line, sizeof(line) - 1);
			_exit(w < 0);
		}
		return TS_BEFORE_EXEC;

	case TS_EXECVE_EXIT:
	case TS_INJECT_ENTER:
	case TS_INJECT_EXIT:
		/* Stops the tracer caused. Signals on the way are held
		 * (suppressed now, handed back at the detach); any other stop
		 * is resumed with the same request. */
		if (ev->kind == EV_EXITED || ev->kind == EV_KILLED)
			return died(l, ev);
		if (ev->kind != EV_SYSCALL) {
			if (ev->kind == EV_SIGNAL)
				launch_hold_signal(l, ev->sig);
			return resume(l, l->req, 0, true) < 0 ? TS_FAILED : l->state;
		}
		if (l->state == TS_EXECVE_EXIT)
			return at_execve_exit(l);
		if (l->state == TS_INJECT_ENTER)
			return at_inject_enter(l);
		return at_inject_exit(l);

	case TS_LOADER:
		/* The program's libraries run: signals delivered, group-stops
		 * kept until SIGCONT, no other exec. */
		switch (ev->kind) {
		case EV_EXITED:
		case EV_KILLED:
			return died(l, ev);
		case EV_SYSCALL:
			return loader_syscall(l);
		case EV_EXEC:
			launch_fail(l, LAUNCH_TRACE, -EPROTO, "an exec before the entry point");
			return TS_FAILED;
		case EV_GROUP_STOP:
			if (launch_pt(PTRACE_LISTEN, l->pid, 0, 0) == 0)
				return TS_LOADER;	/* until SIGCONT */
			break;
		case EV_SIGNAL:
			return resume(l, PTRACE_SYSCALL, ev->sig, false) < 0 ? TS_FAILED : TS_LOADER;
		default:
			break;
		}
		return resume(l, PTRACE_SYSCALL, 0, false) < 0 ? TS_FAILED : TS_LOADER;

	case TS_VERIFIED:
	case TS_FAILED:
	case TS_DIED:
	case TS_GONE:
		break;
	}
	return l->state;
}

/* No event came: the wait failed (or timed out, or was answered without a
 * process). */
static enum tstate wait_failed(struct launch *l, int err)
{
	switch (l->state) {
	case TS_SEIZED:
		refuse_before_exec(l, STEP_OBSERVE, -err);
	case TS_BEFORE_EXEC:
		return TS_GONE;	/* it said so itself, or will */
	case TS_LOADER:
		launch_fail(l, LAUNCH_TRACE, err, "waitpid");
		return TS_FAILED;
	default:
		launch_fail(l, LAUNCH_TRACE, err, l->req == PTRACE_CONT ?
		     "waiting for the stop after PTRACE_CONT" :
		     "waiting for the stop after PTRACE_SYSCALL");
		return TS_FAILED;
	}
}

/*
 * TS_VERIFIED: let the program run, with the signals that arrived during
 * start-up handed back. A detach answered but not done leaves it ours and
 * stopped: then it is stopped for good instead.
 */
static void release(struct launch *l)
{
	int i;

	launch_fault_point("verified", l->pid);
	launch_fault_log("verified", l->pid);

	/* Signals still pending in the kernel arrived after every held one
	 * (a held signal was dequeued; and the kernel cancels a pending
	 * SIGCONT when a stop signal comes, and the other way round): their
	 * stop/continue rules apply to the held ones too. */
	if (l->kernel_pending & (1ULL << (SIGCONT - 1)))
		launch_drop_held(l, launch_is_stop_signal);
	if (l->kernel_pending & ((1ULL << (SIGSTOP - 1)) | (1ULL << (SIGTSTP - 1)) |
				 (1ULL << (SIGTTIN - 1)) | (1ULL << (SIGTTOU - 1))))
		launch_drop_held(l, launch_is_cont);
	/* Hand back the signals that arrived during start-up: all but the
	 * first are queued now, the first goes with the detach. */
	for (i = 1; i < l->npending; i++)
		kill(l->pid, l->pending[i]);
	if (launch_pt(PTRACE_DETACH, l->pid, 0, l->npending ? (unsigned long)l->pending[0] : 0) < 0) {
		launch_fail(l, LAUNCH_TRACE, -errno, "PTRACE_DETACH");
		launch_kill_forks(l);
		if (launch_killed(l))
			return;	/* killed meanwhile */
		launch_stop_program(l, l->report(l->res, l->arg));
	} else if (launch_tracer_pid(l) == l->proc_self) {
		/* answered, not done: still ours, still stopped before its
		 * first instruction (or a stop on its way) */
		launch_fail(l, LAUNCH_TRACE, -EPROTO,
		     "PTRACE_DETACH answered, but /proc/PID/status still names the tracer");
		launch_kill_forks(l);
		launch_stop_program(l, l->report(l->res, l->arg));
	} else {
		launch_release_forks(l);	/* verified: they run on */
	}
}

/* TS_FAILED: one line, and the program never runs. */
static void fail_closed(struct launch *l)
{
	/* what it forked in the loader's phase dies first (said in the line) */
	launch_kill_forks(l);
	/* Killed meanwhile (SIGKILL needs no stop; its /proc files go first,
	 * then ptrace says ESRCH): its death is the whole story. */
	if (l->pid > 0 && launch_killed(l))
		return;
	launch_stop_program(l, l->report(l->res, l->arg));
}

void __attribute__((noreturn)) launch_tracer(const struct spawn *s)
{
	struct launch_result res = { 0 };
	struct launch l = {
		.o = s->opts, .report = s->report, .arg = s->arg,
		.wfd = s->wfd, .pid = s->self, .res = &res,
	};
	struct event ev;
	sigset_t chld;
	char go;
	int err;

	/* Not stopped by the terminal (a write from a background group with
	 * TOSTOP), not hung up with it: short-lived, it finishes its job. */
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTTOU, SIG_IGN);
	signal(SIGTTIN, SIG_IGN);
	signal(SIGTSTP, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	/* the kernel's word that the tracee stopped or died (launch_wait_bounded()) */
	signal(SIGCHLD, SIG_DFL);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	launch_fault_point("t-start", l.pid);
	/* Under Yama, only once P has named C (whose descendant we are). */
	if (s->yama && launch_xread(s->gofd, &go, 1) != 1)
		_exit(0);	/* the caller is gone: nothing was started */

	/* Until the exec we may be running in the caller's memory
	 * (tracer_vm()): nothing up to the exec event may allocate or use
	 * stdio. Every pass waits for one event: the loop ends in a final
	 * state, each wait bounded in time or by the program's own course. */
	seize(&l);
	while (l.state < TS_VERIFIED) {
		err = launch_next_event(&l, &ev);
		launch_state_log(&l, err ? NULL : &ev);
		l.state = err ? wait_failed(&l, err) : tracer_step(&l, &ev);
	}
	launch_state_log(&l, NULL);
	if (l.state == TS_VERIFIED)
		release(&l);
	else if (l.state == TS_FAILED)
		fail_closed(&l);
	_exit(0);
}
