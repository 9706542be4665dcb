// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: whole ELF images through the CET note reader, both
 * from memory (elf_memory) and from a file descriptor (a memfd, so the
 * pread path that cetctl elf really uses is fuzzed too), plus the raw
 * note-segment parsers on the same bytes. Any crash, sanitizer report or
 * broken invariant aborts.
 */
#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "elf-notes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int memfd = -2;

/* The result must be one of the documented ones and self-consistent. */
static void check(int rc, const struct elf_cet_info *info)
{
	char buf[64];

	if (rc != 0 && rc != ELF_CET_ENOTELF && rc != ELF_CET_ECORRUPT &&
	    rc != -ENOMEM && rc != -EIO)
		abort();
	if (rc != 0)
		return;
	if (info->elfclass != ELFCLASS32 && info->elfclass != ELFCLASS64)
		abort();
	/* the text helpers must cope with whatever was read */
	elf_cet_arch_str(info, buf, sizeof(buf));
	elf_isa_1_str(info->note.isa_1_used, buf, sizeof(buf));
	elf_feature_2_str(info->note.feature_2_used, buf, sizeof(buf));
	if (!elf_prop_problem_str(info->note.problem)[0] ||
	    !elf_note_source_str(info->source)[0] ||
	    !elf_cet_kind_str(info->kind)[0])
		abort();
	if (info->loader_feature_1_and && !info->loader_ok)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_cet_info a, b;
	struct elf_prop_note n;
	uint32_t f;
	int ra, rb;
	/* A heap copy of exactly @size bytes: ASan sees any overread. */
	uint8_t *copy = malloc(size ? size : 1);

	if (!copy)
		return 0;
	memcpy(copy, data, size);

	ra = elf_cet_read_mem(copy, size, &a);
	check(ra, &a);

	if (memfd == -2)
		memfd = memfd_create("fuzz-elf", MFD_CLOEXEC);
	if (memfd >= 0 && ftruncate(memfd, 0) == 0 &&
	    pwrite(memfd, data, size, 0) == (ssize_t)size) {
		rb = elf_cet_read_fd(memfd, (off_t)size, &b);
		check(rb, &b);
		/* Same bytes, same answer, whichever way they were read. */
		if (ra != rb)
			abort();
		if (ra == 0 && (a.kind != b.kind || a.loader_ok != b.loader_ok ||
				a.loader_feature_1_and != b.loader_feature_1_and ||
				a.kernel != b.kernel || a.note.problem != b.note.problem))
			abort();
	}

	/* The bytes as a note segment, with the alignments that matter. */
	for (int elf64 = 0; elf64 <= 1; elf64++) {
		elf_prop_parse(copy, size, 4, elf64, &n);
		elf_prop_parse(copy, size, 8, elf64, &n);
		if (n.nnotes && !n.found)
			abort();
		elf_prop_kernel_parse(copy, size, elf64, &f);
	}
	free(copy);
	return 0;
}
