// SPDX-License-Identifier: GPL-2.0-or-later
#include <err.h>
#include <errno.h>
#include <langinfo.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <wchar.h>

#include "cetctl.h"
#include "proc-maps.h"
#include "table.h"
#include "util.h"

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

struct wbuf;

struct cetctl_table {
	struct libscols_table *tb;	/* columns and options; lines only to print */
	const struct cetctl_column *cols;
	int ids[CETCTL_MAX_COLUMNS];
	size_t nids;
	signed char pos[CETCTL_MAX_COLUMNS * 2];	/* column id -> first position, -1 */
	char *jkey[CETCTL_MAX_COLUMNS];	/* "name": of each position, NULL for a repeat */
	bool json, raw, noheadings, stream;
	const char *children;	/* JSON member of nested lines */
	const char *name;	/* JSON array */
	bool with_errors;
	FILE *errs;		/* JSON error objects, comma separated */
	char *errbuf;
	size_t errlen, nerrs;
	struct cetctl_line *head, *tail;
	size_t nlines, nchildren;
	size_t arena;		/* of the next line */
	struct wbuf *wb;	/* output buffer, while printing or streaming */
	bool json_open;		/* stream: the document and its array begun */
	size_t json_rows;	/* stream: lines written */
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

static const char *parse_cmd = "";	/* for the messages: "elf: " */

int cetctl_columns_parse(const struct cetctl_column *cols, size_t ncols,
			 const char *list, int *ids, size_t *nids)
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
			warnx("%sunknown column: %.*s", parse_cmd, (int)len, p);
			return -1;
		}
		if (*nids >= CETCTL_MAX_COLUMNS) {
			warnx("%stoo many columns", parse_cmd);
			return -1;
		}
		ids[(*nids)++] = id;
	}
	if (*nids == 0) {
		warnx("%sno columns given", parse_cmd);
		return -1;
	}
	return 0;
}

void cetctl_columns_list(FILE *out, const struct cetctl_column *cols,
			 size_t ncols, const struct cetctl_table_opts *opts)
{
	struct libscols_table *tb = scols_new_table();
	size_t i;

	if (!tb)
		err(1, "failed to allocate output table");
	scols_table_enable_json(tb, opts->json);
	scols_table_enable_raw(tb, opts->raw);
	scols_table_enable_noheadings(tb, opts->noheadings);
	scols_table_set_name(tb, "columns");
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
		if (opts->json && c->json_type != CETCTL_JSON_RAW)
			scols_column_set_json_type(cl, c->json_type);
		/* the JSON member name, lower case, once per column */
		if (opts->json && position_of(t, ids[i]) == (int)i) {
			size_t len = strlen(c->name);
			char *k = malloc(len + 5);

			if (!k) {
				cetctl_table_free(t);
				return NULL;
			}
			k[0] = '"';
			for (size_t j = 0; j < len; j++)
				k[j + 1] = c->name[j] >= 'A' && c->name[j] <= 'Z' ?
					   (char)(c->name[j] - 'A' + 'a') : c->name[j];
			memcpy(k + len + 1, "\": ", 4);
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

/* Store @data in every copy of column @colid (the same column may be selected twice). */
static int store(struct cetctl_table *t, struct cetctl_line *ln, int pos, int colid,
		 const char *data)
{
	size_t len = strlen(data) + 1;

	for (size_t i = (size_t)pos; i < t->nids; i++) {
		char *d;

		if (t->ids[i] != colid)
			continue;
		if (!ln->cells[i] && len <= ln->size - ln->used) {
			d = line_arena(t, ln) + ln->used;
			ln->used += len;
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

static bool is_ascii(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s >= 0x80)
			return false;
	return true;
}

int cetctl_table_set(struct cetctl_table *t, struct cetctl_line *ln,
		     int colid, const char *data)
{
	int pos = position_of(t, colid), rc = 0;
	char *clean = NULL;

	if (pos < 0 || !data)
		return 0;
	/*
	 * The JSON writer copies bytes >= 0x80 as they are: make the
	 * document valid UTF-8 whatever the name (the tables escape by
	 * themselves, following the locale).
	 */
	if (t->json && !is_ascii(data)) {
		rc = cet_utf8_sanitize(data, &clean);
		if (rc < 0)
			return rc;
		if (clean)
			data = clean;
	}
	rc = store(t, ln, pos, colid, data);
	free(clean);
	return rc;
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

int cetctl_table_set_json(struct cetctl_table *t, struct cetctl_line *ln,
			  int colid, const char *json)
{
	int pos = position_of(t, colid);

	if (pos < 0 || !json)
		return 0;
	return store(t, ln, pos, colid, json);
}

int cetctl_table_set_ss_vmas_json(struct cetctl_table *t, struct cetctl_line *ln,
				  int colid, const struct shstk_vmas *vmas)
{
	char *arr;
	int rc;

	if (shstk_vmas_json(vmas, &arr) != 0)
		return -ENOMEM;
	rc = cetctl_table_set_json(t, ln, colid, arr);
	free(arr);
	return rc;
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

/*
 * Output goes through a buffer of our own, written with one fwrite when it
 * fills and when a table is printed: cheaper than stdio's call per piece.
 */
struct wbuf {
	FILE *f;
	size_t n;
	char b[32768];
};

static void wb_flush(struct wbuf *w)
{
	if (w->n)
		fwrite(w->b, 1, w->n, w->f);
	w->n = 0;
}

static inline void wb_write(struct wbuf *w, const char *p, size_t n)
{
	if (n > sizeof(w->b) - w->n) {
		wb_flush(w);
		if (n > sizeof(w->b)) {
			fwrite(p, 1, n, w->f);
			return;
		}
	}
	memcpy(w->b + w->n, p, n);
	w->n += n;
}

static inline void wb_puts(struct wbuf *w, const char *s)
{
	wb_write(w, s, strlen(s));
}

static inline void wb_putc(struct wbuf *w, char c)
{
	if (w->n == sizeof(w->b))
		wb_flush(w);
	w->b[w->n++] = c;
}

static void wb_printf(struct wbuf *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void wb_printf(struct wbuf *w, const char *fmt, ...)
{
	va_list ap;

	wb_flush(w);
	va_start(ap, fmt);
	vfprintf(w->f, fmt, ap);
	va_end(ap);
}

/*
 * @len bytes of @s as the inside of a JSON string: quotes, backslashes and
 * control characters escaped, the runs between them written whole.
 */
static void json_chars(struct wbuf *out, const char *s, size_t len)
{
	const char *run = s, *end = s + len;

	for (; s < end; s++) {
		unsigned char c = (unsigned char)*s;

		if (c != '"' && c != '\\' && c >= 0x20 && c != 0x7f)
			continue;
		wb_write(out, run, (size_t)(s - run));
		if (c == '"' || c == '\\') {
			wb_putc(out, '\\');
			wb_putc(out, (int)c);
		} else {
			wb_printf(out, "\\u%04x", c);
		}
		run = s + 1;
	}
	wb_write(out, run, (size_t)(end - run));
}

/* @s as a JSON string: quotes, backslashes and control characters escaped. */
static void json_string(struct wbuf *out, const char *s)
{
	char *clean = NULL;

	if (!s) {
		wb_puts(out, "null");
		return;
	}
	if (!is_ascii(s) && cet_utf8_sanitize(s, &clean) < 0)
		err(CETCTL_EXIT_FAILURE, "out of memory");
	if (clean)
		s = clean;
	wb_putc(out, '"');
	json_chars(out, s, strlen(s));
	wb_putc(out, '"');
	free(clean);
}

void cetctl_json_string(FILE *out, const char *s)
{
	struct wbuf *w = malloc(sizeof(*w));

	if (!w)
		err(CETCTL_EXIT_FAILURE, "out of memory");
	w->f = out;
	w->n = 0;
	json_string(w, s);
	wb_flush(w);
	free(w);
}

size_t cetctl_json_quote(char *buf, size_t size, const char *s)
{
	char *clean = NULL;
	size_t n = 0;

	if (!s) {
		snprintf(buf, size, "null");
		return 4;
	}
	if (!is_ascii(s) && cet_utf8_sanitize(s, &clean) < 0)
		err(CETCTL_EXIT_FAILURE, "out of memory");
	if (clean)
		s = clean;
#define PUT(c) do { if (n + 1 < size) buf[n] = (c); n++; } while (0)
	PUT('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			PUT('\\');
			PUT((char)c);
		} else if (c < 0x20 || c == 0x7f) {
			char u[8];

			snprintf(u, sizeof(u), "\\u%04x", c);
			for (char *p = u; *p; p++)
				PUT(*p);
		} else {
			PUT((char)c);
		}
	}
	PUT('"');
#undef PUT
	if (size)
		buf[n < size ? n : size - 1] = '\0';
	free(clean);
	return n;
}

void cetctl_json_string_list(FILE *out, const char *const *v, size_t n)
{
	fputc('[', out);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(',', out);
		cetctl_json_string(out, v[i]);
	}
	fputc(']', out);
}

void cetctl_table_error(struct cetctl_table *t, const char *file, long pid,
			int errnum, const char *fmt, ...)
{
	const char *name = errnum ? strerrorname_np(errnum) : NULL;
	va_list ap;
	char *msg;

	if (!t || !t->json || !t->with_errors)
		return;
	if (!t->errs) {
		t->errs = open_memstream(&t->errbuf, &t->errlen);
		if (!t->errs)
			err(CETCTL_EXIT_FAILURE, "out of memory");
	}
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		err(CETCTL_EXIT_FAILURE, "out of memory");
	va_end(ap);
	fputs(t->nerrs++ ? ",\n      {" : "\n      {", t->errs);
	if (file) {
		fputs("\"file\": ", t->errs);
		cetctl_json_string(t->errs, file);
	} else {
		fprintf(t->errs, "\"pid\": %ld", pid);
	}
	fputs(", \"error\": ", t->errs);
	cetctl_json_string(t->errs, msg);
	fputs(", \"errno\": ", t->errs);
	cetctl_json_string(t->errs, name);
	fputc('}', t->errs);
	free(msg);
}

static void indent(struct wbuf *out, int level)
{
	static const char spaces[] = "                                                ";
	size_t n = (size_t)level * 3;

	for (; n > sizeof(spaces) - 1; n -= sizeof(spaces) - 1)
		wb_write(out, spaces, sizeof(spaces) - 1);
	wb_write(out, spaces, n);
}

/* false for "no", "0", "false" (and nothing), as libsmartcols reads them */
static bool json_truth(const char *d)
{
	return *d && *d != 'n' && *d != 'N' && *d != '0' && *d != 'f' && *d != 'F';
}

static void json_value(struct wbuf *out, int type, const char *d)
{
	switch (type) {
	case SCOLS_JSON_BOOLEAN:
		wb_puts(out, d && json_truth(d) ? "true" : "false");
		return;
	case SCOLS_JSON_BOOLEAN_OPTIONAL:
		wb_puts(out, !d || !*d ? "null" : json_truth(d) ? "true" : "false");
		return;
	case SCOLS_JSON_NUMBER:
	case CETCTL_JSON_RAW:
		wb_puts(out, d && *d ? d : "null");
		return;
	case SCOLS_JSON_ARRAY_STRING:
	case SCOLS_JSON_ARRAY_NUMBER:
		if (!d) {
			wb_puts(out, "null");
			return;
		}
		wb_putc(out, '[');
		for (const char *p = d; *p; ) {
			size_t len = strcspn(p, "\n");

			if (p != d)
				wb_puts(out, ", ");
			if (type == SCOLS_JSON_ARRAY_NUMBER) {
				wb_write(out, p, len);
			} else {
				wb_putc(out, '"');
				json_chars(out, p, len);
				wb_putc(out, '"');
			}
			p += len;
			if (*p)
				p++;
		}
		wb_putc(out, ']');
		return;
	default:
		if (!d || !*d) {
			wb_puts(out, "null");
			return;
		}
		wb_putc(out, '"');
		json_chars(out, d, strlen(d));
		wb_putc(out, '"');
		return;
	}
}

/*
 * One line as a JSON object at @level: the selected columns (each once),
 * without the child-only ones in a parent and only the CETCTL_JSON_CHILD
 * ones in a child; then its children, when the table nests.
 */
static void json_line(struct wbuf *out, struct cetctl_table *t, struct cetctl_line *ln,
		      int level, bool child)
{
	bool first = true;

	wb_putc(out, '{');
	for (size_t i = 0; i < t->nids; i++) {
		const struct cetctl_column *c = &t->cols[t->ids[i]];

		if (!t->jkey[i])	/* a column selected twice: one member */
			continue;
		if (child ? !(c->jflags & (CETCTL_JSON_CHILD | CETCTL_JSON_CHILD_ONLY)) :
			    (c->jflags & CETCTL_JSON_CHILD_ONLY && t->children))
			continue;
		wb_puts(out, first ? "\n" : ",\n");
		first = false;
		indent(out, level + 1);
		wb_puts(out, t->jkey[i]);
		json_value(out, c->json_type, ln->cells[i]);
	}
	if (t->children && !child) {
		bool any = false;

		wb_puts(out, first ? "\n" : ",\n");
		first = false;
		indent(out, level + 1);
		wb_printf(out, "\"%s\": [", t->children);
		for (struct cetctl_line *cl = ln->child; cl; cl = cl->sibling) {
			wb_puts(out, any ? ",\n" : "\n");
			any = true;
			indent(out, level + 2);
			json_line(out, t, cl, level + 2, true);
		}
		if (any) {
			wb_putc(out, '\n');
			indent(out, level + 1);
		}
		wb_putc(out, ']');
	}
	if (!first) {
		wb_putc(out, '\n');
		indent(out, level);
	}
	wb_putc(out, '}');
}

static struct wbuf *table_out(struct cetctl_table *t)
{
	FILE *f = scols_table_get_stream(t->tb);

	if (!t->wb) {
		t->wb = malloc(sizeof(*t->wb));
		if (!t->wb)
			err(CETCTL_EXIT_FAILURE, "out of memory");
		t->wb->n = 0;
	}
	t->wb->f = f ? f : stdout;
	return t->wb;
}

/* The start of the document, then each top-level line once. */
static void json_open(struct cetctl_table *t, struct wbuf *out)
{
	if (t->json_open)
		return;
	t->json_open = true;
	wb_puts(out, "{\n");
	indent(out, 1);
	wb_printf(out, "\"%s\": [", t->name);
}

static void json_row(struct cetctl_table *t, struct wbuf *out, struct cetctl_line *ln)
{
	wb_puts(out, t->json_rows++ ? ",\n" : "\n");
	indent(out, 2);
	json_line(out, t, ln, 2, false);
}

static void json_stream_line(struct cetctl_table *t, struct cetctl_line *ln)
{
	struct wbuf *out = table_out(t);

	json_open(t, out);
	json_row(t, out, ln);
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

static void pad(struct wbuf *out, size_t n)
{
	static const char spaces[] = "                                                                ";

	for (; n > sizeof(spaces) - 1; n -= sizeof(spaces) - 1)
		wb_write(out, spaces, sizeof(spaces) - 1);
	wb_write(out, spaces, n);
}

/* --raw: a blank is \x20, as libsmartcols writes it (the cell is plain). */
static void raw_cell(struct wbuf *out, const char *s)
{
	const char *run = s;

	for (; *s; s++) {
		if (*s != ' ')
			continue;
		wb_write(out, run, (size_t)(s - run));
		wb_puts(out, "\\x20");
		run = s + 1;
	}
	wb_puts(out, run);
}

/* One row of the human table: @cells (NULL: empty), padded to @width. */
static void text_row(struct cetctl_table *t, struct wbuf *out, const char *const *cells,
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
				wb_putc(out, ' ');
			continue;
		}
		if (*d && right) {
			pad(out, width[i] - len);
			len = width[i];
		}
		wb_write(out, d, strlen(d));
		if (last)
			break;
		pad(out, width[i] - len);
		wb_putc(out, ' ');
	}
	wb_putc(out, '\n');
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
	struct wbuf *out;

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
	wb_flush(out);
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
	return cetctl_table_print_members(t, NULL);
}

/*
 * JSON is written here, not by libsmartcols: its cells can only be
 * strings, numbers, booleans and arrays of strings or numbers, and its
 * nesting follows the tree column; the documents need objects in cells,
 * nesting that does not depend on -o, [] for empty lists and members next
 * to the array (see the JSON sections of the man pages).
 */
int cetctl_table_print_members(struct cetctl_table *t, const char *members)
{
	struct wbuf *out;

	if (!t->json)
		return print_plain(t) ? 0 : print_scols(t);
	out = table_out(t);
	json_open(t, out);
	for (struct cetctl_line *ln = t->head; ln; ln = ln->next)
		if (!ln->parent)
			json_row(t, out, ln);
	if (t->json_rows) {
		wb_putc(out, '\n');
		indent(out, 1);
	}
	wb_putc(out, ']');
	if (cetctl_proc_root_is_recorded()) {
		wb_puts(out, ",\n   \"proc_root\": ");
		json_string(out, cetctl_globals.proc_root);
	}
	if (t->with_errors) {
		wb_puts(out, ",\n   \"errors\": [");
		if (t->errs) {
			fflush(t->errs);
			wb_write(out, t->errbuf, t->errlen);
			wb_puts(out, "\n   ");
		}
		wb_putc(out, ']');
	}
	if (members)
		wb_printf(out, ",\n   %s", members);
	wb_puts(out, "\n}\n");
	wb_flush(out);
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
	if (t->errs)
		fclose(t->errs);
	free(t->errbuf);
	free(t->wb);
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
	if (oa->outlist) {
		char prefix[32];
		int rc;

		snprintf(prefix, sizeof(prefix), "%s: ", cmd);
		parse_cmd = prefix;
		rc = cetctl_columns_parse(cols, ncols, oa->outlist, ids, nids);
		parse_cmd = "";
		if (rc < 0)
			return cetctl_usage_error(cmd);
	}
	return CETCTL_OUTPUT_CONTINUE;
}
