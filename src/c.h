/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Small helpers every part of cetctl may use, the front end and the library
 * alike (the library reaches this directory for this file only). Nothing
 * here prints or allocates.
 *
 * No allocation wrappers that exit (xmalloc): the library returns -ENOMEM
 * and the front end says "out of memory" where it matters, so a failure
 * always comes out as the command's own message and exit status.
 */
#ifndef CETCTL_C_H
#define CETCTL_C_H

#include <string.h>

/* The number of elements of an array (not a pointer). */
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* The symbolic name of an errno value ("EPERM"), "?" when unknown. */
static inline const char *errname(int err)
{
	const char *n = strerrorname_np(err);

	return n ? n : "?";
}

#endif
