/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Gather what why-off.h judges for one process read by proc_cet_read():
 * its GLIBC_TUNABLES (environ), the names and marking of its program and
 * mapped objects, its loader's glibc release, and set pc->why. Reads under
 * the proc root (a recorded tree works); returns 0 or -errno, never prints.
 */
#ifndef CETCTL_PROC_WHY_H
#define CETCTL_PROC_WHY_H

#include "proc-cet.h"
#include "proc-marking.h"

/*
 * Judge why @pc runs without a shadow stack, when it does (nothing is read
 * for a process that has one, a zombie or a kernel thread: pc->why stays
 * WHY_OFF_NONE). @lacks: cet_sysinfo_lacks() of the system. pc must have
 * been read with PROC_CET_EXE and PROC_CET_OBJECTS.
 */
int proc_why_off_read(const char *root, struct proc_cet *pc, unsigned int lacks,
		      struct cet_marking_cache *cache);

#endif
