// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `cetctl run` as PID 1 or a child subreaper: when the start-up's helper
 * processes, orphaned, would be handed to the program, cetctl stays its
 * parent instead of becoming it (run_stay_parent()). Calls run_say() for
 * its one failure. And cetctl started where its children go to another pid
 * namespace (run_pidns_unforked()).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cetctl.h"
#include "run-jobctl.h"
#include "run-parent.h"
#include "run-say.h"

/* The program ended with wait status @st: our exit status, or the signal
 * that killed it re-raised on ourselves (not as PID 1, which would ignore
 * it: 128+N). */
static int child_ended(const struct jobctl *jc, int st)
{
	sigset_t one;
	int sig;

	jobctl_ended(jc);
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	sig = WTERMSIG(st);
	if (getpid() != 1) {
		signal(sig, SIG_DFL);
		sigemptyset(&one);
		sigaddset(&one, sig);
		sigprocmask(SIG_UNBLOCK, &one, NULL);
		raise(sig);
	}
	return 128 + sig;
}

/*
 * When cetctl is the init of a pid namespace (a container's entrypoint) or
 * a child subreaper, the start-up's helper processes, orphaned, would be
 * handed to the program itself, whose wait() would reap the tracer instead
 * of its own worker. Then cetctl does not become the program: it forks it
 * and stays its parent, as a container's init does: the program's children
 * and wait() are its own; cetctl reaps whatever orphan is handed to it (the
 * tracer among them), passes on the signals the program would not get
 * itself and follows its stops (run-jobctl.c), and exits with the
 * program's status.
 * The caller's signal state is its own to hand down, to the program; cetctl
 * relies on none of it: it waits for every signal with all of them blocked
 * (whatever mask it was given), and SIGCHLD is set to its default here, in
 * cetctl only: ignored (or SA_NOCLDWAIT), the kernel would reap the program
 * itself, its status lost and cetctl waiting for ever (issue 32, defect 2).
 * The child gets the caller's mask and SIGCHLD disposition back.
 * Returns -1 in the child (which goes on to start the program), or the
 * status to exit with.
 */
int run_stay_parent(void)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL }, chld;
	struct jobctl jc;
	sigset_t all, old;
	siginfo_t si;
	pid_t child, r;
	int st, sig;

	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	sigaction(SIGCHLD, &dfl, &chld);
	jobctl_init(&jc);
	child = fork();
	if (child < 0) {
		sigaction(SIGCHLD, &chld, NULL);
		sigprocmask(SIG_SETMASK, &old, NULL);
		run_say("cannot fork the program (cetctl stays its parent as PID 1 or a "
			"subreaper): %s; program not run", strerror(errno));
		return CETCTL_EXIT_RUN_FAILED;
	}
	if (child == 0) {
		jobctl_child(&jc);
		sigaction(SIGCHLD, &chld, NULL);
		sigprocmask(SIG_SETMASK, &old, NULL);
		return -1;
	}
	jobctl_parent(&jc, child);
	for (;;) {
		sig = sigwaitinfo(&all, &si);
		if (sig < 0)
			continue;
		if (sig == SIGCONT) {
			jobctl_continued(&jc);
			continue;
		}
		if (sig != SIGCHLD) {
			if (jobctl_pass_on(&jc, &si))
				kill(child, sig);
			continue;
		}
		while ((r = waitpid(-1, &st, WNOHANG | WUNTRACED)) > 0) {
			if (r != child)
				continue;	/* an orphan handed to us: reaped */
			if (WIFSTOPPED(st))
				jobctl_stopped(&jc, WSTOPSIG(st));
			else
				return child_ended(&jc, st);
		}
	}
}

/*
 * Whether cetctl's children would start in a pid namespace it is not in
 * itself: after unshare(CLONE_NEWPID) (unshare -p without --fork) or
 * setns() to a pid namespace. The first process it forks would then be
 * that namespace's init, and once it exits no other fork succeeds (ENOMEM):
 * the start-up's tracer cannot be made. The kernel shows such a namespace
 * as pid_for_children differing from pid, or, while it has no init yet,
 * as a pid_for_children link that cannot be read (ENOENT; a kernel before
 * 4.12 has no such entry at all). Unknown (no /proc): false.
 */
bool run_pidns_unforked(void)
{
	char own[PATH_MAX], kids[PATH_MAX];
	const char *link = "/proc/self/ns/pid_for_children";
	struct stat st;
	ssize_t n, m;

	n = readlink("/proc/self/ns/pid", own, sizeof(own) - 1);
	if (n <= 0 || lstat(link, &st) < 0)
		return false;
	m = readlink(link, kids, sizeof(kids) - 1);
	if (m < 0)
		return errno == ENOENT;
	return n != m || memcmp(own, kids, (size_t)n) != 0;
}

bool run_init_like(void)
{
	int subreaper = 0;

	return getpid() == 1 ||
	       (prctl(PR_GET_CHILD_SUBREAPER, (unsigned long)&subreaper, 0, 0, 0) == 0 &&
		subreaper);
}
