// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * DT_NEEDED closure of an ELF program, resolved like glibc's loader (see
 * elf-deps.h for the search order and its one simplification).
 *
 * This file: the context, the object table, the search and the closure;
 * the dynamic section and ld.so.cache are parts of their own
 * (elf-deps-internal.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "c.h"
#include "elf-deps.h"
#include "elf-deps-internal.h"

#define CACHE_READ_MAX	(64U << 20)

struct node {
	struct elf_dep_obj obj;
	struct dyninfo dyn;
	unsigned int seen;	/* closure generation that visited it */
};

/* ---- small helpers ---------------------------------------------------- */

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

int elf_deps_pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return ELF_CET_ECORRUPT;
		done += (size_t)r;
	}
	return 0;
}

int elf_cet_read_path(const char *path, struct elf_cet_info *out)
{
	struct stat st;
	int fd, rc;

	memset(out, 0, sizeof(*out));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
	} else if (!S_ISREG(st.st_mode)) {
		rc = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	} else {
		rc = elf_cet_read_fd(fd, st.st_size, out);
	}
	close(fd);
	return rc;
}

const char *elf_legacy_blocker(const char *path, char *buf, size_t size)
{
	struct elf_cet_info info;
	const char *interp;

	if (elf_cet_read_path(path, &info) < 0)
		return NULL;
	interp = elf_cet_interp64(&info);
	if (interp) {
		snprintf(buf, size, "%s", interp);
		if (elf_cet_read_path(buf, &info) < 0)
			return NULL;
	} else {
		snprintf(buf, size, "%s", path);
	}
	return info.kernel == ELF_KERNEL_BLOCKS ? buf : NULL;
}

int elf_deps_ctx_new(struct elf_deps_ctx **out, const char *ld_cache, const char *sysroot)
{
	struct elf_deps_ctx *ctx = calloc(1, sizeof(*ctx));
	char path[PATH_MAX];
	char *buf;
	long len;
	int fd;

	*out = NULL;
	if (!ctx)
		return -ENOMEM;
	if (sysroot && *sysroot) {
		ctx->sysroot = strdup(sysroot);
		if (!ctx->sysroot) {
			free(ctx);
			return -ENOMEM;
		}
	}
	ctx->tsize = 1024;
	ctx->table = calloc(ctx->tsize, sizeof(*ctx->table));
	if (!ctx->table) {
		elf_deps_ctx_free(ctx);
		return -ENOMEM;
	}
	snprintf(path, sizeof(path), "%s%s", ctx->sysroot ? ctx->sysroot : "",
		 ld_cache ? ld_cache : "/etc/ld.so.cache");
	/* The cache is optional: without it the default directories remain. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0) {
		struct stat st;

		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
		    st.st_size > 0 && st.st_size <= CACHE_READ_MAX) {
			len = st.st_size;
			buf = malloc((size_t)len);
			if (buf && elf_deps_pread_full(fd, buf, (size_t)len, 0) == 0)
				elf_deps_cache_parse(ctx, buf, (size_t)len);
			free(buf);
		}
		close(fd);
	}
	*out = ctx;
	return 0;
}

void elf_deps_ctx_free(struct elf_deps_ctx *ctx)
{
	if (!ctx)
		return;
	for (size_t i = 0; i < ctx->tsize; i++) {
		struct node *n = ctx->table ? ctx->table[i] : NULL;

		if (!n)
			continue;
		free(n->obj.path);
		free(n->obj.name);
		elf_deps_dyninfo_free(&n->dyn);
		free(n);
	}
	free(ctx->table);
	free(ctx->cache_buf);
	free(ctx->cache);
	free(ctx->sysroot);
	free(ctx);
}

/* ---- object table ------------------------------------------------------- */

static int table_grow(struct elf_deps_ctx *ctx)
{
	size_t nsize = ctx->tsize * 2;
	struct node **nt = calloc(nsize, sizeof(*nt));

	if (!nt)
		return -ENOMEM;
	for (size_t i = 0; i < ctx->tsize; i++) {
		struct node *n = ctx->table[i];
		size_t j;

		if (!n)
			continue;
		for (j = hash_str(n->obj.path) & (nsize - 1); nt[j]; j = (j + 1) & (nsize - 1))
			;
		nt[j] = n;
	}
	free(ctx->table);
	ctx->table = nt;
	ctx->tsize = nsize;
	return 0;
}

/* Find or create (reading the file) the node of real path @rpath. */
static struct node *node_get(struct elf_deps_ctx *ctx, const char *rpath, const char *name)
{
	struct node *n;
	size_t j;

	for (j = hash_str(rpath) & (ctx->tsize - 1); ctx->table[j];
	     j = (j + 1) & (ctx->tsize - 1))
		if (strcmp(ctx->table[j]->obj.path, rpath) == 0)
			return ctx->table[j];

	if ((ctx->tcount + 1) * 2 > ctx->tsize) {
		if (table_grow(ctx))
			return NULL;
		for (j = hash_str(rpath) & (ctx->tsize - 1); ctx->table[j];
		     j = (j + 1) & (ctx->tsize - 1))
			;
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->obj.path = strdup(rpath);
	n->obj.name = strdup(name);
	if (!n->obj.path || !n->obj.name) {
		free(n->obj.path);
		free(n->obj.name);
		free(n);
		return NULL;
	}
	n->obj.rc = elf_cet_read_path(rpath, &n->obj.info);
	if (n->obj.rc == 0)
		n->obj.dyn_rc = elf_deps_read_dyninfo(rpath, &n->dyn);
	ctx->table[j] = n;
	ctx->tcount++;
	return n;
}

/* ---- resolution ----------------------------------------------------------- */

/* Expand $ORIGIN/$LIB/$PLATFORM in one search-path element. */
static bool expand_dst(const char *in, size_t len, const char *origin,
		       int elfclass, unsigned int machine, char *out, size_t outsz)
{
	const char *lib = machine == EM_386 ? "lib/i386-linux-gnu" :
			  elfclass == ELFCLASS32 ? "libx32" : "lib/x86_64-linux-gnu";
	const char *platform = machine == EM_386 ? "i686" : "x86_64";
	size_t o = 0;

	for (size_t i = 0; i < len;) {
		const char *rep = NULL;
		size_t skip = 0;

		if (in[i] == '$') {
			static const struct { const char *name; int id; } dsts[] = {
				{ "ORIGIN", 0 }, { "{ORIGIN}", 0 }, { "LIB", 1 },
				{ "{LIB}", 1 }, { "PLATFORM", 2 }, { "{PLATFORM}", 2 },
			};
			for (size_t k = 0; k < ARRAY_SIZE(dsts); k++) {
				size_t l = strlen(dsts[k].name);

				if (len - i - 1 >= l && strncmp(in + i + 1, dsts[k].name, l) == 0) {
					rep = dsts[k].id == 0 ? origin : dsts[k].id == 1 ? lib : platform;
					skip = 1 + l;
					break;
				}
			}
		}
		if (rep) {
			size_t rl = strlen(rep);

			if (o + rl >= outsz)
				return false;
			memcpy(out + o, rep, rl);
			o += rl;
			i += skip;
		} else {
			if (o + 1 >= outsz)
				return false;
			out[o++] = in[i++];
		}
	}
	out[o] = '\0';
	return true;
}

/* Is @path an ELF object of the wanted class and machine? */
static bool candidate_ok(struct elf_deps_ctx *ctx, const char *path, int elfclass,
			 unsigned int machine, char *real, size_t realsz)
{
	unsigned char eh[20];
	struct node *n;
	int fd;
	bool ok;

	if (!realpath(path, real))
		return false;
	(void)realsz;
	/* already known? */
	for (size_t j = hash_str(real) & (ctx->tsize - 1); ctx->table[j];
	     j = (j + 1) & (ctx->tsize - 1)) {
		n = ctx->table[j];
		if (strcmp(n->obj.path, real) == 0)
			return n->obj.rc == 0 && n->obj.info.elfclass == elfclass &&
			       n->obj.info.machine == machine;
	}
	fd = open(real, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return false;
	ok = elf_deps_pread_full(fd, eh, sizeof(eh), 0) == 0 && memcmp(eh, ELFMAG, SELFMAG) == 0 &&
	     eh[EI_CLASS] == elfclass && eh[EI_DATA] == ELFDATA2LSB &&
	     (unsigned int)(eh[18] | eh[19] << 8) == machine;
	close(fd);
	return ok;
}

/* Search a colon-separated @list of directories for @name. */
static bool search_list(struct elf_deps_ctx *ctx, const char *list, const char *name,
			const char *origin, int elfclass, unsigned int machine,
			bool prefix_sysroot, char *found)
{
	const char *p = list;

	while (p && *p) {
		const char *end = strchrnul(p, ':');
		char dir[PATH_MAX], cand[PATH_MAX];

		if (end > p && expand_dst(p, (size_t)(end - p), origin, elfclass, machine,
					  dir, sizeof(dir))) {
			int w = snprintf(cand, sizeof(cand), "%s%s/%s",
					 prefix_sysroot && ctx->sysroot ? ctx->sysroot : "",
					 dir, name);

			if (w > 0 && (size_t)w < sizeof(cand) &&
			    candidate_ok(ctx, cand, elfclass, machine, found, PATH_MAX))
				return true;
		}
		p = *end ? end + 1 : end;
	}
	return false;
}

static const char *default_dirs(int elfclass, unsigned int machine)
{
	if (machine == EM_386)
		return "/lib/i386-linux-gnu:/usr/lib/i386-linux-gnu:/lib32:/usr/lib32:/lib:/usr/lib";
	if (elfclass == ELFCLASS32)
		return "/libx32:/usr/libx32:/lib/x86_64-linux-gnux32:/usr/lib/x86_64-linux-gnux32:/lib:/usr/lib";
	return "/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib64:/usr/lib64:/lib:/usr/lib";
}

static void dirname_of(const char *path, char *out, size_t size)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(out, size, ".");
	else if (slash == path)
		snprintf(out, size, "/");
	else
		snprintf(out, size, "%.*s", (int)(slash - path), path);
}

static bool resolve(struct elf_deps_ctx *ctx, const struct node *req, const struct node *root,
		    const char *name, char *found)
{
	int cls = req->obj.info.elfclass;
	unsigned int mach = req->obj.info.machine;
	char origin[PATH_MAX], rorigin[PATH_MAX];
	const char *env, *hit;

	dirname_of(req->obj.path, origin, sizeof(origin));
	if (strchr(name, '/')) {
		char exp[PATH_MAX], tmp[PATH_MAX];

		/* $ORIGIN etc. are expanded in DT_NEEDED names too */
		if (!expand_dst(name, strlen(name), origin, cls, mach, exp, sizeof(exp)))
			return false;
		/* relative: against the current directory, like the loader */
		snprintf(tmp, sizeof(tmp), "%s%s", exp[0] == '/' && ctx->sysroot ?
			 ctx->sysroot : "", exp);
		return candidate_ok(ctx, tmp, cls, mach, found, PATH_MAX);
	}
	dirname_of(root->obj.path, rorigin, sizeof(rorigin));
	if (!req->dyn.runpath) {
		if (req->dyn.rpath && search_list(ctx, req->dyn.rpath, name, origin, cls, mach,
						  false, found))
			return true;
		if (root != req && !root->dyn.runpath && root->dyn.rpath &&
		    search_list(ctx, root->dyn.rpath, name, rorigin, cls, mach, false, found))
			return true;
	}
	env = getenv("LD_LIBRARY_PATH");
	if (env && *env && search_list(ctx, env, name, origin, cls, mach, false, found))
		return true;
	if (req->dyn.runpath &&
	    search_list(ctx, req->dyn.runpath, name, origin, cls, mach, false, found))
		return true;
	for (size_t i = 0; i < ctx->ncache; i++) {
		char cand[PATH_MAX];

		if (strcmp(ctx->cache[i].key, name) != 0 ||
		    !elf_deps_cache_flags_match(ctx->cache[i].flags, cls, mach))
			continue;
		hit = ctx->cache[i].value;
		snprintf(cand, sizeof(cand), "%s%s", ctx->sysroot ? ctx->sysroot : "", hit);
		if (candidate_ok(ctx, cand, cls, mach, found, PATH_MAX))
			return true;
	}
	return search_list(ctx, default_dirs(cls, mach), name, origin, cls, mach, true, found);
}

/* Names already loaded in this closure: the loader matches a DT_NEEDED
 * name against them (and their DT_SONAME) before searching anything. */
struct loaded {
	const char **names;
	struct node **nodes;
	size_t n, cap;
};

static int loaded_add(struct loaded *l, const char *name, struct node *n)
{
	if (!name)
		return 0;
	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 32;
		const char **nn = realloc(l->names, nc * sizeof(*nn));
		struct node **nd;

		if (!nn)
			return -ENOMEM;
		l->names = nn;
		nd = realloc(l->nodes, nc * sizeof(*nd));
		if (!nd)
			return -ENOMEM;
		l->nodes = nd;
		l->cap = nc;
	}
	l->names[l->n] = name;
	l->nodes[l->n] = n;
	l->n++;
	return 0;
}

static struct node *loaded_find(const struct loaded *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->names[i], name) == 0)
			return l->nodes[i];
	return NULL;
}

static int push_missing(struct elf_closure *c, const char *name)
{
	char **nm;

	for (size_t i = 0; i < c->nmissing; i++)
		if (strcmp(c->missing[i], name) == 0)
			return 0;
	nm = realloc(c->missing, (c->nmissing + 1) * sizeof(*nm));
	if (!nm)
		return -ENOMEM;
	c->missing = nm;
	c->missing[c->nmissing] = strdup(name);
	if (!c->missing[c->nmissing])
		return -ENOMEM;
	c->nmissing++;
	return 0;
}

/*
 * One breadth-first walk, in the loader's order: the program, its
 * interpreter, then each object's DT_NEEDED. Kept as one function (about
 * 100 lines) because the queue, the set of names already loaded and the
 * walk's generation mark are shared by every step and freed at one exit.
 */
int elf_deps_closure(struct elf_deps_ctx *ctx, const char *path,
		     const struct elf_cet_info *info, struct elf_closure *out)
{
	char real[PATH_MAX];
	struct node *root, **queue = NULL;
	struct loaded ld = { 0 };
	size_t qlen = 0, qcap = 0, head = 0;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (!realpath(path, real))
		return -errno;
	root = node_get(ctx, real, path);
	if (!root)
		return -ENOMEM;
	if (root->obj.rc)
		return root->obj.rc;
	(void)info;
	ctx->generation++;
	root->seen = ctx->generation;

#define PUSH(n) do {							\
		if (qlen == qcap) {					\
			size_t nc = qcap ? qcap * 2 : 32;		\
			struct node **nq = realloc(queue, nc * sizeof(*nq)); \
			if (!nq) { rc = -ENOMEM; goto out; }		\
			queue = nq; qcap = nc;				\
		}							\
		queue[qlen++] = (n);					\
	} while (0)

	PUSH(root);
	if ((rc = loaded_add(&ld, root->dyn.soname, root)) != 0)
		goto out;
	if (root->dyn.interp) {
		char found[PATH_MAX];
		char tmp[PATH_MAX];

		snprintf(tmp, sizeof(tmp), "%s%s", ctx->sysroot ? ctx->sysroot : "",
			 root->dyn.interp);
		if (candidate_ok(ctx, tmp, root->obj.info.elfclass, root->obj.info.machine,
				 found, sizeof(found))) {
			struct node *n = node_get(ctx, found, root->dyn.interp);

			if (!n) {
				rc = -ENOMEM;
				goto out;
			}
			if (n->seen != ctx->generation) {
				n->seen = ctx->generation;
				PUSH(n);
			}
			if ((rc = loaded_add(&ld, root->dyn.interp, n)) != 0 ||
			    (rc = loaded_add(&ld, n->dyn.soname, n)) != 0)
				goto out;
		} else if ((rc = push_missing(out, root->dyn.interp)) != 0) {
			goto out;
		}
	}
	while (head < qlen) {
		struct node *cur = queue[head++];

		for (size_t i = 0; i < cur->dyn.nneeded; i++) {
			char found[PATH_MAX];
			struct node *n;

			if (loaded_find(&ld, cur->dyn.needed[i]))
				continue;
			if (!resolve(ctx, cur, root, cur->dyn.needed[i], found)) {
				rc = push_missing(out, cur->dyn.needed[i]);
				if (rc)
					goto out;
				continue;
			}
			n = node_get(ctx, found, cur->dyn.needed[i]);
			if (!n) {
				rc = -ENOMEM;
				goto out;
			}
			if ((rc = loaded_add(&ld, cur->dyn.needed[i], n)) != 0 ||
			    (rc = loaded_add(&ld, n->dyn.soname, n)) != 0)
				goto out;
			if (n->seen == ctx->generation)
				continue;
			n->seen = ctx->generation;
			PUSH(n);
		}
	}
#undef PUSH
	out->objs = calloc(qlen, sizeof(*out->objs));
	if (!out->objs) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < qlen; i++)
		out->objs[i] = &queue[i]->obj;
	out->nobjs = qlen;
out:
	free(queue);
	free(ld.names);
	free(ld.nodes);
	if (rc)
		elf_closure_free(out);
	return rc;
}

void elf_closure_free(struct elf_closure *c)
{
	for (size_t i = 0; i < c->nmissing; i++)
		free(c->missing[i]);
	free(c->missing);
	free(c->objs);
	memset(c, 0, sizeof(*c));
}

int elf_needs_prefix(const char *path, const char *prefix)
{
	size_t plen = strlen(prefix);
	Elf_Scn *scn = NULL;
	int fd, ret = 0;
	Elf *e;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		ret = -ENOEXEC;
		goto out;
	}
	while (!ret && (scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;
		GElf_Dyn dyn;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			const char *name;

			if (!gelf_getdyn(d, (int)i, &dyn) || dyn.d_tag == DT_NULL)
				break;
			if (dyn.d_tag != DT_NEEDED)
				continue;
			name = elf_strptr(e, sh.sh_link, dyn.d_un.d_val);
			if (name && strncmp(name, prefix, plen) == 0) {
				ret = 1;
				break;
			}
		}
	}
out:
	if (e)
		elf_end(e);
	close(fd);
	return ret;
}
