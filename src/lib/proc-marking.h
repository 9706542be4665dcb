/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The CET marking of the files a process runs (its exe, its loaded
 * objects), as the loader judges it, through the shared ELF library
 * (elf-notes.h). A cache keyed by device and inode makes an audit of a
 * thousand copies of one program read it once. Never prints.
 */
#ifndef CETCTL_PROC_MARKING_H
#define CETCTL_PROC_MARKING_H

struct cet_marking_cache;

struct cet_marking_cache *cet_marking_cache_new(void);
void cet_marking_cache_free(struct cet_marking_cache *c);

/*
 * A cet_marking_fn (proc-cet.h): CET_X86_FEATURE_1_* bits the loader
 * would honour (0 for unmarked or an ignored note), or -errno
 * (-ENOEXEC: not ELF). @cache may be NULL.
 */
int cet_marking_of(int dirfd, const char *path, void *cache);

#endif
