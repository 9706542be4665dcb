// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf-deps.h"
#include "elf-notes.h"
#include "proc-marking.h"
#include "why-off.h"

/* How far into a loader to look for glibc's banner. */
#define BANNER_SCAN_MAX		(64UL * 1024 * 1024)
#define BANNER_CHUNK		65536
#define BANNER_OVERLAP		64

struct marking_entry {
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	int marking;
	/* the object facts, read on demand */
	bool have_dyn, have_version;
	int dyn_rc;
	struct elf_dyn_names *dyn;
	char version[16];
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
	for (size_t i = 0; i < c->n; i++) {
		if (c->e[i].dyn)
			elf_dyn_names_free(c->e[i].dyn);
		free(c->e[i].dyn);
	}
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

static struct marking_entry *remember(struct cet_marking_cache *c, const struct stat *sb,
				      int marking)
{
	struct marking_entry *e;

	if (!c)
		return NULL;
	if (c->n == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 16;
		struct marking_entry *ne = realloc(c->e, ncap * sizeof(*ne));

		if (!ne)
			return NULL;	/* a cache miss later is fine */
		c->e = ne;
		c->cap = ncap;
	}
	e = &c->e[c->n++];
	memset(e, 0, sizeof(*e));
	e->dev = sb->st_dev;
	e->ino = sb->st_ino;
	e->mtime = sb->st_mtim;
	e->marking = marking;
	return e;
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

/* glibc's "release version X.Y" banner in the file open on @fd. */
static void read_banner(int fd, char *version, size_t size)
{
	char *buf = malloc(BANNER_CHUNK);
	off_t off = 0;

	version[0] = '\0';
	if (!buf)
		return;
	while ((unsigned long)off < BANNER_SCAN_MAX) {
		ssize_t n = pread(fd, buf, BANNER_CHUNK, off);

		if (n <= 0)
			break;
		if (why_glibc_banner_version(buf, (size_t)n, version, size))
			break;
		if (n < BANNER_CHUNK)
			break;
		/* overlap the chunks: a banner may straddle two */
		off += n - BANNER_OVERLAP;
	}
	free(buf);
}

int cet_object_facts_of(int dirfd, const char *path, struct cet_marking_cache *c,
			bool want_version, struct cet_object_facts *out)
{
	struct marking_entry *e;
	struct stat sb, fsb;
	int fd, rc;

	memset(out, 0, sizeof(*out));
	out->marking = -ENOENT;
	out->dyn_rc = -ENOENT;
	if (!c)
		return -EINVAL;
	/* the marking first, the way every caller reads it (and cached) */
	rc = cet_marking_of(dirfd, path, c);
	out->marking = rc;
	if (rc < 0 && rc != -EBADMSG)
		return rc;
	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &fsb) != 0 || fstatat(dirfd, path, &sb, 0) != 0 ||
	    !S_ISREG(fsb.st_mode)) {
		close(fd);
		return -ENOEXEC;
	}
	e = lookup(c, &fsb);
	if (!e)
		e = remember(c, &fsb, out->marking);
	if (!e) {
		close(fd);
		return -ENOMEM;
	}
	if (!e->have_dyn) {
		e->dyn = calloc(1, sizeof(*e->dyn));
		e->dyn_rc = e->dyn ? elf_dyn_names_read_fd(fd, e->dyn) : -ENOMEM;
		e->have_dyn = true;
	}
	if (want_version && !e->have_version) {
		read_banner(fd, e->version, sizeof(e->version));
		e->have_version = true;
	}
	close(fd);
	out->marking = e->marking;
	out->dyn_rc = e->dyn_rc;
	if (e->dyn_rc == 0) {
		out->soname = e->dyn->soname;
		out->interp = e->dyn->interp;
		out->needed = (const char *const *)e->dyn->needed;
		out->nneeded = e->dyn->nneeded;
	}
	snprintf(out->version, sizeof(out->version), "%s", e->version);
	return 0;
}
