// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

int cet_proc_path(char *buf, size_t size, const char *root, const char *fmt, ...)
{
	va_list ap;
	int n, m;

	if (!root || !*root)
		root = "/proc";
	n = snprintf(buf, size, "%s/", root);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	va_start(ap, fmt);
	m = vsnprintf(buf + n, size - (size_t)n, fmt, ap);
	va_end(ap);
	if (m < 0 || (size_t)m >= size - (size_t)n)
		return -ENAMETOOLONG;
	return 0;
}

long cet_read_file(const char *path, size_t max, char **out)
{
	return cet_read_file_at(AT_FDCWD, path, max, out);
}

long cet_read_file_at(int dirfd, const char *path, size_t max, char **out)
{
	size_t len = 0, cap = 4096;
	char *buf;
	int fd, saved;

	*out = NULL;
	/* O_NONBLOCK: never hang on a FIFO that was swapped in under us. */
	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	buf = malloc(cap + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t r;

		if (len == cap) {
			char *nb;

			if (cap >= max)
				break;
			cap = cap * 2 > max ? max : cap * 2;
			nb = realloc(buf, cap + 1);
			if (!nb) {
				free(buf);
				close(fd);
				return -ENOMEM;
			}
			buf = nb;
		}
		r = read(fd, buf + len, cap - len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			saved = errno;
			free(buf);
			close(fd);
			return -saved;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	buf[len] = '\0';
	*out = buf;
	return (long)len;
}

/* The root stays open for the next process: audit opens one per pid. */
static int root_fd(const char *root)
{
	static char cached[PATH_MAX];
	static int fd = -1;

	if (!root || !*root)
		root = "/proc";
	if (fd >= 0 && strcmp(cached, root) == 0)
		return fd;
	if (strlen(root) >= sizeof(cached))
		return -ENAMETOOLONG;
	if (fd >= 0)
		close(fd);
	fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	strcpy(cached, root);
	return fd;
}

int cet_proc_pid_open(const char *root, pid_t pid)
{
	char name[16];
	int rfd = root_fd(root), fd;

	if (rfd < 0)
		return rfd;
	snprintf(name, sizeof(name), "%d", (int)pid);
	fd = openat(rfd, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* Length of the valid UTF-8 sequence at @p (RFC 3629), 0 when invalid. */
static size_t utf8_seq_len(const unsigned char *p)
{
	unsigned char c = p[0];

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return (p[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		/* no overlongs (e0 80..9f), no surrogates (ed a0..bf) */
		unsigned char lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;

		return p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80 ? 3 : 0;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		/* no overlongs (f0 80..8f), nothing past U+10FFFF (f4 90..) */
		unsigned char lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;

		return p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80 &&
		       (p[3] & 0xc0) == 0x80 ? 4 : 0;
	}
	return 0;
}

int cet_utf8_sanitize(const char *s, char **out)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t bad = 0, len = 0, n;
	char *o;

	*out = NULL;
	/* The NUL ends every sequence early, so reads stay in the string. */
	for (; *p; p += n, len += n) {
		n = utf8_seq_len(p);
		if (!n) {
			bad++;
			n = 1;
		}
	}
	if (!bad)
		return 0;
	o = malloc(len + bad * 2 + 1);	/* 1 byte becomes 3 */
	if (!o)
		return -ENOMEM;
	*out = o;
	for (p = (const unsigned char *)s; *p; p += n) {
		n = utf8_seq_len(p);
		if (n) {
			memcpy(o, p, n);
			o += n;
		} else {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			n = 1;
		}
	}
	*o = '\0';
	return 1;
}

/* Undo mountinfo's octal escapes (\040 for a space...) in place. */
static void mountinfo_unescape(char *s)
{
	char *q = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*q++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*q++ = *s;
		}
	}
	*q = '\0';
}

int cet_proc_hidepid(const char *root, char *mode, size_t size, long *gid)
{
	char path[PATH_MAX], where[PATH_MAX], *buf, *line, *save = NULL;
	long n;
	int found = 0;

	*gid = -1;
	if (cet_proc_path(path, sizeof(path), root, "self/mountinfo"))
		return -ENAMETOOLONG;
	if (!realpath(root && *root ? root : "/proc", where))
		return -errno;
	n = cet_read_file(path, 1 << 22, &buf);
	if (n < 0)
		return (int)n;
	/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS...] - FSTYPE SOURCE SUPEROPTS */
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f[5], *sep, *fstype, *super, *opt, *osave = NULL, *tok, *tsave = NULL;
		int i;

		sep = strstr(line, " - ");
		if (!sep)
			continue;
		*sep = '\0';
		tok = strtok_r(line, " ", &tsave);
		for (i = 0; i < 5 && tok; i++, tok = strtok_r(NULL, " ", &tsave))
			f[i] = tok;
		fstype = strtok_r(sep + 3, " ", &tsave);
		if (i < 5 || !fstype || strcmp(fstype, "proc") != 0)
			continue;
		if (!strtok_r(NULL, " ", &tsave) || !(super = strtok_r(NULL, " ", &tsave)))
			continue;
		mountinfo_unescape(f[4]);
		if (strcmp(f[4], where) != 0)
			continue;
		/* the last mount on that point is the one seen: start over */
		found = 0;
		*gid = -1;
		for (opt = strtok_r(super, ",", &osave); opt; opt = strtok_r(NULL, ",", &osave)) {
			static const char *const names[] = { "off", "noaccess", "invisible", NULL, "ptraceable" };
			const char *v;

			if (strncmp(opt, "gid=", 4) == 0) {
				*gid = strtol(opt + 4, NULL, 10);
				continue;
			}
			if (strncmp(opt, "hidepid=", 8) != 0)
				continue;
			v = opt + 8;
			if (v[0] >= '0' && v[0] <= '4' && !v[1] && names[v[0] - '0'])
				v = names[v[0] - '0'];
			found = strcmp(v, "off") != 0;
			snprintf(mode, size, "%s", v);
		}
	}
	free(buf);
	return found;
}
