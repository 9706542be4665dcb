// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The loader's view: which GNU property note glibc's loader (sysdeps/x86,
 * _dl_process_property_note and its callers) consults in a file. A program
 * or library: the program headers walked backwards, the first PT_NOTE or
 * PT_GNU_PROPERTY of the right alignment decides (static executables:
 * PT_GNU_PROPERTY only). A relocatable object (.o): the .note.gnu.property
 * section, found by a plain reader of the section headers or, for any
 * unusual layout, by libelf. Each note found is judged by elf_prop_parse()
 * (elf-notes.c); the file is read through elf_src_read*() (elf-notes-read.c).
 */
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "elf-notes-internal.h"

/* Note segments larger than this are not property notes worth reading. */
#define NOTE_READ_MAX		(1U << 20)

static int judge_segment(const struct elf_src *s, const GElf_Phdr *ph, bool elf64,
			 struct elf_prop_note *n, struct elf_cet_info *info)
{
	unsigned char *buf;
	size_t len;
	int rc;

	rc = elf_src_read_alloc(s, ph->p_offset, ph->p_filesz, NOTE_READ_MAX, &buf, &len);
	if (rc == ELF_CET_ECORRUPT)
		info->error = "note segment extends past the end of the file";
	if (rc)
		return rc;
	elf_prop_parse(buf, len, ph->p_align, elf64, n);
	elf_src_free(s, buf);
	return 0;
}

static int read_sections(const struct elf_src *s, Elf *e, bool elf64,
			 struct elf_cet_info *info)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(e, &shstrndx) != 0) {
		info->error = elf_errmsg(-1);
		return ELF_CET_ECORRUPT;
	}
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		struct elf_prop_note n;
		unsigned char *buf;
		size_t len;
		const char *name;
		int rc;

		if (!gelf_getshdr(scn, &sh)) {
			info->error = elf_errmsg(-1);
			return ELF_CET_ECORRUPT;
		}
		if (sh.sh_type != SHT_NOTE)
			continue;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".note.gnu.property") != 0)
			continue;
		rc = elf_src_read_alloc(s, sh.sh_offset, sh.sh_size, NOTE_READ_MAX, &buf, &len);
		if (rc == ELF_CET_ECORRUPT)
			info->error = "note section extends past the end of the file";
		if (rc)
			return rc;
		elf_prop_parse(buf, len, sh.sh_addralign, elf64, &n);
		elf_src_free(s, buf);
		if (n.found) {
			info->source = ELF_NOTE_SRC_SECTION;
			info->note = n;
			break;
		}
	}
	return 0;
}

/*
 * The loader walks the program headers backwards; the first PT_NOTE or
 * PT_GNU_PROPERTY with the right alignment decides (even when it holds no
 * property note), the others are skipped. Static executables only look at
 * PT_GNU_PROPERTY.
 */
int elf_loader_read_segments(const struct elf_src *s, const struct elf_hdrs *h, bool elf64,
			     bool is_static, struct elf_cet_info *info)
{
	bool decided = false;
	int rc;

	for (size_t i = h->phnum; i-- > 0;) {
		const GElf_Phdr ph = h->ph[i];
		struct elf_prop_note n;

		if (ph.p_type != PT_GNU_PROPERTY && (ph.p_type != PT_NOTE || is_static))
			continue;
		if (decided)
			continue;
		rc = judge_segment(s, &ph, elf64, &n, info);
		if (rc)
			return rc;
		if (ph.p_align != (elf64 ? 8U : 4U)) {
			/* The loader skips a misaligned segment without deciding
			 * (a 4-aligned build-id PT_NOTE in ELF64 is the usual
			 * case); show a property note in it unless a better one
			 * comes. */
			if (n.found && !info->note.found) {
				info->note = n;
				info->source = ph.p_type == PT_NOTE ?
					ELF_NOTE_SRC_PT_NOTE : ELF_NOTE_SRC_GNU_PROPERTY;
			}
			continue;
		}
		decided = true;
		if (n.found) {
			info->note = n;
			info->source = ph.p_type == PT_NOTE ?
				ELF_NOTE_SRC_PT_NOTE : ELF_NOTE_SRC_GNU_PROPERTY;
		}
	}

	if (is_static && !info->note.found) {
		/* A property note the static start-up code never looks at. */
		for (size_t i = 0; i < h->phnum; i++) {
			const GElf_Phdr ph = h->ph[i];
			struct elf_prop_note n;

			if (ph.p_type != PT_NOTE)
				continue;
			rc = judge_segment(s, &ph, elf64, &n, info);
			if (rc)
				return rc;
			if (n.found) {
				n.problem = ELF_PROP_NOT_IN_GNU_PROPERTY;
				info->note = n;
				info->source = ELF_NOTE_SRC_PT_NOTE;
				break;
			}
		}
	}
	return 0;
}

/*
 * The plain reader takes every table without extended numbering (fewer
 * than SHN_LORESERVE sections); it reads it in windows of SHDR_WINDOW
 * bytes, so that an object with tens of thousands of sections (Free
 * Pascal's units have 28,000) costs a few reads into a buffer that is
 * reused, not megabytes of fresh memory.
 */
#define SHDR_TABLE_MAX		((size_t)SHN_LORESERVE * sizeof(Elf64_Shdr))
#define SHDR_WINDOW		(64U * 1024)
/*
 * Compilers and assemblers write .shstrtab just before the section header
 * table at the end of an object: read that much before the table with it,
 * so that one read usually brings both (it did for every object under
 * /usr here, with 512 bytes already).
 */
#define SHDR_READ_BEFORE	1024U

/* The fields of a section header the note search needs, from raw bytes. */
struct rel_shdr {
	uint32_t name, type;
	uint64_t flags, offset, size, addralign;
};

static void rel_shdr_at(const unsigned char *p, bool elf64, struct rel_shdr *sh)
{
	sh->name = elf_le32(p);
	sh->type = elf_le32(p + 4);
	if (elf64) {
		sh->flags = elf_le64(p + 8);
		sh->offset = elf_le64(p + 24);
		sh->size = elf_le64(p + 32);
		sh->addralign = elf_le64(p + 48);
	} else {
		sh->flags = elf_le32(p + 8);
		sh->offset = elf_le32(p + 16);
		sh->size = elf_le32(p + 20);
		sh->addralign = elf_le32(p + 32);
	}
}

/*
 * ET_REL without libelf, for the plain case: a little-endian object of
 * EI_VERSION 1 whose section header table and section-name table lie
 * within the file, with no extended section numbering. It finds what the
 * libelf walk in read_sections() finds (the first SHT_NOTE named .note.gnu.property,
 * from section 1 on, that holds a property note) with usually one read
 * beyond the first KiB, where libelf makes four system calls per file.
 * Returns 1 when the file is not such a plain case: the caller then asks
 * libelf, which decides every unusual layout as before.
 */
static int read_rel_plain(const struct elf_src *s, const GElf_Ehdr *eh, bool elf64,
			  struct elf_cet_info *info)
{
	static const char want[] = ".note.gnu.property";
	size_t ent = elf64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	size_t shnum = eh->e_shnum, strndx = eh->e_shstrndx;
	size_t per_window = SHDR_WINDOW / ent, first, spanlen;
	unsigned char *span = NULL, *tab, *names = NULL;
	uint64_t lo;
	struct rel_shdr str;
	int rc = 0;

	/* libelf takes only EV_CURRENT files for ELF (else: invalid handle) */
	if (eh->e_ident[EI_DATA] != ELFDATA2LSB || eh->e_ident[EI_VERSION] != EV_CURRENT ||
	    eh->e_shoff == 0 || shnum == 0 ||
	    eh->e_shentsize != ent || shnum * ent > SHDR_TABLE_MAX ||
	    eh->e_shoff > s->size || shnum * ent > s->size - eh->e_shoff ||
	    strndx == SHN_UNDEF || strndx >= shnum)
		return 1;
	/* the table's first window, and what precedes it (likely .shstrtab), in one read */
	lo = eh->e_shoff > SHDR_READ_BEFORE ? eh->e_shoff - SHDR_READ_BEFORE : 0;
	first = shnum < per_window ? shnum : per_window;
	spanlen = (size_t)(eh->e_shoff - lo) + first * ent;
	span = malloc((size_t)(eh->e_shoff - lo) + per_window * ent);
	if (!span)
		return -ENOMEM;
	rc = elf_src_read(s, span, spanlen, lo);
	if (rc)
		goto out;
	tab = span + (eh->e_shoff - lo);
	if (strndx < first) {
		rel_shdr_at(tab + strndx * ent, elf64, &str);
	} else {
		unsigned char raw[sizeof(Elf64_Shdr)];

		rc = elf_src_read(s, raw, ent, eh->e_shoff + strndx * ent);
		if (rc)
			goto out;
		rel_shdr_at(raw, elf64, &str);
	}
	if (str.type != SHT_STRTAB || (str.flags & SHF_COMPRESSED) ||
	    str.offset > s->size || str.size > s->size - str.offset) {
		rc = 1;
		goto out;
	}
	if (str.offset >= lo && str.offset - lo <= spanlen && str.size <= spanlen - (str.offset - lo))
		names = span + (str.offset - lo);
	for (size_t base = 0, n = first; base < shnum; base += n) {
		if (base) {
			/* the next window; the names it overwrites are read one by one */
			n = shnum - base < per_window ? shnum - base : per_window;
			tab = span;
			names = NULL;
			rc = elf_src_read(s, tab, n * ent, eh->e_shoff + base * ent);
			if (rc)
				goto out;
		}
		for (size_t i = base ? 0 : 1; i < n; i++) {
			const unsigned char *p = tab + i * ent;
			char name[sizeof(want)];
			struct rel_shdr sh;
			struct elf_prop_note note;
			unsigned char *buf;
			size_t len;

			/* objects can have thousands of sections: test the type first */
			if (elf_le32(p + 4) != SHT_NOTE)
				continue;
			rel_shdr_at(p, elf64, &sh);
			/* elf_strptr(): the name and its NUL within the table */
			if (sh.name >= str.size || str.size - sh.name < sizeof(want))
				continue;
			if (names) {
				memcpy(name, names + sh.name, sizeof(want));
			} else {
				rc = elf_src_read(s, name, sizeof(want), str.offset + sh.name);
				if (rc)
					goto out;
			}
			if (memcmp(name, want, sizeof(want)) != 0)
				continue;
			rc = elf_src_read_alloc(s, sh.offset, sh.size, NOTE_READ_MAX, &buf, &len);
			if (rc == ELF_CET_ECORRUPT)
				info->error = "note section extends past the end of the file";
			if (rc)
				goto out;
			elf_prop_parse(buf, len, sh.addralign, elf64, &note);
			elf_src_free(s, buf);
			if (note.found) {
				info->source = ELF_NOTE_SRC_SECTION;
				info->note = note;
				goto out;
			}
		}
	}
out:
	free(span);
	return rc;
}

/* ET_REL: the note is a section; libelf walks the section headers. */
int elf_loader_read_rel(const struct elf_src *s, const GElf_Ehdr *eh, bool elf64,
			struct elf_cet_info *info)
{
	Elf *e;
	int rc = s->rel == ELF_REL_LIBELF ? 1 : read_rel_plain(s, eh, elf64, info);

	if (rc <= 0)
		return rc;
	if (s->rel == ELF_REL_PLAIN_ONLY)
		return -ENOTSUP;
	e = s->fd >= 0 ? elf_begin(s->fd, ELF_C_READ, NULL) :
			 elf_memory((char *)s->mem, s->size);
	if (!e) {
		info->error = elf_errmsg(-1);
		return ELF_CET_ECORRUPT;
	}
	rc = read_sections(s, e, elf64, info);
	elf_end(e);
	return rc;
}
