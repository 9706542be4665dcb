/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Start a program with shadow-stack features enabled from its first
 * instruction, failing closed: the exec-stop injection that cetctl-run(1)
 * describes, arranged like `strace -D`.
 *
 * The calling process *becomes* the program (it execs it), so the program
 * keeps cetctl's pid, parent, process group and terminal: job control,
 * signals sent to the group, SIGCHLD dispositions, the exit status and the
 * core-dump flag are the program's own, with no process in between. The
 * tracer is a grandchild in its own process group (terminal and group
 * signals do not reach it) that:
 *   - PTRACE_SEIZEs the caller *before* the exec, with PTRACE_O_EXITKILL
 *     (if the tracer dies at any point, the kernel kills the program),
 *     PTRACE_O_TRACEEXEC (the exec event stop does not depend on SIGTRAP
 *     delivery: a blocked or ignored SIGTRAP changes nothing) and
 *     PTRACE_O_TRACESYSGOOD;
 *   - at the exec event refuses a privileged exec by what the kernel decided
 *     (AT_SECURE in the new auxv) and a program that is not x86-64 (x32
 *     included);
 *   - resumes to the execve syscall-exit stop, pokes a `syscall`, drives
 *     arch_prctl(ARCH_SHSTK_ENABLE) with PTRACE_SYSCALL enter/exit stops
 *     (never single-steps), locks with PTRACE_ARCH_PRCTL;
 *   - verifies from the kernel: ARCH_SHSTK_STATUS through ptrace, and
 *     /proc/PID/status of the right process (the pid as the /proc it reads
 *     numbers it, found through a pidfd; TracerPid must be the tracer);
 *   - only then detaches, handing back signals that arrived meanwhile.
 * The glibc method (at_entry) injects nothing: the dynamic loader runs,
 * traced at each system call, up to a system-call instruction poked at the
 * entry point (AT_ENTRY); the verification happens there, before the
 * program's first instruction (its libraries' constructors have run).
 * Any failure after the exec: the report callback prints one line and the
 * program is made to exit(125) before running any of its own instructions
 * (an injected exit_group), or is SIGKILLed when even that fails.
 *
 * Library code: returns -errno and fills a result; the printing is the
 * caller's report callback.
 */
#ifndef CETCTL_SHSTK_LAUNCH_H
#define CETCTL_SHSTK_LAUNCH_H

#include <stdbool.h>
#include <sys/types.h>

struct launch_opts {
	/* ARCH_SHSTK_SHSTK, optionally | ARCH_SHSTK_WRSS. 0: trace-only, inject a
	 * getpid() instead, enable nothing, verify the tracing (tests the
	 * machinery on machines without shadow stacks). */
	unsigned long enable;
	unsigned long lock;	/* features to lock (PTRACE_ARCH_PRCTL), 0: none */
	bool at_entry;		/* the glibc method: inject nothing; let the dynamic
				 * loader run (it enables the features) and verify
				 * at the program's entry point (AT_ENTRY) */
};

/* Where the start-up stopped when it failed. */
enum launch_stage {
	LAUNCH_OK = 0,
	LAUNCH_SPAWN,		/* pipe/fork failed in cetctl */
	LAUNCH_EXEC,		/* execve failed (err = -errno of execve) */
	LAUNCH_DIED,		/* the program died during start-up (wstatus) */
	LAUNCH_TRACE,		/* a ptrace/wait operation failed (err, what) */
	LAUNCH_TRACER,		/* the tracer went away before the exec */
	LAUNCH_SECURE,		/* the kernel made it a privileged exec (AT_SECURE) */
	LAUNCH_NOT64,		/* the exec'd image is not x86-64 (what: why) */
	LAUNCH_ENABLE_SHSTK,	/* arch_prctl(ENABLE, SHSTK) in the child failed (err) */
	LAUNCH_ENABLE_WRSS,	/* arch_prctl(ENABLE, WRSS) failed (err) */
	LAUNCH_LOCK,		/* PTRACE_ARCH_PRCTL(LOCK) failed (err) */
	LAUNCH_VERIFY,		/* the kernel does not show what was asked (got) */
	LAUNCH_STATIC,		/* at_entry: no loader runs before the entry point */
};

struct launch_result {
	enum launch_stage stage;
	int err;		/* -errno of the failing step */
	const char *what;	/* the failing operation, for LAUNCH_TRACE/VERIFY */
	int wstatus;		/* for LAUNCH_DIED: the wait status */
	bool status_lines;	/* LAUNCH_VERIFY: the x86_Thread_features lines exist */
	unsigned long got_enabled, got_locked;	/* LAUNCH_VERIFY: what the kernel said */
	unsigned long entry;	/* the entry point */
	int signals_forwarded;	/* signals that arrived during start-up */
	/* the glibc method: the program's start-up code (loader, IFUNC
	 * resolvers, constructors) ran before the failure */
	bool startup_ran;
	int forks_killed;	/* processes it forked meanwhile, killed */
};

/*
 * Called in the tracer when the start-up fails after the exec (and in the
 * caller for a failure before it): prints the one line, returns the exit
 * status the program is made to exit with (125).
 */
typedef int (*launch_report_fn)(const struct launch_result *res, void *arg);

/*
 * Exec @path (argv/envp as given) in this process, under the tracer
 * described above. Does not return when the exec succeeded. Returns -1
 * with @res filled when nothing was started (the program did not run);
 * the caller then reports and exits 125 (or 126/127 for LAUNCH_EXEC).
 */
int launch_exec(const char *path, char *const argv[], char *const envp[],
		const struct launch_opts *opts, launch_report_fn report, void *arg,
		struct launch_result *res);

/* Short name of a stage, for messages. */
const char *launch_stage_str(enum launch_stage stage);

#ifdef CETCTL_FAULT_HOOKS
#include <stdio.h>
/* The test build's fault points of @method ("ptrace", "glibc", or all when
 * NULL, "" or "all"), one name a line, in start-up order; -EINVAL for an
 * unknown method. */
int launch_fault_list(FILE *out, const char *method);
#endif

#endif
