// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The column model seen from the command line: the shared output options
 * (-J -o --list-columns -n --raw) and their one wording in --help, the -o
 * list turned into column ids, --list-columns (a table or JSON of its own)
 * and the column help. Calls table-width.c for the terminal's width.
 */
#include <err.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cetctl.h"
#include "jsonwrt.h"
#include "table-internal.h"

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

/*
 * Parse a -o/--output list ("COL1,COL2" or "+COL3" to append to the
 * defaults already in @ids) of command @cmd. Says why and returns -1 on
 * an unknown column or too many columns.
 */
static int columns_parse(const struct cetctl_column *cols, size_t ncols, const char *list,
			 int *ids, size_t *nids, const char *cmd)
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
			warnx("%s: unknown column: %.*s", cmd, (int)len, p);
			return -1;
		}
		if (*nids >= CETCTL_MAX_COLUMNS) {
			warnx("%s: too many columns", cmd);
			return -1;
		}
		ids[(*nids)++] = id;
	}
	if (*nids == 0) {
		warnx("%s: no columns given", cmd);
		return -1;
	}
	return 0;
}

void cetctl_columns_list(FILE *out, const struct cetctl_column *cols,
			 size_t ncols, const struct cetctl_table_opts *opts)
{
	struct libscols_table *tb;
	struct jsonwrt w;
	size_t i;

	if (opts->json) {
		jsonwrt_init(&w, out);
		jsonwrt_object_open(&w, NULL, JSONWRT_BLOCK);
		jsonwrt_array_open(&w, "columns", JSONWRT_BLOCK);
		for (i = 0; i < ncols; i++) {
			jsonwrt_object_open(&w, NULL, JSONWRT_BLOCK);
			jsonwrt_string(&w, "name", cols[i].name);
			jsonwrt_string(&w, "description", cols[i].help);
			jsonwrt_object_close(&w);
		}
		jsonwrt_array_close(&w);
		jsonwrt_object_close(&w);
		return;
	}
	tb = scols_new_table();
	if (!tb)
		err(1, "failed to allocate output table");
	scols_table_enable_raw(tb, opts->raw);
	scols_table_enable_noheadings(tb, opts->noheadings);
	table_set_termwidth(tb);
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

void cetctl_output_options_help(FILE *out)
{
	fputs("  -J, --json             use JSON output format\n"
	      "  -o, --output <list>    output columns (+LIST appends to the default)\n"
	      "      --list-columns     list the available columns\n"
	      "  -n, --noheadings       do not print headings\n"
	      "      --raw              use the raw output format\n"
	      "  -h, --help             display this help\n"
	      "  -V, --version          display version\n", out);
}

void cetctl_columns_help(FILE *out, const struct cetctl_column *cols, size_t ncols)
{
	size_t i;

	fputs("\nAvailable output columns:\n", out);
	for (i = 0; i < ncols; i++)
		fprintf(out, " %12s  %s\n", cols[i].name, cols[i].help);
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
	if (oa->outlist && columns_parse(cols, ncols, oa->outlist, ids, nids, cmd) < 0)
		return cetctl_usage_error(cmd);
	return CETCTL_OUTPUT_CONTINUE;
}

int cetctl_output_parse(int argc, char **argv, struct cetctl_output_args *oa,
			void (*usage)(void), const struct cetctl_column *cols, size_t ncols,
			int *ids, size_t *nids, const char *cmd)
{
	static const struct option longopts[] = {
		CETCTL_OUTPUT_LONGOPTS,
		{ "help",         no_argument,       NULL, 'h' },
		{ "version",      no_argument,       NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	oa->topts.json = cetctl_globals.json;
	while ((c = getopt_long(argc, argv, CETCTL_OUTPUT_SHORTOPTS "hV", longopts, NULL)) != -1) {
		if (!cetctl_output_option(oa, c, optarg))
			return cetctl_option_other(c, usage, cmd);
	}
	return cetctl_output_columns(oa, cols, ncols, ids, nids, cmd);
}
