// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cetctl elf - the x86 CET marking of ELF files, and what glibc's loader
 * and the kernel series' legacy-ELF policy (see kernel-series/) make of it.
 *
 * Files are opened without following a final symlink during -r, with
 * O_NONBLOCK, and only after lstat/fstat said "regular file": a FIFO or a
 * device in a tree is never opened, so a scan cannot hang.
 *
 * This file: the columns, the options, the kernel's policy, the errors and
 * the report; the walk, one file's row and --deps are parts of their own
 * (cmd-elf-internal.h).
 */
#include <err.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cetctl.h"
#include "compat-cell.h"
#include "compat-scan.h"
#include "jsonwrt.h"
#include "table.h"
#include "elf-deps.h"
#include "elf-notes.h"
#include "sysinfo-cet.h"
#include "cmd-elf-internal.h"

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
			    0, &elf_loader_type },
	[COL_KERNEL]	= { "KERNEL", 6, CETCTL_FL_SENTENCE, CETCTL_JSON_VALUE,
			    "execve and the shadow-stack interface on the kernel (--kernel-policy): allows, refuses, E* errors, n/a; JSON: {verdict,errno,reason}",
			    0, &elf_kernel_type },
	[COL_DEPS]	= { "DEPS", 0.2, CETCTL_FL_SENTENCE, CETCTL_JSON_VALUE,
			    "--deps: shadow stacks for the whole closure: ok, or the objects that break it",
			    0, &elf_closure_type },
	[COL_DEPS_IBT]	= { "DEPS_IBT", 0.2, CETCTL_FL_SENTENCE, CETCTL_JSON_VALUE,
			    "--deps: IBT for the whole closure: ok, or the objects that break it",
			    0, &elf_closure_type },
	[COL_DEPS_COUNT] = { "NDEPS", 3, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			    "--deps: objects in the closure, the file included" },
	[COL_MISSING]	= { "MISSING", 0.1, SCOLS_FL_TRUNC, SCOLS_JSON_ARRAY_STRING,
			    "--deps: DT_NEEDED names that did not resolve" },
	[COL_COMPAT]	= { "COMPAT", 0.2, CETCTL_FL_SENTENCE, CETCTL_JSON_VALUE,
			    "--compat: can run --shstk run it (with its closure): marked, forced-safe, switches stacks (covered or not), unknown, incompatible; JSON: {verdict,object,match,errno,reason,cover,findings,more}",
			    0, &compat_value_type },
};
#define NCOLS (sizeof(elf_columns) / sizeof(elf_columns[0]))

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
void elf_error(struct elf_ctl *ctl, const char *path, int errnum, const char *fmt, ...)
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
		if (elf_do_arg(&ctl, argv[i]) < 0)
			rc = CETCTL_EXIT_FAILURE;
	if (ctl.sum.errors)
		rc = CETCTL_EXIT_FAILURE;
	elf_report(&ctl);
	cetctl_table_free(ctl.tb);
	compat_ctx_free(ctl.compat);
	elf_deps_ctx_free(ctl.deps);
	return rc;
}
