// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cet-abi.h"
#include "proc-cet.h"
#include "util.h"

static bool gone(int rc)
{
	return rc == -ENOENT || rc == -ESRCH;
}

static bool lines_equal(const struct cet_feature_line *a, const struct cet_feature_line *b)
{
	return a->present == b->present && a->bits == b->bits &&
	       strcmp(a->unknown, b->unknown) == 0;
}

static void read_threads(int dfd, struct proc_cet *pc)
{
	pid_t *tids = NULL;
	int n, i;

	n = proc_tasks_list_at(dfd, &tids);
	if (n < 0) {
		pc->threads_errno = -n;
		if (gone(n))
			pc->vanished = true;
		return;
	}
	pc->threads = calloc((size_t)(n ? n : 1), sizeof(*pc->threads));
	if (!pc->threads) {
		free(tids);
		pc->threads_errno = ENOMEM;
		return;
	}
	for (i = 0; i < n; i++) {
		struct thread_cet *t = &pc->threads[pc->nthreads];
		struct proc_status ts;
		int rc = proc_status_read_at(dfd, tids[i], &ts);

		if (rc) {
			/* A thread that exits under us is normal, not an error. */
			if (!gone(rc))
				pc->threads_errno = -rc;
			continue;
		}
		t->tid = tids[i];
		snprintf(t->comm, sizeof(t->comm), "%s", ts.name);
		t->features = ts.features;
		t->locked = ts.locked;
		if (ts.features.bits & CET_FEAT_SHSTK)
			pc->threads_shstk++;
		if (!lines_equal(&ts.features, &pc->st.features) ||
		    !lines_equal(&ts.locked, &pc->st.locked))
			pc->threads_differ++;
		pc->nthreads++;
	}
	free(tids);
}

static void read_objects(int dfd, struct proc_cet *pc, cet_marking_fn mark, void *mark_ctx)
{
	size_t i;
	int rc;

	rc = proc_maps_read_objects_at(dfd, &pc->objs);
	if (rc) {
		pc->objs_errno = -rc;
		if (gone(rc))
			pc->vanished = true;
		return;
	}
	pc->obj_marking = calloc(pc->objs.n ? pc->objs.n : 1, sizeof(int));
	if (!pc->obj_marking) {
		pc->objs_errno = ENOMEM;
		return;
	}
	for (i = 0; i < pc->objs.n; i++) {
		char inroot[PATH_MAX];
		int m = -ENOTSUP;

		/* The path is in the process's mount namespace: look through
		 * its root first (containers), then at the path itself (a
		 * recorded tree has no root link). */
		if (mark) {
			m = -ENOENT;
			if (snprintf(inroot, sizeof(inroot), "root%s", pc->objs.path[i]) <
			    (int)sizeof(inroot))
				m = mark(dfd, inroot, mark_ctx);
			if (m == -ENOENT || m == -EACCES || m == -ENOTDIR)
				m = mark(AT_FDCWD, pc->objs.path[i], mark_ctx);
		}

		pc->obj_marking[i] = m;
		if (m >= 0 && !(m & (int)CET_X86_FEATURE_1_SHSTK)) {
			if (!pc->objs_unmarked)
				pc->first_unmarked = pc->objs.path[i];
			pc->objs_unmarked++;
		}
	}
}

static void read_exe(int dfd, unsigned int what, cet_marking_fn mark, void *mark_ctx,
		     struct proc_cet *pc)
{
	int rc;

	if (what & PROC_CET_EXE) {
		rc = proc_exe_read_at(dfd, pc->exe, sizeof(pc->exe));
		if (rc < 0) {
			pc->exe[0] = '\0';
			pc->exe_errno = -rc;
			pc->exe_marking = rc;
			if (gone(rc))
				pc->vanished = true;
			return;
		}
	}
	if (!mark)
		return;
	rc = mark(dfd, "exe", mark_ctx);
	pc->exe_marking = rc;
	/*
	 * Without the readlink above, this stat is what tells an exiting
	 * process (its exe link is gone) from a link to a file that is not
	 * here (a recorded tree): only the first has no link to read.
	 */
	if (!(what & PROC_CET_EXE) && gone(rc)) {
		char link[8];

		pc->exe_errno = -rc;
		if (readlinkat(dfd, "exe", link, sizeof(link)) < 0 && gone(-errno))
			pc->vanished = true;
	} else if (!(what & PROC_CET_EXE) && rc == -EACCES) {
		pc->exe_errno = EACCES;
	}
}

/*
 * Everything is read through @dfd, the process's directory opened once:
 * on procfs it keeps naming the same process, so when the process exits
 * and its pid is reused mid-read the reads fail instead of mixing two
 * processes.
 */
static int read_once(int dfd, pid_t pid, unsigned int what, bool ss_is_x86,
		     cet_marking_fn mark, void *mark_ctx, struct proc_cet *pc, bool *again)
{
	bool on;
	int rc;

	memset(pc, 0, sizeof(*pc));
	pc->pid = pid;
	pc->exe_marking = -ENOTSUP;
	pc->ss_is_x86_shstk = ss_is_x86;

	rc = proc_status_read_at(dfd, 0, &pc->st);
	if (rc)
		return rc;
	pc->zombie = pc->st.state == 'Z' || pc->st.state == 'X';
	pc->kthread = !pc->zombie && proc_is_kthread_at(dfd, &pc->st);
	if (pc->zombie || pc->kthread)
		return 0;

	if ((what & PROC_CET_THREADS) ||
	    ((what & PROC_CET_THREADS_IF_MANY) && pc->st.threads > 1))
		read_threads(dfd, pc);

	on = (pc->st.features.bits || pc->st.features.unknown[0] || pc->threads_shstk);
	if ((what & PROC_CET_VMAS) || ((what & PROC_CET_VMAS_IF_ON) && on)) {
		if (ss_is_x86) {
			rc = proc_smaps_read_ss_at(dfd, &pc->vmas);
			if (rc) {
				pc->vmas_errno = -rc;
				if (gone(rc))
					pc->vanished = true;
			} else {
				pc->vmas_read = true;
			}
		}
	}

	if (what & (PROC_CET_EXE | PROC_CET_EXE_MARKING))
		read_exe(dfd, what, mark, mark_ctx, pc);

	if (what & PROC_CET_OBJECTS)
		read_objects(dfd, pc, mark, mark_ctx);

	/*
	 * Lost a file we had just seen: was it the whole process? stat's state
	 * is read fresh (gone, or Z/X: it exited). An exiting task drops its
	 * memory before it turns zombie, so a user process whose status has
	 * no Vm lines any more is exiting too.
	 */
	if (pc->vanished) {
		char state = proc_stat_state_at(dfd);
		struct proc_status st_now;

		if (state == 'Z' || state == 'X') {
			pc->zombie = true;
		} else if (state && proc_status_read_at(dfd, 0, &st_now) == 0 && st_now.has_vm) {
			/* Alive with memory: it exec'd while we read (the old
			 * mm went away under an open file). Read it again. */
			pc->vanished = false;
			*again = true;
		}
	}
	return 0;
}

int proc_cet_read(const char *root, pid_t pid, unsigned int what, bool ss_is_x86,
		  cet_marking_fn mark, void *mark_ctx, struct proc_cet *pc)
{
	int attempt, dfd, rc = 0;

	dfd = cet_proc_pid_open(root, pid);
	if (dfd < 0) {
		memset(pc, 0, sizeof(*pc));
		pc->pid = pid;
		return dfd == -ENOTDIR ? -ENOENT : dfd;
	}
	for (attempt = 0; attempt < 3; attempt++) {
		bool again = false;

		rc = read_once(dfd, pid, what, ss_is_x86, mark, mark_ctx, pc, &again);
		if (rc || !again || attempt == 2)
			break;
		proc_cet_free(pc);
	}
	close(dfd);
	return rc;
}

void proc_cet_free(struct proc_cet *pc)
{
	free(pc->threads);
	pc->threads = NULL;
	shstk_vmas_free(&pc->vmas);
	proc_objects_free(&pc->objs);
	free(pc->obj_marking);
	pc->obj_marking = NULL;
}

const char *cet_marking_str(int marking, char *buf, size_t size)
{
	if (marking < 0) {
		snprintf(buf, size, "?");
		return buf;
	}
	buf[0] = '\0';
	snprintf(buf, size, "%s%s%s%s",
		 (marking & CET_X86_FEATURE_1_SHSTK) ? "shstk," : "",
		 (marking & CET_X86_FEATURE_1_IBT) ? "ibt," : "",
		 (marking & CET_X86_FEATURE_1_LAM_U48) ? "lam_u48," : "",
		 (marking & CET_X86_FEATURE_1_LAM_U57) ? "lam_u57," : "");
	if (buf[0])
		buf[strlen(buf) - 1] = '\0';
	else
		snprintf(buf, size, "none");
	return buf;
}

const char *proc_cet_verdict(const struct proc_cet *pc, char *buf, size_t size)
{
	const struct proc_status *st = &pc->st;
	bool shstk = st->features.bits & CET_FEAT_SHSTK;
	bool locked = st->locked.bits & CET_FEAT_SHSTK;
	bool wrss = st->features.bits & CET_FEAT_WRSS;
	const char *wrss_note = wrss ? "; WRSS on: the process can write its own shadow stack" : "";

	if (pc->zombie) {
		snprintf(buf, size, "zombie: exited, not yet reaped by its parent");
	} else if (pc->kthread) {
		snprintf(buf, size, "kernel thread: no user space, no user shadow stack");
	} else if (!st->features.present) {
		snprintf(buf, size, "kernel has no shadow-stack support (no x86_Thread_features line)");
	} else if (pc->vanished) {
		snprintf(buf, size, "exited while being read");
	} else if (pc->nthreads > 1 && pc->threads_shstk && pc->threads_shstk < pc->nthreads) {
		snprintf(buf, size, "mixed: %zu of %zu threads run with a shadow stack",
			 pc->threads_shstk, pc->nthreads);
	} else if (shstk && pc->vmas_read && pc->ss_is_x86_shstk && pc->vmas.n == 0) {
		snprintf(buf, size, "enabled%s, but no shadow-stack VMA found in smaps%s",
			 locked ? " and locked" : "", wrss_note);
	} else if (shstk && locked) {
		snprintf(buf, size, "enabled and locked%s", wrss_note);
	} else if (shstk) {
		snprintf(buf, size, "enabled, not locked: the process can turn it off%s", wrss_note);
	} else if (locked) {
		snprintf(buf, size, "not enabled, and locked off: it cannot be enabled any more");
	} else if (pc->why.reason != WHY_OFF_NONE) {
		char why[PATH_MAX + 256];

		snprintf(buf, size, "not enabled: %s", why_off_sentence(&pc->why, why, sizeof(why)));
	} else if (pc->exe_marking >= 0 && (pc->exe_marking & (int)CET_X86_FEATURE_1_SHSTK)) {
		if (pc->objs_unmarked)
			snprintf(buf, size, "marked but not enabled: %s is not marked, so the loader does not enable it",
				 pc->first_unmarked);
		else
			snprintf(buf, size, "marked but not enabled: the loader did not enable it");
	} else if (pc->exe_marking >= 0) {
		snprintf(buf, size, "not enabled: the executable is not marked");
	} else {
		snprintf(buf, size, "not enabled");
	}
	return buf;
}
