// SPDX-License-Identifier: GPL-2.0-or-later
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc-status.h"
#include "util.h"

#define STATUS_MAX	(64 * 1024)
#define PF_KTHREAD_BIT	0x00200000UL	/* include/linux/sched.h */

static void append_word(char *buf, size_t size, const char *w, size_t len)
{
	size_t used = strlen(buf);

	/* Keep what fits; a truncated unknown word is still a visible hint. */
	if (used && used + 1 < size)
		buf[used++] = ' ';
	if (used + len >= size)
		len = used < size ? size - used - 1 : 0;
	memcpy(buf + used, w, len);
	buf[used + len] = '\0';
}

void cet_feature_words_parse(const char *words, struct cet_feature_line *fl)
{
	const char *p = words;

	fl->present = true;
	fl->bits = 0;
	fl->unknown[0] = '\0';
	while (*p && *p != '\n') {
		size_t len;

		while (*p == ' ' || *p == '\t')
			p++;
		len = strcspn(p, " \t\n");
		if (len == 0)
			break;
		if (len == 5 && strncmp(p, "shstk", 5) == 0)
			fl->bits |= CET_FEAT_SHSTK;
		else if (len == 4 && strncmp(p, "wrss", 4) == 0)
			fl->bits |= CET_FEAT_WRSS;
		else
			append_word(fl->unknown, sizeof(fl->unknown), p, len);
		p += len;
	}
}

const char *cet_feature_line_str(const struct cet_feature_line *fl, char *buf, size_t size)
{
	if (!size)
		return buf;
	buf[0] = '\0';
	if (!fl->present) {
		snprintf(buf, size, "-");
		return buf;
	}
	if (fl->bits & CET_FEAT_SHSTK)
		append_word(buf, size, "shstk", 5);
	if (fl->bits & CET_FEAT_WRSS)
		append_word(buf, size, "wrss", 4);
	if (fl->unknown[0])
		append_word(buf, size, fl->unknown, strlen(fl->unknown));
	return buf;
}

/* Value of "Key:\t..." when @line starts with @key, else NULL. */
static const char *field(const char *line, const char *key)
{
	size_t n = strlen(key);

	if (strncmp(line, key, n) != 0 || line[n] != ':')
		return NULL;
	line += n + 1;
	while (*line == ' ' || *line == '\t')
		line++;
	return line;
}

int proc_status_parse(const char *text, struct proc_status *st)
{
	const char *line, *v;
	bool seen_name = false;

	memset(st, 0, sizeof(*st));
	st->kthread = -1;
	st->euid = (uid_t)-1;
	for (line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		if ((v = field(line, "Name"))) {
			size_t len = strcspn(v, "\n");

			if (len >= sizeof(st->name))
				len = sizeof(st->name) - 1;
			memcpy(st->name, v, len);
			st->name[len] = '\0';
			seen_name = true;
		} else if ((v = field(line, "State"))) {
			st->state = *v;
		} else if ((v = field(line, "Tgid"))) {
			st->tgid = (pid_t)strtol(v, NULL, 10);
		} else if ((v = field(line, "Pid"))) {
			st->pid = (pid_t)strtol(v, NULL, 10);
		} else if ((v = field(line, "PPid"))) {
			st->ppid = (pid_t)strtol(v, NULL, 10);
		} else if ((v = field(line, "Uid"))) {
			unsigned long r, e;

			if (sscanf(v, "%lu %lu", &r, &e) == 2)
				st->euid = (uid_t)e;
		} else if ((v = field(line, "Threads"))) {
			st->threads = (int)strtol(v, NULL, 10);
		} else if ((v = field(line, "Kthread"))) {
			st->kthread = *v == '1';
		} else if (field(line, "VmSize")) {
			st->has_vm = true;
		} else if ((v = field(line, "x86_Thread_features"))) {
			cet_feature_words_parse(v, &st->features);
		} else if ((v = field(line, "x86_Thread_features_locked"))) {
			cet_feature_words_parse(v, &st->locked);
		}
	}
	return seen_name ? 0 : -EINVAL;
}

int proc_status_read(const char *root, pid_t pid, pid_t tid, struct proc_status *st)
{
	char path[PATH_MAX], *text;
	long n;
	int rc;

	if (tid)
		rc = cet_proc_path(path, sizeof(path), root, "%d/task/%d/status", (int)pid, (int)tid);
	else
		rc = cet_proc_path(path, sizeof(path), root, "%d/status", (int)pid);
	if (rc)
		return rc;
	n = cet_read_file(path, STATUS_MAX, &text);
	if (n < 0)
		return (int)n;
	/* An empty status means the task went away between open and read. */
	rc = n == 0 ? -ESRCH : proc_status_parse(text, st);
	free(text);
	return rc;
}

char proc_stat_state(const char *root, pid_t pid)
{
	char path[PATH_MAX], *text, *p, state = 0;

	if (cet_proc_path(path, sizeof(path), root, "%d/stat", (int)pid))
		return 0;
	if (cet_read_file(path, 4096, &text) <= 0) {
		free(text);	/* an empty read still returns a buffer */
		return 0;
	}
	/* "pid (comm) S ...": comm may hold anything, so from the last ')'. */
	p = strrchr(text, ')');
	if (p && p[1] == ' ')
		state = p[2];
	free(text);
	return state;
}

bool proc_is_kthread(const char *root, pid_t pid, const struct proc_status *st)
{
	char path[PATH_MAX], *text, *p;
	unsigned long flags = 0;
	bool kt = false;
	int i;

	if (st->kthread >= 0)
		return st->kthread == 1;
	if (st->has_vm || st->state == 'Z')
		return false;
	/* Older kernels: field 9 of stat holds PF_KTHREAD. comm may contain
	 * spaces and parentheses, so count from the last ')'. */
	if (cet_proc_path(path, sizeof(path), root, "%d/stat", (int)pid))
		return false;
	if (cet_read_file(path, 4096, &text) <= 0) {
		free(text);	/* an empty read still returns a buffer */
		return false;
	}
	p = strrchr(text, ')');
	for (i = 0; p && i < 7; i++) {
		p = strchr(p + 1, ' ');
	}
	if (p && sscanf(p, " %lu", &flags) == 1)
		kt = (flags & PF_KTHREAD_BIT) != 0;
	free(text);
	return kt;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

static int list_numeric(const char *dir, pid_t **out)
{
	struct dirent *de;
	size_t n = 0, cap = 64;
	pid_t *v;
	DIR *d;

	*out = NULL;
	d = opendir(dir);
	if (!d)
		return -errno;
	v = malloc(cap * sizeof(*v));
	if (!v) {
		closedir(d);
		return -ENOMEM;
	}
	while ((de = readdir(d))) {
		char *end;
		long x;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		x = strtol(de->d_name, &end, 10);
		if (*end || x <= 0 || x > INT_MAX)
			continue;
		if (n == cap) {
			pid_t *nv = realloc(v, cap * 2 * sizeof(*v));

			if (!nv) {
				free(v);
				closedir(d);
				return -ENOMEM;
			}
			v = nv;
			cap *= 2;
		}
		v[n++] = (pid_t)x;
	}
	closedir(d);
	qsort(v, n, sizeof(*v), cmp_pid);
	*out = v;
	return (int)n;
}

int proc_tasks_list(const char *root, pid_t pid, pid_t **tids)
{
	char path[PATH_MAX];
	int rc = cet_proc_path(path, sizeof(path), root, "%d/task", (int)pid);

	if (rc)
		return rc;
	return list_numeric(path, tids);
}

int proc_pids_list(const char *root, pid_t **pids)
{
	char path[PATH_MAX];
	int rc = cet_proc_path(path, sizeof(path), root, "%s", "");

	if (rc)
		return rc;
	return list_numeric(path, pids);
}

int proc_exe_read(const char *root, pid_t pid, char *buf, size_t size)
{
	char path[PATH_MAX];
	ssize_t n;
	int rc = cet_proc_path(path, sizeof(path), root, "%d/exe", (int)pid);

	if (rc)
		return rc;
	if (size == 0)
		return -EINVAL;
	n = readlink(path, buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return (int)n;
}

const char *proc_user_name(uid_t uid, char *buf, size_t size)
{
	/* One-entry memo: an audit sees long runs of the same user. */
	static uid_t last_uid = (uid_t)-1;
	static char last_name[64];
	struct passwd *pw;

	if (uid == (uid_t)-1) {
		snprintf(buf, size, "?");
		return buf;
	}
	if (uid != last_uid) {
		pw = getpwuid(uid);
		if (pw)
			snprintf(last_name, sizeof(last_name), "%s", pw->pw_name);
		else
			snprintf(last_name, sizeof(last_name), "%lu", (unsigned long)uid);
		last_uid = uid;
	}
	snprintf(buf, size, "%s", last_name);
	return buf;
}

int proc_user_parse(const char *s, uid_t *uid)
{
	struct passwd *pw;
	char *end;
	unsigned long v;

	pw = getpwnam(s);
	if (pw) {
		*uid = pw->pw_uid;
		return 0;
	}
	errno = 0;
	v = strtoul(s, &end, 10);
	if (*s && !*end && !errno && v < (unsigned long)(uid_t)-1) {
		*uid = (uid_t)v;
		return 0;
	}
	return -ENOENT;
}
