// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Reading another thread's SSP. PTRACE_SEIZE + PTRACE_INTERRUPT rather than
 * PTRACE_ATTACH: no SIGSTOP is queued, so a thread that is itself stopped
 * or that handles SIGSTOP is left as it was after the detach.
 */
#include <errno.h>
#include <stddef.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "cet-abi.h"
#include "ptrace-ssp.h"

int ptrace_read_ssp(pid_t tid, unsigned long *ssp)
{
	struct iovec iov = { .iov_base = ssp, .iov_len = sizeof(*ssp) };
	int ret = 0, st;

	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) < 0)
		return -errno;
	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) < 0) {
		ret = -errno;
		goto out;
	}
	/* the group-stop-like trap of PTRACE_INTERRUPT; other stops are
	 * signals the thread received meanwhile: they are re-injected by the
	 * detach below (data = the signal) so nothing is lost */
	for (;;) {
		if (waitpid(tid, &st, __WALL) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!WIFSTOPPED(st))
			return -ESRCH;	/* it exited meanwhile: nothing to detach */
		if ((st >> 16) == PTRACE_EVENT_STOP)
			break;
		/* a signal-delivery stop: pass the signal on, wait for our trap */
		if (ptrace(PTRACE_CONT, tid, NULL, (void *)(long)WSTOPSIG(st)) < 0) {
			ret = -errno;
			goto out;
		}
	}
	*ssp = 0;
	if (ptrace(PTRACE_GETREGSET, tid, (void *)(long)NT_X86_SHSTK, &iov) < 0)
		ret = -errno;
out:
	if (ptrace(PTRACE_DETACH, tid, NULL, NULL) < 0 && errno != ESRCH && !ret)
		ret = -errno;
	return ret;
}
