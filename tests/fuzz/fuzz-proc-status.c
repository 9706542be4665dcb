// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: /proc/<pid>/status text through proc_status_parse()
 * and the feature-word parser/formatter, as a kernel (or a recorded tree
 * given with --proc-root) could present it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proc-status.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proc_status st;
	struct cet_feature_line fl;
	char out[256];
	char *text = malloc(size + 1);

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';

	if (proc_status_parse(text, &st) == 0) {
		/* strings the tool prints must be terminated within their arrays */
		if (memchr(st.name, '\0', sizeof(st.name)) == NULL ||
		    memchr(st.features.unknown, '\0', sizeof(st.features.unknown)) == NULL ||
		    memchr(st.locked.unknown, '\0', sizeof(st.locked.unknown)) == NULL)
			abort();
		cet_feature_line_str(&st.features, out, sizeof(out));
		cet_feature_line_str(&st.locked, out, sizeof(out));
		cet_feature_line_str(&st.features, out, 3);	/* tiny buffer */
	}

	memset(&fl, 0, sizeof(fl));
	cet_feature_words_parse(text, &fl);
	if (memchr(fl.unknown, '\0', sizeof(fl.unknown)) == NULL)
		abort();
	cet_feature_line_str(&fl, out, sizeof(out));
	free(text);
	return 0;
}
