/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The shadow-stack pointer of another thread, read through ptrace: the
 * NT_X86_SHSTK regset (mainline 6.6 ABI; "x86: Add PTRACE interface for shadow stack"). Reading
 * it stops the thread for the duration of one PTRACE_GETREGSET, as a
 * debugger or CRIU would, so `cetctl status` only does it for the SSP
 * column, which is not shown by default.
 *
 * Library code: returns 0 or -errno, never prints.
 */
#ifndef CETCTL_PTRACE_SSP_H
#define CETCTL_PTRACE_SSP_H

#include <sys/types.h>

/*
 * Seize thread @tid, interrupt it, read its SSP into *ssp and detach.
 * -EPERM: no ptrace permission (another user, Yama, already traced);
 * -ESRCH: the thread is gone; -ENODEV: its shadow stack is not enabled
 * (the kernel's answer for an inactive regset); -EIO/-EINVAL: the kernel
 * has no such regset.
 */
int ptrace_read_ssp(pid_t tid, unsigned long *ssp);

#endif
