/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The insides of reading an ELF file's CET marking, shared by the parts of
 * elf-notes.h and by nothing else:
 *
 *   elf-notes.c          a note's bytes, read the loader's and the kernel's way
 *   elf-notes-read.c     the source, the headers, the kind; elf_cet_read_*()
 *   elf-notes-loader.c   the note glibc's loader consults
 *   elf-notes-kernel.c   what binfmt_elf reads, and its verdict
 *   elf-notes-text.c     the texts
 *
 * elf_cet_read_*() reads the headers, asks the loader part for the note
 * (elf_loader_read_segments(), elf_loader_read_rel()), then the kernel part
 * for its verdict (elf_kernel_judge_src()); those two read the file through
 * elf_src_read*() and judge a note's bytes with elf-notes.c. elf-notes.c
 * and elf-notes-text.c call no other part.
 */
#ifndef CETCTL_ELF_NOTES_INTERNAL_H
#define CETCTL_ELF_NOTES_INTERNAL_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf-notes.h"

/* Little-endian fields (x86 files; the big-endian ones go through libelf). */
static inline uint32_t elf_le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint64_t elf_le64(const unsigned char *p)
{
	return elf_le32(p) | (uint64_t)elf_le32(p + 4) << 32;
}

static inline uint64_t elf_align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* binfmt_elf reads at most this much of PT_GNU_PROPERTY (NOTE_DATA_SZ). */
#define KERNEL_NOTE_MAX		1024U

/*
 * The first KiB of nearly every ELF file holds the ELF header, the program
 * headers and the property note: it is read with one pread, and every read
 * inside it is served from memory.
 */
#define HEAD_SIZE	1024U

struct elf_src {
	enum elf_rel_reader rel;	/* ET_REL: how the section headers are read */
	int fd;				/* or -1 */
	const unsigned char *mem;	/* when fd < 0 */
	uint64_t size;
	unsigned char head[HEAD_SIZE];	/* fd: the file's first bytes */
	size_t headlen;
};

/* The headers the judgement needs, in host byte order. */
struct elf_hdrs {
	GElf_Ehdr eh;
	size_t phnum;
	GElf_Phdr *ph;		/* phnum entries, malloc'ed */
};

/* elf-notes-read.c: reads of the file (ELF_CET_ECORRUPT past its end) */
int elf_src_read(const struct elf_src *s, void *buf, uint64_t len, uint64_t off);
int elf_src_read_alloc(const struct elf_src *s, uint64_t off, uint64_t len,
		       uint64_t max, unsigned char **out, size_t *outlen);
void elf_src_free(const struct elf_src *s, unsigned char *buf);

/* elf-notes-loader.c: the note the loader consults, into info->note/source */
int elf_loader_read_segments(const struct elf_src *s, const struct elf_hdrs *h, bool elf64,
			     bool is_static, struct elf_cet_info *info);
int elf_loader_read_rel(const struct elf_src *s, const GElf_Ehdr *eh, bool elf64,
			struct elf_cet_info *info);

/* elf-notes-kernel.c: info->kfacts and info->kernel (the "block" policy) */
int elf_kernel_judge_src(const struct elf_src *s, const struct elf_hdrs *h, bool elf64,
			 struct elf_cet_info *info);

#endif
