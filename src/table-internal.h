/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The insides of the tables of table.h, shared by its parts and by nothing
 * else:
 *
 *   table.c          the table and its lines: columns chosen, cells stored
 *   table-columns.c  the column model seen from the command line: -o lists,
 *                    --list-columns, the shared output options and their help
 *   table-json.c     printing: the JSON document (and the choice of text or JSON)
 *   table-text.c     the text table: flat and plain here, else libsmartcols
 *   table-width.c    the terminal's width, and sentences cut to fit it
 *
 * Calls between them: table.c streams a finished line through table-json.c
 * (table_json_stream_line()) and asks table-width.c for the terminal's
 * width, as table-columns.c does; table-json.c prints text tables through
 * table-text.c, which has table-width.c fit the sentence columns first.
 */
#ifndef CETCTL_TABLE_INTERNAL_H
#define CETCTL_TABLE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <libsmartcols.h>

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

/* table-json.c: write a finished line (opts->stream), the document begun first */
void table_json_stream_line(struct cetctl_table *t, struct cetctl_line *ln);

/* table-text.c: where the table prints; the two ways of printing text */
FILE *table_stream(struct cetctl_table *t);
bool table_print_plain(struct cetctl_table *t);
int table_print_scols(struct cetctl_table *t);

/* table-width.c: COLUMNS for a terminal; the sentence columns cut to fit it */
void table_set_termwidth(struct libscols_table *tb);
void table_fit_sentences(struct cetctl_table *t, FILE *out);

#endif
