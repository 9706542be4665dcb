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

/* What ldso-unwind.c reads with cpfault.c's means (async-signal-safe): the
 * word at @addr of this process's memory; whether @ip is a near return; the
 * SSP the signal interrupted (above the kernel's token); how many entries
 * above @ssp the shadow stack holds @ret, 0 when none does before a token. */
bool cetctl_cpfault_word(unsigned long addr, unsigned long *w);
bool cetctl_cpfault_is_ret(unsigned long ip);
bool cetctl_cpfault_interrupted_ssp(unsigned long *ssp);
unsigned long cetctl_cpfault_found_above(unsigned long ssp, unsigned long ret);

/* ldso-unwind.c: when the SEGV_CPERR fault of @ctx is the `ret` of the
 * loader's _dl_catch_exception() after its own longjmp, unwind the shadow
 * stack as a CET glibc would, call @reinstall (the handler back as before
 * the delivery), and resume the program past that `ret`: does not return.
 * Otherwise returns false, having changed nothing. */
bool cetctl_ldso_mend(void *ctx, void (*reinstall)(void));

#endif
