// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cetctl audit - one row per process: is it running with a shadow stack,
 * locked, do its threads agree, is its executable marked. Cheap by design
 * (status for everyone, thread status only for multi-threaded processes,
 * smaps only where a feature is on, one ELF read per distinct executable),
 * and robust: processes come and go during the scan and never stop it.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cetctl.h"
#include "jsonwrt.h"
#include "table.h"
#include "audit-policy.h"
#include "proc-cells.h"
#include "proc-cet.h"
#include "proc-marking.h"
#include "proc-why.h"
#include "prom-text.h"
#include "sysinfo-cet.h"
#include "util.h"

enum {
	COL_PID, COL_PPID, COL_USER, COL_COMM, COL_EXE, COL_THREADS,
	COL_FEATURES, COL_LOCKED, COL_SHSTK, COL_WRSS, COL_SHSTK_LOCKED,
	COL_WRSS_LOCKED, COL_DIFFER, COL_SS_VMAS, COL_SS_SIZE, COL_MARKING,
	COL_VERDICT, COL_UNIT, COL_WHY_OFF, COL_WHY_OBJECT,
};

/* the options of audit's own */
enum { OPT_USER = 256, OPT_COMM, OPT_UNIT, OPT_PID, OPT_REQUIRE, OPT_PROMETHEUS, OPT_LABEL };

static const struct cetctl_column audit_columns[] = {
	[COL_PID]      = { "PID", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, "process id" },
	[COL_PPID]     = { "PPID", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, "parent process id" },
	[COL_USER]     = { "USER", 8, 0, SCOLS_JSON_STRING, "effective user" },
	[COL_COMM]     = { "COMM", 12, 0, SCOLS_JSON_STRING, "command name" },
	[COL_EXE]      = { "EXE", 20, SCOLS_FL_TRUNC, SCOLS_JSON_STRING, "executable (empty when unreadable)" },
	[COL_THREADS]  = { "THREADS", 3, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, "number of threads" },
	[COL_FEATURES] = { "FEATURES", 6, 0, SCOLS_JSON_ARRAY_STRING, "x86_Thread_features of the process (- no line)" },
	[COL_LOCKED]   = { "LOCKED", 6, 0, SCOLS_JSON_ARRAY_STRING, "x86_Thread_features_locked of the process" },
	[COL_SHSTK]    = { "SHSTK", 5, 0, SCOLS_JSON_BOOLEAN_OPTIONAL, "shadow stack enabled" },
	[COL_WRSS]     = { "WRSS", 5, 0, SCOLS_JSON_BOOLEAN_OPTIONAL, "WRSS enabled" },
	[COL_SHSTK_LOCKED] = { "SHSTK-LOCKED", 5, 0, SCOLS_JSON_BOOLEAN_OPTIONAL, "shadow-stack setting locked" },
	[COL_WRSS_LOCKED]  = { "WRSS-LOCKED", 5, 0, SCOLS_JSON_BOOLEAN_OPTIONAL, "WRSS setting locked" },
	[COL_DIFFER]   = { "DIFFER", 3, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, "threads whose feature lines differ from the process's" },
	[COL_SS_VMAS]  = { "SS-VMAS", 3, SCOLS_FL_RIGHT, CETCTL_JSON_VALUE, "shadow-stack mappings (read only when a feature is on): their number; JSON: {start,end,size,rss} objects", 0, &cetctl_ss_vmas_count },
	[COL_SS_SIZE]  = { "SS-SIZE", 6, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, "their total size in KiB" },
	[COL_MARKING]  = { "MARKING", 9, 0, SCOLS_JSON_ARRAY_STRING, "CET marking of the executable (? unknown)" },
	[COL_VERDICT]  = { "VERDICT", 40, CETCTL_FL_SENTENCE, SCOLS_JSON_STRING, "what the combination means" },
	[COL_UNIT]     = { "UNIT", 16, 0, SCOLS_JSON_STRING, "systemd unit of the process, from its cgroup (empty: none)" },
	[COL_WHY_OFF]  = { "WHY-OFF", 12, 0, SCOLS_JSON_STRING, "why it runs without a shadow stack: no-support, glibc-without-cet, tunable-off, unmarked, not-requested, kernel-policy, unknown" },
	[COL_WHY_OBJECT] = { "WHY-OBJECT", 20, SCOLS_FL_TRUNC, SCOLS_JSON_STRING, "the object WHY-OFF names (the first unmarked one in the loader's order, or the glibc loader)" },
};
#define NCOLS (sizeof(audit_columns) / sizeof(audit_columns[0]))

/* The file written for --prometheus DIR. */
#define PROM_DEFAULT_NAME "cetctl-audit.prom"

/* A comm is at most TASK_COMM_LEN - 1 bytes: longer names never match it. */
#define AUDIT_COMM_MAX		15

struct audit_filter {
	bool by_user;
	uid_t uid;
	const char *comm;	/* comma separated names, exact */
	bool comm_long;		/* one of them is longer than AUDIT_COMM_MAX */
	const char *unit;	/* --unit: comma separated patterns */
	pid_t *pids;		/* --pid, sorted */
	size_t npids;
};


static void usage(void)
{
	printf("Usage: cetctl audit [options]\n\n");
	printf("List every process with its shadow-stack state, one row each, or check\n"
	       "them all against a policy. Kernel threads and zombies are left out.\n\n");
	printf("Options:\n");
	printf("      --user <user>      only processes whose effective user is <user>\n");
	printf("      --comm <names>     only processes with one of these command names (a name\n"
	       "                         over 15 characters also matches the executable's name)\n");
	printf("      --unit <units>     only processes in one of these systemd units (comma\n"
	       "                         separated, patterns as systemctl takes them; a name\n"
	       "                         without a '.' means NAME.service)\n");
	printf("      --pid <list>       only these processes (comma separated)\n");
	printf("      --require <feats>  policy: every process must have these enabled\n"
	       "                         (shstk, wrss, and 'locked' for locked too); lists the\n"
	       "                         processes that do not and exits 1 when there are any\n");
	printf("      --prometheus <file> also write node_exporter textfile-collector metrics\n"
	       "                         to <file> (a temporary file, then renamed; mode 0644),\n"
	       "                         into <file>/" PROM_DEFAULT_NAME " when it is a directory,\n"
	       "                         or instead of the table to standard output for '-'\n");
	printf("      --label <name=value> add this label to every metric (repeatable)\n");
	cetctl_output_options_help(stdout);
	cetctl_columns_help(stdout, audit_columns, NCOLS);
	printf("\nExit status: 0 on success; 1 when --require finds offenders, a --pid does\n"
	       "not exist or cannot be checked, the metrics file cannot be written, or on a\n"
	       "usage error. With --require it fails closed: 2 when the kernel has no\n"
	       "shadow-stack support, 3 when nothing was checked or a selected process could\n"
	       "not be (an empty selection, a filter matching nothing, a --pid that is missing,\n"
	       "a kernel thread or a zombie, an unreadable process, /proc's hidepid= hiding\n"
	       "other users' processes). What could not be read is said on standard error.\n");
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

static int parse_pid_list(const char *list, struct audit_filter *f)
{
	char *copy = strdup(list), *tok, *save = NULL;

	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		char *end;
		long v;
		pid_t *np;

		errno = 0;
		v = strtol(tok, &end, 10);
		if (*end || errno || v <= 0 || v > INT_MAX) {
			warnx("audit: invalid process id: '%s'", tok);
			free(copy);
			return -1;
		}
		np = realloc(f->pids, (f->npids + 1) * sizeof(*np));
		if (!np)
			err(CETCTL_EXIT_FAILURE, "out of memory");
		f->pids = np;
		f->pids[f->npids++] = (pid_t)v;
	}
	free(copy);
	qsort(f->pids, f->npids, sizeof(*f->pids), cmp_pid);
	return 0;
}

/* --require: "shstk", "shstk,locked", "shstk,wrss,locked". */
static int parse_require(const char *s, unsigned int *bits, bool *locked)
{
	char *copy = strdup(s), *tok, *save = NULL;

	*bits = 0;
	*locked = false;
	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (strcmp(tok, "shstk") == 0)
			*bits |= CET_FEAT_SHSTK;
		else if (strcmp(tok, "wrss") == 0)
			*bits |= CET_FEAT_WRSS;
		else if (strcmp(tok, "locked") == 0)
			*locked = true;
		else {
			warnx("audit: --require: unknown feature '%s' (shstk, wrss, locked)", tok);
			free(copy);
			return -1;
		}
	}
	free(copy);
	if (!*bits) {
		warnx("audit: --require needs shstk or wrss");
		return -1;
	}
	return 0;
}

/*
 * --label name=value: a Prometheus label name that none of the metrics uses
 * itself, once each; the value is escaped when it is added.
 */
static int parse_label(const char *arg, char **labels)
{
	static const char *const own[] = { "state", "reason", "require" };
	const char *eq = strchr(arg, '=');
	char name[128];
	size_t i;
	int rc;

	if (!eq || (size_t)(eq - arg) >= sizeof(name)) {
		warnx("audit: --label: expected name=value, got '%s'", arg);
		return -1;
	}
	memcpy(name, arg, (size_t)(eq - arg));
	name[eq - arg] = '\0';
	for (i = 0; i < sizeof(own) / sizeof(own[0]); i++) {
		if (strcmp(name, own[i]) == 0) {
			warnx("audit: --label: '%s' is a label of cetctl's own metrics", name);
			return -1;
		}
	}
	rc = prom_labels_add(labels, name, eq + 1);
	if (rc == -EINVAL)
		warnx("audit: --label: invalid label name '%s' ([a-zA-Z_][a-zA-Z0-9_]*, not __*)", name);
	else if (rc == -EEXIST)
		warnx("audit: --label: '%s' given twice", name);
	else if (rc == -EILSEQ)
		warnx("audit: --label %s: the value is not valid UTF-8 (the textfile collector "
		      "would drop the whole metrics file)", name);
	else if (rc)
		err(CETCTL_EXIT_FAILURE, "out of memory");
	return rc ? -1 : 0;
}

/* For the metrics: can this CPU and kernel run user shadow stacks at all? */
static bool shstk_supported(const char *root)
{
	struct cet_sysinfo si;

	return cet_sysinfo_read_support(root, &si) == 0 && cet_sysinfo_supported(&si);
}

/*
 * @name is the process's comm, @exe its executable path (NULL or "" when
 * unknown). A listed name longer than a comm can be matches the first
 * AUDIT_COMM_MAX bytes of the comm or the executable's base name, so a
 * policy on "systemd-resolved" checks that process instead of nothing.
 */
static bool comm_matches(const char *list, const char *name, const char *exe)
{
	size_t n = strlen(name);
	const char *p = list, *base = NULL;

	if (exe && *exe) {
		base = strrchr(exe, '/');
		base = base ? base + 1 : exe;
	}
	while (*p) {
		size_t len = strcspn(p, ",");

		if (len == n && strncmp(p, name, n) == 0)
			return true;
		if (len > AUDIT_COMM_MAX) {
			if (n == AUDIT_COMM_MAX && strncmp(p, name, n) == 0)
				return true;
			if (base && strlen(base) == len && strncmp(p, base, len) == 0)
				return true;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	return false;
}

/*
 * Whether @unit (the UNIT column's value, "" for none) is one of the
 * comma separated patterns of --unit. A pattern without a '.' names a
 * service, as systemctl reads "ssh" as ssh.service.
 */
static bool unit_matches(const char *list, const char *unit)
{
	const char *p = list;
	char pat[256];

	if (!*unit)
		return false;
	while (*p) {
		size_t len = strcspn(p, ",");

		snprintf(pat, sizeof(pat), "%.*s%s", (int)len, p,
			 memchr(p, '.', len) ? "" : ".service");
		if (fnmatch(pat, unit, 0) == 0)
			return true;
		p += len;
		if (*p == ',')
			p++;
	}
	return false;
}

/* --unit: no empty pattern, none longer than a unit name can be. */
static int check_unit_list(const char *list)
{
	const char *p = list;

	do {
		size_t len = strcspn(p, ",");

		if (len == 0 || len > 240) {
			warnx("audit: --unit: %s unit name in '%s'",
			      len ? "an overlong" : "an empty", list);
			return -EINVAL;
		}
		p += len;
	} while (*p++ == ',');
	return 0;
}

/* Warn once per --comm name that cannot match a comm as it is. */
static bool check_comm_list(const char *list)
{
	const char *p = list;
	bool any = false;

	while (*p) {
		size_t len = strcspn(p, ",");

		if (len > AUDIT_COMM_MAX) {
			warnx("audit: --comm '%.*s' is longer than %d characters, the kernel's "
			      "command name is truncated: matching its first %d characters "
			      "and the executable's name instead", (int)len, p,
			      AUDIT_COMM_MAX, AUDIT_COMM_MAX);
			any = true;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	return any;
}

static bool want_pid(const struct audit_filter *f, pid_t pid)
{
	return !f->npids || bsearch(&pid, f->pids, f->npids, sizeof(pid), cmp_pid);
}

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

/* Whether this user is exempt from hidepid= through its gid= group. */
static bool in_group(long gid)
{
	gid_t groups[256];
	int n, i;

	if (gid < 0)
		return false;
	if (getegid() == (gid_t)gid)
		return true;
	n = getgroups(256, groups);
	for (i = 0; i < n; i++)
		if (groups[i] == (gid_t)gid)
			return true;
	return false;
}

/*
 * Say on stderr what the audit could not see or read, so a partial audit
 * (a user without ptrace access to other users' processes, /proc with
 * hidepid=) is never mistaken for a full one.
 */
static void report_gaps(const struct audit_counts *c, const char *root)
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

/*
 * The metrics: one line per sample, the --label pairs first, then the
 * metric's own label. All gauges: each run replaces the previous values.
 * Names follow the Prometheus conventions: cetctl_audit_ prefix, the unit
 * (processes, seconds) last, no _total (that is for counters).
 */
struct prom_metrics {
	const struct audit_counts *c;
	const char *labels;		/* rendered --label pairs, NULL for none */
	const char *require;		/* --require, NULL without */
	bool shstk_supported;		/* cet_sysinfo_supported() */
	double seconds;
};

static void prom_family(FILE *f, const char *name, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

/* name{labels,label="value"} N; @label NULL for none, @value already safe. */
static void prom_sample(FILE *f, const struct prom_metrics *m, const char *name,
			const char *label, const char *value, const char *number)
{
	const char *ul = m->labels ? m->labels : "";

	if (*ul || label)
		fprintf(f, "%s{%s%s%s%s%s%s} %s\n", name, ul, *ul && label ? "," : "",
			label ? label : "", label ? "=\"" : "", label ? value : "",
			label ? "\"" : "", number);
	else
		fprintf(f, "%s %s\n", name, number);
}

static void prom_count(FILE *f, const struct prom_metrics *m, const char *name,
		       const char *label, const char *value, unsigned long n)
{
	char num[32];

	snprintf(num, sizeof(num), "%lu", n);
	prom_sample(f, m, name, label, value, num);
}

static void prom_print(FILE *f, const struct prom_metrics *m)
{
	const struct audit_counts *c = m->c;
	char num[64];

	prom_family(f, "cetctl_audit_processes_checked",
		    "User processes checked by the last audit (after --user/--comm/--unit/--pid; kernel threads, zombies and skipped processes not counted). 0 means the policy checked nothing.");
	prom_count(f, m, "cetctl_audit_processes_checked", NULL, NULL, c->scanned);
	prom_family(f, "cetctl_audit_shstk_processes",
		    "User processes checked, by shadow-stack state.");
	prom_count(f, m, "cetctl_audit_shstk_processes", "state", "enabled_locked", c->enabled_locked);
	prom_count(f, m, "cetctl_audit_shstk_processes", "state", "enabled_unlocked", c->enabled_unlocked);
	prom_count(f, m, "cetctl_audit_shstk_processes", "state", "mixed", c->mixed);
	prom_count(f, m, "cetctl_audit_shstk_processes", "state", "disabled", c->disabled);
	prom_family(f, "cetctl_audit_wrss_processes",
		    "User processes checked that have WRSS enabled.");
	prom_count(f, m, "cetctl_audit_wrss_processes", NULL, NULL, c->wrss);
	prom_family(f, "cetctl_audit_shstk_supported",
		    "1 when this CPU and kernel can run user shadow stacks (cetctl info: supported), else 0.");
	prom_count(f, m, "cetctl_audit_shstk_supported", NULL, NULL, m->shstk_supported);
	prom_family(f, "cetctl_audit_kernel_support",
		    "1 when the kernel reported shadow-stack state (x86_Thread_features) for every process checked; 0 otherwise, and when none was checked.");
	prom_count(f, m, "cetctl_audit_kernel_support", NULL, NULL,
		   c->scanned && c->no_kernel_support == 0);
	prom_family(f, "cetctl_audit_skipped_processes",
		    "Processes not checked, by reason.");
	prom_count(f, m, "cetctl_audit_skipped_processes", "reason", "kernel_thread", c->kthreads);
	prom_count(f, m, "cetctl_audit_skipped_processes", "reason", "zombie", c->zombies);
	prom_count(f, m, "cetctl_audit_skipped_processes", "reason", "vanished", c->vanished);
	prom_count(f, m, "cetctl_audit_skipped_processes", "reason", "unreadable", c->unreadable);
	prom_family(f, "cetctl_audit_partial_processes",
		    "User processes checked whose executable, smaps or threads could not be read (permission): their marking or shadow-stack mappings unknown.");
	prom_count(f, m, "cetctl_audit_partial_processes", NULL, NULL, c->partial);
	if (m->require) {
		char *req = prom_label_value_escape(m->require);

		if (!req)
			err(CETCTL_EXIT_FAILURE, "out of memory");
		prom_family(f, "cetctl_audit_offending_processes",
			    "User processes checked that do not meet the --require policy (label require).");
		prom_count(f, m, "cetctl_audit_offending_processes", "require", req, c->offenders);
		free(req);
	}
	prom_family(f, "cetctl_audit_duration_seconds", "How long the last audit took.");
	snprintf(num, sizeof(num), "%.6f", m->seconds);
	prom_sample(f, m, "cetctl_audit_duration_seconds", NULL, NULL, num);
	prom_family(f, "cetctl_audit_last_run_timestamp_seconds",
		    "When the last audit finished, in seconds since the Unix epoch.");
	snprintf(num, sizeof(num), "%lld", (long long)time(NULL));
	prom_sample(f, m, "cetctl_audit_last_run_timestamp_seconds", NULL, NULL, num);
}

/*
 * Before the scan: refuse a --prometheus target the textfile collector would
 * never read, so a typo or a missing node_exporter directory is an error
 * instead of a stray file and exit 0. "-", an existing directory and a
 * *.prom file pass; write_prometheus() reports the rest (a missing parent).
 */
static int check_prometheus_target(const char *target)
{
	size_t len = strlen(target);
	struct stat st;
	int e;

	if (strcmp(target, "-") == 0)
		return 0;
	e = stat(target, &st) == 0 ? 0 : errno;
	if (!e && S_ISDIR(st.st_mode))
		return 0;
	if (len && target[len - 1] == '/') {
		warnx("audit: --prometheus %s: %s", target, strerror(e ? e : ENOTDIR));
		return -1;
	}
	if (len < 6 || strcmp(target + len - 5, ".prom") != 0 || target[len - 6] == '/') {
		warnx("audit: --prometheus %s: not a directory, and node_exporter's textfile "
		      "collector reads only files named *.prom: give its directory or a "
		      "NAME.prom file", target);
		return -1;
	}
	return 0;
}

/*
 * Write the metrics to @target: "-" is standard output; a directory gets
 * PROM_DEFAULT_NAME in it; anything else is the file. A file is written
 * as node_exporter's textfile collector asks: into a temporary file in the
 * same directory (hidden and not *.prom, so the collector never reads it),
 * synced, then renamed over the old one. Mode 0644 whatever the umask: the
 * collector runs as another user. Returns 0 or -errno.
 */
static int write_prometheus(const char *target, const struct prom_metrics *m)
{
	char path[PATH_MAX], tmp[PATH_MAX], *dir_copy, *base_copy;
	struct stat st;
	FILE *f;
	int fd, rc = 0;

	errno = 0;
	if (strcmp(target, "-") == 0) {
		prom_print(stdout, m);
		if (fflush(stdout) != 0 || ferror(stdout))
			return errno ? -errno : -EIO;
		return 0;
	}
	if (stat(target, &st) == 0 && S_ISDIR(st.st_mode)) {
		if (snprintf(path, sizeof(path), "%s/%s", target, PROM_DEFAULT_NAME) >= (int)sizeof(path))
			return -ENAMETOOLONG;
	} else if (snprintf(path, sizeof(path), "%s", target) >= (int)sizeof(path)) {
		return -ENAMETOOLONG;
	}
	dir_copy = strdup(path);
	base_copy = strdup(path);
	if (!dir_copy || !base_copy) {
		free(dir_copy);
		free(base_copy);
		return -ENOMEM;
	}
	rc = snprintf(tmp, sizeof(tmp), "%s/.%s.%d.tmp", dirname(dir_copy),
		      basename(base_copy), (int)getpid()) >= (int)sizeof(tmp) ? -ENAMETOOLONG : 0;
	free(dir_copy);
	free(base_copy);
	if (rc)
		return rc;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	/* open() applied the umask; the collector must be able to read it */
	if (fchmod(fd, 0644) != 0 || !(f = fdopen(fd, "w"))) {
		rc = -errno;
		close(fd);
		unlink(tmp);
		return rc;
	}
	errno = 0;
	prom_print(f, m);
	if (fflush(f) != 0 || ferror(f) || fsync(fileno(f)) != 0)
		rc = errno ? -errno : -EIO;
	if (fclose(f) != 0 && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path) != 0)
		rc = -errno;
	if (rc)
		unlink(tmp);
	return rc;
}

/*
 * The "summary" member of audit -J: what was scanned, checked and skipped,
 * whether the kernel reports shadow-stack state, and the policy's outcome,
 * so a consumer never has to infer "nothing checked" from an empty list.
 */
struct audit_summary {
	const struct audit_counts *c;
	const char *require;
};

static const char *const state_keys[] = {
	"enabled_locked", "enabled_unlocked", "mixed", "disabled", "wrss", NULL,
};
static const char *const skip_keys[] = {
	"kernel_thread", "zombie", "vanished", "unreadable", "pids_unchecked", NULL,
};

/* {"key": n, ...}: @keys (NULL-terminated) with their values @n */
static void counts_member(struct jsonwrt *w, const char *name, const char *const *keys,
			  const unsigned long *n)
{
	jsonwrt_object_open(w, name, JSONWRT_LINE);
	for (size_t i = 0; keys[i]; i++)
		jsonwrt_ulong(w, keys[i], n[i]);
	jsonwrt_object_close(w);
}

static void summary_json(struct jsonwrt *w, const void *arg)
{
	const struct audit_summary *s = arg;
	const struct audit_counts *c = s->c;

	jsonwrt_object_open(w, "summary", JSONWRT_LINE);
	jsonwrt_ulong(w, "processes", c->scanned);
	jsonwrt_ulong(w, "checked", c->checked);
	if (s->require)
		jsonwrt_ulong(w, "offenders", c->offenders);
	else
		jsonwrt_null(w, "offenders");
	jsonwrt_string(w, "require", s->require);
	if (c->kernel_support == CET_UNKNOWN)
		jsonwrt_null(w, "kernel_support");
	else
		jsonwrt_bool(w, "kernel_support", c->kernel_support == CET_YES);
	counts_member(w, "states", state_keys, (const unsigned long[]){ c->enabled_locked,
		      c->enabled_unlocked, c->mixed, c->disabled, c->wrss });
	counts_member(w, "skipped", skip_keys, (const unsigned long[]){ c->kthreads,
		      c->zombies, c->vanished, c->unreadable, c->pids_unchecked });
	jsonwrt_ulong(w, "partial", c->partial);
	jsonwrt_string(w, "hidepid", c->hidepid[0] ? c->hidepid : NULL);
	jsonwrt_object_close(w);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* What the command line asks for. */
struct audit_opts {
	struct cetctl_output_args oa;
	int ids[CETCTL_MAX_COLUMNS];
	size_t nids;
	struct audit_filter filter;
	const char *require;		/* --require as given, NULL without */
	unsigned int req_bits;
	bool req_locked;
	const char *prom;		/* --prometheus */
	char *prom_labels;		/* --label pairs, rendered */
};

/* One option of cmd_audit's own; CETCTL_OUTPUT_CONTINUE or the exit status. */
static int audit_option(struct audit_opts *o, int c, const char *arg)
{
	switch (c) {
	case OPT_USER:
		if (proc_user_parse(arg, &o->filter.uid) < 0) {
			warnx("audit: unknown user '%s'", arg);
			return cetctl_usage_error("audit");
		}
		o->filter.by_user = true;
		break;
	case OPT_COMM:
		o->filter.comm = arg;
		o->filter.comm_long = check_comm_list(arg);
		break;
	case OPT_UNIT:
		if (check_unit_list(arg) < 0)
			return cetctl_usage_error("audit");
		o->filter.unit = arg;
		break;
	case OPT_PID:
		if (parse_pid_list(arg, &o->filter) < 0)
			return cetctl_usage_error("audit");
		break;
	case OPT_REQUIRE:
		if (parse_require(arg, &o->req_bits, &o->req_locked) < 0)
			return cetctl_usage_error("audit");
		o->require = arg;
		break;
	case OPT_PROMETHEUS:
		o->prom = arg;
		break;
	case OPT_LABEL:
		if (parse_label(arg, &o->prom_labels) < 0)
			return cetctl_usage_error("audit");
		break;
	default:
		return cetctl_option_other(c, usage, "audit");
	}
	return CETCTL_OUTPUT_CONTINUE;
}

/* Parse the command line into @o: CETCTL_OUTPUT_CONTINUE or the exit status. */
static int audit_parse(int argc, char **argv, struct audit_opts *o)
{
	static const struct option longopts[] = {
		{ "user",         required_argument, NULL, OPT_USER },
		{ "comm",         required_argument, NULL, OPT_COMM },
		{ "unit",         required_argument, NULL, OPT_UNIT },
		{ "pid",          required_argument, NULL, OPT_PID },
		{ "require",      required_argument, NULL, OPT_REQUIRE },
		{ "prometheus",   required_argument, NULL, OPT_PROMETHEUS },
		{ "label",        required_argument, NULL, OPT_LABEL },
		CETCTL_OUTPUT_LONGOPTS,
		{ "help",         no_argument,       NULL, 'h' },
		{ "version",      no_argument,       NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	static const int defaults[] = { COL_PID, COL_USER, COL_COMM, COL_SHSTK, COL_WRSS,
					COL_LOCKED, COL_THREADS, COL_DIFFER, COL_MARKING,
					COL_VERDICT };
	int c, rc;

	memcpy(o->ids, defaults, sizeof(defaults));
	o->nids = sizeof(defaults) / sizeof(defaults[0]);
	o->oa.topts.json_name = "processes";
	o->oa.topts.json_errors = true;
	o->oa.topts.json = cetctl_globals.json;
	while ((c = getopt_long(argc, argv, CETCTL_OUTPUT_SHORTOPTS "hV", longopts, NULL)) != -1) {
		if (cetctl_output_option(&o->oa, c, optarg))
			continue;
		rc = audit_option(o, c, optarg);
		if (rc != CETCTL_OUTPUT_CONTINUE)
			return rc;
	}
	if (o->prom && check_prometheus_target(o->prom) < 0)
		return CETCTL_EXIT_FAILURE;
	if (o->prom_labels && !o->prom) {
		warnx("audit: --label needs --prometheus");
		return cetctl_usage_error("audit");
	}
	rc = cetctl_output_columns(&o->oa, audit_columns, NCOLS, o->ids, &o->nids, "audit");
	if (rc != CETCTL_OUTPUT_CONTINUE)
		return rc;
	/* JSON: the reason and its object come with the verdict */
	if (o->oa.topts.json)
		cetctl_why_off_json_columns(o->ids, &o->nids, CETCTL_MAX_COLUMNS, COL_VERDICT,
					    COL_WHY_OFF, COL_WHY_OBJECT);
	if (optind < argc) {
		warnx("audit: unexpected argument '%s' (use --pid for a list)", argv[optind]);
		return cetctl_usage_error("audit");
	}
	return CETCTL_OUTPUT_CONTINUE;
}

/* The scan: what it reads, where it writes, what it counts. */
struct audit_scan {
	const struct audit_opts *o;
	const char *root;
	pid_t *pids;			/* of the /proc listing, sorted */
	size_t npids;
	bool ss_is_x86;
	struct proc_why_system why_sys;	/* the system's facts, for WHY-OFF */
	struct cet_marking_cache *cache;
	struct cetctl_table *t;
	struct audit_counts counts;
	double t0;
};

/*
 * Plan the scan: list the processes, and learn what the kernel and /proc
 * let this user see. Returns CETCTL_OUTPUT_CONTINUE or the exit status.
 */
/* Whether the output needs WHY-OFF's judgement (the verdict says it too). */
static bool audit_why_wanted(const struct cetctl_table *t)
{
	return cetctl_table_has(t, COL_VERDICT) || cetctl_table_has(t, COL_WHY_OFF) ||
	       cetctl_table_has(t, COL_WHY_OBJECT);
}

static int audit_plan(struct audit_scan *s, const struct audit_opts *o)
{
	struct cet_sysinfo si;
	char machine[64];
	long gid;
	int n;

	s->o = o;
	s->root = cetctl_globals.proc_root;
	s->t0 = now();
	n = proc_pids_list(s->root, &s->pids);
	if (n < 0) {
		warnx("audit: cannot list %s: %s", s->root ? s->root : "/proc", strerror(-n));
		return CETCTL_EXIT_FAILURE;
	}
	s->npids = (size_t)n;
	/* root (CAP_SYS_PTRACE) and the gid= group see every process */
	if (cet_proc_hidepid(s->root, s->counts.hidepid, sizeof(s->counts.hidepid), &gid) != 1 ||
	    geteuid() == 0 || in_group(gid))
		s->counts.hidepid[0] = '\0';
	s->ss_is_x86 = cet_ss_is_x86_shstk(s->root, machine, sizeof(machine));
	s->counts.kernel_support = cet_sysinfo_read_support(s->root, &si) == 0 ?
				   si.status_lines : CET_UNKNOWN;
	s->cache = cet_marking_cache_new();
	s->t = cetctl_table_new(audit_columns, o->ids, o->nids, &o->oa.topts);
	if (!s->t || !s->cache)
		err(CETCTL_EXIT_FAILURE, "failed to allocate output table");
	if (s->counts.kernel_support != CET_UNKNOWN) {
		/* the legacy-ELF policy (kernel config, command line): only for WHY-OFF */
		if (audit_why_wanted(s->t))
			cet_sysinfo_read_policy(s->root, &si);
		proc_why_system_from(&si, &s->why_sys);
	}
	return CETCTL_OUTPUT_CONTINUE;
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
			!unit_matches(f->unit, unit)))
		return false;
	if (!f->by_user && !f->comm)
		return true;
	if (proc_status_read(s->root, pid, 0, &st) != 0)
		return true;	/* proc_cet_read() says what went wrong */
	return !((f->by_user && st.euid != f->uid) ||
		 (f->comm && !f->comm_long && !comm_matches(f->comm, st.name, NULL)));
}

static void audit_one(struct audit_scan *s, pid_t pid)
{
	const struct audit_filter *f = &s->o->filter;
	unsigned int what = PROC_CET_THREADS_IF_MANY | PROC_CET_VMAS_IF_ON |
			    (cetctl_table_has(s->t, COL_EXE) || f->comm_long ?
			     PROC_CET_EXE : PROC_CET_EXE_MARKING);
	struct proc_cet pc;
	int rc;

	if (!want_pid(f, pid) || !status_wanted(s, pid))
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
	    (f->comm && !comm_matches(f->comm, pc.st.name, pc.exe)))
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
static void audit_execute(struct audit_scan *s)
{
	const struct audit_filter *f = &s->o->filter;

	for (size_t i = 0; i < f->npids; i++) {
		if (!bsearch(&f->pids[i], s->pids, s->npids, sizeof(pid_t), cmp_pid)) {
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

/*
 * Report: the table or the JSON document (unless --prometheus - takes
 * standard output), the gaps on stderr, the metrics. Returns the exit
 * status so far.
 */
static int audit_report(struct audit_scan *s)
{
	const struct audit_opts *o = s->o;
	int rc;

	if (!o->prom || strcmp(o->prom, "-") != 0) {
		if (o->oa.topts.json) {
			struct audit_summary sum = { &s->counts, o->require };

			cetctl_table_print_members(s->t, summary_json, &sum);
		} else {
			cetctl_table_print(s->t);
			cetctl_proc_root_note("audit");
		}
	}
	report_gaps(&s->counts, s->root);
	if (o->prom) {
		struct prom_metrics m = {
			.c = &s->counts, .labels = o->prom_labels, .require = o->require,
			.shstk_supported = shstk_supported(s->root), .seconds = now() - s->t0,
		};

		rc = write_prometheus(o->prom, &m);
		if (rc) {
			warnx("audit: cannot write the metrics to %s: %s",
			      strcmp(o->prom, "-") ? o->prom : "standard output", strerror(-rc));
			return CETCTL_EXIT_FAILURE;
		}
	}
	return CETCTL_EXIT_OK;
}

int cmd_audit(int argc, char **argv)
{
	struct audit_opts o = { 0 };
	struct audit_scan s = { 0 };
	int rc = audit_parse(argc, argv, &o);

	if (rc == CETCTL_OUTPUT_CONTINUE)
		rc = audit_plan(&s, &o);
	if (rc == CETCTL_OUTPUT_CONTINUE) {
		audit_execute(&s);
		rc = audit_report(&s);
		rc = audit_exit_status(&s.counts, o.require, s.root, rc);
	}
	cetctl_table_free(s.t);
	cet_marking_cache_free(s.cache);
	free(s.pids);
	free(o.filter.pids);
	free(o.prom_labels);
	return rc;
}
