// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The dynamic section of an object, as the closure needs it: its DT_NEEDED
 * names, DT_RPATH, DT_RUNPATH and DT_SONAME read through the string table
 * the section points at, and its PT_INTERP; bounded reads of an
 * untrusted file, names that are not printable refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf-deps.h"
#include "elf-deps-internal.h"

#define DYN_READ_MAX	(1U << 20)
#define STR_READ_MAX	4096U
#define NEEDED_MAX	1024U

void elf_deps_dyninfo_free(struct dyninfo *d)
{
	for (size_t i = 0; i < d->nneeded; i++)
		free(d->needed[i]);
	free(d->needed);
	free(d->rpath);
	free(d->runpath);
	free(d->interp);
	free(d->soname);
	memset(d, 0, sizeof(*d));
}

/* Read a NUL-terminated string at file offset @off (at most STR_READ_MAX). */
static char *read_str(int fd, uint64_t off, uint64_t fsize)
{
	size_t len;
	char *s;
	ssize_t r;

	if (off >= fsize)
		return NULL;
	len = fsize - off > STR_READ_MAX ? STR_READ_MAX : (size_t)(fsize - off);
	s = malloc(len + 1);
	if (!s)
		return NULL;
	r = pread(fd, s, len, (off_t)off);
	if (r <= 0) {
		free(s);
		return NULL;
	}
	s[r] = '\0';
	if (strlen(s) == (size_t)r && (size_t)r == STR_READ_MAX) {
		free(s);	/* no terminator within the limit */
		return NULL;
	}
	return s;
}

/* A DT_NEEDED name: printable, no control characters. */
static bool sane_name(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			return false;
	return true;
}

/* Map a virtual address to a file offset through the PT_LOAD segments. */
static bool vaddr_to_off(Elf *e, size_t phnum, uint64_t vaddr, uint64_t *off)
{
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr - ph.p_vaddr < ph.p_filesz) {
			*off = ph.p_offset + (vaddr - ph.p_vaddr);
			return true;
		}
	}
	return false;
}

/* The string offsets the dynamic section names (UINT64_MAX: absent). */
struct dyn_tags {
	uint64_t needed[NEEDED_MAX];
	size_t nneeded;
	uint64_t rpath, runpath, soname;
	uint64_t strtab, strsz;
	bool have_strtab;
};

static void scan_dynamic(const unsigned char *dyn, size_t dynlen, bool elf64,
			 struct dyn_tags *t)
{
	*t = (struct dyn_tags){ .rpath = UINT64_MAX, .runpath = UINT64_MAX,
				.soname = UINT64_MAX };
	for (size_t o = 0, ent = elf64 ? 16 : 8; o + ent <= dynlen; o += ent) {
		uint64_t tag = elf64 ? elf_deps_le64(dyn + o) : elf_deps_le32(dyn + o);
		uint64_t val = elf64 ? elf_deps_le64(dyn + o + 8) : elf_deps_le32(dyn + o + 4);

		if (tag == DT_NULL)
			break;
		switch (tag) {
		case DT_NEEDED:
			if (t->nneeded < NEEDED_MAX)
				t->needed[t->nneeded++] = val;
			break;
		case DT_RPATH:
			t->rpath = val;
			break;
		case DT_RUNPATH:
			t->runpath = val;
			break;
		case DT_SONAME:
			t->soname = val;
			break;
		case DT_STRTAB:
			t->strtab = val;
			t->have_strtab = true;
			break;
		case DT_STRSZ:
			t->strsz = val;
			break;
		}
	}
}

/* The names @t points at, from the string table at file offset @stroff,
 * into @d. 0, ELF_CET_ECORRUPT or -ENOMEM. */
static int read_dyn_names(int fd, uint64_t fsize, uint64_t stroff, const struct dyn_tags *t,
			  struct dyninfo *d)
{
	d->needed = calloc(t->nneeded ? t->nneeded : 1, sizeof(char *));
	if (!d->needed)
		return -ENOMEM;
	for (size_t i = 0; i < t->nneeded; i++) {
		char *s;

		if (t->needed[i] >= t->strsz)
			continue;
		s = read_str(fd, stroff + t->needed[i], fsize);
		if (!s || !*s || !sane_name(s)) {
			/* separate debug files (.debug) keep the program headers
			 * but not the bytes behind them: garbage, not names */
			free(s);
			return ELF_CET_ECORRUPT;
		}
		d->needed[d->nneeded++] = s;
	}
	if (t->rpath < t->strsz)
		d->rpath = read_str(fd, stroff + t->rpath, fsize);
	if (t->runpath < t->strsz)
		d->runpath = read_str(fd, stroff + t->runpath, fsize);
	if (t->soname < t->strsz)
		d->soname = read_str(fd, stroff + t->soname, fsize);
	return 0;
}

/* The dynamic names of the file open on @fd (not closed here). */
static int read_dyninfo_fd(int fd, struct dyninfo *d)
{
	struct stat st;
	Elf *e = NULL;
	size_t phnum = 0;
	uint64_t stroff;
	struct dyn_tags t;
	bool elf64;
	unsigned char *dyn = NULL;
	size_t dynlen = 0;
	int rc = 0;

	memset(d, 0, sizeof(*d));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return -EINVAL;
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || elf_getphdrnum(e, &phnum) != 0) {
		rc = ELF_CET_ECORRUPT;
		goto out;
	}
	elf64 = gelf_getclass(e) == ELFCLASS64;

	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph))
			continue;
		if (ph.p_type == PT_INTERP && !d->interp) {
			d->interp = read_str(fd, ph.p_offset, (uint64_t)st.st_size);
			if (d->interp && (!*d->interp || !sane_name(d->interp))) {
				rc = ELF_CET_ECORRUPT;
				goto out;
			}
		} else if (ph.p_type == PT_DYNAMIC && !dyn) {
			uint64_t len = ph.p_filesz > DYN_READ_MAX ? DYN_READ_MAX : ph.p_filesz;

			if (ph.p_offset > (uint64_t)st.st_size ||
			    len > (uint64_t)st.st_size - ph.p_offset) {
				rc = ELF_CET_ECORRUPT;
				goto out;
			}
			dyn = malloc(len ? len : 1);
			if (!dyn) {
				rc = -ENOMEM;
				goto out;
			}
			rc = elf_deps_pread_full(fd, dyn, len, ph.p_offset);
			if (rc)
				goto out;
			dynlen = len;
		}
	}

	scan_dynamic(dyn, dynlen, elf64, &t);
	if (!t.have_strtab || t.strsz == 0)
		goto out;
	if (!vaddr_to_off(e, phnum, t.strtab, &stroff)) {
		rc = ELF_CET_ECORRUPT;
		goto out;
	}
	rc = read_dyn_names(fd, (uint64_t)st.st_size, stroff, &t, d);
out:
	free(dyn);
	if (e)
		elf_end(e);
	if (rc)
		elf_deps_dyninfo_free(d);
	return rc;
}

int elf_deps_read_dyninfo(const char *path, struct dyninfo *d)
{
	int fd, rc;

	memset(d, 0, sizeof(*d));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	rc = read_dyninfo_fd(fd, d);
	close(fd);
	return rc;
}

int elf_dyn_names_read_fd(int fd, struct elf_dyn_names *out)
{
	struct dyninfo d;
	int rc;

	memset(out, 0, sizeof(*out));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOTSUP;
	rc = read_dyninfo_fd(fd, &d);
	if (rc)
		return rc;
	out->soname = d.soname;
	out->interp = d.interp;
	out->needed = d.needed;
	out->nneeded = d.nneeded;
	free(d.rpath);
	free(d.runpath);
	return 0;
}

void elf_dyn_names_free(struct elf_dyn_names *n)
{
	for (size_t i = 0; i < n->nneeded; i++)
		free(n->needed[i]);
	free(n->needed);
	free(n->soname);
	free(n->interp);
	memset(n, 0, sizeof(*n));
}
