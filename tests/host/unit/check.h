/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The unit tests' one assertion: CHECK(cond) counts the check and, when
 * cond is false, the failure, with its file and line on stderr. Each test
 * prints "N checks, M failed" and exits non-zero when M > 0. Included once,
 * by the test's own .c file.
 */
#ifndef CETCTL_UNIT_CHECK_H
#define CETCTL_UNIT_CHECK_H

#include <stdio.h>

static int failures, checks;

#define CHECK(cond) do {						\
	checks++;							\
	if (!(cond)) {							\
		failures++;						\
		fprintf(stderr, "%s:%d: check failed: %s\n",		\
			__FILE__, __LINE__, #cond);			\
	}								\
} while (0)

#endif
