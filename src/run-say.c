// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What `cetctl run` writes to stderr: one line per message, built whole
 * and written once (stderr is shared with the program), whatever it quotes
 * escaped, long names shortened. Used by every part of the run command;
 * calls nothing of them.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "run-say.h"

/* Bytes of @s that make a printable UTF-8 character (U+00A0 and above,
 * or printable ASCII other than the backslash) at its start, or 0. */
static size_t printable_len(const unsigned char *s)
{
	unsigned long c;
	size_t n, i;

	if (*s >= 0x20 && *s < 0x7f && *s != '\\')
		return 1;
	if (*s >= 0xc2 && *s <= 0xdf)
		n = 2, c = *s & 0x1f;
	else if (*s >= 0xe0 && *s <= 0xef)
		n = 3, c = *s & 0x0f;
	else if (*s >= 0xf0 && *s <= 0xf4)
		n = 4, c = *s & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	/* no C1 controls (a CSI is 0x9b), overlongs or surrogates */
	if (c < 0xa0 || (n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10ffff)) ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return n;
}

/*
 * Build a message fully, then write it once: stderr is shared with the
 * child. Whatever it quotes (a program's name may hold a newline or a
 * terminal escape) is shown escaped, as util-linux does: a byte that is not
 * part of a printable character as \xNN. The line always ends in a newline.
 */
void run_say(const char *fmt, ...)
{
	char raw[8192], buf[2048];
	const unsigned char *p;
	size_t n, k, room = sizeof(buf) - 1;	/* the newline */
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	n = (size_t)snprintf(buf, sizeof(buf), "cetctl: run: ");
	for (p = (const unsigned char *)raw; *p; p += k) {
		k = printable_len(p);
		if (k) {
			if (n + k > room)
				break;
			memcpy(buf + n, p, k);
			n += k;
		} else {
			if (n + 4 > room)
				break;
			n += (size_t)snprintf(buf + n, 5, "\\x%02x", *p);
			k = 1;
		}
	}
	buf[n++] = '\n';
	if (write(STDERR_FILENO, buf, n) < 0)
		return;
}

/*
 * A name for a message: shortened in the middle when long (the start and
 * the end tell most), in @buf (NAME_SHOWN bytes).
 */
const char *run_shown(const char *name, char *buf)
{
	size_t len = strlen(name);

	if (len < NAME_SHOWN)
		return name;
	memcpy(buf, name, 78);
	memcpy(buf + 78, "...", 3);
	memcpy(buf + 81, name + len - 78, 78);
	buf[159] = '\0';
	return buf;
}
