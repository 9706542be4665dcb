// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cetctl audit's exit-status policy (see audit-policy.h).
 */
#include <err.h>

#include "audit-policy.h"
#include "cetctl.h"

int audit_exit_status(const struct audit_counts *c, const char *require, const char *root,
		      int status)
{
	if (!require)
		return c->pids_unchecked ? CETCTL_EXIT_FAILURE : status;
	/* Fail closed, the most fundamental reason first. */
	if (c->offenders)
		warnx("audit: %lu of %lu processes do not meet --require %s", c->offenders,
		      c->checked, require);
	if (c->kernel_support == CET_NO) {
		warnx("audit: --require %s cannot be met: the kernel has no shadow-stack "
		      "support (no x86_Thread_features line in %s/self/status)", require,
		      root ? root : "/proc");
		return CETCTL_EXIT_UNSUPPORTED;
	}
	if (c->offenders)
		return CETCTL_EXIT_FAILURE;
	if (status != CETCTL_EXIT_OK)
		return status;
	if (!c->checked) {
		warnx("audit: --require %s: no process was checked (nothing matched the "
		      "selection)", require);
		return AUDIT_EXIT_UNCHECKED;
	}
	if (c->pids_unchecked || c->unreadable || c->unjudged) {
		unsigned long n = c->pids_unchecked + c->unreadable + c->unjudged;

		warnx("audit: --require %s: %lu selected process%s could not be checked",
		      require, n, n == 1 ? "" : "es");
		return AUDIT_EXIT_UNCHECKED;
	}
	if (c->hidepid[0]) {
		warnx("audit: --require %s: other users' processes could not be checked "
		      "(hidepid=%s)", require, c->hidepid);
		return AUDIT_EXIT_UNCHECKED;
	}
	return CETCTL_EXIT_OK;
}
