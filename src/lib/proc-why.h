/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Gather what why-off.h judges for one process read by proc_cet_read():
 * its GLIBC_TUNABLES (environ), the names and marking of its program and
 * mapped objects, its loader's glibc release, and set pc->why. Reads under
 * the proc root (a recorded tree works); returns 0 or -errno, never prints.
 */
#ifndef CETCTL_PROC_WHY_H
#define CETCTL_PROC_WHY_H

#include <stdbool.h>

#include "proc-cet.h"
#include "proc-marking.h"
#include "sysinfo-cet.h"

/* What the system says, read once by the caller for every process. */
struct proc_why_system {
	unsigned int lacks;		/* cet_sysinfo_lacks() */
	bool kernel_blocks_marked;	/* cet_sysinfo_legacy_policy() is "block" */
};

/* Fill @sys from @si, read with cet_sysinfo_read_support() and
 * cet_sysinfo_read_policy(). */
void proc_why_system_from(const struct cet_sysinfo *si, struct proc_why_system *sys);

/*
 * Judge why @pc runs without a shadow stack, when it does (nothing is read
 * for a process that has one, a zombie or a kernel thread: pc->why stays
 * WHY_OFF_NONE). pc must have been read with PROC_CET_EXE and
 * PROC_CET_OBJECTS.
 */
int proc_why_off_read(const char *root, struct proc_cet *pc, const struct proc_why_system *sys,
		      struct cet_marking_cache *cache);

#endif
