/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What cpfault.c (the diagnosis of a control-protection fault) and
 * cpfault-chain.c (the program's own SIGSEGV handler behind it) share.
 * Internal to libcetctl-preload.so.
 */
#ifndef CETCTL_PRELOAD_CPFAULT_H
#define CETCTL_PRELOAD_CPFAULT_H

#include <signal.h>
#include <stdbool.h>

/* glibc's own sigaction, past our interposed one: the kernel's view */
extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);

/* cpfault.c installed its handler at start-up (shadow stack on, SIGSEGV at
 * its default): from then on SIGSEGV's disposition is managed for the
 * program (cpfault-chain.c). */
extern bool cetctl_cpfault_managed;

/* Put cpfault.c's own handler in the kernel's table (the program's SIGSEGV
 * is at its default). 0, or -1 with errno set. */
int cetctl_cpfault_install(void);

/* Write the diagnosis of the SEGV_CPERR fault whose context is @ctx, the
 * first time in this process; async-signal-safe. */
void cetctl_cpfault_say(void *ctx);

#endif
