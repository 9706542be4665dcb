/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An output buffer of our own, written with one fwrite when it fills and
 * when the caller flushes: cheaper than stdio's call per piece. The text
 * tables (table.c) and the JSON writer (jsonwrt.c) both write through it.
 */
#ifndef CETCTL_OUTBUF_H
#define CETCTL_OUTBUF_H

#include <stdio.h>
#include <string.h>

struct outbuf {
	FILE *f;
	size_t n;		/* bytes in b */
	char b[16384];
};

static inline void outbuf_flush(struct outbuf *o)
{
	if (o->n)
		fwrite(o->b, 1, o->n, o->f);
	o->n = 0;
}

static inline void outbuf_write(struct outbuf *o, const char *p, size_t n)
{
	if (n > sizeof(o->b) - o->n) {
		outbuf_flush(o);
		if (n > sizeof(o->b)) {
			fwrite(p, 1, n, o->f);
			return;
		}
	}
	memcpy(o->b + o->n, p, n);
	o->n += n;
}

static inline void outbuf_putc(struct outbuf *o, char c)
{
	if (o->n == sizeof(o->b))
		outbuf_flush(o);
	o->b[o->n++] = c;
}

/* @n spaces */
static inline void outbuf_spaces(struct outbuf *o, size_t n)
{
	static const char spaces[] = "                                                                ";

	for (; n > sizeof(spaces) - 1; n -= sizeof(spaces) - 1)
		outbuf_write(o, spaces, sizeof(spaces) - 1);
	outbuf_write(o, spaces, n);
}

#endif
