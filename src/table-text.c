// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The text table: a flat table of plain cells that is not on a terminal is
 * laid out and written here, as libsmartcols would (table_print_plain());
 * anything else is handed to libsmartcols (table_print_scols()), the
 * sentence columns first fitted to the terminal by table-width.c.
 */
#include <err.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cetctl.h"
#include "outbuf.h"
#include "table-internal.h"

FILE *table_stream(struct cetctl_table *t)
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
bool table_print_plain(struct cetctl_table *t)
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
int table_print_scols(struct cetctl_table *t)
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
	table_fit_sentences(t, out ? out : stdout);
	return scols_print_table(t->tb);
}
