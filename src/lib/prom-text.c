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

bool prom_utf8_valid(const char *s, size_t *bad)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		unsigned int c = *p, need, cp, min;

		if (c < 0x80) {
			p++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			need = 1; cp = c & 0x1f; min = 0x80;
		} else if (c >= 0xe0 && c <= 0xef) {
			need = 2; cp = c & 0x0f; min = 0x800;
		} else if (c >= 0xf0 && c <= 0xf4) {
			need = 3; cp = c & 0x07; min = 0x10000;
		} else {
			goto invalid;	/* a continuation byte, 0xc0/0xc1, 0xf5.. */
		}
		for (unsigned int i = 1; i <= need; i++) {
			if ((p[i] & 0xc0) != 0x80)
				goto invalid;	/* also stops at the NUL */
			cp = (cp << 6) | (p[i] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			goto invalid;
		p += need + 1;
	}
	return true;
invalid:
	if (bad)
		*bad = (size_t)(p - (const unsigned char *)s);
	return false;
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
	if (!prom_utf8_valid(value, NULL))
		return -EILSEQ;
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
