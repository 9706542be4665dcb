// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * LD_PRELOAD shim for the host tests: gnu_get_libc_version() answers
 * $CETCTL_TEST_GLIBC_VERSION, so a test can ask what cetctl concludes on a
 * newer glibc than this host's, with this host's (unmarked) libc.so.6.
 */
#include <stdlib.h>

const char *gnu_get_libc_version(void)
{
	const char *v = getenv("CETCTL_TEST_GLIBC_VERSION");

	return v ? v : "2.36";
}
