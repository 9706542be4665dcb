// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ELF x86 CET property notes: the bytes of one note segment or section,
 * read as glibc's loader reads them (sysdeps/x86 _dl_process_property_note:
 * elf_prop_parse()) and as our kernel series' binfmt_elf does
 * (parse_elf_properties: elf_prop_kernel_parse()). The rules are the
 * loaders', the code is ours; every read is bounds-checked because the
 * input is untrusted.
 *
 * The rest of elf-notes.h, by part (elf-notes-internal.h is what they share):
 *   elf-notes-read.c    the file: headers, program headers, its kind, and
 *                       elf_cet_read_fd/_mem(), which put the parts together
 *   elf-notes-loader.c  which note glibc's loader consults (segments, or an
 *                       object's sections)
 *   elf-notes-kernel.c  what binfmt_elf reads and the kernel's verdict
 *   elf-notes-text.c    names, architecture, the short texts
 * This part calls no other.
 */
#include <errno.h>
#include <string.h>

#include "elf-notes-internal.h"

static void set_problem(struct elf_prop_note *n, enum elf_prop_problem p)
{
	if (n->problem == ELF_PROP_OK)
		n->problem = p;
}

/*
 * Decode the property array of the first note. @judge is true while glibc
 * still looks at the properties: it stops after ISA_1_NEEDED or at the
 * first type above it, so what follows cannot make it drop the note.
 */
static void parse_properties(const unsigned char *desc, uint64_t dlen,
			     uint64_t word, struct elf_prop_note *n)
{
	uint64_t p = 0;
	uint32_t last = 0;
	bool judge = true;

	while (dlen - p >= 8) {
		uint32_t type = elf_le32(desc + p);
		uint32_t datasz = elf_le32(desc + p + 4);

		if (judge && type < last)
			set_problem(n, ELF_PROP_UNORDERED);
		p += 8;
		if ((uint64_t)datasz > dlen - p) {
			if (judge)
				set_problem(n, ELF_PROP_OVERRUN);
			return;
		}
		last = type;
		switch (type) {
		case CET_GNU_PROPERTY_X86_FEATURE_1_AND:
		case CET_GNU_PROPERTY_X86_ISA_1_NEEDED:
			if (datasz != 4) {
				if (judge)
					set_problem(n, ELF_PROP_BAD_DATASZ);
				break;
			}
			if (type == CET_GNU_PROPERTY_X86_FEATURE_1_AND) {
				n->feature_1_and = elf_le32(desc + p);
				n->present |= ELF_PROP_HAVE_FEATURE_1_AND;
				if (judge)
					n->loader_feature_1_and = n->feature_1_and;
			} else {
				n->isa_1_needed = elf_le32(desc + p);
				n->present |= ELF_PROP_HAVE_ISA_1_NEEDED;
				judge = false;
			}
			break;
		case CET_GNU_PROPERTY_X86_ISA_1_USED:
		case CET_GNU_PROPERTY_X86_FEATURE_2_USED:
			if (datasz == 4) {
				if (type == CET_GNU_PROPERTY_X86_ISA_1_USED) {
					n->isa_1_used = elf_le32(desc + p);
					n->present |= ELF_PROP_HAVE_ISA_1_USED;
				} else {
					n->feature_2_used = elf_le32(desc + p);
					n->present |= ELF_PROP_HAVE_FEATURE_2_USED;
				}
			}
			break;
		default:
			break;
		}
		if (type > CET_GNU_PROPERTY_X86_ISA_1_NEEDED)
			judge = false;
		p += elf_align_up(datasz, word);
		if (p > dlen)
			return;
	}
}

int elf_prop_parse(const void *buf, size_t size, uint64_t align, bool elf64,
		   struct elf_prop_note *out)
{
	const unsigned char *b = buf;
	uint64_t word = elf64 ? 8 : 4;
	/* How to step from note to note: readelf and glibc use the segment
	 * alignment when it is 8, else 4. */
	uint64_t step = align == 8 ? 8 : 4;
	uint64_t off = 0;

	memset(out, 0, sizeof(*out));
	if (align != word)
		out->problem = ELF_PROP_BAD_ALIGN;

	while (off + 12 < size) {
		uint32_t namesz = elf_le32(b + off);
		uint32_t descsz = elf_le32(b + off + 4);
		uint32_t type = elf_le32(b + off + 8);
		uint64_t desc_off = off + elf_align_up(12 + (uint64_t)namesz, step);
		uint64_t next = elf_align_up(desc_off + descsz, step);

		if (namesz == 4 && type == ELF_CET_NT_GNU_PROPERTY_TYPE_0 &&
		    off + 16 <= size && memcmp(b + off + 12, "GNU", 4) == 0) {
			if (++out->nnotes > 1) {
				set_problem(out, ELF_PROP_DUPLICATE);
				break;
			}
			out->found = true;
			if (descsz < 8)
				set_problem(out, ELF_PROP_SHORT_DESC);
			else if (descsz % word)
				set_problem(out, ELF_PROP_DESC_NOT_WORD);
			if (desc_off + descsz > size)
				set_problem(out, ELF_PROP_TRUNCATED);
			if (desc_off <= size)
				parse_properties(b + desc_off,
						 desc_off + descsz > size ?
						 size - desc_off : descsz,
						 word, out);
		}
		if (next <= off || next > size)
			break;
		off = next;
	}
	if (!out->found && out->problem == ELF_PROP_BAD_ALIGN)
		out->problem = ELF_PROP_OK;	/* nothing to ignore */
	return 0;
}

int elf_prop_kernel_parse(const void *buf, size_t size, bool elf64,
			  uint32_t *feature_1_and)
{
	const unsigned char *b = buf;
	uint64_t a = elf64 ? 8 : 4;
	uint64_t off, end;
	uint32_t descsz, prev = 0;
	bool have_prev = false;

	*feature_1_and = 0;
	if (size > KERNEL_NOTE_MAX)
		return -ENOEXEC;
	if (size < 12 + 4)
		return -EIO;
	if (elf_le32(b + 8) != ELF_CET_NT_GNU_PROPERTY_TYPE_0 || elf_le32(b) != 4 ||
	    memcmp(b + 12, "GNU", 4) != 0)
		return -ENOEXEC;
	off = elf_align_up(12 + 4, a);
	if (off > size)
		return -ENOEXEC;
	descsz = elf_le32(b + 4);
	if (descsz > size - off)
		return -ENOEXEC;
	end = off + descsz;

	while (off != end) {
		uint32_t type, datasz;
		uint64_t rem, stp;

		if (off > end || off % a)
			return -EIO;
		rem = end - off;
		if (rem < 8)
			return -ENOEXEC;
		type = elf_le32(b + off);
		datasz = elf_le32(b + off + 4);
		off += 8;
		rem -= 8;
		if (datasz > rem)
			return -ENOEXEC;
		stp = elf_align_up(datasz, a);
		if (stp > rem)
			return -ENOEXEC;
		if (have_prev && type <= prev)
			return -ENOEXEC;
		prev = type;
		have_prev = true;
		if (type == CET_GNU_PROPERTY_X86_FEATURE_1_AND) {
			if (datasz != 4)
				return -ENOEXEC;
			*feature_1_and = elf_le32(b + off);
		}
		off += stp;
	}
	return 0;
}
