// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `cetctl audit --prometheus`: the metrics for node_exporter's textfile
 * collector (gauges, the --label pairs on every sample), the target
 * checked before the scan, and the file written as the collector asks.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cetctl.h"
#include "audit-policy.h"
#include "prom-text.h"
#include "sysinfo-cet.h"
#include "cmd-audit-internal.h"

/*
 * --label name=value: a Prometheus label name that none of the metrics uses
 * itself, once each; the value is escaped when it is added.
 */
int audit_parse_label(const char *arg, char **labels)
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
bool audit_shstk_supported(const char *root)
{
	struct cet_sysinfo si;

	return cet_sysinfo_read_support(root, &si) == 0 && cet_sysinfo_supported(&si);
}


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
 * *.prom file pass; audit_write_prometheus() reports the rest (a missing
 * parent).
 */
int audit_check_prometheus_target(const char *target)
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
int audit_write_prometheus(const char *target, const struct prom_metrics *m)
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
