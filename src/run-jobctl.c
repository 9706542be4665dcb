// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Job control for `cetctl run` as PID 1 or a child subreaper, where cetctl
 * stays the program's parent (run-parent.c), as tini or dumb-init do.
 *
 * The program gets a process group of its own, and the terminal when
 * cetctl's group had its foreground. So what the terminal sends (^C, ^\,
 * ^Z, a window change) and what is sent to the program's group reaches the
 * program directly, once; what is sent to cetctl or to cetctl's group the
 * program would not get itself, and cetctl passes it on. When the program
 * stops, cetctl gives the terminal back to its own group and stops itself
 * with the same signal, so that the shell that waits for the job sees it
 * stop; continued, cetctl gives the terminal to the program again (when its
 * own group has it) and continues the program's group.
 *
 * Two cases differ:
 *  - cetctl's process group lies outside its pid namespace (PID 1 made by
 *    `unshare --pid --fork`: getpgrp() is 0). Its job is that outer group,
 *    which the shell stops and continues as a whole: the program stays in
 *    it, the terminal is not touched, and what the terminal sent to the
 *    group (the program got it too) is not passed on.
 *  - PID 1 cannot stop itself (the kernel keeps a namespace's init from
 *    stopping), and nobody above follows its stops. A program stopped from
 *    the terminal (SIGTSTP) is continued at once, as the kernel does for a
 *    process group with nobody to continue it (an orphaned one). Stopped by
 *    SIGSTOP, SIGTTIN or SIGTTOU it stays stopped until a SIGCONT reaches
 *    it (one sent to cetctl is passed on): continuing a read from a
 *    terminal it cannot have would only stop it again.
 *
 * Every signal is blocked in cetctl while it waits (run-parent.c), so a
 * tcsetpgrp() from the background raises no SIGTTOU here.
 */
#include <signal.h>
#include <stdbool.h>
#include <termios.h>
#include <unistd.h>

#include "run-jobctl.h"

/* Before the fork: whether the program gets a group of its own, and our
 * terminal, when one of our standard descriptors is it with our group in
 * the foreground. */
void jobctl_init(struct jobctl *jc)
{
	pid_t own = getpgrp();
	int fd;

	jc->child = -1;
	jc->tty = -1;
	jc->own_group = own > 0;
	for (fd = 0; fd <= 2 && jc->own_group; fd++) {
		if (isatty(fd) && tcgetpgrp(fd) == own) {
			jc->tty = fd;
			break;
		}
	}
}

/* In the child, before it starts the program: its own group, and the
 * terminal when we had it. */
void jobctl_child(const struct jobctl *jc)
{
	if (!jc->own_group)
		return;
	setpgid(0, 0);
	if (jc->tty >= 0)
		tcsetpgrp(jc->tty, getpid());
}

/* In cetctl after the fork: the same, whichever of the two comes first. */
void jobctl_parent(struct jobctl *jc, pid_t child)
{
	jc->child = child;
	if (!jc->own_group)
		return;
	setpgid(child, child);
	if (jc->tty >= 0)
		tcsetpgrp(jc->tty, child);
}

/* Whether a signal cetctl got is one the program would not get itself.
 * Sharing our group, the program got what the terminal sent the group. */
bool jobctl_pass_on(const struct jobctl *jc, const siginfo_t *si)
{
	if (jc->own_group || si->si_code != SI_KERNEL)
		return true;
	switch (si->si_signo) {
	case SIGINT:
	case SIGQUIT:
	case SIGTSTP:
	case SIGWINCH:
	case SIGHUP:
		return false;
	}
	return true;
}

/* The terminal to our own group again, when the program's has it. */
static void terminal_back(const struct jobctl *jc)
{
	if (jc->tty >= 0 && tcgetpgrp(jc->tty) == jc->child)
		tcsetpgrp(jc->tty, getpgrp());
}

static void continue_group(const struct jobctl *jc)
{
	if (!jc->own_group || kill(-jc->child, SIGCONT) < 0)
		kill(jc->child, SIGCONT);
}

/* The program stopped with @sig. Returns once cetctl is continued, or at
 * once when it cannot stop (PID 1) or need not (the shell stops our common
 * group itself). */
void jobctl_stopped(const struct jobctl *jc, int sig)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL }, old;
	sigset_t one;

	if (!jc->own_group)
		return;
	terminal_back(jc);
	if (getpid() == 1) {
		if (sig == SIGTSTP)
			jobctl_continued(jc);
		return;
	}
	sigemptyset(&one);
	sigaddset(&one, sig);
	sigaction(sig, &dfl, &old);
	kill(getpid(), sig);
	sigprocmask(SIG_UNBLOCK, &one, NULL);	/* stopped here until SIGCONT */
	sigprocmask(SIG_BLOCK, &one, NULL);
	sigaction(sig, &old, NULL);
}

/* cetctl was continued, or sent SIGCONT: the terminal to the program when
 * our group has it, and the program's group continued. */
void jobctl_continued(const struct jobctl *jc)
{
	if (jc->tty >= 0 && tcgetpgrp(jc->tty) == getpgrp())
		tcsetpgrp(jc->tty, jc->child);
	continue_group(jc);
}

/* The program ended: the terminal back to our group before cetctl exits. */
void jobctl_ended(const struct jobctl *jc)
{
	terminal_back(jc);
}
