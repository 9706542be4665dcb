/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The compatibility verdict (lib/compat.h) as the front end says it: one
 * typed value that `cetctl elf` puts in its COMPAT column (text and JSON
 * from one encoding) and `cetctl run --shstk` quotes in its refusal and
 * warnings.
 *
 * Text: "<class>: <reason> (<object>: <match>; <what mends it>)", the
 * object by its base name ("self" for the program), or "marked" /
 * "forced-safe" alone when nothing more is to be said. JSON: {"verdict",
 * "object", "match", "errno", "reason", "cover", "findings": [every
 * finding, worst first, the same members], "more": findings left out}.
 */
#ifndef CETCTL_COMPAT_CELL_H
#define CETCTL_COMPAT_CELL_H

#include <stdbool.h>
#include <stddef.h>

#include "compat.h"
#include "table.h"

struct compat_value;

/* A flat copy of @v (for cetctl_table_set_value()), malloc'ed; its size
 * in *@size. NULL when out of memory. */
struct compat_value *compat_value_new(const struct compat_verdict *v, size_t *size);

/* The verdict's text into @out; @full: objects by their full path (a
 * message) rather than their base name (a table cell). */
void compat_value_text(const struct compat_value *v, bool full, struct cetctl_text *out);

extern const struct cetctl_value_type compat_value_type;

struct compat_ctx;
struct elf_cet_info;

/*
 * Set the cell @col of @ln to the verdict on @path (judged as @in) as
 * `run --shstk` would start it here: with the preload library, this
 * system's glibc. "-" (JSON null) where no verdict applies (a .o, 32-bit).
 * Exits with a message when out of memory.
 */
void compat_cell_set(struct cetctl_table *tb, struct cetctl_line *ln, int col,
		     struct compat_ctx *cc, const char *path, const struct elf_cet_info *in);

#endif
