// SPDX-License-Identifier: GPL-2.0-or-later
#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <langinfo.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <wchar.h>

#include "cetctl.h"
#include "jsonwrt.h"
#include "outbuf.h"
#include "table.h"

/*
 * The rows are ours, not libsmartcols' lines: a line is an array of cell
 * strings. libsmartcols lays out only what needs its layout: a terminal
 * (widths, truncation), the tree of child lines as text, and cells that
 * are not printable ASCII (its encoding and width rules); everything else,
 * JSON included, is written here. With opts->stream and JSON without
 * nesting, each line is written as soon as the next one starts and then
 * freed, so the rows are never all held.
 */
struct cetctl_line {
	struct cetctl_line *next;	/* every line, in creation order */
	struct cetctl_line *parent;
	struct cetctl_line *child, *last_child, *sibling;
	struct libscols_line *sl;	/* when handed to libsmartcols */
	size_t used, size;		/* of the line's arena */
	char *cells[];			/* t->nids, NULL: no data; then the arena */
};

/*
 * Each line carries an arena after its cell pointers, where the cells are
 * copied while they fit: one allocation per line instead of one per cell.
 * A cell that does not fit, or is set again, is allocated on its own. The
 * arena is sized after the lines before (a row of elf is about 150 bytes),
 * between LINE_ARENA_MIN and LINE_ARENA_MAX, so that a table of thousands
 * of held rows does not touch twice the memory it needs.
 */
#define LINE_ARENA_MIN	128
#define LINE_ARENA_MAX	512

/* an error for the JSON "errors" array */
struct table_error {
	char *file;		/* NULL: a process */
	long pid;
	char *msg;
	const char *errname;	/* NULL: null */
};

struct cetctl_table {
	struct libscols_table *tb;	/* columns and options; lines only to print */
	const struct cetctl_column *cols;
	int ids[CETCTL_MAX_COLUMNS];
	size_t nids;
	signed char pos[CETCTL_MAX_COLUMNS * 2];	/* column id -> first position, -1 */
	char *jkey[CETCTL_MAX_COLUMNS];	/* member name of each position, NULL for a repeat */
	bool json, raw, noheadings, stream;
	const char *children;	/* JSON member of nested lines */
	const char *name;	/* JSON array */
	bool with_errors;
	struct table_error *errs;	/* for the JSON "errors" array */
	size_t nerrs;
	struct cetctl_line *head, *tail;
	size_t nlines, nchildren;
	size_t arena;		/* of the next line */
	struct outbuf *wb;	/* text output buffer, while printing */
	struct jsonwrt *jw;	/* JSON, while printing or streaming */
	struct cetctl_text text;	/* a typed value's text, reused */
};

static int column_by_name(const struct cetctl_column *cols, size_t ncols,
			  const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < ncols; i++)
		if (strlen(cols[i].name) == len &&
		    strncasecmp(cols[i].name, name, len) == 0)
			return (int)i;
	return -1;
}

/*
 * The width of a terminal, as util-linux does it: libsmartcols asks the
 * terminal; COLUMNS, when set, says what the width is (a terminal that
 * does not know, or a user who wants another). Output that is not a
 * terminal keeps no width at all: nothing cut, nothing padded.
 */
static void set_termwidth(struct libscols_table *tb)
{
	const char *c = getenv("COLUMNS");
	char *end;
	long n;

	if (!c || !*c || !isatty(STDOUT_FILENO))
		return;
	errno = 0;
	n = strtol(c, &end, 10);
	if (!errno && !*end && n > 0 && n <= 100000)
		scols_table_set_termwidth(tb, (size_t)n);
}

/*
 * Parse a -o/--output list ("COL1,COL2" or "+COL3" to append to the
 * defaults already in @ids) of command @cmd. Says why and returns -1 on
 * an unknown column or too many columns.
 */
static int columns_parse(const struct cetctl_column *cols, size_t ncols, const char *list,
			 int *ids, size_t *nids, const char *cmd)
{
	const char *p, *end;

	if (*list == '+')
		list++;		/* append to the defaults */
	else
		*nids = 0;

	for (p = list; *p; p = *end ? end + 1 : end) {
		size_t len;
		int id;

		end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		len = (size_t)(end - p);
		if (len == 0)
			continue;
		id = column_by_name(cols, ncols, p, len);
		if (id < 0) {
			warnx("%s: unknown column: %.*s", cmd, (int)len, p);
			return -1;
		}
		if (*nids >= CETCTL_MAX_COLUMNS) {
			warnx("%s: too many columns", cmd);
			return -1;
		}
		ids[(*nids)++] = id;
	}
	if (*nids == 0) {
		warnx("%s: no columns given", cmd);
		return -1;
	}
	return 0;
}

void cetctl_columns_list(FILE *out, const struct cetctl_column *cols,
			 size_t ncols, const struct cetctl_table_opts *opts)
{
	struct libscols_table *tb;
	struct jsonwrt w;
	size_t i;

	if (opts->json) {
		jsonwrt_init(&w, out);
		jsonwrt_object_open(&w, NULL, JSONWRT_BLOCK);
		jsonwrt_array_open(&w, "columns", JSONWRT_BLOCK);
		for (i = 0; i < ncols; i++) {
			jsonwrt_object_open(&w, NULL, JSONWRT_BLOCK);
			jsonwrt_string(&w, "name", cols[i].name);
			jsonwrt_string(&w, "description", cols[i].help);
			jsonwrt_object_close(&w);
		}
		jsonwrt_array_close(&w);
		jsonwrt_object_close(&w);
		return;
	}
	tb = scols_new_table();
	if (!tb)
		err(1, "failed to allocate output table");
	scols_table_enable_raw(tb, opts->raw);
	scols_table_enable_noheadings(tb, opts->noheadings);
	set_termwidth(tb);
	scols_table_new_column(tb, "NAME", 0, 0);
	scols_table_new_column(tb, "DESCRIPTION", 0, SCOLS_FL_TRUNC);
	for (i = 0; i < ncols; i++) {
		struct libscols_line *ln = scols_table_new_line(tb, NULL);

		if (!ln)
			err(1, "failed to allocate output line");
		scols_line_set_data(ln, 0, cols[i].name);
		scols_line_set_data(ln, 1, cols[i].help);
	}
	scols_table_set_stream(tb, out);
	scols_print_table(tb);
	scols_unref_table(tb);
}

void cetctl_output_options_help(FILE *out)
{
	fputs("  -J, --json             use JSON output format\n"
	      "  -o, --output <list>    output columns (+LIST appends to the default)\n"
	      "      --list-columns     list the available columns\n"
	      "  -n, --noheadings       do not print headings\n"
	      "      --raw              use the raw output format\n"
	      "  -h, --help             display this help\n"
	      "  -V, --version          display version\n", out);
}

void cetctl_columns_help(FILE *out, const struct cetctl_column *cols, size_t ncols)
{
	size_t i;

	fputs("\nAvailable output columns:\n", out);
	for (i = 0; i < ncols; i++)
		fprintf(out, " %12s  %s\n", cols[i].name, cols[i].help);
}

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
	set_termwidth(t->tb);
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

static void json_stream_line(struct cetctl_table *t, struct cetctl_line *ln);

struct cetctl_line *cetctl_table_new_line(struct cetctl_table *t, struct cetctl_line *parent)
{
	struct cetctl_line *ln;

	if (t->tail && t->tail->used + 64 > t->arena)
		t->arena = t->tail->used + 64 < LINE_ARENA_MAX ? t->tail->used + 64 : LINE_ARENA_MAX;
	/* streaming: the line before is complete, write it and let it go */
	if (t->stream && t->head) {
		json_stream_line(t, t->head);
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

/* ---- JSON -------------------------------------------------------------- */

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

static FILE *table_stream(struct cetctl_table *t)
{
	FILE *f = scols_table_get_stream(t->tb);

	return f ? f : stdout;
}

static struct outbuf *table_out(struct cetctl_table *t)
{
	if (!t->wb) {
		t->wb = malloc(sizeof(*t->wb));
		if (!t->wb)
			err(CETCTL_EXIT_FAILURE, "out of memory");
		t->wb->n = 0;
	}
	t->wb->f = table_stream(t);
	return t->wb;
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

static void json_stream_line(struct cetctl_table *t, struct cetctl_line *ln)
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

/* ---- text -------------------------------------------------------------- */

/*
 * A cell libsmartcols would print as it is, one column per byte: printable
 * ASCII without the backslash (which it may encode). Sets *@len.
 */
static bool plain_cell(const char *s, size_t *len)
{
	const char *p = s;

	for (; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e || *p == '\\')
			return false;
	*len = (size_t)(p - s);
	return true;
}

static void pad(struct outbuf *out, size_t n)
{
	outbuf_spaces(out, n);
}

/* --raw: a blank is \x20, as libsmartcols writes it (the cell is plain). */
static void raw_cell(struct outbuf *out, const char *s)
{
	const char *run = s;

	for (; *s; s++) {
		if (*s != ' ')
			continue;
		outbuf_write(out, run, (size_t)(s - run));
		outbuf_write(out, "\\x20", 4);
		run = s + 1;
	}
	outbuf_write(out, run, strlen(run));
}

/* One row of the human table: @cells (NULL: empty), padded to @width. */
static void text_row(struct cetctl_table *t, struct outbuf *out, const char *const *cells,
		     const size_t *width)
{
	for (size_t i = 0; i < t->nids; i++) {
		const char *d = cells[i] ? cells[i] : "";
		size_t len = strlen(d);
		bool last = i + 1 == t->nids;
		bool right = t->cols[t->ids[i]].flags & SCOLS_FL_RIGHT;

		if (t->raw) {
			raw_cell(out, d);
			if (!last)
				outbuf_putc(out, ' ');
			continue;
		}
		if (*d && right) {
			pad(out, width[i] - len);
			len = width[i];
		}
		outbuf_write(out, d, strlen(d));
		if (last)
			break;
		pad(out, width[i] - len);
		outbuf_putc(out, ' ');
	}
	outbuf_putc(out, '\n');
}

/*
 * The flat table, not on a terminal, every cell plain: libsmartcols' layout
 * needs no measuring then. A column is as wide as its widest cell, at least
 * its header (or 1); a width hint of 1 or more widens it further unless the
 * header already did; nothing is cut; the last column is not padded unless
 * right-aligned. Returns false, having written nothing, when the table is
 * not such a table.
 */
static bool print_plain(struct cetctl_table *t)
{
	size_t width[CETCTL_MAX_COLUMNS], wmin[CETCTL_MAX_COLUMNS];
	const char *hdr[CETCTL_MAX_COLUMNS];
	struct outbuf *out;

	if (t->nchildren || !t->head || isatty(STDOUT_FILENO))
		return false;
	for (size_t i = 0; i < t->nids; i++) {
		const struct cetctl_column *c = &t->cols[t->ids[i]];

		if (scols_column_is_customwrap(scols_table_get_column(t->tb, i)) ||
		    !plain_cell(c->name, &wmin[i]))
			return false;
		hdr[i] = c->name;
		if (!wmin[i])
			wmin[i] = 1;
		width[i] = 0;
	}
	for (struct cetctl_line *ln = t->head; ln; ln = ln->next) {
		for (size_t i = 0; i < t->nids; i++) {
			size_t len = 0;

			if (ln->cells[i] && !plain_cell(ln->cells[i], &len))
				return false;
			if (len > width[i])
				width[i] = len;
		}
	}
	for (size_t i = 0; i < t->nids; i++) {
		double hint = t->cols[t->ids[i]].whint;

		if (width[i] < wmin[i])
			width[i] = wmin[i];
		else if (hint >= 1 && width[i] < (size_t)hint && wmin[i] < (size_t)hint)
			width[i] = (size_t)hint;
	}
	out = table_out(t);
	if (!t->noheadings)
		text_row(t, out, hdr, width);
	for (struct cetctl_line *ln = t->head; ln; ln = ln->next)
		text_row(t, out, (const char *const *)ln->cells, width);
	outbuf_flush(out);
	return true;
}

/* Everything else: the lines handed to libsmartcols, which lays them out. */
static void fit_sentences(struct cetctl_table *t, FILE *out);

static int print_scols(struct cetctl_table *t)
{
	FILE *out = scols_table_get_stream(t->tb);

	for (struct cetctl_line *ln = t->head; ln; ln = ln->next) {
		ln->sl = scols_table_new_line(t->tb, ln->parent ? ln->parent->sl : NULL);
		if (!ln->sl)
			return -ENOMEM;
		for (size_t i = 0; i < t->nids; i++)
			if (ln->cells[i] && scols_line_set_data(ln->sl, i, ln->cells[i]) != 0)
				return -ENOMEM;
	}
	fit_sentences(t, out ? out : stdout);
	return scols_print_table(t->tb);
}

/*
 * The width of @s as libsmartcols shows it: a byte that is not part of a
 * printable character is encoded as \xNN, four columns.
 */
static size_t shown_width(const char *s, size_t len)
{
	mbstate_t st;
	size_t w = 0;

	memset(&st, 0, sizeof(st));
	while (len) {
		wchar_t wc;
		size_t n = mbrtowc(&wc, s, len, &st);
		int cw;

		if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
			memset(&st, 0, sizeof(st));
			w += 4;
			s++, len--;
			continue;
		}
		cw = wcwidth(wc);
		w += cw < 0 ? 4 * n : (size_t)cw;
		s += n, len -= n;
	}
	return w;
}

/* what a cut sentence keeps at least, when its head is shorter */
#define SENTENCE_MIN	24

/*
 * The length of a sentence's head: up to its first ':', ';' or " (";
 * without one, its words within SENTENCE_MIN columns (its first word at
 * least).
 */
static size_t head_len(const char *s)
{
	size_t n = strcspn(s, ":;("), i, w = 0;

	if (s[n]) {
		while (n && s[n - 1] == ' ')
			n--;
		return n;
	}
	n = strcspn(s, " ");
	for (i = n; s[i]; i++)
		if (s[i] == ' ' && !strchr(" ,", s[i - 1])) {
			if (shown_width(s, i) > SENTENCE_MIN)
				break;
			w = i;
		}
	if (!s[i] && shown_width(s, i) <= SENTENCE_MIN)
		return i;
	return w > n ? w : n;
}

/*
 * @s cut to at most @limit columns with @ell at the end, at a word
 * boundary after its head; the head and @ell when even that is wider.
 * NULL when @s fits (or on ENOMEM: the cell stays whole).
 */
static char *fit_sentence(const char *s, size_t limit, const char *ell)
{
	size_t len = strlen(s), head = head_len(s), best = head, i;
	size_t ellw = shown_width(ell, strlen(ell));
	char *out;

	if (head == len || shown_width(s, len) <= limit)
		return NULL;
	for (i = head; i < len; i++) {
		size_t end = i;

		if (s[i] != ' ')
			continue;
		/* the words before this space, without trailing punctuation */
		while (end > head && strchr(" :;,", s[end - 1]))
			end--;
		if (shown_width(s, end) + ellw > limit)
			break;
		best = end;
	}
	if (asprintf(&out, "%.*s%s", (int)best, s, ell) < 0)
		return NULL;
	return out;
}

static bool is_sentence(const struct cetctl_table *t, size_t i)
{
	return t->cols[t->ids[i]].flags & CETCTL_FL_SENTENCE;
}

/*
 * For each sentence column: @need, its widest cell (or heading); @room,
 * what the dry run leaves it: its widest head and some words more
 * (SENTENCE_MIN columns, less when its sentences are all shorter).
 */
static void sentence_widths(struct cetctl_table *t, size_t *need, size_t *room)
{
	struct libscols_iter *itr = scols_new_iter(SCOLS_ITER_FORWARD);
	struct libscols_line *ln;
	size_t i;

	for (i = 0; i < t->nids; i++)
		need[i] = room[i] = is_sentence(t, i) ? strlen(t->cols[t->ids[i]].name) : 0;
	while (itr && scols_table_next_line(t->tb, itr, &ln) == 0)
		for (i = 0; i < t->nids; i++) {
			const char *d = scols_cell_get_data(scols_line_get_cell(ln, i));
			size_t w, h;

			if (!d || !is_sentence(t, i))
				continue;
			w = shown_width(d, strlen(d));
			h = shown_width(d, head_len(d)) + (head_len(d) < strlen(d));
			if (h < SENTENCE_MIN)
				h = SENTENCE_MIN;
			if (w > need[i])
				need[i] = w;
			if ((w < h ? w : h) > room[i])
				room[i] = w < h ? w : h;
		}
	scols_free_iter(itr);
}

static size_t min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

/* The width of column @i's widest cell or heading: what it takes uncut. */
static size_t natural_width(struct cetctl_table *t, size_t i)
{
	struct libscols_iter *itr = scols_new_iter(SCOLS_ITER_FORWARD);
	struct libscols_line *ln;
	const char *name = t->cols[t->ids[i]].name;
	size_t w = shown_width(name, strlen(name));

	if (!itr)
		return SIZE_MAX;	/* then libsmartcols' width stands */
	while (scols_table_next_line(t->tb, itr, &ln) == 0) {
		const char *d = scols_cell_get_data(scols_line_get_cell(ln, i));
		size_t dw = d ? shown_width(d, strlen(d)) : 0;

		if (dw > w)
			w = dw;
	}
	scols_free_iter(itr);
	return w;
}

/*
 * The width the columns other than the sentences take, separators
 * included, as libsmartcols lays them out in @width columns: a dry run
 * into memory with the sentences hidden. 0 when it could not be run.
 * libsmartcols gives the last column whatever the terminal has left, so
 * a column counts no more than its widest cell: the slack is the
 * sentences' to share.
 */
static size_t others_width(struct cetctl_table *t, FILE *out, size_t width)
{
	struct libscols_table *tb = t->tb;
	size_t term = scols_table_get_termwidth(tb), used = 0, i;
	char *dry = NULL;
	size_t drylen;
	FILE *mem = open_memstream(&dry, &drylen);

	if (!mem)
		return 0;
	for (i = 0; i < t->nids; i++)
		if (is_sentence(t, i))
			scols_column_set_flags(scols_table_get_column(tb, i),
					       (t->cols[t->ids[i]].flags & ~CETCTL_FL_SENTENCE &
						~SCOLS_FL_TRUNC) | SCOLS_FL_HIDDEN);
	scols_table_set_stream(tb, mem);
	scols_table_set_termforce(tb, SCOLS_TERMFORCE_ALWAYS);
	scols_table_set_termwidth(tb, width);
	scols_print_table(tb);
	scols_table_set_termforce(tb, SCOLS_TERMFORCE_AUTO);
	scols_table_set_termwidth(tb, term);
	scols_table_set_stream(tb, out);
	fclose(mem);
	free(dry);
	for (i = 0; i < t->nids; i++) {
		struct libscols_column *cl = scols_table_get_column(tb, i);

		if (is_sentence(t, i))	/* shown again, never cut by libsmartcols */
			scols_column_set_flags(cl, t->cols[t->ids[i]].flags &
					       ~CETCTL_FL_SENTENCE & ~SCOLS_FL_TRUNC);
		else
			used += min_size(scols_column_get_width(cl), natural_width(t, i));
	}
	return used + t->nids - 1;	/* one space between columns */
}

/*
 * Share @avail columns between the sentence columns: one that needs less
 * than an even share gets what it needs, the others split the rest.
 */
static void share_out(struct cetctl_table *t, const size_t *need, size_t avail, size_t *give)
{
	size_t i, k = 0;
	bool settled;

	for (i = 0; i < t->nids; i++) {
		give[i] = SIZE_MAX;
		k += is_sentence(t, i);
	}
	do {
		settled = false;
		for (i = 0; k && i < t->nids; i++)
			if (is_sentence(t, i) && give[i] == SIZE_MAX && need[i] <= avail / k) {
				give[i] = need[i];
				avail -= need[i];
				k--;
				settled = true;
			}
	} while (settled);
	for (i = 0; i < t->nids; i++)
		if (give[i] == SIZE_MAX)
			give[i] = k ? avail / k : 0;
}

/*
 * On a terminal, give the sentence columns what the other columns leave
 * of its width (share_out()) and cut each longer sentence there, as
 * fit_sentence() does. The other columns' widths are libsmartcols' own,
 * from a dry run that leaves room for the sentences' heads.
 */
static void fit_sentences(struct cetctl_table *t, FILE *out)
{
	size_t need[CETCTL_MAX_COLUMNS], room[CETCTL_MAX_COLUMNS], give[CETCTL_MAX_COLUMNS];
	size_t term, want = 0, nsent = 0, used, i;
	const char *cs = nl_langinfo(CODESET);
	const char *ell = cs && !strcmp(cs, "UTF-8") ? "\u2026" : "...";
	struct libscols_iter *itr;
	struct libscols_line *ln;

	if (scols_table_is_raw(t->tb) || !isatty(fileno(out)))
		return;
	term = scols_table_get_termwidth(t->tb);
	for (i = 0; i < t->nids; i++)
		nsent += is_sentence(t, i);
	if (!term || !nsent)
		return;
	sentence_widths(t, need, room);
	for (i = 0; i < t->nids; i++)
		want += room[i];
	used = others_width(t, out, term > want + nsent ? term - want - nsent : term);
	if (!used)
		return;
	share_out(t, need, used < term ? term - used : 0, give);
	itr = scols_new_iter(SCOLS_ITER_FORWARD);
	while (itr && scols_table_next_line(t->tb, itr, &ln) == 0)
		for (i = 0; i < t->nids; i++) {
			const char *d = scols_cell_get_data(scols_line_get_cell(ln, i));
			char *cut;

			if (!d || !is_sentence(t, i))
				continue;
			cut = fit_sentence(d, give[i], ell);
			if (cut && scols_line_refer_data(ln, i, cut) != 0)
				free(cut);
		}
	scols_free_iter(itr);
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
		return print_plain(t) ? 0 : print_scols(t);
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

bool cetctl_output_option(struct cetctl_output_args *oa, int c, const char *arg)
{
	switch (c) {
	case 'J':
		oa->topts.json = true;
		return true;
	case 'o':
		oa->outlist = arg;
		return true;
	case CETCTL_OPT_LIST_COLUMNS:
		oa->list_columns = true;
		return true;
	case 'n':
		oa->topts.noheadings = true;
		return true;
	case CETCTL_OPT_RAW:
		oa->topts.raw = true;
		return true;
	default:
		return false;
	}
}

int cetctl_output_columns(const struct cetctl_output_args *oa, const struct cetctl_column *cols,
			  size_t ncols, int *ids, size_t *nids, const char *cmd)
{
	if (oa->list_columns) {
		cetctl_columns_list(stdout, cols, ncols, &oa->topts);
		return CETCTL_EXIT_OK;
	}
	if (oa->outlist && columns_parse(cols, ncols, oa->outlist, ids, nids, cmd) < 0)
		return cetctl_usage_error(cmd);
	return CETCTL_OUTPUT_CONTINUE;
}

int cetctl_output_parse(int argc, char **argv, struct cetctl_output_args *oa,
			void (*usage)(void), const struct cetctl_column *cols, size_t ncols,
			int *ids, size_t *nids, const char *cmd)
{
	static const struct option longopts[] = {
		CETCTL_OUTPUT_LONGOPTS,
		{ "help",         no_argument,       NULL, 'h' },
		{ "version",      no_argument,       NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	oa->topts.json = cetctl_globals.json;
	while ((c = getopt_long(argc, argv, CETCTL_OUTPUT_SHORTOPTS "hV", longopts, NULL)) != -1) {
		if (!cetctl_output_option(oa, c, optarg))
			return cetctl_option_other(c, usage, cmd);
	}
	return cetctl_output_columns(oa, cols, ncols, ids, nids, cmd);
}
