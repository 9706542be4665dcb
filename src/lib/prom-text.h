/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The Prometheus text exposition format, as node_exporter's textfile
 * collector parses it: label names and escaped label values. Never prints.
 */
#ifndef CETCTL_PROM_TEXT_H
#define CETCTL_PROM_TEXT_H

#include <stdbool.h>

/*
 * A label name a user may set: [a-zA-Z_][a-zA-Z0-9_]*, and not starting
 * with "__" (reserved for Prometheus' own use).
 */
bool prom_label_name_valid(const char *name);

/*
 * @value escaped for a label value between double quotes: backslash,
 * double quote and newline become \\, \" and \n; everything else (UTF-8
 * included) is kept. Returns a malloc'ed string, NULL when out of memory.
 */
char *prom_label_value_escape(const char *value);

/*
 * Append name="escaped value" to the comma separated list *@list (a
 * malloc'ed string, NULL for none yet). Returns 0, -EINVAL for an invalid
 * name, -EEXIST when the list already has that name, -ENOMEM.
 */
int prom_labels_add(char **list, const char *name, const char *value);

#endif
