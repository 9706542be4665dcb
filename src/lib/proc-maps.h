/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * /proc/<pid>/smaps (shadow-stack VMAs: VmFlags "ss") and /proc/<pid>/maps
 * (the file-backed executable mappings: the loaded objects). Whether "ss"
 * means an x86 shadow stack depends on the architecture (arm64 GCS and
 * riscv use the same letters): the caller decides, see sysinfo-cet.h.
 * Returns 0 or -errno, never prints.
 */
#ifndef CETCTL_PROC_MAPS_H
#define CETCTL_PROC_MAPS_H

#include <stddef.h>
#include <sys/types.h>

struct shstk_vma {
	unsigned long start, end;	/* [start, end) */
	unsigned long size_kb;		/* Size: */
	unsigned long rss_kb;		/* Rss: */
};

struct shstk_vmas {
	struct shstk_vma *v;
	size_t n;
};

/* Parse smaps text, collecting the VMAs whose VmFlags contain "ss". */
int proc_smaps_parse_ss(const char *text, struct shstk_vmas *out);
/*
 * Read smaps in @piddir (cet_proc_pid_open()). -ESRCH when the file reads
 * empty for a process that should have memory (it exited while we were
 * reading).
 */
int proc_smaps_read_ss_at(int piddir, struct shstk_vmas *out);
void shstk_vmas_free(struct shstk_vmas *vmas);

/* Unique paths of executable file mappings, in address order. */
struct proc_objects {
	char **path;
	unsigned long *addr;		/* start of each one's first executable mapping */
	size_t n;
};
int proc_maps_parse_objects(const char *text, struct proc_objects *out);
int proc_maps_read_objects_at(int piddir, struct proc_objects *out);
void proc_objects_free(struct proc_objects *objs);

#endif
