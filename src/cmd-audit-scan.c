// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The scan of `cetctl audit`: each process selected is read (status
 * first, the costlier reads only when they matter), counted, judged
 * against --require and shown as a row; kernel threads, zombies and
 * processes gone meanwhile are counted apart, and what the scan could not
 * see or read is said on stderr (audit_report_gaps()).
 */
#include <err.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cetctl.h"
#include "table.h"
#include "audit-policy.h"
#include "proc-cells.h"
#include "proc-cet.h"
#include "proc-marking.h"
#include "proc-why.h"
#include "cmd-audit-internal.h"

static void add_row(struct cetctl_table *t, const struct proc_cet *pc, bool json,
		    const char *root)
{
	struct cetctl_line *ln = cetctl_table_new_line(t, NULL);
	char buf[512];
	unsigned long size = 0;
	size_t i;

	if (!ln)
		err(CETCTL_EXIT_FAILURE, "failed to allocate output line");
	cetctl_table_setf(t, ln, COL_PID, "%d", (int)pc->pid);
	cetctl_table_setf(t, ln, COL_PPID, "%d", (int)pc->st.ppid);
	/* Only when shown: NSS lookups may longjmp (see cmd-status.c). */
	if (cetctl_table_has(t, COL_USER))
		cetctl_table_set(t, ln, COL_USER, proc_user_name(pc->st.euid, buf, sizeof(buf)));
	cetctl_table_set(t, ln, COL_COMM, pc->st.name);
	cetctl_table_set(t, ln, COL_EXE, pc->exe[0] ? pc->exe : NULL);
	cetctl_table_setf(t, ln, COL_THREADS, "%d", pc->st.threads);
	cetctl_set_feature_words(t, ln, COL_FEATURES, &pc->st.features);
	cetctl_set_feature_words(t, ln, COL_LOCKED, &pc->st.locked);
	cetctl_set_feature_bool(t, ln, COL_SHSTK, &pc->st.features, CET_FEAT_SHSTK);
	cetctl_set_feature_bool(t, ln, COL_WRSS, &pc->st.features, CET_FEAT_WRSS);
	cetctl_set_feature_bool(t, ln, COL_SHSTK_LOCKED, &pc->st.locked, CET_FEAT_SHSTK);
	cetctl_set_feature_bool(t, ln, COL_WRSS_LOCKED, &pc->st.locked, CET_FEAT_WRSS);
	cetctl_table_setf(t, ln, COL_DIFFER, "%zu", pc->threads_differ);
	if (pc->vmas_read) {
		for (i = 0; i < pc->vmas.n; i++)
			size += pc->vmas.v[i].size_kb;
		/* status's array in JSON, so the member has one shape */
		cetctl_set_ss_vmas(t, ln, COL_SS_VMAS, &pc->vmas);
		cetctl_table_setf(t, ln, COL_SS_SIZE, "%lu", size);
	}
	/* unknown marking: "?" in the table, null in JSON */
	cetctl_table_set_list(t, ln, COL_MARKING, json && pc->exe_marking < 0 ? NULL :
			      cet_marking_str(pc->exe_marking, buf, sizeof(buf)), ",", "none");
	cetctl_table_set(t, ln, COL_VERDICT, proc_cet_verdict(pc, buf, sizeof(buf)));
	cetctl_set_why_off(t, ln, COL_WHY_OFF, COL_WHY_OBJECT, &pc->why);
	/* Only when shown: one more file per process. */
	if (cetctl_table_has(t, COL_UNIT))
		cetctl_table_set(t, ln, COL_UNIT, proc_unit_read(root, pc->pid, buf, sizeof(buf)) == 0 &&
				 buf[0] ? buf : NULL);
}

static void count(struct audit_counts *c, const struct proc_cet *pc)
{
	unsigned int f = pc->st.features.bits, l = pc->st.locked.bits;

	c->scanned++;
	if (!pc->st.features.present)
		c->no_kernel_support++;
	if (pc->nthreads > 1 && pc->threads_shstk && pc->threads_shstk < pc->nthreads)
		c->mixed++;
	else if ((f & CET_FEAT_SHSTK) && (l & CET_FEAT_SHSTK))
		c->enabled_locked++;
	else if (f & CET_FEAT_SHSTK)
		c->enabled_unlocked++;
	else
		c->disabled++;
	if (f & CET_FEAT_WRSS)
		c->wrss++;
}

static bool denied(int e)
{
	return e == EACCES || e == EPERM;
}

/* Count a process read only in part; remember the first reason. */
static void count_partial(struct audit_counts *c, const struct proc_cet *pc)
{
	const char *what = NULL;
	int e = 0;

	if (denied(pc->exe_errno)) {
		what = "its executable";
		e = pc->exe_errno;
	} else if (denied(pc->vmas_errno)) {
		what = "its smaps";
		e = pc->vmas_errno;
	} else if (denied(pc->threads_errno)) {
		what = "its threads";
		e = pc->threads_errno;
	}
	if (!what)
		return;
	if (!c->partial++) {
		c->partial_errno = e;
		c->partial_what = what;
	}
}

/*
 * Say on stderr what the audit could not see or read, so a partial audit
 * (a user without ptrace access to other users' processes, /proc with
 * hidepid=) is never mistaken for a full one.
 */
void audit_report_gaps(const struct audit_counts *c, const char *root)
{
	const char *hint = geteuid() ? "; run it as root for a full audit" : "";

	if (c->hidepid[0])
		warnx("audit: %s is mounted with hidepid=%s: other users' processes are hidden "
		      "from this user (or unreadable) and not counted%s", root ? root : "/proc",
		      c->hidepid, hint);
	if (c->unreadable)
		warnx("audit: %lu process%s could not be read: %s%s", c->unreadable,
		      c->unreadable == 1 ? "" : "es", strerror(c->unreadable_errno),
		      denied(c->unreadable_errno) ? hint : "");
	if (c->partial)
		warnx("audit: %lu of %lu process%s could be read only in part (%s, the first of "
		      "them: %s): their MARKING, EXE or SS-* columns are unknown%s", c->partial,
		      c->scanned, c->scanned == 1 ? "" : "es", c->partial_what,
		      strerror(c->partial_errno), hint);
}

static bool offends(const struct proc_cet *pc, unsigned int req, bool req_locked)
{
	size_t i;

	if ((pc->st.features.bits & req) != req)
		return true;
	if (req_locked && (pc->st.locked.bits & req) != req)
		return true;
	/* Every thread must meet it, not only the leader. */
	for (i = 0; i < pc->nthreads; i++) {
		if ((pc->threads[i].features.bits & req) != req)
			return true;
		if (req_locked && (pc->threads[i].locked.bits & req) != req)
			return true;
	}
	return false;
}

/* A process that is no user process: a --pid named on purpose is reported. */
static void count_skipped(struct audit_scan *s, const struct proc_cet *pc)
{
	if (s->o->filter.npids && !pc->vanished) {
		warnx("audit: %d: %s, not checked", (int)pc->pid,
		      pc->kthread ? "kernel thread" : "zombie");
		cetctl_table_error(s->t, NULL, pc->pid, 0, "%s, not checked",
				   pc->kthread ? "kernel thread" : "zombie");
		s->counts.pids_unchecked++;
	}
	if (pc->kthread)
		s->counts.kthreads++;
	else if (pc->zombie)
		s->counts.zombies++;
	else
		s->counts.vanished++;
}

/* Count a user process, judge it against --require, show it. */
static void judge(struct audit_scan *s, const struct proc_cet *pc)
{
	const struct audit_opts *o = s->o;
	struct audit_counts *c = &s->counts;

	count(c, pc);
	count_partial(c, pc);
	if (pc->st.features.present && c->kernel_support == CET_UNKNOWN)
		c->kernel_support = CET_YES;
	if (!o->require) {
		add_row(s->t, pc, o->oa.topts.json, s->root);
		return;
	}
	c->checked++;
	if (offends(pc, o->req_bits, o->req_locked)) {
		c->offenders++;
		add_row(s->t, pc, o->oa.topts.json, s->root);
	} else if (pc->threads_errno && pc->threads_errno != ENOENT &&
		   pc->threads_errno != ESRCH) {
		/* its leader meets it, some thread was not read */
		c->unjudged++;
	}
}

/* Filter on status alone before the costlier reads: false to skip @pid. */
static bool status_wanted(const struct audit_scan *s, pid_t pid)
{
	const struct audit_filter *f = &s->o->filter;
	struct proc_status st;
	char unit[256];

	/*
	 * A cgroup that cannot be read (the process is gone, or a recorded
	 * tree lacks it) names no unit: not selected. A --require over units
	 * whose every process is like that checked nothing and fails (3).
	 */
	if (f->unit && (proc_unit_read(s->root, pid, unit, sizeof(unit)) != 0 ||
			!audit_unit_matches(f->unit, unit)))
		return false;
	if (!f->by_user && !f->comm)
		return true;
	if (proc_status_read(s->root, pid, 0, &st) != 0)
		return true;	/* proc_cet_read() says what went wrong */
	return !((f->by_user && st.euid != f->uid) ||
		 (f->comm && !f->comm_long && !audit_comm_matches(f->comm, st.name, NULL)));
}

/* Whether the output needs WHY-OFF's judgement (the verdict says it too). */
bool audit_why_wanted(const struct cetctl_table *t)
{
	return cetctl_table_has(t, COL_VERDICT) || cetctl_table_has(t, COL_WHY_OFF) ||
	       cetctl_table_has(t, COL_WHY_OBJECT);
}

static void audit_one(struct audit_scan *s, pid_t pid)
{
	const struct audit_filter *f = &s->o->filter;
	unsigned int what = PROC_CET_THREADS_IF_MANY | PROC_CET_VMAS_IF_ON |
			    (cetctl_table_has(s->t, COL_EXE) || f->comm_long ?
			     PROC_CET_EXE : PROC_CET_EXE_MARKING);
	struct proc_cet pc;
	int rc;

	if (!audit_want_pid(f, pid) || !status_wanted(s, pid))
		return;
	rc = proc_cet_read(s->root, pid, what, s->ss_is_x86, cet_marking_of, s->cache, &pc);
	if (rc == -ENOENT || rc == -ESRCH) {
		s->counts.vanished++;
		return;
	}
	if (rc) {
		if (!s->counts.unreadable++)
			s->counts.unreadable_errno = -rc;
		cetctl_table_error(s->t, NULL, pid, -rc, "cannot read its status: %s",
				   strerror(-rc));
		return;
	}
	if ((f->by_user && pc.st.euid != f->uid) ||
	    (f->comm && !audit_comm_matches(f->comm, pc.st.name, pc.exe)))
		;	/* not selected after all */
	else if (pc.kthread || pc.zombie || pc.vanished)
		count_skipped(s, &pc);
	else {
		if (audit_why_wanted(s->t))
			proc_why_off_read(s->root, &pc, &s->why_sys, s->cache);
		judge(s, &pc);
	}
	proc_cet_free(&pc);
}

/* The scan loop: the --pid entries that do not exist, then every process. */
void audit_execute(struct audit_scan *s)
{
	const struct audit_filter *f = &s->o->filter;

	for (size_t i = 0; i < f->npids; i++) {
		if (!bsearch(&f->pids[i], s->pids, s->npids, sizeof(pid_t), audit_cmp_pid)) {
			warnx("audit: %d: no such process", (int)f->pids[i]);
			cetctl_table_error(s->t, NULL, f->pids[i], ESRCH, "no such process");
			s->counts.pids_unchecked++;
		}
	}
	for (size_t k = 0; k < s->npids; k++)
		audit_one(s, s->pids[k]);
	if (s->counts.kernel_support == CET_UNKNOWN && s->counts.scanned &&
	    s->counts.no_kernel_support == s->counts.scanned)
		s->counts.kernel_support = CET_NO;
}
