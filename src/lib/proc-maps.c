// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc-maps.h"
#include "util.h"

/* smaps of a big process can be large; beyond this we would rather fail. */
#define SMAPS_MAX	(256UL * 1024 * 1024)

/* "start-end perms offset dev inode [path]": a VMA header line. */
static bool vma_header(const char *line, unsigned long *start, unsigned long *end)
{
	char *e;

	*start = strtoul(line, &e, 16);
	if (e == line || *e != '-')
		return false;
	line = e + 1;
	*end = strtoul(line, &e, 16);
	return e != line && *e == ' ';
}

static bool has_flag(const char *flags, const char *flag)
{
	size_t n = strlen(flag);
	const char *p = flags;

	while (*p && *p != '\n') {
		size_t len;

		while (*p == ' ')
			p++;
		len = strcspn(p, " \n");
		if (len == n && strncmp(p, flag, n) == 0)
			return true;
		p += len;
	}
	return false;
}

int proc_smaps_parse_ss(const char *text, struct shstk_vmas *out)
{
	struct shstk_vma cur = { 0 };
	bool in_vma = false;
	size_t cap = 0;
	const char *line;

	out->v = NULL;
	out->n = 0;
	for (line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		unsigned long s, e;

		if (vma_header(line, &s, &e)) {
			memset(&cur, 0, sizeof(cur));
			cur.start = s;
			cur.end = e;
			in_vma = true;
		} else if (!in_vma) {
			continue;
		} else if (strncmp(line, "Size:", 5) == 0) {
			cur.size_kb = strtoul(line + 5, NULL, 10);
		} else if (strncmp(line, "Rss:", 4) == 0) {
			cur.rss_kb = strtoul(line + 4, NULL, 10);
		} else if (strncmp(line, "VmFlags:", 8) == 0) {
			in_vma = false;	/* VmFlags ends each VMA block */
			if (!has_flag(line + 8, "ss"))
				continue;
			if (out->n == cap) {
				size_t ncap = cap ? cap * 2 : 4;
				struct shstk_vma *nv = realloc(out->v, ncap * sizeof(*nv));

				if (!nv) {
					shstk_vmas_free(out);
					return -ENOMEM;
				}
				out->v = nv;
				cap = ncap;
			}
			out->v[out->n++] = cur;
		}
	}
	return 0;
}

int proc_smaps_read_ss_at(int piddir, struct shstk_vmas *out)
{
	char *text;
	long n;
	int rc;

	out->v = NULL;
	out->n = 0;
	n = cet_read_file_at(piddir, "smaps", SMAPS_MAX, &text);
	if (n < 0)
		return (int)n;
	/* Every user process has VMAs; an empty smaps means its mm is gone. */
	rc = n == 0 ? -ESRCH : proc_smaps_parse_ss(text, out);
	free(text);
	return rc;
}

void shstk_vmas_free(struct shstk_vmas *vmas)
{
	free(vmas->v);
	vmas->v = NULL;
	vmas->n = 0;
}

int proc_maps_parse_objects(const char *text, struct proc_objects *out)
{
	size_t cap = 0;
	const char *line;

	out->path = NULL;
	out->addr = NULL;
	out->n = 0;
	for (line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		char perms[8], pathbuf[PATH_MAX];
		unsigned long s, e;
		int off = 0;
		size_t i, len;
		bool dup = false;

		if (!vma_header(line, &s, &e))
			continue;
		if (sscanf(line, "%*x-%*x %7s %*x %*s %*u %n", perms, &off) != 1 || !off)
			continue;
		if (!strchr(perms, 'x') || line[off] != '/')
			continue;	/* anonymous, [vdso], [stack]... */
		len = strcspn(line + off, "\n");
		if (len >= sizeof(pathbuf))
			continue;
		memcpy(pathbuf, line + off, len);
		pathbuf[len] = '\0';
		for (i = 0; i < out->n; i++)
			if (strcmp(out->path[i], pathbuf) == 0)
				dup = true;
		if (dup)
			continue;
		if (out->n == cap) {
			size_t ncap = cap ? cap * 2 : 8;
			char **np = realloc(out->path, ncap * sizeof(*np));
			unsigned long *na;

			if (!np) {
				proc_objects_free(out);
				return -ENOMEM;
			}
			out->path = np;
			na = realloc(out->addr, ncap * sizeof(*na));
			if (!na) {
				proc_objects_free(out);
				return -ENOMEM;
			}
			out->addr = na;
			cap = ncap;
		}
		out->addr[out->n] = s;
		out->path[out->n] = strdup(pathbuf);
		if (!out->path[out->n]) {
			proc_objects_free(out);
			return -ENOMEM;
		}
		out->n++;
	}
	return 0;
}

int proc_maps_read_objects_at(int piddir, struct proc_objects *out)
{
	char *text;
	long n;
	int rc;

	out->path = NULL;
	out->addr = NULL;
	out->n = 0;
	n = cet_read_file_at(piddir, "maps", SMAPS_MAX, &text);
	if (n < 0)
		return (int)n;
	rc = n == 0 ? -ESRCH : proc_maps_parse_objects(text, out);
	free(text);
	return rc;
}

void proc_objects_free(struct proc_objects *objs)
{
	size_t i;

	for (i = 0; i < objs->n; i++)
		free(objs->path[i]);
	free(objs->path);
	free(objs->addr);
	objs->path = NULL;
	objs->addr = NULL;
	objs->n = 0;
}
