// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cetctl elf - the x86 CET marking of ELF files, and what glibc's loader
 * and the kernel series' legacy-ELF policy (see kernel-series/) make of it.
 *
 * Files are opened without following a final symlink during -r, with
 * O_NONBLOCK, and only after lstat/fstat said "regular file": a FIFO or a
 * device in a tree is never opened, so a scan cannot hang.
 */
#include <dirent.h>
#include <elf.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cetctl.h"
#include "compat-cell.h"
#include "compat-scan.h"
#include "jsonwrt.h"
#include "table.h"
#include "elf-deps.h"
#include "elf-notes.h"
#include "sysinfo-cet.h"
#include "util.h"

#define MAX_DEPTH	128	/* directory nesting; deeper trees are refused */
#define DEPS_NAMES_MAX	4	/* weakest links named in a cell */

enum {
	COL_FILE,
	COL_ARCH,
	COL_TYPE,
	COL_IBT,
	COL_SHSTK,
	COL_LAM,
	COL_FEATURE_1_AND,
	COL_ISA_NEEDED,
	COL_ISA_USED,
	COL_FEATURE_2_USED,
	COL_NOTE,
	COL_LOADER,
	COL_KERNEL,
	COL_DEPS,
	COL_DEPS_IBT,
	COL_DEPS_COUNT,
	COL_MISSING,
	COL_COMPAT,
};

static const struct cetctl_value_type loader_type, kernel_type, closure_type;

static const struct cetctl_column elf_columns[] = {
	[COL_FILE]	= { "FILE", 0.3, SCOLS_FL_NOEXTREMES, SCOLS_JSON_STRING,
			    "path of the file" },
	[COL_ARCH]	= { "ARCH", 6, 0, SCOLS_JSON_STRING,
			    "x86-64, i386, x32 (or machine-N)" },
	[COL_TYPE]	= { "TYPE", 6, 0, SCOLS_JSON_STRING,
			    "exec, pie, static, static-pie, dyn (shared object), rel (.o)" },
	[COL_IBT]	= { "IBT", 3, 0, SCOLS_JSON_BOOLEAN,
			    "FEATURE_1_AND has IBT, as written in the note" },
	[COL_SHSTK]	= { "SHSTK", 5, 0, SCOLS_JSON_BOOLEAN,
			    "FEATURE_1_AND has SHSTK, as written in the note" },
	[COL_LAM]	= { "LAM", 3, 0, SCOLS_JSON_ARRAY_STRING,
			    "FEATURE_1_AND LAM bits (u48, u57)" },
	[COL_FEATURE_1_AND] = { "FEATURE_1_AND", 8, 0, SCOLS_JSON_STRING,
			    "raw GNU_PROPERTY_X86_FEATURE_1_AND value" },
	[COL_ISA_NEEDED] = { "ISA_NEEDED", 10, 0, SCOLS_JSON_ARRAY_STRING,
			    "GNU_PROPERTY_X86_ISA_1_NEEDED levels" },
	[COL_ISA_USED]	= { "ISA_USED", 10, 0, SCOLS_JSON_ARRAY_STRING,
			    "GNU_PROPERTY_X86_ISA_1_USED levels" },
	[COL_FEATURE_2_USED] = { "FEATURE_2_USED", 10, 0, SCOLS_JSON_ARRAY_STRING,
			    "GNU_PROPERTY_X86_FEATURE_2_USED features" },
	[COL_NOTE]	= { "NOTE", 10, 0, SCOLS_JSON_STRING,
			    "where the property note is: PT_GNU_PROPERTY, PT_NOTE, .note.gnu.property, -" },
	[COL_LOADER]	= { "LOADER", 6, CETCTL_FL_SENTENCE, CETCTL_JSON_VALUE,
			    "what glibc's loader takes from the note: ibt,shstk / none / ignored: why",
			    0, &loader_type },
	[COL_KERNEL]	= { "KERNEL", 6, CETCTL_FL_SENTENCE, CETCTL_JSON_VALUE,
			    "execve and the shadow-stack interface on the kernel (--kernel-policy): allows, refuses, E* errors, n/a; JSON: {verdict,errno,reason}",
			    0, &kernel_type },
	[COL_DEPS]	= { "DEPS", 0.2, CETCTL_FL_SENTENCE, CETCTL_JSON_VALUE,
			    "--deps: shadow stacks for the whole closure: ok, or the objects that break it",
			    0, &closure_type },
	[COL_DEPS_IBT]	= { "DEPS_IBT", 0.2, CETCTL_FL_SENTENCE, CETCTL_JSON_VALUE,
			    "--deps: IBT for the whole closure: ok, or the objects that break it",
			    0, &closure_type },
	[COL_DEPS_COUNT] = { "NDEPS", 3, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			    "--deps: objects in the closure, the file included" },
	[COL_MISSING]	= { "MISSING", 0.1, SCOLS_FL_TRUNC, SCOLS_JSON_ARRAY_STRING,
			    "--deps: DT_NEEDED names that did not resolve" },
	[COL_COMPAT]	= { "COMPAT", 0.2, CETCTL_FL_SENTENCE, CETCTL_JSON_VALUE,
			    "--compat: can run --shstk run it (with its closure): marked, forced-safe, switches stacks (covered or not), unknown, incompatible; JSON: {verdict,object,match,errno,reason,cover,findings,more}",
			    0, &compat_value_type },
};
#define NCOLS (sizeof(elf_columns) / sizeof(elf_columns[0]))

struct elf_summary {
	unsigned long files, shstk, ibt, ignored, refused, enoexec;
	unsigned long deps_ok, not_elf, errors;
};

struct elf_ctl {
	struct cetctl_table *tb;
	struct elf_deps_ctx *deps;	/* --deps */
	struct compat_ctx *compat;	/* the COMPAT column */
	bool recursive;
	enum elf_kernel_policy policy;	/* judged for this legacy-ELF policy */
	bool x32_abi;			/* the kernel runs x32 programs */
	bool json;			/* "-" (nothing) is null there */
	bool raw;			/* --raw: every value in full */
	const char *policy_name;	/* "block", "allow", "none" */
	const char *policy_why;		/* where it comes from */
	/* the last interpreter read: nearly every program has the same one */
	char interp_path[PATH_MAX];
	struct elf_cet_info interp;
	int interp_rc;
	struct elf_summary sum;
};

static void usage(void)
{
	printf("Usage: cetctl elf [options] <file|dir>...\n\n");
	printf("Show the x86 CET marking (IBT, SHSTK) of ELF files and what the\n"
	       "loader and the kernel make of it.\n\n");
	printf("Options:\n");
	printf("  -r, --recursive        walk directories (symlinks are not followed,\n"
	       "                         non-ELF and special files are skipped)\n");
	printf("      --deps             resolve DT_NEEDED like the loader and judge\n"
	       "                         the whole closure\n");
	printf("      --compat           add the COMPAT column: can `cetctl run --shstk`\n"
	       "                         run it (the program and its closure)?\n");
	printf("      --kernel-policy <block|allow|none>\n"
	       "                         judge the KERNEL column for this legacy-ELF policy\n"
	       "                         (default: the running kernel's; none: no such policy)\n");
	cetctl_output_options_help(stdout);
	cetctl_columns_help(stdout, elf_columns, NCOLS);
	printf("\nA summary line goes to stderr (a \"summary\" member with --json).\n");
	printf("Exit status: 0 all files read, 1 a file could not be read or a usage error.\n");
}

/* ---- the kernel's legacy-ELF policy ---------------------------------- */

/*
 * The running kernel's policy (or the recorded tree's, with --proc-root):
 * its configuration, then shstk_legacy_elf= on its command line; "none"
 * when it has no such policy (no shadow stacks, mainline). When nothing can
 * tell, judge for the series' default and say so.
 */
static void running_policy(struct elf_ctl *ctl)
{
	struct cet_sysinfo si;
	const char *name = "unknown", *why = "the kernel cannot be read";

	if (cet_sysinfo_read(cetctl_globals.proc_root, &si) == 0) {
		name = cet_sysinfo_legacy_policy(&si, &why);
		ctl->x32_abi = si.kconfig_x32 == CET_YES;
	}
	if (ctl->policy_name)
		return;		/* --kernel-policy named one */
	ctl->policy_why = why;
	if (strcmp(name, "allow") == 0) {
		ctl->policy = ELF_POLICY_ALLOW;
	} else if (strcmp(name, "none") == 0) {
		ctl->policy = ELF_POLICY_NONE;
	} else {
		if (strcmp(name, "block") != 0) {
			warnx("elf: cannot tell the kernel's legacy-ELF policy (%s): judging for "
			      "'block', the series' default; use --kernel-policy", why);
			ctl->policy_why = "assumed: the series' default";
		}
		ctl->policy = ELF_POLICY_BLOCK;
		name = "block";
	}
	ctl->policy_name = name;
}

static int parse_policy(struct elf_ctl *ctl, const char *arg)
{
	static const struct { const char *name; enum elf_kernel_policy p; } names[] = {
		{ "block", ELF_POLICY_BLOCK }, { "allow", ELF_POLICY_ALLOW }, { "none", ELF_POLICY_NONE },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(arg, names[i].name) == 0) {
			ctl->policy = names[i].p;
			ctl->policy_name = names[i].name;
			ctl->policy_why = "--kernel-policy";
			return 0;
		}
	}
	warnx("elf: --kernel-policy: unknown policy '%s' (block, allow, none)", arg);
	return -1;
}

/*
 * A file that could not be judged: "elf: PATH: MESSAGE" on stderr and an
 * object in the JSON "errors" array. @fmt NULL: strerror(@errnum).
 */
static void elf_error(struct elf_ctl *ctl, const char *path, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void elf_error(struct elf_ctl *ctl, const char *path, int errnum, const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;

	if (fmt) {
		va_start(ap, fmt);
		if (vasprintf(&msg, fmt, ap) < 0)
			msg = NULL;
		va_end(ap);
	}
	warnx("elf: %s: %s", path, msg ? msg : strerror(errnum));
	cetctl_table_error(ctl->tb, path, 0, errnum, "%s", msg ? msg : strerror(errnum));
	free(msg);
}

/* ---- one file ------------------------------------------------------------ */

static const char *rc_str(int rc)
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

static const struct cetctl_value_type loader_type = { loader_text, loader_json };

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

static const struct cetctl_value_type kernel_type = { kernel_text, kernel_json };

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* Set a cell; "-" (nothing to show) is null in JSON, not a string. */
static void set_cell(struct elf_ctl *ctl, struct cetctl_line *ln, int col, const char *v)
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

/*
 * A DEPS or DEPS_IBT verdict on a closure, one typed value: the objects
 * that lack the bit as the loader sees it. Table: "ok", "no: a,b,c,d +N
 * more" (the base names, the file itself as "(self)"; --raw, read by
 * scripts, names every one) or "unknown: why". JSON: {"verdict":
 * "ok"|"no"|"unknown", "objects": every object lacking the bit (the file
 * as named, the others by real path), "reason": why the verdict is
 * unknown or null}. The value is flat, so that the table can copy it:
 * after the struct, the reason (unknown only) and then each object's
 * text name and JSON path, each with its NUL.
 */
enum { CLOSURE_OK, CLOSURE_NO, CLOSURE_UNKNOWN };

struct closure_value {
	unsigned char verdict;
	bool all;		/* --raw: name every object in the table */
	size_t nbad;
	char strings[];
};

static const char *next_string(const char *p)
{
	return p + strlen(p) + 1;
}

static void closure_text(const void *v, struct cetctl_text *out)
{
	const struct closure_value *c = v;
	const char *p;
	char more[48];

	if (c->verdict != CLOSURE_NO) {
		cetctl_text_puts(out, c->verdict == CLOSURE_OK ? "ok" : "unknown: ");
		if (c->verdict == CLOSURE_UNKNOWN)
			cetctl_text_puts(out, c->strings);
		return;
	}
	p = next_string(c->strings);	/* the first name, after the empty reason */
	for (size_t i = 0; i < c->nbad && (i < DEPS_NAMES_MAX || c->all); i++) {
		cetctl_text_puts(out, i ? "," : "no: ");
		cetctl_text_puts(out, p);
		p = next_string(next_string(p));
	}
	if (c->nbad > DEPS_NAMES_MAX && !c->all) {
		snprintf(more, sizeof(more), " +%zu more", c->nbad - DEPS_NAMES_MAX);
		cetctl_text_puts(out, more);
	}
}

static void closure_json(struct jsonwrt *w, const char *name, const void *v)
{
	const struct closure_value *c = v;
	const char *p = c->nbad ? next_string(c->strings) : NULL;	/* the first name */

	jsonwrt_object_open(w, name, JSONWRT_LINE);
	jsonwrt_string(w, "verdict", c->verdict == CLOSURE_OK ? "ok" :
		       c->verdict == CLOSURE_NO ? "no" : "unknown");
	jsonwrt_array_open(w, "objects", JSONWRT_TIGHT);
	for (size_t i = 0; i < c->nbad; i++) {
		p = next_string(p);		/* its path */
		jsonwrt_string(w, NULL, p);
		p = next_string(p);
	}
	jsonwrt_array_close(w);
	jsonwrt_string(w, "reason", c->verdict == CLOSURE_UNKNOWN ? c->strings : NULL);
	jsonwrt_object_close(w);
}

static const struct cetctl_value_type closure_type = { closure_text, closure_json };

/* Append @s and its NUL to the value being built in *@v (*@size bytes). */
static void closure_add(struct closure_value **v, size_t *size, const char *s)
{
	size_t len = strlen(s) + 1;
	struct closure_value *nv = realloc(*v, *size + len);

	if (!nv)
		err(CETCTL_EXIT_FAILURE, "out of memory");
	memcpy((char *)nv + *size, s, len);
	*size += len;
	*v = nv;
}

/*
 * Judge closure @c of @path for @bit and set the cell @col; @unknown: the
 * closure could not be judged for that reason. Returns the verdict.
 */
static int set_closure_cell(struct elf_ctl *ctl, struct cetctl_line *ln, int col,
			    const char *path, const struct elf_closure *c, uint32_t bit,
			    const char *unknown)
{
	size_t size = sizeof(struct closure_value);
	struct closure_value *v = calloc(1, size);
	int verdict;

	if (!v)
		err(CETCTL_EXIT_FAILURE, "out of memory");
	v->all = ctl->raw;
	for (size_t i = 0; !unknown && i < c->nobjs; i++) {
		const struct elf_dep_obj *o = c->objs[i];

		if (o->rc == 0 && (o->info.loader_feature_1_and & bit))
			continue;
		if (!v->nbad++)
			closure_add(&v, &size, "");	/* no reason */
		closure_add(&v, &size, i == 0 ? "(self)" : base_name(o->name));
		closure_add(&v, &size, i == 0 ? path : o->path ? o->path : o->name);
	}
	if (!v->nbad && !unknown && c->nmissing)
		unknown = "missing objects";
	if (unknown)
		closure_add(&v, &size, unknown);
	v->verdict = v->nbad ? CLOSURE_NO : unknown ? CLOSURE_UNKNOWN : CLOSURE_OK;
	verdict = v->verdict;
	cetctl_table_set_value(ctl->tb, ln, col, v, size);
	free(v);
	return verdict;
}

/* Set DEPS and DEPS_IBT. */
static void set_closure(struct elf_ctl *ctl, struct cetctl_line *ln, const char *path,
			const struct elf_closure *c, const char *unknown)
{
	if (set_closure_cell(ctl, ln, COL_DEPS, path, c, CET_X86_FEATURE_1_SHSTK,
			     unknown) == CLOSURE_OK)
		ctl->sum.deps_ok++;
	set_closure_cell(ctl, ln, COL_DEPS_IBT, path, c, CET_X86_FEATURE_1_IBT, unknown);
}

static int add_deps(struct elf_ctl *ctl, struct cetctl_line *ln, const char *path,
		    const struct elf_cet_info *in)
{
	struct elf_closure c;
	int rc;

	if (!in->x86 || in->kind == ELF_KIND_REL || in->kind == ELF_KIND_STATIC ||
	    in->kind == ELF_KIND_STATIC_PIE || in->kind == ELF_KIND_OTHER) {
		set_cell(ctl, ln, COL_DEPS, "-");
		set_cell(ctl, ln, COL_DEPS_IBT, "-");
		return 0;
	}
	rc = elf_deps_closure(ctl->deps, path, in, &c);
	if (rc) {
		elf_error(ctl, path, rc == ELF_CET_ENOTELF || rc == ELF_CET_ECORRUPT ? 0 : -rc,
			  "resolving dependencies: %s", rc_str(rc));
		return rc;
	}
	/* e.g. a separate .debug file: headers without contents */
	set_closure(ctl, ln, path, &c, c.nobjs && c.objs[0]->dyn_rc ?
		    "unreadable dynamic section" : NULL);
	if (c.nobjs && c.objs[0]->dyn_rc) {
		elf_closure_free(&c);
		return 0;
	}
	cetctl_table_setf(ctl->tb, ln, COL_DEPS_COUNT, "%zu", c.nobjs);
	if (cetctl_table_has(ctl->tb, COL_MISSING) && (c.nmissing || ctl->json)) {
		size_t len = 0;
		char *m;

		for (size_t i = 0; i < c.nmissing; i++)
			len += strlen(c.missing[i]) + 1;
		m = malloc(len + 1);
		if (m) {
			m[0] = '\0';
			for (size_t i = 0; i < c.nmissing; i++) {
				if (i)
					strcat(m, "\n");
				strcat(m, c.missing[i]);
			}
			/* JSON: an array (names may hold commas); table: a,b */
			if (!ctl->json)
				for (char *p = m; (p = strchr(p, '\n')); )
					*p = ',';
			cetctl_table_set_list(ctl->tb, ln, COL_MISSING, m, "\n", NULL);
			free(m);
		}
	}
	elf_closure_free(&c);
	return 0;
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
		set_cell(ctl, ln, COL_LOADER, "-");
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

	set_cell(ctl, ln, COL_FILE, path);
	set_cell(ctl, ln, COL_ARCH, elf_cet_arch_str(in, buf, sizeof(buf)));
	set_cell(ctl, ln, COL_TYPE, elf_cet_kind_str(in->kind));
	set_cell(ctl, ln, COL_IBT,
			 have_f1 && (n->feature_1_and & CET_X86_FEATURE_1_IBT) ? "yes" : "no");
	set_cell(ctl, ln, COL_SHSTK,
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
		set_cell(ctl, ln, COL_LAM, "-");
	if (have_f1)
		cetctl_table_setf(ctl->tb, ln, COL_FEATURE_1_AND, "%#x", n->feature_1_and);
	else
		set_cell(ctl, ln, COL_FEATURE_1_AND, "-");
	/* a property that is absent: "-" (null); present: its bits, maybe none */
	set_list(ctl, ln, COL_ISA_NEEDED, n->present & ELF_PROP_HAVE_ISA_1_NEEDED ?
		 elf_isa_1_str(n->isa_1_needed, buf, sizeof(buf)) : "-");
	set_list(ctl, ln, COL_ISA_USED, n->present & ELF_PROP_HAVE_ISA_1_USED ?
		 elf_isa_1_str(n->isa_1_used, buf, sizeof(buf)) : "-");
	set_list(ctl, ln, COL_FEATURE_2_USED, n->present & ELF_PROP_HAVE_FEATURE_2_USED ?
		 elf_feature_2_str(n->feature_2_used, buf, sizeof(buf)) : "-");
	set_cell(ctl, ln, COL_NOTE, elf_note_source_str(in->source));
	set_loader(ctl, ln, in);
	kval.v = kv;
	kval.kerr = kerr;
	kval.i386 = in->machine == EM_386;
	cetctl_table_set_value(ctl->tb, ln, COL_KERNEL, &kval, sizeof(kval));
	if (ctl->deps && add_deps(ctl, ln, path, in) != 0)
		ctl->sum.errors++;
	if (ctl->compat)
		compat_cell_set(ctl->tb, ln, COL_COMPAT, ctl->compat, path, in);
}

/*
 * Judge the regular file open on @fd. @explicit: named on the command
 * line (a non-ELF file is an error there, skipped quietly in a tree).
 */
static int do_fd(struct elf_ctl *ctl, int fd, const char *path, bool explicit)
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
			  "%s", rc_str(rc));
		ctl->sum.errors++;
		return -1;
	}
	add_row(ctl, path, &info);
	return 0;
}

struct dir_level {
	dev_t dev;
	ino_t ino;
};

static int walk(struct elf_ctl *ctl, int dfd, const char *path,
		struct dir_level *stack, int depth);

/*
 * @type: the entry's d_type. The kind the directory reports is enough to
 * decide (a regular file is fstat'ed again once open, so one swapped in
 * meanwhile is refused); only DT_UNKNOWN costs an fstatat first.
 */
static int walk_entry(struct elf_ctl *ctl, int dirfd, const char *dirpath, const char *name,
		      unsigned char type, struct dir_level *stack, int depth)
{
	char *path;
	struct stat st;
	int fd, rc = 0;

	if (asprintf(&path, "%s%s%s", dirpath,
		     dirpath[strlen(dirpath) - 1] == '/' ? "" : "/", name) < 0)
		err(CETCTL_EXIT_FAILURE, "out of memory");
	if (type == DT_UNKNOWN) {
		if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			elf_error(ctl, path, errno, NULL);
			ctl->sum.errors++;
			free(path);
			return -1;
		}
		type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_LNK;
	}
	if (type == DT_DIR) {
		fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			elf_error(ctl, path, errno, NULL);
			ctl->sum.errors++;
			rc = -1;
		} else {
			rc = walk(ctl, fd, path, stack, depth + 1);	/* closes fd */
		}
	} else if (type == DT_REG) {
		fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd < 0) {
			elf_error(ctl, path, errno, NULL);
			ctl->sum.errors++;
			rc = -1;
		} else {
			rc = do_fd(ctl, fd, path, false);
			close(fd);
		}
	}
	/* symlinks, FIFOs, sockets, devices: never opened */
	free(path);
	return rc;
}

struct dir_entry {
	char *name;
	unsigned char type;	/* d_type */
};

static int cmp_names(const void *a, const void *b)
{
	return strcmp(((const struct dir_entry *)a)->name, ((const struct dir_entry *)b)->name);
}

/* Walk the directory open on @dfd (closed here), in name order. */
static int walk(struct elf_ctl *ctl, int dfd, const char *path,
		struct dir_level *stack, int depth)
{
	struct stat st;
	DIR *d;
	struct dirent *de;
	struct dir_entry *names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	if (fstat(dfd, &st) < 0) {
		elf_error(ctl, path, errno, NULL);
		close(dfd);
		ctl->sum.errors++;
		return -1;
	}
	if (depth >= MAX_DEPTH) {
		elf_error(ctl, path, 0, "directories nested too deeply");
		close(dfd);
		ctl->sum.errors++;
		return -1;
	}
	/* A bind mount can make a tree contain itself: refuse to go round. */
	for (int i = 0; i < depth; i++) {
		if (stack[i].dev == st.st_dev && stack[i].ino == st.st_ino) {
			elf_error(ctl, path, 0, "directory loop, not descending");
			close(dfd);
			ctl->sum.errors++;
			return -1;
		}
	}
	stack[depth].dev = st.st_dev;
	stack[depth].ino = st.st_ino;

	d = fdopendir(dfd);
	if (!d) {
		elf_error(ctl, path, errno, NULL);
		close(dfd);
		ctl->sum.errors++;
		return -1;
	}
	while ((errno = 0, de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (n == cap) {
			struct dir_entry *nn = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof(*nn));

			if (!nn)
				err(CETCTL_EXIT_FAILURE, "out of memory");
			names = nn;
		}
		names[n].name = strdup(de->d_name);
		names[n].type = de->d_type;
		if (!names[n].name)
			err(CETCTL_EXIT_FAILURE, "out of memory");
		n++;
	}
	if (errno) {
		elf_error(ctl, path, errno, NULL);
		ctl->sum.errors++;
		rc = -1;
	}
	if (n)
		qsort(names, n, sizeof(*names), cmp_names);
	for (size_t i = 0; i < n; i++) {
		if (walk_entry(ctl, dirfd(d), path, names[i].name, names[i].type, stack, depth) < 0)
			rc = -1;
		free(names[i].name);
	}
	free(names);
	closedir(d);
	return rc;
}

static int do_arg(struct elf_ctl *ctl, const char *path)
{
	struct dir_level stack[MAX_DEPTH];
	struct stat st;
	int fd, rc;

	/* Command-line names follow symlinks (a loop fails with ELOOP). */
	if (stat(path, &st) < 0) {
		elf_error(ctl, path, errno, NULL);
		ctl->sum.errors++;
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		if (!ctl->recursive) {
			elf_error(ctl, path, EISDIR, "is a directory (use --recursive)");
			ctl->sum.errors++;
			return -1;
		}
		fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0) {
			elf_error(ctl, path, errno, NULL);
			ctl->sum.errors++;
			return -1;
		}
		return walk(ctl, fd, path, stack, 0);
	}
	if (!S_ISREG(st.st_mode)) {
		elf_error(ctl, path, 0, "not a regular file");
		ctl->sum.errors++;
		return -1;
	}
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		elf_error(ctl, path, errno, NULL);
		ctl->sum.errors++;
		return -1;
	}
	rc = do_fd(ctl, fd, path, true);
	close(fd);
	return rc;
}

/* ---- output ---------------------------------------------------------------- */

static void print_summary_text(const struct elf_ctl *ctl, bool deps)
{
	const struct elf_summary *s = &ctl->sum;

	fprintf(stderr, "cetctl: elf: %lu ELF file%s: %lu shstk, %lu ibt, %lu note%s ignored by "
		"the loader, %lu refused by the kernel policy, %lu ENOEXEC",
		s->files, s->files == 1 ? "" : "s", s->shstk, s->ibt, s->ignored,
		s->ignored == 1 ? "" : "s", s->refused, s->enoexec);
	if (deps)
		fprintf(stderr, ", %lu closure%s ok", s->deps_ok, s->deps_ok == 1 ? "" : "s");
	if (s->not_elf)
		fprintf(stderr, "; %lu non-ELF skipped", s->not_elf);
	fprintf(stderr, "; %lu error%s; kernel policy %s (%s)\n", s->errors,
		s->errors == 1 ? "" : "s", ctl->policy_name, ctl->policy_why);
}

/* The "summary" member of the JSON document, after the files and the errors. */
static void summary_json(struct jsonwrt *w, const void *arg)
{
	const struct elf_ctl *ctl = arg;
	const struct elf_summary *s = &ctl->sum;

	jsonwrt_object_open(w, "summary", JSONWRT_LINE);
	jsonwrt_ulong(w, "files", s->files);
	jsonwrt_ulong(w, "shstk", s->shstk);
	jsonwrt_ulong(w, "ibt", s->ibt);
	jsonwrt_ulong(w, "ignored", s->ignored);
	jsonwrt_ulong(w, "kernel_refuses", s->refused);
	jsonwrt_ulong(w, "enoexec", s->enoexec);
	if (ctl->deps)
		jsonwrt_ulong(w, "deps_ok", s->deps_ok);
	jsonwrt_ulong(w, "not_elf", s->not_elf);
	jsonwrt_ulong(w, "errors", s->errors);
	jsonwrt_string(w, "kernel_policy", ctl->policy_name);
	jsonwrt_object_close(w);
}

/* What the command line asks for, besides what goes into struct elf_ctl. */
struct elf_opts {
	struct cetctl_output_args oa;
	int ids[CETCTL_MAX_COLUMNS];
	size_t nids;
	bool deps;		/* --deps */
	bool compat;		/* --compat */
};

/*
 * Parse the command line into @o and @ctl (-r, --kernel-policy): returns
 * CETCTL_CONTINUE with optind at the first file, else the exit status.
 */
static int elf_parse(int argc, char **argv, struct elf_opts *o, struct elf_ctl *ctl)
{
	enum { OPT_DEPS = 0x100, OPT_KERNEL_POLICY, OPT_COMPAT };
	static const struct option longopts[] = {
		{ "recursive",    no_argument,       NULL, 'r' },
		{ "deps",         no_argument,       NULL, OPT_DEPS },
		{ "compat",       no_argument,       NULL, OPT_COMPAT },
		{ "kernel-policy", required_argument, NULL, OPT_KERNEL_POLICY },
		CETCTL_OUTPUT_LONGOPTS,
		{ "help",         no_argument,       NULL, 'h' },
		{ "version",      no_argument,       NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	static const int defaults[] = { COL_FILE, COL_ARCH, COL_TYPE, COL_IBT, COL_SHSTK,
					COL_NOTE, COL_LOADER, COL_KERNEL };
	int c;

	o->oa.topts.json_name = "files";
	o->oa.topts.json_errors = true;
	o->oa.topts.json = cetctl_globals.json;
	while ((c = getopt_long(argc, argv, "r" CETCTL_OUTPUT_SHORTOPTS "hV", longopts, NULL)) != -1) {
		if (cetctl_output_option(&o->oa, c, optarg))
			continue;
		switch (c) {
		case 'r':
			ctl->recursive = true;
			break;
		case OPT_DEPS:
			o->deps = true;
			break;
		case OPT_COMPAT:
			o->compat = true;
			break;
		case OPT_KERNEL_POLICY:
			if (parse_policy(ctl, optarg) < 0)
				return cetctl_usage_error("elf");
			break;
		default:
			return cetctl_option_other(c, usage, "elf");
		}
	}
	/* --list-columns needs no file; a bad -o without a file is reported
	 * as the missing file, as before. */
	if (optind >= argc && !o->oa.list_columns) {
		warnx("elf: no file given");
		return cetctl_usage_error("elf");
	}
	memcpy(o->ids, defaults, sizeof(defaults));
	o->nids = sizeof(defaults) / sizeof(defaults[0]);
	if (o->deps) {
		o->ids[o->nids++] = COL_DEPS;
		o->ids[o->nids++] = COL_MISSING;
	}
	if (o->compat)
		o->ids[o->nids++] = COL_COMPAT;
	return cetctl_output_columns(&o->oa, elf_columns, NCOLS, o->ids, &o->nids, "elf");
}

/*
 * Plan: the resolver for --deps, the kernel's policy (unless named) and
 * x32 support, the table. Returns CETCTL_CONTINUE or the exit status.
 */
static int elf_plan(struct elf_opts *o, struct elf_ctl *ctl)
{
	if (o->deps) {
		int r = elf_deps_ctx_new(&ctl->deps, NULL, NULL);

		if (r < 0) {
			warnx("elf: %s", strerror(-r));
			return CETCTL_EXIT_FAILURE;
		}
	}
	running_policy(ctl);
	ctl->json = o->oa.topts.json;
	ctl->raw = o->oa.topts.raw;
	o->oa.topts.stream = true;	/* add_row() completes a line before the next */
	ctl->tb = cetctl_table_new(elf_columns, o->ids, o->nids, &o->oa.topts);
	if (!ctl->tb)
		err(CETCTL_EXIT_FAILURE, "failed to allocate output table");
	if (cetctl_table_has(ctl->tb, COL_COMPAT) && compat_ctx_new(&ctl->compat, ctl->deps) < 0)
		err(CETCTL_EXIT_FAILURE, "out of memory");
	return CETCTL_CONTINUE;
}

/* The table or the JSON document, and the summary. */
static void elf_report(struct elf_ctl *ctl)
{
	if (ctl->json) {
		cetctl_table_print_members(ctl->tb, summary_json, ctl);
		return;
	}
	if (ctl->sum.files)
		cetctl_table_print(ctl->tb);
	fflush(stdout);		/* the summary comes after the table */
	print_summary_text(ctl, ctl->deps != NULL);
	cetctl_proc_root_note("elf");
}

int cmd_elf(int argc, char **argv)
{
	struct elf_opts o = { 0 };
	struct elf_ctl ctl = { 0 };
	int rc = elf_parse(argc, argv, &o, &ctl);

	if (rc == CETCTL_CONTINUE)
		rc = elf_plan(&o, &ctl);
	if (rc != CETCTL_CONTINUE)
		return rc;
	rc = CETCTL_EXIT_OK;
	for (int i = optind; i < argc; i++)
		if (do_arg(&ctl, argv[i]) < 0)
			rc = CETCTL_EXIT_FAILURE;
	if (ctl.sum.errors)
		rc = CETCTL_EXIT_FAILURE;
	elf_report(&ctl);
	cetctl_table_free(ctl.tb);
	compat_ctx_free(ctl.compat);
	elf_deps_ctx_free(ctl.deps);
	return rc;
}
