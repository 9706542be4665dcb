/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The Prometheus text exposition format, as node_exporter's textfile
 * collector parses it: label names and escaped label values. Never prints.
 */
#ifndef CETCTL_PROM_TEXT_H
#define CETCTL_PROM_TEXT_H

#include <stdbool.h>
#include <stddef.h>

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
 * Whether @s is well-formed UTF-8 (no overlong forms, no surrogates, nothing
 * above U+10FFFF): the collector refuses a whole file over one bad label
 * value. *@bad (may be NULL) gets the offset of the first bad byte.
 */
bool prom_utf8_valid(const char *s, size_t *bad);

/*
 * Append name="escaped value" to the comma separated list *@list (a
 * malloc'ed string, NULL for none yet). Returns 0, -EINVAL for an invalid
 * name, -EEXIST when the list already has that name, -EILSEQ when the value
 * is not UTF-8, -ENOMEM.
 */
int prom_labels_add(char **list, const char *name, const char *value);

#endif
