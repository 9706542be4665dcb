// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Printing a table: as JSON, written here through jsonwrt.c (the lines as
 * objects, nested or streamed, typed values, the "errors" array, the
 * command's own members), or as text through table-text.c.
 */
#include <err.h>
#include <stdlib.h>
#include <string.h>

#include "cetctl.h"
#include "jsonwrt.h"
#include "table-internal.h"

/* false for "no", "0", "false" (and nothing), as libsmartcols reads them */
static bool json_truth(const char *d)
{
	return *d && *d != 'n' && *d != 'N' && *d != '0' && *d != 'f' && *d != 'F';
}

/* The cell @d of position @i as the member @name. */
static void json_value(struct jsonwrt *w, const struct cetctl_column *c, const char *name,
		       const char *d)
{
	switch (c->json_type) {
	case SCOLS_JSON_BOOLEAN:
		jsonwrt_bool(w, name, d && json_truth(d));
		return;
	case SCOLS_JSON_BOOLEAN_OPTIONAL:
		if (!d || !*d)
			jsonwrt_null(w, name);
		else
			jsonwrt_bool(w, name, json_truth(d));
		return;
	case SCOLS_JSON_NUMBER:
		jsonwrt_number(w, name, d);
		return;
	case CETCTL_JSON_VALUE:
		if (d)
			c->value->json(w, name, d);
		else
			jsonwrt_null(w, name);
		return;
	case SCOLS_JSON_ARRAY_STRING:
		/* the words of the cell, joined by '\n' (cetctl_table_set_list()) */
		if (!d) {
			jsonwrt_null(w, name);
			return;
		}
		jsonwrt_array_open(w, name, JSONWRT_LINE);
		for (const char *p = d; *p; ) {
			size_t len = strcspn(p, "\n");

			jsonwrt_string_n(w, NULL, p, len);
			p += len;
			if (*p)
				p++;
		}
		jsonwrt_array_close(w);
		return;
	default:
		jsonwrt_string(w, name, d && *d ? d : NULL);
		return;
	}
}

/*
 * One line as a JSON object: the selected columns (each once), without
 * the child-only ones in a parent and only the CETCTL_JSON_CHILD ones in a
 * child; then its children, when the table nests.
 */
static void json_line(struct jsonwrt *w, struct cetctl_table *t, struct cetctl_line *ln,
		      bool child)
{
	jsonwrt_object_open(w, NULL, JSONWRT_BLOCK);
	for (size_t i = 0; i < t->nids; i++) {
		const struct cetctl_column *c = &t->cols[t->ids[i]];

		if (!t->jkey[i])	/* a column selected twice: one member */
			continue;
		if (child ? !(c->jflags & (CETCTL_JSON_CHILD | CETCTL_JSON_CHILD_ONLY)) :
			    (c->jflags & CETCTL_JSON_CHILD_ONLY && t->children))
			continue;
		json_value(w, c, t->jkey[i], ln->cells[i]);
	}
	if (t->children && !child) {
		jsonwrt_array_open(w, t->children, JSONWRT_BLOCK);
		for (struct cetctl_line *cl = ln->child; cl; cl = cl->sibling)
			json_line(w, t, cl, true);
		jsonwrt_array_close(w);
	}
	jsonwrt_object_close(w);
}

/* The writer, the document and its array begun on first use. */
static struct jsonwrt *json_out(struct cetctl_table *t)
{
	if (!t->jw) {
		t->jw = malloc(sizeof(*t->jw));
		if (!t->jw)
			err(CETCTL_EXIT_FAILURE, "out of memory");
		jsonwrt_init(t->jw, table_stream(t));
		jsonwrt_object_open(t->jw, NULL, JSONWRT_BLOCK);
		jsonwrt_array_open(t->jw, t->name, JSONWRT_BLOCK);
	}
	return t->jw;
}

void table_json_stream_line(struct cetctl_table *t, struct cetctl_line *ln)
{
	json_line(json_out(t), t, ln, false);
}

/* The "errors" array: {"file"|"pid", "error", "errno"} objects. */
static void json_errors(struct jsonwrt *w, const struct cetctl_table *t)
{
	jsonwrt_array_open(w, "errors", JSONWRT_BLOCK);
	for (size_t i = 0; i < t->nerrs; i++) {
		const struct table_error *e = &t->errs[i];

		jsonwrt_object_open(w, NULL, JSONWRT_LINE);
		if (e->file)
			jsonwrt_string(w, "file", e->file);
		else
			jsonwrt_long(w, "pid", e->pid);
		jsonwrt_string(w, "error", e->msg);
		jsonwrt_string(w, "errno", e->errname);
		jsonwrt_object_close(w);
	}
	jsonwrt_array_close(w);
}

int cetctl_table_print(struct cetctl_table *t)
{
	return cetctl_table_print_members(t, NULL, NULL);
}

/*
 * JSON is written here, not by libsmartcols: its cells can only be
 * strings, numbers, booleans and arrays of strings or numbers, and its
 * nesting follows the tree column; the documents need objects in cells,
 * nesting that does not depend on -o, [] for empty lists and members next
 * to the array (see the JSON sections of the man pages).
 */
int cetctl_table_print_members(struct cetctl_table *t,
			       void (*members)(struct jsonwrt *w, const void *arg),
			       const void *arg)
{
	struct jsonwrt *w;

	if (!t->json)
		return table_print_plain(t) ? 0 : table_print_scols(t);
	w = json_out(t);
	for (struct cetctl_line *ln = t->head; ln; ln = ln->next)
		if (!ln->parent)
			json_line(w, t, ln, false);
	jsonwrt_array_close(w);
	if (cetctl_proc_root_is_recorded())
		jsonwrt_string(w, "proc_root", cetctl_globals.proc_root);
	if (t->with_errors)
		json_errors(w, t);
	if (members)
		members(w, arg);
	jsonwrt_object_close(w);
	return 0;
}
