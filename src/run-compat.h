/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The compatibility verdict (lib/compat.h) before a `cetctl run --shstk`
 * start-up: a known-incompatible program is refused before anything of it
 * runs (125), unless --force-incompatible; a program that switches stacks
 * where nothing mends it, or that cannot be judged, runs with a warning
 * (not with --quiet). Marked, forced-safe and covered programs run
 * without a word.
 */
#ifndef CETCTL_RUN_COMPAT_H
#define CETCTL_RUN_COMPAT_H

#include "compat.h"
#include "run-plan.h"

enum run_compat_action {
	RUN_COMPAT_GO,		/* nothing to say */
	RUN_COMPAT_WARN,	/* a warning, then the start-up */
	RUN_COMPAT_FORCED,	/* incompatible, forced: a warning, then the start-up */
	RUN_COMPAT_REFUSE,	/* incompatible: not run (125) */
};

/* What run does with a verdict of class @c. Pure. */
enum run_compat_action run_compat_action(const struct run_opts *o, enum compat_class c);

/*
 * Judge the program @path (a script: its interpreter) as the plan @p for
 * the facts @f would start it, and say the refusal or the warning
 * (run_say()). A refusal of the plan's own
 * (p->refusal) comes after a refusal here and silences the warnings.
 * Returns 0 to go on, or the exit status (125).
 */
int run_compat(const struct run_opts *o, const struct run_facts *f, const struct run_plan *p,
	       const char *path);

#endif
