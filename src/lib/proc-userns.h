/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The user namespace this process runs in, as far as judging the owners of
 * files needs it (proc-userns.c): whether it is the initial one, which uid
 * the files of users not mapped into it show, and who owns the running
 * executable.
 */
#ifndef CETCTL_PROC_USERNS_H
#define CETCTL_PROC_USERNS_H

#include <stdbool.h>
#include <sys/types.h>

/* The kernel's default overflowuid, when the sysctl cannot be read. */
#define USERNS_OVERFLOW_UID_DEFAULT	65534

struct proc_userns {
	bool initial;	/* the initial user namespace, or not known to be another */
	uid_t overflow;	/* what stat() shows as the owner of an unmapped user's file */
};

int proc_uid_map_initial(const char *text);
int proc_userns_read(const char *root, struct proc_userns *ns);
int proc_self_exe_owner(const char *root, uid_t *uid);

#endif
