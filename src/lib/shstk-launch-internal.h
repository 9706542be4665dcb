/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The insides of the fail-closed start-up, shared by its parts and by
 * nothing else: shstk-launch.h is the face cetctl's other code sees.
 *
 * The start-up (see shstk-launch.h), its processes and stops:
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
 * to itself (see tracer_vm() in shstk-launch-spawn.c). That saves two
 * page-table copies per start-up, and P's exec no longer tears cetctl's
 * address space down on the program's critical path: T's exit does, after
 * the detach.
 *
 * P never runs the program unless T seized it first (it execs only after
 * SEIZED); from then on the kernel kills P if T exits (EXITKILL), and T lets
 * the program run only by the final detach. The exec event stop is a ptrace
 * event, not a signal: the caller's signal mask and dispositions do not
 * matter. After the exec, signals are held (suppressed at their
 * delivery-stops) and handed back at the detach, so the program sees them
 * once, as if sent just after its start.
 *
 * The parts, one duty each (each file's own head says what it may call):
 *   shstk-launch-spawn.c   the caller's side: the pipes, the middle
 *                          process, the Yama hand-shake, waiting for
 *                          SEIZED, the exec (launch_exec())
 *   shstk-launch-tracer.c  the tracer: the start-up as a state machine
 *   shstk-launch-event.c   the program's events: waiting for them (bounded
 *                          or not), classifying them, the signals held
 *   shstk-launch-inject.c  the stopped program: ptrace requests, its
 *                          registers and text, the poked instruction, and
 *                          the exit_group that ends a failed start-up
 *   shstk-launch-proc.c    the program as /proc shows it: its pid there,
 *                          auxv, exe, stat, status (TracerPid, features)
 *   shstk-launch-fault.c   the test build's fault points and logs
 *                          (CETCTL_FAULT_HOOKS; nothing in the real build)
 */
#ifndef CETCTL_SHSTK_LAUNCH_INTERNAL_H
#define CETCTL_SHSTK_LAUNCH_INTERNAL_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>
#include <sys/user.h>

#include "shstk-launch.h"

#define MAX_PENDING	32
/* processes the program may fork before its entry point (glibc method) */
#define MAX_FORKS	64
#define USER_CS_64	0x33	/* __USER_CS: 64-bit mode (x86-64 and x32) */
#define INSN_SYSCALL	0x050fUL	/* 0f 05, little endian */

/*
 * The tracer's states, in the order a start-up passes them. The tracer
 * waits for one event of the program at a time; what it does with it
 * depends only on the state it is in (tracer_step(), in
 * shstk-launch-tracer.c, with the transitions). TS_SEIZED and
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

/* What one wait status of the program was (launch_classify()). */
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
	/* pidfds of the processes it forked before its entry point (the
	 * loader's phase): killed when the start-up fails */
	int forks[MAX_FORKS];
	int nforks;
	struct launch_result *res;
};

/* What P hands to C and T (see shstk-launch-spawn.c). */
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

/* ---- shstk-launch-inject.c: the stopped program ---- */
long launch_pt(int req, pid_t pid, unsigned long addr, unsigned long data);
int launch_result_fail(struct launch_result *res, enum launch_stage stage, int err,
		       const char *what);
int launch_fail(struct launch *l, enum launch_stage stage, int err, const char *what);
int launch_get_regs(struct launch *l, struct user_regs_struct *regs);
int launch_set_regs(struct launch *l, const struct user_regs_struct *want);
int launch_poke_at(struct launch *l, unsigned long addr, unsigned long insn);
bool launch_poke_intact(struct launch *l, unsigned long insn);
int launch_poke_insn(struct launch *l, unsigned long insn);
int launch_unpoke(struct launch *l);
int launch_restore(struct launch *l);
void launch_stop_program(struct launch *l, int code);
bool launch_killed(struct launch *l);

/* shstk-launch-forks.c: at the exit stop of a fork in the loader's phase,
 * hold the child (@rval: what the call returned) by a pidfd; 0, or -1 with
 * the result filled (it was killed). Kill the held ones (a failed start-up,
 * counted in res->forks_killed), or let them go (a verified one). */
int launch_hold_fork(struct launch *l, long long rval);
void launch_kill_forks(struct launch *l);
void launch_release_forks(struct launch *l);

/* ---- shstk-launch-event.c: the program's events ---- */
int launch_wait_tracee(pid_t pid, int *status);
int launch_step_timeout_ms(void);
long long launch_now_ms(void);
void launch_drain_chld(void);
int launch_wait_bounded(pid_t pid, int *status);
bool launch_is_stop_signal(int sig);
bool launch_is_cont(int sig);
void launch_drop_held(struct launch *l, bool (*drop)(int sig));
void launch_hold_signal(struct launch *l, int sig);
struct event launch_classify(int status);
int launch_next_event(struct launch *l, struct event *ev);

/* ---- shstk-launch-proc.c: the program as /proc shows it ---- */
ssize_t launch_read_file(const char *path, char *buf, size_t size);
int launch_resolve_proc_pid(struct launch *l);
int launch_at_secure(struct launch *l);
int launch_check_x86_64(struct launch *l);
int launch_verify(struct launch *l, const struct launch_opts *o);
int launch_observe_resumed(const struct launch *l);
long launch_tracer_pid(const struct launch *l);

/* ---- shstk-launch-tracer.c: the tracer ---- */
void __attribute__((noreturn)) launch_tracer(const struct spawn *s);

/* ---- shstk-launch-spawn.c: the message pipe's reads and writes ---- */
ssize_t launch_xread(int fd, void *buf, size_t n);
void launch_xwrite(int fd, const void *buf, size_t n);

/* ---- shstk-launch-fault.c: the test build's fault points ---- */
#ifdef CETCTL_FAULT_HOOKS
void launch_fault_point(const char *step, pid_t program);
void launch_fault_log(const char *what, pid_t pid);
void launch_state_log(const struct launch *l, const struct event *ev);
#else
#define launch_fault_point(step, program)	do { } while (0)
#define launch_fault_log(what, pid)		do { } while (0)
#define launch_state_log(l, ev)			do { } while (0)
#endif

#endif
