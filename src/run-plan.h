/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What `cetctl run` does with a resolved program, decided from facts only:
 * run_plan() reads nothing and prints nothing (tests/host/unit/
 * test-run-plan.c). cmd-run.c gathers the facts (the library's probes),
 * asks for the plan, then says what the plan says and carries it out.
 */
#ifndef CETCTL_RUN_PLAN_H
#define CETCTL_RUN_PLAN_H

#include <stdbool.h>

#include "shstk-launch.h"

enum run_method { RUN_METHOD_AUTO, RUN_METHOD_PTRACE, RUN_METHOD_GLIBC };

/* The command line. */
struct run_opts {
	bool shstk, wrss, lock, quiet, preload, trace_only;
	bool force_incompatible;	/* run a program the verdict says is incompatible */
	enum run_method method;
};

/* What became of the search for the preload library (run_find_preload()). */
enum run_preload {
	RUN_PRELOAD_UNSOUGHT = 0,	/* not looked for: not wanted */
	RUN_PRELOAD_FOUND,
	RUN_PRELOAD_MISSING,		/* none anywhere: said only when it matters */
	RUN_PRELOAD_REFUSED,		/* one that may not be loaded: always said */
};

/* What is known before deciding; each from one probe of the library. */
struct run_facts {
	bool glibc_manages;	/* glibc >= 2.39 enables shadow stacks itself */
	unsigned int lacks;	/* CET_LACKS_*: what the system lacks; 0 none */
	bool has_interp;	/* the program has a dynamic loader (64-bit PT_INTERP) */
	bool exec_only;		/* executable but not readable by the caller */
	int prog_marked;	/* SHSTK-marked for the loader: 1, 0, -1 unknown */
	int libc_marked;	/* the same of the C library; -1 also: none found */
	bool uses_asan;		/* DT_NEEDED libasan.so */
	bool prog_static;	/* an ELF program without PT_INTERP: it loads nothing of
				 * LD_PRELOAD (false: dynamic, or not known) */
	bool sanitizer_preloaded; /* the caller's LD_PRELOAD names a sanitizer runtime */
	enum run_preload preload;
};

/* Why the program is not started (the messages are cmd-run.c's). */
enum run_refusal {
	RUN_GO = 0,
	RUN_REFUSE_GLIBC_OLD,		/* --method=glibc, glibc < 2.39 */
	RUN_REFUSE_GLIBC_OPTIONS,	/* --method=glibc with --wrss or --no-lock */
	RUN_REFUSE_UNSUPPORTED,		/* the CPU or kernel (facts.lacks) */
	RUN_REFUSE_EXEC_ONLY,		/* not readable: its start-up cannot be verified */
};

/* Warnings, said in this order. */
#define RUN_WARN_PROG_UNMARKED	(1U << 0)
#define RUN_WARN_LIBC_UNMARKED	(1U << 1)
#define RUN_WARN_GLIBC_UNAWARE	(1U << 2)	/* glibc does not manage shadow stacks */
#define RUN_WARN_ASAN		(1U << 3)	/* no preload library for a sanitizer */
#define RUN_WARN_NO_PRELOAD	(1U << 4)	/* missing or refused preload library */
#define RUN_WARN_SANITIZER_PRELOADED (1U << 5)	/* none behind a preloaded sanitizer */

struct run_plan {
	enum run_refusal refusal;
	enum run_method method;		/* RUN_METHOD_PTRACE or RUN_METHOD_GLIBC */
	unsigned int warn;		/* RUN_WARN_* */
	bool tunable;			/* GLIBC_TUNABLES=glibc.cpu.hwcaps=SHSTK appended */
	bool preload;			/* LD_PRELOAD the library found */
	struct launch_opts launch;
};

/* Whether the warnings about markings and the C library are said: not
 * with --quiet, nor with --trace-only. Pure. */
bool run_plan_warns(const struct run_opts *o);
/* The method a start-up takes (auto resolved). Pure. */
enum run_method run_plan_method(const struct run_opts *o, const struct run_facts *f);
/* Whether the preload library is to be looked for and added (needs the
 * method and facts.uses_asan, .prog_static and .sanitizer_preloaded, not
 * facts.preload). Pure. */
bool run_plan_wants_preload(const struct run_opts *o, const struct run_facts *f);
/* The whole decision for a program that is to run with --shstk/--wrss or
 * --trace-only. Pure. */
void run_plan(const struct run_opts *o, const struct run_facts *f, struct run_plan *p);

#endif
