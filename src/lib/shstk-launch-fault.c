// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The start-up's fault points and logs, compiled only into the test build
 * (CETCTL_FAULT_HOOKS, the cetctl-faults target); the real build has none
 * of it (shstk-launch-internal.h makes the calls empty). Called from every
 * part of the start-up, it calls none of them. Before the exec it may run
 * in the caller's memory (rules at the top of shstk-launch-spawn.c): no
 * stdio, no allocation, launch_fault_list() aside (cetctl's own process).
 *
 * CETCTL_FAULT=<step>:<action> acts at a named step of the start-up, to
 * force the races the fail-closed tests need. Actions: kill (this process
 * dies of SIGKILL), exit (it exits 3), sig=N (signal N to the program),
 * pgsig=N (signal N to the program's process group), sleep=MS, closefds
 * (close every descriptor above stderr, then linger 300 ms), stalechld
 * (this process queues itself the SIGCHLD of a ptrace stop of the program,
 * as the kernel does when a stop the tracer already waited for is
 * signalled late).
 * CETCTL_FAULT2: a second one, the same way (two steps, two signals).
 * CETCTL_FAULT_VERIFY=1: the final check reads an empty /proc/PID/status.
 * CETCTL_FAULT_YAMA=1: the hand-shake Yama's relational ptrace_scope needs,
 * where there is no Yama (the protocol, not Yama's permission check).
 * CETCTL_FAULT_LOG=FILE: the tracer appends "verified PID" right before it
 * detaches, so a test can tell a program released by a verified start-up.
 * CETCTL_FAULT_VERIFY, CETCTL_FAULT_YAMA and CETCTL_FAULT_TIMEOUT_MS act
 * in place (launch_verify(), yama_relational(), launch_step_timeout_ms());
 * the rest is here.
 */
#ifdef CETCTL_FAULT_HOOKS
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "c.h"
#include "shstk-launch-internal.h"

/* The states and events by name, for the state log (CETCTL_FAULT_STATES):
 * the enums are in shstk-launch-internal.h. */
static const char *const tstate_names[] = {
	[TS_SEIZED]		= "seized",
	[TS_BEFORE_EXEC]	= "before-exec",
	[TS_EXECVE_EXIT]	= "execve-exit",
	[TS_INJECT_ENTER]	= "inject-enter",
	[TS_INJECT_EXIT]	= "inject-exit",
	[TS_LOADER]		= "loader",
	[TS_VERIFIED]		= "verified",
	[TS_FAILED]		= "failed",
	[TS_DIED]		= "died",
	[TS_GONE]		= "gone",
};

static const char *const event_names[] = {
	[EV_EXITED]		= "exited",
	[EV_KILLED]		= "killed",
	[EV_SIGNAL]		= "signal-delivery-stop",
	[EV_GROUP_STOP]		= "group-stop",
	[EV_INTERRUPT]		= "interrupt-stop",
	[EV_SYSCALL]		= "syscall-stop",
	[EV_EXEC]		= "exec-event",
	[EV_OTHER]		= "other-stop",
	[EV_NOT_STOPPED]	= "not-stopped",
};

static void fault_act(const char *f, const char *step, pid_t program)
{
	const char *colon;
	size_t n = strlen(step);

	if (!f || strncmp(f, step, n) || f[n] != ':')
		return;
	colon = f + n + 1;
	if (strcmp(colon, "kill") == 0)
		kill(getpid(), SIGKILL);
	else if (strcmp(colon, "exit") == 0)
		_exit(3);
	else if (strncmp(colon, "sig=", 4) == 0)
		kill(program, atoi(colon + 4));

	else if (strncmp(colon, "pgsig=", 6) == 0)
		kill(-getpgid(program), atoi(colon + 6));
	else if (strncmp(colon, "sleep=", 6) == 0)
		usleep((useconds_t)atoi(colon + 6) * 1000);
	else if (strcmp(colon, "stalechld") == 0) {
		siginfo_t si;

		memset(&si, 0, sizeof(si));
		si.si_signo = SIGCHLD;
		si.si_code = CLD_TRAPPED;
		si.si_pid = program;
		si.si_status = SIGTRAP;
		syscall(SYS_rt_sigqueueinfo, getpid(), SIGCHLD, &si);
	} else if (strcmp(colon, "closefds") == 0) {
		/* gone as far as the other side can tell, yet still here */
		syscall(SYS_close_range, 3U, ~0U, 0U);
		usleep(300 * 1000);
	}
}

/*
 * Every fault point, in the order a start-up reaches them, and the methods
 * that reach it: the middle process (c-*, ptrace method only), the caller
 * (p-*) and the tracer. The tests take this list from the binary
 * (CETCTL_FAULT_LIST, launch_fault_list()), not from a copy of their own.
 */
enum { FAULT_PTRACE = 1, FAULT_GLIBC = 2, FAULT_BOTH = 3 };
static const struct {
	const char *name;
	unsigned int methods;
} fault_steps[] = {
	{ "c-start",      FAULT_PTRACE },
	{ "c-forked",     FAULT_PTRACE },
	{ "p-forked",     FAULT_BOTH },
	{ "t-start",      FAULT_BOTH },
	{ "t-seize",      FAULT_BOTH },
	{ "t-seized",     FAULT_BOTH },
	{ "p-seized",     FAULT_BOTH },
	{ "exec-event",   FAULT_BOTH },
	{ "t-request",    FAULT_BOTH },	/* the first resume after the exec */
	{ "exec-exit",    FAULT_BOTH },
	{ "inject-enter", FAULT_PTRACE },
	{ "inject-exit",  FAULT_PTRACE },
	{ "injected",     FAULT_PTRACE },
	{ "loader",       FAULT_GLIBC },
	{ "entry",        FAULT_GLIBC },
	{ "verified",     FAULT_BOTH },
};

int launch_fault_list(FILE *out, const char *method)
{
	unsigned int want = FAULT_BOTH;
	size_t i;

	if (method && strcmp(method, "ptrace") == 0)
		want = FAULT_PTRACE;
	else if (method && strcmp(method, "glibc") == 0)
		want = FAULT_GLIBC;
	else if (method && *method && strcmp(method, "all") != 0)
		return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(fault_steps); i++)
		if (fault_steps[i].methods & want)
			fprintf(out, "%s\n", fault_steps[i].name);
	return 0;
}

void launch_fault_point(const char *step, pid_t program)
{
	size_t i;

	/* a point missing from the list would be missed by every test */
	for (i = 0; i < ARRAY_SIZE(fault_steps); i++)
		if (strcmp(fault_steps[i].name, step) == 0)
			break;
	if (i == ARRAY_SIZE(fault_steps))
		abort();
	/* Reached at every request, it acts at the first: a signal sent at
	 * each would stop the program at each, for ever. Only the tracer
	 * reaches it, after the exec: a static of its own. */
	if (strcmp(step, "t-request") == 0) {
		static bool requested;

		if (requested)
			return;
		requested = true;
	}
	fault_act(getenv("CETCTL_FAULT"), step, program);
	fault_act(getenv("CETCTL_FAULT2"), step, program);
}

void launch_fault_log(const char *what, pid_t pid)
{
	const char *log = getenv("CETCTL_FAULT_LOG");
	char line[64];
	int fd, n;

	if (!log)
		return;
	fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	n = snprintf(line, sizeof(line), "%s %d\n", what, (int)pid);
	if (write(fd, line, (size_t)n) < 0)
		n = 0;
	close(fd);
}

/*
 * CETCTL_FAULT_STATES=FILE: the tracer appends a line for every event it
 * acts on, "STATE EVENT" ("STATE wait-failed" when no event came), and
 * the final state alone. Before the exec it may run in the caller's
 * memory: no stdio, no allocation here.
 */
void launch_state_log(const struct launch *l, const struct event *ev)
{
	const char *log = getenv("CETCTL_FAULT_STATES");
	const char *w[3] = { tstate_names[l->state], " ", NULL };
	char line[64];
	size_t n = 0, k;
	int i, fd;

	if (!log)
		return;
	w[2] = ev ? event_names[ev->kind] : l->state >= TS_VERIFIED ? "" : "wait-failed";
	if (!*w[2])
		w[1] = "";
	for (i = 0; i < 3; i++)
		for (k = 0; w[i][k] && n < sizeof(line) - 1; k++)
			line[n++] = w[i][k];
	line[n++] = '\n';
	fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (write(fd, line, n) < 0)
		n = 0;
	close(fd);
}
#endif
