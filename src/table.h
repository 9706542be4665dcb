/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One table of columns (name, width hint, flags, JSON type, help) drives the
 * text table, --json, --output and --list-columns of every subcommand, the
 * way lsns does it. The rows are held here, not in libsmartcols: it lays
 * out only what needs its layout (a terminal, a tree of lines, cells that
 * are not plain ASCII); JSON (through jsonwrt.c) and the plain flat tables
 * are written here.
 */
#ifndef CETCTL_TABLE_H
#define CETCTL_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <libsmartcols.h>

#include "cetctl.h"

#define CETCTL_MAX_COLUMNS 64

/*
 * flags beyond libsmartcols' SCOLS_FL_*: a sentence column (a verdict, a
 * detail). On a terminal too narrow for it, it is cut at a word with an
 * ellipsis, never inside its head (the words before the first ':', ';' or
 * " ("), which would turn "not enabled" into "not ena": the line is then
 * longer than the terminal instead. libsmartcols never cuts it.
 */
#define CETCTL_FL_SENTENCE	(1 << 24)

struct cetctl_column {
	const char *name;	/* upper case, as in -o */
	double whint;		/* libsmartcols width hint */
	int flags;		/* SCOLS_FL_* */
	int json_type;		/* SCOLS_JSON_* */
	const char *help;	/* one line for --list-columns and --help */
	unsigned int jflags;	/* CETCTL_JSON_* placement of the JSON member */
	const struct cetctl_value_type *value;	/* CETCTL_JSON_VALUE columns */
};

/*
 * json_type beyond libsmartcols' SCOLS_JSON_*: the cell is a typed value
 * (a struct of the command's, set with cetctl_table_set_value()) that the
 * column's value type renders both ways: as the text of the table, and as
 * a JSON value (an object, an array) when the document is written. A
 * verdict is encoded once, in its type.
 */
#define CETCTL_JSON_VALUE	100

struct jsonwrt;

/* Text being built: a typed value's table cell. */
struct cetctl_text {
	char *s;		/* NUL-terminated */
	size_t len, cap;
};
/* Make room for @len more bytes and the NUL (err() when out of memory). */
void cetctl_text_grow(struct cetctl_text *out, size_t len);

static inline void cetctl_text_add(struct cetctl_text *out, const char *s, size_t len)
{
	if (out->len + len + 1 > out->cap)
		cetctl_text_grow(out, len);
	memcpy(out->s + out->len, s, len);
	out->len += len;
	out->s[out->len] = '\0';
}

static inline void cetctl_text_puts(struct cetctl_text *out, const char *s)
{
	cetctl_text_add(out, s, strlen(s));
}

struct cetctl_value_type {
	/* append the table text of @v to @out */
	void (*text)(const void *v, struct cetctl_text *out);
	/* write @v as the member @name (NULL: an array element) */
	void (*json)(struct jsonwrt *w, const char *name, const void *v);
};

/* jflags: where a column's member goes when lines nest (status threads) */
#define CETCTL_JSON_CHILD	(1U << 0)	/* also in the nested objects */
#define CETCTL_JSON_CHILD_ONLY	(1U << 1)	/* only there (TID) */

struct cetctl_table_opts {
	bool json;
	bool raw;
	bool noheadings;
	const char *json_name;	/* name of the JSON array, e.g. "files" */
	/* JSON: child lines go into this array member of their parent
	 * (always present), whatever the columns; NULL: no nesting */
	const char *json_children;
	bool json_errors;	/* JSON: an "errors" array of error objects */
	/* JSON without nesting: write each line when the next one begins
	 * (the command sets no cell of a line once it has started another) */
	bool stream;
};

struct cetctl_table;
struct cetctl_line;

/* --list-columns: one line per column, or a JSON array with -J; -n and
 * --raw apply too. */
void cetctl_columns_list(FILE *out, const struct cetctl_column *cols,
			 size_t ncols, const struct cetctl_table_opts *opts);
/* The options every table command shares (-J -o --list-columns -n --raw
 * -h -V), one wording for all of them in --help. */
void cetctl_output_options_help(FILE *out);
/* Append the column help to a --help text. */
void cetctl_columns_help(FILE *out, const struct cetctl_column *cols, size_t ncols);

/*
 * The output options every table command shares: -J/--json, -o/--output,
 * --list-columns, -n/--noheadings and --raw. Kept in one place so that the
 * commands cannot drift apart. A command puts CETCTL_OUTPUT_SHORTOPTS in its
 * getopt string and CETCTL_OUTPUT_LONGOPTS in its option table, and passes
 * every option char to cetctl_output_option() before its own cases.
 * The long-only values are above every command's own OPT_* values.
 */
enum {
	CETCTL_OPT_LIST_COLUMNS = 0x1000,
	CETCTL_OPT_RAW,
};

#define CETCTL_OUTPUT_SHORTOPTS "Jo:n"
#define CETCTL_OUTPUT_LONGOPTS \
	{ "json",         no_argument,       NULL, 'J' }, \
	{ "output",       required_argument, NULL, 'o' }, \
	{ "list-columns", no_argument,       NULL, CETCTL_OPT_LIST_COLUMNS }, \
	{ "noheadings",   no_argument,       NULL, 'n' }, \
	{ "raw",          no_argument,       NULL, CETCTL_OPT_RAW }

struct cetctl_output_args {
	struct cetctl_table_opts topts;	/* .json from cetctl_globals.json */
	const char *outlist;		/* -o argument, NULL when not given */
	bool list_columns;
};

/* Handle option @c (with its argument @arg) if it is one of the shared
 * output options; returns false for any other option. */
bool cetctl_output_option(struct cetctl_output_args *oa, int c, const char *arg);

#define CETCTL_OUTPUT_CONTINUE	CETCTL_CONTINUE

/*
 * After option parsing: print the columns for --list-columns, or apply the
 * -o list to the default columns already in @ids. Returns
 * CETCTL_OUTPUT_CONTINUE when command @cmd goes on, else the exit status it
 * returns now (0 after --list-columns; a usage error, reported, for a bad
 * -o list).
 */
int cetctl_output_columns(const struct cetctl_output_args *oa, const struct cetctl_column *cols,
			  size_t ncols, int *ids, size_t *nids, const char *cmd);

/*
 * The whole command line of a command that has only the shared output
 * options, -h and -V (info, status): parsed into @oa, then
 * cetctl_output_columns(). Returns CETCTL_OUTPUT_CONTINUE with optind at
 * the first operand, else the exit status (after --help, --version, a
 * usage error).
 */
int cetctl_output_parse(int argc, char **argv, struct cetctl_output_args *oa,
			void (*usage)(void), const struct cetctl_column *cols, size_t ncols,
			int *ids, size_t *nids, const char *cmd);

struct cetctl_table *cetctl_table_new(const struct cetctl_column *cols,
				      const int *ids, size_t nids,
				      const struct cetctl_table_opts *opts);
struct cetctl_line *cetctl_table_new_line(struct cetctl_table *t,
					    struct cetctl_line *parent);
/* Set the cell of column @colid (an index into cols); a no-op when the
 * column is not selected. NULL data leaves the cell empty (JSON null). */
int cetctl_table_set(struct cetctl_table *t, struct cetctl_line *ln,
		     int colid, const char *data);
int cetctl_table_setf(struct cetctl_table *t, struct cetctl_line *ln,
		      int colid, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/*
 * A CETCTL_JSON_VALUE cell: the @size bytes of @value (a struct without
 * pointers: it is copied) rendered by the column's value type; its text
 * now in a table, its JSON when the line is written. NULL: empty, null.
 */
int cetctl_table_set_value(struct cetctl_table *t, struct cetctl_line *ln,
			   int colid, const void *value, size_t size);
/*
 * A list cell: @text as it is in the table; in JSON, a SCOLS_JSON_ARRAY_STRING
 * cell split at any of @seps ("" or @empty_word: []). NULL text: null.
 */
int cetctl_table_set_list(struct cetctl_table *t, struct cetctl_line *ln,
			  int colid, const char *text, const char *seps,
			  const char *empty_word);
bool cetctl_table_has(const struct cetctl_table *t, int colid);
bool cetctl_table_json(const struct cetctl_table *t);
/*
 * Record an error for the JSON "errors" array: {"file": @file, ...} or
 * {"pid": @pid, ...} (@file NULL), "error": the message, "errno": the
 * symbolic name of @errnum (0: null). The caller still reports it on stderr.
 */
void cetctl_table_error(struct cetctl_table *t, const char *file, long pid,
			int errnum, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

struct libscols_table *cetctl_table_scols(struct cetctl_table *t);
int cetctl_table_print(struct cetctl_table *t);
/*
 * The same; in JSON mode @members (NULL for none) writes members of its
 * own (a "summary") into the top-level object after the array, next to
 * "proc_root" when a recorded tree stands in for /proc.
 */
int cetctl_table_print_members(struct cetctl_table *t,
			       void (*members)(struct jsonwrt *w, const void *arg),
			       const void *arg);
void cetctl_table_free(struct cetctl_table *t);

#endif
