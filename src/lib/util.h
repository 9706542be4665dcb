/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef CETCTL_UTIL_H
#define CETCTL_UTIL_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Build "<root>/<path>" where root defaults to "/proc" (NULL or ""), so the
 * /proc readers can run against a recorded tree. Returns 0 or -ENAMETOOLONG.
 */
int cet_proc_path(char *buf, size_t size, const char *root, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * Read a whole (small) file into a NUL-terminated malloc'ed buffer, at most
 * @max bytes. Returns the length or -errno; *out is NULL on failure.
 */
long cet_read_file(const char *path, size_t max, char **out);

/* The same, @path relative to the directory @dirfd (or AT_FDCWD). */
long cet_read_file_at(int dirfd, const char *path, size_t max, char **out);

/*
 * Open the directory of process @pid under @root (NULL = /proc) as an
 * O_PATH descriptor. On procfs it pins the process: once that process is
 * reaped every lookup through it fails (-ENOENT, -ESRCH), even when its
 * pid has gone to a new process, so what is read through it belongs to
 * one process. Returns the descriptor or -errno.
 */
int cet_proc_pid_open(const char *root, pid_t pid);

/*
 * JSON must be UTF-8, names need not be: any local user can create a file
 * or process whose name is not. Returns 0 when @s is valid UTF-8 (*out is
 * NULL), 1 with *out a malloc'ed copy in which every byte that does not
 * belong to a valid sequence (stray continuation bytes, truncated, overlong,
 * surrogate or > U+10FFFF sequences) is replaced by U+FFFD, or -ENOMEM.
 */
int cet_utf8_sanitize(const char *s, char **out);

/*
 * The hidepid= option of the proc mount at @root (NULL: /proc), from
 * <root>/self/mountinfo: 1 when processes of other users may be hidden or
 * unreadable (@mode gets "noaccess", "invisible" or "ptraceable"; *@gid the
 * gid= exempt group, -1 for none), 0 when not (hidepid off, or @root is not
 * a proc mount: a recorded tree), -errno when mountinfo cannot be read.
 */
int cet_proc_hidepid(const char *root, char *mode, size_t size, long *gid);

#endif
