/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An output buffer of our own, written with one fwrite when it fills and
 * when the caller flushes: cheaper than stdio's call per piece. The text
 * tables (table-text.c) and the JSON writer (jsonwrt.c) both write through it.
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

/* Write what is buffered (outbuf.c); _from: the o->n bytes at @p instead. */
void outbuf_flush(struct outbuf *o);
void outbuf_flush_from(struct outbuf *o, const char *p);
/*
 * The errno of the first write of an outbuf that failed, 0 when none did:
 * the reason of "cetctl: write error" at exit even when the stream keeps
 * nothing pending by then (main.c).
 */
int outbuf_write_errno(void);

static inline void outbuf_write(struct outbuf *o, const char *p, size_t n)
{
	if (n > sizeof(o->b) - o->n) {
		outbuf_flush(o);
		if (n > sizeof(o->b)) {
			o->n = n;	/* written from p, not from o->b */
			outbuf_flush_from(o, p);
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
