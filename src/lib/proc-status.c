// SPDX-License-Identifier: GPL-2.0-or-later
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "c.h"
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

/*
 * The fields cetctl reads, by the length of their key: a status file has
 * some sixty lines and every process has one, so each line costs one
 * memchr and at most one compare.
 */
enum status_key {
	K_NONE, K_NAME, K_STATE, K_TGID, K_PID, K_PPID, K_UID, K_THREADS,
	K_KTHREAD, K_VMSIZE, K_FEATURES, K_LOCKED,
};

static enum status_key status_key(const char *key, size_t len)
{
#define KEY(s, k) { s, sizeof(s) - 1, k }
	static const struct { const char *s; size_t len; enum status_key k; } keys[] = {
		KEY("Name", K_NAME), KEY("State", K_STATE), KEY("Tgid", K_TGID),
		KEY("Pid", K_PID), KEY("PPid", K_PPID), KEY("Uid", K_UID),
		KEY("Threads", K_THREADS), KEY("Kthread", K_KTHREAD),
		KEY("VmSize", K_VMSIZE), KEY("x86_Thread_features", K_FEATURES),
		KEY("x86_Thread_features_locked", K_LOCKED),
	};
#undef KEY
	size_t i;

	for (i = 0; i < ARRAY_SIZE(keys); i++)
		if (keys[i].len == len && memcmp(keys[i].s, key, len) == 0)
			return keys[i].k;
	return K_NONE;
}

/*
 * The Name: value as the command name really is: the kernel escapes it for
 * the one-line format (6.1: "\\" for a backslash, "\n" for a newline;
 * older kernels more of the C escapes, and octal \NNN), so "a\\b" is the
 * process called a\b, which is what comm, ps and prctl(PR_SET_NAME) say
 * and what --comm matches. An unknown escape is kept as it is.
 */
static void name_unescape(char *out, size_t size, const char *v, size_t len)
{
	size_t i = 0, o = 0;

	while (i < len && o + 1 < size) {
		char c = v[i++];

		if (c == '\\' && i < len) {
			static const char from[] = "\\\"ntrfvae", to[] = "\\\"\n\t\r\f\v\a\033";
			char e = v[i];
			const char *hit = e ? strchr(from, e) : NULL;

			if (hit) {
				c = to[hit - from];
				i++;
			} else if (e >= '0' && e <= '3' && i + 2 < len &&
				   v[i + 1] >= '0' && v[i + 1] <= '7' && v[i + 2] >= '0' && v[i + 2] <= '7') {
				c = (char)((e - '0') * 64 + (v[i + 1] - '0') * 8 + (v[i + 2] - '0'));
				i += 3;
			}
		}
		out[o++] = c;
	}
	out[o] = '\0';
}

static enum status_key line_key(const char *line, size_t linelen)
{
	const char *colon = memchr(line, ':', linelen);
	size_t len;

	if (!colon)
		return K_NONE;
	len = (size_t)(colon - line);
	/* Cheap rejection first: the key lengths we want and a first letter. */
	switch (len) {
	case 3: case 4: case 5: case 6: case 7:
		if (line[0] != 'N' && line[0] != 'S' && line[0] != 'T' && line[0] != 'P' &&
		    line[0] != 'U' && line[0] != 'K' && line[0] != 'V')
			return K_NONE;
		break;
	case 19: case 26:
		if (line[0] != 'x')
			return K_NONE;
		break;
	default:
		return K_NONE;
	}
	return status_key(line, len);
}

static unsigned long field_ulong(const char *v)
{
	return strtoul(v, NULL, 10);
}

int proc_status_parse(const char *text, struct proc_status *st)
{
	const char *line = text;
	bool seen_name = false;

	memset(st, 0, sizeof(*st));
	st->kthread = -1;
	st->euid = (uid_t)-1;
	while (*line) {
		const char *nl = strchr(line, '\n'), *v;
		size_t linelen = nl ? (size_t)(nl - line) : strlen(line);
		enum status_key k = line_key(line, linelen);

		if (k != K_NONE) {
			v = memchr(line, ':', linelen) + 1;
			while (*v == ' ' || *v == '\t')
				v++;
			switch (k) {
			case K_NAME:
				name_unescape(st->name, sizeof(st->name), v,
					      linelen - (size_t)(v - line));
				seen_name = true;
				break;
			case K_STATE:
				st->state = *v;
				break;
			case K_TGID:
				st->tgid = (pid_t)field_ulong(v);
				break;
			case K_PID:
				st->pid = (pid_t)field_ulong(v);
				break;
			case K_PPID:
				st->ppid = (pid_t)field_ulong(v);
				break;
			case K_UID: {
				/* "real effective saved fs": the second one */
				char *end;

				strtoul(v, &end, 10);
				if (end != v && (*end == '\t' || *end == ' ')) {
					const char *e = end;
					unsigned long uid = strtoul(e, &end, 10);

					if (end != e)
						st->euid = (uid_t)uid;
				}
				break;
			}
			case K_THREADS:
				st->threads = (int)field_ulong(v);
				break;
			case K_KTHREAD:
				st->kthread = *v == '1';
				break;
			case K_VMSIZE:
				st->has_vm = true;
				break;
			case K_FEATURES:
				cet_feature_words_parse(v, &st->features);
				break;
			case K_LOCKED:
				cet_feature_words_parse(v, &st->locked);
				break;
			case K_NONE:
				break;
			}
		}
		if (!nl)
			break;
		line = nl + 1;
	}
	return seen_name ? 0 : -EINVAL;
}

/*
 * A status file is one seq_file record: the kernel renders it whole, and a
 * read with room for all of it returns all of it, so a short first read is
 * the end of the file (a regular file in a recorded tree reads the same
 * way). That spares the read that would return 0, one system call for
 * every process and thread an audit sees. A file that fills the buffer is
 * read again, whole.
 */
static int status_read_parse(int dirfd, const char *path, struct proc_status *st)
{
	char buf[8192], *text;
	ssize_t r;
	long n;
	int fd, rc;

	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	do
		r = read(fd, buf, sizeof(buf) - 1);
	while (r < 0 && errno == EINTR);
	rc = r < 0 ? -errno : 0;
	close(fd);
	if (rc)
		return rc;
	if ((size_t)r < sizeof(buf) - 1) {
		buf[r] = '\0';
		/* An empty status: the task went away between open and read. */
		return r == 0 ? -ESRCH : proc_status_parse(buf, st);
	}
	n = cet_read_file_at(dirfd, path, STATUS_MAX, &text);
	if (n < 0)
		return (int)n;
	rc = n == 0 ? -ESRCH : proc_status_parse(text, st);
	free(text);
	return rc;
}

int proc_status_read(const char *root, pid_t pid, pid_t tid, struct proc_status *st)
{
	char path[PATH_MAX];
	int rc;

	if (tid)
		rc = cet_proc_path(path, sizeof(path), root, "%d/task/%d/status", (int)pid, (int)tid);
	else
		rc = cet_proc_path(path, sizeof(path), root, "%d/status", (int)pid);
	if (rc)
		return rc;
	return status_read_parse(AT_FDCWD, path, st);
}

int proc_status_read_at(int piddir, pid_t tid, struct proc_status *st)
{
	char path[64];

	if (tid)
		snprintf(path, sizeof(path), "task/%d/status", (int)tid);
	else
		snprintf(path, sizeof(path), "status");
	return status_read_parse(piddir, path, st);
}

/* The fields after "pid (comm) ": comm may hold anything, so from the last ')'. */
static const char *stat_after_comm(const char *text)
{
	const char *p = strrchr(text, ')');

	return p && p[1] == ' ' ? p + 2 : NULL;
}

char proc_stat_state_at(int piddir)
{
	char *text, state = 0;
	const char *p;

	if (cet_read_file_at(piddir, "stat", 4096, &text) <= 0) {
		free(text);	/* an empty read still returns a buffer */
		return 0;
	}
	p = stat_after_comm(text);
	if (p)
		state = *p;
	free(text);
	return state;
}

bool proc_is_kthread_at(int piddir, const struct proc_status *st)
{
	unsigned long flags = 0;
	const char *p;
	char *text;
	bool kt = false;
	int i;

	if (st->kthread >= 0)
		return st->kthread == 1;
	if (st->has_vm || st->state == 'Z')
		return false;
	/* Older kernels: field 9 of stat holds PF_KTHREAD. */
	if (cet_read_file_at(piddir, "stat", 4096, &text) <= 0) {
		free(text);	/* an empty read still returns a buffer */
		return false;
	}
	p = stat_after_comm(text);
	for (i = 0; p && i < 6; i++)
		p = strchr(p + 1, ' ');
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

/* Takes @fd (a directory opened for reading) and closes it. */
static int list_numeric(int fd, pid_t **out)
{
	struct dirent *de;
	size_t n = 0, cap = 64;
	pid_t *v;
	DIR *d;

	*out = NULL;
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		int e = errno;

		close(fd);
		return -e;
	}
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

int proc_tasks_list_at(int piddir, pid_t **tids)
{
	return list_numeric(openat(piddir, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC), tids);
}

int proc_pids_list(const char *root, pid_t **pids)
{
	char path[PATH_MAX];
	int rc = cet_proc_path(path, sizeof(path), root, "%s", "");

	if (rc)
		return rc;
	return list_numeric(open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), pids);
}

int proc_exe_read_at(int piddir, char *buf, size_t size)
{
	ssize_t n;

	if (size == 0)
		return -EINVAL;
	n = readlinkat(piddir, "exe", buf, size - 1);
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

/* The unit named by cgroup path @path (modified), or NULL. */
static const char *unit_of_path(char *path)
{
	static const char *const kinds[] = { ".service", ".scope", ".socket", ".mount", ".swap" };
	const char *unit = NULL, *slice = NULL;
	char *comp, *save = NULL;

	for (comp = strtok_r(path, "/", &save); comp; comp = strtok_r(NULL, "/", &save)) {
		size_t len = strlen(comp), i;

		for (i = 0; i < ARRAY_SIZE(kinds); i++) {
			size_t k = strlen(kinds[i]);

			if (len > k && strcmp(comp + len - k, kinds[i]) == 0)
				unit = comp;
		}
		if (len > 6 && strcmp(comp + len - 6, ".slice") == 0)
			slice = comp;
	}
	return unit ? unit : slice;
}

int proc_unit_read(const char *root, pid_t pid, char *buf, size_t size)
{
	char path[PATH_MAX], *text, *line, *save = NULL, *v1 = NULL, *v2 = NULL;
	const char *unit = NULL;
	long n;

	buf[0] = '\0';
	if (cet_proc_path(path, sizeof(path), root, "%d/cgroup", (int)pid))
		return -ENAMETOOLONG;
	n = cet_read_file(path, 1 << 16, &text);
	if (n < 0)
		return (int)n;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "0::", 3) == 0)
			v2 = line + 3;
		else if (strstr(line, ":name=systemd:"))
			v1 = strstr(line, ":name=systemd:") + 14;
	}
	if (v2)
		unit = unit_of_path(v2);
	if (!unit && v1)
		unit = unit_of_path(v1);
	if (unit)
		snprintf(buf, size, "%s", unit);
	free(text);
	return 0;
}
