// SPDX-License-Identifier: GPL-2.0-or-later
#include <err.h>
#include <errno.h>
#include <langinfo.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <wchar.h>

#include "cetctl.h"
#include "proc-maps.h"
#include "table.h"
#include "util.h"

struct cetctl_table {
	struct libscols_table *tb;
	const struct cetctl_column *cols;
	int ids[CETCTL_MAX_COLUMNS];
	size_t nids;
	bool json;
	const char *children;	/* JSON member of nested lines */
	bool with_errors;
	FILE *errs;		/* JSON error objects, comma separated */
	char *errbuf;
	size_t errlen, nerrs;
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
	t->children = opts->json_children;
	t->with_errors = opts->json_errors;
	memcpy(t->ids, ids, nids * sizeof(ids[0]));

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
	}
	return t;
}

struct libscols_line *cetctl_table_new_line(struct cetctl_table *t,
					    struct libscols_line *parent)
{
	return scols_table_new_line(t->tb, parent);
}

static int position_of(const struct cetctl_table *t, int colid)
{
	size_t i;

	for (i = 0; i < t->nids; i++)
		if (t->ids[i] == colid)
			return (int)i;
	return -1;
}

bool cetctl_table_has(const struct cetctl_table *t, int colid)
{
	return position_of(t, colid) >= 0;
}

int cetctl_table_set(struct cetctl_table *t, struct libscols_line *ln,
		     int colid, const char *data)
{
	int pos = position_of(t, colid), rc = 0;
	char *clean = NULL;

	if (pos < 0 || !data)
		return 0;
	/*
	 * libsmartcols copies bytes >= 0x80 into JSON as they are: make the
	 * document valid UTF-8 whatever the name (the tables escape by
	 * themselves, following the locale).
	 */
	if (t->json) {
		rc = cet_utf8_sanitize(data, &clean);
		if (rc < 0)
			return rc;
		if (clean)
			data = clean;
		rc = 0;
	}
	/* The same column may be selected twice: fill every copy. */
	for (size_t i = (size_t)pos; i < t->nids; i++) {
		if (t->ids[i] != colid)
			continue;
		if (scols_line_set_data(ln, i, data) != 0) {
			rc = -ENOMEM;
			break;
		}
	}
	free(clean);
	return rc;
}

int cetctl_table_setf(struct cetctl_table *t, struct libscols_line *ln,
		      int colid, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int rc;

	if (position_of(t, colid) < 0)
		return 0;
	va_start(ap, fmt);
	rc = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (rc < 0)
		return -ENOMEM;
	rc = cetctl_table_set(t, ln, colid, s);
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

int cetctl_table_set_json(struct cetctl_table *t, struct libscols_line *ln,
			  int colid, const char *json)
{
	int pos = position_of(t, colid);

	if (pos < 0 || !json)
		return 0;
	for (size_t i = (size_t)pos; i < t->nids; i++)
		if (t->ids[i] == colid && scols_line_set_data(ln, i, json) != 0)
			return -ENOMEM;
	return 0;
}

int cetctl_table_set_ss_vmas_json(struct cetctl_table *t, struct libscols_line *ln,
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

int cetctl_table_set_list(struct cetctl_table *t, struct libscols_line *ln,
			  int colid, const char *text, const char *seps,
			  const char *empty_word)
{
	char *list, *w;
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
	w = list;
	rc = cetctl_table_set(t, ln, colid, w);
	free(list);
	return rc;
}

/* @s as a JSON string: quotes, backslashes and control characters escaped. */
void cetctl_json_string(FILE *out, const char *s)
{
	char *clean = NULL;

	if (!s) {
		fputs("null", out);
		return;
	}
	if (cet_utf8_sanitize(s, &clean) < 0)
		err(CETCTL_EXIT_FAILURE, "out of memory");
	if (clean)
		s = clean;
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
	free(clean);
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

static void indent(FILE *out, int level)
{
	fprintf(out, "%*s", level * 3, "");
}

/* false for "no", "0", "false" (and nothing), as libsmartcols reads them */
static bool json_truth(const char *d)
{
	return *d && *d != 'n' && *d != 'N' && *d != '0' && *d != 'f' && *d != 'F';
}

static void json_value(FILE *out, int type, const char *d)
{
	switch (type) {
	case SCOLS_JSON_BOOLEAN:
		fputs(d && json_truth(d) ? "true" : "false", out);
		return;
	case SCOLS_JSON_BOOLEAN_OPTIONAL:
		fputs(!d || !*d ? "null" : json_truth(d) ? "true" : "false", out);
		return;
	case SCOLS_JSON_NUMBER:
		fputs(d && *d ? d : "null", out);
		return;
	case CETCTL_JSON_RAW:
		fputs(d && *d ? d : "null", out);
		return;
	case SCOLS_JSON_ARRAY_STRING:
	case SCOLS_JSON_ARRAY_NUMBER:
		if (!d) {
			fputs("null", out);
			return;
		}
		fputc('[', out);
		for (const char *p = d; *p; ) {
			size_t len = strcspn(p, "\n");
			char *item = strndup(p, len);

			if (!item)
				err(CETCTL_EXIT_FAILURE, "out of memory");
			if (p != d)
				fputs(", ", out);
			if (type == SCOLS_JSON_ARRAY_NUMBER)
				fputs(item, out);
			else
				cetctl_json_string(out, item);
			free(item);
			p += len;
			if (*p)
				p++;
		}
		fputc(']', out);
		return;
	default:
		cetctl_json_string(out, d && *d ? d : NULL);
		return;
	}
}

/*
 * One line as a JSON object at @level: the selected columns (each once),
 * without the child-only ones in a parent and only the CETCTL_JSON_CHILD
 * ones in a child; then its children, when the table nests.
 */
static void json_line(FILE *out, struct cetctl_table *t, struct libscols_line *ln,
		      int level, bool child)
{
	bool first = true;

	fputs("{", out);
	for (size_t i = 0; i < t->nids; i++) {
		const struct cetctl_column *c = &t->cols[t->ids[i]];
		struct libscols_cell *ce;
		bool dup = false;

		for (size_t j = 0; j < i; j++)
			dup |= t->ids[j] == t->ids[i];
		if (dup)
			continue;
		if (child ? !(c->jflags & (CETCTL_JSON_CHILD | CETCTL_JSON_CHILD_ONLY)) :
			    (c->jflags & CETCTL_JSON_CHILD_ONLY && t->children))
			continue;
		ce = scols_line_get_cell(ln, i);
		fputs(first ? "\n" : ",\n", out);
		first = false;
		indent(out, level + 1);
		fputc('"', out);
		for (const char *k = c->name; *k; k++)
			fputc(*k >= 'A' && *k <= 'Z' ? *k - 'A' + 'a' : *k, out);
		fputs("\": ", out);
		json_value(out, c->json_type, ce ? scols_cell_get_data(ce) : NULL);
	}
	if (t->children && !child) {
		struct libscols_iter *itr = scols_new_iter(SCOLS_ITER_FORWARD);
		struct libscols_line *cl;
		bool any = false;

		if (!itr)
			err(CETCTL_EXIT_FAILURE, "out of memory");
		fprintf(out, "%s", first ? "\n" : ",\n");
		first = false;
		indent(out, level + 1);
		fprintf(out, "\"%s\": [", t->children);
		while (scols_line_next_child(ln, itr, &cl) == 0) {
			fputs(any ? ",\n" : "\n", out);
			any = true;
			indent(out, level + 2);
			json_line(out, t, cl, level + 2, true);
		}
		if (any) {
			fputc('\n', out);
			indent(out, level + 1);
		}
		fputc(']', out);
		scols_free_iter(itr);
	}
	if (!first) {
		fputc('\n', out);
		indent(out, level);
	}
	fputc('}', out);
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

/*
 * On a terminal, give the sentence columns what the other columns leave
 * of its width (split evenly between them) and cut each longer sentence
 * there, as fit_sentence() does. The other columns' widths are
 * libsmartcols' own: a dry run lays the table out without the sentences.
 */
static void fit_sentences(struct cetctl_table *t, FILE *out)
{
	struct libscols_table *tb = t->tb;
	size_t term, used = 0, nsent = 0, nshown = 0, share, i;
	struct libscols_iter *itr = NULL;
	struct libscols_line *ln;
	const char *cs = nl_langinfo(CODESET);
	const char *ell = cs && !strcmp(cs, "UTF-8") ? "\u2026" : "...";
	FILE *null = NULL;
	char *dry = NULL;
	size_t drylen, want = 0, room[CETCTL_MAX_COLUMNS] = { 0 };

	if (scols_table_is_raw(tb) || !isatty(fileno(out)))
		return;
	term = scols_table_get_termwidth(tb);
	for (i = 0; i < t->nids; i++)
		if (t->cols[t->ids[i]].flags & CETCTL_FL_SENTENCE)
			nsent++;
	if (!term || !nsent)
		return;
	null = open_memstream(&dry, &drylen);
	itr = scols_new_iter(SCOLS_ITER_FORWARD);
	if (!null || !itr)
		goto out;
	for (i = 0; i < t->nids; i++)
		if (t->cols[t->ids[i]].flags & CETCTL_FL_SENTENCE)
			scols_column_set_flags(scols_table_get_column(tb, i), (
					       t->cols[t->ids[i]].flags & ~CETCTL_FL_SENTENCE &
					       ~SCOLS_FL_TRUNC) | SCOLS_FL_HIDDEN);
	/*
	 * The dry run leaves room for the sentences' heads and some words
	 * more (SENTENCE_MIN columns each, less when they are all shorter):
	 * libsmartcols then gives up the padding to its width hints first.
	 */
	while (scols_table_next_line(tb, itr, &ln) == 0)
		for (i = 0; i < t->nids; i++) {
			const char *d = scols_cell_get_data(scols_line_get_cell(ln, i));
			size_t w, h;

			if (!d || !(t->cols[t->ids[i]].flags & CETCTL_FL_SENTENCE))
				continue;
			w = shown_width(d, strlen(d));
			h = shown_width(d, head_len(d)) + (head_len(d) < strlen(d));
			if (h < SENTENCE_MIN)
				h = SENTENCE_MIN;
			if ((w < h ? w : h) > room[i])
				room[i] = w < h ? w : h;
		}
	scols_reset_iter(itr, SCOLS_ITER_FORWARD);
	for (i = 0; i < t->nids; i++)
		want += room[i];
	scols_table_set_stream(tb, null);
	scols_table_set_termforce(tb, SCOLS_TERMFORCE_ALWAYS);
	scols_table_set_termwidth(tb, term > want + nsent ? term - want - nsent : term);
	scols_print_table(tb);
	scols_table_set_termforce(tb, SCOLS_TERMFORCE_AUTO);
	scols_table_set_termwidth(tb, term);
	scols_table_set_stream(tb, out);
	for (i = 0; i < t->nids; i++) {
		struct libscols_column *cl = scols_table_get_column(tb, i);

		if (t->cols[t->ids[i]].flags & CETCTL_FL_SENTENCE) {
			scols_column_set_flags(cl, t->cols[t->ids[i]].flags &
					       ~CETCTL_FL_SENTENCE & ~SCOLS_FL_TRUNC);
		} else {
			used += scols_column_get_width(cl);
		}
		nshown++;
	}
	used += nshown - 1;	/* one space between columns */
	share = used < term ? (term - used) / nsent : 0;
	while (scols_table_next_line(tb, itr, &ln) == 0)
		for (i = 0; i < t->nids; i++) {
			const char *d;
			char *cut;

			if (!(t->cols[t->ids[i]].flags & CETCTL_FL_SENTENCE))
				continue;
			d = scols_cell_get_data(scols_line_get_cell(ln, i));
			cut = d ? fit_sentence(d, share, ell) : NULL;
			if (cut && scols_line_refer_data(ln, i, cut) != 0)
				free(cut);
		}
out:
	scols_free_iter(itr);
	if (null)
		fclose(null);
	free(dry);
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
	FILE *out = scols_table_get_stream(t->tb) ? scols_table_get_stream(t->tb) : stdout;
	struct libscols_iter *itr;
	struct libscols_line *ln;
	const char *name = scols_table_get_name(t->tb);
	bool any = false;

	if (!t->json) {
		fit_sentences(t, out);
		return scols_print_table(t->tb);
	}
	itr = scols_new_iter(SCOLS_ITER_FORWARD);
	if (!itr)
		return -ENOMEM;
	fputs("{\n", out);
	indent(out, 1);
	fprintf(out, "\"%s\": [", name ? name : "rows");
	while (scols_table_next_line(t->tb, itr, &ln) == 0) {
		if (scols_line_get_parent(ln))
			continue;
		fputs(any ? ",\n" : "\n", out);
		any = true;
		indent(out, 2);
		json_line(out, t, ln, 2, false);
	}
	scols_free_iter(itr);
	if (any) {
		fputc('\n', out);
		indent(out, 1);
	}
	fputc(']', out);
	if (cetctl_proc_root_is_recorded()) {
		fputs(",\n   \"proc_root\": ", out);
		cetctl_json_string(out, cetctl_globals.proc_root);
	}
	if (t->with_errors) {
		fputs(",\n   \"errors\": [", out);
		if (t->errs) {
			fflush(t->errs);
			fwrite(t->errbuf, 1, t->errlen, out);
			fputs("\n   ", out);
		}
		fputc(']', out);
	}
	if (members)
		fprintf(out, ",\n   %s", members);
	fputs("\n}\n", out);
	return 0;
}

void cetctl_table_free(struct cetctl_table *t)
{
	if (!t)
		return;
	scols_unref_table(t->tb);
	if (t->errs)
		fclose(t->errs);
	free(t->errbuf);
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
