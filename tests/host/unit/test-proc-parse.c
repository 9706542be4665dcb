// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the /proc and system parsers behind cetctl status, audit and
 * info: status feature lines, smaps "ss" VMAs, maps objects, cpuinfo flags,
 * kernel config, the command line, glibc versions and the verdicts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cet-abi.h"
#include "proc-cet.h"
#include "proc-maps.h"
#include "proc-status.h"
#include "sysinfo-cet.h"
#include "util.h"

static int failures, checks;

#define CHECK(cond) do {						\
	checks++;							\
	if (!(cond)) {							\
		failures++;						\
		fprintf(stderr, "%s:%d: %s: check failed: %s\n",	\
			__FILE__, __LINE__, __func__, #cond);		\
	}								\
} while (0)

#define CHECK_STR(a, b) do {						\
	checks++;							\
	if (strcmp((a), (b)) != 0) {					\
		failures++;						\
		fprintf(stderr, "%s:%d: %s: \"%s\" != \"%s\"\n",	\
			__FILE__, __LINE__, __func__, (a), (b));	\
	}								\
} while (0)

/* As the kernel series prints it ("x86: Expose thread features in
 * /proc/$PID/status"): each word followed by a space. */
static const char status_cet[] =
	"Name:\tsleep\n"
	"Umask:\t0022\n"
	"State:\tS (sleeping)\n"
	"Tgid:\t4242\n"
	"Ngid:\t0\n"
	"Pid:\t4242\n"
	"PPid:\t1\n"
	"Uid:\t1000\t1001\t1000\t1000\n"
	"Kthread:\t0\n"
	"VmSize:\t    5480 kB\n"
	"Threads:\t3\n"
	"voluntary_ctxt_switches:\t1\n"
	"x86_Thread_features:\tshstk wrss \n"
	"x86_Thread_features_locked:\tshstk \n";

static void test_status(void)
{
	struct proc_status st;
	char buf[128];

	CHECK(proc_status_parse(status_cet, &st) == 0);
	CHECK_STR(st.name, "sleep");
	CHECK(st.state == 'S');
	CHECK(st.tgid == 4242 && st.pid == 4242 && st.ppid == 1);
	CHECK(st.euid == 1001);
	CHECK(st.threads == 3);
	CHECK(st.kthread == 0);
	CHECK(st.has_vm);
	CHECK(st.features.present && st.features.bits == (CET_FEAT_SHSTK | CET_FEAT_WRSS));
	CHECK(st.features.unknown[0] == '\0');
	CHECK(st.locked.present && st.locked.bits == CET_FEAT_SHSTK);
	CHECK_STR(cet_feature_line_str(&st.features, buf, sizeof(buf)), "shstk wrss");
	CHECK_STR(cet_feature_line_str(&st.locked, buf, sizeof(buf)), "shstk");

	/* No lines: the kernel lacks the support. */
	CHECK(proc_status_parse("Name:\tbash\nState:\tR (running)\n", &st) == 0);
	CHECK(!st.features.present && !st.locked.present);
	CHECK(st.kthread == -1);
	CHECK_STR(cet_feature_line_str(&st.features, buf, sizeof(buf)), "-");

	/* Present but empty: supported, nothing enabled. */
	CHECK(proc_status_parse("Name:\tx\nx86_Thread_features:\t\nx86_Thread_features_locked:\t\n", &st) == 0);
	CHECK(st.features.present && st.features.bits == 0);
	CHECK(st.locked.present && st.locked.bits == 0);
	CHECK_STR(cet_feature_line_str(&st.features, buf, sizeof(buf)), "");

	/* Not a status file at all. */
	CHECK(proc_status_parse("garbage\n", &st) == -EINVAL);
	CHECK(proc_status_parse("", &st) == -EINVAL);
	/* The locked line must not be taken for the features line. */
	CHECK(proc_status_parse("Name:\tx\nx86_Thread_features_locked:\twrss \n", &st) == 0);
	CHECK(!st.features.present && st.locked.bits == CET_FEAT_WRSS);
}

static void test_feature_words(void)
{
	struct cet_feature_line fl;
	char buf[128];

	cet_feature_words_parse("shstk ibt future_x \n", &fl);
	CHECK(fl.bits == CET_FEAT_SHSTK);
	CHECK_STR(fl.unknown, "ibt future_x");
	CHECK_STR(cet_feature_line_str(&fl, buf, sizeof(buf)), "shstk ibt future_x");

	/* Prefixes and suffixes of known words are unknown words. */
	cet_feature_words_parse("shstk2 wrs wrssx", &fl);
	CHECK(fl.bits == 0);
	CHECK_STR(fl.unknown, "shstk2 wrs wrssx");

	/* Tabs and repeated spaces. */
	cet_feature_words_parse("\t wrss\t\tshstk  ", &fl);
	CHECK(fl.bits == (CET_FEAT_SHSTK | CET_FEAT_WRSS));
	CHECK(fl.unknown[0] == '\0');

	/* Overlong unknown words are cut, never overflow. */
	{
		char longw[400];

		memset(longw, 'a', sizeof(longw) - 1);
		longw[sizeof(longw) - 1] = '\0';
		cet_feature_words_parse(longw, &fl);
		CHECK(strlen(fl.unknown) == sizeof(fl.unknown) - 1);
	}
	/* A tiny output buffer is respected. */
	cet_feature_words_parse("shstk wrss", &fl);
	CHECK_STR(cet_feature_line_str(&fl, buf, 6), "shstk");
}

static const char smaps_text[] =
	"55d0c0a00000-55d0c0a02000 r--p 00000000 fe:01 1234   /usr/bin/sleep\n"
	"Size:                  8 kB\n"
	"Rss:                   8 kB\n"
	"VmFlags: rd mr mw me sd \n"
	"7f0000000000-7f0000800000 rw-p 00000000 00:00 0 \n"
	"Size:               8192 kB\n"
	"KernelPageSize:        4 kB\n"
	"Rss:                  12 kB\n"
	"VmFlags: rd wr mr mw me ac ss \n"
	"7f0000900000-7f0000901000 rw-p 00000000 00:00 0 \n"
	"Size:                  4 kB\n"
	"Rss:                   0 kB\n"
	"VmFlags: rd wr mr mw me ac sss \n"		/* not "ss" */
	"7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0                  [stack]\n"
	"Size:                132 kB\n"
	"Rss:                  16 kB\n"
	"VmFlags: rd wr mr mw me gd ac \n"
	"7f1000000000-7f1000001000 rw-p 00000000 00:00 0 \n"
	"Size:                  4 kB\n"
	"Rss:                   4 kB\n"
	"VmFlags: ss rd wr\n";			/* ss first, no trailing space */

static void test_smaps(void)
{
	struct shstk_vmas v;

	CHECK(proc_smaps_parse_ss(smaps_text, &v) == 0);
	CHECK(v.n == 2);
	if (v.n == 2) {
		CHECK(v.v[0].start == 0x7f0000000000UL && v.v[0].end == 0x7f0000800000UL);
		CHECK(v.v[0].size_kb == 8192 && v.v[0].rss_kb == 12);
		CHECK(v.v[1].start == 0x7f1000000000UL && v.v[1].size_kb == 4 && v.v[1].rss_kb == 4);
	}
	/* the JSON of the mappings is the command's (src/proc-cells.c), not the library's */
	shstk_vmas_free(&v);
	CHECK(v.n == 0 && v.v == NULL);

	CHECK(proc_smaps_parse_ss("", &v) == 0 && v.n == 0);
	/* Fields outside a VMA block are ignored. */
	CHECK(proc_smaps_parse_ss("VmFlags: ss\nSize: 4 kB\n", &v) == 0 && v.n == 0);
	shstk_vmas_free(&v);
}

static const char maps_text[] =
	"55d0c0a00000-55d0c0a02000 r--p 00000000 fe:01 1234   /usr/bin/sleep\n"
	"55d0c0a02000-55d0c0a06000 r-xp 00002000 fe:01 1234   /usr/bin/sleep\n"
	"7f0000000000-7f0000800000 rw-p 00000000 00:00 0 \n"
	"7f2000000000-7f2000020000 r-xp 00020000 fe:01 99     /usr/lib/x86_64-linux-gnu/libc.so.6\n"
	"7f2000100000-7f2000120000 r-xp 00000000 fe:01 100    /tmp/my lib (deleted)\n"
	"7f2000200000-7f2000220000 r-xp 00001000 fe:01 101    /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2\n"
	"7f2000300000-7f2000320000 r-xp 00001000 fe:01 101    /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2\n"
	"7ffc00100000-7ffc00102000 r-xp 00000000 00:00 0                  [vdso]\n";

static void test_maps(void)
{
	struct proc_objects o;

	CHECK(proc_maps_parse_objects(maps_text, &o) == 0);
	CHECK(o.n == 4);
	if (o.n == 4) {
		CHECK_STR(o.path[0], "/usr/bin/sleep");
		CHECK_STR(o.path[1], "/usr/lib/x86_64-linux-gnu/libc.so.6");
		CHECK_STR(o.path[2], "/tmp/my lib (deleted)");
		CHECK_STR(o.path[3], "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2");
		/* each at its first executable mapping (why-off orders dlopen'ed ones by it) */
		CHECK(o.addr[3] == 0x7f2000200000UL);
	}
	proc_objects_free(&o);
	CHECK(proc_maps_parse_objects("not a map\n", &o) == 0 && o.n == 0);
	proc_objects_free(&o);
}

static void test_cpuinfo(void)
{
	struct cet_sysinfo si;

	memset(&si, 0, sizeof(si));
	cet_cpuinfo_parse("processor\t: 0\nvendor_id\t: GenuineIntel\n"
			  "flags\t\t: fpu vme ibt shstk user_shstk avx\n"
			  "processor\t: 1\nflags\t\t: fpu\n", &si);
	CHECK(si.cpu_x86 && si.cpu_shstk && si.cpu_ibt && si.cpu_user_shstk);

	memset(&si, 0, sizeof(si));
	/* ibt_x and user_shstk2 are not the flags; shstk alone is. */
	cet_cpuinfo_parse("flags\t\t: fpu ibt_x shstk user_shstk2\n", &si);
	CHECK(si.cpu_x86 && si.cpu_shstk && !si.cpu_ibt && !si.cpu_user_shstk);

	memset(&si, 0, sizeof(si));
	cet_cpuinfo_parse("processor\t: 0\nFeatures\t: fp asimd gcs\nCPU implementer\t: 0x41\n", &si);
	CHECK(!si.cpu_x86 && !si.cpu_shstk);
}

static void test_kconfig(void)
{
	struct cet_sysinfo si;

	memset(&si, 0, sizeof(si));
	cet_kconfig_parse("CONFIG_X86=y\nCONFIG_X86_USER_SHADOW_STACK=y\n"
			  "# CONFIG_X86_USER_SHADOW_STACK_ALLOW_BROKEN is not set\n", &si);
	CHECK(si.kconfig_shstk == CET_YES);
	CHECK(si.kconfig_allow_broken == CET_NO);

	memset(&si, 0, sizeof(si));
	/* The longer symbol must not answer for the shorter one. */
	cet_kconfig_parse("CONFIG_X86_USER_SHADOW_STACK_ALLOW_BROKEN=y\n", &si);
	CHECK(si.kconfig_shstk == CET_NO);
	CHECK(si.kconfig_allow_broken == CET_YES);

	memset(&si, 0, sizeof(si));
	cet_kconfig_parse("# CONFIG_X86_USER_SHADOW_STACK is not set\n", &si);
	CHECK(si.kconfig_shstk == CET_NO);
}

static void test_cmdline(void)
{
	struct cet_sysinfo si;
	const char *why, *pol;

	memset(&si, 0, sizeof(si));
	cet_cmdline_parse("BOOT_IMAGE=/vmlinuz clearcpuid=avx,fsrm quiet\n", &si);
	CHECK_STR(si.clearcpuid, "avx,fsrm");
	CHECK(!si.clearcpuid_shstk);

	cet_cmdline_parse("clearcpuid=user_shstk shstk_legacy_elf=allow\n", &si);
	CHECK(si.clearcpuid_shstk);
	CHECK_STR(si.shstk_legacy_elf, "allow");

	cet_cmdline_parse("clearcpuid=shstk,avx", &si);
	CHECK(si.clearcpuid_shstk);
	CHECK(si.shstk_legacy_elf[0] == '\0');

	cet_cmdline_parse("quiet -- clearcpuid=shstk shstk_legacy_elf=block", &si);
	CHECK(si.clearcpuid[0] == '\0' && !si.clearcpuid_shstk);
	CHECK(si.shstk_legacy_elf[0] == '\0');

	/* Policy: boot parameter over Kconfig; none without kernel support
	 * or on a kernel whose config does not know the policy (mainline). */
	memset(&si, 0, sizeof(si));
	si.kconfig_shstk = CET_YES;
	si.status_lines = CET_YES;
	si.kconfig_allow_broken = CET_YES;
	si.kconfig_legacy_policy = CET_YES;
	pol = cet_sysinfo_legacy_policy(&si, &why);
	CHECK_STR(pol, "allow");
	snprintf(si.shstk_legacy_elf, sizeof(si.shstk_legacy_elf), "block");
	pol = cet_sysinfo_legacy_policy(&si, &why);
	CHECK_STR(pol, "block");
	CHECK(strstr(why, "shstk_legacy_elf=block") != NULL);
	si.shstk_legacy_elf[0] = '\0';
	si.kconfig_allow_broken = CET_UNKNOWN;
	si.kconfig_legacy_policy = CET_UNKNOWN;
	CHECK_STR(cet_sysinfo_legacy_policy(&si, &why), "unknown");
	/* mainline: shadow stacks, no ALLOW_BROKEN symbol; the parameter means nothing */
	si.kconfig_allow_broken = CET_NO;
	si.kconfig_legacy_policy = CET_NO;
	snprintf(si.shstk_legacy_elf, sizeof(si.shstk_legacy_elf), "block");
	CHECK_STR(cet_sysinfo_legacy_policy(&si, &why), "none");
	si.kconfig_shstk = CET_NO;
	CHECK_STR(cet_sysinfo_legacy_policy(&si, &why), "none");
}

static void test_glibc_version(void)
{
	CHECK(cet_glibc_version_cmp("2.36", "2.39") < 0);
	CHECK(cet_glibc_version_cmp("2.39", "2.39") == 0);
	CHECK(cet_glibc_version_cmp("2.40", "2.39") > 0);
	CHECK(cet_glibc_version_cmp("2.100", "2.39") > 0);	/* not a string compare */
	CHECK(cet_glibc_version_cmp("3.0", "2.39") > 0);
	CHECK(cet_glibc_version_cmp("2.39.9000", "2.39") > 0);
}

static void test_verdicts(void)
{
	struct proc_cet pc;
	char buf[256];

	memset(&pc, 0, sizeof(pc));
	pc.exe_marking = -ENOTSUP;
	CHECK(strstr(proc_cet_verdict(&pc, buf, sizeof(buf)), "no x86_Thread_features line"));

	pc.st.features.present = pc.st.locked.present = true;
	pc.st.features.bits = CET_FEAT_SHSTK;
	pc.st.locked.bits = CET_FEAT_SHSTK;
	CHECK_STR(proc_cet_verdict(&pc, buf, sizeof(buf)), "enabled and locked");

	pc.st.locked.bits = 0;
	CHECK_STR(proc_cet_verdict(&pc, buf, sizeof(buf)),
		  "enabled, not locked: the process can turn it off");

	pc.st.features.bits = CET_FEAT_SHSTK | CET_FEAT_WRSS;
	CHECK(strstr(proc_cet_verdict(&pc, buf, sizeof(buf)), "WRSS on"));

	/* smaps read, on x86, with no ss VMA: suspicious, say so. */
	pc.vmas_read = pc.ss_is_x86_shstk = true;
	CHECK(strstr(proc_cet_verdict(&pc, buf, sizeof(buf)), "no shadow-stack VMA"));
	pc.vmas_read = false;

	pc.st.features.bits = 0;
	pc.exe_marking = CET_X86_FEATURE_1_SHSTK | CET_X86_FEATURE_1_IBT;
	CHECK_STR(proc_cet_verdict(&pc, buf, sizeof(buf)),
		  "marked but not enabled: the loader did not enable it");
	pc.objs_unmarked = 1;
	pc.first_unmarked = "/lib/libweak.so";
	CHECK(strstr(proc_cet_verdict(&pc, buf, sizeof(buf)), "/lib/libweak.so is not marked"));
	pc.objs_unmarked = 0;

	pc.exe_marking = 0;
	CHECK_STR(proc_cet_verdict(&pc, buf, sizeof(buf)), "not enabled: the executable is not marked");
	pc.st.locked.bits = CET_FEAT_SHSTK;
	CHECK(strstr(proc_cet_verdict(&pc, buf, sizeof(buf)), "locked off"));
	pc.st.locked.bits = 0;

	pc.nthreads = 4;
	pc.threads_shstk = 1;
	CHECK_STR(proc_cet_verdict(&pc, buf, sizeof(buf)), "mixed: 1 of 4 threads run with a shadow stack");

	pc.vanished = true;
	CHECK_STR(proc_cet_verdict(&pc, buf, sizeof(buf)), "exited while being read");
	pc.kthread = true;
	CHECK(strstr(proc_cet_verdict(&pc, buf, sizeof(buf)), "kernel thread"));
	pc.zombie = true;
	CHECK(strstr(proc_cet_verdict(&pc, buf, sizeof(buf)), "zombie"));

	CHECK_STR(cet_marking_str(3, buf, sizeof(buf)), "shstk,ibt");
	CHECK_STR(cet_marking_str(0, buf, sizeof(buf)), "none");
	CHECK_STR(cet_marking_str(-ENOENT, buf, sizeof(buf)), "?");
}

/* U+FFFD per byte that is not part of a valid sequence, the rest kept. */
static void test_utf8(void)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "plain", NULL },
		{ "h\xc3\xa9llo-\xe5\x90\x8d\xf0\x9f\x98\x80", NULL },	/* valid */
		{ "\xff", "\xef\xbf\xbd" },
		{ "a\xc3", "a\xef\xbf\xbd" },				/* truncated */
		{ "\xc3(", "\xef\xbf\xbd(" },
		{ "\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd" },		/* overlong '/' */
		{ "\xe0\x80\xaf", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" },
		{ "\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" },	/* surrogate */
		{ "\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" },
		{ "\xf4\x8f\xbf\xbf", NULL },				/* U+10FFFF */
		{ "\x80x", "\xef\xbf\xbdx" },				/* stray continuation */
		{ "\xef\xbf\xbd", NULL },					/* U+FFFD itself */
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *out = (char *)"unset";
		int rc = cet_utf8_sanitize(cases[i].in, &out);

		if (!cases[i].out) {
			CHECK(rc == 0);
			CHECK(out == NULL);
		} else {
			CHECK(rc == 1);
			CHECK(out != NULL);
			if (out)
				CHECK_STR(out, cases[i].out);
		}
		if (rc == 1)
			free(out);
	}
}

int main(void)
{
	test_status();
	test_feature_words();
	test_smaps();
	test_maps();
	test_cpuinfo();
	test_kconfig();
	test_cmdline();
	test_glibc_version();
	test_verdicts();
	test_utf8();
	printf("test-proc-parse: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
