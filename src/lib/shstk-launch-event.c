// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The program's events, as the tracer waits for them: a wait with no
 * bound in time (the program runs its own course) or one bounded by the
 * step's timeout (the tracer caused the event), every wait status
 * classified once (enum event_kind), and the signals that arrive during
 * the start-up, held for the detach with the kernel's stop/continue rules.
 * Calls no other part (the state's rules are the tracer's).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>

#include "shstk-launch-internal.h"

#ifndef PTRACE_EVENT_STOP
#define PTRACE_EVENT_STOP	128
#endif

/*
 * Wait for an event of @pid, with no bound in time: used only where the
 * program may legitimately stay stopped (job control before the exec, the
 * loader's phase). Every answer is an event or an error: a wait that
 * returns without a process (0, or another pid: a seccomp filter answering
 * wait4 with 0) is one, never a reason to ask again.
 */
int launch_wait_tracee(pid_t pid, int *status)
{
	for (;;) {
		pid_t r = waitpid(pid, status, __WALL);

		if (r == pid)
			return 0;
		if (r < 0 && errno == EINTR)
			continue;
		return r < 0 ? -errno : -EPROTO;
	}
}

/* How long the tracer waits for a stop it caused (the program runs none of
 * its own code there): generous, for emulators on a loaded machine. */
int launch_step_timeout_ms(void)
{
#ifdef CETCTL_FAULT_HOOKS
	const char *ms = getenv("CETCTL_FAULT_TIMEOUT_MS");

	if (ms)
		return atoi(ms);
#endif
	return 20000;
}

long long launch_now_ms(void)
{
	struct timespec ts;

	/* the vDSO: no system call a filter could answer */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Forget the SIGCHLDs of events already waited for (see launch_wait_bounded()):
 * called after the request that causes the next event, never before it. */
void launch_drain_chld(void)
{
	struct timespec zero = { 0, 0 };
	sigset_t chld;
	int i;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	for (i = 0; i < 4 && sigtimedwait(&chld, NULL, &zero) == SIGCHLD; i++)
		;
}

/*
 * Wait for an event of @pid that the tracer caused, bounded in time: a
 * request the kernel did not carry out (answered 0 by a filter) leaves the
 * program where it was and no event comes. The tracer has SIGCHLD blocked
 * (launch_tracer()); the kernel sends it one for each stop or death of its
 * tracee, so it sleeps in sigtimedwait between non-blocking waits. The
 * caller drains SIGCHLD (launch_drain_chld()) right after the request that
 * causes the event, once the last stop's signal has certainly been sent
 * (resume()): a SIGCHLD from the program that no wait returns is then a
 * lie (the kernel makes a stop or death visible to wait before it
 * signals, so a drained signal's event is still there for the wait).
 */
int launch_wait_bounded(pid_t pid, int *status)
{
	long long deadline = launch_now_ms() + launch_step_timeout_ms(), left;
	struct timespec ts;
	siginfo_t si;
	sigset_t chld;
	pid_t r;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	for (;;) {
		r = waitpid(pid, status, __WALL | WNOHANG);
		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r > 0)
			return -EPROTO;
		left = deadline - launch_now_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		ts.tv_sec = left / 1000;
		ts.tv_nsec = (left % 1000) * 1000000;
		memset(&si, 0, sizeof(si));
		if (sigtimedwait(&chld, &si, &ts) != SIGCHLD || si.si_pid != pid)
			continue;
		r = waitpid(pid, status, __WALL | WNOHANG);
		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
		return -EPROTO;	/* the kernel said it stopped; wait says nothing */
	}
}

bool launch_is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* Drop the held signals @drop says to drop (as the kernel drops pending
 * ones when a stop or continue signal is sent). */
void launch_drop_held(struct launch *l, bool (*drop)(int sig))
{
	int i, n = 0;

	for (i = 0; i < l->npending; i++)
		if (!drop(l->pending[i]))
			l->pending[n++] = l->pending[i];
	l->npending = n;
}

bool launch_is_cont(int sig)
{
	return sig == SIGCONT;
}

/*
 * Hold a signal for the detach, with the kernel's stop/continue rules
 * applied in arrival order: a SIGCONT cancels the stop signals held before
 * it, a stop signal the SIGCONTs. A SIGSTOP then SIGCONT pair leaves the
 * program running, as it would a plain child (handing both back, the
 * SIGCONT would act first, at its sending, and the stop last).
 */
void launch_hold_signal(struct launch *l, int sig)
{
	int i;

	if (sig == SIGCONT)
		launch_drop_held(l, launch_is_stop_signal);
	else if (launch_is_stop_signal(sig))
		launch_drop_held(l, launch_is_cont);

	for (i = 0; i < l->npending; i++)
		if (l->pending[i] == sig && sig < SIGRTMIN)
			return;	/* standard signals do not queue: once */
	if (l->npending < MAX_PENDING)
		l->pending[l->npending++] = sig;
}

/*
 * Every wait status of the program, classified once (as strace's
 * next_event() does): the tracer's states act on the kind, never on the
 * status bits. TRACESYSGOOD makes a system-call stop SIGTRAP|0x80, which
 * no signal is; a ptrace event stop has the event in bits 16-23.
 */
struct event launch_classify(int status)
{
	struct event ev = { EV_NOT_STOPPED, 0, status };

	if (WIFEXITED(status))
		ev.kind = EV_EXITED;
	else if (WIFSIGNALED(status))
		ev.kind = EV_KILLED;
	if (!WIFSTOPPED(status))
		return ev;
	ev.sig = WSTOPSIG(status);
	if ((status >> 8) == (SIGTRAP | 0x80))
		ev.kind = EV_SYSCALL;
	else if ((status >> 16) == 0)
		ev.kind = EV_SIGNAL;
	else if ((status >> 16) == PTRACE_EVENT_EXEC)
		ev.kind = EV_EXEC;
	else if ((status >> 16) == PTRACE_EVENT_STOP)
		ev.kind = launch_is_stop_signal(ev.sig) ? EV_GROUP_STOP : EV_INTERRUPT;
	else
		ev.kind = EV_OTHER;
	return ev;
}

/* The program's next event: bounded in time when the tracer caused it
 * (launch_wait_bounded()), not when the program runs its own course. 0, or
 * -errno from the wait. */
int launch_next_event(struct launch *l, struct event *ev)
{
	int status, ret;

	ret = l->bounded ? launch_wait_bounded(l->pid, &status) : launch_wait_tracee(l->pid, &status);
	if (ret < 0)
		return ret;
	*ev = launch_classify(status);
	return 0;
}
