// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The compatibility verdict (compat.h): facts about the objects in, one
 * verdict out. Nothing here reads a file or prints.
 */
#include <fnmatch.h>
#include <string.h>

#include "c.h"
#include "compat.h"
#include "elf-notes.h"

bool compat_rule_matches(const struct compat_rule *r, const char *name)
{
	/* the literal head first: nearly every symbol fails at its first byte */
	size_t lit = strcspn(r->pattern, "*?[\\");

	if (strncmp(name, r->pattern, lit) != 0)
		return false;
	if (!r->pattern[lit])
		return name[lit] == '\0';
	return fnmatch(r->pattern, name, 0) == 0;
}

void compat_object_hit(struct compat_object *obj, unsigned int rule, const char *what)
{
	size_t slot = obj->nhits, least = 0;

	for (size_t i = 0; i < obj->nhits; i++) {
		if (obj->hits[i].rule == rule)
			return;		/* one per rule: the first seen */
		if (compat_rules[obj->hits[i].rule].cls < compat_rules[obj->hits[least].rule].cls)
			least = i;
	}
	if (slot == COMPAT_HITS_MAX) {
		if (compat_rules[rule].cls <= compat_rules[obj->hits[least].rule].cls)
			return;
		slot = least;
	} else {
		obj->nhits++;
	}
	obj->hits[slot].rule = rule;
	/* truncated, NUL-terminated; a long C++ name keeps its head */
	strncpy(obj->hits[slot].what, what, COMPAT_WHAT_MAX - 1);
	obj->hits[slot].what[COMPAT_WHAT_MAX - 1] = '\0';
}

/* What mends @mends in a program, @is_static or not, under @env. */
static enum compat_cover cover_of(enum compat_mends mends, bool is_static,
				  const struct compat_env *env)
{
	if (mends == COMPAT_MENDS_NONE)
		return COMPAT_COVER_NONE;
	/* a static program carries its own C library and gets no preload */
	if (is_static)
		return COMPAT_COVER_STATIC;
	if (env->glibc_manages)
		return COMPAT_COVER_GLIBC;
	if (!env->preload)
		return COMPAT_COVER_NO_PRELOAD;
	if (mends == COMPAT_MENDS_UCONTEXT && !env->preload_ucontext)
		return COMPAT_COVER_NOT_UCONTEXT;
	return COMPAT_COVER_PRELOAD;
}

static bool mended(enum compat_cover c)
{
	return c == COMPAT_COVER_PRELOAD || c == COMPAT_COVER_GLIBC;
}

/* Add @f to @out, worst first (stable among equals); count what does not fit. */
static void add_finding(struct compat_verdict *out, const struct compat_finding *f)
{
	size_t i = out->nfindings;

	if (i == COMPAT_FINDINGS_MAX) {
		if (f->cls <= out->findings[i - 1].cls) {
			out->nleft++;
			return;
		}
		out->nleft++;		/* the least bad one falls out */
		i--;
	} else {
		out->nfindings++;
	}
	while (i > 0 && out->findings[i - 1].cls < f->cls) {
		out->findings[i] = out->findings[i - 1];
		i--;
	}
	out->findings[i] = *f;
}

static const char *unreadable_reason(int rc)
{
	if (rc == ELF_CET_ENOTELF)
		return "not an ELF file";
	if (rc == ELF_CET_ECORRUPT)
		return "truncated or corrupt ELF file";
	return "cannot be read";
}

/* The findings of one object. */
static void judge_object(const struct compat_object *o, bool self, bool prog_static,
			 const struct compat_env *env, struct compat_verdict *out)
{
	struct compat_finding f = { .object = o->path, .self = self };

	if (o->rc) {
		f.cls = COMPAT_UNKNOWN;
		f.reason = unreadable_reason(o->rc);
		f.err = o->rc;
		add_finding(out, &f);
		return;
	}
	if (o->marked)
		return;		/* its authors' claim, which the loader acts on */
	for (size_t i = 0; i < o->nhits; i++) {
		const struct compat_rule *r = &compat_rules[o->hits[i].rule];

		f.cover = cover_of(r->mends, prog_static, env);
		f.cls = r->mends && !mended(f.cover) ? COMPAT_SWITCHES_UNCOVERED : r->cls;
		f.what = o->hits[i].what;
		f.reason = r->reason;
		add_finding(out, &f);
	}
	if (!o->symbols) {
		/* nothing to look for what switches stacks: only a mark found
		 * without symbols (a stripped Go program's section) is evidence */
		f.cover = COMPAT_COVER_NONE;
		f.cls = COMPAT_UNKNOWN;
		f.what = NULL;
		f.reason = o->is_static ? "static program without symbols: nothing to judge by" :
			   "no symbol table: nothing to judge by";
		add_finding(out, &f);
	}
}

void compat_judge(const struct compat_object *objs, size_t nobjs, const char *const *missing,
		  size_t nmissing, const struct compat_env *env, struct compat_verdict *out)
{
	bool prog_static = nobjs && objs[0].is_static;
	size_t unmarked = nobjs;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < nobjs; i++) {
		judge_object(&objs[i], i == 0, prog_static, env, out);
		if (unmarked == nobjs && (objs[i].rc || !objs[i].marked))
			unmarked = i;
	}
	for (size_t i = 0; i < nmissing; i++) {
		struct compat_finding f = {
			.cls = COMPAT_UNKNOWN, .what = missing[i],
			.reason = "a library that was not found (the loader would fail)",
		};

		add_finding(out, &f);
	}
	if (out->nfindings && out->findings[0].cls > COMPAT_FORCED_SAFE) {
		out->cls = out->findings[0].cls;
		out->main = out->findings[0];
		return;
	}
	if (nobjs && unmarked == nobjs) {
		out->cls = COMPAT_MARKED;
		out->main = (struct compat_finding){
			.cls = COMPAT_MARKED, .object = objs[0].path, .self = true,
			.reason = "every object is SHSTK-marked",
		};
		return;
	}
	out->cls = COMPAT_FORCED_SAFE;
	if (out->nfindings) {		/* what is mended: the longjmp family */
		out->main = out->findings[0];
		return;
	}
	out->main = (struct compat_finding){
		.cls = COMPAT_FORCED_SAFE, .object = nobjs ? objs[unmarked].path : NULL,
		.self = unmarked == 0,
		.reason = "not marked; nothing found that switches stacks or generates code",
	};
}

static const struct {
	const char *name, *text;
} class_words[] = {
	[COMPAT_NA]			= { "n/a", "-" },
	[COMPAT_MARKED]			= { "marked", "marked" },
	[COMPAT_FORCED_SAFE]		= { "forced-safe", "forced-safe" },
	[COMPAT_SWITCHES_COVERED]	= { "switches-covered", "switches stacks, covered" },
	[COMPAT_SWITCHES_UNCOVERED]	= { "switches-uncovered", "switches stacks, not covered" },
	[COMPAT_UNKNOWN]		= { "unknown", "unknown" },
	[COMPAT_INCOMPATIBLE]		= { "incompatible", "incompatible" },
};

const char *compat_class_name(enum compat_class c)
{
	return (size_t)c < ARRAY_SIZE(class_words) ? class_words[c].name : "?";
}

const char *compat_class_text(enum compat_class c)
{
	return (size_t)c < ARRAY_SIZE(class_words) ? class_words[c].text : "?";
}

static const struct {
	const char *name, *text;
} cover_words[] = {
	[COMPAT_COVER_NONE]		= { NULL, "" },
	[COMPAT_COVER_PRELOAD]		= { "preload", "mended by the preload library" },
	[COMPAT_COVER_GLIBC]		= { "glibc", "mended by glibc" },
	[COMPAT_COVER_NO_PRELOAD]	= { "no-preload", "the preload library is not used" },
	[COMPAT_COVER_STATIC]		= { "static", "a static program gets no preload library" },
	[COMPAT_COVER_NOT_UCONTEXT]	= { "no-ucontext",
					    "the preload library does not mend ucontext" },
};

const char *compat_cover_text(enum compat_cover c)
{
	return (size_t)c < ARRAY_SIZE(cover_words) ? cover_words[c].text : "";
}

const char *compat_cover_name(enum compat_cover c)
{
	return (size_t)c < ARRAY_SIZE(cover_words) ? cover_words[c].name : NULL;
}
