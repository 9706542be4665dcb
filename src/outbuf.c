// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The output buffer's writes (see outbuf.h).
 */
#include <errno.h>

#include "outbuf.h"

static int first_errno;

void outbuf_flush_from(struct outbuf *o, const char *p)
{
	if (o->n) {
		errno = 0;
		if (fwrite(p, 1, o->n, o->f) != o->n && !first_errno)
			first_errno = errno ? errno : EIO;
	}
	o->n = 0;
}

void outbuf_flush(struct outbuf *o)
{
	outbuf_flush_from(o, o->b);
}

int outbuf_write_errno(void)
{
	return first_errno;
}
