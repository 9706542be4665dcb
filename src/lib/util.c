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
