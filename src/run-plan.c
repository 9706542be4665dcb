// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The decision of `cetctl run` (run-plan.h): options and facts in, a plan
 * out. No I/O here, so every path is a unit test.
 */
#include <string.h>

#include "cet-abi.h"
#include "run-plan.h"

bool run_plan_warns(const struct run_opts *o)
{
	return !o->quiet && !o->trace_only;
}

enum run_method run_plan_method(const struct run_opts *o, const struct run_facts *f)
{
	/* --trace-only traces the ptrace start-up unless glibc's is asked */
	if (o->trace_only && o->method != RUN_METHOD_GLIBC)
		return RUN_METHOD_PTRACE;
	/* glibc enables shadow stacks in its dynamic loader: a static program
	 * would enable them in its own code, too late to verify. */
	if (o->method == RUN_METHOD_AUTO)
		return f->glibc_manages && f->has_interp ? RUN_METHOD_GLIBC : RUN_METHOD_PTRACE;
	return o->method;
}

bool run_plan_wants_preload(const struct run_opts *o, const struct run_facts *f)
{
	/* A sanitizer runtime must come first among the loaded objects and
	 * intercepts setjmp/longjmp itself: no preload library for it, linked
	 * in or in the caller's LD_PRELOAD (ours would go before it). A static
	 * program loads nothing: LD_PRELOAD would only reach its descendants,
	 * where an ASan one refuses to start. A glibc that manages shadow
	 * stacks keeps longjmp consistent itself. */
	return run_plan_method(o, f) == RUN_METHOD_PTRACE && o->preload && !f->uses_asan &&
	       !f->sanitizer_preloaded && !f->prog_static && !f->glibc_manages;
}

static enum run_refusal refusal(const struct run_opts *o, const struct run_facts *f,
				enum run_method m)
{
	if (m == RUN_METHOD_GLIBC && !o->trace_only) {
		if (!f->glibc_manages)
			return RUN_REFUSE_GLIBC_OLD;
		if (o->wrss || !o->lock)
			return RUN_REFUSE_GLIBC_OPTIONS;
	}
	if (!o->trace_only && f->lacks)
		return RUN_REFUSE_UNSUPPORTED;
	/* The kernel makes the process of a program one may execute but not
	 * read non-dumpable, and hides it from its own tracer: nothing could
	 * be verified. */
	if (f->exec_only)
		return RUN_REFUSE_EXEC_ONLY;
	return RUN_GO;
}

static unsigned int warnings(const struct run_opts *o, const struct run_facts *f,
			     enum run_method m)
{
	bool said = run_plan_warns(o);
	unsigned int w = 0;

	if (said && f->prog_marked == 0)
		w |= RUN_WARN_PROG_UNMARKED;
	if (said && f->libc_marked == 0)
		w |= RUN_WARN_LIBC_UNMARKED;
	if (said && !f->glibc_manages)
		w |= RUN_WARN_GLIBC_UNAWARE;
	if (m != RUN_METHOD_PTRACE)
		return w;
	if (said && o->preload && f->uses_asan)
		w |= RUN_WARN_ASAN;
	else if (said && o->preload && f->sanitizer_preloaded && !f->prog_static)
		w |= RUN_WARN_SANITIZER_PRELOADED;
	/* Refusing an untrusted library is always said; a missing one only
	 * when it matters. */
	if (f->preload == RUN_PRELOAD_REFUSED || (f->preload == RUN_PRELOAD_MISSING && said))
		w |= RUN_WARN_NO_PRELOAD;
	return w;
}

void run_plan(const struct run_opts *o, const struct run_facts *f, struct run_plan *p)
{
	memset(p, 0, sizeof(*p));
	p->method = run_plan_method(o, f);
	p->refusal = refusal(o, f, p->method);
	if (p->refusal)
		return;
	p->warn = warnings(o, f, p->method);
	if (p->method == RUN_METHOD_GLIBC) {
		/* --trace-only: the same stop and check, nothing asked of glibc */
		if (!o->trace_only) {
			p->tunable = true;
			p->launch.enable = p->launch.lock = ARCH_SHSTK_SHSTK;
		}
		p->launch.at_entry = true;
		return;
	}
	p->preload = f->preload == RUN_PRELOAD_FOUND && run_plan_wants_preload(o, f);
	if (o->shstk)
		p->launch.enable = ARCH_SHSTK_SHSTK | (o->wrss ? ARCH_SHSTK_WRSS : 0);
	/* Lock both bits: WRSS stays in the state chosen here (off unless --wrss). */
	p->launch.lock = o->lock && o->shstk ? ARCH_SHSTK_SHSTK | ARCH_SHSTK_WRSS : 0;
}
