// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The fail-closed start-up (see shstk-launch.h). Processes and stops:
 *
 *   caller P (becomes the program)      tracer T (grandchild, own pgrp)
 *   clone C (no exit signal);
 *   C: setpgid, clone T (fork under Yama or ASan), exit
 *   [Yama scope 1: PR_SET_PTRACER C,
 *    "go" -->; C lives until P lets go]
 *                                       PTRACE_SEIZE(P, EXITKILL|TRACEEXEC|SYSGOOD)
 *                                  <-- SEIZED (or the errno)
 *                                       pidfd: P's pid as /proc numbers it
 *   reap C, execve                       wait: signal-delivery-stops before the
 *                                        exec pass through, group-stops LISTEN
 *                                        PTRACE_EVENT_EXEC stop
 *                                        PTRACE_SYSCALL -> execve exit stop
 *                                        AT_SECURE? x86-64? inject, lock,
 *                                        verify, DETACH(first held signal)
 *
 * One message on the critical path before the exec (SEIZED): T seizes as
 * soon as it runs, unless Yama's relational ptrace_scope needs P to name
 * a tracer first; then P names C (Yama accepts any descendant of the named
 * process, so T), which is known the moment it is cloned, and C stays
 * alive until the seize, since Yama forgets a relation whose tracer exits.
 * C is cloned without an exit signal: the caller's SIGCHLD disposition
 * cannot reap it, no SIGCHLD reaches P while it is traced, and P reaps it
 * (__WALL) right before its exec, by when it has long exited. Without
 * Yama, C has nothing to wait for, and neither C nor T copies P's memory:
 * C shares it while P sleeps (CLONE_VM | CLONE_VFORK, as posix_spawn
 * does), T shares it until P's exec and then keeps the old address space
 * to itself (see tracer_vm()). That saves two page-table copies per
 * start-up, and P's exec no longer tears cetctl's address space down on
 * the program's critical path: T's exit does, after the detach.
 *
 * P never runs the program unless T seized it first (it execs only after
 * SEIZED); from then on the kernel kills P if T exits (EXITKILL), and T lets
 * the program run only by the final detach. The exec event stop is a ptrace
 * event, not a signal: the caller's signal mask and dispositions do not
 * matter. After the exec, signals are held (suppressed at their
 * delivery-stops) and handed back at the detach, so the program sees them
 * once, as if sent just after its start.
 *
 * T is a state machine (enum tstate; tracer() and tracer_step() at the
 * end of the tracer's section): it waits for one event of the program at
 * a time, classifies it once (classify(): exited, killed,
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
 */
#include <errno.h>
#include <elf.h>
#include <sched.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <poll.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "c.h"
#include "cet-abi.h"
#include "elf-notes.h"
#include "shstk-launch.h"
#include "shstk.h"

#ifndef PTRACE_EVENT_STOP
#define PTRACE_EVENT_STOP	128
#endif
#ifndef PR_SET_PTRACER
#define PR_SET_PTRACER		0x59616d61
#endif
#ifndef AT_SECURE
#define AT_SECURE		23
#endif

#define MAX_PENDING	32
#define USER_CS_64	0x33	/* __USER_CS: 64-bit mode (x86-64 and x32) */
#define INSN_SYSCALL	0x050fUL	/* 0f 05, little endian */
#define INSN_INT80	0x80cdUL	/* cd 80: the 32-bit entry */
#define NR32_EXIT_GROUP	252

/*
 * The tracer's states, in the order a start-up passes them. The tracer
 * waits for one event of the program at a time; what it does with it
 * depends only on the state it is in (tracer_step()). TS_SEIZED and
 * TS_BEFORE_EXEC are before the exec (the tracee is still cetctl), the
 * rest after it. The last four are final.
 */
enum tstate {
	TS_SEIZED,	/* PTRACE_SEIZE answered, PTRACE_INTERRUPT sent: waiting
			 * for the stop that shows the seize */
	TS_BEFORE_EXEC,	/* seen traced: its stops passed on as if untraced,
			 * until the exec event */
	TS_EXECVE_EXIT,	/* after the exec event: on to execve's syscall-exit
			 * stop, where no instruction of the program has run */
	TS_INJECT_ENTER, /* an injected call: its syscall-enter stop */
	TS_INJECT_EXIT,	/* an injected call: its syscall-exit stop */
	TS_LOADER,	/* the glibc method: the loader runs, traced, up to the
			 * marker at the entry point */
	TS_VERIFIED,	/* final: the kernel shows what was asked; released */
	TS_FAILED,	/* final: a step after the exec failed; the program is
			 * made to exit or killed, never resumed */
	TS_DIED,	/* final: the program died during start-up */
	TS_GONE,	/* final, before the exec: cetctl died or failed its
			 * exec, and said so itself */
};

/* (the test build logs them: CETCTL_FAULT_STATES) */
static const char *const tstate_names[] __attribute__((unused)) = {
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

/* What one wait status of the program was (classify()). */
enum event_kind {
	EV_EXITED,	/* it exited */
	EV_KILLED,	/* a signal killed it */
	EV_SIGNAL,	/* signal-delivery-stop: a signal about to be delivered */
	EV_GROUP_STOP,	/* PTRACE_EVENT_STOP with a stop signal: a group-stop */
	EV_INTERRUPT,	/* PTRACE_EVENT_STOP otherwise: PTRACE_INTERRUPT's stop */
	EV_SYSCALL,	/* syscall-enter or -exit stop (TRACESYSGOOD: SIGTRAP|0x80) */
	EV_EXEC,	/* PTRACE_EVENT_EXEC: the exec is done, inside execve */
	EV_OTHER,	/* any other stop (another ptrace event) */
	EV_NOT_STOPPED,	/* a status that is none of the above */
};

static const char *const event_names[] __attribute__((unused)) = {
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

struct event {
	enum event_kind kind;
	int sig;	/* the signal of a stop (WSTOPSIG) */
	int status;	/* as waitpid() gave it */
};

/* A call injected into the program at its execve exit stop. */
struct injected {
	long nr;
	unsigned long a1, a2;
	enum launch_stage stage;	/* what a negative answer means */
};

/*
 * The launch as the tracer knows it: one of these, on the tracer's stack,
 * for the whole start-up.
 */
struct launch {
	enum tstate state;
	const struct launch_opts *o;
	launch_report_fn report;	/* the one line, after the exec */
	void *arg;
	int wfd;		/* T -> P messages, until SEIZED */
	pid_t pid;		/* in our pid namespace; 0 once it died */
	pid_t proc_pid;		/* the same process as /proc numbers it */
	pid_t proc_self;	/* the tracer as /proc numbers it */
	/* the request that leads to the next event, and whether that event
	 * is one the tracer causes (bounded in time) or the program's own */
	int req;
	bool bounded;
	int pending[MAX_PENDING];	/* signals held for the detach */
	int npending;
	bool poked;		/* the syscall instruction is in place */
	unsigned long spot;	/* where */
	unsigned long word[2];	/* the original aligned word(s) there */
	int nwords;		/* 2 when the instruction straddles two words */
	unsigned long entry;	/* AT_ENTRY: the program's own entry point */
	struct user_regs_struct saved;	/* registers at the execve exit stop */
	bool have_regs;
	struct injected calls[2];	/* the calls to inject, in order */
	int ncalls, call;	/* how many; the one under way */
	unsigned long long kernel_pending;	/* SigPnd|ShdPnd at the last check */
	struct launch_result *res;
};

/* What P hands to C and T (see "the caller's side" below). */
struct spawn {
	pid_t self;			/* P: the caller, the program to be */
	bool yama;			/* the Yama hand-shake (yama_relational()) */
	const struct launch_opts *opts;
	launch_report_fn report;
	void *arg;
	struct launch_pipes *p;
	int wfd;		/* T's end of the message pipe */
	int gofd;		/* T's end of "go" (Yama), or -1 */
	sigset_t mask;		/* the caller's, for T (CLONE_VM) */
	char *tstack;		/* top of T's stack (CLONE_VM) */
};

/*
 * Fault injection, compiled only into the test build (cetctl-faults):
 * CETCTL_FAULT=<step>:<action> acts at a named step of the start-up, to
 * force the races the fail-closed tests need. Actions: kill (this process
 * dies of SIGKILL), exit (it exits 3), sig=N (signal N to the program),
 * pgsig=N (signal N to the program's process group), sleep=MS, closefds
 * (close every descriptor above stderr, then linger 300 ms).
 * CETCTL_FAULT2: a second one, the same way (two steps, two signals).
 * CETCTL_FAULT_VERIFY=1: the final check reads an empty /proc/PID/status.
 * CETCTL_FAULT_YAMA=1: the hand-shake Yama's relational ptrace_scope needs,
 * where there is no Yama (the protocol, not Yama's permission check).
 * CETCTL_FAULT_LOG=FILE: the tracer appends "verified PID" right before it
 * detaches, so a test can tell a program released by a verified start-up.
 */
#ifdef CETCTL_FAULT_HOOKS
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
	else if (strcmp(colon, "closefds") == 0) {
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

static void fault_point(const char *step, pid_t program)
{
	size_t i;

	/* a point missing from the list would be missed by every test */
	for (i = 0; i < ARRAY_SIZE(fault_steps); i++)
		if (strcmp(fault_steps[i].name, step) == 0)
			break;
	if (i == ARRAY_SIZE(fault_steps))
		abort();
	fault_act(getenv("CETCTL_FAULT"), step, program);
	fault_act(getenv("CETCTL_FAULT2"), step, program);
}

static void fault_log(const char *what, pid_t pid)
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
static void state_log(const struct launch *l, const struct event *ev)
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
#define STATE_LOG(l, ev)	state_log(l, ev)
#else
#define fault_point(step, program)	do { } while (0)
#define fault_log(what, pid)		do { } while (0)
#define STATE_LOG(l, ev)		do { } while (0)
#endif

/*
 * ptrace() with every argument a full 64-bit word: glibc reads addr and data
 * as pointers through varargs, so an int there would leave the upper half
 * unspecified.
 */
static long pt(int req, pid_t pid, unsigned long addr, unsigned long data)
{
	return ptrace((enum __ptrace_request)req, pid, (void *)addr, (void *)data);
}

/* A failed step, in the result: -1, for `return fail(...)`. */
static int result_fail(struct launch_result *res, enum launch_stage stage, int err,
		       const char *what)
{
	res->stage = stage;
	res->err = err;
	res->what = what;
	return -1;
}

static int fail(struct launch *l, enum launch_stage stage, int err, const char *what)
{
	return result_fail(l->res, stage, err, what);
}

/*
 * The registers, as read: a PTRACE_GETREGS answered 0 by a filter writes
 * nothing, so the buffer is filled with a pattern no real register set has
 * (cs is 0x33 or 0x23) and an untouched one is a failure.
 */
static int get_regs(struct launch *l, struct user_regs_struct *regs)
{
	memset(regs, 0xa5, sizeof(*regs));
	if (pt(PTRACE_GETREGS, l->pid, 0, (unsigned long)regs) < 0)
		return fail(l, LAUNCH_TRACE, -errno, "PTRACE_GETREGS");
	if (regs->cs == 0xa5a5a5a5a5a5a5a5ULL)
		return fail(l, LAUNCH_TRACE, -EPROTO, "PTRACE_GETREGS returned no registers");
	return 0;
}

/*
 * Set the registers and read them back: they count as set only when
 * PTRACE_GETREGS shows them (a PTRACE_SETREGS answered 0 changes nothing,
 * and resuming then would run the program's own code).
 */
static int set_regs(struct launch *l, const struct user_regs_struct *want)
{
	struct user_regs_struct got;

	if (pt(PTRACE_SETREGS, l->pid, 0, (unsigned long)want) < 0)
		return fail(l, LAUNCH_TRACE, -errno, "PTRACE_SETREGS");
	if (get_regs(l, &got) < 0)
		return -1;
	if (got.rip != want->rip || got.rax != want->rax || got.orig_rax != want->orig_rax ||
	    got.rdi != want->rdi || got.rsi != want->rsi || got.rdx != want->rdx ||
	    got.rbx != want->rbx || got.rsp != want->rsp || got.cs != want->cs)
		return fail(l, LAUNCH_TRACE, -EPROTO,
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

	if (pt(PTRACE_SETREGSET, l->pid, NT_PRSTATUS, (unsigned long)&iov) < 0)
		return -1;
	memset(&got, 0xa5, sizeof(got));
	iov = (struct iovec){ &got, sizeof(got) };
	if (pt(PTRACE_GETREGSET, l->pid, NT_PRSTATUS, (unsigned long)&iov) < 0 ||
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
		return fail(l, LAUNCH_TRACE, n < 0 ? -errno : -EPROTO,
			    "reading the program's text (process_vm_readv)");
	return 0;
}

/* PTRACE_POKETEXT, counted as done only when the text reads back so. */
static int write_text(struct launch *l, unsigned long addr, unsigned long word)
{
	unsigned long back;

	if (pt(PTRACE_POKETEXT, l->pid, addr, word) < 0)
		return fail(l, LAUNCH_TRACE, -errno, "PTRACE_POKETEXT at the entry point");
	if (read_text(l, addr, &back) < 0)
		return -1;
	if (back != word)
		return fail(l, LAUNCH_TRACE, -EPROTO,
			    "PTRACE_POKETEXT: the text read back is not the one written");
	return 0;
}

/*
 * Wait for an event of @pid, with no bound in time: used only where the
 * program may legitimately stay stopped (job control before the exec, the
 * loader's phase). Every answer is an event or an error: a wait that
 * returns without a process (0, or another pid: a seccomp filter answering
 * wait4 with 0) is one, never a reason to ask again.
 */
static int wait_tracee(pid_t pid, int *status)
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
static int step_timeout_ms(void)
{
#ifdef CETCTL_FAULT_HOOKS
	const char *ms = getenv("CETCTL_FAULT_TIMEOUT_MS");

	if (ms)
		return atoi(ms);
#endif
	return 20000;
}

static long long now_ms(void)
{
	struct timespec ts;

	/* the vDSO: no system call a filter could answer */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Forget the SIGCHLDs of events already waited for (see wait_bounded()). */
static void drain_chld(void)
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
 * (tracer()); the kernel sends it one for each stop or death of its
 * tracee, so it sleeps in sigtimedwait between non-blocking waits. The
 * caller drains SIGCHLD (drain_chld()) before the request that causes the
 * event: a SIGCHLD from the program that no wait returns is then a lie
 * (the kernel makes a stop or death visible to wait before it signals).
 */
static int wait_bounded(pid_t pid, int *status)
{
	long long deadline = now_ms() + step_timeout_ms(), left;
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
		left = deadline - now_ms();
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

static bool is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* Drop the held signals @drop says to drop (as the kernel drops pending
 * ones when a stop or continue signal is sent). */
static void drop_held(struct launch *l, bool (*drop)(int sig))
{
	int i, n = 0;

	for (i = 0; i < l->npending; i++)
		if (!drop(l->pending[i]))
			l->pending[n++] = l->pending[i];
	l->npending = n;
}

static bool is_cont(int sig)
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
static void hold_signal(struct launch *l, int sig)
{
	int i;

	if (sig == SIGCONT)
		drop_held(l, is_stop_signal);
	else if (is_stop_signal(sig))
		drop_held(l, is_cont);

	for (i = 0; i < l->npending; i++)
		if (l->pending[i] == sig && sig < SIGRTMIN)
			return;	/* standard signals do not queue: once */
	if (l->npending < MAX_PENDING)
		l->pending[l->npending++] = sig;
}

/*
 * Every wait status of the program, classified once (as strace's
 * next_event() does): the states below act on the kind, never on the
 * status bits. TRACESYSGOOD makes a system-call stop SIGTRAP|0x80, which
 * no signal is; a ptrace event stop has the event in bits 16-23.
 */
static struct event classify(int status)
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
		ev.kind = is_stop_signal(ev.sig) ? EV_GROUP_STOP : EV_INTERRUPT;
	else
		ev.kind = EV_OTHER;
	return ev;
}

/* The program's next event: bounded in time when the tracer caused it
 * (wait_bounded()), not when the program runs its own course. 0, or
 * -errno from the wait. */
static int next_event(struct launch *l, struct event *ev)
{
	int status, ret;

	ret = l->bounded ? wait_bounded(l->pid, &status) : wait_tracee(l->pid, &status);
	if (ret < 0)
		return ret;
	*ev = classify(status);
	return 0;
}
/* ---- reading the tracee through /proc, the right one ---- */

static ssize_t read_file(const char *path, char *buf, size_t size)
{
	ssize_t n, total = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while ((size_t)total < size - 1) {
		n = read(fd, buf + total, size - 1 - (size_t)total);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			n = -errno;
			close(fd);
			return n;
		}
		if (n == 0)
			break;
		total += n;
	}
	close(fd);
	buf[total] = '\0';
	return total;
}

/* The number after "@key:" in @text, or -1. */
static long field_long(const char *text, const char *key)
{
	size_t n = strlen(key);
	const char *p = text;

	while (p && *p) {
		if (strncmp(p, key, n) == 0 && p[n] == ':')
			return strtol(p + n + 1, NULL, 10);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

/* The hexadecimal mask after "@key:" in @text, or 0. */
static unsigned long long field_hex(const char *text, const char *key)
{
	size_t n = strlen(key);
	const char *p = text;

	while (p && *p) {
		if (strncmp(p, key, n) == 0 && p[n] == ':')
			return strtoull(p + n + 1, NULL, 16);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return 0;
}

/*
 * The tracee's pid as /proc numbers it: in a child pid namespace with the
 * parent's /proc mounted (unshare -p without --mount-proc), /proc/<our pid>
 * is another process. A pidfd's fdinfo "Pid:" is translated into the pid
 * namespace of the /proc it is read from; 0 there means the process is not
 * visible in that /proc at all.
 */
static int resolve_proc_pid(struct launch *l)
{
	char path[64], buf[4096], self[32];
	long pid;
	ssize_t n;
	int fd;

	n = readlink("/proc/self", self, sizeof(self) - 1);
	if (n <= 0)
		return fail(l, LAUNCH_VERIFY, n < 0 ? -errno : -EPROTO, "readlink /proc/self");
	self[n] = '\0';
	l->proc_self = (pid_t)atoi(self);

	fd = (int)syscall(SYS_pidfd_open, l->pid, 0);
	if (fd < 0) {
		/* No pidfds (before 5.3): only trust a /proc of our namespace. */
		if (l->proc_self != getpid())
			return fail(l, LAUNCH_VERIFY, -EXDEV, "/proc is another pid namespace's");
		l->proc_pid = l->pid;
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	n = read_file(path, buf, sizeof(buf));
	close(fd);
	if (n < 0)
		return fail(l, LAUNCH_VERIFY, (int)n, "reading the pidfd's fdinfo");
	pid = field_long(buf, "Pid");
	if (pid < 0 && l->proc_self == getpid())
		pid = l->pid;	/* fdinfo without Pid: (old kernel), same namespace */
	if (pid <= 0)
		return fail(l, LAUNCH_VERIFY, -EXDEV, "the program is not visible in /proc");
	l->proc_pid = (pid_t)pid;
	return 0;
}

/* 1 when the kernel set AT_SECURE in the new image's auxv, 0 not, or -1;
 * the entry point (AT_ENTRY) in l->entry. */
static int at_secure(struct launch *l)
{
	char path[64];
	unsigned long auxv[2 * 64];
	ssize_t n;
	size_t i;
	int fd, ret = -1;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)l->proc_pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(l, LAUNCH_TRACE, -errno, "reading /proc/PID/auxv");
	n = read(fd, auxv, sizeof(auxv));
	close(fd);
	if (n < (ssize_t)(2 * sizeof(long)))
		return fail(l, LAUNCH_TRACE, n < 0 ? -errno : -EPROTO, "reading /proc/PID/auxv");
	for (i = 0; i + 1 < (size_t)n / sizeof(long) && auxv[i] != AT_NULL; i += 2) {
		if (auxv[i] == AT_ENTRY)
			l->entry = auxv[i + 1];
		if (auxv[i] == AT_SECURE)
			ret = auxv[i + 1] != 0;
	}
	if (ret < 0 || !l->entry)
		return fail(l, LAUNCH_TRACE, -EPROTO, "no AT_SECURE or AT_ENTRY in /proc/PID/auxv");
	return ret;
}

/* 0 when the new image is an x86-64 ELF program (not x32, not i386). */
static int check_x86_64(struct launch *l)
{
	enum elf_arch arch;
	char path[64];
	int fd;

	if (l->saved.cs != USER_CS_64)
		return fail(l, LAUNCH_NOT64, -ENOEXEC, "a 32-bit program");
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)l->proc_pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(l, LAUNCH_TRACE, -errno, "opening /proc/PID/exe");
	arch = elf_arch_read_fd(fd);
	close(fd);
	if (arch == ELF_ARCH_NOT_ELF)
		return fail(l, LAUNCH_NOT64, -ENOEXEC, "not an ELF image");
	if (arch != ELF_ARCH_X86_64)
		return fail(l, LAUNCH_NOT64, -ENOEXEC,
			    arch == ELF_ARCH_X32 ? "an x32 program" : "not an x86-64 program");
	return 0;
}

/* ---- the injected calls ---- */

/*
 * Put the 2-byte instruction @insn at @addr, keeping the original text:
 * PEEK/POKE work on aligned words, so an instruction at the last byte of a
 * word takes two (the second may be on the next page, which must be mapped).
 */
static int poke_at(struct launch *l, unsigned long addr, unsigned long insn)
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
		l->poked = true;	/* from here, restore() puts the first word back */
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
static bool poke_intact(struct launch *l, unsigned long insn)
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
static int poke_insn(struct launch *l, unsigned long insn)
{
	unsigned long rip = l->saved.rip;

	if (l->poked)
		return poke_at(l, l->spot, insn);
	return poke_at(l, (rip & 7) != 7 ? rip : (rip & ~0xfffUL), insn);
}

/* The original text back where the instruction was poked. */
static int unpoke(struct launch *l)
{
	int i;

	for (i = 0; l->poked && i < l->nwords; i++)
		if (write_text(l, (l->spot & ~7UL) + 8UL * i, l->word[i]) < 0)
			return -1;
	l->poked = false;
	return 0;
}

/* Put the program back as exec left it. */
static int restore(struct launch *l)
{
	if (unpoke(l) < 0)
		return -1;
	return set_regs(l, &l->saved);
}

/* Trust, but verify, from the kernel, for the stopped program. */
static int verify(struct launch *l, const struct launch_opts *o)
{
	struct shstk_proc_features f;
	unsigned long status = 0;
	char path[64], buf[8192];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)l->proc_pid);
	n = read_file(path, buf, sizeof(buf));
	if (n < 0)
		return fail(l, LAUNCH_VERIFY, (int)n, "reading /proc/PID/status");
#ifdef CETCTL_FAULT_HOOKS
	if (getenv("CETCTL_FAULT_VERIFY"))
		buf[0] = '\0';	/* a status that proves nothing */
#endif
	/* Signals the kernel holds for it (arrived while it stayed stopped). */
	l->kernel_pending = field_hex(buf, "SigPnd") | field_hex(buf, "ShdPnd");
	/* The right process: the only one this tracer traces. */
	if (field_long(buf, "TracerPid") != l->proc_self)
		return fail(l, LAUNCH_VERIFY, -ESRCH, "/proc/PID/status is not the traced program");
	if (!o->enable)
		return 0;
	shstk_features_parse(buf, &f);
	l->res->status_lines = f.present;
	l->res->got_enabled = f.enabled;
	l->res->got_locked = f.locked;
	if (!f.present || (f.enabled & o->enable) != o->enable || (f.locked & o->lock) != o->lock)
		return fail(l, LAUNCH_VERIFY, -EPROTO, NULL);
	if (pt(PTRACE_ARCH_PRCTL, l->pid, (unsigned long)&status, ARCH_SHSTK_STATUS) < 0)
		return fail(l, LAUNCH_VERIFY, -errno, "PTRACE_ARCH_PRCTL(ARCH_SHSTK_STATUS)");
	if ((status & o->enable) != o->enable) {
		l->res->got_enabled = status;
		return fail(l, LAUNCH_VERIFY, -EPROTO, NULL);
	}
	return 0;
}

/*
 * The start-up failed after the exec: the program must not run. Make it
 * exit with @code before its first instruction (an injected exit_group at
 * the execve exit stop), or kill it. It is resumed only once the kernel
 * shows the system-call instruction in its text and the registers that
 * make it exit_group(@code) (read back); any doubt is a SIGKILL.
 */
static void stop_program(struct launch *l, int code)
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
	if (poke_insn(l, compat ? INSN_INT80 : INSN_SYSCALL) < 0)
		goto kill;
	regs = l->saved;
	regs.rip = l->spot;
	regs.rax = compat ? NR32_EXIT_GROUP : SYS_exit_group;
	regs.orig_rax = (unsigned long long)-1;
	regs.rdi = regs.rbx = (unsigned long long)code;
	if (set_regs(l, &regs) < 0 && set_regs_regset(l, &regs) < 0)
		goto kill;
	/* signals arriving meanwhile stop it before the instruction: dropped */
	for (i = 0; i < 16; i++) {
		drain_chld();
		if (pt(PTRACE_CONT, l->pid, 0, 0) < 0 || wait_bounded(l->pid, &status) < 0)
			break;
		ev = classify(status);
		if (ev.kind == EV_EXITED || ev.kind == EV_KILLED)
			return;
	}
kill:
	/* Not waited for: the init of a pid namespace ignores a SIGKILL from
	 * inside it; the kernel's kill-on-exit, when the tracer leaves right
	 * after this, does not (every caller exits next). */
	kill(l->pid, SIGKILL);
}

/* Messages from T to P. */
enum { MSG_SEIZED = 1, MSG_ERR };
/* The step that failed before the exec, for the message: which call. */
enum pre_step {
	STEP_FORK,		/* cloning the tracer (RLIMIT_NPROC: EAGAIN) */
	STEP_SEIZE,		/* PTRACE_SEIZE said no */
	STEP_PROC,		/* finding the program in /proc */
	STEP_INTERRUPT,		/* PTRACE_INTERRUPT said no */
	STEP_OBSERVE,		/* no ptrace stop of the program seen */
	STEP_TRACERPID,		/* /proc does not name the tracer */
	STEP_RESUME,		/* the caller was not seen resuming */
};
struct msg {
	int kind;
	int err;	/* ERR: errno of the failed step */
	int step;	/* ERR: enum pre_step */
};

static const char *pre_step_str(int step)
{
	switch (step) {
	case STEP_FORK:		return "fork of the tracer";
	case STEP_SEIZE:	return "PTRACE_SEIZE";
	case STEP_PROC:		return "finding the program in /proc";
	case STEP_INTERRUPT:	return "PTRACE_SEIZE answered, but PTRACE_INTERRUPT of the program failed";
	case STEP_OBSERVE:	return "PTRACE_SEIZE answered, but no ptrace stop of the program seen";
	case STEP_TRACERPID:	return "PTRACE_SEIZE answered, but /proc/PID/status names another tracer";
	case STEP_RESUME:	return "PTRACE_CONT answered, but the traced cetctl was not seen resuming";
	}
	return "starting the tracer";
}

static ssize_t xread(int fd, void *buf, size_t n)
{
	ssize_t r;

	do
		r = read(fd, buf, n);
	while (r < 0 && errno == EINTR);
	return r;
}

static void xwrite(int fd, const void *buf, size_t n)
{
	ssize_t r;

	do
		r = write(fd, buf, n);
	while (r < 0 && errno == EINTR);
}

/* Whether the tracee, which we saw stopped, was killed since: a stopped
 * tracee answers PTRACE_GETREGS, a dying one says ESRCH (then reap it). */
static bool killed(struct launch *l)
{
	struct user_regs_struct regs;
	int status;

	if (pt(PTRACE_GETREGS, l->pid, 0, (unsigned long)&regs) == 0 || errno != ESRCH)
		return false;
	return wait_tracee(l->pid, &status) == 0 && !WIFSTOPPED(status);
}

/*
 * Whether Yama's relational ptrace_scope (1) is in force: then only an
 * ancestor, or a process the tracee named, may attach. Scope 0 and no Yama
 * need nothing; with 2 or 3 naming would not help (the seize says EPERM).
 */
static bool yama_relational(void)
{
	char buf[8];
	ssize_t n;

#ifdef CETCTL_FAULT_HOOKS
	if (getenv("CETCTL_FAULT_YAMA"))
		return true;
#endif
	n = read_file("/proc/sys/kernel/yama/ptrace_scope", buf, sizeof(buf));
	return n < 0 ? n != -ENOENT : atoi(buf) == 1;
}

/* The pipes: T -> P messages (SEIZED/ERR), P -> T "go" (Yama only; a
 * socket pair), and the one C waits on (Yama only: P closes its end after
 * the seize). */
struct launch_pipes {
	int msg[2], go[2], hold[2];
};

static void close_pipe(int p[2])
{
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
	p[0] = p[1] = -1;
}

static void close_pipes(struct launch_pipes *p)
{
	close_pipe(p->msg);
	close_pipe(p->go);
	close_pipe(p->hold);
}

/* The pipes the start-up needs ("go" and "hold" under Yama only). 0 or
 * -errno, nothing left open. "go" is a socket pair: sent with
 * MSG_NOSIGNAL, it cannot kill us with SIGPIPE when the middle process
 * died before forking T. */
static int open_pipes(struct launch_pipes *p, bool yama)
{
	int err;

	if (pipe2(p->msg, O_CLOEXEC) < 0 ||
	    (yama && (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p->go) < 0 ||
		      pipe2(p->hold, O_CLOEXEC) < 0))) {
		err = -errno;
		close_pipes(p);
		return err;
	}
	return 0;
}

/*
 * Before the exec, a resume counts only when observed: the caller has left
 * its ptrace stop (/proc/PID/stat no longer says 't'), or a new event of it
 * (another stop, its death) is waiting. A PTRACE_CONT answered 0 without
 * resuming (a seccomp filter) would otherwise leave the caller stopped and
 * the tracer waiting for its exec for ever. 0, or -EPROTO once the step's
 * time is up; nothing here allocates (see tracer()).
 */
static int observe_resumed(const struct launch *l)
{
	long long deadline = now_ms() + step_timeout_ms();
	struct timespec pause = { 0, 1000000 };
	char path[64], buf[512], *close_paren;
	siginfo_t si;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)l->proc_pid);
	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)l->pid, &si, WEXITED | WSTOPPED | WNOHANG | WNOWAIT | __WALL) == 0 &&
		    si.si_pid == l->pid)
			return 0;
		/* unreadable: not observed (its death shows in the wait above) */
		if (read_file(path, buf, sizeof(buf)) > 0) {
			close_paren = strrchr(buf, ')');
			if (close_paren && close_paren[1] == ' ' && close_paren[2] &&
			    close_paren[2] != 't')
				return 0;
		}
		if (now_ms() >= deadline)
			return -EPROTO;
		nanosleep(&pause, NULL);
	}
}

/* The TracerPid /proc/PID/status gives, or -1. */
static long tracer_pid(const struct launch *l)
{
	char path[64], buf[4096];

	snprintf(path, sizeof(path), "/proc/%d/status", (int)l->proc_pid);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	return field_long(buf, "TracerPid");
}

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

/* ---- the tracer: the start-up as a state machine ---- */

/* The action that leads to the next event: resume the program with @req
 * (PTRACE_SYSCALL or PTRACE_CONT), delivering @sig. @bounded: the next
 * event is one the tracer causes (the program runs none of its own code),
 * so the SIGCHLDs of events already waited for are forgotten first (see
 * wait_bounded()). 0, or -1 with the result filled. */
static int resume(struct launch *l, int req, int sig, bool bounded)
{
	if (bounded)
		drain_chld();
	if (pt(req, l->pid, 0, (unsigned long)sig) < 0)
		return fail(l, LAUNCH_TRACE, -errno,
			    req == PTRACE_CONT ? "PTRACE_CONT" : "PTRACE_SYSCALL");
	l->req = req;
	l->bounded = bounded;
	return 0;
}

/* The program died during start-up: its status is the whole story. */
static enum tstate died(struct launch *l, const struct event *ev)
{
	l->res->wstatus = ev->status;
	l->pid = 0;	/* gone */
	fail(l, LAUNCH_DIED, 0, NULL);
	return TS_DIED;
}

/* Before the exec: pass a stop of the caller on as if it were not traced
 * (signals delivered, group-stops kept with PTRACE_LISTEN). True when it
 * asked for the caller to run on (PTRACE_CONT), which observe_resumed()
 * then checks. */
static bool pass_on(const struct launch *l, const struct event *ev)
{
	switch (ev->kind) {
	case EV_GROUP_STOP:
		pt(PTRACE_LISTEN, l->pid, 0, 0);
		return false;
	case EV_SIGNAL:
		pt(PTRACE_CONT, l->pid, 0, (unsigned long)ev->sig);
		return true;
	default:
		pt(PTRACE_CONT, l->pid, 0, 0);
		return true;
	}
}

/* A failure before the exec: the caller may be stopped (by the interrupt)
 * and ours: let it go, so that it can say why and exit; it runs nothing
 * but cetctl. */
static void __attribute__((noreturn)) refuse_before_exec(struct launch *l, int step, int err)
{
	struct msg m = { MSG_ERR, err, step };

	pt(PTRACE_DETACH, l->pid, 0, 0);
	xwrite(l->wfd, &m, sizeof(m));
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

	fault_point("t-seize", l->pid);
	if (pt(PTRACE_SEIZE, l->pid, 0,
	       PTRACE_O_EXITKILL | PTRACE_O_TRACEEXEC | PTRACE_O_TRACESYSGOOD) < 0) {
		m = (struct msg){ MSG_ERR, errno, STEP_SEIZE };
		xwrite(l->wfd, &m, sizeof(m));
		_exit(0);
	}
	fault_point("t-seized", l->pid);
	if (resolve_proc_pid(l) < 0)
		refuse_before_exec(l, STEP_PROC, -l->res->err);
	drain_chld();
	if (pt(PTRACE_INTERRUPT, l->pid, 0, 0) < 0)
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
	if (tracer_pid(l) != l->proc_self)
		refuse_before_exec(l, STEP_TRACERPID, EPROTO);
	/* a signal's stop may come first: the interrupt's follows, later */
	if (pass_on(l, ev) && observe_resumed(l) < 0)
		refuse_before_exec(l, STEP_RESUME, EPROTO);
	xwrite(l->wfd, &m, sizeof(m));

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
	if (set_regs(l, &regs) < 0)
		return TS_FAILED;
	fault_point("inject-enter", l->pid);
	return resume(l, PTRACE_SYSCALL, 0, true) < 0 ? TS_FAILED : TS_INJECT_ENTER;
}

/* The program stopped before its first instruction, the text and the
 * registers put back: what does the kernel say? */
static enum tstate restore_and_verify(struct launch *l)
{
	if (restore(l) < 0 || verify(l, l->o) < 0)
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
		fail(l, LAUNCH_STATIC, -ENOEXEC, NULL);
		return TS_FAILED;
	}
	if (poke_at(l, l->entry, INSN_SYSCALL) < 0)
		return TS_FAILED;
	fault_point("loader", l->pid);
	return resume(l, PTRACE_SYSCALL, 0, false) < 0 ? TS_FAILED : TS_LOADER;
}

/* TS_EXECVE_EXIT + syscall-exit stop: rip is the entry point, no
 * instruction has run. Check what the kernel made of the exec, then
 * inject or let the loader run. */
static enum tstate at_execve_exit(struct launch *l)
{
	int secure;

	if (get_regs(l, &l->saved) < 0)
		return TS_FAILED;
	l->have_regs = true;
	l->res->entry = l->saved.rip;
	fault_point("exec-exit", l->pid);
	if (l->proc_pid <= 0)
		return TS_FAILED;	/* not found in /proc before the exec */

	/* First: a 32-bit image has its own register view and auxv layout. */
	if (check_x86_64(l) < 0)
		return TS_FAILED;
	secure = at_secure(l);
	if (secure < 0)
		return TS_FAILED;
	if (secure) {
		fail(l, LAUNCH_SECURE, -EPERM, NULL);
		return TS_FAILED;
	}
	if ((l->saved.orig_rax != SYS_execve && l->saved.orig_rax != SYS_execveat) ||
	    l->saved.rax != 0) {
		fail(l, LAUNCH_TRACE, -EPROTO, "the execve syscall-exit stop");
		return TS_FAILED;
	}
	if (l->o->at_entry)
		return start_loader(l);

	if (poke_insn(l, INSN_SYSCALL) < 0)
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
	fault_point("inject-exit", l->pid);
	return resume(l, PTRACE_SYSCALL, 0, true) < 0 ? TS_FAILED : TS_INJECT_EXIT;
}

/* TS_INJECT_EXIT + syscall-exit stop: the injected call's answer; then
 * the next call, or the lock and the verification. */
static enum tstate at_inject_exit(struct launch *l)
{
	const struct injected *c = &l->calls[l->call];
	struct user_regs_struct regs;
	long result;

	if (get_regs(l, &regs) < 0)
		return TS_FAILED;
	if (regs.orig_rax != (unsigned long long)c->nr || regs.rip != l->spot + 2) {
		fail(l, LAUNCH_TRACE, -EPROTO, "syscall stops of the injected call");
		return TS_FAILED;
	}
	result = (long)regs.rax;
	if (c->nr == SYS_getpid && result != l->pid) {
		fail(l, LAUNCH_TRACE, -EPROTO, "injected getpid()");
		return TS_FAILED;
	}
	if (c->nr != SYS_getpid && result < 0) {
		fail(l, c->stage, (int)result, NULL);
		return TS_FAILED;
	}
	if (++l->call < l->ncalls)
		return inject(l);
	if (l->o->enable && l->o->lock &&
	    pt(PTRACE_ARCH_PRCTL, l->pid, l->o->lock, ARCH_SHSTK_LOCK) < 0) {
		fail(l, LAUNCH_LOCK, -errno, NULL);
		return TS_FAILED;
	}
	fault_point("injected", l->pid);
	return restore_and_verify(l);
}

/* TS_LOADER + the marker's syscall-enter stop: at the entry point, no
 * instruction of the program run yet. */
static enum tstate at_entry(struct launch *l)
{
	struct user_regs_struct regs;

	if (get_regs(l, &regs) < 0)
		return TS_FAILED;
	regs.rax = regs.orig_rax;
	regs.orig_rax = (unsigned long long)-1;
	regs.rip = l->entry;
	l->saved = regs;
	fault_point("entry", l->pid);
	return restore_and_verify(l);
}

/* TS_LOADER + a system-call stop: the marker's, or the loader's. */
static enum tstate loader_syscall(struct launch *l)
{
	struct __ptrace_syscall_info info;
	long ret;

	/* it answers with a size: 0 is no answer */
	ret = pt(PTRACE_GET_SYSCALL_INFO, l->pid, sizeof(info), (unsigned long)&info);
	if ((int)ret <= 0) {
		fail(l, LAUNCH_TRACE, (int)ret < 0 ? -errno : -EPROTO, "PTRACE_GET_SYSCALL_INFO");
		return TS_FAILED;
	}
	if (!l->poked) {
		/* the exit stop of a fork: the marker back */
		if (info.op == PTRACE_SYSCALL_INFO_EXIT && poke_at(l, l->entry, INSN_SYSCALL) < 0)
			return TS_FAILED;
	} else if (!poke_intact(l, INSN_SYSCALL)) {
		fail(l, LAUNCH_TRACE, -EPROTO,
		     "the entry point was rewritten before the program started");
		return TS_FAILED;
	} else if (info.op == PTRACE_SYSCALL_INFO_ENTRY && info.instruction_pointer == l->entry + 2) {
		return at_entry(l);
	} else if (info.op == PTRACE_SYSCALL_INFO_ENTRY &&
		   (info.entry.nr == SYS_fork || info.entry.nr == SYS_vfork ||
		    info.entry.nr == SYS_clone || info.entry.nr == SYS_clone3) &&
		   unpoke(l) < 0) {
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
			fault_point("exec-event", l->pid);
			/* inside execve: on to its syscall-exit stop */
			return resume(l, PTRACE_SYSCALL, 0, true) < 0 ? TS_FAILED : TS_EXECVE_EXIT;
		}
		if (pass_on(l, ev) && observe_resumed(l) < 0) {
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
				hold_signal(l, ev->sig);
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
			fail(l, LAUNCH_TRACE, -EPROTO, "an exec before the entry point");
			return TS_FAILED;
		case EV_GROUP_STOP:
			if (pt(PTRACE_LISTEN, l->pid, 0, 0) == 0)
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
		fail(l, LAUNCH_TRACE, err, "waitpid");
		return TS_FAILED;
	default:
		fail(l, LAUNCH_TRACE, err, l->req == PTRACE_CONT ?
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

	fault_point("verified", l->pid);
	fault_log("verified", l->pid);

	/* Signals still pending in the kernel arrived after every held one
	 * (a held signal was dequeued; and the kernel cancels a pending
	 * SIGCONT when a stop signal comes, and the other way round): their
	 * stop/continue rules apply to the held ones too. */
	if (l->kernel_pending & (1ULL << (SIGCONT - 1)))
		drop_held(l, is_stop_signal);
	if (l->kernel_pending & ((1ULL << (SIGSTOP - 1)) | (1ULL << (SIGTSTP - 1)) |
				 (1ULL << (SIGTTIN - 1)) | (1ULL << (SIGTTOU - 1))))
		drop_held(l, is_cont);
	/* Hand back the signals that arrived during start-up: all but the
	 * first are queued now, the first goes with the detach. */
	for (i = 1; i < l->npending; i++)
		kill(l->pid, l->pending[i]);
	if (pt(PTRACE_DETACH, l->pid, 0, l->npending ? (unsigned long)l->pending[0] : 0) < 0) {
		fail(l, LAUNCH_TRACE, -errno, "PTRACE_DETACH");
		if (killed(l))
			return;	/* killed meanwhile */
		stop_program(l, l->report(l->res, l->arg));
	} else if (tracer_pid(l) == l->proc_self) {
		/* answered, not done: still ours, still stopped before its
		 * first instruction (or a stop on its way) */
		fail(l, LAUNCH_TRACE, -EPROTO,
		     "PTRACE_DETACH answered, but /proc/PID/status still names the tracer");
		stop_program(l, l->report(l->res, l->arg));
	}
}

/* TS_FAILED: one line, and the program never runs. */
static void fail_closed(struct launch *l)
{
	/* Killed meanwhile (SIGKILL needs no stop; its /proc files go first,
	 * then ptrace says ESRCH): its death is the whole story. */
	if (l->pid > 0 && killed(l))
		return;
	stop_program(l, l->report(l->res, l->arg));
}

static void __attribute__((noreturn)) tracer(const struct spawn *s)
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
	/* the kernel's word that the tracee stopped or died (wait_bounded()) */
	signal(SIGCHLD, SIG_DFL);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	fault_point("t-start", l.pid);
	/* Under Yama, only once P has named C (whose descendant we are). */
	if (s->yama && xread(s->gofd, &go, 1) != 1)
		_exit(0);	/* the caller is gone: nothing was started */

	/* Until the exec we may be running in the caller's memory
	 * (tracer_vm()): nothing up to the exec event may allocate or use
	 * stdio. Every pass waits for one event: the loop ends in a final
	 * state, each wait bounded in time or by the program's own course. */
	seize(&l);
	while (l.state < TS_VERIFIED) {
		err = next_event(&l, &ev);
		STATE_LOG(&l, err ? NULL : &ev);
		l.state = err ? wait_failed(&l, err) : tracer_step(&l, &ev);
	}
	STATE_LOG(&l, NULL);
	if (l.state == TS_VERIFIED)
		release(&l);
	else if (l.state == TS_FAILED)
		fail_closed(&l);
	_exit(0);
}

/* ---- the caller's side: spawning the tracer, then the exec ----
 *
 * What runs in the caller's memory. Without Yama (and without ASan) the
 * middle process C and the tracer T share P's address space instead of
 * copying it: C with CLONE_VM | CLONE_VFORK (P sleeps until C exits, as
 * posix_spawn does), T with CLONE_VM until P's exec, after which the old
 * address space is T's alone. The rules, for middle_vm(), tracer_vm() and
 * everything T does before the exec event (TS_SEIZED, TS_BEFORE_EXEC):
 *   1. No malloc, no stdio, no exit handlers: _exit() only. One address
 *      space has one malloc state and one stdio.
 *   2. Stacks of their own (with guard pages), and every signal blocked
 *      from P's clone on, so that no handler of the caller's runs on
 *      them; T restores the caller's mask.
 *   3. One thread pointer, one errno: failing calls set an errno that P
 *      does not read (it reads T's verdict from the pipe; after a failed
 *      execve it takes errno at once).
 *   4. Arguments copied before P can change them: T copies its struct
 *      spawn first (P's frame that holds it lives until P has read T's
 *      message, which T sends after); what P changes after the clone (it
 *      closes its end of the pipe) is taken before it (wfd).
 * Nothing else runs there: this section is all of it.
 */

/*
 * The middle process C: its own process group (terminal and group signals
 * are the program's business, not the tracer's; not a session: with
 * scheduler autogroups a new session is a new scheduling group, measured at
 * +5 ms per start-up on a loaded machine), the tracer T forked off, then
 * gone, so that T is nobody's child that the program could see. Under Yama
 * it stays until P closes the hold pipe: P named C as its tracer, and Yama
 * drops the relation when C exits. (A copy of P's memory: fork.)
 */
static void __attribute__((noreturn)) middle(struct spawn *s)
{
	struct launch_pipes *p = s->p;
	struct msg m;
	pid_t tp;
	char c;

	close(p->msg[0]);
	close(p->go[1]);
	close(p->hold[1]);
	s->wfd = p->msg[1];
	s->gofd = p->go[0];
	setpgid(0, 0);
	fault_point("c-start", s->self);
	tp = fork();
	if (tp == 0) {
		close(p->hold[0]);
		tracer(s);
	}
	if (tp < 0) {
		m = (struct msg){ MSG_ERR, errno, STEP_FORK };
		xwrite(p->msg[1], &m, sizeof(m));
	}
	fault_point("c-forked", s->self);
	close(p->msg[1]);
	if (s->yama && tp > 0)
		while (xread(p->hold[0], &c, 1) > 0)
			;
	_exit(0);
}

#define MIDDLE_STACK	(64 * 1024)
#define TRACER_STACK	(256 * 1024)

/* AddressSanitizer cannot follow a process onto a stack of our own: the
 * sanitizer build copies the memory as fork() would. */
#if defined(__SANITIZE_ADDRESS__)
#define MIDDLE_SHARES_MEMORY	0
#else
#define MIDDLE_SHARES_MEMORY	1
#endif

/* T when it shares the caller's memory (rules 1-4 above). */
static int tracer_vm(void *data)
{
	struct spawn s = *(struct spawn *)data;

	sigprocmask(SIG_SETMASK, &s.mask, NULL);
	tracer(&s);
}

/* C when it shares the caller's memory (rules 1-4 above). */
static int middle_vm(void *data)
{
	struct spawn *s = data;
	struct msg m;
	pid_t tp;

	close(s->p->msg[0]);
	setpgid(0, 0);
	fault_point("c-start", s->self);
	/* no exit signal; reparented at once, to init or a subreaper */
	tp = clone(tracer_vm, s->tstack, CLONE_VM, s);
	if (tp < 0) {
		m = (struct msg){ MSG_ERR, errno, STEP_FORK };
		xwrite(s->p->msg[1], &m, sizeof(m));
	}
	fault_point("c-forked", s->self);
	_exit(0);
}

/* The middle process as above; its pid, or -1 with errno set. */
static pid_t clone_middle_vm(struct spawn *s)
{
	sigset_t all;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char *stack;
	pid_t c;
	int err;

	/* [guard][C's stack][guard][T's stack]; never unmapped here: T runs
	 * on it until it exits, the exec takes it out of the caller's view */
	stack = mmap(NULL, MIDDLE_STACK + TRACER_STACK, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
	if (stack == MAP_FAILED)
		return -1;
	/* guard pages: an overflow faults instead of writing other memory */
	if (mprotect(stack, page, PROT_NONE) < 0 ||
	    mprotect(stack + MIDDLE_STACK, page, PROT_NONE) < 0) {
		err = errno;
		munmap(stack, MIDDLE_STACK + TRACER_STACK);
		errno = err;
		return -1;
	}
	s->tstack = stack + MIDDLE_STACK + TRACER_STACK;
	s->wfd = s->p->msg[1];
	s->gofd = -1;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &s->mask);
	/* no exit signal (see the top of this file) */
	c = clone(middle_vm, stack + MIDDLE_STACK, CLONE_VM | CLONE_VFORK, s);
	err = errno;
	sigprocmask(SIG_SETMASK, &s->mask, NULL);
	if (c < 0)
		munmap(stack, MIDDLE_STACK + TRACER_STACK);	/* nobody runs on it */
	errno = err;
	return c;
}

/* Wait for the middle process @c, which exits on its own (no exit signal). */
static void reap_middle(pid_t c)
{
	int status;
	pid_t r;

	do
		r = waitpid(c, &status, __WALL);
	while (r < 0 && errno == EINTR);
}

/*
 * P's side of the Yama hand-shake, once C exists: name C as our tracer
 * (Yama scope 1 lets only ancestors trace; C's descendants are allowed
 * too), for the moment of the seize, and tell T to go.
 */
static void yama_allow(struct launch_pipes *p, pid_t c)
{
	close(p->go[0]);
	close(p->hold[0]);
	p->go[0] = p->hold[0] = -1;
	prctl(PR_SET_PTRACER, (unsigned long)c, 0, 0, 0);
	/* no reader (C died early): the read of T's answer says so */
	while (send(p->go[1], "g", 1, MSG_NOSIGNAL) < 0 && errno == EINTR)
		;
}

/* T's answer: 0 once it has seized us, else -1 with @res filled. */
static int await_seized(struct launch_pipes *p, bool yama, struct launch_result *res)
{
	struct msg m;
	ssize_t n;

	n = xread(p->msg[0], &m, sizeof(m));
	if (yama)
		prctl(PR_SET_PTRACER, 0UL, 0, 0, 0);
	if (n == (ssize_t)sizeof(m) && m.kind == MSG_SEIZED)
		return 0;
	if (n == (ssize_t)sizeof(m) && m.kind == MSG_ERR)
		return result_fail(res, m.step == STEP_FORK ? LAUNCH_SPAWN : LAUNCH_TRACE, -m.err,
				   pre_step_str(m.step));
	return result_fail(res, LAUNCH_TRACER, -EPIPE, NULL);
}

int launch_exec(const char *path, char *const argv[], char *const envp[],
		const struct launch_opts *opts, launch_report_fn report, void *arg,
		struct launch_result *res)
{
	struct launch_pipes p = { { -1, -1 }, { -1, -1 }, { -1, -1 } };
	pid_t self = getpid(), c;
	bool yama = yama_relational();
	struct spawn s = {
		.self = self, .yama = yama, .opts = opts, .report = report, .arg = arg,
		.p = &p, .wfd = -1, .gofd = -1,
	};
	int err;

	memset(res, 0, sizeof(*res));
	err = open_pipes(&p, yama);
	if (err)
		return result_fail(res, LAUNCH_SPAWN, err, "pipe2");
	if (yama || !MIDDLE_SHARES_MEMORY) {
		/* Like fork(), but no exit signal: see the top of this file. */
		c = (pid_t)syscall(SYS_clone, 0UL, 0UL, 0UL, 0UL, 0UL);
		if (c == 0)
			middle(&s);
	} else {
		c = clone_middle_vm(&s);
	}
	if (c < 0) {
		result_fail(res, LAUNCH_SPAWN, -errno, "fork");
		close_pipes(&p);
		return -1;
	}
	close(p.msg[1]);
	p.msg[1] = -1;
	if (yama)
		yama_allow(&p, c);
	fault_point("p-forked", self);
	if (await_seized(&p, yama, res) < 0) {
		close_pipes(&p);
		reap_middle(c);
		return -1;
	}
	/* Traced, with kill-on-exit: from here the program runs only once the
	 * tracer has verified it. */
	fault_point("p-seized", self);
	close_pipes(&p);	/* the hold pipe too: C may go */
	reap_middle(c);
	execve(path, argv, envp);
	return result_fail(res, LAUNCH_EXEC, -errno, NULL);
}

const char *launch_stage_str(enum launch_stage stage)
{
	switch (stage) {
	case LAUNCH_OK:			return "ok";
	case LAUNCH_SPAWN:		return "starting the tracer";
	case LAUNCH_EXEC:		return "executing the program";
	case LAUNCH_DIED:		return "the program died during start-up";
	case LAUNCH_TRACE:		return "tracing the start-up";
	case LAUNCH_TRACER:		return "the tracer went away";
	case LAUNCH_SECURE:		return "a privileged exec";
	case LAUNCH_NOT64:		return "the program is not a 64-bit x86 program";
	case LAUNCH_ENABLE_SHSTK:	return "enabling the shadow stack";
	case LAUNCH_ENABLE_WRSS:	return "enabling WRSS";
	case LAUNCH_LOCK:		return "locking the features";
	case LAUNCH_VERIFY:		return "verifying the features";
	case LAUNCH_STATIC:		return "a program without a dynamic loader";
	}
	return "?";
}
