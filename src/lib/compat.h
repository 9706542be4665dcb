/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Whether a program can live with a shadow stack forced on it (cetctl run
 * --shstk on a system whose binaries are not SHSTK-marked): a verdict on
 * the program and the objects the loader maps for it, from evidence in
 * the files only.
 *
 * What counts as evidence is a data table, compat_rules[] (compat-rules.c):
 * one row per pattern (an object's name, a symbol, a section, a note), its
 * class and the reason said. The scan (compat-scan.c) reads the files and
 * records which rows each object matches; compat_judge() here turns those
 * facts into the verdict and neither reads nor prints anything.
 *
 * The classes, from best to worst (a verdict is the worst finding):
 *  marked        every object is SHSTK-marked (as glibc's loader sees it);
 *  forced-safe   not all marked, and nothing found that switches stacks or
 *                generates code beyond what is mended (the setjmp/longjmp
 *                family, by the preload library or by glibc >= 2.39);
 *  switches-covered    it switches stacks with ucontext, which the preload
 *                (or glibc >= 2.39) keeps consistent with the shadow stack;
 *  switches-uncovered  the same, or longjmp, where nothing mends it (no
 *                preload, a static program);
 *  unknown       something that cannot be judged (an unreadable object, a
 *                static program without symbols, a missing library) or is
 *                not known to be safe (a JIT nobody has measured);
 *  incompatible  a known stack-switching runtime or JIT (Go, Boost.Context,
 *                Ruby fibers, V8 ...): `run --shstk` refuses it.
 * A match inside an object that is itself SHSTK-marked does not count: the
 * marking is its authors' claim that its code keeps the shadow stack right,
 * the claim the loader acts on.
 *
 * Library code: returns -errno, never prints.
 */
#ifndef CETCTL_COMPAT_H
#define CETCTL_COMPAT_H

#include <stdbool.h>
#include <stddef.h>

enum compat_class {
	COMPAT_NA = 0,			/* not judged: not an x86-64 program or library */
	COMPAT_MARKED,
	COMPAT_FORCED_SAFE,
	COMPAT_SWITCHES_COVERED,
	COMPAT_SWITCHES_UNCOVERED,
	COMPAT_UNKNOWN,
	COMPAT_INCOMPATIBLE,
};

/* What a rule matches. */
enum compat_match {
	COMPAT_M_OBJECT,	/* an object's file name (its base name, or the
				 * DT_NEEDED name it was loaded by) */
	COMPAT_M_SYMBOL,	/* a symbol of .dynsym or .symtab (see where) */
	COMPAT_M_SECTION,	/* a section name */
	COMPAT_M_NOTE,		/* a note's owner name (and note_type) */
};

/* Where a symbol rule looks (bits of compat_rule.where). */
#define COMPAT_SYM_IMPORT	(1U << 0)	/* undefined: the object calls it */
#define COMPAT_SYM_DEFINE	(1U << 1)	/* defined in any object */
#define COMPAT_SYM_STATIC	(1U << 2)	/* defined in a static program (linked in) */

/* What can keep a matched construct consistent with the shadow stack. */
enum compat_mends {
	COMPAT_MENDS_NONE = 0,
	COMPAT_MENDS_LONGJMP,	/* the preload library's setjmp/longjmp; glibc >= 2.39 */
	COMPAT_MENDS_UCONTEXT,	/* the preload library's ucontext; glibc >= 2.39 */
};

/* One row of the data table. */
struct compat_rule {
	enum compat_match match;
	const char *pattern;		/* fnmatch(3) pattern */
	unsigned int where;		/* COMPAT_SYM_*, for COMPAT_M_SYMBOL */
	unsigned int note_type;		/* n_type, for COMPAT_M_NOTE */
	enum compat_class cls;		/* the class of a match (when mended, for mends) */
	enum compat_mends mends;	/* unmended: COMPAT_SWITCHES_UNCOVERED instead */
	const char *reason;		/* said with the verdict */
};

extern const struct compat_rule compat_rules[];
extern const size_t compat_nrules;

/* Whether @name matches rule @r's pattern (the kind is the caller's). */
bool compat_rule_matches(const struct compat_rule *r, const char *name);

/* ---- facts about one object (filled by the scan, or by a test) ------ */

#define COMPAT_HITS_MAX		8
#define COMPAT_WHAT_MAX		96

struct compat_hit {
	unsigned int rule;		/* index into compat_rules */
	char what[COMPAT_WHAT_MAX];	/* what matched: a symbol, section, owner, name */
};

struct compat_object {
	const char *path;		/* how the verdict names it */
	int rc;				/* 0, or why it could not be read: -errno,
					 * ELF_CET_ENOTELF, ELF_CET_ECORRUPT */
	bool marked;			/* SHSTK-marked for the loader */
	bool is_static;			/* a program without an interpreter */
	bool symbols;			/* has a symbol table (.dynsym or .symtab) */
	size_t nhits;			/* the worst COMPAT_HITS_MAX matches, one per rule */
	struct compat_hit hits[COMPAT_HITS_MAX];
};

/*
 * Record that @obj matches rule @rule with @what; one hit per rule, the
 * worst rules kept when there are more than COMPAT_HITS_MAX.
 */
void compat_object_hit(struct compat_object *obj, unsigned int rule, const char *what);

/* ---- the verdict --------------------------------------------------- */

/*
 * Whether cetctl's preload library (src/preload/) mends ucontext as well
 * as the setjmp/longjmp family: its makecontext/getcontext/setcontext/
 * swapcontext follow glibc 2.39's design (src/preload/ucontext.c).
 */
#define COMPAT_PRELOAD_MENDS_UCONTEXT	true

/* Where the program will run: what mends what. */
struct compat_env {
	bool preload;		/* a dynamic program gets the preload library */
	bool preload_ucontext;	/* which mends ucontext too */
	bool glibc_manages;	/* glibc >= 2.39 mends longjmp and ucontext itself */
};

/* Why a match is (not) mended: said with switches-* and forced-safe. */
enum compat_cover {
	COMPAT_COVER_NONE = 0,		/* nothing to mend */
	COMPAT_COVER_PRELOAD,		/* the preload library mends it */
	COMPAT_COVER_GLIBC,		/* glibc >= 2.39 mends it */
	COMPAT_COVER_NO_PRELOAD,	/* not mended: the preload library is not used */
	COMPAT_COVER_STATIC,		/* not mended: a static program gets no preload */
	COMPAT_COVER_NOT_UCONTEXT,	/* not mended: the preload does not do ucontext */
};

struct compat_finding {
	enum compat_class cls;
	enum compat_cover cover;
	const char *object;	/* the object's path (the input's), NULL: none */
	const char *what;	/* what matched, NULL: the object as a whole */
	const char *reason;	/* static text */
	int err;		/* -errno or ELF_CET_* when the object is unreadable */
	bool self;		/* the object is the program (the root) itself */
};

#define COMPAT_FINDINGS_MAX	16

struct compat_verdict {
	enum compat_class cls;
	struct compat_finding main;	/* the one the verdict names: the worst */
	size_t nfindings;		/* every finding (worst first), main included */
	struct compat_finding findings[COMPAT_FINDINGS_MAX];
	size_t nleft;			/* findings left out when there were more */
};

/*
 * Judge the program @objs[0] with the objects its loader maps, @objs[1..]
 * (@nobjs in all), the DT_NEEDED names that did not resolve (@missing,
 * @nmissing), for @env. Pure: reads nothing, prints nothing; the verdict
 * points into the objects and the table.
 */
void compat_judge(const struct compat_object *objs, size_t nobjs, const char *const *missing,
		  size_t nmissing, const struct compat_env *env, struct compat_verdict *out);

/* The JSON name of a class ("forced-safe"), and its words for a table. */
const char *compat_class_name(enum compat_class c);
const char *compat_class_text(enum compat_class c);
/* Words for a cover ("covered by the preload library"), "" for none. */
const char *compat_cover_text(enum compat_cover c);
/* The JSON name of a cover ("preload"), NULL for none. */
const char *compat_cover_name(enum compat_cover c);

#endif
