/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Why a process runs without a shadow stack, judged the way glibc >= 2.39
 * (built with CET) decides at start-up and at dlopen (sysdeps/x86_64/dl-cet.c
 * of 2.41), from what cetctl could read: the system's support, the process's
 * loader, its GLIBC_TUNABLES and the marking of its objects in the loader's
 * order. Pure: no file is read here, nothing printed.
 *
 * glibc 2.41, the facts this follows:
 * - SHSTK is usable only when GLIBC_TUNABLES asks for it with
 *   glibc.cpu.hwcaps=SHSTK (upstream never sets it by default; a distribution
 *   that wants it on patches glibc); glibc.cpu.hwcaps=-SHSTK takes it away.
 * - glibc.cpu.x86_shstk=off: never; =on: on even when a library is not marked
 *   (the program itself must still be); =permissive: not locked, and a later
 *   dlopen of an unmarked object turns it off instead of failing.
 * - At start-up, the program and every object of its DT_NEEDED closure must
 *   be marked (ld.so itself is not checked). By default a later dlopen of an
 *   unmarked object fails while the shadow stack is on.
 * - GLIBC_TUNABLES is a list of name=value pairs separated by ':'; a later
 *   pair overrides an earlier one of the same name; a string that ends
 *   inside a name or has a second '=' in a value is ignored whole;
 *   glibc.rtld.enable_secure=1 makes glibc ignore the string's tunables.
 */
#ifndef CETCTL_WHY_OFF_H
#define CETCTL_WHY_OFF_H

#include <stdbool.h>
#include <stddef.h>

enum why_off_reason {
	WHY_OFF_NONE = 0,	/* not judged: the process runs with one, or was not read */
	WHY_OFF_NO_SUPPORT,	/* the CPU or the kernel cannot run user shadow stacks */
	WHY_OFF_GLIBC_NO_CET,	/* its glibc does not manage shadow stacks */
	WHY_OFF_TUNABLE_OFF,	/* GLIBC_TUNABLES turned them off */
	WHY_OFF_UNMARKED,	/* the program or a loaded object is not marked */
	WHY_OFF_NOT_REQUESTED,	/* glibc could, all marked, nothing asked */
	WHY_OFF_KERNEL_POLICY,	/* asked, all marked: the kernel refuses marked programs */
	WHY_OFF_UNKNOWN,	/* what could be read does not explain it */
};

/* glibc.cpu.x86_shstk */
enum glibc_shstk_ctl {
	GLIBC_SHSTK_DEFAULT = 0,	/* absent or a value glibc ignores */
	GLIBC_SHSTK_ON,
	GLIBC_SHSTK_OFF,
	GLIBC_SHSTK_PERMISSIVE,
};

struct glibc_tunables {
	bool present;			/* a GLIBC_TUNABLES variable was seen */
	bool ignored;			/* glibc ignores it: malformed, or enable_secure=1 */
	int hwcaps_shstk;		/* glibc.cpu.hwcaps: +1 SHSTK, -1 -SHSTK, 0 not named */
	enum glibc_shstk_ctl x86_shstk;
};

/*
 * Add one GLIBC_TUNABLES value (@len bytes, not NUL-terminated) to @t, the
 * way glibc applies them in environment order; start from a zeroed @t.
 */
void glibc_tunables_add(struct glibc_tunables *t, const char *value, size_t len);
/*
 * Parse a NUL-separated environment block (/proc/PID/environ, @len bytes)
 * into @t, taking every GLIBC_TUNABLES entry in order.
 */
void glibc_tunables_from_environ(const char *env, size_t len, struct glibc_tunables *t);

/* One object of the process, as read: what the order and the verdict need. */
struct why_obj {
	const char *path;		/* as mapped (maps), or the program's exe */
	const char *soname;		/* DT_SONAME, NULL when none */
	const char *const *needed;	/* DT_NEEDED names */
	size_t nneeded;
	const char *interp;		/* PT_INTERP (the program only), NULL when none */
	unsigned long addr;		/* lowest mapped address, 0 for the program */
	int marking;			/* CET_X86_FEATURE_1_* bits, or -errno (unknown) */
};

/*
 * The loader's order of @objs (the program is objs[0]): the program, then
 * its DT_NEEDED closure breadth-first (each name matched to a mapped object
 * by DT_SONAME or file name), the interpreter if no object needed it; then
 * the objects no start-up object needed (dlopen'ed), most recently mapped
 * first: their load order is not recorded, and the kernel places later
 * mappings lower, so this is the highest address first (an approximation).
 * @order gets n indexes; returns how many of them are start-up objects.
 */
size_t why_loader_order(const struct why_obj *objs, size_t n, size_t *order);

/* The facts, gathered by the caller. */
struct why_off_facts {
	unsigned int lacks;		/* cet_sysinfo_lacks(): CET_LACKS_* bits */
	/* the kernel's legacy-ELF policy (our series; mainline has none)
	 * refuses the shadow-stack interface to SHSTK- or IBT-marked programs:
	 * cet_sysinfo_legacy_policy() said "block" */
	bool kernel_blocks_marked;
	/* the process's loader (ld.so): "" when none is mapped */
	const char *loader;
	const char *loader_version;	/* glibc release it says it is, "" unknown */
	int loader_marking;		/* its marking, or -errno */
	/* GLIBC_TUNABLES of the process; @tunables_errno when environ was unreadable */
	int tunables_errno;
	struct glibc_tunables tun;
	/* the objects in the loader's order (why_loader_order()); when the
	 * mapped objects could not be read, @objects_errno */
	int objects_errno;
	const struct why_obj *objs;
	const size_t *order;
	size_t nobjs, nstartup;
};

struct why_off {
	enum why_off_reason reason;
	const char *object;		/* UNMARKED: the first unmarked object; the
					 * loader for GLIBC_NO_CET (points into facts) */
	const char *detail;		/* static text: which fact decided */
	bool later;			/* UNMARKED: mapped after start-up (dlopen) */
};

/* Judge why the process of @f runs without a shadow stack. */
void why_off_decide(const struct why_off_facts *f, struct why_off *out);

/* The reason's word (table, JSON): "no-support", "unmarked" ...; NULL for NONE. */
const char *why_off_name(enum why_off_reason r);

/* One sentence for the verdict, e.g. "/usr/lib/libx.so is not marked ...". */
const char *why_off_sentence(const struct why_off *w, char *buf, size_t size);

/*
 * The glibc release named in a loader's or libc's banner ("... release
 * version 2.41 ..."), found in the @len bytes at @buf; copied to @out.
 * Returns true when found.
 */
bool why_glibc_banner_version(const char *buf, size_t len, char *out, size_t size);

#endif
