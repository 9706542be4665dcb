// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Why a process runs without a shadow stack: see why-off.h for the glibc
 * facts this follows. Pure functions over what the caller read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cet-abi.h"
#include "sysinfo-cet.h"
#include "why-off.h"

#define TUNABLES_NAME		"GLIBC_TUNABLES="
#define HWCAPS			"glibc.cpu.hwcaps"
#define X86_SHSTK		"glibc.cpu.x86_shstk"
#define ENABLE_SECURE		"glibc.rtld.enable_secure"

static bool span_is(const char *p, size_t len, const char *word)
{
	return strlen(word) == len && memcmp(p, word, len) == 0;
}

/* glibc.cpu.hwcaps: a comma list; the last mention of SHSTK wins. */
static int hwcaps_shstk(const char *v, size_t len)
{
	int state = 0;
	size_t i = 0;

	while (i < len) {
		size_t n = 0;
		const char *item = v + i;

		while (i + n < len && item[n] != ',')
			n++;
		i += n + 1;
		if (n && item[0] == '-' && span_is(item + 1, n - 1, "SHSTK"))
			state = -1;
		else if (span_is(item, n, "SHSTK"))
			state = 1;
	}
	return state;
}

/* A tunable's value is a number glibc reads as 1 (enable_secure). */
static bool value_is_one(const char *v, size_t len)
{
	size_t i = 0;

	if (!len)
		return false;
	if (len > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X'))
		i = 2;
	while (i < len - 1 && v[i] == '0')
		i++;
	return i == len - 1 && v[i] == '1';
}

void glibc_tunables_add(struct glibc_tunables *t, const char *value, size_t len)
{
	/* the settings of this string, applied only when glibc would */
	const char *hw = NULL, *shstk = NULL;
	size_t hwlen = 0, shstklen = 0, i = 0;
	bool secure = false;

	t->present = true;
	while (i < len) {
		size_t name = i, vstart, vend;

		while (i < len && value[i] != '=' && value[i] != ':')
			i++;
		if (i == len) {
			/* the string ended inside a name: glibc drops it all */
			t->ignored = true;
			return;
		}
		if (value[i] == ':') {	/* a name without a value: skipped */
			i++;
			continue;
		}
		vstart = ++i;
		while (i < len && value[i] != '=' && value[i] != ':')
			i++;
		if (i < len && value[i] == '=') {
			t->ignored = true;	/* a second '=': glibc drops it all */
			return;
		}
		vend = i;
		if (i < len)
			i++;	/* the ':' */
		if (span_is(value + name, vstart - 1 - name, HWCAPS)) {
			hw = value + vstart;
			hwlen = vend - vstart;
		} else if (span_is(value + name, vstart - 1 - name, X86_SHSTK)) {
			shstk = value + vstart;
			shstklen = vend - vstart;
		} else if (span_is(value + name, vstart - 1 - name, ENABLE_SECURE)) {
			secure = value_is_one(value + vstart, vend - vstart);
		}
	}
	if (secure) {
		t->ignored = true;
		return;
	}
	if (hw)
		t->hwcaps_shstk = hwcaps_shstk(hw, hwlen);
	if (shstk) {
		if (span_is(shstk, shstklen, "on"))
			t->x86_shstk = GLIBC_SHSTK_ON;
		else if (span_is(shstk, shstklen, "off"))
			t->x86_shstk = GLIBC_SHSTK_OFF;
		else if (span_is(shstk, shstklen, "permissive"))
			t->x86_shstk = GLIBC_SHSTK_PERMISSIVE;
	}
}

void glibc_tunables_from_environ(const char *env, size_t len, struct glibc_tunables *t)
{
	size_t n = strlen(TUNABLES_NAME), i = 0;

	while (i < len) {
		const char *e = env + i;
		size_t elen = strnlen(e, len - i);

		if (elen >= n && memcmp(e, TUNABLES_NAME, n) == 0)
			glibc_tunables_add(t, e + n, elen - n);
		i += elen + 1;
	}
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* The object @name (a DT_NEEDED entry) is, among the mapped ones; n if none. */
static size_t match_name(const struct why_obj *objs, size_t n, const char *name)
{
	size_t i;

	if (strchr(name, '/')) {
		for (i = 1; i < n; i++)
			if (strcmp(objs[i].path, name) == 0)
				return i;
		name = base_name(name);
	}
	for (i = 1; i < n; i++)
		if (objs[i].soname && strcmp(objs[i].soname, name) == 0)
			return i;
	for (i = 1; i < n; i++)
		if (strcmp(base_name(objs[i].path), name) == 0)
			return i;
	return n;
}

size_t why_loader_order(const struct why_obj *objs, size_t n, size_t *order)
{
	bool *seen;
	size_t head = 0, len = 0, startup, i;

	if (!n)
		return 0;
	seen = calloc(n, sizeof(*seen));
	if (!seen) {
		/* no order without memory: the program, then as mapped */
		for (i = 0; i < n; i++)
			order[i] = i;
		return 1;
	}
	order[len++] = 0;
	seen[0] = true;
	while (head < len) {
		const struct why_obj *cur = &objs[order[head++]];

		for (i = 0; i < cur->nneeded; i++) {
			size_t m = match_name(objs, n, cur->needed[i]);

			if (m < n && !seen[m]) {
				seen[m] = true;
				order[len++] = m;
			}
		}
	}
	if (objs[0].interp) {
		size_t m = match_name(objs, n, objs[0].interp);

		if (m < n && !seen[m]) {
			seen[m] = true;
			order[len++] = m;
		}
	}
	startup = len;
	/* the rest: highest address first */
	while (len < n) {
		size_t best = n;

		for (i = 1; i < n; i++)
			if (!seen[i] && (best == n || objs[i].addr > objs[best].addr))
				best = i;
		seen[best] = true;
		order[len++] = best;
	}
	free(seen);
	return startup;
}

static bool unmarked(int marking)
{
	return marking >= 0 && !(marking & (int)CET_X86_FEATURE_1_SHSTK);
}

/* The first unmarked object of order[from, to), NULL when none. */
static const char *first_unmarked(const struct why_off_facts *f, size_t from, size_t to)
{
	for (size_t i = from; i < to && i < f->nobjs; i++)
		if (unmarked(f->objs[f->order[i]].marking))
			return f->objs[f->order[i]].path;
	return NULL;
}

static void set(struct why_off *out, enum why_off_reason r, const char *object, const char *detail)
{
	out->reason = r;
	out->object = object;
	out->detail = detail;
}

/* NO_SUPPORT or GLIBC_NO_CET when they apply; false otherwise. */
static bool system_reason(const struct why_off_facts *f, struct why_off *out)
{
	if (f->lacks & CET_LACKS_KERNEL) {
		set(out, WHY_OFF_NO_SUPPORT, NULL, "the kernel has no user shadow-stack support");
		return true;
	}
	if (f->lacks & CET_LACKS_CPU) {
		set(out, WHY_OFF_NO_SUPPORT, NULL, "the CPU has no user shadow stacks (cpuinfo lacks user_shstk)");
		return true;
	}
	if (f->objects_errno) {
		set(out, WHY_OFF_UNKNOWN, NULL, "its program or its mapped objects could not be read");
		return true;
	}
	if (!f->loader || !*f->loader) {
		set(out, WHY_OFF_UNKNOWN, NULL,
		    "no glibc loader is mapped: a static program, or another C library");
		return true;
	}
	if (f->loader_version && *f->loader_version &&
	    !cet_glibc_manages_shstk(f->loader_version)) {
		set(out, WHY_OFF_GLIBC_NO_CET, f->loader,
		    "it is older than " CET_GLIBC_MANAGES_SHSTK);
		return true;
	}
	if (unmarked(f->loader_marking)) {
		set(out, WHY_OFF_GLIBC_NO_CET, f->loader,
		    "it is not built with CET: its loader is not marked");
		return true;
	}
	return false;
}

void why_off_decide(const struct why_off_facts *f, struct why_off *out)
{
	const struct glibc_tunables *t = &f->tun;
	bool tun_known = f->tunables_errno == 0;
	bool heeded = tun_known && t->present && !t->ignored;
	const char *obj;

	memset(out, 0, sizeof(*out));
	if (system_reason(f, out))
		return;
	if (heeded && t->x86_shstk == GLIBC_SHSTK_OFF) {
		set(out, WHY_OFF_TUNABLE_OFF, NULL, "GLIBC_TUNABLES has glibc.cpu.x86_shstk=off");
		return;
	}
	if (heeded && t->hwcaps_shstk < 0) {
		set(out, WHY_OFF_TUNABLE_OFF, NULL, "GLIBC_TUNABLES has glibc.cpu.hwcaps=-SHSTK");
		return;
	}
	/* the program must be marked whatever the tunables say */
	if (f->nobjs && unmarked(f->objs[f->order[0]].marking)) {
		set(out, WHY_OFF_UNMARKED, f->objs[f->order[0]].path,
		    "glibc enables shadow stacks only for a marked program");
		return;
	}
	/* x86_shstk=on keeps it on whatever the libraries are */
	if (!(heeded && t->x86_shstk == GLIBC_SHSTK_ON) &&
	    (obj = first_unmarked(f, 1, f->nstartup)) != NULL) {
		set(out, WHY_OFF_UNMARKED, obj,
		    "glibc enables shadow stacks only when every object loaded at start-up is");
		return;
	}
	if (!tun_known) {
		set(out, WHY_OFF_UNKNOWN, NULL,
		    "its environment (GLIBC_TUNABLES) could not be read");
		return;
	}
	if (!heeded || t->hwcaps_shstk <= 0) {
		set(out, WHY_OFF_NOT_REQUESTED, NULL, t->ignored ?
		    "glibc ignored its malformed (or enable_secure) GLIBC_TUNABLES" :
		    "nothing asked: glibc enables them only with GLIBC_TUNABLES=glibc.cpu.hwcaps=SHSTK, "
		    "unless the distribution built it to by default");
		return;
	}
	/* asked, the program marked: glibc's request, refused by the kernel */
	if (f->kernel_blocks_marked) {
		set(out, WHY_OFF_KERNEL_POLICY, NULL,
		    "the kernel's legacy-ELF policy (block) refuses the shadow-stack interface to "
		    "programs marked SHSTK or IBT, so glibc's request failed (boot parameter "
		    "shstk_legacy_elf=allow lets it through)");
		return;
	}
	/* asked, all start-up objects marked: only a permissive dlopen turns it off */
	if (t->x86_shstk == GLIBC_SHSTK_PERMISSIVE &&
	    (obj = first_unmarked(f, f->nstartup, f->nobjs)) != NULL) {
		set(out, WHY_OFF_UNMARKED, obj,
		    "glibc.cpu.x86_shstk=permissive let it turn the shadow stack off");
		out->later = true;
		return;
	}
	set(out, WHY_OFF_UNKNOWN, NULL,
	    "asked for, and every object is marked: the program may have turned it off itself, "
	    "or glibc ignored GLIBC_TUNABLES (a setuid program)");
}

const char *why_off_name(enum why_off_reason r)
{
	switch (r) {
	case WHY_OFF_NO_SUPPORT:	return "no-support";
	case WHY_OFF_GLIBC_NO_CET:	return "glibc-without-cet";
	case WHY_OFF_TUNABLE_OFF:	return "tunable-off";
	case WHY_OFF_UNMARKED:		return "unmarked";
	case WHY_OFF_NOT_REQUESTED:	return "not-requested";
	case WHY_OFF_KERNEL_POLICY:	return "kernel-policy";
	case WHY_OFF_UNKNOWN:		return "unknown";
	case WHY_OFF_NONE:		break;
	}
	return NULL;
}

const char *why_off_sentence(const struct why_off *w, char *buf, size_t size)
{
	switch (w->reason) {
	case WHY_OFF_UNMARKED:
		snprintf(buf, size, "%s%s is not marked: %s", w->object ? w->object : "?",
			 w->later ? ", loaded after start-up," : "", w->detail);
		break;
	case WHY_OFF_GLIBC_NO_CET:
		snprintf(buf, size, "its glibc (%s) does not manage shadow stacks: %s "
			 "(cetctl run --shstk starts a program with one)",
			 w->object ? w->object : "?", w->detail);
		break;
	case WHY_OFF_NONE:
		snprintf(buf, size, "not judged");
		break;
	default:
		snprintf(buf, size, "%s", w->detail);
		break;
	}
	return buf;
}

bool why_glibc_banner_version(const char *buf, size_t len, char *out, size_t size)
{
	static const char key[] = "release version ";
	size_t k = sizeof(key) - 1;
	const char *p = buf, *end = buf + len;

	while (p && (size_t)(end - p) > k) {
		p = memmem(p, (size_t)(end - p), key, k);
		if (!p)
			break;
		p += k;
		if (p < end && *p >= '0' && *p <= '9') {
			size_t n = 0;

			while (p + n < end && n + 1 < size &&
			       ((p[n] >= '0' && p[n] <= '9') || (p[n] == '.' && p + n + 1 < end &&
								p[n + 1] >= '0' && p[n + 1] <= '9')))
				n++;
			memcpy(out, p, n);
			out[n] = '\0';
			return true;
		}
	}
	return false;
}
