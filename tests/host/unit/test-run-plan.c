// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of run's plan (src/run-plan.c): the method, the refusals in
 * their order, the warnings, and what is asked of the start-up, from
 * options and facts alone.
 */
#include <stdio.h>
#include <string.h>

#include "cet-abi.h"
#include "run-plan.h"
#include "sysinfo-cet.h"

#include "check.h"

/* cetctl run --shstk on a capable system, glibc 2.36, a marked dynamic program */
static void defaults(struct run_opts *o, struct run_facts *f)
{
	*o = (struct run_opts){ .shstk = true, .lock = true, .preload = true,
				.method = RUN_METHOD_AUTO };
	*f = (struct run_facts){ .has_interp = true, .prog_marked = 1, .libc_marked = 1,
				 .preload = RUN_PRELOAD_FOUND };
}

static void test_method(void)
{
	struct run_opts o;
	struct run_facts f;

	defaults(&o, &f);
	CHECK(run_plan_method(&o, &f) == RUN_METHOD_PTRACE);	/* old glibc */
	f.glibc_manages = true;
	CHECK(run_plan_method(&o, &f) == RUN_METHOD_GLIBC);
	f.has_interp = false;	/* static: the loader cannot enable it */
	CHECK(run_plan_method(&o, &f) == RUN_METHOD_PTRACE);
	f.has_interp = true;
	o.trace_only = true;
	CHECK(run_plan_method(&o, &f) == RUN_METHOD_PTRACE);
	o.method = RUN_METHOD_GLIBC;
	CHECK(run_plan_method(&o, &f) == RUN_METHOD_GLIBC);
	o.trace_only = false;
	o.method = RUN_METHOD_PTRACE;
	CHECK(run_plan_method(&o, &f) == RUN_METHOD_PTRACE);
}

static void test_refusals(void)
{
	struct run_opts o;
	struct run_facts f;
	struct run_plan p;

	defaults(&o, &f);
	o.method = RUN_METHOD_GLIBC;
	f.lacks = CET_LACKS_CPU;
	f.exec_only = true;
	run_plan(&o, &f, &p);
	CHECK(p.refusal == RUN_REFUSE_GLIBC_OLD);	/* first of all */
	f.glibc_manages = true;
	o.wrss = true;
	run_plan(&o, &f, &p);
	CHECK(p.refusal == RUN_REFUSE_GLIBC_OPTIONS);
	o.wrss = false;
	o.lock = false;
	run_plan(&o, &f, &p);
	CHECK(p.refusal == RUN_REFUSE_GLIBC_OPTIONS);
	o.lock = true;
	run_plan(&o, &f, &p);
	CHECK(p.refusal == RUN_REFUSE_UNSUPPORTED);
	f.lacks = 0;
	run_plan(&o, &f, &p);
	CHECK(p.refusal == RUN_REFUSE_EXEC_ONLY);
	f.exec_only = false;
	run_plan(&o, &f, &p);
	CHECK(p.refusal == RUN_GO);

	/* --trace-only needs neither shadow stacks nor a new glibc */
	defaults(&o, &f);
	o.shstk = false;
	o.trace_only = true;
	o.method = RUN_METHOD_GLIBC;
	f.lacks = CET_LACKS_KERNEL | CET_LACKS_CPU;
	run_plan(&o, &f, &p);
	CHECK(p.refusal == RUN_GO);
	CHECK(p.method == RUN_METHOD_GLIBC && p.launch.at_entry && !p.launch.enable &&
	      !p.tunable);
	f.exec_only = true;	/* but it must be readable */
	run_plan(&o, &f, &p);
	CHECK(p.refusal == RUN_REFUSE_EXEC_ONLY);
}

static void test_warnings(void)
{
	struct run_opts o;
	struct run_facts f;
	struct run_plan p;

	defaults(&o, &f);
	run_plan(&o, &f, &p);
	CHECK(p.refusal == RUN_GO && p.warn == RUN_WARN_GLIBC_UNAWARE);
	f.prog_marked = 0;
	f.libc_marked = 0;
	run_plan(&o, &f, &p);
	CHECK(p.warn == (RUN_WARN_PROG_UNMARKED | RUN_WARN_LIBC_UNMARKED |
			 RUN_WARN_GLIBC_UNAWARE));
	f.prog_marked = f.libc_marked = -1;	/* unknown: nothing said */
	o.quiet = true;
	run_plan(&o, &f, &p);
	CHECK(p.warn == 0);

	/* the preload library: a missing one said only when not quiet, a
	 * refused one always */
	f.preload = RUN_PRELOAD_MISSING;
	run_plan(&o, &f, &p);
	CHECK(p.warn == 0 && !p.preload);
	o.quiet = false;
	run_plan(&o, &f, &p);
	CHECK(p.warn == (RUN_WARN_GLIBC_UNAWARE | RUN_WARN_NO_PRELOAD));
	o.quiet = true;
	f.preload = RUN_PRELOAD_REFUSED;
	run_plan(&o, &f, &p);
	CHECK(p.warn == RUN_WARN_NO_PRELOAD && !p.preload);
	o.quiet = false;
	o.shstk = false;
	o.trace_only = true;
	run_plan(&o, &f, &p);
	CHECK(p.warn == RUN_WARN_NO_PRELOAD);

	/* AddressSanitizer: no preload, said unless quiet */
	defaults(&o, &f);
	f.uses_asan = true;
	CHECK(!run_plan_wants_preload(&o, &f));
	f.preload = RUN_PRELOAD_UNSOUGHT;
	run_plan(&o, &f, &p);
	CHECK(p.warn == (RUN_WARN_GLIBC_UNAWARE | RUN_WARN_ASAN) && !p.preload);
	o.quiet = true;
	run_plan(&o, &f, &p);
	CHECK(p.warn == 0);
}

static void test_preload_wanted(void)
{
	struct run_opts o;
	struct run_facts f;

	defaults(&o, &f);
	CHECK(run_plan_warns(&o));
	o.quiet = true;
	CHECK(!run_plan_warns(&o));
	o.quiet = false;
	o.trace_only = true;
	CHECK(!run_plan_warns(&o));
	o.trace_only = false;
	CHECK(run_plan_wants_preload(&o, &f));
	o.preload = false;
	CHECK(!run_plan_wants_preload(&o, &f));
	o.preload = true;
	f.prog_static = true;	/* loads nothing: issue 31, b */
	CHECK(!run_plan_wants_preload(&o, &f));
	f.prog_static = false;
	f.sanitizer_preloaded = true;	/* must come first: issue 31, c */
	CHECK(!run_plan_wants_preload(&o, &f));
	f.sanitizer_preloaded = false;
	CHECK(run_plan_wants_preload(&o, &f));
	f.glibc_manages = true;	/* glibc keeps longjmp consistent itself */
	o.method = RUN_METHOD_PTRACE;
	CHECK(!run_plan_wants_preload(&o, &f));
}

/* Issue 31: none added for a static program or behind a preloaded sanitizer. */
static void test_preload_left_out(void)
{
	struct run_opts o;
	struct run_facts f;
	struct run_plan p;

	/* a sanitizer runtime in LD_PRELOAD: none added, said unless quiet */
	defaults(&o, &f);
	f.sanitizer_preloaded = true;
	f.preload = RUN_PRELOAD_UNSOUGHT;
	run_plan(&o, &f, &p);
	CHECK(!p.preload && p.warn == (RUN_WARN_GLIBC_UNAWARE | RUN_WARN_SANITIZER_PRELOADED));
	o.quiet = true;
	run_plan(&o, &f, &p);
	CHECK(!p.preload && p.warn == 0);
	/* a static program: none added, nothing said of a sanitizer it never loads */
	o.quiet = false;
	f.prog_static = true;
	run_plan(&o, &f, &p);
	CHECK(!p.preload && p.warn == RUN_WARN_GLIBC_UNAWARE);
	f.sanitizer_preloaded = false;
	f.preload = RUN_PRELOAD_FOUND;	/* found all the same: not added */
	run_plan(&o, &f, &p);
	CHECK(!p.preload);
	f.prog_static = false;
	run_plan(&o, &f, &p);
	CHECK(p.preload);
}

static void test_launch(void)
{
	struct run_opts o;
	struct run_facts f;
	struct run_plan p;

	defaults(&o, &f);
	run_plan(&o, &f, &p);
	CHECK(p.method == RUN_METHOD_PTRACE && p.preload && !p.tunable && !p.launch.at_entry);
	CHECK(p.launch.enable == ARCH_SHSTK_SHSTK);
	CHECK(p.launch.lock == (ARCH_SHSTK_SHSTK | ARCH_SHSTK_WRSS));
	o.wrss = true;
	o.lock = false;
	run_plan(&o, &f, &p);
	CHECK(p.launch.enable == (ARCH_SHSTK_SHSTK | ARCH_SHSTK_WRSS) && p.launch.lock == 0);

	o.wrss = false;
	o.lock = true;
	o.shstk = false;
	o.trace_only = true;
	run_plan(&o, &f, &p);
	CHECK(p.launch.enable == 0 && p.launch.lock == 0);

	defaults(&o, &f);
	f.glibc_manages = true;
	f.preload = RUN_PRELOAD_UNSOUGHT;
	run_plan(&o, &f, &p);
	CHECK(p.method == RUN_METHOD_GLIBC && p.tunable && !p.preload && p.launch.at_entry);
	CHECK(p.launch.enable == ARCH_SHSTK_SHSTK && p.launch.lock == ARCH_SHSTK_SHSTK);
	CHECK(p.warn == 0);
}

int main(void)
{
	test_method();
	test_refusals();
	test_warnings();
	test_preload_wanted();
	test_preload_left_out();
	test_launch();
	printf("test-run-plan: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
