/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The reading half of the compatibility verdict (compat.h): which rows of
 * compat_rules[] an ELF file matches (its name, sections, notes, symbols of
 * .dynsym and .symtab), and the verdict on a program and its DT_NEEDED
 * closure (elf-deps.h), each object read once per context.
 *
 * Library code: returns -errno, never prints.
 */
#ifndef CETCTL_COMPAT_SCAN_H
#define CETCTL_COMPAT_SCAN_H

#include <stdbool.h>

#include "compat.h"
#include "elf-deps.h"
#include "elf-notes.h"

/* Whether a verdict applies to a file judged as @info: an x86-64 program
 * or shared object (not a .o, a core file, 32-bit or x32). */
bool compat_applies(const struct elf_cet_info *info);

/*
 * Read the ELF file @path (judged as @info; @name: the DT_NEEDED name it was
 * loaded by, or NULL) into @out, whose path is set to @path. Returns 0, or
 * -errno / ELF_CET_ENOTELF / ELF_CET_ECORRUPT (also in out->rc).
 */
int compat_scan_path(const char *path, const char *name, const struct elf_cet_info *info,
		     struct compat_object *out);

struct compat_ctx;

/* @deps: the resolver to use (borrowed), NULL for one of its own. */
int compat_ctx_new(struct compat_ctx **ctx, struct elf_deps_ctx *deps);
void compat_ctx_free(struct compat_ctx *ctx);

/*
 * The verdict on the program (or shared object) @path for @env: its
 * closure resolved like the loader does, each object scanned. An
 * unreadable program is a verdict too (unknown). The verdict points into
 * @ctx (and at @path): valid until the next call on @ctx or its end.
 * Returns 0 or -ENOMEM.
 */
int compat_judge_path(struct compat_ctx *ctx, const char *path, const struct compat_env *env,
		      struct compat_verdict *out);

#endif
