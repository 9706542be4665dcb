// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Part of libcetctl-preload.so: a program's own SIGSEGV handler, with the
 * diagnosis of a control-protection fault still said before it runs.
 *
 * cpfault.c installs its handler at start-up only where SIGSEGV is at its
 * default. Runtimes install their own afterwards (ruby's crash report,
 * node's V8 trap handler), and a #CP then reached that handler alone: the
 * program died with its own report, or none, and nothing said why. So,
 * while cpfault.c manages SIGSEGV (cetctl_cpfault_managed), sigaction()
 * and signal() are interposed for it:
 *  - a handler: recorded as the program's; the kernel gets ours, with the
 *    program's flags (SA_SIGINFO added) and mask. Ours says the diagnosis
 *    on SEGV_CPERR (once per process, cetctl_cpfault_say()), then calls the
 *    program's handler with the kernel's arguments. With SA_RESETHAND the
 *    kernel put the default back as it delivered: the record says so too,
 *    and cpfault.c's handler is back in the table, as at start-up. A #CP
 *    that ldso-unwind.c mends never reaches the program's handler: to the
 *    program, nothing happened.
 *  - SIG_DFL: cpfault.c's handler again; SIG_IGN: passed on.
 *  - what the program reads back (old) is what it set, never ours.
 * Any other signal, or SIGSEGV when cpfault.c did not install its handler
 * (no shadow stack, a sanitizer, an inherited disposition): glibc's own.
 * Not covered: the raw rt_sigaction system call (the Go runtime's; Go is
 * refused before the start anyway), sigvec, sysv_signal and sigset, and
 * two threads changing SIGSEGV's disposition at once (the record is not
 * locked: a signal handler may read it).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "cet-abi.h"
#include "cpfault.h"

/* glibc's signal() under its other name (the same code), past ours */
extern sighandler_t bsd_signal(int sig, sighandler_t handler);

/* The program's SIGSEGV disposition as it set it (at first: the default). */
static struct sigaction prog = { .sa_handler = SIG_DFL };

static void on_segv_chained(int sig, siginfo_t *si, void *ctx);

/* After a mended fault (ldso-unwind.c): the kernel's table as it was before
 * the delivery, which SA_RESETHAND of the program's flags emptied. */
static void reinstall_chained(void)
{
	struct sigaction k = prog;

	if (!(prog.sa_flags & SA_RESETHAND))
		return;
	k.sa_sigaction = on_segv_chained;
	k.sa_flags |= SA_SIGINFO;
	__sigaction(SIGSEGV, &k, NULL);
}

static void on_segv_chained(int sig, siginfo_t *si, void *ctx)
{
	struct sigaction h = prog;
	int saved = errno;

	if (si->si_code == SEGV_CPERR) {
		/* the loader's own longjmp: mended before the program sees it */
		cetctl_ldso_mend(ctx, reinstall_chained);
		cetctl_cpfault_say(ctx);
	}
	if (h.sa_flags & SA_RESETHAND) {
		memset(&prog, 0, sizeof(prog));
		prog.sa_handler = SIG_DFL;
		cetctl_cpfault_install();
	}
	errno = saved;
	if (h.sa_flags & SA_SIGINFO)
		h.sa_sigaction(sig, si, ctx);
	else if (h.sa_handler != SIG_DFL && h.sa_handler != SIG_IGN)
		h.sa_handler(sig);
}

__attribute__((visibility("default")))
int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct sigaction was = prog, k;
	int r;

	if (sig != SIGSEGV || !cetctl_cpfault_managed)
		return __sigaction(sig, act, old);
	if (act) {
		if (act->sa_handler == SIG_DFL) {
			r = cetctl_cpfault_install();
		} else if (act->sa_handler == SIG_IGN) {
			r = __sigaction(sig, act, NULL);
		} else {
			k = *act;
			k.sa_sigaction = on_segv_chained;
			k.sa_flags |= SA_SIGINFO;
			r = __sigaction(sig, &k, NULL);
		}
		if (r != 0)
			return r;
		prog = *act;
	}
	if (old)
		*old = was;
	return 0;
}

/* glibc's signal(): BSD semantics (SA_RESTART, the signal blocked in its
 * handler); for SIGSEGV through the sigaction above. */
__attribute__((visibility("default")))
sighandler_t signal(int sig, sighandler_t handler)
{
	struct sigaction act, old;

	if (sig != SIGSEGV || !cetctl_cpfault_managed)
		return bsd_signal(sig, handler);
	memset(&act, 0, sizeof(act));
	act.sa_handler = handler;
	sigemptyset(&act.sa_mask);
	sigaddset(&act.sa_mask, sig);
	act.sa_flags = SA_RESTART;
	if (sigaction(sig, &act, &old) != 0)
		return SIG_ERR;
	return old.sa_handler;
}
