// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Which processes `cetctl audit` looks at: --pid (a sorted list), --comm
 * (a name longer than a comm can be also matches the executable's name)
 * and --unit (systemd units, as systemctl names them); the options
 * checked when given, the tests applied during the scan.
 */
#include <err.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cetctl.h"
#include "cmd-audit-internal.h"

/* A comm is at most TASK_COMM_LEN - 1 bytes: longer names never match it. */
#define AUDIT_COMM_MAX		15

int audit_cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

int audit_parse_pid_list(const char *list, struct audit_filter *f)
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
	qsort(f->pids, f->npids, sizeof(*f->pids), audit_cmp_pid);
	return 0;
}

/*
 * @name is the process's comm, @exe its executable path (NULL or "" when
 * unknown). A listed name longer than a comm can be matches the first
 * AUDIT_COMM_MAX bytes of the comm or the executable's base name, so a
 * policy on "systemd-resolved" checks that process instead of nothing.
 */
bool audit_comm_matches(const char *list, const char *name, const char *exe)
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
bool audit_unit_matches(const char *list, const char *unit)
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
int audit_check_unit_list(const char *list)
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
bool audit_check_comm_list(const char *list)
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

bool audit_want_pid(const struct audit_filter *f, pid_t pid)
{
	return !f->npids || bsearch(&pid, f->pids, f->npids, sizeof(pid), audit_cmp_pid);
}
