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
