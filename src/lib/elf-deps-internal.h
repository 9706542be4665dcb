/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The insides of elf-deps.h, shared by its parts and by nothing else:
 *
 *   elf-deps.c        the context, the object table, the loader's search
 *                     and the closure; files read by path
 *   elf-deps-dyn.c    an object's dynamic section: DT_NEEDED, DT_RPATH,
 *                     DT_RUNPATH, DT_SONAME, and its PT_INTERP
 *   elf-deps-cache.c  ld.so.cache: parsed, looked up
 *
 * Calls between them: elf-deps.c reads each object's names through
 * elf-deps-dyn.c (elf_deps_read_dyninfo()) and the cache through
 * elf-deps-cache.c; both parts read with elf_deps_pread_full() (elf-deps.c).
 */
#ifndef CETCTL_ELF_DEPS_INTERNAL_H
#define CETCTL_ELF_DEPS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf-deps.h"

struct dyninfo {
	char **needed;
	size_t nneeded;
	char *rpath;
	char *runpath;
	char *interp;
	char *soname;
};

struct cache_entry {
	const char *key;
	const char *value;
	int32_t flags;
};

struct elf_deps_ctx {
	char *sysroot;
	/* ld.so.cache */
	unsigned char *cache_buf;
	struct cache_entry *cache;
	size_t ncache;
	/* objects by real path: open addressing, power-of-two size */
	struct node **table;
	size_t tsize, tcount;
	unsigned int generation;
};

/* Little-endian fields (the ELF files and ld.so.cache are x86's). */
static inline uint32_t elf_deps_le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint64_t elf_deps_le64(const unsigned char *p)
{
	return elf_deps_le32(p) | (uint64_t)elf_deps_le32(p + 4) << 32;
}

/* elf-deps.c: read @len bytes at @off, all of them (short: ELF_CET_ECORRUPT) */
int elf_deps_pread_full(int fd, void *buf, size_t len, uint64_t off);

/* elf-deps-dyn.c: an object's dynamic names, by path; freed */
int elf_deps_read_dyninfo(const char *path, struct dyninfo *d);
void elf_deps_dyninfo_free(struct dyninfo *d);

/* elf-deps-cache.c: whether a cache entry's flags suit this class and machine */
bool elf_deps_cache_flags_match(int32_t flags, int elfclass, unsigned int machine);

#endif
