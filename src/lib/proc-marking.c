// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf-notes.h"
#include "proc-marking.h"

struct marking_entry {
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	int marking;
};

struct cet_marking_cache {
	struct marking_entry *e;
	size_t n, cap;
};

struct cet_marking_cache *cet_marking_cache_new(void)
{
	return calloc(1, sizeof(struct cet_marking_cache));
}

void cet_marking_cache_free(struct cet_marking_cache *c)
{
	if (!c)
		return;
	free(c->e);
	free(c);
}

static struct marking_entry *lookup(struct cet_marking_cache *c, const struct stat *sb)
{
	size_t i;

	for (i = 0; c && i < c->n; i++)
		if (c->e[i].dev == sb->st_dev && c->e[i].ino == sb->st_ino &&
		    c->e[i].mtime.tv_sec == sb->st_mtim.tv_sec &&
		    c->e[i].mtime.tv_nsec == sb->st_mtim.tv_nsec)
			return &c->e[i];
	return NULL;
}

static void remember(struct cet_marking_cache *c, const struct stat *sb, int marking)
{
	if (!c)
		return;
	if (c->n == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 16;
		struct marking_entry *ne = realloc(c->e, ncap * sizeof(*ne));

		if (!ne)
			return;	/* a cache miss later is fine */
		c->e = ne;
		c->cap = ncap;
	}
	c->e[c->n].dev = sb->st_dev;
	c->e[c->n].ino = sb->st_ino;
	c->e[c->n].mtime = sb->st_mtim;
	c->e[c->n].marking = marking;
	c->n++;
}

int cet_marking_of(int dirfd, const char *path, void *cache)
{
	struct cet_marking_cache *c = cache;
	struct elf_cet_info info;
	struct marking_entry *hit;
	struct stat sb, fsb;
	int fd, rc;

	/* A stat is enough when the file was read before: an audit meets the
	 * same few executables thousands of times. */
	if (fstatat(dirfd, path, &sb, 0) != 0)
		return -errno;
	if (!S_ISREG(sb.st_mode))
		return -ENOEXEC;
	hit = lookup(c, &sb);
	if (hit)
		return hit->marking;

	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &fsb) != 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	/* Swapped between the stat and the open: judge what was opened. */
	if (!S_ISREG(fsb.st_mode)) {
		close(fd);
		return -ENOEXEC;
	}
	rc = elf_cet_read_fd(fd, fsb.st_size, &info);
	close(fd);
	if (rc == 0)
		rc = info.loader_ok ? (int)info.loader_feature_1_and : 0;
	if (rc >= 0 || rc == -ENOEXEC || rc == -EBADMSG)
		remember(c, &fsb, rc);
	return rc;
}
