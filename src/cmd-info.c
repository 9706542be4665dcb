// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cetctl info - can this system run user shadow stacks, and if not, which
 * link of the chain (CPU, kernel build, boot command line, C library) is
 * missing. Exit 2 when it cannot.
 */
#include <err.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cetctl.h"
#include "table.h"
#include "sysinfo-cet.h"

enum { COL_NAME, COL_VALUE, COL_DETAIL };

static const struct cetctl_column info_columns[] = {
	[COL_NAME]   = { "NAME", 16, 0, SCOLS_JSON_STRING, "what was checked" },
	[COL_VALUE]  = { "VALUE", 8, 0, SCOLS_JSON_STRING, "the answer (yes, no, unknown, a version...)" },
	[COL_DETAIL] = { "DETAIL", 40, CETCTL_FL_SENTENCE, SCOLS_JSON_STRING, "where it comes from and what it means" },
};
#define NCOLS (sizeof(info_columns) / sizeof(info_columns[0]))

static void usage(void)
{
	printf("Usage: cetctl info [options]\n\n");
	printf("Show whether this CPU, kernel and C library can run user shadow stacks:\n"
	       "CPU flags, kernel configuration and status lines, boot parameters, the\n"
	       "legacy-ELF policy and the glibc version. With the global --proc-root the\n"
	       "files are read from a recorded tree (cpuinfo, cmdline, config.gz or\n"
	       "config, self/status); the glibc shown is always the one cetctl runs with.\n\n");
	printf("Options:\n");
	cetctl_output_options_help(stdout);
	cetctl_columns_help(stdout, info_columns, NCOLS);
	printf("\nExit status: 0 when the system can run user shadow stacks, 2 when it\n"
	       "cannot, 1 on a usage error or when nothing could be read.\n");
}

static const char *yes_no(bool v)
{
	return v ? "yes" : "no";
}

static const char *tri(enum cet_tri v)
{
	return v == CET_YES ? "yes" : v == CET_NO ? "no" : "unknown";
}

static void row(struct cetctl_table *t, const char *name, const char *value, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void row(struct cetctl_table *t, const char *name, const char *value, const char *fmt, ...)
{
	struct cetctl_line *ln = cetctl_table_new_line(t, NULL);
	va_list ap;
	char *detail = NULL;

	if (!ln)
		err(CETCTL_EXIT_FAILURE, "failed to allocate output line");
	va_start(ap, fmt);
	if (vasprintf(&detail, fmt, ap) < 0)
		detail = NULL;
	va_end(ap);
	cetctl_table_set(t, ln, COL_NAME, name);
	cetctl_table_set(t, ln, COL_VALUE, value);
	cetctl_table_set(t, ln, COL_DETAIL, detail);
	free(detail);
}

/*
 * Every missing link, "; " separated, most fundamental first; NULL when the
 * system can run user shadow stacks. Mainline's cpuinfo shows user_shstk
 * but hides the hardware flag shstk, so either one means the CPU has it.
 */
static char *missing_links(const struct cet_sysinfo *si)
{
	const char *why[8];
	size_t n = 0, len = 1;
	char *out;

	if (si->cpuinfo_errno == 0 && !si->cpu_x86) {
		why[n++] = "not an x86 CPU";
	} else {
		if (si->status_lines == CET_NO)
			why[n++] = "kernel has no shadow-stack support (no x86_Thread_features line)";
		if (si->kconfig_shstk == CET_NO)
			why[n++] = "kernel built without CONFIG_X86_USER_SHADOW_STACK";
		if (si->clearcpuid_shstk)
			why[n++] = "shadow stacks turned off on the kernel command line (clearcpuid=)";
		if (si->cpuinfo_errno == 0 && !si->cpu_shstk && !si->cpu_user_shstk)
			why[n++] = "CPU has no shadow-stack feature (cpuinfo lacks shstk and user_shstk)";
		else if (si->cpuinfo_errno == 0 && !si->cpu_user_shstk)
			why[n++] = "kernel does not run user shadow stacks on this CPU (cpuinfo lacks user_shstk)";
		if (!n && !cet_sysinfo_supported(si))
			why[n++] = "cannot tell: cpuinfo or the status lines could not be read";
	}
	if (!n)
		return NULL;
	for (size_t i = 0; i < n; i++)
		len += strlen(why[i]) + 2;
	out = malloc(len);
	if (!out)
		err(CETCTL_EXIT_FAILURE, "out of memory");
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (i)
			strcat(out, "; ");
		strcat(out, why[i]);
	}
	return out;
}

/* The CPU's rows: cpu-shstk, cpu-ibt, cpu-user-shstk. */
static void cpu_rows(struct cetctl_table *t, const struct cet_sysinfo *si)
{
	if (si->cpuinfo_errno) {
		row(t, "cpu-shstk", "unknown", "cpuinfo: %s", strerror(si->cpuinfo_errno));
		return;
	}
	/* each DETAIL says what its VALUE says, "no" rows too */
	if (si->cpu_shstk || si->cpu_user_shstk)
		row(t, "cpu-shstk", "yes", "the CPU has shadow stacks: cpuinfo flag %s",
		    si->cpu_shstk ? "shstk" :
		    "user_shstk (the kernel hides shstk, as mainline does)");
	else
		row(t, "cpu-shstk", "no", "the CPU has no shadow stacks: cpuinfo lacks "
		    "shstk and user_shstk");
	row(t, "cpu-ibt", yes_no(si->cpu_ibt), "%s", si->cpu_ibt ?
	    "cpuinfo flag ibt: indirect branch tracking" :
	    "cpuinfo lacks ibt: no indirect branch tracking");
	row(t, "cpu-user-shstk", yes_no(si->cpu_user_shstk), "%s", si->cpu_user_shstk ?
	    "cpuinfo flag user_shstk: the kernel runs user shadow stacks on this CPU" :
	    "cpuinfo lacks user_shstk: the kernel does not run user shadow stacks on this CPU");
}

/* The kernel's rows: kernel-config, status-lines, clearcpuid, legacy-elf. */
static void kernel_rows(struct cetctl_table *t, const struct cet_sysinfo *si, const char *root)
{
	const char *policy, *why;

	row(t, "kernel-config", tri(si->kconfig_shstk), "CONFIG_X86_USER_SHADOW_STACK%s (%s)",
	    si->kconfig_shstk == CET_YES ? "=y" : si->kconfig_shstk == CET_NO ? " is not set" : "",
	    si->kconfig_source[0] ? si->kconfig_source : "no config.gz or /boot/config found");
	row(t, "status-lines", tri(si->status_lines), "%sx86_Thread_features %s in %s/self/status",
	    si->status_lines == CET_YES ? "" : si->status_lines == CET_NO ? "no " : "unknown: ",
	    si->status_lines == CET_NO ? "line" : "lines", root ? root : "/proc");
	row(t, "clearcpuid", si->clearcpuid[0] ? si->clearcpuid : "none", "%s",
	    si->clearcpuid_shstk ? "kernel command line turns shadow stacks off"
				 : "kernel command line leaves shadow stacks alone");
	policy = cet_sysinfo_legacy_policy(si, &why);
	row(t, "legacy-elf", policy,
	    "binaries with the old SHSTK/IBT ELF bits: %s (%s)",
	    strcmp(policy, "block") == 0 ? "shadow-stack API refused" :
	    strcmp(policy, "allow") == 0 ? "allowed" :
	    strcmp(policy, "none") == 0 ? "no such policy" : "unknown", why);
}

/* Why the C library does or does not enable shadow stacks itself. */
static const char *glibc_detail(const struct cet_sysinfo *si)
{
	if (si->glibc_can_enable)
		return "glibc >= 2.39 built with CET enables shadow stacks itself "
		       "(GLIBC_TUNABLES=glibc.cpu.hwcaps=SHSTK)";
	if (!cet_glibc_manages_shstk(si->glibc_version))
		return "glibc < 2.39 does not know the shadow-stack ABI: use 'cetctl run --shstk'";
	if (si->glibc_cet == CET_NO)
		return "this glibc was built without CET (its libc.so.6 is not marked SHSTK) "
		       "and never enables shadow stacks: use 'cetctl run --shstk'";
	return "cannot tell whether this glibc was built with CET (its libc.so.6 could not "
	       "be read): use 'cetctl run --shstk'";
}

/* Every row, the verdict last; returns the exit status. */
static int info_report(struct cetctl_table *t, const struct cet_sysinfo *si, const char *root)
{
	char *missing;
	int rc;

	if (cetctl_proc_root_is_recorded())
		row(t, "proc-root", root, "read from this tree, not the running system's /proc "
		    "(%s)", cetctl_proc_root_origin());
	row(t, "arch", si->machine, "smaps \"ss\" %s an x86 shadow stack here",
	    si->ss_is_x86_shstk ? "is" : "is not");
	cpu_rows(t, si);
	kernel_rows(t, si, root);
	row(t, "glibc", si->glibc_version, "the C library cetctl runs with");
	row(t, "glibc-can-enable", yes_no(si->glibc_can_enable), "%s", glibc_detail(si));
	missing = missing_links(si);
	row(t, "supported", missing ? "no" : "yes", "%s",
	    missing ? missing : "this CPU and kernel can run user shadow stacks");
	cetctl_table_print(t);
	rc = missing ? CETCTL_EXIT_UNSUPPORTED : CETCTL_EXIT_OK;
	free(missing);
	return rc;
}

int cmd_info(int argc, char **argv)
{
	int ids[CETCTL_MAX_COLUMNS] = { COL_NAME, COL_VALUE, COL_DETAIL };
	size_t nids = 3;
	struct cetctl_output_args oa = { .topts.json_name = "info" };
	const char *root = cetctl_globals.proc_root;
	struct cetctl_table *t;
	struct cet_sysinfo si;
	int rc;

	rc = cetctl_output_parse(argc, argv, &oa, usage, info_columns, NCOLS, ids, &nids, "info");
	if (rc != CETCTL_OUTPUT_CONTINUE)
		return rc;
	if (optind < argc) {
		warnx("info: unexpected argument '%s'", argv[optind]);
		return cetctl_usage_error("info");
	}
	rc = cet_sysinfo_read(root, &si);
	if (rc) {
		warnx("info: %s: %s", root ? root : "/proc", strerror(-rc));
		return CETCTL_EXIT_FAILURE;
	}
	if (si.cpuinfo_errno && si.status_lines == CET_UNKNOWN) {
		warnx("info: cannot read %s/cpuinfo: %s", root ? root : "/proc",
		      strerror(si.cpuinfo_errno));
		return CETCTL_EXIT_FAILURE;
	}
	t = cetctl_table_new(info_columns, ids, nids, &oa.topts);
	if (!t)
		err(CETCTL_EXIT_FAILURE, "failed to allocate output table");
	rc = info_report(t, &si, root);
	cetctl_table_free(t);
	return rc;
}
