/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The insides of `cetctl audit`, shared by its parts and by nothing else:
 *
 *   cmd-audit.c         the command: columns, options, --require, the
 *                       plan of the scan, the JSON summary, the report
 *   cmd-audit-filter.c  which processes: --pid, --comm, --unit
 *   cmd-audit-scan.c    the scan: each process read, counted, judged
 *                       against --require and shown; what it could not see
 *   cmd-audit-prom.c    --prometheus: the metrics, their target, --label
 *
 * Calls between them: cmd-audit.c parses the options with the filter's
 * and the metrics' checks, plans the scan, runs it (audit_execute(),
 * which selects through cmd-audit-filter.c) and reports, writing the
 * metrics through cmd-audit-prom.c.
 */
#ifndef CETCTL_CMD_AUDIT_INTERNAL_H
#define CETCTL_CMD_AUDIT_INTERNAL_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "cetctl.h"
#include "table.h"
#include "audit-policy.h"
#include "proc-cet.h"
#include "proc-why.h"

enum {
	COL_PID, COL_PPID, COL_USER, COL_COMM, COL_EXE, COL_THREADS,
	COL_FEATURES, COL_LOCKED, COL_SHSTK, COL_WRSS, COL_SHSTK_LOCKED,
	COL_WRSS_LOCKED, COL_DIFFER, COL_SS_VMAS, COL_SS_SIZE, COL_MARKING,
	COL_VERDICT, COL_UNIT, COL_WHY_OFF, COL_WHY_OBJECT,
};

/* The file written for --prometheus DIR. */
#define PROM_DEFAULT_NAME "cetctl-audit.prom"

struct audit_filter {
	bool by_user;
	uid_t uid;
	const char *comm;	/* comma separated names, exact */
	bool comm_long;		/* one of them is longer than AUDIT_COMM_MAX */
	const char *unit;	/* --unit: comma separated patterns */
	pid_t *pids;		/* --pid, sorted */
	size_t npids;
};

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

/* cmd-audit-filter.c: the selection's options, checked, and its tests */
int audit_cmp_pid(const void *a, const void *b);
int audit_parse_pid_list(const char *list, struct audit_filter *f);
int audit_check_unit_list(const char *list);
bool audit_check_comm_list(const char *list);
bool audit_want_pid(const struct audit_filter *f, pid_t pid);
bool audit_comm_matches(const char *list, const char *name, const char *exe);
bool audit_unit_matches(const char *list, const char *unit);

/* cmd-audit-scan.c: the scan loop; what it could not see, on stderr; whether
 * the output needs WHY-OFF's judgement */
void audit_execute(struct audit_scan *s);
bool audit_why_wanted(const struct cetctl_table *t);
void audit_report_gaps(const struct audit_counts *c, const char *root);

/* cmd-audit-prom.c: --label, the --prometheus target, the metrics written */
int audit_parse_label(const char *arg, char **labels);
int audit_check_prometheus_target(const char *target);
bool audit_shstk_supported(const char *root);
int audit_write_prometheus(const char *target, const struct prom_metrics *m);

#endif
