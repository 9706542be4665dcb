// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the ELF property-note parser on hand-built byte buffers:
 * every rule glibc's loader and the kernel apply, plus whole in-memory ELF
 * images through libelf, plus random garbage that must never crash.
 */
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf-notes.h"

static int failures, checks;

#define CHECK(cond) do {						\
	checks++;							\
	if (!(cond)) {							\
		failures++;						\
		fprintf(stderr, "%s:%d: %s: check failed: %s\n",	\
			__FILE__, __LINE__, __func__, #cond);		\
	}								\
} while (0)

#define FEATURE_1_AND	CET_GNU_PROPERTY_X86_FEATURE_1_AND
#define ISA_1_NEEDED	CET_GNU_PROPERTY_X86_ISA_1_NEEDED
#define ISA_1_USED	CET_GNU_PROPERTY_X86_ISA_1_USED
#define FEATURE_2_USED	CET_GNU_PROPERTY_X86_FEATURE_2_USED
#define IBT_SHSTK	(CET_X86_FEATURE_1_IBT | CET_X86_FEATURE_1_SHSTK)

struct prop {
	uint32_t type;
	uint32_t datasz;	/* bytes of value written (4 or 8 here) */
	uint32_t value;
};

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = v & 0xff;
	p[1] = (v >> 8) & 0xff;
	p[2] = (v >> 16) & 0xff;
	p[3] = v >> 24;
}

/*
 * Write one NT_GNU_PROPERTY_TYPE_0 note at @buf: header, "GNU\0", the
 * properties each padded to @word. @descsz_override (if nonzero) replaces
 * the computed n_descsz. Returns the bytes written (padded to @word).
 */
static size_t put_note(unsigned char *buf, const struct prop *props, size_t n,
		       size_t word, uint32_t descsz_override)
{
	size_t off = 16;

	for (size_t i = 0; i < n; i++) {
		put32(buf + off, props[i].type);
		put32(buf + off + 4, props[i].datasz);
		memset(buf + off + 8, 0, props[i].datasz);
		if (props[i].datasz >= 4)
			put32(buf + off + 8, props[i].value);
		off += 8 + ((props[i].datasz + word - 1) & ~(word - 1));
	}
	put32(buf, 4);
	put32(buf + 4, descsz_override ? descsz_override : (uint32_t)(off - 16));
	put32(buf + 8, ELF_CET_NT_GNU_PROPERTY_TYPE_0);
	memcpy(buf + 12, "GNU", 4);
	return off;
}

/* An NT_GNU_BUILD_ID note (20-byte id), 4-byte padded. */
static size_t put_build_id(unsigned char *buf)
{
	put32(buf, 4);
	put32(buf + 4, 20);
	put32(buf + 8, NT_GNU_BUILD_ID);
	memcpy(buf + 12, "GNU", 4);
	memset(buf + 16, 0xab, 20);
	return 36;
}

static void test_good_note64(void)
{
	unsigned char buf[256];
	struct prop p[] = {
		{ FEATURE_1_AND, 4, IBT_SHSTK },
		{ FEATURE_2_USED, 4, 0x3 },
		{ ISA_1_USED, 4, 0x1 },
	};
	struct elf_prop_note n;
	size_t len = put_note(buf, p, 3, 8, 0);
	uint32_t f1 = 0;

	CHECK(elf_prop_parse(buf, len, 8, true, &n) == 0);
	CHECK(n.found);
	CHECK(n.nnotes == 1);
	CHECK(n.problem == ELF_PROP_OK);
	CHECK(n.feature_1_and == IBT_SHSTK);
	CHECK(n.loader_feature_1_and == IBT_SHSTK);
	CHECK(n.feature_2_used == 0x3);
	CHECK(n.isa_1_used == 0x1);
	CHECK(n.present == (ELF_PROP_HAVE_FEATURE_1_AND | ELF_PROP_HAVE_FEATURE_2_USED |
			    ELF_PROP_HAVE_ISA_1_USED));
	CHECK(elf_prop_kernel_parse(buf, len, true, &f1) == 0);
	CHECK(f1 == IBT_SHSTK);
}

static void test_no_property_note(void)
{
	unsigned char buf[64];
	struct elf_prop_note n;
	size_t len = put_build_id(buf);

	/* A build-id note in an 8-aligned segment: nothing found, no problem. */
	CHECK(elf_prop_parse(buf, len, 4, true, &n) == 0);
	CHECK(!n.found);
	CHECK(n.problem == ELF_PROP_OK);
	CHECK(elf_prop_parse(buf, 0, 8, true, &n) == 0);
	CHECK(!n.found);
}

static void test_bad_alignment(void)
{
	unsigned char buf[128];
	struct prop p[] = { { FEATURE_1_AND, 4, CET_X86_FEATURE_1_SHSTK } };
	struct elf_prop_note n;
	size_t len = put_note(buf, p, 1, 8, 0);

	elf_prop_parse(buf, len, 4, true, &n);
	CHECK(n.found);
	CHECK(n.problem == ELF_PROP_BAD_ALIGN);
	CHECK(n.feature_1_and == CET_X86_FEATURE_1_SHSTK);	/* still shown */
	elf_prop_parse(buf, len, 16, true, &n);
	CHECK(n.problem == ELF_PROP_BAD_ALIGN);
	elf_prop_parse(buf, len, 0, true, &n);
	CHECK(n.problem == ELF_PROP_BAD_ALIGN);
}

static void test_elf32_alignment(void)
{
	unsigned char buf[128];
	struct prop p[] = {
		{ FEATURE_1_AND, 4, IBT_SHSTK },
		{ ISA_1_NEEDED, 4, 1 },
	};
	struct elf_prop_note n;
	size_t len = put_note(buf, p, 2, 4, 0);
	uint32_t f1;

	CHECK(len == 16 + 12 + 12);	/* no padding to 8 in ELF32 */
	elf_prop_parse(buf, len, 4, false, &n);
	CHECK(n.found && n.problem == ELF_PROP_OK);
	CHECK(n.feature_1_and == IBT_SHSTK);
	CHECK(n.isa_1_needed == 1);
	CHECK(elf_prop_kernel_parse(buf, len, false, &f1) == 0 && f1 == IBT_SHSTK);
	/* ELF32 note in an 8-aligned segment: glibc wants exactly 4. */
	elf_prop_parse(buf, len, 8, false, &n);
	CHECK(n.problem == ELF_PROP_BAD_ALIGN);
	/* ... and a 12-byte descriptor in ELF64 is not word-sized. */
	len = put_note(buf, p, 1, 4, 0);
	elf_prop_parse(buf, len, 8, true, &n);
	CHECK(n.problem == ELF_PROP_DESC_NOT_WORD);
}

static void test_unordered(void)
{
	unsigned char buf[128];
	struct prop p[] = {
		{ 0xc0008001, 4, 0 },	/* unknown type below ISA_1_NEEDED */
		{ FEATURE_1_AND, 4, IBT_SHSTK },
	};
	struct elf_prop_note n;
	size_t len = put_note(buf, p, 2, 8, 0);
	uint32_t f1;

	elf_prop_parse(buf, len, 8, true, &n);
	CHECK(n.found);
	CHECK(n.problem == ELF_PROP_UNORDERED);
	CHECK(elf_prop_kernel_parse(buf, len, true, &f1) == -ENOEXEC);

	/* glibc stops at the first type above ISA_1_NEEDED: a FEATURE_1_AND
	 * after ISA_1_USED is not an error for it but is never seen either. */
	struct prop q[] = {
		{ ISA_1_USED, 4, 1 },
		{ FEATURE_1_AND, 4, IBT_SHSTK },
	};
	len = put_note(buf, q, 2, 8, 0);
	elf_prop_parse(buf, len, 8, true, &n);
	CHECK(n.problem == ELF_PROP_OK);
	CHECK(n.feature_1_and == IBT_SHSTK);
	CHECK(n.loader_feature_1_and == 0);

	/* Equal types: glibc accepts (not "<"), the kernel refuses ("<="). */
	struct prop r[] = {
		{ FEATURE_1_AND, 4, CET_X86_FEATURE_1_IBT },
		{ FEATURE_1_AND, 4, IBT_SHSTK },
	};
	len = put_note(buf, r, 2, 8, 0);
	elf_prop_parse(buf, len, 8, true, &n);
	CHECK(n.problem == ELF_PROP_OK);
	CHECK(n.loader_feature_1_and == IBT_SHSTK);
	CHECK(elf_prop_kernel_parse(buf, len, true, &f1) == -ENOEXEC);
}

static void test_short_descsz(void)
{
	unsigned char buf[128];
	struct prop p[] = { { FEATURE_1_AND, 4, IBT_SHSTK } };
	struct elf_prop_note n;
	size_t len = put_note(buf, p, 1, 8, 4);

	elf_prop_parse(buf, len, 8, true, &n);
	CHECK(n.found);
	CHECK(n.problem == ELF_PROP_SHORT_DESC);
	CHECK(n.loader_feature_1_and == 0 || n.problem != ELF_PROP_OK);
}

static void test_duplicate(void)
{
	unsigned char buf[256];
	struct prop p[] = { { FEATURE_1_AND, 4, IBT_SHSTK } };
	struct elf_prop_note n;
	size_t len = put_note(buf, p, 1, 8, 0);

	len += put_note(buf + len, p, 1, 8, 0);
	elf_prop_parse(buf, len, 8, true, &n);
	CHECK(n.found);
	CHECK(n.nnotes == 2);
	CHECK(n.problem == ELF_PROP_DUPLICATE);

	/* A build-id note in between does not hide the duplicate. */
	len = put_note(buf, p, 1, 8, 0);
	len += (put_build_id(buf + len) + 7) & ~7UL;
	len += put_note(buf + len, p, 1, 8, 0);
	elf_prop_parse(buf, len, 8, true, &n);
	CHECK(n.problem == ELF_PROP_DUPLICATE);
}

static void test_datasz(void)
{
	unsigned char buf[128];
	struct prop p[] = { { FEATURE_1_AND, 8, IBT_SHSTK } };
	struct elf_prop_note n;
	size_t len = put_note(buf, p, 1, 8, 0);
	uint32_t f1;

	elf_prop_parse(buf, len, 8, true, &n);
	CHECK(n.found);
	CHECK(n.problem == ELF_PROP_BAD_DATASZ);
	CHECK(!(n.present & ELF_PROP_HAVE_FEATURE_1_AND));
	CHECK(elf_prop_kernel_parse(buf, len, true, &f1) == -ENOEXEC);

	/* pr_datasz != 4 on a type glibc does not read is fine. */
	struct prop q[] = { { FEATURE_1_AND, 4, 3 }, { FEATURE_2_USED, 8, 1 } };
	len = put_note(buf, q, 2, 8, 0);
	elf_prop_parse(buf, len, 8, true, &n);
	CHECK(n.problem == ELF_PROP_OK);
}

static void test_overrun_and_truncation(void)
{
	unsigned char buf[128];
	struct prop p[] = { { FEATURE_1_AND, 4, IBT_SHSTK } };
	struct elf_prop_note n;
	size_t len = put_note(buf, p, 1, 8, 0);
	uint32_t f1;

	put32(buf + 16 + 4, 100);	/* pr_datasz beyond the descriptor */
	elf_prop_parse(buf, len, 8, true, &n);
	CHECK(n.problem == ELF_PROP_OVERRUN);
	CHECK(elf_prop_kernel_parse(buf, len, true, &f1) == -ENOEXEC);

	len = put_note(buf, p, 1, 8, 0);
	elf_prop_parse(buf, len - 8, 8, true, &n);	/* segment cut short */
	CHECK(n.found);
	CHECK(n.problem == ELF_PROP_TRUNCATED);
	CHECK(elf_prop_kernel_parse(buf, 12, true, &f1) == -EIO);
}

static void test_kernel_limits(void)
{
	unsigned char buf[2048];
	struct prop p[] = { { FEATURE_1_AND, 4, IBT_SHSTK } };
	size_t len = put_note(buf, p, 1, 8, 0);
	uint32_t f1;

	memset(buf + len, 0, sizeof(buf) - len);
	CHECK(elf_prop_kernel_parse(buf, 1024, true, &f1) == 0);	/* trailing slack ok */
	CHECK(elf_prop_kernel_parse(buf, 1025, true, &f1) == -ENOEXEC);
	memcpy(buf + 12, "GNV", 4);
	CHECK(elf_prop_kernel_parse(buf, len, true, &f1) == -ENOEXEC);
}

/* ---- whole ELF images ------------------------------------------------- */

/* ELF64 image: ehdr, phdrs (interp?, gnu_property, note), interp, note. */
static size_t build_elf64(unsigned char *img, bool interp, uint64_t prop_align,
			  bool with_gnu_property, uint32_t f1)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	Elf64_Phdr *ph = (Elf64_Phdr *)(img + sizeof(*eh));
	struct prop p[] = { { FEATURE_1_AND, 4, f1 } };
	size_t nph = 0, off = sizeof(*eh) + 4 * sizeof(*ph), notelen;

	memset(img, 0, 4096);
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = interp ? ET_DYN : ET_EXEC;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = sizeof(*eh);
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	if (interp) {
		ph[nph].p_type = PT_INTERP;
		ph[nph].p_offset = off;
		ph[nph].p_filesz = 28;
		ph[nph].p_align = 1;
		memcpy(img + off, "/lib64/ld-linux-x86-64.so.2", 28);
		off += 32;
		nph++;
	}
	notelen = put_note(img + off, p, 1, 8, 0);
	ph[nph].p_type = PT_NOTE;
	ph[nph].p_offset = off;
	ph[nph].p_filesz = ph[nph].p_memsz = notelen;
	ph[nph].p_align = prop_align;
	nph++;
	if (with_gnu_property) {
		ph[nph] = ph[nph - 1];
		ph[nph].p_type = PT_GNU_PROPERTY;
		nph++;
	}
	eh->e_phnum = (Elf64_Half)nph;
	return off + notelen;
}

static void test_image_dynamic_marked(void)
{
	static unsigned char img[4096];
	struct elf_cet_info info;
	size_t len = build_elf64(img, true, 8, true, IBT_SHSTK);

	CHECK(elf_cet_read_mem(img, len, &info) == 0);
	CHECK(info.elfclass == ELFCLASS64 && info.x86);
	CHECK(info.kind == ELF_KIND_PIE);
	CHECK(info.source == ELF_NOTE_SRC_GNU_PROPERTY);
	CHECK(info.note.found && info.note.problem == ELF_PROP_OK);
	CHECK(info.loader_ok && info.loader_feature_1_and == IBT_SHSTK);
	CHECK(info.kernel == ELF_KERNEL_BLOCKS);	/* the legacy-ELF policy */
}

static void test_image_static_pt_note_only(void)
{
	static unsigned char img[4096];
	struct elf_cet_info info;
	size_t len = build_elf64(img, false, 8, false, CET_X86_FEATURE_1_SHSTK);

	CHECK(elf_cet_read_mem(img, len, &info) == 0);
	CHECK(info.kind == ELF_KIND_STATIC);
	CHECK(info.source == ELF_NOTE_SRC_PT_NOTE);
	CHECK(info.note.problem == ELF_PROP_NOT_IN_GNU_PROPERTY);
	CHECK(!info.loader_ok && info.loader_feature_1_and == 0);
	CHECK(info.kernel == ELF_KERNEL_ALLOWS);	/* kernel reads PT_GNU_PROPERTY only */
}

static void test_image_bad_align(void)
{
	static unsigned char img[4096];
	struct elf_cet_info info;
	size_t len = build_elf64(img, true, 4, true, IBT_SHSTK);

	CHECK(elf_cet_read_mem(img, len, &info) == 0);
	CHECK(info.note.found && info.note.problem == ELF_PROP_BAD_ALIGN);
	CHECK(!info.loader_ok);
	/* The kernel does not look at p_align. */
	CHECK(info.kernel == ELF_KERNEL_BLOCKS);
}

/*
 * No PT_GNU_PROPERTY; the property note in an 8-aligned PT_NOTE, a build-id
 * in a 4-aligned PT_NOTE after it. The loader walks backwards, skips the
 * misaligned one without deciding, and uses the property note.
 */
static void test_image_two_pt_notes(void)
{
	static unsigned char img[4096];
	struct elf_cet_info info;
	size_t len = build_elf64(img, true, 8, false, IBT_SHSTK);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	Elf64_Phdr *ph = (Elf64_Phdr *)(img + sizeof(*eh));
	size_t bid = (len + 7) & ~7UL;

	len = bid + put_build_id(img + bid);
	ph[eh->e_phnum].p_type = PT_NOTE;
	ph[eh->e_phnum].p_offset = bid;
	ph[eh->e_phnum].p_filesz = ph[eh->e_phnum].p_memsz = 36;
	ph[eh->e_phnum].p_align = 4;
	eh->e_phnum++;
	CHECK(elf_cet_read_mem(img, len, &info) == 0);
	CHECK(info.source == ELF_NOTE_SRC_PT_NOTE);
	CHECK(info.note.found && info.note.problem == ELF_PROP_OK);
	CHECK(info.loader_ok && info.loader_feature_1_and == IBT_SHSTK);

	/* the same with the build-id note 8-aligned: it decides first, "none" */
	ph[eh->e_phnum - 1].p_align = 8;
	CHECK(elf_cet_read_mem(img, len, &info) == 0);
	CHECK(!info.note.found && info.loader_feature_1_and == 0);
}

static void test_image_unmarked(void)
{
	static unsigned char img[4096];
	struct elf_cet_info info;
	size_t len = build_elf64(img, true, 8, true, 0);

	CHECK(elf_cet_read_mem(img, len, &info) == 0);
	CHECK(info.note.found && info.note.problem == ELF_PROP_OK);
	CHECK(info.loader_ok && info.loader_feature_1_and == 0);
	CHECK(info.kernel == ELF_KERNEL_ALLOWS);
}

static void test_image_errors(void)
{
	static unsigned char img[4096];
	struct elf_cet_info info;
	size_t len = build_elf64(img, true, 8, true, IBT_SHSTK);
	int rc;

	CHECK(elf_cet_read_mem("#!/bin/sh\necho hi\n", 18, &info) == ELF_CET_ENOTELF);
	CHECK(elf_cet_read_mem("", 0, &info) == ELF_CET_ENOTELF);
	CHECK(elf_cet_read_mem(img, 10, &info) == ELF_CET_ECORRUPT);	/* cut in e_ident */
	rc = elf_cet_read_mem(img, 100, &info);	/* cut in the phdrs */
	CHECK(rc == ELF_CET_ECORRUPT);
	if (rc != ELF_CET_ECORRUPT)
		fprintf(stderr, "rc=%d\n", rc);
	CHECK(elf_cet_read_mem(img, len - 4, &info) == ELF_CET_ECORRUPT); /* cut in the note */
	img[EI_CLASS] = 7;
	CHECK(elf_cet_read_mem(img, len, &info) == ELF_CET_ECORRUPT);
}

/*
 * elf_kernel_judge(): the legacy-ELF policy + binfmt_elf. A dynamic program's own
 * malformed note never fails the exec (the interpreter's does); it counts
 * as unmarked for the policy.
 */
static void test_kernel_judge(void)
{
	struct elf_cet_info prog, interp;
	const char *why;
	int err;

	memset(&prog, 0, sizeof(prog));
	prog.elfclass = ELFCLASS64;
	prog.machine = EM_X86_64;
	prog.type = ET_DYN;
	prog.kind = ELF_KIND_PIE;
	prog.x86 = true;
	prog.kfacts.phdrs_ok = true;
	prog.kfacts.user_space = true;
	prog.kfacts.interp_rc = 0;
	strcpy(prog.kfacts.interp, "/lib64/ld-linux-x86-64.so.2");
	prog.kfacts.first_rc = -ENOEXEC;	/* own note malformed */
	prog.kfacts.last_rc = -ENOEXEC;
	interp = prog;
	interp.kind = ELF_KIND_DYN;
	interp.kfacts.interp_rc = -ENOENT;
	interp.kfacts.first_rc = interp.kfacts.last_rc = 0;

	CHECK(elf_kernel_judge(&prog, &interp, 0, ELF_POLICY_BLOCK, true, &err, &why) == ELF_KERNEL_ALLOWS);
	CHECK(err == 0);
	/* the interpreter's malformed note does not fail the exec (the legacy-ELF patch of the series) */
	interp.kfacts.last_rc = -EIO;
	CHECK(elf_kernel_judge(&prog, &interp, 0, ELF_POLICY_BLOCK, true, &err, &why) == ELF_KERNEL_ALLOWS);
	CHECK(err == 0);
	interp.kfacts.last_rc = 0;
	/* its marking does not count; the program's own does */
	interp.kfacts.first_rc = 0;
	interp.kfacts.first_feature_1 = IBT_SHSTK;
	CHECK(elf_kernel_judge(&prog, &interp, 0, ELF_POLICY_BLOCK, true, &err, &why) == ELF_KERNEL_ALLOWS);
	prog.kfacts.first_rc = 0;
	prog.kfacts.first_feature_1 = CET_X86_FEATURE_1_IBT;
	CHECK(elf_kernel_judge(&prog, &interp, 0, ELF_POLICY_BLOCK, true, &err, &why) == ELF_KERNEL_BLOCKS);
	CHECK(elf_kernel_judge(&prog, &interp, 0, ELF_POLICY_ALLOW, true, &err, &why) == ELF_KERNEL_ALLOWS_LEGACY);
	CHECK(elf_kernel_judge(&prog, &interp, 0, ELF_POLICY_NONE, true, &err, &why) == ELF_KERNEL_NO_POLICY);
	/* interpreter problems */
	CHECK(elf_kernel_judge(&prog, NULL, -ENOENT, ELF_POLICY_BLOCK, true, &err, &why) == ELF_KERNEL_ENOEXEC);
	CHECK(err == -ENOENT);
	CHECK(elf_kernel_judge(&prog, NULL, ELF_CET_ENOTELF, ELF_POLICY_BLOCK, true, &err, &why) == ELF_KERNEL_ENOEXEC);
	CHECK(err == -ELIBBAD);
	interp.machine = EM_386;
	CHECK(elf_kernel_judge(&prog, &interp, 0, ELF_POLICY_BLOCK, true, &err, &why) == ELF_KERNEL_ENOEXEC);
	CHECK(err == -ELIBBAD);
	/* a static program: a malformed note of its own does not fail the exec either */
	prog.kfacts.interp_rc = -ENOENT;
	prog.kind = ELF_KIND_STATIC_PIE;
	prog.kfacts.first_rc = -ENOEXEC;
	prog.kfacts.last_rc = -ENOEXEC;
	CHECK(elf_kernel_judge(&prog, NULL, 0, ELF_POLICY_ALLOW, true, &err, &why) == ELF_KERNEL_ALLOWS);
	CHECK(err == 0);
	/* not programs */
	prog.kind = ELF_KIND_DYN;
	CHECK(elf_kernel_judge(&prog, NULL, 0, ELF_POLICY_BLOCK, true, &err, &why) == ELF_KERNEL_NA);
	prog.kind = ELF_KIND_STATIC;
	prog.type = ET_EXEC;
	prog.kfacts.user_space = false;
	CHECK(elf_kernel_judge(&prog, NULL, 0, ELF_POLICY_BLOCK, true, &err, &why) == ELF_KERNEL_NA);
	prog.type = ET_CORE;
	CHECK(elf_kernel_judge(&prog, NULL, 0, ELF_POLICY_BLOCK, true, &err, &why) == ELF_KERNEL_NA);
	/* x32 needs CONFIG_X86_X32_ABI, refused before the interpreter is looked at */
	prog.type = ET_DYN;
	prog.kind = ELF_KIND_PIE;
	prog.elfclass = ELFCLASS32;
	prog.kfacts.user_space = true;
	prog.kfacts.interp_rc = 0;
	prog.kfacts.last_rc = 0;
	CHECK(elf_kernel_judge(&prog, NULL, -ENOENT, ELF_POLICY_BLOCK, false, &err, &why) == ELF_KERNEL_ENOEXEC);
	CHECK(err == -ENOEXEC);
	CHECK(elf_kernel_judge(&prog, NULL, 0, ELF_POLICY_BLOCK, true, &err, &why) == ELF_KERNEL_NO_SHSTK);
}

/* Random buffers and mutated images: must not crash (ASan tier checks reads). */
static void test_garbage(void)
{
	static unsigned char img[4096];
	unsigned char buf[256];
	struct elf_prop_note n;
	struct elf_cet_info info;
	uint32_t f1;

	srand(12345);
	for (int i = 0; i < 20000; i++) {
		size_t len = (size_t)rand() % sizeof(buf);

		for (size_t j = 0; j < len; j++)
			buf[j] = (unsigned char)rand();
		if (len >= 16 && (i & 1)) {
			put32(buf, 4);
			put32(buf + 8, ELF_CET_NT_GNU_PROPERTY_TYPE_0);
			memcpy(buf + 12, "GNU", 4);
		}
		elf_prop_parse(buf, len, (i & 2) ? 8 : 4, i & 4, &n);
		elf_prop_kernel_parse(buf, len, i & 4, &f1);
	}
	for (int i = 0; i < 2000; i++) {
		size_t len = build_elf64(img, i & 1, 8, true, IBT_SHSTK);

		for (int k = 0; k < 4; k++)
			img[(size_t)rand() % len] = (unsigned char)rand();
		elf_cet_read_mem(img, len, &info);
	}
	CHECK(1);
}

/*
 * An object file (ET_REL) as compilers write it: the property note in
 * section 1, .text, .shstrtab, then the section header table. @elf64: an
 * x86-64 or an i386 object. Returns its size.
 */
static size_t build_rel(unsigned char *img, bool elf64, uint32_t f1)
{
	static const char names[] = "\0.note.gnu.property\0.text\0.shstrtab";
	struct prop p[] = { { FEATURE_1_AND, 4, f1 } };
	size_t word = elf64 ? 8 : 4, ehsz = elf64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	size_t shsz = elf64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	size_t note = ehsz, notelen, text, str, shoff;
	/* name, type, offset, size, addralign of sections 1..3 */
	uint64_t sec[3][5];

	memset(img, 0, 4096);
	notelen = put_note(img + note, p, 1, word, 0);
	text = note + notelen;
	memset(img + text, 0xc3, 16);
	str = text + 16;
	memcpy(img + str, names, sizeof(names));
	shoff = (str + sizeof(names) + 7) & ~(size_t)7;
	sec[0][0] = 1, sec[0][1] = SHT_NOTE, sec[0][2] = note, sec[0][3] = notelen, sec[0][4] = word;
	sec[1][0] = 20, sec[1][1] = SHT_PROGBITS, sec[1][2] = text, sec[1][3] = 16, sec[1][4] = 16;
	sec[2][0] = 26, sec[2][1] = SHT_STRTAB, sec[2][2] = str, sec[2][3] = sizeof(names), sec[2][4] = 1;
	if (elf64) {
		Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
		Elf64_Shdr *sh = (Elf64_Shdr *)(img + shoff);

		eh->e_ident[EI_CLASS] = ELFCLASS64;
		eh->e_type = ET_REL;
		eh->e_machine = EM_X86_64;
		eh->e_version = EV_CURRENT;
		eh->e_shoff = shoff;
		eh->e_ehsize = (Elf64_Half)ehsz;
		eh->e_shentsize = (Elf64_Half)shsz;
		eh->e_shnum = 4;
		eh->e_shstrndx = 3;
		for (int i = 0; i < 3; i++) {
			sh[i + 1].sh_name = (Elf64_Word)sec[i][0];
			sh[i + 1].sh_type = (Elf64_Word)sec[i][1];
			sh[i + 1].sh_offset = sec[i][2];
			sh[i + 1].sh_size = sec[i][3];
			sh[i + 1].sh_addralign = sec[i][4];
		}
	} else {
		Elf32_Ehdr *eh = (Elf32_Ehdr *)img;
		Elf32_Shdr *sh = (Elf32_Shdr *)(img + shoff);

		eh->e_ident[EI_CLASS] = ELFCLASS32;
		eh->e_type = ET_REL;
		eh->e_machine = EM_386;
		eh->e_version = EV_CURRENT;
		eh->e_shoff = (Elf32_Off)shoff;
		eh->e_ehsize = (Elf32_Half)ehsz;
		eh->e_shentsize = (Elf32_Half)shsz;
		eh->e_shnum = 4;
		eh->e_shstrndx = 3;
		for (int i = 0; i < 3; i++) {
			sh[i + 1].sh_name = (Elf32_Word)sec[i][0];
			sh[i + 1].sh_type = (Elf32_Word)sec[i][1];
			sh[i + 1].sh_offset = (Elf32_Off)sec[i][2];
			sh[i + 1].sh_size = (Elf32_Word)sec[i][3];
			sh[i + 1].sh_addralign = (Elf32_Word)sec[i][4];
		}
	}
	memcpy(img, ELFMAG, SELFMAG);
	img[EI_DATA] = ELFDATA2LSB;
	img[EI_VERSION] = EV_CURRENT;
	return shoff + 4 * shsz;
}

/* Both ways of reading an ET_REL agree on @img (rc, source, note, error). */
static bool rel_readers_agree(const unsigned char *img, size_t len)
{
	struct elf_cet_info a, b;
	int ra = elf_cet_read_mem_rel(img, len, ELF_REL_LIBELF, &a);
	int rb = elf_cet_read_mem_rel(img, len, ELF_REL_AUTO, &b);

	if (ra != rb)
		return false;
	if ((a.error == NULL) != (b.error == NULL) || (a.error && strcmp(a.error, b.error)))
		return false;
	return ra != 0 || (a.kind == b.kind && a.source == b.source &&
			   a.note.found == b.note.found && a.note.problem == b.note.problem &&
			   a.note.present == b.note.present &&
			   a.note.feature_1_and == b.note.feature_1_and &&
			   a.loader_feature_1_and == b.loader_feature_1_and);
}

/*
 * The plain-case ET_REL reader (no libelf) must find what libelf finds:
 * on well-formed objects, 64- and 32-bit, and on thousands of mutants of
 * them (header fields, section headers, truncation), where it has to
 * decline whatever libelf decides differently.
 */
static void test_rel_reader_matches_libelf(void)
{
	static unsigned char img[4096], mut[4096];
	struct elf_cet_info info;
	int plain = 0, differ = 0;

	for (int elf64 = 0; elf64 < 2; elf64++) {
		size_t len = build_rel(img, elf64, IBT_SHSTK);

		CHECK(elf_cet_read_mem_rel(img, len, ELF_REL_PLAIN_ONLY, &info) == 0);
		CHECK(info.kind == ELF_KIND_REL && info.source == ELF_NOTE_SRC_SECTION);
		CHECK(info.x86 && info.machine == (elf64 ? EM_X86_64 : EM_386));
		CHECK(info.note.found && info.note.feature_1_and == IBT_SHSTK);
		CHECK(elf_cet_read_mem_rel(img, len, ELF_REL_LIBELF, &info) == 0);
		CHECK(info.source == ELF_NOTE_SRC_SECTION && info.note.feature_1_and == IBT_SHSTK);
		CHECK(rel_readers_agree(img, len));
	}
	srand(4242);
	for (int i = 0; i < 20000; i++) {
		bool elf64 = i & 1;
		size_t len = build_rel(img, elf64, (i & 2) ? IBT_SHSTK : 0);
		size_t shoff = elf64 ? ((Elf64_Ehdr *)img)->e_shoff : ((Elf32_Ehdr *)img)->e_shoff;

		memcpy(mut, img, len);
		for (int k = 1 + rand() % 3; k > 0; k--) {
			size_t at;

			switch (rand() % 3) {
			case 0:		/* ELF header past the magic */
				at = SELFMAG + (size_t)rand() % (elf64 ? 60 : 48);
				break;
			case 1:		/* the section header table */
				at = shoff + (size_t)rand() % (len - shoff);
				break;
			default:
				at = (size_t)rand() % len;
			}
			mut[at] = (unsigned char)(rand() % 4 ? rand() : 0);
		}
		if (rand() % 10 == 0)
			len = SELFMAG + (size_t)rand() % (len - SELFMAG);
		if (elf_cet_read_mem_rel(mut, len, ELF_REL_PLAIN_ONLY, &info) != -ENOTSUP)
			plain++;
		if (!rel_readers_agree(mut, len) && differ++ < 5)
			fprintf(stderr, "%s: mutant %d (elf64=%d, %zu bytes): the readers differ\n",
				__func__, i, elf64, len);
	}
	CHECK(differ == 0);
	/* the comparison means something only if the plain reader decided most */
	CHECK(plain > 10000);
	printf("%s: %d mutants decided without libelf, %d differ\n", __func__, plain, differ);
}

/*
 * An object with @nsec sections (Free Pascal writes units with 28,000):
 * empty SHT_PROGBITS sections, one SHT_NOTE .note.gnu.property near the
 * end, .shstrtab first in the file (far from the table, so the names are
 * read one by one) and its header at index @strndx. The plain reader reads
 * such a table in windows; it must find what libelf finds.
 */
static size_t build_rel_many(unsigned char *img, size_t nsec, size_t strndx, bool named)
{
	static const char names[] = "\0.note.gnu.property\0.text\0.shstrtab\0.note.gnu.propertx";
	struct prop p[] = { { FEATURE_1_AND, 4, IBT_SHSTK } };
	size_t str = sizeof(Elf64_Ehdr), note = (str + sizeof(names) + 7) & ~(size_t)7;
	size_t notelen = put_note(img + note, p, 1, 8, 0);
	size_t shoff = (note + notelen + 7) & ~(size_t)7;
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	Elf64_Shdr *sh = (Elf64_Shdr *)(img + shoff);

	memset(img + shoff, 0, nsec * sizeof(*sh));
	memcpy(img + str, names, sizeof(names));
	for (size_t i = 1; i < nsec; i++) {
		sh[i].sh_name = 20;
		sh[i].sh_type = SHT_PROGBITS;
		sh[i].sh_offset = note;
	}
	sh[strndx].sh_name = 26;
	sh[strndx].sh_type = SHT_STRTAB;
	sh[strndx].sh_offset = str;
	sh[strndx].sh_size = sizeof(names);
	sh[nsec - 2].sh_name = named ? 1 : 36;
	sh[nsec - 2].sh_type = SHT_NOTE;
	sh[nsec - 2].sh_offset = note;
	sh[nsec - 2].sh_size = notelen;
	sh[nsec - 2].sh_addralign = 8;
	memset(img, 0, sizeof(*eh));
	memcpy(img, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_REL;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_shoff = shoff;
	eh->e_ehsize = sizeof(*eh);
	eh->e_shentsize = sizeof(*sh);
	eh->e_shnum = (Elf64_Half)nsec;
	eh->e_shstrndx = (Elf64_Half)strndx;
	return shoff + nsec * sizeof(*sh);
}

static void test_rel_many_sections(void)
{
	static const size_t nsecs[] = { 1000, 1100, 3000, 30000 };
	size_t cap = 4096 + 30000 * sizeof(Elf64_Shdr);
	unsigned char *img = malloc(cap);
	struct elf_cet_info info;

	CHECK(img != NULL);
	if (!img)
		return;
	for (size_t k = 0; k < sizeof(nsecs) / sizeof(nsecs[0]); k++) {
		size_t n = nsecs[k];
		size_t strndxs[] = { 1, n / 2, n - 1 };

		for (size_t j = 0; j < 3; j++) {
			for (int named = 0; named < 2; named++) {
				size_t len = build_rel_many(img, n, strndxs[j], named);

				CHECK(elf_cet_read_mem_rel(img, len, ELF_REL_PLAIN_ONLY, &info) == 0);
				CHECK(info.note.found == named);
				CHECK(!named || (info.source == ELF_NOTE_SRC_SECTION &&
						 info.note.feature_1_and == IBT_SHSTK));
				CHECK(rel_readers_agree(img, len));
			}
		}
	}
	free(img);
}

int main(void)
{
	test_good_note64();
	test_rel_many_sections();
	test_no_property_note();
	test_bad_alignment();
	test_elf32_alignment();
	test_unordered();
	test_short_descsz();
	test_duplicate();
	test_datasz();
	test_overrun_and_truncation();
	test_kernel_limits();
	test_kernel_judge();
	test_image_dynamic_marked();
	test_image_static_pt_note_only();
	test_image_bad_align();
	test_image_unmarked();
	test_image_two_pt_notes();
	test_image_errors();
	test_garbage();
	test_rel_reader_matches_libelf();

	printf("test-elf-notes: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
