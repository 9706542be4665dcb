/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The cells that status and audit share: the feature-line words and
 * booleans, and the shadow-stack mappings (one JSON array in both, with
 * the text of each command's column).
 */
#ifndef CETCTL_PROC_CELLS_H
#define CETCTL_PROC_CELLS_H

#include <stdbool.h>
#include <stddef.h>

#include "table.h"

struct cet_feature_line;
struct shstk_vmas;
struct why_off;

/* SS-VMAS of status: "start-end size rss, ..." in the table */
extern const struct cetctl_value_type cetctl_ss_vmas_list;
/* SS-VMAS of audit: their number in the table */
extern const struct cetctl_value_type cetctl_ss_vmas_count;

/* Set the SS-VMAS cell @col to @vmas; JSON: [{start, end, size, rss}...]. */
void cetctl_set_ss_vmas(struct cetctl_table *t, struct cetctl_line *ln, int col,
			const struct shstk_vmas *vmas);

/* A feature line's words (a list cell), "-" for a missing line (JSON: null). */
void cetctl_set_feature_words(struct cetctl_table *t, struct cetctl_line *ln, int col,
			      const struct cet_feature_line *fl);
/* "yes"/"no" for @bit of a present line; nothing (null) for a missing one. */
void cetctl_set_feature_bool(struct cetctl_table *t, struct cetctl_line *ln, int col,
			     const struct cet_feature_line *fl, unsigned int bit);

/*
 * WHY-OFF (the reason's word) and WHY-OBJECT (the object it names): empty
 * in the table, null in JSON, when there is none. @col_object may be -1.
 */
void cetctl_set_why_off(struct cetctl_table *t, struct cetctl_line *ln, int col_reason,
			int col_object, const struct why_off *why);

/* The JSON columns that come with VERDICT: add WHY-OFF, WHY-OBJECT to @ids. */
void cetctl_why_off_json_columns(int *ids, size_t *nids, size_t max, int col_verdict,
				 int col_reason, int col_object);

#endif
