// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ld.so.cache in glibc's new format: parsed into (name, path, flags)
 * entries, looked up as the loader does for the object's class and
 * machine.
 */
#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elf-deps.h"
#include "elf-deps-internal.h"

#define CACHE_MAGIC_NEW		"glibc-ld.so.cache"
#define CACHE_VERSION		"1.1"
#define CACHE_HDR_SIZE		48
#define CACHE_ENTRY_SIZE	24
#define FLAG_TYPE_MASK		0x00ff
#define FLAG_ELF_LIBC6		0x0003
#define FLAG_REQUIRED_MASK	0xff00
#define FLAG_X8664_LIB64	0x0300
#define FLAG_X8632_LIBX32	0x0800

int elf_deps_cache_parse(struct elf_deps_ctx *ctx, const void *buf, size_t size)
{
	const unsigned char *b = buf;
	uint32_t nlibs;
	struct cache_entry *ents;
	unsigned char *copy;
	size_t n = 0;

	if (size < CACHE_HDR_SIZE || memcmp(b, CACHE_MAGIC_NEW CACHE_VERSION, 20) != 0)
		return -EINVAL;
	nlibs = elf_deps_le32(b + 20);
	if ((uint64_t)nlibs * CACHE_ENTRY_SIZE > size - CACHE_HDR_SIZE)
		return -EINVAL;
	copy = malloc(size + 1);
	ents = calloc(nlibs ? nlibs : 1, sizeof(*ents));
	if (!copy || !ents) {
		free(copy);
		free(ents);
		return -ENOMEM;
	}
	memcpy(copy, b, size);
	copy[size] = '\0';	/* every string is terminated by the end at worst */
	for (uint32_t i = 0; i < nlibs; i++) {
		const unsigned char *p = copy + CACHE_HDR_SIZE + (size_t)i * CACHE_ENTRY_SIZE;
		uint32_t key = elf_deps_le32(p + 4), value = elf_deps_le32(p + 8);

		if (key >= size || value >= size)
			continue;
		ents[n].flags = (int32_t)elf_deps_le32(p);
		ents[n].key = (const char *)copy + key;
		ents[n].value = (const char *)copy + value;
		n++;
	}
	free(ctx->cache_buf);
	free(ctx->cache);
	ctx->cache_buf = copy;
	ctx->cache = ents;
	ctx->ncache = n;
	return 0;
}

bool elf_deps_cache_flags_match(int32_t flags, int elfclass, unsigned int machine)
{
	int32_t req = flags & FLAG_REQUIRED_MASK;

	if ((flags & FLAG_TYPE_MASK) != FLAG_ELF_LIBC6 && (flags & FLAG_TYPE_MASK) != 1)
		return false;
	if (machine == EM_X86_64)
		return elfclass == ELFCLASS64 ? req == FLAG_X8664_LIB64 : req == FLAG_X8632_LIBX32;
	if (machine == EM_386)
		return req == 0;
	return true;	/* other machines: let the ELF header check decide */
}

const char *elf_deps_cache_lookup(const struct elf_deps_ctx *ctx, const char *name,
				  int elfclass, unsigned int machine)
{
	for (size_t i = 0; i < ctx->ncache; i++)
		if (strcmp(ctx->cache[i].key, name) == 0 &&
		    elf_deps_cache_flags_match(ctx->cache[i].flags, elfclass, machine))
			return ctx->cache[i].value;
	return NULL;
}

size_t elf_deps_cache_entries(const struct elf_deps_ctx *ctx)
{
	return ctx->ncache;
}
