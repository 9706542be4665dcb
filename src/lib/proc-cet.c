// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

static void read_threads(const char *root, struct proc_cet *pc)
{
	pid_t *tids = NULL;
	int n, i;

	n = proc_tasks_list(root, pc->pid, &tids);
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
		int rc = proc_status_read(root, pc->pid, tids[i], &ts);

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

static void read_objects(const char *root, struct proc_cet *pc,
			 cet_marking_fn mark, void *mark_ctx)
{
	size_t i;
	int rc;

	rc = proc_maps_read_objects(root, pc->pid, &pc->objs);
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
			if (!cet_proc_path(inroot, sizeof(inroot), root, "%d/root%s",
					   (int)pc->pid, pc->objs.path[i]))
				m = mark(inroot, mark_ctx);
			if (m == -ENOENT || m == -EACCES || m == -ENOTDIR)
				m = mark(pc->objs.path[i], mark_ctx);
		}

		pc->obj_marking[i] = m;
		if (m >= 0 && !(m & (int)CET_X86_FEATURE_1_SHSTK)) {
			if (!pc->objs_unmarked)
				pc->first_unmarked = pc->objs.path[i];
			pc->objs_unmarked++;
		}
	}
}

/*
 * Which process <root>/<pid> is now: procfs gives every process's
 * directory a fresh inode number, so a pid that changed hands while we
 * read it shows as another inode. (stat field 22, the start time, says the
 * same but costs an open and a read.) 0 when it cannot be stat'ed.
 */
static ino_t pid_dir_ino(const char *root, pid_t pid)
{
	char path[PATH_MAX];
	struct stat st;

	if (cet_proc_path(path, sizeof(path), root, "%d", (int)pid) || stat(path, &st) != 0)
		return 0;
	return st.st_ino;
}

static int read_once(const char *root, pid_t pid, unsigned int what, bool ss_is_x86,
		     cet_marking_fn mark, void *mark_ctx, struct proc_cet *pc, bool *again)
{
	ino_t start, now;
	bool on;
	int rc;

	memset(pc, 0, sizeof(*pc));
	pc->pid = pid;
	pc->exe_marking = -ENOTSUP;
	pc->ss_is_x86_shstk = ss_is_x86;

	start = pid_dir_ino(root, pid);
	rc = proc_status_read(root, pid, 0, &pc->st);
	if (rc)
		return rc;
	pc->zombie = pc->st.state == 'Z' || pc->st.state == 'X';
	pc->kthread = !pc->zombie && proc_is_kthread(root, pid, &pc->st);
	if (pc->zombie || pc->kthread)
		return 0;

	if ((what & PROC_CET_THREADS) ||
	    ((what & PROC_CET_THREADS_IF_MANY) && pc->st.threads > 1))
		read_threads(root, pc);

	on = (pc->st.features.bits || pc->st.features.unknown[0] || pc->threads_shstk);
	if ((what & PROC_CET_VMAS) || ((what & PROC_CET_VMAS_IF_ON) && on)) {
		if (ss_is_x86) {
			rc = proc_smaps_read_ss(root, pid, &pc->vmas);
			if (rc) {
				pc->vmas_errno = -rc;
				if (gone(rc))
					pc->vanished = true;
			} else {
				pc->vmas_read = true;
			}
		}
	}

	if (what & PROC_CET_EXE) {
		char path[PATH_MAX];

		rc = proc_exe_read(root, pid, pc->exe, sizeof(pc->exe));
		if (rc < 0) {
			pc->exe[0] = '\0';
			pc->exe_errno = -rc;
			pc->exe_marking = rc;
			if (gone(rc))
				pc->vanished = true;
		} else if (mark && !cet_proc_path(path, sizeof(path), root, "%d/exe", (int)pid)) {
			/* Not a sign of exit: readlink above would have said so;
			 * a recorded tree's exe may point to a file not here. */
			pc->exe_marking = mark(path, mark_ctx);
		}
	}

	if (what & PROC_CET_OBJECTS)
		read_objects(root, pc, mark, mark_ctx);

	/* The pid now names another process (it exited, the pid was reused):
	 * what we read may mix the two. Read it again. */
	now = pid_dir_ino(root, pid);
	if (start && now && now != start) {
		*again = true;
		return 0;
	}

	/*
	 * Lost a file we had just seen: was it the whole process? stat's state
	 * is read fresh (gone, or Z/X: it exited). An exiting task drops its
	 * memory before it turns zombie, so a user process whose status has
	 * no Vm lines any more is exiting too.
	 */
	if (pc->vanished) {
		char state = proc_stat_state(root, pid);
		struct proc_status st_now;

		if (state == 'Z' || state == 'X') {
			pc->zombie = true;
		} else if (state && proc_status_read(root, pid, 0, &st_now) == 0 && st_now.has_vm) {
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
	int attempt, rc = 0;

	for (attempt = 0; attempt < 3; attempt++) {
		bool again = false;

		rc = read_once(root, pid, what, ss_is_x86, mark, mark_ctx, pc, &again);
		if (rc || !again || attempt == 2)
			break;
		proc_cet_free(pc);
	}
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
