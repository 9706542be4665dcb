/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Job control for `cetctl run` as PID 1 or a child subreaper
 * (run-jobctl.c): the program's process group and the terminal, its stops,
 * and which signals cetctl passes on to it.
 */
#ifndef CETCTL_RUN_JOBCTL_H
#define CETCTL_RUN_JOBCTL_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

struct jobctl {
	pid_t child;	/* the program */
	bool own_group;	/* the program has a process group of its own */
	int tty;	/* our controlling terminal, when our group had its
			 * foreground at the start; -1 otherwise */
};

void jobctl_init(struct jobctl *jc);
void jobctl_child(const struct jobctl *jc);
void jobctl_parent(struct jobctl *jc, pid_t child);
bool jobctl_pass_on(const struct jobctl *jc, const siginfo_t *si);
void jobctl_stopped(const struct jobctl *jc, int sig);
void jobctl_continued(const struct jobctl *jc);
void jobctl_ended(const struct jobctl *jc);

#endif
