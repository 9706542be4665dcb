// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The processes the program forks before its entry point (the glibc
 * method: its loader and its libraries' constructors run traced). They run
 * the program's start-up code as it would have without us, but when the
 * start-up then fails, "the program did not run" must stay true of them
 * too: each is held by a pidfd taken at its fork's exit stop, and killed
 * when the start-up fails (a pidfd, not the pid: by then the program may
 * have reaped the child and the pid may be another process's). At that
 * stop the program is stopped, so the child, even one that has exited,
 * cannot have been reaped yet: its pid is still its own. Not held: a
 * thread (it dies with the process), a child already gone, and what the
 * children fork themselves (they are not traced).
 * Calls only the result's failure helper.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shstk-launch-internal.h"

int launch_hold_fork(struct launch *l, long long rval)
{
	pid_t child = (pid_t)rval;
	int fd;

	if (rval <= 0)
		return 0;	/* the call failed */
	fd = (int)syscall(SYS_pidfd_open, child, 0);
	if (fd < 0 && (errno == EINVAL || errno == ESRCH))
		return 0;	/* a thread (not a group leader), or gone */
	if (fd < 0 || l->nforks == MAX_FORKS) {
		int err = fd < 0 ? -errno : -E2BIG;

		if (fd >= 0)
			close(fd);
		kill(child, SIGKILL);	/* safe here: not reaped yet */
		return launch_fail(l, LAUNCH_TRACE, err, fd < 0 ?
			"pidfd_open of a process it forked before its entry point" :
			"more than 64 processes forked before its entry point");
	}
	l->forks[l->nforks++] = fd;
	return 0;
}

void launch_kill_forks(struct launch *l)
{
	int i;

	for (i = 0; i < l->nforks; i++) {
		/* readable: it has exited already (counted only if it ran on) */
		struct pollfd p = { .fd = l->forks[i], .events = POLLIN };
		bool gone = poll(&p, 1, 0) == 1;

		if (syscall(SYS_pidfd_send_signal, l->forks[i], SIGKILL, NULL, 0U) == 0 && !gone)
			l->res->forks_killed++;
		close(l->forks[i]);
	}
	l->nforks = 0;
}

void launch_release_forks(struct launch *l)
{
	int i;

	for (i = 0; i < l->nforks; i++)
		close(l->forks[i]);
	l->nforks = 0;
}
