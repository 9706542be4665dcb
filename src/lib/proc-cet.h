/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Everything cetctl status/audit know about one process: per-thread
 * feature lines, shadow-stack VMAs, the executable and loaded objects with
 * their ELF marking, and a one-line verdict that explains the combination.
 * The ELF marking comes from a callback so this file needs no ELF parser.
 * Returns 0 or -errno; never prints.
 */
#ifndef CETCTL_PROC_CET_H
#define CETCTL_PROC_CET_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "proc-maps.h"
#include "proc-status.h"
#include "why-off.h"

/*
 * Marking of one ELF file: CET_X86_FEATURE_1_* bits (cet-abi.h) as the
 * loader would judge them, or -errno (-ENOTSUP: no ELF library, -ENOEXEC:
 * not ELF). @path is relative to @dirfd (or AT_FDCWD) and openable: an
 * "exe" link under a process directory works.
 */
typedef int (*cet_marking_fn)(int dirfd, const char *path, void *ctx);

struct thread_cet {
	pid_t tid;
	char comm[64];
	struct cet_feature_line features;
	struct cet_feature_line locked;
};

/* What to read besides the process status. */
#define PROC_CET_THREADS	(1U << 0)	/* task/<tid>/status for each thread */
#define PROC_CET_THREADS_IF_MANY (1U << 1)	/* ...only when Threads: > 1 */
#define PROC_CET_VMAS		(1U << 2)	/* smaps */
#define PROC_CET_VMAS_IF_ON	(1U << 3)	/* smaps only when a feature is on */
#define PROC_CET_EXE		(1U << 4)	/* exe link + marking */
#define PROC_CET_EXE_MARKING	(1U << 6)	/* marking of exe, not its path */
#define PROC_CET_OBJECTS	(1U << 5)	/* maps + marking of each object */

struct proc_cet {
	pid_t pid;
	struct proc_status st;		/* the process (thread-group leader) */
	bool kthread;
	bool zombie;
	bool vanished;			/* exited while we were reading it */

	struct thread_cet *threads;
	size_t nthreads;
	int threads_errno;
	size_t threads_shstk;		/* threads with shstk enabled */
	size_t threads_differ;		/* threads whose lines differ from the leader's */

	bool vmas_read;
	bool ss_is_x86_shstk;		/* "ss" was taken as x86 shadow stack */
	struct shstk_vmas vmas;
	int vmas_errno;

	char exe[PATH_MAX];		/* readlink of exe, "" when unknown */
	int exe_errno;
	int exe_marking;		/* bits, or -errno */

	struct proc_objects objs;
	int *obj_marking;		/* per objs.path[i]: bits or -errno */
	int objs_errno;
	size_t objs_unmarked;		/* objects known to lack the SHSTK bit */
	const char *first_unmarked;	/* points into objs */

	/* why it runs without a shadow stack (proc-why.h); NONE: not judged */
	struct why_off why;
	char why_object[PATH_MAX];	/* why.object points here */
};

/*
 * Read process @pid. Returns -ENOENT/-ESRCH when it does not exist (any
 * more), -EACCES when even its status is unreadable, 0 otherwise; problems
 * with the other files are recorded in the *_errno fields, a process that
 * disappears half way sets @vanished. @ss_is_x86 comes from
 * cet_ss_is_x86_shstk(). @mark may be NULL (marking unknown).
 */
int proc_cet_read(const char *root, pid_t pid, unsigned int what, bool ss_is_x86,
		  cet_marking_fn mark, void *mark_ctx, struct proc_cet *pc);
void proc_cet_free(struct proc_cet *pc);

/* One line explaining the state of the process. Returns @buf. */
const char *proc_cet_verdict(const struct proc_cet *pc, char *buf, size_t size);

/* The marking as words: "shstk,ibt", "none", "?" (unknown) ... Returns @buf. */
const char *cet_marking_str(int marking, char *buf, size_t size);

#endif
