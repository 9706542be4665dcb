/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The CET marking of the files a process runs (its exe, its loaded
 * objects), as the loader judges it, through the shared ELF library
 * (elf-notes.h). A cache keyed by device and inode makes an audit of a
 * thousand copies of one program read it once. Never prints.
 */
#ifndef CETCTL_PROC_MARKING_H
#define CETCTL_PROC_MARKING_H

#include <stdbool.h>
#include <stddef.h>

struct cet_marking_cache;

struct cet_marking_cache *cet_marking_cache_new(void);
void cet_marking_cache_free(struct cet_marking_cache *c);

/*
 * A cet_marking_fn (proc-cet.h): CET_X86_FEATURE_1_* bits the loader
 * would honour (0 for unmarked or an ignored note), or -errno
 * (-ENOEXEC: not ELF). @cache may be NULL.
 */
int cet_marking_of(int dirfd, const char *path, void *cache);

/* What why-off needs of one object, besides its marking. */
struct cet_object_facts {
	int marking;			/* as cet_marking_of() */
	int dyn_rc;			/* 0, or why the names below are unknown */
	const char *soname;		/* owned by the cache: valid until it is freed */
	const char *interp;
	const char *const *needed;
	size_t nneeded;
	char version[16];		/* glibc banner's release, "" none (or not asked) */
};

/*
 * The marking, DT_SONAME, DT_NEEDED and PT_INTERP of the file @path (under
 * @dirfd), and with @want_version the glibc release its banner names (a
 * loader: the whole file is scanned, once per file). @cache is required.
 * Returns 0 or -errno (then only the marking may be known).
 */
int cet_object_facts_of(int dirfd, const char *path, struct cet_marking_cache *cache,
			bool want_version, struct cet_object_facts *out);

#endif
