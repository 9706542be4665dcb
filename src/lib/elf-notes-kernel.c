// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The kernel's view: what our series' binfmt_elf reads from a file (the
 * program headers it takes, PT_INTERP, the first and last PT_GNU_PROPERTY,
 * each judged by elf_prop_kernel_parse() in elf-notes.c) and the verdict
 * of execve() and the legacy-ELF policy on it, elf_kernel_judge(). The
 * file is read through elf_src_read*() (elf-notes-read.c).
 */
#include <errno.h>
#include <gelf.h>

#include "elf-notes-internal.h"

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
	rc = elf_src_read_alloc(s, ph->p_offset, ph->p_filesz, KERNEL_NOTE_MAX, &buf, &len);
	if (rc == ELF_CET_ECORRUPT)
		info->error = "PT_GNU_PROPERTY extends past the end of the file";
	if (rc)
		return rc;
	rc = elf_prop_kernel_parse(buf, len, elf64, f1);
	elf_src_free(s, buf);
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
			rc = elf_src_read(s, k->interp, n, ph->p_offset);
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

int elf_kernel_judge_src(const struct elf_src *s, const struct elf_hdrs *h, bool elf64,
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
