/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `cetctl run` as PID 1 or a child subreaper (run-parent.c): then it
 * stays the program's parent instead of becoming it.
 */
#ifndef CETCTL_RUN_PARENT_H
#define CETCTL_RUN_PARENT_H

#include <stdbool.h>

bool run_init_like(void);
bool run_pidns_unforked(void);
int run_stay_parent(void);

#endif
