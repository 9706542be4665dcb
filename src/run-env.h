/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The environment `cetctl run` hands to the program (run-env.c): the
 * preload library, found and trusted or refused, and environ with one
 * variable set.
 */
#ifndef CETCTL_RUN_ENV_H
#define CETCTL_RUN_ENV_H

#include <stdbool.h>
#include <stddef.h>

#include "run-plan.h"

#define PRELOAD_NAME	"libcetctl-preload.so"

enum run_preload run_find_preload(char *buf, size_t size, char *why, size_t wsize);
bool run_preloads_sanitizer(const char *list, char *name, size_t size);
char **run_env_with(const char *name, const char *value, char sep, bool append);
void run_env_free(char **env);

#endif
