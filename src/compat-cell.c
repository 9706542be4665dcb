// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The compatibility verdict as text and JSON (compat-cell.h). The value is
 * flat, so that the table can copy it: fixed items, then the strings they
 * point at by offset (0: none, the empty string at the start).
 */
#include <err.h>
#include <gnu/libc-version.h>
#include <stdlib.h>
#include <string.h>

#include "c.h"
#include "cetctl.h"
#include "compat-cell.h"
#include "compat-scan.h"
#include "elf-notes.h"
#include "jsonwrt.h"
#include "sysinfo-cet.h"

struct compat_item {
	unsigned char cls, cover;
	bool self;
	int err;
	const char *reason;		/* static text (the table's or compat.c's) */
	size_t object, what;		/* offsets into strings; 0: none */
};

struct compat_value {
	size_t nitems;			/* the main finding, then every finding */
	size_t nleft;
	struct compat_item items[1 + COMPAT_FINDINGS_MAX];
	size_t len;
	char strings[];
};

/* Append @s (NULL: none) to the strings of *@v; its offset, 0 for none. */
static size_t add_string(struct compat_value **v, size_t *cap, const char *s)
{
	size_t len, off;

	if (!s || !*v)
		return 0;
	len = strlen(s) + 1;
	if ((*v)->len + len > *cap) {
		struct compat_value *nv;

		*cap = ((*v)->len + len) * 2;
		nv = realloc(*v, sizeof(**v) + *cap);
		if (!nv) {
			free(*v);
			*v = NULL;
			return 0;
		}
		*v = nv;
	}
	off = (*v)->len;
	memcpy((*v)->strings + off, s, len);
	(*v)->len += len;
	return off;
}

static void add_item(struct compat_value **v, size_t *cap, const struct compat_finding *f)
{
	struct compat_item it = {
		.cls = (unsigned char)f->cls, .cover = (unsigned char)f->cover,
		.self = f->self, .err = f->err, .reason = f->reason,
	};

	it.object = add_string(v, cap, f->object);
	it.what = add_string(v, cap, f->what);
	if (*v)
		(*v)->items[(*v)->nitems++] = it;
}

struct compat_value *compat_value_new(const struct compat_verdict *vd, size_t *size)
{
	size_t cap = 256;
	struct compat_value *v = calloc(1, sizeof(*v) + cap);

	if (!v)
		return NULL;
	v->len = 1;			/* offset 0: the empty string, "none" */
	add_item(&v, &cap, &vd->main);
	for (size_t i = 0; v && i < vd->nfindings; i++)
		add_item(&v, &cap, &vd->findings[i]);
	if (!v)
		return NULL;
	v->nleft = vd->nleft;
	*size = sizeof(*v) + v->len;
	return v;
}

static const char *str_at(const struct compat_value *v, size_t off)
{
	return off ? v->strings + off : NULL;
}

/* "EACCES", or NULL for the ELF reader's own errors (the reason says them). */
static const char *err_name(int err)
{
	if (!err || err == ELF_CET_ENOTELF || err == ELF_CET_ECORRUPT)
		return NULL;
	return errname(-err);
}

static void item_text(const struct compat_value *v, const struct compat_item *it, bool full,
		      struct cetctl_text *out)
{
	const char *obj = str_at(v, it->object), *what = str_at(v, it->what);
	const char *cover = compat_cover_text(it->cover), *e = err_name(it->err);
	bool any = false;

	cetctl_text_puts(out, compat_class_text(it->cls));
	/* a good verdict with nothing particular is its class alone */
	if (it->cls == COMPAT_MARKED || it->cls == COMPAT_NA ||
	    (it->cls == COMPAT_FORCED_SAFE && !what && v->nitems == 1))
		return;
	cetctl_text_puts(out, ": ");
	cetctl_text_puts(out, it->reason ? it->reason : "?");
	cetctl_text_puts(out, " (");
	if (obj) {
		const char *base = strrchr(obj, '/');

		cetctl_text_puts(out, full ? obj : it->self ? "self" : base ? base + 1 : obj);
		any = true;
	}
	if (what || e) {
		cetctl_text_puts(out, any ? ": " : "");
		cetctl_text_puts(out, what ? what : e);
		any = true;
	}
	if (*cover) {
		cetctl_text_puts(out, any ? "; " : "");
		cetctl_text_puts(out, cover);
		any = true;
	}
	if (any)
		cetctl_text_puts(out, ")");
	else
		out->s[out->len -= 2] = '\0';	/* no " (" after all */
}

void compat_value_text(const struct compat_value *v, bool full, struct cetctl_text *out)
{
	item_text(v, &v->items[0], full, out);
}

static void value_text(const void *v, struct cetctl_text *out)
{
	compat_value_text(v, false, out);
}

static void item_json(struct jsonwrt *w, const struct compat_value *v,
		      const struct compat_item *it)
{
	jsonwrt_string(w, "verdict", compat_class_name(it->cls));
	jsonwrt_string(w, "object", str_at(v, it->object));
	jsonwrt_string(w, "match", str_at(v, it->what));
	jsonwrt_string(w, "errno", err_name(it->err));
	jsonwrt_string(w, "reason", it->reason);
	jsonwrt_string(w, "cover", compat_cover_name(it->cover));
}

static void value_json(struct jsonwrt *w, const char *name, const void *p)
{
	const struct compat_value *v = p;

	jsonwrt_object_open(w, name, JSONWRT_LINE);
	item_json(w, v, &v->items[0]);
	jsonwrt_array_open(w, "findings", JSONWRT_TIGHT);
	for (size_t i = 1; i < v->nitems; i++) {
		jsonwrt_object_open(w, NULL, JSONWRT_TIGHT);
		item_json(w, v, &v->items[i]);
		jsonwrt_object_close(w);
	}
	jsonwrt_array_close(w);
	jsonwrt_ulong(w, "more", v->nleft);
	jsonwrt_object_close(w);
}

const struct cetctl_value_type compat_value_type = { value_text, value_json };

void compat_cell_set(struct cetctl_table *tb, struct cetctl_line *ln, int col,
		     struct compat_ctx *cc, const char *path, const struct elf_cet_info *in)
{
	struct compat_env env = {
		.preload = true,
		.preload_ucontext = COMPAT_PRELOAD_MENDS_UCONTEXT,
		/* as run and info judge it: a recent glibc mends nothing unless
		 * built with CET (its libc.so.6 marked SHSTK) */
		.glibc_manages = cet_glibc_manages_shstk(gnu_get_libc_version()) &&
				 cet_glibc_cet_built() == CET_YES,
	};
	struct compat_verdict vd;
	struct compat_value *v;
	size_t size;

	if (!cetctl_table_has(tb, col))
		return;
	if (!compat_applies(in)) {
		cetctl_table_set(tb, ln, col, cetctl_table_json(tb) ? NULL : "-");
		return;
	}
	if (compat_judge_path(cc, path, &env, &vd) < 0 || !(v = compat_value_new(&vd, &size)))
		err(CETCTL_EXIT_FAILURE, "out of memory");
	cetctl_table_set_value(tb, ln, col, v, size);
	free(v);
}
