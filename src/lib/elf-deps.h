/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * DT_NEEDED resolution the way glibc's loader does it, far enough to judge
 * the CET marking of a program's whole closure: the loader enables shadow
 * stacks (or IBT) only when the program and every object it loads are
 * marked, so one unmarked library is the weakest link.
 *
 * Search order per DT_NEEDED name without a slash: DT_RPATH of the
 * requesting object then of the main program (only when the requester has
 * no DT_RUNPATH), LD_LIBRARY_PATH, DT_RUNPATH of the requester,
 * /etc/ld.so.cache, then the default directories. $ORIGIN, $LIB and
 * $PLATFORM are expanded. A candidate must have the requester's ELF class
 * and machine, as in the loader. The PT_INTERP of the main program is part
 * of the closure. Simplification: the RPATH chain is requester + main
 * program, not every object in between.
 *
 * Library code: returns -errno, never prints.
 */
#ifndef CETCTL_ELF_DEPS_H
#define CETCTL_ELF_DEPS_H

#include <stdbool.h>
#include <stddef.h>

#include "elf-notes.h"

struct elf_deps_ctx;

/* One object of a closure, owned by the context (shared between closures). */
struct elf_dep_obj {
	char *path;			/* resolved (real) path */
	char *name;			/* the name it was first asked for by */
	int rc;				/* 0, or why it could not be read */
	int dyn_rc;			/* 0, or why its dynamic section was unusable */
	struct elf_cet_info info;
};

struct elf_closure {
	size_t nobjs;			/* objects found, the root first */
	const struct elf_dep_obj **objs;
	size_t nmissing;		/* DT_NEEDED names that did not resolve */
	char **missing;
};

/*
 * @ld_cache: path of ld.so.cache (NULL: /etc/ld.so.cache); @sysroot: a
 * prefix for the cache and the default directories (NULL: none), for tests.
 */
int elf_deps_ctx_new(struct elf_deps_ctx **ctx, const char *ld_cache,
		     const char *sysroot);
void elf_deps_ctx_free(struct elf_deps_ctx *ctx);

/* Resolve the closure of @path (already judged as @info). Returns 0 or -errno. */
int elf_deps_closure(struct elf_deps_ctx *ctx, const char *path,
		     const struct elf_cet_info *info, struct elf_closure *out);
void elf_closure_free(struct elf_closure *c);

/* Number of ld.so.cache entries parsed (0 when the cache was unusable). */
size_t elf_deps_cache_entries(const struct elf_deps_ctx *ctx);

/*
 * Look @name up in the parsed ld.so.cache for objects of @elfclass/@machine;
 * returns the path (owned by ctx) or NULL.
 */
const char *elf_deps_cache_lookup(const struct elf_deps_ctx *ctx, const char *name,
				  int elfclass, unsigned int machine);

/* Parse an ld.so.cache image (new format "glibc-ld.so.cache1.1") into ctx
 * (replacing what it had). Returns 0, -EINVAL when malformed. */
int elf_deps_cache_parse(struct elf_deps_ctx *ctx, const void *buf, size_t size);

/* Read one ELF file by path (O_NOFOLLOW not used: libraries are often
 * symlinks) and judge it. Returns 0 or -errno / ELF_CET_*. */
int elf_cet_read_path(const char *path, struct elf_cet_info *out);

/*
 * The file whose old IBT/SHSTK marking makes the kernel's legacy-ELF policy
 * refuse shadow stacks to the program @path: its (64-bit) interpreter when
 * it has one, which the kernel judges instead, else the program itself;
 * NULL when neither is refused (or cannot be read). The path in @buf.
 */
const char *elf_legacy_blocker(const char *path, char *buf, size_t size);

/* The names the loader goes by in the ELF file open on @fd. */
struct elf_dyn_names {
	char *soname;			/* DT_SONAME, NULL when none */
	char *interp;			/* PT_INTERP, NULL when none */
	char **needed;			/* DT_NEEDED, in order */
	size_t nneeded;
};
/* Returns 0 or -errno / ELF_CET_ECORRUPT; free with elf_dyn_names_free(). */
int elf_dyn_names_read_fd(int fd, struct elf_dyn_names *out);
void elf_dyn_names_free(struct elf_dyn_names *n);

/* Whether the ELF file at @path has a DT_NEEDED entry starting with
 * @prefix (e.g. "libasan.so"): 1 yes, 0 no, or -errno. */
int elf_needs_prefix(const char *path, const char *prefix);

#endif
