// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What a read ELF file's struct elf_cet_info says, in words: the short
 * texts of problems, note sources and kinds, the architecture (also from a
 * bare ELF header, elf_arch_read_fd()), the interpreter and the loader's
 * SHSTK mark, and the names of ISA_1 and FEATURE_2 bits. Calls no other part.
 */
#include <gelf.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "c.h"
#include "elf-notes.h"

const char *elf_prop_problem_str(enum elf_prop_problem p)
{
	switch (p) {
	case ELF_PROP_OK:		return "ok";
	case ELF_PROP_BAD_ALIGN:	return "bad alignment";
	case ELF_PROP_SHORT_DESC:	return "descsz < 8";
	case ELF_PROP_DESC_NOT_WORD:	return "descsz not a multiple of the word size";
	case ELF_PROP_UNORDERED:	return "properties not in ascending order";
	case ELF_PROP_OVERRUN:		return "property runs past the note";
	case ELF_PROP_BAD_DATASZ:	return "pr_datasz != 4";
	case ELF_PROP_DUPLICATE:	return "more than one property note";
	case ELF_PROP_NOT_IN_GNU_PROPERTY: return "static executable without PT_GNU_PROPERTY";
	case ELF_PROP_TRUNCATED:	return "note truncated";
	}
	return "?";
}

const char *elf_note_source_str(enum elf_note_source s)
{
	switch (s) {
	case ELF_NOTE_SRC_NONE:		return "-";
	case ELF_NOTE_SRC_GNU_PROPERTY:	return "PT_GNU_PROPERTY";
	case ELF_NOTE_SRC_PT_NOTE:	return "PT_NOTE";
	case ELF_NOTE_SRC_SECTION:	return ".note.gnu.property";
	}
	return "?";
}

const char *elf_cet_kind_str(enum elf_cet_kind k)
{
	switch (k) {
	case ELF_KIND_EXEC:		return "exec";
	case ELF_KIND_STATIC:		return "static";
	case ELF_KIND_PIE:		return "pie";
	case ELF_KIND_STATIC_PIE:	return "static-pie";
	case ELF_KIND_DYN:		return "dyn";
	case ELF_KIND_REL:		return "rel";
	case ELF_KIND_OTHER:		return "other";
	}
	return "?";
}

enum elf_arch elf_arch_of(int elfclass, unsigned int machine)
{
	if (machine == EM_386)
		return ELF_ARCH_I386;
	if (machine == EM_X86_64 && elfclass == ELFCLASS64)
		return ELF_ARCH_X86_64;
	if (machine == EM_X86_64 && elfclass == ELFCLASS32)
		return ELF_ARCH_X32;
	return ELF_ARCH_OTHER;
}

enum elf_arch elf_arch_read_fd(int fd)
{
	Elf64_Ehdr eh;
	ssize_t n = pread(fd, &eh, sizeof(eh), 0);

	if (n < EI_NIDENT || memcmp(eh.e_ident, ELFMAG, SELFMAG))
		return ELF_ARCH_NOT_ELF;
	/* e_machine is at the same offset in both classes */
	if (n < (ssize_t)(offsetof(Elf64_Ehdr, e_machine) + sizeof(eh.e_machine)) ||
	    (eh.e_ident[EI_CLASS] == ELFCLASS64 && n != (ssize_t)sizeof(eh)))
		return ELF_ARCH_OTHER;
	return elf_arch_of(eh.e_ident[EI_CLASS], eh.e_machine);
}

const char *elf_cet_interp64(const struct elf_cet_info *info)
{
	return info->elfclass == ELFCLASS64 && info->kfacts.interp_rc == 0 ?
	       info->kfacts.interp : NULL;
}

bool elf_cet_shstk_marked(const struct elf_cet_info *info)
{
	return info->loader_feature_1_and & CET_X86_FEATURE_1_SHSTK;
}

const char *elf_cet_arch_str(const struct elf_cet_info *info, char *buf, size_t size)
{
	enum elf_arch a = elf_arch_of(info->elfclass, info->machine);

	/* the common names without snprintf: this is on every row of elf */
	if (a == ELF_ARCH_X86_64 || a == ELF_ARCH_X32 || a == ELF_ARCH_I386) {
		const char *n = a == ELF_ARCH_I386 ? "i386" : a == ELF_ARCH_X32 ? "x32" : "x86-64";

		size_t len = size ? strnlen(n, size - 1) : 0;

		if (size) {
			memcpy(buf, n, len);
			buf[len] = '\0';
		}
		return buf;
	}
	snprintf(buf, size, "machine-%u", info->machine);
	return buf;
}

static const char *bits_str(uint32_t v, const char *const *names, size_t n,
			    char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < 32; i++) {
		char tmp[16];
		const char *name;
		int w;

		if (!(v & (1U << i)))
			continue;
		if (i < n && names[i]) {
			name = names[i];
		} else {
			snprintf(tmp, sizeof(tmp), "bit%zu", i);
			name = tmp;
		}
		w = snprintf(buf + len, size - len, "%s%s", len ? "," : "", name);
		if (w < 0 || (size_t)w >= size - len)
			break;
		len += (size_t)w;
	}
	return buf;
}

const char *elf_isa_1_str(uint32_t v, char *buf, size_t size)
{
	static const char *const names[] = {
		"x86-64-baseline", "x86-64-v2", "x86-64-v3", "x86-64-v4",
	};
	return bits_str(v, names, ARRAY_SIZE(names), buf, size);
}

const char *elf_feature_2_str(uint32_t v, char *buf, size_t size)
{
	static const char *const names[] = {
		"x86", "x87", "mmx", "xmm", "ymm", "zmm", "fxsr", "xsave",
		"xsaveopt", "xsavec", "tmm", "mask",
	};
	return bits_str(v, names, ARRAY_SIZE(names), buf, size);
}
