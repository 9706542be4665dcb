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

#endif
