// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the compatibility verdict: the pure judge (compat.c) on
 * objects made up here, the data table's shape (compat-rules.c), and the
 * scan (compat-scan.c) on the ELF fixtures of tests/host/fixtures/build.sh
 * (the compat directory), whose directory is the first argument.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "compat.h"
#include "compat-scan.h"

static const char *fixtures;

/* The index of the first rule of @m matching @name, or -1. */
static int rule_for(enum compat_match m, const char *name)
{
	for (size_t r = 0; r < compat_nrules; r++)
		if (compat_rules[r].match == m && compat_rule_matches(&compat_rules[r], name))
			return (int)r;
	return -1;
}

static struct compat_object obj(const char *path, bool marked)
{
	struct compat_object o = { .path = path, .marked = marked, .symbols = true };

	return o;
}

static void hit(struct compat_object *o, enum compat_match m, const char *name)
{
	int r = rule_for(m, name);

	CHECK(r >= 0);
	if (r >= 0)
		compat_object_hit(o, (unsigned int)r, name);
}

static const struct compat_env with_preload = { .preload = true, .preload_ucontext = true };

static void test_rule_matching(void)
{
	struct compat_rule exact = { .pattern = "longjmp" };
	struct compat_rule prefix = { .pattern = "rb_fiber_*" };
	struct compat_rule cls = { .pattern = "_U[LG]x86_64_resume" };

	CHECK(compat_rule_matches(&exact, "longjmp"));
	CHECK(!compat_rule_matches(&exact, "longjmpx"));
	CHECK(!compat_rule_matches(&exact, "_longjmp"));
	CHECK(!compat_rule_matches(&exact, "longjm"));
	CHECK(compat_rule_matches(&prefix, "rb_fiber_new"));
	CHECK(!compat_rule_matches(&prefix, "rb_fibe"));
	CHECK(compat_rule_matches(&cls, "_ULx86_64_resume"));
	CHECK(compat_rule_matches(&cls, "_UGx86_64_resume"));
	CHECK(!compat_rule_matches(&cls, "_UXx86_64_resume"));
	/* the rows the issue names are there */
	CHECK(rule_for(COMPAT_M_SECTION, ".go.buildinfo") >= 0);
	CHECK(rule_for(COMPAT_M_SYMBOL, "runtime.morestack") >= 0);
	CHECK(rule_for(COMPAT_M_SYMBOL, "runtime.gogo") >= 0);
	CHECK(rule_for(COMPAT_M_OBJECT, "libboost_context.so.1.74.0") >= 0);
	CHECK(rule_for(COMPAT_M_SYMBOL, "jump_fcontext") >= 0);
	CHECK(rule_for(COMPAT_M_OBJECT, "libruby-3.1.so.3.1") >= 0);
	CHECK(rule_for(COMPAT_M_SYMBOL, "coroutine_transfer") >= 0);
	CHECK(rule_for(COMPAT_M_OBJECT, "libluajit-5.1.so.2") >= 0);
	CHECK(rule_for(COMPAT_M_OBJECT, "libgccjit.so.0") >= 0);
	CHECK(rule_for(COMPAT_M_SYMBOL, "pcre2_jit_compile_8") >= 0);
	CHECK(rule_for(COMPAT_M_SYMBOL, "swapcontext") >= 0);
	CHECK(rule_for(COMPAT_M_OBJECT, "libc.so.6") < 0);
	CHECK(rule_for(COMPAT_M_SYMBOL, "printf") < 0);
}

/* Every row says something, in a class and place that make sense. */
static void test_table_shape(void)
{
	CHECK(compat_nrules > 20);
	for (size_t r = 0; r < compat_nrules; r++) {
		const struct compat_rule *x = &compat_rules[r];

		CHECK(x->pattern && *x->pattern);
		CHECK(x->reason && *x->reason);
		CHECK(x->cls >= COMPAT_FORCED_SAFE && x->cls <= COMPAT_INCOMPATIBLE);
		CHECK((x->match == COMPAT_M_SYMBOL) == (x->where != 0));
		CHECK((x->match == COMPAT_M_NOTE) == (x->note_type != 0));
		/* only what can be mended is mended, into a class that runs */
		CHECK(!x->mends || x->cls == COMPAT_FORCED_SAFE || x->cls == COMPAT_SWITCHES_COVERED);
		CHECK(x->mends || x->cls >= COMPAT_UNKNOWN);
		/* "unknown" says why it is not known */
		CHECK(x->cls != COMPAT_UNKNOWN || strstr(x->reason, "not known"));
	}
}

static void test_marked_and_forced_safe(void)
{
	struct compat_object o[3] = { obj("/p", true), obj("/l1", true), obj("/l2", true) };
	struct compat_verdict v;

	compat_judge(o, 3, NULL, 0, &with_preload, &v);
	CHECK(v.cls == COMPAT_MARKED);
	CHECK(v.nfindings == 0);
	CHECK(v.main.object && strcmp(v.main.object, "/p") == 0);

	o[2].marked = false;
	compat_judge(o, 3, NULL, 0, &with_preload, &v);
	CHECK(v.cls == COMPAT_FORCED_SAFE);
	/* the weakest link is named */
	CHECK(v.main.object && strcmp(v.main.object, "/l2") == 0);
	CHECK(!v.main.self);
	CHECK(v.main.reason && strstr(v.main.reason, "not marked"));

	/* a match inside a marked object does not count */
	hit(&o[1], COMPAT_M_SYMBOL, "jump_fcontext");
	compat_judge(o, 3, NULL, 0, &with_preload, &v);
	CHECK(v.cls == COMPAT_FORCED_SAFE);
	o[1].marked = false;
	compat_judge(o, 3, NULL, 0, &with_preload, &v);
	CHECK(v.cls == COMPAT_INCOMPATIBLE);
	CHECK(strcmp(v.main.object, "/l1") == 0);
	CHECK(v.main.what && strcmp(v.main.what, "jump_fcontext") == 0);
}

/* longjmp and ucontext: what mends them, and where nothing does. */
static void test_mending(void)
{
	struct compat_env none = { 0 }, glibc = { .glibc_manages = true },
			  no_uctx = { .preload = true };
	struct compat_object o[2] = { obj("/p", false), obj("/libc", false) };
	struct compat_verdict v;

	hit(&o[0], COMPAT_M_SYMBOL, "__longjmp_chk");
	compat_judge(o, 2, NULL, 0, &with_preload, &v);
	CHECK(v.cls == COMPAT_FORCED_SAFE);
	CHECK(v.main.cover == COMPAT_COVER_PRELOAD);
	CHECK(v.main.self && v.main.what && strcmp(v.main.what, "__longjmp_chk") == 0);
	compat_judge(o, 2, NULL, 0, &glibc, &v);
	CHECK(v.cls == COMPAT_FORCED_SAFE && v.main.cover == COMPAT_COVER_GLIBC);
	compat_judge(o, 2, NULL, 0, &none, &v);
	CHECK(v.cls == COMPAT_SWITCHES_UNCOVERED && v.main.cover == COMPAT_COVER_NO_PRELOAD);
	/* a static program gets no preload, whatever the environment */
	o[0].is_static = true;
	compat_judge(o, 1, NULL, 0, &with_preload, &v);
	CHECK(v.cls == COMPAT_SWITCHES_UNCOVERED && v.main.cover == COMPAT_COVER_STATIC);
	compat_judge(o, 1, NULL, 0, &glibc, &v);
	CHECK(v.cls == COMPAT_SWITCHES_UNCOVERED && v.main.cover == COMPAT_COVER_STATIC);
	o[0].is_static = false;

	hit(&o[1], COMPAT_M_SYMBOL, "makecontext");
	compat_judge(o, 2, NULL, 0, &with_preload, &v);
	CHECK(v.cls == COMPAT_SWITCHES_COVERED);
	CHECK(strcmp(v.main.object, "/libc") == 0 && v.main.cover == COMPAT_COVER_PRELOAD);
	CHECK(v.nfindings == 2);
	compat_judge(o, 2, NULL, 0, &no_uctx, &v);
	CHECK(v.cls == COMPAT_SWITCHES_UNCOVERED && v.main.cover == COMPAT_COVER_NOT_UCONTEXT);
	/* longjmp is still mended there: the worse finding leads */
	CHECK(v.findings[1].cls == COMPAT_FORCED_SAFE);
}

static void test_unknown_and_worst(void)
{
	struct compat_object o[3] = { obj("/p", false), obj("/l1", false), obj("/l2", false) };
	const char *missing[] = { "libgone.so.1" };
	struct compat_verdict v;

	o[1].rc = -EACCES;
	compat_judge(o, 3, NULL, 0, &with_preload, &v);
	CHECK(v.cls == COMPAT_UNKNOWN);
	CHECK(strcmp(v.main.object, "/l1") == 0 && v.main.err == -EACCES);
	o[1].rc = 0;

	compat_judge(o, 3, missing, 1, &with_preload, &v);
	CHECK(v.cls == COMPAT_UNKNOWN);
	CHECK(!v.main.object && v.main.what && strcmp(v.main.what, "libgone.so.1") == 0);

	/* the worst finding wins, wherever it is */
	hit(&o[0], COMPAT_M_SYMBOL, "pcre2_jit_compile_8");
	hit(&o[2], COMPAT_M_SECTION, ".go.buildinfo");
	compat_judge(o, 3, missing, 1, &with_preload, &v);
	CHECK(v.cls == COMPAT_INCOMPATIBLE);
	CHECK(strcmp(v.main.object, "/l2") == 0);
	CHECK(v.nfindings == 3);
	for (size_t i = 1; i < v.nfindings; i++)
		CHECK(v.findings[i - 1].cls >= v.findings[i].cls);

	/* a static program without symbols cannot be judged... */
	struct compat_object s = obj("/static", false);

	s.is_static = true;
	s.symbols = false;
	compat_judge(&s, 1, NULL, 0, &with_preload, &v);
	CHECK(v.cls == COMPAT_UNKNOWN && v.main.self);
	/* ...unless a mark says more than the symbols could */
	hit(&s, COMPAT_M_NOTE, "Go");
	compat_judge(&s, 1, NULL, 0, &with_preload, &v);
	CHECK(v.cls == COMPAT_INCOMPATIBLE);
}

static void test_limits(void)
{
	struct compat_object o = obj("/p", false);
	struct compat_object many[COMPAT_FINDINGS_MAX + 4];
	struct compat_verdict v;
	size_t n = sizeof(many) / sizeof(many[0]);

	/* one hit per rule; the worst kept when the object is full */
	hit(&o, COMPAT_M_SYMBOL, "longjmp");
	hit(&o, COMPAT_M_SYMBOL, "longjmp");
	CHECK(o.nhits == 1);
	for (size_t r = 0; r < compat_nrules && o.nhits < COMPAT_HITS_MAX; r++)
		if (compat_rules[r].cls == COMPAT_FORCED_SAFE || compat_rules[r].cls == COMPAT_SWITCHES_COVERED)
			compat_object_hit(&o, (unsigned int)r, compat_rules[r].pattern);
	CHECK(o.nhits == COMPAT_HITS_MAX);
	hit(&o, COMPAT_M_SECTION, ".go.buildinfo");
	CHECK(o.nhits == COMPAT_HITS_MAX);
	compat_judge(&o, 1, NULL, 0, &with_preload, &v);
	CHECK(v.cls == COMPAT_INCOMPATIBLE);

	/* more findings than the verdict holds: the worst stay, the rest counted */
	for (size_t i = 0; i < n; i++) {
		many[i] = obj("/x", false);
		many[i].rc = i == 7 ? -EIO : 0;		/* unreadable: its hits are not judged */
		hit(&many[i], COMPAT_M_SYMBOL, "longjmp");
	}
	compat_judge(many, n, NULL, 0, &with_preload, &v);
	CHECK(v.nfindings == COMPAT_FINDINGS_MAX);
	CHECK(v.nfindings + v.nleft == n);	/* one finding an object */
	CHECK(v.cls == COMPAT_UNKNOWN && v.main.err == -EIO);
	CHECK(strcmp(compat_class_name(COMPAT_FORCED_SAFE), "forced-safe") == 0);
	CHECK(strcmp(compat_class_text(COMPAT_SWITCHES_UNCOVERED), "switches stacks, not covered") == 0);
	CHECK(compat_cover_name(COMPAT_COVER_NONE) == NULL);
}

/* ---- the scan, on the fixtures ---------------------------------------- */

static void judge_fixture(struct compat_ctx *cc, const char *name, enum compat_class want,
			  const char *want_what, const char *want_object)
{
	char path[4096];
	struct compat_verdict v;
	int rc;

	snprintf(path, sizeof(path), "%s/compat/%s", fixtures, name);
	rc = compat_judge_path(cc, path, &with_preload, &v);
	CHECK(rc == 0);
	if (rc || v.cls != want || (want_what && (!v.main.what || strcmp(v.main.what, want_what))) ||
	    (want_object && (!v.main.object || !strstr(v.main.object, want_object)))) {
		fprintf(stderr, "%s: got %s, %s, %s; want %s, %s, %s\n", name,
			compat_class_name(v.cls), v.main.what ? v.main.what : "-",
			v.main.object ? v.main.object : "-", compat_class_name(want),
			want_what ? want_what : "-", want_object ? want_object : "-");
		failures++;
	}
}

static void test_scan(void)
{
	struct compat_ctx *cc;
	struct compat_verdict v;
	char path[4096];

	CHECK(compat_ctx_new(&cc, NULL) == 0);
	judge_fixture(cc, "go-note", COMPAT_INCOMPATIBLE, "note Go/4", "go-note");
	judge_fixture(cc, "go-section-stripped", COMPAT_INCOMPATIBLE, ".go.buildinfo", NULL);
	judge_fixture(cc, "go-symbol", COMPAT_INCOMPATIBLE, "runtime.morestack", NULL);
	judge_fixture(cc, "ucontext", COMPAT_SWITCHES_COVERED, NULL, "ucontext");
	judge_fixture(cc, "longjmp", COMPAT_FORCED_SAFE, "longjmp", NULL);
	judge_fixture(cc, "plain", COMPAT_FORCED_SAFE, NULL, NULL);
	/* the program imports it; the library, in its closure, is named too */
	judge_fixture(cc, "fcontext-app", COMPAT_INCOMPATIBLE, "jump_fcontext", "fcontext-app");
	judge_fixture(cc, "libboost_context.so.1.74.0", COMPAT_INCOMPATIBLE, NULL, NULL);
	judge_fixture(cc, "pcre2-app", COMPAT_UNKNOWN, "pcre2_jit_compile_8", NULL);
	/* defining it is no use of a JIT */
	judge_fixture(cc, "libpcre2-fix.so", COMPAT_FORCED_SAFE, NULL, NULL);
	snprintf(path, sizeof(path), "%s/compat/longjmp-static", fixtures);
	if (access(path, F_OK) == 0) {
		judge_fixture(cc, "longjmp-static", COMPAT_SWITCHES_UNCOVERED, "longjmp", NULL);
		judge_fixture(cc, "static-stripped", COMPAT_UNKNOWN, NULL, NULL);
	}

	snprintf(path, sizeof(path), "%s/compat/fcontext-app", fixtures);
	CHECK(compat_judge_path(cc, path, &with_preload, &v) == 0);
	CHECK(v.nfindings >= 3);	/* the import, the library's name and definition */
	bool lib = false;

	for (size_t i = 0; i < v.nfindings; i++)
		lib |= v.findings[i].object && strstr(v.findings[i].object, "libboost_context") &&
		       !v.findings[i].self;
	CHECK(lib);

	/* not ELF, missing: a verdict all the same */
	snprintf(path, sizeof(path), "%s/not-elf.sh", fixtures);
	CHECK(compat_judge_path(cc, path, &with_preload, &v) == 0);
	CHECK(v.cls == COMPAT_UNKNOWN && v.main.err == ELF_CET_ENOTELF);
	CHECK(compat_judge_path(cc, "/nonexistent-cetctl", &with_preload, &v) == 0);
	CHECK(v.cls == COMPAT_UNKNOWN && v.main.err == -ENOENT);
	/* a .o is not judged */
	snprintf(path, sizeof(path), "%s/obj-none.o", fixtures);
	CHECK(compat_judge_path(cc, path, &with_preload, &v) == 0);
	CHECK(v.cls == COMPAT_NA);
	/* the program's own missing library */
	snprintf(path, sizeof(path), "%s/deps/app-missing", fixtures);
	CHECK(compat_judge_path(cc, path, &with_preload, &v) == 0);
	CHECK(v.cls == COMPAT_UNKNOWN && v.main.what && strcmp(v.main.what, "libgone.so") == 0);
	compat_ctx_free(cc);
}

int main(int argc, char **argv)
{
	test_rule_matching();
	test_table_shape();
	test_marked_and_forced_safe();
	test_mending();
	test_unknown_and_worst();
	test_limits();
	if (argc > 1) {
		fixtures = argv[1];
		test_scan();
	} else {
		fprintf(stderr, "test-compat: no fixture directory: the scan is not tested\n");
		failures++;
	}
	printf("%d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
