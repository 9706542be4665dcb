/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one JSON writer of the command front end: every document cetctl
 * prints (the tables' -J, elf's and audit's summaries, map -J) is written
 * through it, streaming, to a FILE *. It keeps the commas and the
 * indentation; the caller says what to open, close and write.
 *
 * Each container has a layout of its own: JSONWRT_BLOCK puts every member
 * on a line of its own, indented JSONWRT_INDENT spaces a level (the rows of
 * a document); JSONWRT_LINE writes them on one line separated by ", " (a
 * summary, an error, a list of words); JSONWRT_TIGHT separates them by ","
 * alone (the short lists inside elf's verdicts). An empty container is
 * "{}" or "[]" in every layout.
 *
 * Strings go through one escaper: '"', '\' and the control characters
 * (with DEL) are escaped, bytes that are not UTF-8 become U+FFFD (so the
 * document is valid UTF-8 whatever a file name holds), valid UTF-8 passes
 * as it is. Output is buffered here and written with fwrite; errors on
 * the stream are the caller's to check with ferror() after
 * jsonwrt_finish().
 */
#ifndef CETCTL_JSONWRT_H
#define CETCTL_JSONWRT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "outbuf.h"

#define JSONWRT_INDENT		3	/* spaces a level in JSONWRT_BLOCK */
#define JSONWRT_MAX_DEPTH	16

enum jsonwrt_layout {
	JSONWRT_BLOCK,		/* a member a line */
	JSONWRT_LINE,		/* on one line, ", " between members */
	JSONWRT_TIGHT,		/* on one line, "," between members */
};

struct jsonwrt {
	int depth;			/* containers open */
	struct {
		unsigned char layout;	/* enum jsonwrt_layout */
		bool any;		/* a member written */
	} level[JSONWRT_MAX_DEPTH];
	struct outbuf ob;
};

void jsonwrt_init(struct jsonwrt *w, FILE *out);
/* Write what is buffered to the stream (the document may go on). */
void jsonwrt_flush(struct jsonwrt *w);

/*
 * Containers. @name: the member name inside an object, NULL for an
 * element of an array or the document itself. Closing the document
 * (depth 0 again) ends it with a newline and flushes.
 */
void jsonwrt_object_open(struct jsonwrt *w, const char *name, enum jsonwrt_layout layout);
void jsonwrt_object_close(struct jsonwrt *w);
void jsonwrt_array_open(struct jsonwrt *w, const char *name, enum jsonwrt_layout layout);
void jsonwrt_array_close(struct jsonwrt *w);

/* Values, each a member (@name) or an array element (@name NULL). */
void jsonwrt_string(struct jsonwrt *w, const char *name, const char *s);	/* NULL: null */
void jsonwrt_string_n(struct jsonwrt *w, const char *name, const char *s, size_t len);
void jsonwrt_ulong(struct jsonwrt *w, const char *name, unsigned long v);
void jsonwrt_long(struct jsonwrt *w, const char *name, long v);
/* A number already in JSON syntax (digits); NULL or "": null. */
void jsonwrt_number(struct jsonwrt *w, const char *name, const char *digits);
void jsonwrt_bool(struct jsonwrt *w, const char *name, bool v);
void jsonwrt_null(struct jsonwrt *w, const char *name);

#endif
