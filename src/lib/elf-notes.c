// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ELF x86 CET property notes: parse them, and judge them the way glibc's
 * loader (sysdeps/x86 _dl_process_property_note) and our kernel series
 * (binfmt_elf parse_elf_properties + its legacy-ELF policy) do. The
 * rules are the loaders', the code is ours; every read is bounds-checked
 * because the input is untrusted.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "c.h"
#include "elf-notes.h"

/* Note segments larger than this are not property notes worth reading. */
#define NOTE_READ_MAX		(1U << 20)
/* binfmt_elf reads at most this much of PT_GNU_PROPERTY (NOTE_DATA_SZ). */
#define KERNEL_NOTE_MAX		1024U
#define DYNAMIC_READ_MAX	(1U << 20)

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t le64(const unsigned char *p)
{
	return le32(p) | (uint64_t)le32(p + 4) << 32;
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

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
		uint32_t type = le32(desc + p);
		uint32_t datasz = le32(desc + p + 4);

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
				n->feature_1_and = le32(desc + p);
				n->present |= ELF_PROP_HAVE_FEATURE_1_AND;
				if (judge)
					n->loader_feature_1_and = n->feature_1_and;
			} else {
				n->isa_1_needed = le32(desc + p);
				n->present |= ELF_PROP_HAVE_ISA_1_NEEDED;
				judge = false;
			}
			break;
		case CET_GNU_PROPERTY_X86_ISA_1_USED:
		case CET_GNU_PROPERTY_X86_FEATURE_2_USED:
			if (datasz == 4) {
				if (type == CET_GNU_PROPERTY_X86_ISA_1_USED) {
					n->isa_1_used = le32(desc + p);
					n->present |= ELF_PROP_HAVE_ISA_1_USED;
				} else {
					n->feature_2_used = le32(desc + p);
					n->present |= ELF_PROP_HAVE_FEATURE_2_USED;
				}
			}
			break;
		default:
			break;
		}
		if (type > CET_GNU_PROPERTY_X86_ISA_1_NEEDED)
			judge = false;
		p += align_up(datasz, word);
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
		uint32_t namesz = le32(b + off);
		uint32_t descsz = le32(b + off + 4);
		uint32_t type = le32(b + off + 8);
		uint64_t desc_off = off + align_up(12 + (uint64_t)namesz, step);
		uint64_t next = align_up(desc_off + descsz, step);

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
	if (le32(b + 8) != ELF_CET_NT_GNU_PROPERTY_TYPE_0 || le32(b) != 4 ||
	    memcmp(b + 12, "GNU", 4) != 0)
		return -ENOEXEC;
	off = align_up(12 + 4, a);
	if (off > size)
		return -ENOEXEC;
	descsz = le32(b + 4);
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
		type = le32(b + off);
		datasz = le32(b + off + 4);
		off += 8;
		rem -= 8;
		if (datasz > rem)
			return -ENOEXEC;
		stp = align_up(datasz, a);
		if (stp > rem)
			return -ENOEXEC;
		if (have_prev && type <= prev)
			return -ENOEXEC;
		prev = type;
		have_prev = true;
		if (type == CET_GNU_PROPERTY_X86_FEATURE_1_AND) {
			if (datasz != 4)
				return -ENOEXEC;
			*feature_1_and = le32(b + off);
		}
		off += stp;
	}
	return 0;
}

/* ---- reading files ---------------------------------------------------- */

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

/* Read exactly @len bytes at @off; -EBADMSG when past the end. */
static int src_read(const struct elf_src *s, void *buf, uint64_t len, uint64_t off)
{
	size_t done = 0;

	if (off > s->size || len > s->size - off)
		return ELF_CET_ECORRUPT;
	if (s->fd < 0) {
		memcpy(buf, s->mem + off, len);
		return 0;
	}
	if (off <= s->headlen && len <= s->headlen - off) {
		memcpy(buf, s->head + off, len);
		return 0;
	}
	while (done < len) {
		ssize_t r = pread(s->fd, (char *)buf + done, len - done,
				  (off_t)(off + done));

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return ELF_CET_ECORRUPT;	/* shrank under us */
		done += (size_t)r;
	}
	return 0;
}

/*
 * A segment's file contents, at most @max bytes: inside the first KiB (or
 * the in-memory image) a pointer into it, else a new buffer. Callers only
 * read it, and release it with src_free().
 */
static int src_read_alloc(const struct elf_src *s, uint64_t off, uint64_t len,
			  uint64_t max, unsigned char **out, size_t *outlen)
{
	unsigned char *buf;
	int rc;

	*out = NULL;
	*outlen = 0;
	if (len > max)
		len = max;
	if (off <= s->size && len <= s->size - off) {
		if (s->fd < 0) {
			*out = (unsigned char *)s->mem + off;
			*outlen = len;
			return 0;
		}
		if (off <= s->headlen && len <= s->headlen - off) {
			*out = (unsigned char *)s->head + off;
			*outlen = len;
			return 0;
		}
	}
	buf = malloc(len ? len : 1);
	if (!buf)
		return -ENOMEM;
	rc = src_read(s, buf, len, off);
	if (rc) {
		free(buf);
		return rc;
	}
	*out = buf;
	*outlen = len;
	return 0;
}

/* Release what src_read_alloc() returned. */
static void src_free(const struct elf_src *s, unsigned char *buf)
{
	uintptr_t b = (uintptr_t)buf, h = (uintptr_t)s->head;

	/*
	 * A zero-length read at the end of the head points one past it
	 * (h + headlen, and headlen may be HEAD_SIZE): that is not ours to
	 * free either.
	 */
	if (s->fd < 0 || (b >= h && b <= h + HEAD_SIZE))
		return;
	free(buf);
}

/* The headers the judgement needs, in host byte order. */
struct elf_hdrs {
	GElf_Ehdr eh;
	size_t phnum;
	GElf_Phdr *ph;		/* phnum entries, malloc'ed */
};

/* File to memory representation with libelf's translators (no Elf handle). */
static int xlate(void *dst, const void *src, size_t size, Elf_Type type, bool elf64,
		 unsigned int encoding)
{
	Elf_Data d = { .d_buf = dst, .d_type = type, .d_size = size, .d_version = EV_CURRENT };
	Elf_Data f = { .d_buf = (void *)src, .d_type = type, .d_size = size,
		       .d_version = EV_CURRENT };

	if (!(elf64 ? elf64_xlatetom(&d, &f, encoding) : elf32_xlatetom(&d, &f, encoding)))
		return ELF_CET_ECORRUPT;
	return 0;
}

static int read_ehdr(const struct elf_src *s, bool elf64, unsigned int enc, GElf_Ehdr *eh)
{
	unsigned char raw[sizeof(Elf64_Ehdr)];
	size_t n = elf64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	int rc = src_read(s, raw, n, 0);

	if (rc)
		return rc;
	if (elf64) {
		Elf64_Ehdr e;

		rc = xlate(&e, raw, n, ELF_T_EHDR, true, enc);
		if (rc)
			return rc;
		memcpy(eh, &e, sizeof(e));	/* GElf_Ehdr is Elf64_Ehdr */
	} else {
		Elf32_Ehdr e;

		rc = xlate(&e, raw, n, ELF_T_EHDR, false, enc);
		if (rc)
			return rc;
		memcpy(eh->e_ident, e.e_ident, EI_NIDENT);
		eh->e_type = e.e_type;
		eh->e_machine = e.e_machine;
		eh->e_version = e.e_version;
		eh->e_entry = e.e_entry;
		eh->e_phoff = e.e_phoff;
		eh->e_shoff = e.e_shoff;
		eh->e_flags = e.e_flags;
		eh->e_ehsize = e.e_ehsize;
		eh->e_phentsize = e.e_phentsize;
		eh->e_phnum = e.e_phnum;
		eh->e_shentsize = e.e_shentsize;
		eh->e_shnum = e.e_shnum;
		eh->e_shstrndx = e.e_shstrndx;
	}
	return 0;
}

/* e_phnum, or for PN_XNUM the count kept in section header 0's sh_info. */
static int real_phnum(const struct elf_src *s, const GElf_Ehdr *eh, bool elf64,
		      unsigned int enc, size_t *phnum)
{
	unsigned char raw[sizeof(Elf64_Shdr)];
	size_t n = elf64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	int rc;

	*phnum = eh->e_phnum;
	if (eh->e_phnum != PN_XNUM)
		return 0;
	if (!eh->e_shoff)
		return ELF_CET_ECORRUPT;
	rc = src_read(s, raw, n, eh->e_shoff);
	if (rc)
		return rc;
	if (elf64) {
		Elf64_Shdr sh;

		rc = xlate(&sh, raw, n, ELF_T_SHDR, true, enc);
		*phnum = sh.sh_info;
	} else {
		Elf32_Shdr sh;

		rc = xlate(&sh, raw, n, ELF_T_SHDR, false, enc);
		*phnum = sh.sh_info;
	}
	return rc;
}

/* read_phdrs() for a little-endian file: decoded from the bytes read. */
static int read_phdrs_le(const struct elf_src *s, bool elf64, struct elf_hdrs *h)
{
	size_t ent = elf64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	unsigned char *raw;
	size_t len;
	int rc;

	rc = src_read_alloc(s, h->eh.e_phoff, h->phnum * ent, h->phnum * ent, &raw, &len);
	if (rc)
		return rc;
	h->ph = calloc(h->phnum, sizeof(*h->ph));
	if (!h->ph) {
		src_free(s, raw);
		return -ENOMEM;
	}
	for (size_t i = 0; i < h->phnum; i++) {
		const unsigned char *q = raw + i * ent;
		GElf_Phdr *p = &h->ph[i];

		p->p_type = le32(q);
		if (elf64) {
			p->p_flags = le32(q + 4);
			p->p_offset = le64(q + 8);
			p->p_vaddr = le64(q + 16);
			p->p_paddr = le64(q + 24);
			p->p_filesz = le64(q + 32);
			p->p_memsz = le64(q + 40);
			p->p_align = le64(q + 48);
		} else {
			p->p_offset = le32(q + 4);
			p->p_vaddr = le32(q + 8);
			p->p_paddr = le32(q + 12);
			p->p_filesz = le32(q + 16);
			p->p_memsz = le32(q + 20);
			p->p_flags = le32(q + 24);
			p->p_align = le32(q + 28);
		}
	}
	src_free(s, raw);
	return 0;
}

static int read_phdrs(const struct elf_src *s, bool elf64, unsigned int enc,
		      struct elf_hdrs *h)
{
	size_t ent = elf64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	unsigned char *raw;
	void *mem;
	int rc;

	h->ph = NULL;
	if (!h->phnum)
		return 0;
	if (h->eh.e_phoff > s->size || h->phnum > (s->size - h->eh.e_phoff) / ent)
		return ELF_CET_ECORRUPT;
	if (enc == ELFDATA2LSB)
		return read_phdrs_le(s, elf64, h);
	raw = malloc(h->phnum * ent);
	mem = malloc(h->phnum * ent);
	h->ph = calloc(h->phnum, sizeof(*h->ph));
	if (!raw || !mem || !h->ph) {
		rc = -ENOMEM;
		goto out;
	}
	rc = src_read(s, raw, h->phnum * ent, h->eh.e_phoff);
	if (!rc)
		rc = xlate(mem, raw, h->phnum * ent, ELF_T_PHDR, elf64, enc);
	for (size_t i = 0; !rc && i < h->phnum; i++) {
		GElf_Phdr *p = &h->ph[i];

		if (elf64) {
			memcpy(p, (Elf64_Phdr *)mem + i, sizeof(*p));
		} else {
			const Elf32_Phdr *q = (Elf32_Phdr *)mem + i;

			p->p_type = q->p_type;
			p->p_flags = q->p_flags;
			p->p_offset = q->p_offset;
			p->p_vaddr = q->p_vaddr;
			p->p_paddr = q->p_paddr;
			p->p_filesz = q->p_filesz;
			p->p_memsz = q->p_memsz;
			p->p_align = q->p_align;
		}
	}
out:
	free(raw);
	free(mem);
	if (rc) {
		free(h->ph);
		h->ph = NULL;
	}
	return rc;
}

static int judge_segment(const struct elf_src *s, const GElf_Phdr *ph, bool elf64,
			 struct elf_prop_note *n, struct elf_cet_info *info)
{
	unsigned char *buf;
	size_t len;
	int rc;

	rc = src_read_alloc(s, ph->p_offset, ph->p_filesz, NOTE_READ_MAX, &buf, &len);
	if (rc == ELF_CET_ECORRUPT)
		info->error = "note segment extends past the end of the file";
	if (rc)
		return rc;
	elf_prop_parse(buf, len, ph->p_align, elf64, n);
	src_free(s, buf);
	return 0;
}

static bool is_df1_pie(const struct elf_src *s, const struct elf_hdrs *h, bool elf64)
{
	for (size_t i = 0; i < h->phnum; i++) {
		GElf_Phdr ph = h->ph[i];
		unsigned char *buf;
		size_t len, ent = elf64 ? 16 : 8;
		bool pie = false;

		if (ph.p_type != PT_DYNAMIC)
			continue;
		if (src_read_alloc(s, ph.p_offset, ph.p_filesz, DYNAMIC_READ_MAX,
				   &buf, &len))
			return false;
		for (size_t o = 0; o + ent <= len; o += ent) {
			uint64_t tag, val;

			if (elf64) {
				tag = le32(buf + o) | (uint64_t)le32(buf + o + 4) << 32;
				val = le32(buf + o + 8) | (uint64_t)le32(buf + o + 12) << 32;
			} else {
				tag = le32(buf + o);
				val = le32(buf + o + 4);
			}
			if (tag == DT_NULL)
				break;
			if (tag == DT_FLAGS_1 && (val & DF_1_PIE))
				pie = true;
		}
		src_free(s, buf);
		return pie;
	}
	return false;
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
		rc = src_read_alloc(s, sh.sh_offset, sh.sh_size, NOTE_READ_MAX, &buf, &len);
		if (rc == ELF_CET_ECORRUPT)
			info->error = "note section extends past the end of the file";
		if (rc)
			return rc;
		elf_prop_parse(buf, len, sh.sh_addralign, elf64, &n);
		src_free(s, buf);
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
static int read_segments(const struct elf_src *s, const struct elf_hdrs *h, bool elf64,
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

/* Parse the PT_GNU_PROPERTY @ph as binfmt_elf does: 0 or -ENOEXEC/-EIO. */
static int kernel_parse_phdr(const struct elf_src *s, const GElf_Phdr *ph, bool elf64,
			     uint32_t *f1, struct elf_cet_info *info)
{
	unsigned char *buf;
	size_t len;
	int rc;

	*f1 = 0;
	if (ph->p_filesz > KERNEL_NOTE_MAX)
		return -ENOEXEC;
	rc = src_read_alloc(s, ph->p_offset, ph->p_filesz, KERNEL_NOTE_MAX, &buf, &len);
	if (rc == ELF_CET_ECORRUPT)
		info->error = "PT_GNU_PROPERTY extends past the end of the file";
	if (rc)
		return rc;
	rc = elf_prop_kernel_parse(buf, len, elf64, f1);
	src_free(s, buf);
	return rc;
}

/* x86-64 user address limit (TASK_SIZE_MAX with 4-level paging). */
#define X86_64_USER_TOP		0x7ffffffff000ULL
/* load_elf_phdrs(): the whole table in at most ELF_MIN_ALIGN bytes. */
#define KERNEL_PHDRS_MAX	4096U

/* Gather what binfmt_elf reads from this file (struct elf_kernel_facts). */
static int kernel_facts(const struct elf_src *s, const struct elf_hdrs *h, bool elf64,
			struct elf_cet_info *info)
{
	struct elf_kernel_facts *k = &info->kfacts;
	size_t phent = elf64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	bool seen_first = false;
	int rc;

	k->interp_rc = -ENOENT;
	k->first_rc = -ENOENT;
	k->last_rc = 0;
	k->user_space = true;
	k->phdrs_ok = h->eh.e_phentsize == phent && h->phnum > 0 &&
		      h->phnum * phent <= KERNEL_PHDRS_MAX;
	for (size_t i = 0; i < h->phnum; i++) {
		const GElf_Phdr *ph = &h->ph[i];
		uint32_t f1;

		if (ph->p_type == PT_LOAD && elf64 && h->eh.e_type == ET_EXEC &&
		    (ph->p_vaddr >= X86_64_USER_TOP || ph->p_memsz > X86_64_USER_TOP - ph->p_vaddr))
			k->user_space = false;
		if (ph->p_type == PT_INTERP && k->interp_rc == -ENOENT) {
			uint64_t n = ph->p_filesz;

			if (n > PATH_MAX || n < 2) {
				k->interp_rc = -ENOEXEC;
				continue;
			}
			rc = src_read(s, k->interp, n, ph->p_offset);
			if (rc) {
				k->interp_rc = rc == ELF_CET_ECORRUPT ? -EIO : rc;
				continue;
			}
			/* binfmt_elf: the last byte must be the NUL */
			k->interp_rc = k->interp[n - 1] == '\0' ? 0 : -ENOEXEC;
			k->interp[PATH_MAX - 1] = '\0';
			continue;
		}
		if (ph->p_type != PT_GNU_PROPERTY)
			continue;
		rc = kernel_parse_phdr(s, ph, elf64, &f1, info);
		if (rc == ELF_CET_ECORRUPT || rc == -ENOMEM)
			return rc;
		if (!seen_first) {
			seen_first = true;
			k->first_rc = rc;
			k->first_feature_1 = rc ? 0 : f1;
		}
		k->last_rc = rc;
	}
	return 0;
}

enum elf_kernel_verdict elf_kernel_judge(const struct elf_cet_info *prog,
					 const struct elf_cet_info *interp, int interp_rc,
					 enum elf_kernel_policy policy, bool x32_abi, int *err,
					 const char **why)
{
	const struct elf_kernel_facts *k = &prog->kfacts;
	bool x86_64 = prog->machine == EM_X86_64 && prog->elfclass == ELFCLASS64;
	const char *dummy;

	if (!why)
		why = &dummy;
	*err = 0;
	*why = NULL;
	if (!prog->x86 || (prog->type != ET_EXEC && prog->type != ET_DYN)) {
		*why = "not an x86 program";
		return ELF_KERNEL_NA;
	}
	if (prog->kind == ELF_KIND_DYN) {
		*why = "a shared library, not a program";
		return ELF_KERNEL_NA;
	}
	if (!k->user_space) {
		*why = "loads above the user address space (a kernel image?)";
		return ELF_KERNEL_NA;
	}
	if (prog->elfclass == ELFCLASS32 && prog->machine == EM_X86_64 && !x32_abi) {
		*err = -ENOEXEC;
		*why = "x32 program on a kernel without CONFIG_X86_X32_ABI";
		return ELF_KERNEL_ENOEXEC;
	}
	if (!k->phdrs_ok) {
		*err = -ENOEXEC;
		*why = "program header table binfmt_elf refuses";
		return ELF_KERNEL_ENOEXEC;
	}
	if (k->interp_rc != -ENOENT) {
		/* A dynamic program: only the interpreter's note can fail the exec. */
		if (k->interp_rc) {
			*err = k->interp_rc;
			*why = "malformed PT_INTERP";
			return ELF_KERNEL_ENOEXEC;
		}
		if (interp_rc == ELF_CET_ENOTELF || interp_rc == ELF_CET_ECORRUPT) {
			*err = -ELIBBAD;
			*why = "the interpreter is not a valid ELF file";
			return ELF_KERNEL_ENOEXEC;
		}
		if (interp_rc) {
			*err = interp_rc == -EISDIR ? -EACCES : interp_rc;
			*why = "the interpreter cannot be opened";
			return ELF_KERNEL_ENOEXEC;
		}
		if (interp) {
			/*
			 * elf_check_arch(): EM_X86_64 for a 64-bit program;
			 * compat_elf_check_arch() takes EM_386 or (x32, with
			 * CONFIG_X86_X32_ABI, assumed here) EM_X86_64 for a
			 * 32-bit one. The other class is misread: refused too.
			 */
			bool arch_ok = interp->elfclass == prog->elfclass &&
				       (prog->elfclass == ELFCLASS64 ?
					interp->machine == EM_X86_64 :
					interp->machine == EM_386 || interp->machine == EM_X86_64);

			if (!arch_ok || !interp->kfacts.phdrs_ok) {
				*err = -ELIBBAD;
				*why = "the interpreter is for another architecture or has bad headers";
				return ELF_KERNEL_ENOEXEC;
			}
		}
	}
	/*
	 * A malformed PT_GNU_PROPERTY (the program's or the interpreter's)
	 * never fails the exec: the series' legacy-ELF patch makes property errors non-fatal on
	 * x86 (arch_elf_property_errors_fatal()), as x86 never parsed them.
	 */
	if (!x86_64) {
		*why = "no shadow stacks for 32-bit programs";
		return ELF_KERNEL_NO_SHSTK;
	}
	/* no policy (mainline): the exec succeeds, nothing more to judge */
	if (policy == ELF_POLICY_NONE) {
		*why = "the kernel has no legacy-ELF policy";
		return ELF_KERNEL_NO_POLICY;
	}
	/* the legacy-ELF policy: the program's own first note; malformed counts as unmarked */
	if (k->first_rc == 0 &&
	    (k->first_feature_1 & (CET_X86_FEATURE_1_IBT | CET_X86_FEATURE_1_SHSTK))) {
		*why = "marked IBT/SHSTK by its own note (legacy ELF)";
		return policy == ELF_POLICY_BLOCK ? ELF_KERNEL_BLOCKS : ELF_KERNEL_ALLOWS_LEGACY;
	}
	if (k->first_rc && k->first_rc != -ENOENT)
		*why = "its own note is malformed: counts as unmarked";
	return ELF_KERNEL_ALLOWS;
}

static int judge_kernel(const struct elf_src *s, const struct elf_hdrs *h, bool elf64,
			struct elf_cet_info *info)
{
	int rc;

	if (!info->x86 || (info->type != ET_EXEC && info->type != ET_DYN)) {
		info->kernel = ELF_KERNEL_NA;
		return 0;
	}
	rc = kernel_facts(s, h, elf64, info);
	if (rc)
		return rc;
	info->kernel = elf_kernel_judge(info, NULL, 0, ELF_POLICY_BLOCK, true,
					&info->kernel_err, NULL);
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
	sh->name = le32(p);
	sh->type = le32(p + 4);
	if (elf64) {
		sh->flags = le64(p + 8);
		sh->offset = le64(p + 24);
		sh->size = le64(p + 32);
		sh->addralign = le64(p + 48);
	} else {
		sh->flags = le32(p + 8);
		sh->offset = le32(p + 16);
		sh->size = le32(p + 20);
		sh->addralign = le32(p + 32);
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
	rc = src_read(s, span, spanlen, lo);
	if (rc)
		goto out;
	tab = span + (eh->e_shoff - lo);
	if (strndx < first) {
		rel_shdr_at(tab + strndx * ent, elf64, &str);
	} else {
		unsigned char raw[sizeof(Elf64_Shdr)];

		rc = src_read(s, raw, ent, eh->e_shoff + strndx * ent);
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
			rc = src_read(s, tab, n * ent, eh->e_shoff + base * ent);
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
			if (le32(p + 4) != SHT_NOTE)
				continue;
			rel_shdr_at(p, elf64, &sh);
			/* elf_strptr(): the name and its NUL within the table */
			if (sh.name >= str.size || str.size - sh.name < sizeof(want))
				continue;
			if (names) {
				memcpy(name, names + sh.name, sizeof(want));
			} else {
				rc = src_read(s, name, sizeof(want), str.offset + sh.name);
				if (rc)
					goto out;
			}
			if (memcmp(name, want, sizeof(want)) != 0)
				continue;
			rc = src_read_alloc(s, sh.offset, sh.size, NOTE_READ_MAX, &buf, &len);
			if (rc == ELF_CET_ECORRUPT)
				info->error = "note section extends past the end of the file";
			if (rc)
				goto out;
			elf_prop_parse(buf, len, sh.addralign, elf64, &note);
			src_free(s, buf);
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
static int read_rel(const struct elf_src *s, const GElf_Ehdr *eh, bool elf64,
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

/* Program header tables beyond this are not executables (the kernel
 * refuses more than 64 KiB of them). */
#define PHDR_TABLE_MAX	(1U << 20)

static int elf_cet_read(const struct elf_src *s, struct elf_cet_info *info)
{
	struct elf_hdrs h = { .phnum = 0 };
	bool elf64, is_static;
	unsigned int enc;
	int rc;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	/* check_ident() vouched for these bytes */
	elf64 = (s->fd >= 0 ? s->head : s->mem)[EI_CLASS] == ELFCLASS64;
	enc = (s->fd >= 0 ? s->head : s->mem)[EI_DATA];
	rc = read_ehdr(s, elf64, enc, &h.eh);
	if (rc) {
		info->error = "truncated ELF header";
		return rc;
	}
	info->elfclass = h.eh.e_ident[EI_CLASS];
	info->machine = h.eh.e_machine;
	info->type = h.eh.e_type;
	info->x86 = h.eh.e_ident[EI_DATA] == ELFDATA2LSB &&
		    (h.eh.e_machine == EM_X86_64 || h.eh.e_machine == EM_386);
	info->error = "program headers extend past the end of the file";
	rc = real_phnum(s, &h.eh, elf64, enc, &h.phnum);
	if (rc)
		return rc;
	if (h.phnum > PHDR_TABLE_MAX / (elf64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr))) {
		info->error = "absurdly many program headers";
		return ELF_CET_ECORRUPT;
	}
	rc = read_phdrs(s, elf64, enc, &h);
	if (rc)
		return rc;
	info->error = NULL;

	for (size_t i = 0; i < h.phnum; i++) {
		if (h.ph[i].p_type == PT_INTERP)
			info->has_interp = true;
		else if (h.ph[i].p_type == PT_GNU_PROPERTY)
			info->has_gnu_property = true;
	}

	switch (h.eh.e_type) {
	case ET_EXEC:
		info->kind = info->has_interp ? ELF_KIND_EXEC : ELF_KIND_STATIC;
		break;
	case ET_DYN:
		if (info->has_interp)
			info->kind = ELF_KIND_PIE;
		else if (is_df1_pie(s, &h, elf64))
			info->kind = ELF_KIND_STATIC_PIE;
		else
			info->kind = ELF_KIND_DYN;
		break;
	case ET_REL:
		info->kind = ELF_KIND_REL;
		break;
	default:
		info->kind = ELF_KIND_OTHER;
		break;
	}
	is_static = info->kind == ELF_KIND_STATIC || info->kind == ELF_KIND_STATIC_PIE;

	if (!info->x86 && h.eh.e_ident[EI_DATA] != ELFDATA2LSB)
		goto out;	/* big endian: no x86 properties to read */

	if (info->kind == ELF_KIND_REL)
		rc = read_rel(s, &h.eh, elf64, info);
	else
		rc = read_segments(s, &h, elf64, is_static, info);
	if (rc)
		goto out;
	info->error = NULL;

	info->loader_ok = !info->note.found || info->note.problem == ELF_PROP_OK;
	if (info->note.found && info->note.problem == ELF_PROP_OK)
		info->loader_feature_1_and = info->note.loader_feature_1_and;
	rc = judge_kernel(s, &h, elf64, info);
	if (rc == 0)
		info->error = NULL;
out:
	free(h.ph);
	return rc;
}

static int check_ident(const struct elf_src *s, struct elf_cet_info *info)
{
	unsigned char id[EI_NIDENT];
	int rc;

	if (s->size < SELFMAG)
		return ELF_CET_ENOTELF;
	rc = src_read(s, id, SELFMAG, 0);
	if (rc)
		return rc;
	if (memcmp(id, ELFMAG, SELFMAG) != 0)
		return ELF_CET_ENOTELF;
	if (s->size < EI_NIDENT) {
		info->error = "truncated ELF header";
		return ELF_CET_ECORRUPT;
	}
	rc = src_read(s, id, EI_NIDENT, 0);
	if (rc)
		return rc;
	if (id[EI_CLASS] != ELFCLASS32 && id[EI_CLASS] != ELFCLASS64) {
		info->error = "unknown ELF class";
		return ELF_CET_ECORRUPT;
	}
	if (id[EI_DATA] != ELFDATA2LSB && id[EI_DATA] != ELFDATA2MSB) {
		info->error = "unknown ELF data encoding";
		return ELF_CET_ECORRUPT;
	}
	if (s->size < (id[EI_CLASS] == ELFCLASS64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr))) {
		info->error = "truncated ELF header";
		return ELF_CET_ECORRUPT;
	}
	/* elf_cet_read() takes class and encoding from the head or image */
	if (s->fd >= 0 && s->headlen < EI_NIDENT) {
		info->error = "truncated ELF header";
		return ELF_CET_ECORRUPT;
	}
	return 0;
}

int elf_cet_read_fd(int fd, off_t size, struct elf_cet_info *out)
{
	struct elf_src s = { .fd = fd, .size = size < 0 ? 0 : (uint64_t)size };
	size_t want = s.size < HEAD_SIZE ? (size_t)s.size : HEAD_SIZE;
	ssize_t r;
	int rc;

	memset(out, 0, sizeof(*out));
	while (s.headlen < want) {
		r = pread(fd, s.head + s.headlen, want - s.headlen, (off_t)s.headlen);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;	/* shrank: reads past here fail as truncated */
		s.headlen += (size_t)r;
	}
	rc = check_ident(&s, out);
	if (rc)
		return rc;
	return elf_cet_read(&s, out);
}

int elf_cet_read_mem(const void *image, size_t size, struct elf_cet_info *out)
{
	return elf_cet_read_mem_rel(image, size, ELF_REL_AUTO, out);
}

int elf_cet_read_mem_rel(const void *image, size_t size, enum elf_rel_reader how,
			 struct elf_cet_info *out)
{
	struct elf_src s = { .rel = how, .fd = -1, .mem = image, .size = size };
	int rc;

	memset(out, 0, sizeof(*out));
	rc = check_ident(&s, out);
	if (rc)
		return rc;
	return elf_cet_read(&s, out);
}

/* ---- texts ------------------------------------------------------------ */

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
