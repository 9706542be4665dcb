// SPDX-License-Identifier: GPL-2.0-or-later
#include <err.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cetctl.h"
#include "table.h"
#include "util.h"

struct cetctl_table {
	struct libscols_table *tb;
	const struct cetctl_column *cols;
	int ids[CETCTL_MAX_COLUMNS];
	size_t nids;
	bool json;
};

static int column_by_name(const struct cetctl_column *cols, size_t ncols,
			  const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < ncols; i++)
		if (strlen(cols[i].name) == len &&
		    strncasecmp(cols[i].name, name, len) == 0)
			return (int)i;
	return -1;
}

static const char *parse_cmd = "";	/* for the messages: "elf: " */

int cetctl_columns_parse(const struct cetctl_column *cols, size_t ncols,
			 const char *list, int *ids, size_t *nids)
{
	const char *p, *end;

	if (*list == '+')
		list++;		/* append to the defaults */
	else
		*nids = 0;

	for (p = list; *p; p = *end ? end + 1 : end) {
		size_t len;
		int id;

		end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		len = (size_t)(end - p);
		if (len == 0)
			continue;
		id = column_by_name(cols, ncols, p, len);
		if (id < 0) {
			warnx("%sunknown column: %.*s", parse_cmd, (int)len, p);
			return -1;
		}
		if (*nids >= CETCTL_MAX_COLUMNS) {
			warnx("%stoo many columns", parse_cmd);
			return -1;
		}
		ids[(*nids)++] = id;
	}
	if (*nids == 0) {
		warnx("%sno columns given", parse_cmd);
		return -1;
	}
	return 0;
}

void cetctl_columns_list(FILE *out, const struct cetctl_column *cols,
			 size_t ncols, const struct cetctl_table_opts *opts)
{
	struct libscols_table *tb = scols_new_table();
	size_t i;

	if (!tb)
		err(1, "failed to allocate output table");
	scols_table_enable_json(tb, opts->json);
	scols_table_enable_raw(tb, opts->raw);
	scols_table_enable_noheadings(tb, opts->noheadings);
	scols_table_set_name(tb, "columns");
	scols_table_new_column(tb, "NAME", 0, 0);
	scols_table_new_column(tb, "DESCRIPTION", 0, SCOLS_FL_TRUNC);
	for (i = 0; i < ncols; i++) {
		struct libscols_line *ln = scols_table_new_line(tb, NULL);

		if (!ln)
			err(1, "failed to allocate output line");
		scols_line_set_data(ln, 0, cols[i].name);
		scols_line_set_data(ln, 1, cols[i].help);
	}
	scols_table_set_stream(tb, out);
	scols_print_table(tb);
	scols_unref_table(tb);
}

void cetctl_columns_help(FILE *out, const struct cetctl_column *cols, size_t ncols)
{
	size_t i;

	fputs("\nAvailable output columns:\n", out);
	for (i = 0; i < ncols; i++)
		fprintf(out, " %12s  %s\n", cols[i].name, cols[i].help);
}

struct cetctl_table *cetctl_table_new(const struct cetctl_column *cols,
				      const int *ids, size_t nids,
				      const struct cetctl_table_opts *opts)
{
	struct cetctl_table *t;
	size_t i;

	if (nids > CETCTL_MAX_COLUMNS)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tb = scols_new_table();
	if (!t->tb) {
		free(t);
		return NULL;
	}
	t->cols = cols;
	t->nids = nids;
	t->json = opts->json;
	memcpy(t->ids, ids, nids * sizeof(ids[0]));

	scols_table_enable_json(t->tb, opts->json);
	scols_table_enable_raw(t->tb, opts->raw);
	scols_table_enable_noheadings(t->tb, opts->noheadings);
	if (opts->json_name)
		scols_table_set_name(t->tb, opts->json_name);

	for (i = 0; i < nids; i++) {
		const struct cetctl_column *c = &cols[ids[i]];
		struct libscols_column *cl;

		cl = scols_table_new_column(t->tb, c->name, c->whint, c->flags);
		if (!cl) {
			cetctl_table_free(t);
			return NULL;
		}
		if (opts->json)
			scols_column_set_json_type(cl, c->json_type);
	}
	return t;
}

struct libscols_line *cetctl_table_new_line(struct cetctl_table *t,
					    struct libscols_line *parent)
{
	return scols_table_new_line(t->tb, parent);
}

static int position_of(const struct cetctl_table *t, int colid)
{
	size_t i;

	for (i = 0; i < t->nids; i++)
		if (t->ids[i] == colid)
			return (int)i;
	return -1;
}

bool cetctl_table_has(const struct cetctl_table *t, int colid)
{
	return position_of(t, colid) >= 0;
}

int cetctl_table_set(struct cetctl_table *t, struct libscols_line *ln,
		     int colid, const char *data)
{
	int pos = position_of(t, colid), rc = 0;
	char *clean = NULL;

	if (pos < 0 || !data)
		return 0;
	/*
	 * libsmartcols copies bytes >= 0x80 into JSON as they are: make the
	 * document valid UTF-8 whatever the name (the tables escape by
	 * themselves, following the locale).
	 */
	if (t->json) {
		rc = cet_utf8_sanitize(data, &clean);
		if (rc < 0)
			return rc;
		if (clean)
			data = clean;
		rc = 0;
	}
	/* The same column may be selected twice: fill every copy. */
	for (size_t i = (size_t)pos; i < t->nids; i++) {
		if (t->ids[i] != colid)
			continue;
		if (scols_line_set_data(ln, i, data) != 0) {
			rc = -ENOMEM;
			break;
		}
	}
	free(clean);
	return rc;
}

int cetctl_table_setf(struct cetctl_table *t, struct libscols_line *ln,
		      int colid, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int rc;

	if (position_of(t, colid) < 0)
		return 0;
	va_start(ap, fmt);
	rc = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (rc < 0)
		return -ENOMEM;
	rc = cetctl_table_set(t, ln, colid, s);
	free(s);
	return rc;
}

struct libscols_table *cetctl_table_scols(struct cetctl_table *t)
{
	return t->tb;
}

/* @s as a JSON string: quotes, backslashes and control characters escaped. */
static void json_string(FILE *out, const char *s)
{
	char *clean = NULL;

	if (cet_utf8_sanitize(s, &clean) < 0)
		err(CETCTL_EXIT_FAILURE, "out of memory");
	if (clean)
		s = clean;
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
	free(clean);
}

/*
 * libsmartcols writes an empty list cell as [null]: make it []. Outside the
 * strings, a null alone between brackets can only be that.
 */
static void empty_arrays(char *buf)
{
	char *r = buf, *w = buf;
	bool in_string = false;

	while (*r) {
		if (in_string) {
			if (*r == '\\' && r[1]) {
				*w++ = *r++;
			} else if (*r == '"') {
				in_string = false;
			}
			*w++ = *r++;
			continue;
		}
		if (*r == '"') {
			in_string = true;
			*w++ = *r++;
			continue;
		}
		if (*r == '[') {
			char *p = r + 1;

			p += strspn(p, " \n");
			if (strncmp(p, "null", 4) == 0) {
				p += 4;
				p += strspn(p, " \n");
				if (*p == ']') {
					*w++ = '[';
					*w++ = ']';
					r = p + 1;
					continue;
				}
			}
		}
		*w++ = *r++;
	}
	*w = '\0';
}

int cetctl_table_print(struct cetctl_table *t)
{
	return cetctl_table_print_members(t, NULL);
}

int cetctl_table_print_members(struct cetctl_table *t, const char *members)
{
	FILE *out = scols_table_get_stream(t->tb) ? scols_table_get_stream(t->tb) : stdout, *mem;
	char *buf = NULL, *end;
	size_t len = 0;
	int rc;

	if (!t->json)
		return scols_print_table(t->tb);
	/* one more member next to the array: where the data came from */
	mem = open_memstream(&buf, &len);
	if (!mem)
		return -ENOMEM;
	scols_table_set_stream(t->tb, mem);
	rc = scols_print_table(t->tb);
	fclose(mem);
	scols_table_set_stream(t->tb, out);
	end = buf ? strrchr(buf, '}') : NULL;
	if (rc || !end) {
		free(buf);
		return rc ? rc : -EINVAL;
	}
	while (end > buf && (end[-1] == '\n' || end[-1] == ' '))
		end--;
	*end = '\0';
	empty_arrays(buf);
	fputs(buf, out);
	if (cetctl_proc_root_is_recorded()) {
		fputs(",\n   \"proc_root\": ", out);
		json_string(out, cetctl_globals.proc_root);
	}
	if (members)
		fprintf(out, ",\n   %s", members);
	fputs("\n}\n", out);
	free(buf);
	return 0;
}

void cetctl_table_free(struct cetctl_table *t)
{
	if (!t)
		return;
	scols_unref_table(t->tb);
	free(t);
}

bool cetctl_output_option(struct cetctl_output_args *oa, int c, const char *arg)
{
	switch (c) {
	case 'J':
		oa->topts.json = true;
		return true;
	case 'o':
		oa->outlist = arg;
		return true;
	case CETCTL_OPT_LIST_COLUMNS:
		oa->list_columns = true;
		return true;
	case 'n':
		oa->topts.noheadings = true;
		return true;
	case CETCTL_OPT_RAW:
		oa->topts.raw = true;
		return true;
	default:
		return false;
	}
}

int cetctl_output_columns(const struct cetctl_output_args *oa, const struct cetctl_column *cols,
			  size_t ncols, int *ids, size_t *nids, const char *cmd)
{
	if (oa->list_columns) {
		cetctl_columns_list(stdout, cols, ncols, &oa->topts);
		return CETCTL_EXIT_OK;
	}
	if (oa->outlist) {
		char prefix[32];
		int rc;

		snprintf(prefix, sizeof(prefix), "%s: ", cmd);
		parse_cmd = prefix;
		rc = cetctl_columns_parse(cols, ncols, oa->outlist, ids, nids);
		parse_cmd = "";
		if (rc < 0)
			return cetctl_usage_error(cmd);
	}
	return CETCTL_OUTPUT_CONTINUE;
}
