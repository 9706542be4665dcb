/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The insides of `cetctl elf`, shared by its parts and by nothing else:
 *
 *   cmd-elf.c       the command: columns, options, the kernel's policy,
 *                   errors, the summary and the report
 *   cmd-elf-walk.c  the names on the command line and the trees under
 *                   them (-r): what is opened, and how
 *   cmd-elf-row.c   one file: read it, judge it (LOADER, KERNEL) and
 *                   fill its row
 *   cmd-elf-deps.c  --deps: the closure's cells (DEPS, DEPS_IBT, NDEPS,
 *                   MISSING)
 *
 * Calls between them: cmd-elf.c hands each name to cmd-elf-walk.c, which
 * hands each regular file to cmd-elf-row.c, which has cmd-elf-deps.c fill
 * the closure's cells; every part reports a file it could not judge with
 * elf_error() (cmd-elf.c).
 */
#ifndef CETCTL_CMD_ELF_INTERNAL_H
#define CETCTL_CMD_ELF_INTERNAL_H

#include <limits.h>
#include <stdbool.h>

#include "table.h"
#include "elf-notes.h"

struct elf_deps_ctx;
struct compat_ctx;

enum {
	COL_FILE,
	COL_ARCH,
	COL_TYPE,
	COL_IBT,
	COL_SHSTK,
	COL_LAM,
	COL_FEATURE_1_AND,
	COL_ISA_NEEDED,
	COL_ISA_USED,
	COL_FEATURE_2_USED,
	COL_NOTE,
	COL_LOADER,
	COL_KERNEL,
	COL_DEPS,
	COL_DEPS_IBT,
	COL_DEPS_COUNT,
	COL_MISSING,
	COL_COMPAT,
};

struct elf_summary {
	unsigned long files, shstk, ibt, ignored, refused, enoexec;
	unsigned long deps_ok, not_elf, errors;
};

struct elf_ctl {
	struct cetctl_table *tb;
	struct elf_deps_ctx *deps;	/* --deps */
	struct compat_ctx *compat;	/* the COMPAT column */
	bool recursive;
	enum elf_kernel_policy policy;	/* judged for this legacy-ELF policy */
	bool x32_abi;			/* the kernel runs x32 programs */
	bool json;			/* "-" (nothing) is null there */
	bool raw;			/* --raw: every value in full */
	const char *policy_name;	/* "block", "allow", "none" */
	const char *policy_why;		/* where it comes from */
	/* the last interpreter read: nearly every program has the same one */
	char interp_path[PATH_MAX];
	struct elf_cet_info interp;
	int interp_rc;
	struct elf_summary sum;
};

/* cmd-elf.c: "elf: PATH: MESSAGE" and the JSON "errors" entry; @fmt NULL: strerror */
void elf_error(struct elf_ctl *ctl, const char *path, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* cmd-elf-walk.c: judge a name of the command line, a tree with -r */
int elf_do_arg(struct elf_ctl *ctl, const char *path);

/* cmd-elf-row.c: one open regular file; the texts of the library's errors;
 * the LOADER and KERNEL values; a cell, "-" null in JSON */
int elf_do_fd(struct elf_ctl *ctl, int fd, const char *path, bool explicit);
const char *elf_rc_str(int rc);
extern const struct cetctl_value_type elf_loader_type, elf_kernel_type;
void elf_set_cell(struct elf_ctl *ctl, struct cetctl_line *ln, int col, const char *v);

/* cmd-elf-deps.c: the closure's cells of a file (--deps); the DEPS value */
int elf_add_deps(struct elf_ctl *ctl, struct cetctl_line *ln, const char *path,
		 const struct elf_cet_info *in);
extern const struct cetctl_value_type elf_closure_type;

#endif
