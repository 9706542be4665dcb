// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: ld.so.cache images through the parser `cetctl elf
 * --deps` uses to resolve DT_NEEDED like the loader (the file is root's,
 * but a --deps run over a sysroot reads whatever is there), then a few
 * lookups in what was parsed.
 */
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elf-deps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct elf_deps_ctx *ctx;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = { "libc.so.6", "", "ld-linux-x86-64.so.2", "x" };
	uint8_t *copy;
	size_t before;

	/* a cache that does not exist: the context starts empty */
	if (!ctx && elf_deps_ctx_new(&ctx, "/nonexistent/ld.so.cache", NULL) != 0)
		return 0;
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	before = elf_deps_cache_entries(ctx);
	if (elf_deps_cache_parse(ctx, copy, size) == 0) {
		/* the parser keeps its own copy: ours may go */
		memset(copy, 0xa5, size);
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			const char *p = elf_deps_cache_lookup(ctx, names[i], ELFCLASS64, EM_X86_64);

			if (p && strlen(p) > size)
				abort();	/* a path comes from the image */
			elf_deps_cache_lookup(ctx, names[i], ELFCLASS32, EM_386);
		}
		if (elf_deps_cache_entries(ctx) > size / 24)
			abort();	/* more entries than fit */
	} else if (elf_deps_cache_entries(ctx) != before) {
		abort();	/* a rejected image leaves the previous cache as it was */
	}
	free(copy);
	return 0;
}
