/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * x86 CET marking of ELF files: the NT_GNU_PROPERTY_TYPE_0 note, what it
 * says, and what glibc's loader and our kernel series make of it.
 *
 * Two views are kept apart on purpose:
 *  - what is written in the file (the raw property values of the first
 *    GNU property note found), which is what readelf and checksec show;
 *  - what the loader accepts, following the rules of glibc's
 *    _dl_process_property_note(): a note that breaks them is ignored as a
 *    whole and the object counts as unmarked.
 * Library code: returns -errno, never prints.
 */
#ifndef CETCTL_ELF_NOTES_H
#define CETCTL_ELF_NOTES_H

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cet-abi.h"

#define ELF_CET_NT_GNU_PROPERTY_TYPE_0	5

/* ISA_1 bits (ISA_1_NEEDED / ISA_1_USED). */
#define ELF_CET_ISA_1_BASELINE	(1U << 0)
#define ELF_CET_ISA_1_V2	(1U << 1)
#define ELF_CET_ISA_1_V3	(1U << 2)
#define ELF_CET_ISA_1_V4	(1U << 3)

/* Bits of elf_prop_note.present. */
#define ELF_PROP_HAVE_FEATURE_1_AND	(1U << 0)
#define ELF_PROP_HAVE_ISA_1_NEEDED	(1U << 1)
#define ELF_PROP_HAVE_ISA_1_USED	(1U << 2)
#define ELF_PROP_HAVE_FEATURE_2_USED	(1U << 3)

/* Why glibc's loader would ignore a GNU property note (0: it would not). */
enum elf_prop_problem {
	ELF_PROP_OK = 0,
	ELF_PROP_BAD_ALIGN,		/* segment/section alignment not 8 (ELF64) / 4 (ELF32) */
	ELF_PROP_SHORT_DESC,		/* n_descsz < 8 */
	ELF_PROP_DESC_NOT_WORD,		/* n_descsz not a multiple of the word size */
	ELF_PROP_UNORDERED,		/* property types not in ascending order */
	ELF_PROP_OVERRUN,		/* pr_datasz runs past the end of the note */
	ELF_PROP_BAD_DATASZ,		/* FEATURE_1_AND / ISA_1_NEEDED with pr_datasz != 4 */
	ELF_PROP_DUPLICATE,		/* more than one GNU property note in the segment */
	ELF_PROP_NOT_IN_GNU_PROPERTY,	/* static executable: note only in PT_NOTE */
	ELF_PROP_TRUNCATED,		/* note header or descriptor cut off by the segment/file end */
};

/* One GNU property note: what is written in it and the loader's verdict. */
struct elf_prop_note {
	bool found;		/* a "GNU" NT_GNU_PROPERTY_TYPE_0 note was seen */
	unsigned int nnotes;	/* how many of them in this segment/section */
	enum elf_prop_problem problem;
	uint32_t present;	/* ELF_PROP_HAVE_* seen in the first note */
	uint32_t feature_1_and;	/* raw values of the first note */
	uint32_t isa_1_needed;
	uint32_t isa_1_used;
	uint32_t feature_2_used;
	/* FEATURE_1_AND as glibc reads it: it stops looking at the first
	 * type above ISA_1_NEEDED, so a later FEATURE_1_AND does not count. */
	uint32_t loader_feature_1_and;
};

/*
 * Judge the contents of one note segment or section (@buf, @size bytes,
 * the alignment @align from p_align/sh_addralign) of an ELF file of class
 * @elf64 the way glibc's loader does. Values are little endian (x86).
 * Never reads outside @buf. Fills @out; returns 0.
 */
int elf_prop_parse(const void *buf, size_t size, uint64_t align, bool elf64,
		   struct elf_prop_note *out);

/* The verdict of our kernel series (its legacy-ELF policy + binfmt_elf) on exec. */
enum elf_kernel_verdict {
	ELF_KERNEL_NA = 0,	/* not a program: shared library, .o, core, kernel image */
	ELF_KERNEL_ALLOWS,	/* shadow-stack API available */
	ELF_KERNEL_BLOCKS,	/* marked IBT/SHSTK: API refused (legacy-ELF policy) */
	ELF_KERNEL_ENOEXEC,	/* execve fails (error in elf_kernel_judgement.err) */
	ELF_KERNEL_NO_SHSTK,	/* 32-bit or x32: no shadow stacks at all */
	ELF_KERNEL_ALLOWS_LEGACY, /* marked IBT/SHSTK, the policy is "allow" */
	ELF_KERNEL_NO_POLICY,	/* the kernel has no legacy-ELF policy (mainline) */
};

/* The legacy-ELF policy a kernel applies (CONFIG_X86_USER_SHADOW_STACK_ALLOW_BROKEN). */
enum elf_kernel_policy {
	ELF_POLICY_NONE = 0,	/* no such policy: mainline, no shadow-stack support */
	ELF_POLICY_BLOCK,	/* shstk_legacy_elf=block, the default */
	ELF_POLICY_ALLOW,	/* shstk_legacy_elf=allow / ..._ALLOW_BROKEN=y */
};

/*
 * What the series' binfmt_elf reads from one file, gathered by
 * elf_cet_read_*(); elf_kernel_judge() turns it into the verdict.
 */
struct elf_kernel_facts {
	bool phdrs_ok;		/* e_phentsize/e_phnum as load_elf_phdrs() wants */
	bool user_space;	/* no PT_LOAD at or above the user address limit */
	int interp_rc;		/* 0 PT_INTERP read; -ENOENT none; -ENOEXEC malformed */
	char interp[PATH_MAX];	/* its path when interp_rc == 0 */
	int first_rc;		/* first PT_GNU_PROPERTY (the exec's own state,
				 * legacy-ELF policy): 0, -ENOENT none, or the parse error */
	uint32_t first_feature_1; /* its FEATURE_1_AND when first_rc == 0 */
	int last_rc;		/* the last PT_GNU_PROPERTY, the one binfmt_elf
				 * parses when this file is the interpreter or a
				 * program without one: 0 (or none) or the error */
};

/*
 * Judge a PT_GNU_PROPERTY segment the way the series' binfmt_elf does
 * (first note only, at most 1 KiB, strictly ascending types, FEATURE_1_AND
 * of exactly 4 bytes, else -ENOEXEC). Returns 0 and sets *feature_1_and,
 * or -ENOEXEC / -EIO like the kernel.
 */
int elf_prop_kernel_parse(const void *buf, size_t size, bool elf64,
			  uint32_t *feature_1_and);

enum elf_note_source {
	ELF_NOTE_SRC_NONE = 0,
	ELF_NOTE_SRC_GNU_PROPERTY,	/* PT_GNU_PROPERTY */
	ELF_NOTE_SRC_PT_NOTE,		/* PT_NOTE */
	ELF_NOTE_SRC_SECTION,		/* .note.gnu.property section (ET_REL) */
};

enum elf_cet_kind {
	ELF_KIND_EXEC,		/* ET_EXEC with an interpreter */
	ELF_KIND_STATIC,	/* ET_EXEC without an interpreter */
	ELF_KIND_PIE,		/* ET_DYN with an interpreter */
	ELF_KIND_STATIC_PIE,	/* ET_DYN, no interpreter, DF_1_PIE */
	ELF_KIND_DYN,		/* shared object */
	ELF_KIND_REL,		/* relocatable object (.o) */
	ELF_KIND_OTHER,		/* core and others */
};

/* What cetctl knows about one ELF file. */
struct elf_cet_info {
	int elfclass;			/* ELFCLASS32 / ELFCLASS64 */
	unsigned int machine;		/* e_machine */
	unsigned int type;		/* e_type */
	enum elf_cet_kind kind;
	bool x86;			/* EM_X86_64 or EM_386, little endian */
	bool has_interp;
	bool has_gnu_property;		/* a PT_GNU_PROPERTY header exists */

	/* The note as the loader consults it (or the first one found). */
	enum elf_note_source source;
	struct elf_prop_note note;

	/* The loader's view: marking in effect (0 when ignored/absent). */
	bool loader_ok;			/* note accepted (or no note at all) */
	uint32_t loader_feature_1_and;

	/* The verdict for the "block" policy, the interpreter assumed sound
	 * (no file besides this one is read): see elf_kernel_judge(). */
	enum elf_kernel_verdict kernel;
	int kernel_err;			/* -ENOEXEC/-EIO for ELF_KERNEL_ENOEXEC */
	struct elf_kernel_facts kfacts;

	/* Why the file was rejected (static text), with ELF_CET_ECORRUPT. */
	const char *error;
};

/* Errors beyond -errno for "this is not (a valid) ELF file". */
#define ELF_CET_ENOTELF		(-ENOEXEC)	/* no ELF magic */
#define ELF_CET_ECORRUPT	(-EBADMSG)	/* headers inconsistent / truncated */

/*
 * Read the CET information of the ELF file open on @fd (of @size bytes).
 * Only the ELF header, program headers (section headers for ET_REL) and
 * the note segments are read. Returns 0, ELF_CET_ENOTELF, ELF_CET_ECORRUPT
 * or another -errno.
 */
int elf_cet_read_fd(int fd, off_t size, struct elf_cet_info *out);
/* Same on an in-memory image (unit tests). */
int elf_cet_read_mem(const void *image, size_t size, struct elf_cet_info *out);

/*
 * How an ET_REL file's section headers are read: the plain-case reader,
 * falling back to libelf for any unusual layout (what the two functions
 * above do); libelf only; or the plain-case reader only, -ENOTSUP when it
 * declines. The unit tests compare the first two.
 */
enum elf_rel_reader { ELF_REL_AUTO, ELF_REL_LIBELF, ELF_REL_PLAIN_ONLY };
int elf_cet_read_mem_rel(const void *image, size_t size, enum elf_rel_reader how,
			 struct elf_cet_info *out);

/*
 * What execve() of @prog and then the shadow-stack interface (arch_prctl
 * ARCH_SHSTK_*, map_shadow_stack) do on a kernel of the series with legacy-
 * ELF @policy: the one model of the legacy-ELF policy and binfmt_elf that cetctl uses.
 *  - A shared library, .o, core file or kernel image is not a program: NA.
 *  - With ELF_POLICY_NONE the kernel ignores the notes: NO_POLICY for a
 *    64-bit program whose exec succeeds; exec failures (interpreter, x32,
 *    headers) and 32-bit programs are judged as under any policy.
 *  - A program with an interpreter: the INTERPRETER's (last)
 *    PT_GNU_PROPERTY decides whether execve() fails (ENOEXEC, EIO), the
 *    program's own note never does; a missing or bad interpreter fails
 *    with ENOENT/EACCES/ELIBBAD. Without one, the program's last
 *    PT_GNU_PROPERTY decides.
 *  - Then the program's own first PT_GNU_PROPERTY (a malformed one counts
 *    as unmarked) with IBT or SHSTK is BLOCKS under "block",
 *    ALLOWS_LEGACY under "allow"; 32-bit and x32 programs are NO_SHSTK.
 *  - x32 programs fail with ENOEXEC unless @x32_abi (CONFIG_X86_X32_ABI):
 *    compat_elf_check_arch() refuses them before anything else.
 * @interp is the interpreter's information (read by the caller) and
 * @interp_rc the result of reading it: 0, -errno of open, or
 * ELF_CET_ENOTELF/ELF_CET_ECORRUPT; @interp NULL means "assumed sound".
 * Sets *@err to the execve() error for ELF_KERNEL_ENOEXEC, and *@why to a
 * short static explanation (may be NULL).
 */
enum elf_kernel_verdict elf_kernel_judge(const struct elf_cet_info *prog,
					 const struct elf_cet_info *interp, int interp_rc,
					 enum elf_kernel_policy policy, bool x32_abi, int *err,
					 const char **why);

/* The machine an ELF header names, as the kernel tells x86 programs apart. */
enum elf_arch {
	ELF_ARCH_NOT_ELF = 0,	/* no ELF magic, or shorter than e_ident */
	ELF_ARCH_X86_64,	/* ELFCLASS64, EM_X86_64 */
	ELF_ARCH_X32,		/* ELFCLASS32, EM_X86_64 */
	ELF_ARCH_I386,		/* EM_386 */
	ELF_ARCH_OTHER,		/* anything else, or a header cut short */
};
enum elf_arch elf_arch_of(int elfclass, unsigned int machine);
/* The ELF header of the file open on @fd only (one read). */
enum elf_arch elf_arch_read_fd(int fd);

/* The interpreter (PT_INTERP) of a 64-bit program as binfmt_elf reads it
 * (NUL-terminated, at most PATH_MAX), or NULL. */
const char *elf_cet_interp64(const struct elf_cet_info *info);
/* Marked SHSTK as glibc's loader sees it (a note it ignores is no mark). */
bool elf_cet_shstk_marked(const struct elf_cet_info *info);

/* Short human texts. */
const char *elf_prop_problem_str(enum elf_prop_problem p);
const char *elf_note_source_str(enum elf_note_source s);
const char *elf_cet_kind_str(enum elf_cet_kind k);
/* "x86-64", "i386", "x32", or "machine-N" into @buf. */
const char *elf_cet_arch_str(const struct elf_cet_info *info, char *buf, size_t size);
/* Comma-separated names of the bits of ISA_1 / FEATURE_2 values into @buf
 * ("" when 0). */
const char *elf_isa_1_str(uint32_t v, char *buf, size_t size);
const char *elf_feature_2_str(uint32_t v, char *buf, size_t size);

#endif
