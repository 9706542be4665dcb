// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The streaming JSON writer (see jsonwrt.h).
 */
#include <err.h>
#include <stdlib.h>
#include <string.h>

#include "cetctl.h"
#include "jsonwrt.h"
#include "util.h"

void jsonwrt_init(struct jsonwrt *w, FILE *out)
{
	w->ob.f = out;
	w->ob.n = 0;
	w->depth = 0;
	w->level[0].layout = JSONWRT_BLOCK;
	w->level[0].any = false;
}

void jsonwrt_flush(struct jsonwrt *w)
{
	outbuf_flush(&w->ob);
}

static inline void put(struct jsonwrt *w, const char *p, size_t n)
{
	outbuf_write(&w->ob, p, n);
}

static inline void putch(struct jsonwrt *w, char c)
{
	outbuf_putc(&w->ob, c);
}

/* A new line indented to @level: one copy from a line of blanks. */
static void newline(struct jsonwrt *w, int level)
{
	static const char line[] = "\n                                                ";
	size_t n = (size_t)level * JSONWRT_INDENT;

	if (n < sizeof(line) - 1) {
		put(w, line, n + 1);
		return;
	}
	putch(w, '\n');
	outbuf_spaces(&w->ob, n);
}

/*
 * What each byte needs in a string: 0 nothing, 1 an escape ('"', '\',
 * the control characters and DEL), 2 a check that it is UTF-8 (>= 0x80).
 */
static const unsigned char byte_class[256] = {
	[0x00 ... 0x1f] = 1, ['"'] = 1, ['\\'] = 1, [0x7f] = 1, [0x80 ... 0xff] = 2,
};
/* the same once the string is known to be UTF-8 */
static const unsigned char byte_class_utf8[256] = {
	[0x00 ... 0x1f] = 1, ['"'] = 1, ['\\'] = 1, [0x7f] = 1,
};

/*
 * The escaper: @len bytes of @s between quotes. The runs between the
 * bytes to escape are copied whole; the first byte >= 0x80 sends the rest
 * through cet_utf8_sanitize() (rare: only names that are not ASCII), and
 * then (@checked) such bytes pass as they are.
 */
static void escaped(struct jsonwrt *w, const char *s, size_t len, bool checked)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *cls = checked ? byte_class_utf8 : byte_class;
	const unsigned char *p = (const unsigned char *)s, *run = p, *end = p + len;
	char u[6] = { '\\', 'u', '0', '0', 0, 0 };

	for (;; p++) {
		unsigned char c;

		while (p < end && !cls[*p])
			p++;
		if (p == end)
			break;
		put(w, (const char *)run, (size_t)(p - run));
		c = *p;
		if (cls[c] == 2) {
			char *copy = strndup((const char *)p, (size_t)(end - p)), *clean = NULL;

			if (!copy || cet_utf8_sanitize(copy, &clean) < 0)
				err(CETCTL_EXIT_FAILURE, "out of memory");
			escaped(w, clean ? clean : copy, strlen(clean ? clean : copy), true);
			free(clean);
			free(copy);
			return;
		}
		if (c == '"' || c == '\\') {
			putch(w, '\\');
			putch(w, (char)c);
		} else {
			u[4] = hex[c >> 4];
			u[5] = hex[c & 0xf];
			put(w, u, sizeof(u));
		}
		run = p + 1;
	}
	put(w, (const char *)run, (size_t)(end - run));
}

static void quoted(struct jsonwrt *w, const char *s, size_t len)
{
	putch(w, '"');
	escaped(w, s, len, false);
	putch(w, '"');
}

/* "name": — in one copy when it needs no escape (member names are short) */
static void member_name(struct jsonwrt *w, const char *name)
{
	char buf[64];
	size_t n = 0;

	for (; name[n] && !byte_class[(unsigned char)name[n]]; n++)
		if (n == sizeof(buf) - 4)
			break;
	if (name[n]) {
		quoted(w, name, strlen(name));
		put(w, ": ", 2);
		return;
	}
	buf[0] = '"';
	memcpy(buf + 1, name, n);
	memcpy(buf + 1 + n, "\": ", 3);
	put(w, buf, n + 4);
}

/* The separator before a new member of the innermost container, then "name": */
static void member(struct jsonwrt *w, const char *name)
{
	if (w->depth > 0) {
		typeof(w->level[0]) *l = &w->level[w->depth];

		switch (l->layout) {
		case JSONWRT_BLOCK:
			if (l->any)
				putch(w, ',');
			newline(w, w->depth);
			break;
		case JSONWRT_LINE:
			if (l->any)
				put(w, ", ", 2);
			break;
		default:
			if (l->any)
				putch(w, ',');
			break;
		}
		l->any = true;
	}
	if (name)
		member_name(w, name);
}

static void open_container(struct jsonwrt *w, const char *name, enum jsonwrt_layout layout,
			   char c)
{
	member(w, name);
	putch(w, c);
	if (w->depth + 1 >= JSONWRT_MAX_DEPTH)
		errx(CETCTL_EXIT_FAILURE, "JSON nested too deeply");
	w->depth++;
	w->level[w->depth].layout = (unsigned char)layout;
	w->level[w->depth].any = false;
}

static void close_container(struct jsonwrt *w, char c)
{
	if (w->depth <= 0)
		errx(CETCTL_EXIT_FAILURE, "JSON writer: nothing to close");
	if (w->level[w->depth].layout == JSONWRT_BLOCK && w->level[w->depth].any)
		newline(w, w->depth - 1);
	putch(w, c);
	if (--w->depth == 0) {
		putch(w, '\n');
		jsonwrt_flush(w);
	}
}

void jsonwrt_object_open(struct jsonwrt *w, const char *name, enum jsonwrt_layout layout)
{
	open_container(w, name, layout, '{');
}

void jsonwrt_object_close(struct jsonwrt *w)
{
	close_container(w, '}');
}

void jsonwrt_array_open(struct jsonwrt *w, const char *name, enum jsonwrt_layout layout)
{
	open_container(w, name, layout, '[');
}

void jsonwrt_array_close(struct jsonwrt *w)
{
	close_container(w, ']');
}

void jsonwrt_string_n(struct jsonwrt *w, const char *name, const char *s, size_t len)
{
	member(w, name);
	quoted(w, s, len);
}

void jsonwrt_string(struct jsonwrt *w, const char *name, const char *s)
{
	if (!s)
		jsonwrt_null(w, name);
	else
		jsonwrt_string_n(w, name, s, strlen(s));
}

static void decimal(struct jsonwrt *w, unsigned long v)
{
	char num[24], *p = num + sizeof(num);

	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	put(w, p, (size_t)(num + sizeof(num) - p));
}

void jsonwrt_ulong(struct jsonwrt *w, const char *name, unsigned long v)
{
	member(w, name);
	decimal(w, v);
}

void jsonwrt_long(struct jsonwrt *w, const char *name, long v)
{
	member(w, name);
	if (v < 0)
		putch(w, '-');
	/* the magnitude, LONG_MIN's included */
	decimal(w, v < 0 ? -(unsigned long)v : (unsigned long)v);
}

void jsonwrt_number(struct jsonwrt *w, const char *name, const char *digits)
{
	member(w, name);
	if (digits && *digits)
		put(w, digits, strlen(digits));
	else
		put(w, "null", 4);
}

void jsonwrt_bool(struct jsonwrt *w, const char *name, bool v)
{
	member(w, name);
	if (v)
		put(w, "true", 4);
	else
		put(w, "false", 5);
}

void jsonwrt_null(struct jsonwrt *w, const char *name)
{
	member(w, name);
	put(w, "null", 4);
}
