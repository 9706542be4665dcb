// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The caller's side of the start-up: spawning the tracer, then the exec
 * (launch_exec(), the public entry point, with launch_stage_str()). The
 * pipes and the messages on them, the middle process C, the tracer's
 * clone (it runs launch_tracer()), the Yama hand-shake, waiting for T's
 * SEIZED, the exec. Calls the tracer (in the process it clones), the
 * stopped-program part's launch_result_fail(), /proc's launch_read_file()
 * and the fault points.
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
 * Nothing else runs there: this file and the tracer's states before
 * the exec event are all of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shstk-launch-internal.h"

#ifndef PR_SET_PTRACER
#define PR_SET_PTRACER		0x59616d61
#endif

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

ssize_t launch_xread(int fd, void *buf, size_t n)
{
	ssize_t r;

	do
		r = read(fd, buf, n);
	while (r < 0 && errno == EINTR);
	return r;
}

void launch_xwrite(int fd, const void *buf, size_t n)
{
	ssize_t r;

	do
		r = write(fd, buf, n);
	while (r < 0 && errno == EINTR);
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
	n = launch_read_file("/proc/sys/kernel/yama/ptrace_scope", buf, sizeof(buf));
	return n < 0 ? n != -ENOENT : atoi(buf) == 1;
}

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
	launch_fault_point("c-start", s->self);
	tp = fork();
	if (tp == 0) {
		close(p->hold[0]);
		launch_tracer(s);
	}
	if (tp < 0) {
		m = (struct msg){ MSG_ERR, errno, STEP_FORK };
		launch_xwrite(p->msg[1], &m, sizeof(m));
	}
	launch_fault_point("c-forked", s->self);
	close(p->msg[1]);
	if (s->yama && tp > 0)
		while (launch_xread(p->hold[0], &c, 1) > 0)
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
	launch_tracer(&s);
}

/* C when it shares the caller's memory (rules 1-4 above). */
static int middle_vm(void *data)
{
	struct spawn *s = data;
	struct msg m;
	pid_t tp;

	close(s->p->msg[0]);
	setpgid(0, 0);
	launch_fault_point("c-start", s->self);
	/* no exit signal; reparented at once, to init or a subreaper */
	tp = clone(tracer_vm, s->tstack, CLONE_VM, s);
	if (tp < 0) {
		m = (struct msg){ MSG_ERR, errno, STEP_FORK };
		launch_xwrite(s->p->msg[1], &m, sizeof(m));
	}
	launch_fault_point("c-forked", s->self);
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
	/* no exit signal (see shstk-launch-internal.h) */
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

	n = launch_xread(p->msg[0], &m, sizeof(m));
	if (yama)
		prctl(PR_SET_PTRACER, 0UL, 0, 0, 0);
	if (n == (ssize_t)sizeof(m) && m.kind == MSG_SEIZED)
		return 0;
	if (n == (ssize_t)sizeof(m) && m.kind == MSG_ERR)
		return launch_result_fail(res, m.step == STEP_FORK ? LAUNCH_SPAWN : LAUNCH_TRACE, -m.err,
				   pre_step_str(m.step));
	return launch_result_fail(res, LAUNCH_TRACER, -EPIPE, NULL);
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
		return launch_result_fail(res, LAUNCH_SPAWN, err, "pipe2");
	if (yama || !MIDDLE_SHARES_MEMORY) {
		/* Like fork(), but no exit signal: see shstk-launch-internal.h. */
		c = (pid_t)syscall(SYS_clone, 0UL, 0UL, 0UL, 0UL, 0UL);
		if (c == 0)
			middle(&s);
	} else {
		c = clone_middle_vm(&s);
	}
	if (c < 0) {
		launch_result_fail(res, LAUNCH_SPAWN, -errno, "fork");
		close_pipes(&p);
		return -1;
	}
	close(p.msg[1]);
	p.msg[1] = -1;
	if (yama)
		yama_allow(&p, c);
	launch_fault_point("p-forked", self);
	if (await_seized(&p, yama, res) < 0) {
		close_pipes(&p);
		reap_middle(c);
		return -1;
	}
	/* Traced, with kill-on-exit: from here the program runs only once the
	 * tracer has verified it. */
	launch_fault_point("p-seized", self);
	close_pipes(&p);	/* the hold pipe too: C may go */
	reap_middle(c);
	execve(path, argv, envp);
	return launch_result_fail(res, LAUNCH_EXEC, -errno, NULL);
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
