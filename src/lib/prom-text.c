// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Prometheus text exposition format helpers (see prom-text.h). Label values
 * are the only place where user text lands in a metrics file, so escaping
 * them right is what keeps one odd --label from breaking the whole file for
 * the collector (node_textfile_scrape_error).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prom-text.h"

static bool name_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

bool prom_label_name_valid(const char *name)
{
	const char *p;

	if (!name || !name_start(name[0]) || strncmp(name, "__", 2) == 0)
		return false;
	for (p = name + 1; *p; p++)
		if (!name_start(*p) && !(*p >= '0' && *p <= '9'))
			return false;
	return true;
}

char *prom_label_value_escape(const char *value)
{
	size_t n = 0;
	const char *p;
	char *out, *q;

	for (p = value; *p; p++)
		n += (*p == '\\' || *p == '"' || *p == '\n') ? 2 : 1;
	out = malloc(n + 1);
	if (!out)
		return NULL;
	for (p = value, q = out; *p; p++) {
		switch (*p) {
		case '\\': *q++ = '\\'; *q++ = '\\'; break;
		case '"':  *q++ = '\\'; *q++ = '"'; break;
		case '\n': *q++ = '\\'; *q++ = 'n'; break;
		default:   *q++ = *p;
		}
	}
	*q = '\0';
	return out;
}

/* Whether the list already holds a label called @name. */
static bool labels_have(const char *list, const char *name)
{
	size_t len = strlen(name);
	const char *p = list;

	while (p && *p) {
		if (strncmp(p, name, len) == 0 && p[len] == '=')
			return true;
		/* skip name="value": the value ends at an unescaped quote */
		p = strchr(p, '"');
		if (!p)
			break;
		for (p++; *p && *p != '"'; p++)
			if (*p == '\\' && p[1])
				p++;
		if (*p)
			p++;
		if (*p == ',')
			p++;
	}
	return false;
}

int prom_labels_add(char **list, const char *name, const char *value)
{
	char *esc, *joined;
	int n;

	if (!prom_label_name_valid(name))
		return -EINVAL;
	if (*list && labels_have(*list, name))
		return -EEXIST;
	esc = prom_label_value_escape(value);
	if (!esc)
		return -ENOMEM;
	n = asprintf(&joined, "%s%s%s=\"%s\"", *list ? *list : "", *list ? "," : "", name, esc);
	free(esc);
	if (n < 0)
		return -ENOMEM;
	free(*list);
	*list = joined;
	return 0;
}
