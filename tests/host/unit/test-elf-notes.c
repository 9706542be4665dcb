// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the ELF property-note parser on hand-built byte buffers:
 * every rule glibc's loader and the kernel apply, plus whole in-memory ELF
 * images through libelf, plus random garbage that must never crash.
 */
#include <elf.h>
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
	CHECK(info.kernel == ELF_KERNEL_BLOCKS);	/* seed 011 policy */
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
 * elf_kernel_judge(): patch 33 + binfmt_elf. A dynamic program's own
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
	/* the interpreter's malformed note does not fail the exec (patch 34) */
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

int main(void)
{
	test_good_note64();
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

	printf("test-elf-notes: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
