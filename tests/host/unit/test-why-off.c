// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * why-off: GLIBC_TUNABLES as glibc 2.41 reads it, the loader's order of a
 * process's objects, and the reason a process runs without a shadow stack.
 */
#include <stdio.h>
#include <string.h>

#include "cet-abi.h"
#include "check.h"
#include "sysinfo-cet.h"
#include "why-off.h"

#define M_SHSTK	((int)(CET_X86_FEATURE_1_SHSTK | CET_X86_FEATURE_1_IBT))
#define M_NONE	0

static struct glibc_tunables tun(const char *s)
{
	struct glibc_tunables t;

	memset(&t, 0, sizeof(t));
	glibc_tunables_add(&t, s, strlen(s));
	return t;
}

static void test_tunables(void)
{
	struct glibc_tunables t;
	static const char env[] = "PATH=/bin\0XGLIBC_TUNABLES=glibc.cpu.hwcaps=-SHSTK\0"
				  "GLIBC_TUNABLES=glibc.cpu.x86_shstk=off\0"
				  "GLIBC_TUNABLES=glibc.cpu.hwcaps=SHSTK\0HOME=/";

	CHECK(tun("glibc.cpu.hwcaps=SHSTK").hwcaps_shstk == 1);
	CHECK(tun("glibc.cpu.hwcaps=-SHSTK").hwcaps_shstk == -1);
	CHECK(tun("glibc.cpu.hwcaps=-AVX2,SHSTK").hwcaps_shstk == 1);
	/* the last mention in the list wins */
	CHECK(tun("glibc.cpu.hwcaps=SHSTK,-SHSTK").hwcaps_shstk == -1);
	CHECK(tun("glibc.cpu.hwcaps=-SHSTK,SHSTK").hwcaps_shstk == 1);
	/* case matters, and only the whole word */
	CHECK(tun("glibc.cpu.hwcaps=shstk").hwcaps_shstk == 0);
	CHECK(tun("glibc.cpu.hwcaps=SHSTKX,IBT").hwcaps_shstk == 0);
	/* a later pair of the same name replaces the earlier string whole */
	CHECK(tun("glibc.cpu.hwcaps=SHSTK:glibc.cpu.hwcaps=-AVX2").hwcaps_shstk == 0);
	CHECK(tun("glibc.cpu.x86_shstk=off").x86_shstk == GLIBC_SHSTK_OFF);
	CHECK(tun("glibc.cpu.x86_shstk=on").x86_shstk == GLIBC_SHSTK_ON);
	CHECK(tun("glibc.cpu.x86_shstk=permissive").x86_shstk == GLIBC_SHSTK_PERMISSIVE);
	CHECK(tun("glibc.cpu.x86_shstk=Off").x86_shstk == GLIBC_SHSTK_DEFAULT);
	CHECK(tun("glibc.cpu.x86_shstk=off:glibc.cpu.x86_shstk=on").x86_shstk == GLIBC_SHSTK_ON);
	/* a name without '=' before ':' is skipped, the rest applies */
	t = tun("junk:glibc.cpu.hwcaps=SHSTK");
	CHECK(!t.ignored && t.hwcaps_shstk == 1);
	/* glibc drops the whole string: ends inside a name, or a second '=' */
	t = tun("glibc.cpu.hwcaps=SHSTK:glibc.cpu.x86_shstk");
	CHECK(t.ignored);
	t = tun("glibc.cpu.x86_shstk=off=1:glibc.cpu.hwcaps=SHSTK");
	CHECK(t.ignored);
	t = tun("glibc.rtld.enable_secure=1:glibc.cpu.x86_shstk=off");
	CHECK(t.ignored);
	t = tun("glibc.rtld.enable_secure=0:glibc.cpu.x86_shstk=off");
	CHECK(!t.ignored && t.x86_shstk == GLIBC_SHSTK_OFF);
	CHECK(tun("").present && !tun("").ignored && tun("").hwcaps_shstk == 0);

	/* environ: every GLIBC_TUNABLES in order; XGLIBC_TUNABLES is another variable */
	memset(&t, 0, sizeof(t));
	glibc_tunables_from_environ(env, sizeof(env) - 1, &t);
	CHECK(t.present && t.hwcaps_shstk == 1 && t.x86_shstk == GLIBC_SHSTK_OFF);
	memset(&t, 0, sizeof(t));
	glibc_tunables_from_environ("A=1\0B=2", 7, &t);
	CHECK(!t.present && t.hwcaps_shstk == 0);
	/* not NUL-terminated at the end of the buffer */
	memset(&t, 0, sizeof(t));
	glibc_tunables_from_environ("GLIBC_TUNABLES=glibc.cpu.hwcaps=SHSTKXXX", 37, &t);
	CHECK(t.hwcaps_shstk == 1);
}

/*
 * The program needs liba, libb; liba needs libz. libz has the lowest address
 * and libb is the first unmarked one in the loader's order.
 */
static const char *const exe_needed[] = { "liba.so.1", "libb.so.1", "libc.so.6" };
static const char *const a_needed[] = { "libz.so.1", "libc.so.6" };
static const char *const c_needed[] = { "ld-linux-x86-64.so.2" };

static struct why_obj objs[] = {
	{ "/usr/bin/app", NULL, exe_needed, 3, "/lib64/ld-linux-x86-64.so.2", 0, M_SHSTK },
	{ "/usr/lib/libz.so.1.2.13", "libz.so.1", NULL, 0, NULL, 0x7f0000100000, M_NONE },
	{ "/usr/lib/plugin-old.so", NULL, NULL, 0, NULL, 0x7f0000200000, M_NONE },
	{ "/usr/lib/plugin-new.so", NULL, NULL, 0, NULL, 0x7f0000300000, M_NONE },
	{ "/usr/lib/libb.so.1", NULL, NULL, 0, NULL, 0x7f0000500000, M_NONE },
	{ "/usr/lib/liba.so.1", "liba.so.1", a_needed, 2, NULL, 0x7f0000600000, M_SHSTK },
	{ "/opt/glibc-cet/lib/libc.so.6", "libc.so.6", c_needed, 1, NULL, 0x7f0000700000, M_SHSTK },
	{ "/opt/glibc-cet/lib/ld-linux-x86-64.so.2", "ld-linux-x86-64.so.2", NULL, 0, NULL,
	  0x7f0000800000, M_SHSTK },
};
#define NOBJS (sizeof(objs) / sizeof(objs[0]))

static void test_order(void)
{
	size_t order[NOBJS], n;

	n = why_loader_order(objs, NOBJS, order);
	CHECK(n == 6);
	/* app, liba, libb, libc (the program's needed), libz (liba's), ld.so (libc's) */
	CHECK(order[0] == 0 && order[1] == 5 && order[2] == 4 && order[3] == 6);
	CHECK(order[4] == 1 && order[5] == 7);
	/* then the dlopen'ed ones, most recently mapped (highest) first */
	CHECK(order[6] == 3 && order[7] == 2);

	/* the interpreter nobody needed still belongs to start-up */
	{
		struct why_obj two[] = {
			{ "/bin/prog", NULL, NULL, 0, "/lib64/ld-linux-x86-64.so.2", 0, M_SHSTK },
			{ "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", NULL, NULL, 0, NULL, 0x7f00, M_SHSTK },
		};
		size_t o[2];

		CHECK(why_loader_order(two, 2, o) == 2 && o[1] == 1);
	}
}

static struct why_off_facts facts(const size_t *order, size_t nstartup, const char *tunables)
{
	struct why_off_facts f = {
		.loader = objs[7].path,
		.loader_version = "2.41",
		.loader_marking = M_SHSTK,
		.objs = objs,
		.order = order,
		.nobjs = NOBJS,
		.nstartup = nstartup,
	};

	if (tunables)
		glibc_tunables_add(&f.tun, tunables, strlen(tunables));
	return f;
}

static void test_decide(void)
{
	struct why_obj saved[NOBJS];
	struct why_off_facts f;
	struct why_off w;
	size_t order[NOBJS], n;
	char buf[512];

	n = why_loader_order(objs, NOBJS, order);

	/* the first unmarked in the loader's order, not the lowest address */
	f = facts(order, n, "glibc.cpu.hwcaps=SHSTK");
	why_off_decide(&f, &w);
	CHECK(w.reason == WHY_OFF_UNMARKED && w.object && strcmp(w.object, "/usr/lib/libb.so.1") == 0);
	CHECK(!w.later);
	CHECK(strcmp(why_off_name(w.reason), "unmarked") == 0);
	CHECK(strstr(why_off_sentence(&w, buf, sizeof(buf)), "/usr/lib/libb.so.1 is not marked") == buf);

	/* the system first */
	f.lacks = CET_LACKS_CPU;
	why_off_decide(&f, &w);
	CHECK(w.reason == WHY_OFF_NO_SUPPORT && strstr(w.detail, "CPU"));
	f.lacks = CET_LACKS_KERNEL | CET_LACKS_CPU;
	why_off_decide(&f, &w);
	CHECK(w.reason == WHY_OFF_NO_SUPPORT && strstr(w.detail, "kernel"));

	/* then the glibc: too old, or not built with CET */
	f = facts(order, n, "glibc.cpu.hwcaps=SHSTK");
	f.loader_version = "2.36";
	why_off_decide(&f, &w);
	CHECK(w.reason == WHY_OFF_GLIBC_NO_CET && w.object == objs[7].path);
	CHECK(strcmp(why_off_name(w.reason), "glibc-without-cet") == 0);
	f.loader_version = "2.41";
	f.loader_marking = M_NONE;
	why_off_decide(&f, &w);
	CHECK(w.reason == WHY_OFF_GLIBC_NO_CET && strstr(w.detail, "not built with CET"));
	/* unknown version and marking: not claimed */
	f.loader_version = "";
	f.loader_marking = -2;
	why_off_decide(&f, &w);
	CHECK(w.reason == WHY_OFF_UNMARKED);
	f.loader = "";
	why_off_decide(&f, &w);
	CHECK(w.reason == WHY_OFF_UNKNOWN && strstr(w.detail, "static"));

	/* the tunable turned it off: before any marking */
	f = facts(order, n, "glibc.cpu.hwcaps=SHSTK:glibc.cpu.x86_shstk=off");
	why_off_decide(&f, &w);
	CHECK(w.reason == WHY_OFF_TUNABLE_OFF && strstr(w.detail, "x86_shstk=off"));
	f = facts(order, n, "glibc.cpu.hwcaps=-SHSTK");
	why_off_decide(&f, &w);
	CHECK(w.reason == WHY_OFF_TUNABLE_OFF && strstr(w.detail, "-SHSTK"));
	CHECK(strcmp(why_off_name(w.reason), "tunable-off") == 0);
	/* ...but not when glibc ignores the string */
	f = facts(order, n, "glibc.cpu.x86_shstk=off=");
	why_off_decide(&f, &w);
	CHECK(w.reason == WHY_OFF_UNMARKED);

	/* x86_shstk=on: libraries do not matter, the program does */
	f = facts(order, n, "glibc.cpu.hwcaps=SHSTK:glibc.cpu.x86_shstk=on");
	why_off_decide(&f, &w);
	CHECK(w.reason == WHY_OFF_UNKNOWN);
	memcpy(saved, objs, sizeof(saved));
	objs[0].marking = M_NONE;
	why_off_decide(&f, &w);
	CHECK(w.reason == WHY_OFF_UNMARKED && strcmp(w.object, "/usr/bin/app") == 0);
	memcpy(objs, saved, sizeof(saved));

	/* all start-up objects marked */
	objs[1].marking = objs[4].marking = M_SHSTK;
	f = facts(order, n, NULL);
	why_off_decide(&f, &w);
	CHECK(w.reason == WHY_OFF_NOT_REQUESTED);
	CHECK(strcmp(why_off_name(w.reason), "not-requested") == 0);
	f = facts(order, n, "glibc.cpu.hwcaps=-AVX2");
	why_off_decide(&f, &w);
	CHECK(w.reason == WHY_OFF_NOT_REQUESTED);
	/* environ unreadable: not claimed */
	f = facts(order, n, NULL);
	f.tunables_errno = 13;
	why_off_decide(&f, &w);
	CHECK(w.reason == WHY_OFF_UNKNOWN && strstr(w.detail, "environment"));
	/* asked, permissive: the first dlopen'ed unmarked object turned it off */
	f = facts(order, n, "glibc.cpu.hwcaps=SHSTK:glibc.cpu.x86_shstk=permissive");
	why_off_decide(&f, &w);
	CHECK(w.reason == WHY_OFF_UNMARKED && w.later && strcmp(w.object, "/usr/lib/plugin-new.so") == 0);
	/* asked, default: such a dlopen fails while it is on, so not that */
	f = facts(order, n, "glibc.cpu.hwcaps=SHSTK");
	why_off_decide(&f, &w);
	CHECK(w.reason == WHY_OFF_UNKNOWN);
	/* ... unless our kernel's legacy-ELF policy refused the marked program */
	f.kernel_blocks_marked = true;
	why_off_decide(&f, &w);
	CHECK(w.reason == WHY_OFF_KERNEL_POLICY && strstr(w.detail, "shstk_legacy_elf=allow"));
	CHECK(strcmp(why_off_name(w.reason), "kernel-policy") == 0);
	/* ... which comes before a permissive dlopen: it never was on */
	f = facts(order, n, "glibc.cpu.hwcaps=SHSTK:glibc.cpu.x86_shstk=permissive");
	f.kernel_blocks_marked = true;
	why_off_decide(&f, &w);
	CHECK(w.reason == WHY_OFF_KERNEL_POLICY);
	/* not asked: the kernel saw no request */
	f = facts(order, n, NULL);
	f.kernel_blocks_marked = true;
	why_off_decide(&f, &w);
	CHECK(w.reason == WHY_OFF_NOT_REQUESTED);
	CHECK(why_off_name(WHY_OFF_NONE) == NULL);
	memcpy(objs, saved, sizeof(saved));
}

static void test_banner(void)
{
	static const char ld[] = "\x7f" "ELF junk\0release version x\0"
				 "ld.so (Debian GLIBC 2.41-12) stable release version 2.41.\0";
	char v[16];

	CHECK(why_glibc_banner_version(ld, sizeof(ld), v, sizeof(v)) && strcmp(v, "2.41") == 0);
	CHECK(!why_glibc_banner_version("no banner here", 14, v, sizeof(v)));
	/* cut at the end of the buffer */
	CHECK(why_glibc_banner_version("release version 2.3", 19, v, sizeof(v)) && strcmp(v, "2.3") == 0);
	CHECK(cet_glibc_manages_shstk("2.41") && !cet_glibc_manages_shstk("2.36"));
}

int main(void)
{
	test_tunables();
	test_order();
	test_decide();
	test_banner();
	printf("%d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
