// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Cells shared by status and audit (see proc-cells.h).
 */
#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cetctl.h"
#include "jsonwrt.h"
#include "proc-cells.h"
#include "proc-maps.h"
#include "proc-status.h"
#include "why-off.h"

/* The typed value: the mappings, copied. */
struct ss_vmas_value {
	size_t n;
	struct shstk_vma v[];
};

static void ss_vmas_list_text(const void *val, struct cetctl_text *out)
{
	const struct ss_vmas_value *s = val;
	char buf[96];

	for (size_t i = 0; i < s->n; i++) {
		int n = snprintf(buf, sizeof(buf), "%s%lx-%lx %lu %lu", i ? ", " : "",
				 s->v[i].start, s->v[i].end, s->v[i].size_kb, s->v[i].rss_kb);

		cetctl_text_add(out, buf, (size_t)n);
	}
}

static void ss_vmas_count_text(const void *val, struct cetctl_text *out)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%zu", ((const struct ss_vmas_value *)val)->n);
	cetctl_text_puts(out, buf);
}

/*
 * [{"start", "end" (hexadecimal strings: JSON numbers lose precision above
 * 2^53), "size", "rss" (KiB)}...], [] when there are none.
 */
static void ss_vmas_json(struct jsonwrt *w, const char *name, const void *val)
{
	const struct ss_vmas_value *s = val;
	char hex[24];

	jsonwrt_array_open(w, name, JSONWRT_LINE);
	for (size_t i = 0; i < s->n; i++) {
		jsonwrt_object_open(w, NULL, JSONWRT_LINE);
		snprintf(hex, sizeof(hex), "%#lx", s->v[i].start);
		jsonwrt_string(w, "start", hex);
		snprintf(hex, sizeof(hex), "%#lx", s->v[i].end);
		jsonwrt_string(w, "end", hex);
		jsonwrt_ulong(w, "size", s->v[i].size_kb);
		jsonwrt_ulong(w, "rss", s->v[i].rss_kb);
		jsonwrt_object_close(w);
	}
	jsonwrt_array_close(w);
}

const struct cetctl_value_type cetctl_ss_vmas_list = { ss_vmas_list_text, ss_vmas_json };
const struct cetctl_value_type cetctl_ss_vmas_count = { ss_vmas_count_text, ss_vmas_json };

void cetctl_set_ss_vmas(struct cetctl_table *t, struct cetctl_line *ln, int col,
			const struct shstk_vmas *vmas)
{
	size_t size = sizeof(struct ss_vmas_value) + vmas->n * sizeof(vmas->v[0]);
	struct ss_vmas_value *s;

	if (!cetctl_table_has(t, col))
		return;
	s = malloc(size);
	if (!s)
		err(CETCTL_EXIT_FAILURE, "out of memory");
	s->n = vmas->n;
	if (vmas->n)
		memcpy(s->v, vmas->v, vmas->n * sizeof(vmas->v[0]));
	if (cetctl_table_set_value(t, ln, col, s, size) != 0)
		err(CETCTL_EXIT_FAILURE, "out of memory");
	free(s);
}

void cetctl_set_feature_words(struct cetctl_table *t, struct cetctl_line *ln, int col,
			      const struct cet_feature_line *fl)
{
	char buf[512];

	cetctl_table_set_list(t, ln, col, !fl->present && cetctl_table_json(t) ? NULL :
			      cet_feature_line_str(fl, buf, sizeof(buf)), " ", NULL);
}

void cetctl_set_feature_bool(struct cetctl_table *t, struct cetctl_line *ln, int col,
			     const struct cet_feature_line *fl, unsigned int bit)
{
	if (fl->present)
		cetctl_table_set(t, ln, col, (fl->bits & bit) ? "yes" : "no");
}

void cetctl_set_why_off(struct cetctl_table *t, struct cetctl_line *ln, int col_reason,
			int col_object, const struct why_off *why)
{
	cetctl_table_set(t, ln, col_reason, why_off_name(why->reason));
	if (col_object >= 0)
		cetctl_table_set(t, ln, col_object, why->object);
}

void cetctl_why_off_json_columns(int *ids, size_t *nids, size_t max, int col_verdict,
				 int col_reason, int col_object)
{
	bool verdict = false, reason = false, object = false;

	for (size_t k = 0; k < *nids; k++) {
		verdict |= ids[k] == col_verdict;
		reason |= ids[k] == col_reason;
		object |= ids[k] == col_object;
	}
	if (verdict && !reason && *nids < max)
		ids[(*nids)++] = col_reason;
	if (verdict && !object && *nids < max)
		ids[(*nids)++] = col_object;
}
