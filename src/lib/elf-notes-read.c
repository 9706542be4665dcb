// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Reading an ELF file for its CET marking: the source (a file descriptor
 * whose first KiB is read once, or an image in memory), the ELF header and
 * the program headers in host byte order, the file's kind (static-pie from
 * its dynamic section), and elf_cet_read_fd()/elf_cet_read_mem(), which
 * check the identification and put the parts together: the note the loader
 * consults (elf-notes-loader.c), then the kernel's verdict
 * (elf-notes-kernel.c). The reads the other parts make go through
 * elf_src_read*() here. Every read is bounds-checked: the input is untrusted.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf-notes-internal.h"

#define DYNAMIC_READ_MAX	(1U << 20)

/* Read exactly @len bytes at @off; -EBADMSG when past the end. */
int elf_src_read(const struct elf_src *s, void *buf, uint64_t len, uint64_t off)
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
 * read it, and release it with elf_src_free().
 */
int elf_src_read_alloc(const struct elf_src *s, uint64_t off, uint64_t len,
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
	rc = elf_src_read(s, buf, len, off);
	if (rc) {
		free(buf);
		return rc;
	}
	*out = buf;
	*outlen = len;
	return 0;
}

/* Release what elf_src_read_alloc() returned. */
void elf_src_free(const struct elf_src *s, unsigned char *buf)
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
	int rc = elf_src_read(s, raw, n, 0);

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
	rc = elf_src_read(s, raw, n, eh->e_shoff);
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

	rc = elf_src_read_alloc(s, h->eh.e_phoff, h->phnum * ent, h->phnum * ent, &raw, &len);
	if (rc)
		return rc;
	h->ph = calloc(h->phnum, sizeof(*h->ph));
	if (!h->ph) {
		elf_src_free(s, raw);
		return -ENOMEM;
	}
	for (size_t i = 0; i < h->phnum; i++) {
		const unsigned char *q = raw + i * ent;
		GElf_Phdr *p = &h->ph[i];

		p->p_type = elf_le32(q);
		if (elf64) {
			p->p_flags = elf_le32(q + 4);
			p->p_offset = elf_le64(q + 8);
			p->p_vaddr = elf_le64(q + 16);
			p->p_paddr = elf_le64(q + 24);
			p->p_filesz = elf_le64(q + 32);
			p->p_memsz = elf_le64(q + 40);
			p->p_align = elf_le64(q + 48);
		} else {
			p->p_offset = elf_le32(q + 4);
			p->p_vaddr = elf_le32(q + 8);
			p->p_paddr = elf_le32(q + 12);
			p->p_filesz = elf_le32(q + 16);
			p->p_memsz = elf_le32(q + 20);
			p->p_flags = elf_le32(q + 24);
			p->p_align = elf_le32(q + 28);
		}
	}
	elf_src_free(s, raw);
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
	rc = elf_src_read(s, raw, h->phnum * ent, h->eh.e_phoff);
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

static bool is_df1_pie(const struct elf_src *s, const struct elf_hdrs *h, bool elf64)
{
	for (size_t i = 0; i < h->phnum; i++) {
		GElf_Phdr ph = h->ph[i];
		unsigned char *buf;
		size_t len, ent = elf64 ? 16 : 8;
		bool pie = false;

		if (ph.p_type != PT_DYNAMIC)
			continue;
		if (elf_src_read_alloc(s, ph.p_offset, ph.p_filesz, DYNAMIC_READ_MAX,
				       &buf, &len))
			return false;
		for (size_t o = 0; o + ent <= len; o += ent) {
			uint64_t tag, val;

			if (elf64) {
				tag = elf_le32(buf + o) | (uint64_t)elf_le32(buf + o + 4) << 32;
				val = elf_le32(buf + o + 8) | (uint64_t)elf_le32(buf + o + 12) << 32;
			} else {
				tag = elf_le32(buf + o);
				val = elf_le32(buf + o + 4);
			}
			if (tag == DT_NULL)
				break;
			if (tag == DT_FLAGS_1 && (val & DF_1_PIE))
				pie = true;
		}
		elf_src_free(s, buf);
		return pie;
	}
	return false;
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
		rc = elf_loader_read_rel(s, &h.eh, elf64, info);
	else
		rc = elf_loader_read_segments(s, &h, elf64, is_static, info);
	if (rc)
		goto out;
	info->error = NULL;

	info->loader_ok = !info->note.found || info->note.problem == ELF_PROP_OK;
	if (info->note.found && info->note.problem == ELF_PROP_OK)
		info->loader_feature_1_and = info->note.loader_feature_1_and;
	rc = elf_kernel_judge_src(s, &h, elf64, info);
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
	rc = elf_src_read(s, id, SELFMAG, 0);
	if (rc)
		return rc;
	if (memcmp(id, ELFMAG, SELFMAG) != 0)
		return ELF_CET_ENOTELF;
	if (s->size < EI_NIDENT) {
		info->error = "truncated ELF header";
		return ELF_CET_ECORRUPT;
	}
	rc = elf_src_read(s, id, EI_NIDENT, 0);
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
