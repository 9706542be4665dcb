// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cetctl audit - one row per process: is it running with a shadow stack,
 * locked, do its threads agree, is its executable marked. Cheap by design
 * (status for everyone, thread status only for multi-threaded processes,
 * smaps only where a feature is on, one ELF read per distinct executable),
 * and robust: processes come and go during the scan and never stop it.
 *
 * This file: the columns, the options, --require, the plan, the JSON
 * summary and the report; the selection, the scan and the metrics are
 * parts of their own (cmd-audit-internal.h).
 */
#include <err.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cetctl.h"
#include "jsonwrt.h"
#include "table.h"
#include "audit-policy.h"
#include "proc-cells.h"
#include "proc-cet.h"
#include "proc-marking.h"
#include "sysinfo-cet.h"
#include "util.h"
#include "cmd-audit-internal.h"

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
		o->filter.comm_long = audit_check_comm_list(arg);
		break;
	case OPT_UNIT:
		if (audit_check_unit_list(arg) < 0)
			return cetctl_usage_error("audit");
		o->filter.unit = arg;
		break;
	case OPT_PID:
		if (audit_parse_pid_list(arg, &o->filter) < 0)
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
		if (audit_parse_label(arg, &o->prom_labels) < 0)
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
	if (o->prom && audit_check_prometheus_target(o->prom) < 0)
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

/*
 * Plan the scan: list the processes, and learn what the kernel and /proc
 * let this user see. Returns CETCTL_OUTPUT_CONTINUE or the exit status.
 */
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
	audit_report_gaps(&s->counts, s->root);
	if (o->prom) {
		struct prom_metrics m = {
			.c = &s->counts, .labels = o->prom_labels, .require = o->require,
			.shstk_supported = audit_shstk_supported(s->root), .seconds = now() - s->t0,
		};

		rc = audit_write_prometheus(o->prom, &m);
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