// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cetctl status <pid>...|self - the runtime truth next to the marking: the
 * kernel's per-thread feature lines, the shadow-stack VMAs, the marking of
 * the executable and of every loaded object, and a verdict that explains
 * the combination.
 */
#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cetctl.h"
#include "table.h"
#include "proc-cells.h"
#include "proc-cet.h"
#include "proc-marking.h"
#include "proc-why.h"
#include "sysinfo-cet.h"
#include "cet-abi.h"
#include "util.h"
#include "ptrace-ssp.h"

enum {
	COL_PID, COL_TID, COL_USER, COL_COMM, COL_EXE, COL_THREADS,
	COL_FEATURES, COL_LOCKED, COL_SHSTK, COL_WRSS, COL_SHSTK_LOCKED,
	COL_SS_VMAS, COL_SS_SIZE, COL_SS_RSS, COL_MARKING, COL_OBJECTS,
	COL_UNMARKED, COL_VERDICT, COL_SSP, COL_WHY_OFF, COL_WHY_OBJECT,
};

static const struct cetctl_column status_columns[] = {
	[COL_PID]      = { "PID", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, "process id" },
	[COL_TID]      = { "TID", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, "thread id (thread lines only)", CETCTL_JSON_CHILD_ONLY },
	[COL_USER]     = { "USER", 8, 0, SCOLS_JSON_STRING, "effective user" },
	[COL_COMM]     = { "COMM", 12, SCOLS_FL_TREE, SCOLS_JSON_STRING, "command name (threads below their process)", CETCTL_JSON_CHILD },
	[COL_EXE]      = { "EXE", 20, SCOLS_FL_TRUNC, SCOLS_JSON_STRING, "executable" },
	[COL_THREADS]  = { "THREADS", 3, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, "number of threads" },
	[COL_FEATURES] = { "FEATURES", 6, 0, SCOLS_JSON_ARRAY_STRING, "x86_Thread_features words (unknown words kept; - no line)", CETCTL_JSON_CHILD },
	[COL_LOCKED]   = { "LOCKED", 6, 0, SCOLS_JSON_ARRAY_STRING, "x86_Thread_features_locked words", CETCTL_JSON_CHILD },
	[COL_SHSTK]    = { "SHSTK", 5, 0, SCOLS_JSON_BOOLEAN_OPTIONAL, "shadow stack enabled", CETCTL_JSON_CHILD },
	[COL_WRSS]     = { "WRSS", 5, 0, SCOLS_JSON_BOOLEAN_OPTIONAL, "WRSS enabled", CETCTL_JSON_CHILD },
	[COL_SHSTK_LOCKED] = { "SHSTK-LOCKED", 5, 0, SCOLS_JSON_BOOLEAN_OPTIONAL, "shadow-stack setting locked", CETCTL_JSON_CHILD },
	[COL_SS_VMAS]  = { "SS-VMAS", 30, SCOLS_FL_WRAP, CETCTL_JSON_VALUE, "shadow-stack mappings: start-end size rss (KiB)", 0, &cetctl_ss_vmas_list },
	[COL_SS_SIZE]  = { "SS-SIZE", 6, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, "total size of shadow-stack mappings (KiB)" },
	[COL_SS_RSS]   = { "SS-RSS", 6, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, "resident shadow-stack memory (KiB)" },
	[COL_MARKING]  = { "MARKING", 9, 0, SCOLS_JSON_ARRAY_STRING, "CET marking of the executable as the loader sees it (? unknown)" },
	[COL_OBJECTS]  = { "OBJECTS", 3, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, "executable objects mapped (exe, loader, libraries)" },
	[COL_UNMARKED] = { "UNMARKED", 20, SCOLS_FL_WRAP, SCOLS_JSON_ARRAY_STRING, "mapped objects not marked for shadow stacks" },
	[COL_VERDICT]  = { "VERDICT", 40, CETCTL_FL_SENTENCE, SCOLS_JSON_STRING, "what the combination means" },
	[COL_SSP]      = { "SSP", 14, SCOLS_FL_RIGHT, SCOLS_JSON_STRING, "shadow-stack pointer, read with ptrace (stops the thread briefly)", CETCTL_JSON_CHILD },
	[COL_WHY_OFF]  = { "WHY-OFF", 12, 0, SCOLS_JSON_STRING, "why it runs without a shadow stack: no-support, glibc-without-cet, tunable-off, unmarked, not-requested, kernel-policy, unknown" },
	[COL_WHY_OBJECT] = { "WHY-OBJECT", 20, SCOLS_FL_TRUNC, SCOLS_JSON_STRING, "the object WHY-OFF names (the first unmarked one in the loader's order, or the glibc loader)" },
};
#define NCOLS (sizeof(status_columns) / sizeof(status_columns[0]))

struct status_ctl {
	struct cetctl_table *t;
	struct cet_marking_cache *cache;
	bool ss_is_x86;
	bool json;
	const char *root;
	struct proc_why_system why_sys;	/* the system's facts for WHY-OFF */
};

static void usage(void)
{
	printf("Usage: cetctl status [options] <pid>|self...\n\n");
	printf("Show the shadow-stack state of running processes: the kernel's per-thread\n"
	       "feature lines, the shadow-stack mappings, the CET marking of the executable\n"
	       "and of every loaded object, and a verdict explaining the combination.\n\n");
	printf("Options:\n");
	cetctl_output_options_help(stdout);
	cetctl_columns_help(stdout, status_columns, NCOLS);
	printf("\nExit status: 0 when every process was read; 1 when a process does not exist,\n"
	       "is a zombie or a kernel thread, exited while being read, or could not be\n"
	       "read fully (permission denied), or on a usage error.\n");
}

/* Lines joined by '\n' for JSON arrays, by ", " for text. */
static void join(char **buf, size_t *len, const char *item, bool json)
{
	size_t il = strlen(item), sep = *len ? (json ? 1 : 2) : 0;
	char *nb = realloc(*buf, *len + sep + il + 1);

	if (!nb)
		return;
	if (sep)
		memcpy(nb + *len, json ? "\n" : ", ", sep);
	memcpy(nb + *len + sep, item, il + 1);
	*buf = nb;
	*len += sep + il;
}

/*
 * The SSP column: read only when shown (it stops the thread for a moment).
 * "-" (null in JSON) when the thread has no active shadow stack or the
 * kernel no such regset; "?" (null) when it cannot be read: returns that
 * -errno for the caller's one warning per process, else 0.
 */
static int set_ssp(struct status_ctl *ctl, struct cetctl_line *ln, pid_t tid)
{
	unsigned long ssp = 0;
	int r;

	if (!cetctl_table_has(ctl->t, COL_SSP) || ctl->root)
		return 0;
	r = ptrace_read_ssp(tid, &ssp);
	if (r == 0) {
		cetctl_table_setf(ctl->t, ln, COL_SSP, "%#lx", ssp);
		return 0;
	}
	cetctl_table_set(ctl->t, ln, COL_SSP, ctl->json ? NULL :
			 (r == -ENODEV || r == -EINVAL || r == -EIO) ? "-" : "?");
	return (r == -ENODEV || r == -EINVAL || r == -EIO) ? 0 : r;
}

static void status_error(struct status_ctl *ctl, pid_t pid, int errnum, const char *msg,
			 const char *hint);

/* The shadow-stack mappings: SS-VMAS, SS-SIZE, SS-RSS. */
static void fill_vmas(struct cetctl_table *t, struct cetctl_line *ln, const struct proc_cet *pc)
{
	unsigned long size = 0, rss = 0;

	if (!pc->vmas_read)
		return;
	for (size_t i = 0; i < pc->vmas.n; i++) {
		size += pc->vmas.v[i].size_kb;
		rss += pc->vmas.v[i].rss_kb;
	}
	cetctl_set_ss_vmas(t, ln, COL_SS_VMAS, &pc->vmas);
	cetctl_table_setf(t, ln, COL_SS_SIZE, "%lu", size);
	cetctl_table_setf(t, ln, COL_SS_RSS, "%lu", rss);
}

/* OBJECTS and UNMARKED: the mapped objects not marked for shadow stacks. */
static void fill_objects(struct status_ctl *ctl, struct cetctl_line *ln, const struct proc_cet *pc)
{
	char *list = NULL;
	size_t len = 0;

	if (pc->objs_errno)
		return;
	cetctl_table_setf(ctl->t, ln, COL_OBJECTS, "%zu", pc->objs.n);
	for (size_t i = 0; i < pc->objs.n; i++) {
		if (pc->obj_marking[i] < 0 ||
		    (pc->obj_marking[i] & (int)CET_X86_FEATURE_1_SHSTK))
			continue;
		join(&list, &len, pc->objs.path[i], ctl->json);
	}
	cetctl_table_set(ctl->t, ln, COL_UNMARKED, list ? list : "");
	free(list);
}

/* The feature cells of a process or a thread line. */
static void fill_features(struct cetctl_table *t, struct cetctl_line *ln,
			  const struct cet_feature_line *features,
			  const struct cet_feature_line *locked)
{
	cetctl_set_feature_words(t, ln, COL_FEATURES, features);
	cetctl_set_feature_words(t, ln, COL_LOCKED, locked);
	cetctl_set_feature_bool(t, ln, COL_SHSTK, features, CET_FEAT_SHSTK);
	cetctl_set_feature_bool(t, ln, COL_WRSS, features, CET_FEAT_WRSS);
	cetctl_set_feature_bool(t, ln, COL_SHSTK_LOCKED, locked, CET_FEAT_SHSTK);
}

/*
 * Threads below their process, when there is more than one; in JSON
 * always, so that every process has the same shape. Counts the SSPs that
 * could not be read in *@fail, the last error in *@ssp_err.
 */
static void fill_threads(struct status_ctl *ctl, struct cetctl_line *ln,
			 const struct proc_cet *pc, int *fail, int *ssp_err)
{
	struct cetctl_table *t = ctl->t;

	if (pc->nthreads <= 1 && !ctl->json)
		return;
	for (size_t i = 0; i < pc->nthreads; i++) {
		const struct thread_cet *th = &pc->threads[i];
		struct cetctl_line *tl = cetctl_table_new_line(t, ln);
		int r;

		if (!tl)
			err(CETCTL_EXIT_FAILURE, "failed to allocate output line");
		cetctl_table_setf(t, tl, COL_TID, "%d", (int)th->tid);
		cetctl_table_set(t, tl, COL_COMM, th->comm);
		fill_features(t, tl, &th->features, &th->locked);
		r = set_ssp(ctl, tl, th->tid);
		if (r) {
			*ssp_err = r;
			(*fail)++;
		}
	}
}

/* false when a shown SSP could not be read (reported once, as an error) */
static bool fill_process(struct status_ctl *ctl, const struct proc_cet *pc)
{
	struct cetctl_table *t = ctl->t;
	struct cetctl_line *ln = cetctl_table_new_line(t, NULL);
	char buf[512], user[64];
	int ssp_err, ssp_fail = 0;

	if (!ln)
		err(CETCTL_EXIT_FAILURE, "failed to allocate output line");
	cetctl_table_setf(t, ln, COL_PID, "%d", (int)pc->pid);
	/* Only when shown: NSS may dlopen modules, and glibc < 2.39 unwinds
	 * a failed dlopen with a longjmp that a shadow stack does not allow
	 * (seen under `cetctl run --shstk -- cetctl status self`). */
	if (cetctl_table_has(t, COL_USER))
		cetctl_table_set(t, ln, COL_USER, proc_user_name(pc->st.euid, user, sizeof(user)));
	cetctl_table_set(t, ln, COL_COMM, pc->st.name);
	cetctl_table_set(t, ln, COL_EXE, pc->exe[0] ? pc->exe : NULL);
	cetctl_table_setf(t, ln, COL_THREADS, "%d", pc->st.threads);
	fill_features(t, ln, &pc->st.features, &pc->st.locked);
	fill_vmas(t, ln, pc);
	/* unknown marking: "?" in the table, null in JSON */
	cetctl_table_set_list(t, ln, COL_MARKING, ctl->json && pc->exe_marking < 0 ? NULL :
			      cet_marking_str(pc->exe_marking, buf, sizeof(buf)), ",", "none");
	fill_objects(ctl, ln, pc);
	cetctl_table_set(t, ln, COL_VERDICT, proc_cet_verdict(pc, buf, sizeof(buf)));
	cetctl_set_why_off(t, ln, COL_WHY_OFF, COL_WHY_OBJECT, &pc->why);
	ssp_err = set_ssp(ctl, ln, pc->pid);
	if (ssp_err)
		ssp_fail++;
	fill_threads(ctl, ln, pc, &ssp_fail, &ssp_err);
	if (ssp_fail) {
		char what[64];

		snprintf(what, sizeof(what), "cannot read the SSP of %d thread(s)", ssp_fail);
		status_error(ctl, pc->pid, -ssp_err, what, NULL);
		return false;
	}
	return true;
}

/* "self" or a pid. Returns the pid or -1 (message printed). */
static pid_t parse_pid_arg(const char *root, const char *arg)
{
	char path[PATH_MAX], link[64];
	char *end;
	long v;
	ssize_t n;

	if (strcmp(arg, "self") == 0) {
		if (!root || !*root)
			return getpid();
		/* A recorded tree says who "self" was with its self link. */
		if (cet_proc_path(path, sizeof(path), root, "self") == 0 &&
		    (n = readlink(path, link, sizeof(link) - 1)) > 0) {
			link[n] = '\0';
			v = strtol(link, &end, 10);
			if (!*end && v > 0)
				return (pid_t)v;
		}
		warnx("status: self: the tree in %s has no usable 'self' link", root);
		return -1;
	}
	errno = 0;
	v = strtol(arg, &end, 10);
	if (!*arg || *end || errno || v <= 0 || v > INT_MAX) {
		warnx("status: invalid process id: '%s'", arg);
		return -1;
	}
	return (pid_t)v;
}

/* The columns that need to know why a process runs without a shadow stack. */
static bool status_why(const struct cetctl_table *t)
{
	return cetctl_table_has(t, COL_VERDICT) || cetctl_table_has(t, COL_WHY_OFF) ||
	       cetctl_table_has(t, COL_WHY_OBJECT);
}

/*
 * What the selected columns need read besides status and the threads:
 * smaps, the exe link and maps are often unreadable for another user's
 * process, and a column list that does not show them must not fail on them.
 * VERDICT needs the marking, the objects and, when a feature is on, smaps.
 */
static unsigned int status_reads(const struct cetctl_table *t)
{
	unsigned int what = PROC_CET_THREADS;

	if (cetctl_table_has(t, COL_SS_VMAS) || cetctl_table_has(t, COL_SS_SIZE) ||
	    cetctl_table_has(t, COL_SS_RSS))
		what |= PROC_CET_VMAS;
	else if (cetctl_table_has(t, COL_VERDICT))
		what |= PROC_CET_VMAS_IF_ON;
	/* the marking opens exe: the link itself tells a process that
	 * exited from a recorded link to a file that is not here */
	if (cetctl_table_has(t, COL_EXE) || cetctl_table_has(t, COL_MARKING) ||
	    status_why(t))
		what |= PROC_CET_EXE;
	if (cetctl_table_has(t, COL_OBJECTS) || cetctl_table_has(t, COL_UNMARKED) ||
	    status_why(t))
		what |= PROC_CET_OBJECTS;
	return what;
}

/* A problem with process @pid: on stderr and in the JSON "errors" array. */
static void status_error(struct status_ctl *ctl, pid_t pid, int errnum, const char *msg,
			 const char *hint)
{
	warnx("status: %d: %s%s%s%s", (int)pid, msg, errnum ? ": " : "",
	      errnum ? strerror(errnum) : "", hint ? hint : "");
	cetctl_table_error(ctl->t, NULL, pid, errnum, "%s%s%s%s", msg, errnum ? ": " : "",
			   errnum ? strerror(errnum) : "", hint ? hint : "");
}

/* Returns true when the process was shown without problems. */
/*
 * What to add to "Permission denied": who could read it. Not to root, who
 * is root already (then ptrace access rules, an LSM or a user namespace
 * refused it, or a recorded tree's file mode).
 */
static const char *denied_hint(int errnum)
{
	if (errnum != EACCES && errnum != EPERM)
		return NULL;
	return geteuid() ? " (needs root or the process's owner)" :
			   " (refused to root too: a dropped capability, ptrace access rules, an LSM or a user namespace)";
}

static bool status_one(struct status_ctl *ctl, pid_t pid)
{
	unsigned int what = status_reads(ctl->t);
	struct proc_cet pc;
	bool ok = true;
	int rc;

	rc = proc_cet_read(ctl->root, pid, what, ctl->ss_is_x86, cet_marking_of, ctl->cache, &pc);
	if (rc == -ENOENT || rc == -ESRCH) {
		warnx("status: %d: no such process", (int)pid);
		cetctl_table_error(ctl->t, NULL, pid, -rc, "no such process");
		return false;
	}
	if (rc) {
		status_error(ctl, pid, -rc, "cannot read its status", NULL);
		return false;
	}
	if (pc.zombie) {
		status_error(ctl, pid, 0, "zombie process: it has exited and not been reaped; nothing to inspect", NULL);
		ok = false;
	} else if (pc.kthread) {
		status_error(ctl, pid, 0, "kernel thread: it has no user space and no shadow stack", NULL);
		ok = false;
	} else if (pc.vanished) {
		status_error(ctl, pid, ESRCH, "process exited while being read", NULL);
		ok = false;
	}
	if (!ok) {
		proc_cet_free(&pc);
		return false;
	}
	/* Partial reads: show what we have, say what is missing, fail. */
	if (pc.vmas_errno) {
		status_error(ctl, pid, pc.vmas_errno, "cannot read smaps", denied_hint(pc.vmas_errno));
		ok = false;
	}
	if (pc.exe_errno) {
		status_error(ctl, pid, pc.exe_errno, "cannot read exe", denied_hint(pc.exe_errno));
		ok = false;
	}
	if (pc.objs_errno) {
		status_error(ctl, pid, pc.objs_errno, "cannot read maps", NULL);
		ok = false;
	}
	if (pc.threads_errno) {
		status_error(ctl, pid, pc.threads_errno, "cannot read its threads", NULL);
		ok = false;
	}
	if (status_why(ctl->t))
		proc_why_off_read(ctl->root, &pc, &ctl->why_sys, ctl->cache);
	if (!fill_process(ctl, &pc))
		ok = false;
	proc_cet_free(&pc);
	return ok;
}

int cmd_status(int argc, char **argv)
{
	int ids[CETCTL_MAX_COLUMNS] = { COL_PID, COL_TID, COL_COMM, COL_FEATURES,
					COL_LOCKED, COL_SS_SIZE, COL_MARKING, COL_VERDICT };
	size_t nids = 8;
	struct cetctl_output_args oa = { .topts.json_name = "processes",
					 .topts.json_children = "tasks", .topts.json_errors = true };
	struct status_ctl ctl = { 0 };
	struct cet_sysinfo si;
	bool have_si;
	bool all_ok = true;
	char machine[64];
	pid_t *pids;
	int c, i, npids = 0;

	c = cetctl_output_parse(argc, argv, &oa, usage, status_columns, NCOLS, ids, &nids,
				"status");
	if (c != CETCTL_OUTPUT_CONTINUE)
		return c;
	if (optind >= argc) {
		warnx("status: no process given (a pid or 'self')");
		return cetctl_usage_error("status");
	}

	ctl.root = cetctl_globals.proc_root;
	pids = calloc((size_t)(argc - optind), sizeof(*pids));
	if (!pids)
		err(CETCTL_EXIT_FAILURE, "out of memory");
	for (i = optind; i < argc; i++) {
		pid_t p = parse_pid_arg(ctl.root, argv[i]);

		if (p < 0) {
			free(pids);
			return cetctl_usage_error("status");
		}
		pids[npids++] = p;
	}

	ctl.json = oa.topts.json;
	/* JSON: every thread object names its tid, whatever -o says */
	if (ctl.json && nids < CETCTL_MAX_COLUMNS) {
		bool tid = false;

		for (size_t k = 0; k < nids; k++)
			tid |= ids[k] == COL_TID;
		if (!tid)
			ids[nids++] = COL_TID;
	}
	/* JSON: the reason and its object come with the verdict */
	if (ctl.json)
		cetctl_why_off_json_columns(ids, &nids, CETCTL_MAX_COLUMNS, COL_VERDICT,
					    COL_WHY_OFF, COL_WHY_OBJECT);
	ctl.ss_is_x86 = cet_ss_is_x86_shstk(ctl.root, machine, sizeof(machine));
	have_si = cet_sysinfo_read_support(ctl.root, &si) == 0;
	ctl.cache = cet_marking_cache_new();
	ctl.t = cetctl_table_new(status_columns, ids, nids, &oa.topts);
	if (!ctl.t)
		err(CETCTL_EXIT_FAILURE, "failed to allocate output table");
	/* the legacy-ELF policy (kernel config, command line): only for WHY-OFF */
	if (have_si && status_why(ctl.t))
		cet_sysinfo_read_policy(ctl.root, &si);
	if (have_si)
		proc_why_system_from(&si, &ctl.why_sys);
	/* JSON arrays: libsmartcols splits a cell at '\n' only through the
	 * newline wrap functions. */
	for (size_t k = 0; k < nids; k++)
		if (status_columns[ids[k]].json_type == SCOLS_JSON_ARRAY_STRING)
			scols_column_set_wrapfunc(scols_table_get_column(cetctl_table_scols(ctl.t), k),
						  scols_wrapnl_chunksize, scols_wrapnl_nextchunk, NULL);
	if (!ctl.ss_is_x86)
		warnx("status: %s: smaps \"ss\" is not an x86 shadow stack here; not shown", machine);

	for (i = 0; i < npids; i++)
		if (!status_one(&ctl, pids[i]))
			all_ok = false;

	cetctl_table_print(ctl.t);
	if (!oa.topts.json)
		cetctl_proc_root_note("status");
	cetctl_table_free(ctl.t);
	cet_marking_cache_free(ctl.cache);
	free(pids);
	return all_ok ? CETCTL_EXIT_OK : CETCTL_EXIT_FAILURE;
}
