/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Start a program with shadow-stack features enabled from its first
 * instruction: the exec-stop injection of DESIGN.md "cetctl run".
 *
 * The kernel resets the features at exec and lets only the task itself
 * ENABLE them, so the child is traced across execve and, at the
 * syscall-exit stop of execve (rip = the entry point, no frames yet), made
 * to execute arch_prctl(ARCH_SHSTK_ENABLE, ...) through a `syscall`
 * instruction poked over the entry point and driven with PTRACE_SYSCALL
 * stops (never single-stepping: emulated CET delivers that trap in kernel
 * mode). The tracer then locks the features with PTRACE_ARCH_PRCTL,
 * restores text and registers, checks /proc/PID/status while the child is
 * still stopped, and detaches, handing back signals that arrived meanwhile.
 *
 * Library code: returns -errno and fills a result, never prints or exits.
 */
#ifndef CETCTL_INJECT_H
#define CETCTL_INJECT_H

#include <stdbool.h>
#include <sys/types.h>

struct inject_opts {
	/* ARCH_SHSTK_SHSTK, optionally | ARCH_SHSTK_WRSS. 0: trace-only, inject a
	 * getpid() instead, enable and verify nothing (tests the machinery on
	 * machines without shadow stacks). */
	unsigned long enable;
	unsigned long lock;	/* features to lock (PTRACE_ARCH_PRCTL), 0: none */
	const char *proc_root;	/* where to verify (NULL: /proc) */
	/* If set, receives the child's pid right after fork (in the parent),
	 * so a signal handler can forward signals during start-up. */
	volatile int *child_pid;
};

/* Where the start-up stopped when it failed. */
enum inject_stage {
	INJ_OK = 0,
	INJ_SPAWN,		/* pipe/fork failed in cetctl */
	INJ_EXEC,		/* execve failed in the child (err = -errno of execve) */
	INJ_DIED,		/* the child died before it was running (wstatus) */
	INJ_TRACE,		/* a ptrace/wait operation failed (err, what) */
	INJ_NOT64,		/* the exec'd image is not 64-bit */
	INJ_ENABLE_SHSTK,	/* arch_prctl(ENABLE, SHSTK) in the child failed (err) */
	INJ_ENABLE_WRSS,	/* arch_prctl(ENABLE, WRSS) failed (err) */
	INJ_LOCK,		/* PTRACE_ARCH_PRCTL(LOCK) failed (err) */
	INJ_VERIFY,		/* /proc does not show what was asked (got) */
};

struct inject_result {
	enum inject_stage stage;
	int err;		/* -errno of the failing step */
	const char *what;	/* the failing ptrace operation, for INJ_TRACE */
	int wstatus;		/* for INJ_DIED: the wait status */
	bool status_lines;	/* INJ_VERIFY: the x86_Thread_features lines exist */
	unsigned long got_enabled, got_locked;	/* INJ_VERIFY: what /proc said */
	unsigned long entry;	/* the entry point the call was injected at */
	int signals_forwarded;	/* signals that arrived during start-up */
};

/*
 * Fork, trace and exec @path (argv/envp as given; cwd, fds, process group
 * and terminal are inherited untouched). On success the child runs
 * untraced with the features enabled and locked; returns its pid. On
 * failure the child is killed and reaped (unless it already died), the
 * result says where and why, and -1 is returned.
 */
pid_t inject_spawn(const char *path, char *const argv[], char *const envp[],
		   const struct inject_opts *opts, struct inject_result *res);

/* Short name of a stage, for messages. */
const char *inject_stage_str(enum inject_stage stage);

#endif
