// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of cetctl audit's exit-status policy (src/audit-policy.c):
 * without --require only unchecked --pid entries fail; with it the policy
 * fails closed, the most fundamental reason first (cetctl-audit(1)).
 */
#include <stdio.h>
#include <string.h>

#include "audit-policy.h"
#include "cetctl.h"

static int failures, checks;

#define CHECK_EXIT(c, req, status, want) do {				\
	int got_ = audit_exit_status((c), (req), NULL, (status));	\
	checks++;							\
	if (got_ != (want)) {						\
		failures++;						\
		fprintf(stderr, "%s:%d: exit %d, want %d\n",		\
			__FILE__, __LINE__, got_, (want));		\
	}								\
} while (0)

/* A scan that checked @n processes, all fine, on a kernel with support. */
static struct audit_counts clean(unsigned long n)
{
	struct audit_counts c;

	memset(&c, 0, sizeof(c));
	c.scanned = c.checked = n;
	c.kernel_support = CET_YES;
	return c;
}

int main(void)
{
	struct audit_counts c;

	/* no policy: 0, or 1 for a --pid that could not be checked */
	c = clean(0);
	CHECK_EXIT(&c, NULL, CETCTL_EXIT_OK, CETCTL_EXIT_OK);
	c.kernel_support = CET_NO;
	c.offenders = 3;
	CHECK_EXIT(&c, NULL, CETCTL_EXIT_OK, CETCTL_EXIT_OK);
	c.pids_unchecked = 1;
	CHECK_EXIT(&c, NULL, CETCTL_EXIT_OK, CETCTL_EXIT_FAILURE);
	c = clean(5);
	CHECK_EXIT(&c, NULL, CETCTL_EXIT_FAILURE, CETCTL_EXIT_FAILURE);	/* metrics */

	/* --require: all checked and met */
	c = clean(5);
	CHECK_EXIT(&c, "shstk", CETCTL_EXIT_OK, CETCTL_EXIT_OK);
	/* offenders: 1; a kernel without support comes first: 2 */
	c.offenders = 2;
	CHECK_EXIT(&c, "shstk", CETCTL_EXIT_OK, CETCTL_EXIT_FAILURE);
	c.kernel_support = CET_NO;
	CHECK_EXIT(&c, "shstk", CETCTL_EXIT_OK, CETCTL_EXIT_UNSUPPORTED);
	c.offenders = 0;
	CHECK_EXIT(&c, "shstk", CETCTL_EXIT_OK, CETCTL_EXIT_UNSUPPORTED);
	/* unknown support is not "no": judged on what was checked */
	c = clean(5);
	c.kernel_support = CET_UNKNOWN;
	CHECK_EXIT(&c, "shstk", CETCTL_EXIT_OK, CETCTL_EXIT_OK);
	/* offenders before a failed metrics file; the metrics before "unchecked" */
	c = clean(5);
	c.offenders = 1;
	CHECK_EXIT(&c, "shstk", CETCTL_EXIT_FAILURE, CETCTL_EXIT_FAILURE);
	c = clean(0);
	CHECK_EXIT(&c, "shstk", CETCTL_EXIT_FAILURE, CETCTL_EXIT_FAILURE);

	/* fail closed: nothing checked, something not checked: 3 */
	c = clean(0);
	CHECK_EXIT(&c, "shstk", CETCTL_EXIT_OK, AUDIT_EXIT_UNCHECKED);
	c = clean(4);
	c.pids_unchecked = 1;
	CHECK_EXIT(&c, "shstk,locked", CETCTL_EXIT_OK, AUDIT_EXIT_UNCHECKED);
	c = clean(4);
	c.unreadable = 1;
	CHECK_EXIT(&c, "shstk", CETCTL_EXIT_OK, AUDIT_EXIT_UNCHECKED);
	c = clean(4);
	c.unjudged = 2;
	CHECK_EXIT(&c, "wrss", CETCTL_EXIT_OK, AUDIT_EXIT_UNCHECKED);
	c = clean(4);
	strcpy(c.hidepid, "invisible");
	CHECK_EXIT(&c, "shstk", CETCTL_EXIT_OK, AUDIT_EXIT_UNCHECKED);
	/* ... but offenders found are reported as offenders */
	c.offenders = 1;
	CHECK_EXIT(&c, "shstk", CETCTL_EXIT_OK, CETCTL_EXIT_FAILURE);

	printf("test-audit-policy: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
