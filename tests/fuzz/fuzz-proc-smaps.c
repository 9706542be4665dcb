// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: /proc/<pid>/smaps and maps text through the
 * shadow-stack VMA collector and the loaded-object lister.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proc-maps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct shstk_vmas vmas;
	struct proc_objects objs;
	char *text = malloc(size + 1);

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';

	if (proc_smaps_parse_ss(text, &vmas) == 0) {
		if (vmas.n && !vmas.v)
			abort();
		shstk_vmas_free(&vmas);
	}
	if (proc_maps_parse_objects(text, &objs) == 0) {
		for (size_t i = 0; i < objs.n; i++)
			if (!objs.path[i] || objs.path[i][0] != '/')
				abort();	/* only file paths are objects */
		proc_objects_free(&objs);
	}
	free(text);
	return 0;
}
