// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The user namespace of this process, from /proc (or a recorded tree):
 * its uid_map says whether it is the initial namespace, the overflowuid
 * sysctl which uid an owner not mapped into it shows as. In another
 * namespace, files of host root show as that overflow uid, indistinguishable
 * from any other outside user's; the caller decides what to trust.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc-userns.h"
#include "util.h"

/* Read one unsigned number of at most 32 bits at *p, blanks before it. */
static int map_number(const char **p, unsigned long *v)
{
	char *end;

	*p += strspn(*p, " \t");
	if (!isdigit((unsigned char)**p))
		return -EINVAL;
	errno = 0;
	*v = strtoul(*p, &end, 10);
	if (errno || *v > UINT32_MAX)
		return -EINVAL;
	*p = end;
	return 0;
}

/*
 * Whether the text of a uid_map is that of the initial user namespace: one
 * line mapping all 2^32 - 1 uids to themselves ("0 0 4294967295"). Returns
 * 1 for it, 0 for any other map, -EINVAL for text that is no uid_map (an
 * empty one among them: a namespace whose map is not written yet).
 */
int proc_uid_map_initial(const char *text)
{
	const char *p = text;
	int lines = 0, identity = 0;

	while (*p) {
		unsigned long v[3];

		for (int i = 0; i < 3; i++)
			if (map_number(&p, &v[i]) < 0)
				return -EINVAL;
		p += strspn(p, " \t");
		if (*p == '\n')
			p++;
		else if (*p)
			return -EINVAL;
		identity = v[0] == 0 && v[1] == 0 && v[2] == UINT32_MAX;
		lines++;
	}
	if (!lines)
		return -EINVAL;
	return lines == 1 && identity;
}

/*
 * Which user namespace this process is in, under @root (NULL: /proc).
 * Fails closed: when self/uid_map cannot be read or understood, @ns says
 * the initial namespace and the error is returned. The overflow uid falls
 * back to the kernel's default when sys/kernel/overflowuid is unreadable.
 */
int proc_userns_read(const char *root, struct proc_userns *ns)
{
	char path[PATH_MAX], *text;
	unsigned long v;
	long n;
	int r;

	ns->initial = true;
	ns->overflow = USERNS_OVERFLOW_UID_DEFAULT;
	if (cet_proc_path(path, sizeof(path), root, "sys/kernel/overflowuid") == 0 &&
	    cet_read_file(path, 64, &text) >= 0) {
		const char *p = text;

		if (map_number(&p, &v) == 0 && (*p == '\n' || !*p))
			ns->overflow = (uid_t)v;
		free(text);
	}
	r = cet_proc_path(path, sizeof(path), root, "self/uid_map");
	if (r < 0)
		return r;
	n = cet_read_file(path, 1 << 16, &text);
	if (n < 0)
		return (int)n;
	r = proc_uid_map_initial(text);
	free(text);
	if (r < 0)
		return r;
	ns->initial = r;
	return 0;
}

/* The owner of this process's executable (self/exe under @root) as it
 * shows in this namespace, in @uid. Returns 0 or -errno. */
int proc_self_exe_owner(const char *root, uid_t *uid)
{
	char path[PATH_MAX];
	struct stat st;
	int fd, r;

	r = cet_proc_path(path, sizeof(path), root, "self/exe");
	if (r < 0)
		return r;
	/* O_PATH: an executable cetctl cannot read (mode 0711) is still seen */
	fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = fstat(fd, &st) < 0 ? -errno : 0;
	close(fd);
	if (r == 0)
		*uid = st.st_uid;
	return r;
}
