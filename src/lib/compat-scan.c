// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Reading ELF files for the compatibility verdict (compat-scan.h): the
 * section headers, the notes (of the sections, and of PT_NOTE for a file
 * without section headers) and every symbol of .dynsym and .symtab, each
 * compared with the rows of compat_rules[]. libelf reads the file with
 * pread (ELF_C_READ, never a mapping a truncation could turn into SIGBUS)
 * and checks every offset against the file's size.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "c.h"
#include "compat-scan.h"

/* A symbol table larger than this is not read (nothing real comes near). */
#define SYMTAB_READ_MAX		(512ULL << 20)

bool compat_applies(const struct elf_cet_info *info)
{
	if (!info->x86 || info->elfclass != ELFCLASS64 || info->machine != EM_X86_64)
		return false;
	return info->kind == ELF_KIND_EXEC || info->kind == ELF_KIND_STATIC ||
	       info->kind == ELF_KIND_PIE || info->kind == ELF_KIND_STATIC_PIE ||
	       info->kind == ELF_KIND_DYN;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* Every rule of kind @m that @name matches, recorded in @o. */
static void match_name(struct compat_object *o, enum compat_match m, const char *name)
{
	for (size_t r = 0; r < compat_nrules; r++)
		if (compat_rules[r].match == m && compat_rule_matches(&compat_rules[r], name))
			compat_object_hit(o, (unsigned int)r, name);
}

/* A note is named "note OWNER/TYPE" (its owner alone says little). */
static void match_note(struct compat_object *o, const char *owner, unsigned int type)
{
	char what[48];

	for (size_t r = 0; r < compat_nrules; r++) {
		if (compat_rules[r].match == COMPAT_M_NOTE && compat_rules[r].note_type == type &&
		    compat_rule_matches(&compat_rules[r], owner)) {
			snprintf(what, sizeof(what), "note %s/%u", owner, type);
			compat_object_hit(o, (unsigned int)r, what);
		}
	}
}

/* The notes in @d (of type ELF_T_NHDR, as libelf converted it). */
static void scan_notes(struct compat_object *o, Elf_Data *d)
{
	GElf_Nhdr nh;
	size_t off = 0, next, name_off, desc_off;

	while (d && off < d->d_size &&
	       (next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		char owner[16];

		/* the owner is NUL-terminated within n_namesz; gelf_getnote
		 * checked that it lies inside the data */
		if (nh.n_namesz > 0 && nh.n_namesz <= sizeof(owner)) {
			memcpy(owner, (const char *)d->d_buf + name_off, nh.n_namesz);
			owner[nh.n_namesz - 1] = '\0';
			match_note(o, owner, nh.n_type);
		}
		off = next;
	}
}

static void scan_symbols(struct compat_object *o, Elf *e, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *d;
	size_t n;

	if (sh->sh_entsize == 0 || sh->sh_size > SYMTAB_READ_MAX)
		return;
	d = elf_getdata(scn, NULL);
	if (!d)
		return;
	n = d->d_size / sh->sh_entsize;
	if (n > 1)
		o->symbols = true;
	for (size_t i = 1; i < n; i++) {
		GElf_Sym sym;
		const char *name;
		bool defined;
		unsigned char type;

		if (!gelf_getsym(d, (int)i, &sym))
			break;
		type = GELF_ST_TYPE(sym.st_info);
		if (type == STT_SECTION || type == STT_FILE || sym.st_name == 0)
			continue;
		name = elf_strptr(e, sh->sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		defined = sym.st_shndx != SHN_UNDEF;
		for (size_t r = 0; r < compat_nrules; r++) {
			const struct compat_rule *rule = &compat_rules[r];
			unsigned int w = rule->where;

			if (rule->match != COMPAT_M_SYMBOL)
				continue;
			if (!((w & COMPAT_SYM_IMPORT && !defined) ||
			      (w & COMPAT_SYM_DEFINE && defined) ||
			      (w & COMPAT_SYM_STATIC && defined && o->is_static)))
				continue;
			if (compat_rule_matches(rule, name))
				compat_object_hit(o, (unsigned int)r, name);
		}
	}
}

/* Sections: their names, notes and symbol tables. Whether there were any. */
static bool scan_sections(struct compat_object *o, Elf *e)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	bool any = false;

	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return false;
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		any = true;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (name && *name)
			match_name(o, COMPAT_M_SECTION, name);
		if (sh.sh_type == SHT_NOTE)
			scan_notes(o, elf_getdata(scn, NULL));
		else if (sh.sh_type == SHT_DYNSYM || sh.sh_type == SHT_SYMTAB)
			scan_symbols(o, e, scn, &sh);
	}
	return any;
}

/* Without section headers (sstrip): the notes of the PT_NOTE segments. */
static void scan_note_segments(struct compat_object *o, Elf *e)
{
	size_t phnum;

	if (elf_getphdrnum(e, &phnum) != 0)
		return;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_NOTE && ph.p_filesz)
			scan_notes(o, elf_getdata_rawchunk(e, (int64_t)ph.p_offset,
							   ph.p_filesz, ELF_T_NHDR));
	}
}

int compat_scan_path(const char *path, const char *name, const struct elf_cet_info *info,
		     struct compat_object *out)
{
	struct stat st;
	Elf *e = NULL;
	int fd, rc = 0;

	memset(out, 0, sizeof(*out));
	out->path = path;
	out->marked = elf_cet_shstk_marked(info);
	out->is_static = info->kind == ELF_KIND_STATIC || info->kind == ELF_KIND_STATIC_PIE;
	match_name(out, COMPAT_M_OBJECT, base_name(path));
	if (name)
		match_name(out, COMPAT_M_OBJECT, base_name(name));

	if (elf_version(EV_CURRENT) == EV_NONE)
		return out->rc = -ENOTSUP;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return out->rc = -errno;
	if (fstat(fd, &st) < 0)
		rc = -errno;
	else if (!S_ISREG(st.st_mode))
		rc = -EINVAL;
	else if (!(e = elf_begin(fd, ELF_C_READ, NULL)))
		rc = ELF_CET_ECORRUPT;
	else if (elf_kind(e) != ELF_K_ELF)
		rc = ELF_CET_ENOTELF;
	else if (!scan_sections(out, e))
		scan_note_segments(out, e);
	if (e)
		elf_end(e);
	close(fd);
	return out->rc = rc;
}

/* ---- closures ---------------------------------------------------------- */

/* One object's scan, kept per resolved object of the resolver. */
struct cached {
	const struct elf_dep_obj *key;
	struct compat_object obj;
	struct cached *next;
};

#define CACHE_BUCKETS	509

struct compat_ctx {
	struct elf_deps_ctx *deps;
	bool own_deps;
	struct cached *bucket[CACHE_BUCKETS];
	/* the last verdict's objects and missing names (it points into them) */
	struct compat_object *objs;
	size_t cap;
	char **missing;
	size_t nmissing;
};

int compat_ctx_new(struct compat_ctx **ctx, struct elf_deps_ctx *deps)
{
	struct compat_ctx *c = calloc(1, sizeof(*c));
	int rc;

	if (!c)
		return -ENOMEM;
	c->deps = deps;
	if (!deps) {
		rc = elf_deps_ctx_new(&c->deps, NULL, NULL);
		if (rc < 0) {
			free(c);
			return rc;
		}
		c->own_deps = true;
	}
	*ctx = c;
	return 0;
}

static void free_missing(struct compat_ctx *c)
{
	for (size_t i = 0; i < c->nmissing; i++)
		free(c->missing[i]);
	free(c->missing);
	c->missing = NULL;
	c->nmissing = 0;
}

void compat_ctx_free(struct compat_ctx *c)
{
	if (!c)
		return;
	for (size_t b = 0; b < CACHE_BUCKETS; b++) {
		for (struct cached *n = c->bucket[b], *next; n; n = next) {
			next = n->next;
			free(n);
		}
	}
	free(c->objs);
	free_missing(c);
	if (c->own_deps)
		elf_deps_ctx_free(c->deps);
	free(c);
}

/* The scan of @o (resolved by the context's resolver, so stable), cached. */
static const struct compat_object *scan_cached(struct compat_ctx *c, const struct elf_dep_obj *o)
{
	size_t b = ((uintptr_t)o >> 4) % CACHE_BUCKETS;
	struct cached *n;

	for (n = c->bucket[b]; n; n = n->next)
		if (n->key == o)
			return &n->obj;
	n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->key = o;
	if (o->rc) {
		n->obj.path = o->path ? o->path : o->name;
		n->obj.rc = o->rc;
	} else {
		compat_scan_path(o->path, o->name, &o->info, &n->obj);
	}
	n->next = c->bucket[b];
	c->bucket[b] = n;
	return &n->obj;
}

static int keep_objects(struct compat_ctx *c, size_t n)
{
	if (n > c->cap) {
		struct compat_object *no = realloc(c->objs, n * sizeof(*no));

		if (!no)
			return -ENOMEM;
		c->objs = no;
		c->cap = n;
	}
	return 0;
}

int compat_judge_path(struct compat_ctx *c, const char *path, const struct compat_env *env,
		      struct compat_verdict *out)
{
	struct elf_closure cl;
	int rc;

	free_missing(c);
	if (keep_objects(c, 1) < 0)
		return -ENOMEM;
	rc = elf_deps_closure(c->deps, path, NULL, &cl);
	if (rc == -ENOMEM)
		return rc;
	if (rc || !cl.nobjs) {
		/* the program itself cannot be read: a verdict too */
		memset(&c->objs[0], 0, sizeof(c->objs[0]));
		c->objs[0].path = path;
		c->objs[0].rc = rc ? rc : -EINVAL;
		compat_judge(c->objs, 1, NULL, 0, env, out);
		if (!rc)
			elf_closure_free(&cl);
		return 0;
	}
	if (!compat_applies(&cl.objs[0]->info)) {
		elf_closure_free(&cl);
		memset(out, 0, sizeof(*out));
		out->cls = COMPAT_NA;
		return 0;
	}
	if (keep_objects(c, cl.nobjs) < 0 ||
	    (cl.nmissing && !(c->missing = calloc(cl.nmissing, sizeof(char *))))) {
		elf_closure_free(&cl);
		return -ENOMEM;
	}
	for (size_t i = 0; i < cl.nobjs; i++) {
		const struct compat_object *o = scan_cached(c, cl.objs[i]);

		if (!o) {
			elf_closure_free(&cl);
			return -ENOMEM;
		}
		c->objs[i] = *o;
	}
	c->objs[0].path = path;		/* as the caller names it */
	/* a dynamic section that cannot be read (a separate .debug file):
	 * the closure is not known */
	if (!c->objs[0].rc && cl.objs[0]->dyn_rc)
		c->objs[0].rc = cl.objs[0]->dyn_rc;
	for (size_t i = 0; i < cl.nmissing; i++) {
		c->missing[i] = strdup(cl.missing[i]);
		if (!c->missing[i]) {
			elf_closure_free(&cl);
			return -ENOMEM;
		}
		c->nmissing++;
	}
	compat_judge(c->objs, cl.nobjs, (const char *const *)c->missing, c->nmissing, env, out);
	elf_closure_free(&cl);
	return 0;
}
