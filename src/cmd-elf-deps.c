// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `cetctl elf --deps`: the file's DT_NEEDED closure as the loader would
 * resolve it (elf_deps_closure()), judged for SHSTK (DEPS) and IBT
 * (DEPS_IBT), with the closure's size (NDEPS) and the names that did not
 * resolve (MISSING).
 */
#include <err.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cetctl.h"
#include "jsonwrt.h"
#include "table.h"
#include "elf-deps.h"
#include "elf-notes.h"
#include "cmd-elf-internal.h"

#define DEPS_NAMES_MAX	4	/* weakest links named in a cell */

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/*
 * A DEPS or DEPS_IBT verdict on a closure, one typed value: the objects
 * that lack the bit as the loader sees it. Table: "ok", "no: a,b,c,d +N
 * more" (the base names, the file itself as "(self)"; --raw, read by
 * scripts, names every one) or "unknown: why". JSON: {"verdict":
 * "ok"|"no"|"unknown", "objects": every object lacking the bit (the file
 * as named, the others by real path), "reason": why the verdict is
 * unknown or null}. The value is flat, so that the table can copy it:
 * after the struct, the reason (unknown only) and then each object's
 * text name and JSON path, each with its NUL.
 */
enum { CLOSURE_OK, CLOSURE_NO, CLOSURE_UNKNOWN };

struct closure_value {
	unsigned char verdict;
	bool all;		/* --raw: name every object in the table */
	size_t nbad;
	char strings[];
};

static const char *next_string(const char *p)
{
	return p + strlen(p) + 1;
}

static void closure_text(const void *v, struct cetctl_text *out)
{
	const struct closure_value *c = v;
	const char *p;
	char more[48];

	if (c->verdict != CLOSURE_NO) {
		cetctl_text_puts(out, c->verdict == CLOSURE_OK ? "ok" : "unknown: ");
		if (c->verdict == CLOSURE_UNKNOWN)
			cetctl_text_puts(out, c->strings);
		return;
	}
	p = next_string(c->strings);	/* the first name, after the empty reason */
	for (size_t i = 0; i < c->nbad && (i < DEPS_NAMES_MAX || c->all); i++) {
		cetctl_text_puts(out, i ? "," : "no: ");
		cetctl_text_puts(out, p);
		p = next_string(next_string(p));
	}
	if (c->nbad > DEPS_NAMES_MAX && !c->all) {
		snprintf(more, sizeof(more), " +%zu more", c->nbad - DEPS_NAMES_MAX);
		cetctl_text_puts(out, more);
	}
}

static void closure_json(struct jsonwrt *w, const char *name, const void *v)
{
	const struct closure_value *c = v;
	const char *p = c->nbad ? next_string(c->strings) : NULL;	/* the first name */

	jsonwrt_object_open(w, name, JSONWRT_LINE);
	jsonwrt_string(w, "verdict", c->verdict == CLOSURE_OK ? "ok" :
		       c->verdict == CLOSURE_NO ? "no" : "unknown");
	jsonwrt_array_open(w, "objects", JSONWRT_TIGHT);
	for (size_t i = 0; i < c->nbad; i++) {
		p = next_string(p);		/* its path */
		jsonwrt_string(w, NULL, p);
		p = next_string(p);
	}
	jsonwrt_array_close(w);
	jsonwrt_string(w, "reason", c->verdict == CLOSURE_UNKNOWN ? c->strings : NULL);
	jsonwrt_object_close(w);
}

const struct cetctl_value_type elf_closure_type = { closure_text, closure_json };

/* Append @s and its NUL to the value being built in *@v (*@size bytes). */
static void closure_add(struct closure_value **v, size_t *size, const char *s)
{
	size_t len = strlen(s) + 1;
	struct closure_value *nv = realloc(*v, *size + len);

	if (!nv)
		err(CETCTL_EXIT_FAILURE, "out of memory");
	memcpy((char *)nv + *size, s, len);
	*size += len;
	*v = nv;
}

/*
 * Judge closure @c of @path for @bit and set the cell @col; @unknown: the
 * closure could not be judged for that reason. Returns the verdict.
 */
static int set_closure_cell(struct elf_ctl *ctl, struct cetctl_line *ln, int col,
			    const char *path, const struct elf_closure *c, uint32_t bit,
			    const char *unknown)
{
	size_t size = sizeof(struct closure_value);
	struct closure_value *v = calloc(1, size);
	int verdict;

	if (!v)
		err(CETCTL_EXIT_FAILURE, "out of memory");
	v->all = ctl->raw;
	for (size_t i = 0; !unknown && i < c->nobjs; i++) {
		const struct elf_dep_obj *o = c->objs[i];

		if (o->rc == 0 && (o->info.loader_feature_1_and & bit))
			continue;
		if (!v->nbad++)
			closure_add(&v, &size, "");	/* no reason */
		closure_add(&v, &size, i == 0 ? "(self)" : base_name(o->name));
		closure_add(&v, &size, i == 0 ? path : o->path ? o->path : o->name);
	}
	if (!v->nbad && !unknown && c->nmissing)
		unknown = "missing objects";
	if (unknown)
		closure_add(&v, &size, unknown);
	v->verdict = v->nbad ? CLOSURE_NO : unknown ? CLOSURE_UNKNOWN : CLOSURE_OK;
	verdict = v->verdict;
	cetctl_table_set_value(ctl->tb, ln, col, v, size);
	free(v);
	return verdict;
}

/* Set DEPS and DEPS_IBT. */
static void set_closure(struct elf_ctl *ctl, struct cetctl_line *ln, const char *path,
			const struct elf_closure *c, const char *unknown)
{
	if (set_closure_cell(ctl, ln, COL_DEPS, path, c, CET_X86_FEATURE_1_SHSTK,
			     unknown) == CLOSURE_OK)
		ctl->sum.deps_ok++;
	set_closure_cell(ctl, ln, COL_DEPS_IBT, path, c, CET_X86_FEATURE_1_IBT, unknown);
}

int elf_add_deps(struct elf_ctl *ctl, struct cetctl_line *ln, const char *path,
		 const struct elf_cet_info *in)
{
	struct elf_closure c;
	int rc;

	if (!in->x86 || in->kind == ELF_KIND_REL || in->kind == ELF_KIND_STATIC ||
	    in->kind == ELF_KIND_STATIC_PIE || in->kind == ELF_KIND_OTHER) {
		elf_set_cell(ctl, ln, COL_DEPS, "-");
		elf_set_cell(ctl, ln, COL_DEPS_IBT, "-");
		return 0;
	}
	rc = elf_deps_closure(ctl->deps, path, in, &c);
	if (rc) {
		elf_error(ctl, path, rc == ELF_CET_ENOTELF || rc == ELF_CET_ECORRUPT ? 0 : -rc,
			  "resolving dependencies: %s", elf_rc_str(rc));
		return rc;
	}
	/* e.g. a separate .debug file: headers without contents */
	set_closure(ctl, ln, path, &c, c.nobjs && c.objs[0]->dyn_rc ?
		    "unreadable dynamic section" : NULL);
	if (c.nobjs && c.objs[0]->dyn_rc) {
		elf_closure_free(&c);
		return 0;
	}
	cetctl_table_setf(ctl->tb, ln, COL_DEPS_COUNT, "%zu", c.nobjs);
	if (cetctl_table_has(ctl->tb, COL_MISSING) && (c.nmissing || ctl->json)) {
		size_t len = 0;
		char *m;

		for (size_t i = 0; i < c.nmissing; i++)
			len += strlen(c.missing[i]) + 1;
		m = malloc(len + 1);
		if (m) {
			m[0] = '\0';
			for (size_t i = 0; i < c.nmissing; i++) {
				if (i)
					strcat(m, "\n");
				strcat(m, c.missing[i]);
			}
			/* JSON: an array (names may hold commas); table: a,b */
			if (!ctl->json)
				for (char *p = m; (p = strchr(p, '\n')); )
					*p = ',';
			cetctl_table_set_list(ctl->tb, ln, COL_MISSING, m, "\n", NULL);
			free(m);
		}
	}
	elf_closure_free(&c);
	return 0;
}
