/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cetctl audit: what a scan counted, and the exit status it earns (the
 * policy of cetctl-audit(1), EXIT STATUS), apart from the scan so that it
 * can be tested on its own (tests/host/unit/test-audit-policy.c).
 */
#ifndef CETCTL_AUDIT_POLICY_H
#define CETCTL_AUDIT_POLICY_H

#include <stdbool.h>

#include "sysinfo-cet.h"

/*
 * With --require the policy fails closed: a run that could not check what
 * was asked has its own exit status (documented in cetctl-audit(1)).
 */
#define AUDIT_EXIT_UNCHECKED	3	/* nothing, or not everything, was checked */

struct audit_counts {
	unsigned long scanned;		/* user processes shown or judged */
	unsigned long kthreads, zombies, vanished, unreadable;
	unsigned long enabled_locked, enabled_unlocked, disabled, mixed, wrss;
	unsigned long no_kernel_support;
	unsigned long offenders;
	/*
	 * For the metrics and the exit status: processes judged against the
	 * policy (0 without --require), --pid entries that could not be
	 * judged (missing, kernel thread, zombie), and whether the kernel
	 * reports shadow-stack state at all (<root>/self/status has the
	 * x86_Thread_features line; CET_UNKNOWN when that cannot be read and
	 * no process told either way).
	 */
	unsigned long checked;
	unsigned long pids_unchecked;
	enum cet_tri kernel_support;
	/*
	 * What a user without ptrace access to other users' processes meets:
	 * processes read only in part (status yes, but the executable, smaps
	 * or a thread refused: their MARKING, EXE, SS-* unknown), processes
	 * not read at all (counted in unreadable), processes whose threads
	 * could not all be judged against --require, and /proc's hidepid=
	 * when it hides other users' processes from this user ("" when not).
	 */
	unsigned long partial, unjudged;
	int partial_errno, unreadable_errno;
	const char *partial_what;
	char hidepid[16];
};

/*
 * The exit status of a scan that counted @c: @require (NULL: no policy)
 * as given, @root the /proc read (NULL: /proc), @status what the run has
 * earned so far (CETCTL_EXIT_FAILURE when the metrics could not be
 * written). Without --require: 1 when a --pid could not be checked. With
 * it, failing closed, the most fundamental reason first: 2 no kernel
 * support, 1 offenders, 3 nothing or not everything checked. Says why on
 * stderr.
 */
int audit_exit_status(const struct audit_counts *c, const char *require, const char *root,
		      int status);

#endif
