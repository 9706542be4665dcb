// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The tables of every subcommand (table.h): a table of the columns chosen,
 * its lines (held here, not by libsmartcols; see table-internal.h), the
 * cells set in them (strings, lists, typed values) and the errors kept for
 * the JSON "errors" array. Printing is table-json.c's and table-text.c's;
 * this part calls table-json.c to stream a finished line, and
 * table-width.c for the terminal's width.
 */
#include <err.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cetctl.h"
#include "table-internal.h"

static int position_of(const struct cetctl_table *t, int colid);

struct cetctl_table *cetctl_table_new(const struct cetctl_column *cols,
				      const int *ids, size_t nids,
				      const struct cetctl_table_opts *opts)
{
	struct cetctl_table *t;
	size_t i;

	if (nids > CETCTL_MAX_COLUMNS)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tb = scols_new_table();
	if (!t->tb) {
		free(t);
		return NULL;
	}
	t->cols = cols;
	t->nids = nids;
	t->json = opts->json;
	t->raw = opts->raw;
	t->noheadings = opts->noheadings;
	t->children = opts->json_children;
	t->stream = opts->stream && opts->json && !opts->json_children;
	t->name = opts->json_name ? opts->json_name : "rows";
	t->with_errors = opts->json_errors;
	memcpy(t->ids, ids, nids * sizeof(ids[0]));
	memset(t->pos, -1, sizeof(t->pos));
	t->arena = LINE_ARENA_MIN;
	for (i = nids; i-- > 0; )
		if (ids[i] >= 0 && (size_t)ids[i] < sizeof(t->pos))
			t->pos[ids[i]] = (signed char)i;

	scols_table_enable_json(t->tb, opts->json);
	scols_table_enable_raw(t->tb, opts->raw);
	scols_table_enable_noheadings(t->tb, opts->noheadings);
	table_set_termwidth(t->tb);
	if (opts->json_name)
		scols_table_set_name(t->tb, opts->json_name);

	for (i = 0; i < nids; i++) {
		const struct cetctl_column *c = &cols[ids[i]];
		struct libscols_column *cl;

		cl = scols_table_new_column(t->tb, c->name, c->whint,
					    c->flags & ~CETCTL_FL_SENTENCE);
		if (!cl) {
			cetctl_table_free(t);
			return NULL;
		}
		if (opts->json && c->json_type != CETCTL_JSON_VALUE)
			scols_column_set_json_type(cl, c->json_type);
		/* the JSON member name, lower case, once per column */
		if (opts->json && position_of(t, ids[i]) == (int)i) {
			size_t len = strlen(c->name);
			char *k = malloc(len + 1);

			if (!k) {
				cetctl_table_free(t);
				return NULL;
			}
			for (size_t j = 0; j <= len; j++)
				k[j] = c->name[j] >= 'A' && c->name[j] <= 'Z' ?
				       (char)(c->name[j] - 'A' + 'a') : c->name[j];
			t->jkey[i] = k;
		}
	}
	return t;
}

static char *line_arena(const struct cetctl_table *t, struct cetctl_line *ln)
{
	return (char *)&ln->cells[t->nids];
}

static bool in_arena(const struct cetctl_table *t, struct cetctl_line *ln, const char *p)
{
	const char *a = line_arena(t, ln);

	return p >= a && p < a + ln->size;
}

static void line_free(struct cetctl_table *t, struct cetctl_line *ln)
{
	for (size_t i = 0; i < t->nids; i++)
		if (!in_arena(t, ln, ln->cells[i]))
			free(ln->cells[i]);
	free(ln);
}

struct cetctl_line *cetctl_table_new_line(struct cetctl_table *t, struct cetctl_line *parent)
{
	struct cetctl_line *ln;

	if (t->tail && t->tail->used + 64 > t->arena)
		t->arena = t->tail->used + 64 < LINE_ARENA_MAX ? t->tail->used + 64 : LINE_ARENA_MAX;
	/* streaming: the line before is complete, write it and let it go */
	if (t->stream && t->head) {
		table_json_stream_line(t, t->head);
		line_free(t, t->head);
		t->head = t->tail = NULL;
	}
	ln = malloc(sizeof(*ln) + t->nids * sizeof(ln->cells[0]) + t->arena);
	if (!ln)
		return NULL;
	memset(ln, 0, sizeof(*ln) + t->nids * sizeof(ln->cells[0]));
	ln->size = t->arena;
	if (t->tail)
		t->tail->next = ln;
	else
		t->head = ln;
	t->tail = ln;
	t->nlines++;
	if (parent) {
		ln->parent = parent;
		if (parent->last_child)
			parent->last_child->sibling = ln;
		else
			parent->child = ln;
		parent->last_child = ln;
		t->nchildren++;
	}
	return ln;
}

static int position_of(const struct cetctl_table *t, int colid)
{
	size_t i;

	if (colid >= 0 && (size_t)colid < sizeof(t->pos))
		return t->pos[colid];
	for (i = 0; i < t->nids; i++)
		if (t->ids[i] == colid)
			return (int)i;
	return -1;
}

bool cetctl_table_has(const struct cetctl_table *t, int colid)
{
	return position_of(t, colid) >= 0;
}

/*
 * Store the @len bytes of @data in every copy of column @colid (the same
 * column may be selected twice): a string with its NUL, or a typed value,
 * kept aligned for its struct.
 */
static int store(struct cetctl_table *t, struct cetctl_line *ln, int pos, int colid,
		 const void *data, size_t len, bool value)
{
	for (size_t i = (size_t)pos; i < t->nids; i++) {
		size_t at;
		char *d;

		if (t->ids[i] != colid)
			continue;
		at = value ? (ln->used + 15) & ~(size_t)15 : ln->used;
		if (!ln->cells[i] && at <= ln->size && len <= ln->size - at) {
			d = line_arena(t, ln) + at;
			ln->used = at + len;
		} else {
			d = malloc(len);
			if (!d)
				return -ENOMEM;
		}
		memcpy(d, data, len);
		if (!in_arena(t, ln, ln->cells[i]))
			free(ln->cells[i]);
		ln->cells[i] = d;
	}
	return 0;
}

int cetctl_table_set(struct cetctl_table *t, struct cetctl_line *ln,
		     int colid, const char *data)
{
	int pos = position_of(t, colid);

	/* JSON: the writer makes the document valid UTF-8 whatever the
	 * name (the tables escape by themselves, following the locale) */
	if (pos < 0 || !data)
		return 0;
	return store(t, ln, pos, colid, data, strlen(data) + 1, false);
}

int cetctl_table_setf(struct cetctl_table *t, struct cetctl_line *ln,
		      int colid, const char *fmt, ...)
{
	va_list ap;
	char buf[128], *s = buf;
	int rc;

	if (position_of(t, colid) < 0)
		return 0;
	va_start(ap, fmt);
	rc = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (rc < 0)
		return -EINVAL;
	if ((size_t)rc >= sizeof(buf)) {
		va_start(ap, fmt);
		rc = vasprintf(&s, fmt, ap);
		va_end(ap);
		if (rc < 0)
			return -ENOMEM;
	}
	rc = cetctl_table_set(t, ln, colid, s);
	if (s != buf)
		free(s);
	return rc;
}

struct libscols_table *cetctl_table_scols(struct cetctl_table *t)
{
	return t->tb;
}

bool cetctl_table_json(const struct cetctl_table *t)
{
	return t->json;
}

void cetctl_text_grow(struct cetctl_text *out, size_t len)
{
	size_t cap = (out->len + len + 1) * 2;
	char *p = realloc(out->s, cap);

	if (!p)
		err(CETCTL_EXIT_FAILURE, "out of memory");
	out->s = p;
	out->cap = cap;
}

int cetctl_table_set_value(struct cetctl_table *t, struct cetctl_line *ln,
			   int colid, const void *value, size_t size)
{
	int pos = position_of(t, colid);

	if (pos < 0 || !value)
		return 0;
	if (t->json)
		return store(t, ln, pos, colid, value, size, true);
	t->text.len = 0;
	cetctl_text_add(&t->text, "", 0);	/* "" when the type adds nothing */
	t->cols[colid].value->text(value, &t->text);
	return store(t, ln, pos, colid, t->text.s, t->text.len + 1, false);
}

int cetctl_table_set_list(struct cetctl_table *t, struct cetctl_line *ln,
			  int colid, const char *text, const char *seps,
			  const char *empty_word)
{
	char *list;
	size_t n = 0;
	int rc;

	if (!t->json || !text || position_of(t, colid) < 0)
		return cetctl_table_set(t, ln, colid, text);
	if (empty_word && strcmp(text, empty_word) == 0)
		text = "";
	list = malloc(strlen(text) + 1);
	if (!list)
		return -ENOMEM;
	/* words joined by '\n', the separator of SCOLS_JSON_ARRAY_STRING cells */
	for (const char *p = text; *p; ) {
		size_t len = strcspn(p, seps);

		if (len) {
			if (n)
				list[n++] = '\n';
			memcpy(list + n, p, len);
			n += len;
		}
		p += len;
		p += strspn(p, seps);
	}
	list[n] = '\0';
	rc = cetctl_table_set(t, ln, colid, list);
	free(list);
	return rc;
}

void cetctl_table_error(struct cetctl_table *t, const char *file, long pid,
			int errnum, const char *fmt, ...)
{
	struct table_error *e;
	va_list ap;

	if (!t || !t->json || !t->with_errors)
		return;
	e = realloc(t->errs, (t->nerrs + 1) * sizeof(*e));
	if (!e)
		err(CETCTL_EXIT_FAILURE, "out of memory");
	t->errs = e;
	e += t->nerrs++;
	e->pid = pid;
	e->errname = errnum ? strerrorname_np(errnum) : NULL;
	e->file = file ? strdup(file) : NULL;
	va_start(ap, fmt);
	if (vasprintf(&e->msg, fmt, ap) < 0 || (file && !e->file))
		err(CETCTL_EXIT_FAILURE, "out of memory");
	va_end(ap);
}

void cetctl_table_free(struct cetctl_table *t)
{
	if (!t)
		return;
	for (struct cetctl_line *ln = t->head, *next; ln; ln = next) {
		next = ln->next;
		line_free(t, ln);
	}
	scols_unref_table(t->tb);
	for (size_t i = 0; i < t->nerrs; i++) {
		free(t->errs[i].file);
		free(t->errs[i].msg);
	}
	free(t->errs);
	free(t->wb);
	free(t->jw);
	free(t->text.s);
	for (size_t i = 0; i < t->nids; i++)
		free(t->jkey[i]);
	free(t);
}
