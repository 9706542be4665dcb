// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * One file of `cetctl elf`: read its marking (elf_do_fd()), judge what the
 * loader takes from it (LOADER) and what execve() and the legacy-ELF
 * policy make of it (KERNEL, with its interpreter), and fill its row and
 * the summary's counts. The closure's cells are cmd-elf-deps.c's.
 */
#include <elf.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cetctl.h"
#include "compat-cell.h"
#include "jsonwrt.h"
#include "table.h"
#include "elf-deps.h"
#include "elf-notes.h"
#include "cmd-elf-internal.h"

const char *elf_rc_str(int rc)
{
	if (rc == ELF_CET_ENOTELF)
		return "not an ELF file";
	if (rc == ELF_CET_ECORRUPT)
		return "truncated or corrupt ELF file";
	return strerror(-rc);
}

/* Why the loader ignores the note of @in, NULL when it takes it. */
static const char *loader_reason(const struct elf_cet_info *in, char *buf, size_t size)
{
	if (!in->note.found || in->note.problem == ELF_PROP_OK)
		return NULL;
	if (in->note.problem == ELF_PROP_BAD_ALIGN)
		snprintf(buf, size, "alignment not %d", in->elfclass == ELFCLASS64 ? 8 : 4);
	else
		snprintf(buf, size, "%s", elf_prop_problem_str(in->note.problem));
	return buf;
}

/*
 * The LOADER verdict, one typed value. Table: "ibt,shstk", "ibt", "shstk",
 * "none" or "ignored: why". JSON: {"status": "used"|"ignored", "features":
 * [what the loader takes: "ibt", "shstk"], "reason": why it ignores the
 * note or null}. Where the loader has nothing to say the cell is "-"
 * (null) instead.
 */
struct loader_value {
	bool ignored;		/* reason says why */
	bool ibt, shstk;	/* what the loader takes (never when ignored) */
	char reason[128];
};

static void loader_text(const void *v, struct cetctl_text *out)
{
	const struct loader_value *l = v;

	if (l->ignored) {
		cetctl_text_puts(out, "ignored: ");
		cetctl_text_puts(out, l->reason);
	} else {
		cetctl_text_puts(out, l->ibt && l->shstk ? "ibt,shstk" : l->ibt ? "ibt" :
				 l->shstk ? "shstk" : "none");
	}
}

static void loader_json(struct jsonwrt *w, const char *name, const void *v)
{
	const struct loader_value *l = v;

	jsonwrt_object_open(w, name, JSONWRT_LINE);
	jsonwrt_string(w, "status", l->ignored ? "ignored" : "used");
	jsonwrt_array_open(w, "features", JSONWRT_TIGHT);
	if (l->ibt)
		jsonwrt_string(w, NULL, "ibt");
	if (l->shstk)
		jsonwrt_string(w, NULL, "shstk");
	jsonwrt_array_close(w);
	jsonwrt_string(w, "reason", l->ignored ? l->reason : NULL);
	jsonwrt_object_close(w);
}

const struct cetctl_value_type elf_loader_type = { loader_text, loader_json };

/* The KERNEL verdict for @in under ctl->policy (elf_kernel_judge()). */
static enum elf_kernel_verdict judge_kernel(struct elf_ctl *ctl, const struct elf_cet_info *in,
					    int *kerr)
{
	const struct elf_kernel_facts *k = &in->kfacts;
	const struct elf_cet_info *interp = NULL;
	int interp_rc = 0;

	/* the interpreter can fail the exec under any policy, none included */
	if (in->x86 && (in->type == ET_EXEC || in->type == ET_DYN) && k->interp_rc == 0) {
		/* as open_exec() would: from the root, needing execute permission */
		if (strcmp(ctl->interp_path, k->interp) != 0) {
			snprintf(ctl->interp_path, sizeof(ctl->interp_path), "%s", k->interp);
			struct stat st;

			if (faccessat(AT_FDCWD, k->interp, X_OK, AT_EACCESS) != 0)
				ctl->interp_rc = -errno;
			/* elf_read() of its ELF header comes up short: EIO */
			else if (stat(k->interp, &st) == 0 && S_ISREG(st.st_mode) &&
				 st.st_size < (in->elfclass == ELFCLASS64 ? (off_t)sizeof(Elf64_Ehdr) :
					       (off_t)sizeof(Elf32_Ehdr)))
				ctl->interp_rc = -EIO;
			else
				ctl->interp_rc = elf_cet_read_path(k->interp, &ctl->interp);
		}
		interp_rc = ctl->interp_rc;
		interp = interp_rc == 0 ? &ctl->interp : NULL;
	}
	return elf_kernel_judge(in, interp, interp_rc, ctl->policy, ctl->x32_abi, kerr, NULL);
}

/*
 * The KERNEL verdict, one typed value. JSON: {"verdict": "allows"|
 * "refuses"|"fails"|"n/a"|"no-shstk", "errno": the error execve() fails
 * with ("fails" only, else null), "reason": "policy allow", "not a
 * program", "no policy", "i386", "x32" or null}. Table: the errno name
 * for "fails", else the verdict and its reason in parentheses.
 */
struct kernel_value {
	enum elf_kernel_verdict v;
	int kerr;		/* ELF_KERNEL_ENOEXEC: -errno */
	bool i386;		/* ELF_KERNEL_NO_SHSTK: i386, else x32 */
};

static void kernel_words(const struct kernel_value *k, const char **verdict,
			 const char **errname, const char **reason)
{
	*verdict = "allows";
	*errname = *reason = NULL;
	switch (k->v) {
	case ELF_KERNEL_NA:
		*verdict = "n/a";
		*reason = "not a program";
		break;
	case ELF_KERNEL_NO_POLICY:
		*verdict = "n/a";
		*reason = "no policy";
		break;
	case ELF_KERNEL_ALLOWS:
		break;
	case ELF_KERNEL_ALLOWS_LEGACY:
		*reason = "policy allow";
		break;
	case ELF_KERNEL_BLOCKS:
		*verdict = "refuses";
		break;
	case ELF_KERNEL_ENOEXEC:
		*verdict = "fails";
		*errname = strerrorname_np(-k->kerr) ? strerrorname_np(-k->kerr) : "ENOEXEC";
		break;
	case ELF_KERNEL_NO_SHSTK:
		*verdict = "no-shstk";
		*reason = k->i386 ? "i386" : "x32";
		break;
	}
}

static void kernel_text(const void *v, struct cetctl_text *out)
{
	const char *verdict, *errname, *reason;

	kernel_words(v, &verdict, &errname, &reason);
	if (errname) {
		cetctl_text_puts(out, errname);
		return;
	}
	cetctl_text_puts(out, verdict);
	if (reason) {
		cetctl_text_puts(out, " (");
		cetctl_text_puts(out, reason);
		cetctl_text_puts(out, ")");
	}
}

static void kernel_json(struct jsonwrt *w, const char *name, const void *v)
{
	const char *verdict, *errname, *reason;

	kernel_words(v, &verdict, &errname, &reason);
	jsonwrt_object_open(w, name, JSONWRT_LINE);
	jsonwrt_string(w, "verdict", verdict);
	jsonwrt_string(w, "errno", errname);
	jsonwrt_string(w, "reason", reason);
	jsonwrt_object_close(w);
}

const struct cetctl_value_type elf_kernel_type = { kernel_text, kernel_json };

/* Set a cell; "-" (nothing to show) is null in JSON, not a string. */
void elf_set_cell(struct elf_ctl *ctl, struct cetctl_line *ln, int col, const char *v)
{
	if (ctl->json && v && strcmp(v, "-") == 0)
		v = NULL;
	cetctl_table_set(ctl->tb, ln, col, v);
}

/* A comma-separated list cell; "-" is null in JSON. */
static void set_list(struct elf_ctl *ctl, struct cetctl_line *ln, int col, const char *v)
{
	if (ctl->json && strcmp(v, "-") == 0)
		v = NULL;
	cetctl_table_set_list(ctl->tb, ln, col, v, ",", NULL);
}

/* LOADER: "-" (null) for a file the loader never looks at, or a .o whose note is fine */
static void set_loader(struct elf_ctl *ctl, struct cetctl_line *ln, const struct elf_cet_info *in)
{
	uint32_t f = in->loader_feature_1_and;
	struct loader_value l = { 0 };

	if (!cetctl_table_has(ctl->tb, COL_LOADER))
		return;
	l.ignored = loader_reason(in, l.reason, sizeof(l.reason)) != NULL;
	if (!in->x86 || (in->kind == ELF_KIND_REL && !l.ignored)) {
		elf_set_cell(ctl, ln, COL_LOADER, "-");
		return;
	}
	l.ibt = !l.ignored && (f & CET_X86_FEATURE_1_IBT);
	l.shstk = !l.ignored && (f & CET_X86_FEATURE_1_SHSTK);
	cetctl_table_set_value(ctl->tb, ln, COL_LOADER, &l, sizeof(l));
}

static void add_row(struct elf_ctl *ctl, const char *path, const struct elf_cet_info *in)
{
	struct cetctl_line *ln = cetctl_table_new_line(ctl->tb, NULL);
	const struct elf_prop_note *n = &in->note;
	bool have_f1 = n->present & ELF_PROP_HAVE_FEATURE_1_AND;
	enum elf_kernel_verdict kv;
	struct kernel_value kval;
	char buf[512];
	int kerr;

	if (!ln)
		err(CETCTL_EXIT_FAILURE, "failed to allocate output line");

	ctl->sum.files++;
	/* markings the loader would honour: a .o is never loaded */
	if (in->kind != ELF_KIND_REL && (in->loader_feature_1_and & CET_X86_FEATURE_1_SHSTK))
		ctl->sum.shstk++;
	if (in->kind != ELF_KIND_REL && (in->loader_feature_1_and & CET_X86_FEATURE_1_IBT))
		ctl->sum.ibt++;
	if (n->found && n->problem != ELF_PROP_OK)
		ctl->sum.ignored++;
	kv = judge_kernel(ctl, in, &kerr);
	if (kv == ELF_KERNEL_BLOCKS)
		ctl->sum.refused++;
	if (kv == ELF_KERNEL_ENOEXEC)
		ctl->sum.enoexec++;

	elf_set_cell(ctl, ln, COL_FILE, path);
	elf_set_cell(ctl, ln, COL_ARCH, elf_cet_arch_str(in, buf, sizeof(buf)));
	elf_set_cell(ctl, ln, COL_TYPE, elf_cet_kind_str(in->kind));
	elf_set_cell(ctl, ln, COL_IBT,
			 have_f1 && (n->feature_1_and & CET_X86_FEATURE_1_IBT) ? "yes" : "no");
	elf_set_cell(ctl, ln, COL_SHSTK,
			 have_f1 && (n->feature_1_and & CET_X86_FEATURE_1_SHSTK) ? "yes" : "no");
	if (have_f1 && (n->feature_1_and & (CET_X86_FEATURE_1_LAM_U48 | CET_X86_FEATURE_1_LAM_U57)))
		cetctl_table_set_list(ctl->tb, ln, COL_LAM,
				      (n->feature_1_and & CET_X86_FEATURE_1_LAM_U48) &&
				      (n->feature_1_and & CET_X86_FEATURE_1_LAM_U57) ? "u48,u57" :
				      n->feature_1_and & CET_X86_FEATURE_1_LAM_U48 ? "u48" : "u57",
				      ",", NULL);
	else if (have_f1 && ctl->json)
		cetctl_table_set_list(ctl->tb, ln, COL_LAM, "", ",", NULL);	/* [] */
	else
		elf_set_cell(ctl, ln, COL_LAM, "-");
	if (have_f1)
		cetctl_table_setf(ctl->tb, ln, COL_FEATURE_1_AND, "%#x", n->feature_1_and);
	else
		elf_set_cell(ctl, ln, COL_FEATURE_1_AND, "-");
	/* a property that is absent: "-" (null); present: its bits, maybe none */
	set_list(ctl, ln, COL_ISA_NEEDED, n->present & ELF_PROP_HAVE_ISA_1_NEEDED ?
		 elf_isa_1_str(n->isa_1_needed, buf, sizeof(buf)) : "-");
	set_list(ctl, ln, COL_ISA_USED, n->present & ELF_PROP_HAVE_ISA_1_USED ?
		 elf_isa_1_str(n->isa_1_used, buf, sizeof(buf)) : "-");
	set_list(ctl, ln, COL_FEATURE_2_USED, n->present & ELF_PROP_HAVE_FEATURE_2_USED ?
		 elf_feature_2_str(n->feature_2_used, buf, sizeof(buf)) : "-");
	elf_set_cell(ctl, ln, COL_NOTE, elf_note_source_str(in->source));
	set_loader(ctl, ln, in);
	kval.v = kv;
	kval.kerr = kerr;
	kval.i386 = in->machine == EM_386;
	cetctl_table_set_value(ctl->tb, ln, COL_KERNEL, &kval, sizeof(kval));
	if (ctl->deps && elf_add_deps(ctl, ln, path, in) != 0)
		ctl->sum.errors++;
	if (ctl->compat)
		compat_cell_set(ctl->tb, ln, COL_COMPAT, ctl->compat, path, in);
}

/*
 * Judge the regular file open on @fd. @explicit: named on the command
 * line (a non-ELF file is an error there, skipped quietly in a tree).
 */
int elf_do_fd(struct elf_ctl *ctl, int fd, const char *path, bool explicit)
{
	struct elf_cet_info info;
	struct stat st;
	int rc;

	if (fstat(fd, &st) < 0) {
		elf_error(ctl, path, errno, NULL);
		ctl->sum.errors++;
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {	/* swapped under us */
		elf_error(ctl, path, 0, "not a regular file");
		ctl->sum.errors++;
		return -1;
	}
	rc = elf_cet_read_fd(fd, st.st_size, &info);
	if (rc == ELF_CET_ENOTELF && !explicit) {
		ctl->sum.not_elf++;
		return 0;
	}
	if (rc == ELF_CET_ECORRUPT && info.error) {
		elf_error(ctl, path, 0, "corrupt ELF file: %s", info.error);
		ctl->sum.errors++;
		return -1;
	}
	if (rc) {
		elf_error(ctl, path, rc == ELF_CET_ENOTELF || rc == ELF_CET_ECORRUPT ? 0 : -rc,
			  "%s", elf_rc_str(rc));
		ctl->sum.errors++;
		return -1;
	}
	add_row(ctl, path, &info);
	return 0;
}
