/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What `cetctl run` writes to stderr (run-say.c): each message one line,
 * "cetctl: run: ...", built whole and written once, quoted bytes escaped.
 */
#ifndef CETCTL_RUN_SAY_H
#define CETCTL_RUN_SAY_H

void run_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The size of the buffer run_shown() may use. */
#define NAME_SHOWN	164
const char *run_shown(const char *name, char *buf);

#endif
