// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The names given to `cetctl elf` and, with -r, the trees under them:
 * names on the command line follow symlinks; in a tree nothing but
 * directories and regular files is opened, never through a symlink,
 * in name order, with loops and too deep nesting refused.
 */
#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cetctl.h"
#include "cmd-elf-internal.h"

#define MAX_DEPTH	128	/* directory nesting; deeper trees are refused */

struct dir_level {
	dev_t dev;
	ino_t ino;
};

static int walk(struct elf_ctl *ctl, int dfd, const char *path,
		struct dir_level *stack, int depth);

/*
 * @type: the entry's d_type. The kind the directory reports is enough to
 * decide (a regular file is fstat'ed again once open, so one swapped in
 * meanwhile is refused); only DT_UNKNOWN costs an fstatat first.
 */
static int walk_entry(struct elf_ctl *ctl, int dirfd, const char *dirpath, const char *name,
		      unsigned char type, struct dir_level *stack, int depth)
{
	char *path;
	struct stat st;
	int fd, rc = 0;

	if (asprintf(&path, "%s%s%s", dirpath,
		     dirpath[strlen(dirpath) - 1] == '/' ? "" : "/", name) < 0)
		err(CETCTL_EXIT_FAILURE, "out of memory");
	if (type == DT_UNKNOWN) {
		if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			elf_error(ctl, path, errno, NULL);
			ctl->sum.errors++;
			free(path);
			return -1;
		}
		type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_LNK;
	}
	if (type == DT_DIR) {
		fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			elf_error(ctl, path, errno, NULL);
			ctl->sum.errors++;
			rc = -1;
		} else {
			rc = walk(ctl, fd, path, stack, depth + 1);	/* closes fd */
		}
	} else if (type == DT_REG) {
		fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd < 0) {
			elf_error(ctl, path, errno, NULL);
			ctl->sum.errors++;
			rc = -1;
		} else {
			rc = elf_do_fd(ctl, fd, path, false);
			close(fd);
		}
	}
	/* symlinks, FIFOs, sockets, devices: never opened */
	free(path);
	return rc;
}

struct dir_entry {
	char *name;
	unsigned char type;	/* d_type */
};

static int cmp_names(const void *a, const void *b)
{
	return strcmp(((const struct dir_entry *)a)->name, ((const struct dir_entry *)b)->name);
}

/* Walk the directory open on @dfd (closed here), in name order. */
static int walk(struct elf_ctl *ctl, int dfd, const char *path,
		struct dir_level *stack, int depth)
{
	struct stat st;
	DIR *d;
	struct dirent *de;
	struct dir_entry *names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	if (fstat(dfd, &st) < 0) {
		elf_error(ctl, path, errno, NULL);
		close(dfd);
		ctl->sum.errors++;
		return -1;
	}
	if (depth >= MAX_DEPTH) {
		elf_error(ctl, path, 0, "directories nested too deeply");
		close(dfd);
		ctl->sum.errors++;
		return -1;
	}
	/* A bind mount can make a tree contain itself: refuse to go round. */
	for (int i = 0; i < depth; i++) {
		if (stack[i].dev == st.st_dev && stack[i].ino == st.st_ino) {
			elf_error(ctl, path, 0, "directory loop, not descending");
			close(dfd);
			ctl->sum.errors++;
			return -1;
		}
	}
	stack[depth].dev = st.st_dev;
	stack[depth].ino = st.st_ino;

	d = fdopendir(dfd);
	if (!d) {
		elf_error(ctl, path, errno, NULL);
		close(dfd);
		ctl->sum.errors++;
		return -1;
	}
	while ((errno = 0, de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (n == cap) {
			struct dir_entry *nn = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof(*nn));

			if (!nn)
				err(CETCTL_EXIT_FAILURE, "out of memory");
			names = nn;
		}
		names[n].name = strdup(de->d_name);
		names[n].type = de->d_type;
		if (!names[n].name)
			err(CETCTL_EXIT_FAILURE, "out of memory");
		n++;
	}
	if (errno) {
		elf_error(ctl, path, errno, NULL);
		ctl->sum.errors++;
		rc = -1;
	}
	if (n)
		qsort(names, n, sizeof(*names), cmp_names);
	for (size_t i = 0; i < n; i++) {
		if (walk_entry(ctl, dirfd(d), path, names[i].name, names[i].type, stack, depth) < 0)
			rc = -1;
		free(names[i].name);
	}
	free(names);
	closedir(d);
	return rc;
}

int elf_do_arg(struct elf_ctl *ctl, const char *path)
{
	struct dir_level stack[MAX_DEPTH];
	struct stat st;
	int fd, rc;

	/* Command-line names follow symlinks (a loop fails with ELOOP). */
	if (stat(path, &st) < 0) {
		elf_error(ctl, path, errno, NULL);
		ctl->sum.errors++;
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		if (!ctl->recursive) {
			elf_error(ctl, path, EISDIR, "is a directory (use --recursive)");
			ctl->sum.errors++;
			return -1;
		}
		fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0) {
			elf_error(ctl, path, errno, NULL);
			ctl->sum.errors++;
			return -1;
		}
		return walk(ctl, fd, path, stack, 0);
	}
	if (!S_ISREG(st.st_mode)) {
		elf_error(ctl, path, 0, "not a regular file");
		ctl->sum.errors++;
		return -1;
	}
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		elf_error(ctl, path, errno, NULL);
		ctl->sum.errors++;
		return -1;
	}
	rc = elf_do_fd(ctl, fd, path, true);
	close(fd);
	return rc;
}
