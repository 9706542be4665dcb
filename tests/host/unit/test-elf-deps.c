// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the ld.so.cache reader of elf-deps.c on hand-built cache
 * images (format "glibc-ld.so.cache1.1"), and a smoke test of the real
 * /etc/ld.so.cache of this machine when it has one.
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf-deps.h"

static int failures, checks;

#define CHECK(cond) do {						\
	checks++;							\
	if (!(cond)) {							\
		failures++;						\
		fprintf(stderr, "%s:%d: %s: check failed: %s\n",	\
			__FILE__, __LINE__, __func__, #cond);		\
	}								\
} while (0)

static void put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, 4);	/* x86: little endian */
}

struct ent {
	int32_t flags;
	const char *key, *value;
};

/* Header (48 bytes), entries (24 bytes each), then the strings. */
static size_t build_cache(unsigned char *buf, size_t size, const struct ent *e, size_t n)
{
	size_t str = 48 + n * 24;

	memset(buf, 0, size);
	memcpy(buf, "glibc-ld.so.cache1.1", 20);
	put32(buf + 20, (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		unsigned char *p = buf + 48 + i * 24;
		size_t kl = strlen(e[i].key) + 1, vl = strlen(e[i].value) + 1;

		put32(p, (uint32_t)e[i].flags);
		put32(p + 4, (uint32_t)str);
		memcpy(buf + str, e[i].key, kl);
		str += kl;
		put32(p + 8, (uint32_t)str);
		memcpy(buf + str, e[i].value, vl);
		str += vl;
	}
	put32(buf + 24, (uint32_t)(str - 48 - n * 24));
	return str;
}

static void test_cache_lookup(void)
{
	static const struct ent ents[] = {
		{ 0x0303, "libz.so.1", "/lib/x86_64-linux-gnu/libz.so.1" },
		{ 0x0003, "libz.so.1", "/lib/i386-linux-gnu/libz.so.1" },
		{ 0x0803, "libz.so.1", "/libx32/libz.so.1" },
		{ 0x0303, "libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6" },
	};
	unsigned char buf[4096];
	struct elf_deps_ctx *ctx;
	size_t len = build_cache(buf, sizeof(buf), ents, 4);
	const char *p;

	/* a context without any cache file */
	CHECK(elf_deps_ctx_new(&ctx, "/nonexistent/ld.so.cache", NULL) == 0);
	CHECK(elf_deps_cache_entries(ctx) == 0);
	CHECK(elf_deps_cache_parse(ctx, buf, len) == 0);
	CHECK(elf_deps_cache_entries(ctx) == 4);
	p = elf_deps_cache_lookup(ctx, "libz.so.1", ELFCLASS64, EM_X86_64);
	CHECK(p && strcmp(p, "/lib/x86_64-linux-gnu/libz.so.1") == 0);
	p = elf_deps_cache_lookup(ctx, "libz.so.1", ELFCLASS32, EM_386);
	CHECK(p && strcmp(p, "/lib/i386-linux-gnu/libz.so.1") == 0);
	p = elf_deps_cache_lookup(ctx, "libz.so.1", ELFCLASS32, EM_X86_64);
	CHECK(p && strcmp(p, "/libx32/libz.so.1") == 0);
	CHECK(elf_deps_cache_lookup(ctx, "libc.so.6", ELFCLASS32, EM_386) == NULL);
	CHECK(elf_deps_cache_lookup(ctx, "libnope.so", ELFCLASS64, EM_X86_64) == NULL);
	elf_deps_ctx_free(ctx);
}

static void test_cache_malformed(void)
{
	static const struct ent ents[] = {
		{ 0x0303, "libz.so.1", "/lib/x86_64-linux-gnu/libz.so.1" },
	};
	unsigned char buf[1024];
	struct elf_deps_ctx *ctx;
	size_t len = build_cache(buf, sizeof(buf), ents, 1);

	CHECK(elf_deps_ctx_new(&ctx, "/nonexistent/ld.so.cache", NULL) == 0);
	CHECK(elf_deps_cache_parse(ctx, buf, 40) == -EINVAL);		/* short header */
	put32(buf + 20, 1000000);					/* nlibs too big */
	CHECK(elf_deps_cache_parse(ctx, buf, len) == -EINVAL);
	put32(buf + 20, 1);
	put32(buf + 48 + 4, 5000);					/* key past the end */
	CHECK(elf_deps_cache_parse(ctx, buf, len) == 0);
	CHECK(elf_deps_cache_entries(ctx) == 0);
	memcpy(buf, "ld.so-1.7.0", 11);					/* old format */
	CHECK(elf_deps_cache_parse(ctx, buf, len) == -EINVAL);
	/* random garbage never crashes */
	srand(7);
	for (int i = 0; i < 5000; i++) {
		size_t l = 48 + (size_t)rand() % 200;

		build_cache(buf, sizeof(buf), ents, 1);
		for (int k = 0; k < 6; k++)
			buf[20 + (size_t)rand() % (l - 20)] = (unsigned char)rand();
		elf_deps_cache_parse(ctx, buf, l);
		elf_deps_cache_lookup(ctx, "libz.so.1", ELFCLASS64, EM_X86_64);
	}
	elf_deps_ctx_free(ctx);
}

static void test_real_cache(void)
{
	struct elf_deps_ctx *ctx;

	if (access("/etc/ld.so.cache", R_OK) != 0) {
		printf("skip: no /etc/ld.so.cache\n");
		return;
	}
	CHECK(elf_deps_ctx_new(&ctx, NULL, NULL) == 0);
	CHECK(elf_deps_cache_entries(ctx) > 0);
#if defined(__x86_64__)
	/* every glibc system has libc.so.6 in its cache */
	CHECK(elf_deps_cache_lookup(ctx, "libc.so.6", ELFCLASS64, EM_X86_64) != NULL);
#endif
	elf_deps_ctx_free(ctx);
}

int main(void)
{
	test_cache_lookup();
	test_cache_malformed();
	test_real_cache();
	printf("test-elf-deps: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
