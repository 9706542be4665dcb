// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The facts of one process for why-off (see proc-why.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cet-abi.h"
#include "proc-why.h"
#include "util.h"

#define ENVIRON_MAX	(4UL * 1024 * 1024)

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/*
 * The facts of a mapped object: through the process's root first
 * (containers), then the path itself (a recorded tree has no root link),
 * as proc-cet.c reads their marking.
 */
static void object_facts(int dfd, const char *path, struct cet_marking_cache *cache,
			 bool want_version, struct cet_object_facts *f)
{
	char inroot[PATH_MAX];
	int rc = -ENOENT;

	if (snprintf(inroot, sizeof(inroot), "root%s", path) < (int)sizeof(inroot))
		rc = cet_object_facts_of(dfd, inroot, cache, want_version, f);
	if (rc == -ENOENT || rc == -EACCES || rc == -ENOTDIR)
		cet_object_facts_of(AT_FDCWD, path, cache, want_version, f);
}

static void read_tunables(int dfd, struct why_off_facts *f)
{
	char *env = NULL;
	long n = cet_read_file_at(dfd, "environ", ENVIRON_MAX, &env);

	if (n < 0) {
		f->tunables_errno = (int)-n;
		return;
	}
	glibc_tunables_from_environ(env, (size_t)n, &f->tun);
	free(env);
}

static bool runs_with_one(const struct proc_cet *pc)
{
	return (pc->st.features.bits & CET_FEAT_SHSTK) || pc->threads_shstk;
}

/* objs[0] the program, then the mapped objects but the program itself. */
static void gather(int dfd, const struct proc_cet *pc, struct cet_marking_cache *cache,
		  struct why_obj *objs, struct cet_object_facts *facts, size_t *n,
		  const char **loader)
{
	const char *interp;
	size_t i, k = 1;

	/* the program: through its exe link, which works for a deleted file
	 * too; a recorded tree's link names a path of the recorded system */
	if (cet_object_facts_of(dfd, "exe", cache, false, &facts[0]) < 0 && pc->exe[0])
		object_facts(dfd, pc->exe, cache, false, &facts[0]);
	objs[0].path = pc->exe[0] ? pc->exe : "(exe)";
	interp = facts[0].dyn_rc == 0 ? facts[0].interp : NULL;
	*loader = "";
	for (i = 0; i < pc->objs.n; i++) {
		const char *p = pc->objs.path[i];
		/* without the program's PT_INTERP: glibc's loader by its name */
		bool is_loader = interp ? strcmp(base_name(p), base_name(interp)) == 0 :
					  strncmp(base_name(p), "ld-linux", 8) == 0;

		if (pc->exe[0] && strcmp(p, pc->exe) == 0)
			continue;
		object_facts(dfd, p, cache, is_loader, &facts[k]);
		objs[k].path = p;
		objs[k].addr = pc->objs.addr[i];
		if (is_loader && !**loader)
			*loader = p;
		k++;
	}
	*n = k;
	for (i = 0; i < k; i++) {
		objs[i].marking = i == 0 ? pc->exe_marking : facts[i].marking;
		if (i == 0 && objs[0].marking < 0)
			objs[0].marking = facts[0].marking;
		if (facts[i].dyn_rc == 0) {
			objs[i].soname = facts[i].soname;
			objs[i].needed = facts[i].needed;
			objs[i].nneeded = facts[i].nneeded;
			objs[i].interp = i == 0 ? facts[i].interp : NULL;
		}
	}
}

void proc_why_system_from(const struct cet_sysinfo *si, struct proc_why_system *sys)
{
	const char *why;

	sys->lacks = cet_sysinfo_lacks(si);
	sys->kernel_blocks_marked = strcmp(cet_sysinfo_legacy_policy(si, &why), "block") == 0;
}

int proc_why_off_read(const char *root, struct proc_cet *pc, const struct proc_why_system *sys,
		      struct cet_marking_cache *cache)
{
	unsigned int lacks = sys->lacks;
	struct why_off_facts f = { .lacks = lacks, .kernel_blocks_marked = sys->kernel_blocks_marked,
				   .loader = "", .loader_version = "", .loader_marking = -ENOENT };
	struct cet_object_facts *facts = NULL;
	struct why_obj *objs = NULL;
	size_t *order = NULL, n = 0, i;
	const char *loader = "";
	int dfd = -1, rc = 0;

	memset(&pc->why, 0, sizeof(pc->why));
	pc->why_object[0] = '\0';
	if (pc->zombie || pc->kthread || pc->vanished || runs_with_one(pc))
		return 0;
	if (lacks) {	/* nothing else to read */
		why_off_decide(&f, &pc->why);
		return 0;
	}
	dfd = cet_proc_pid_open(root, pc->pid);
	if (dfd < 0)
		return dfd;
	/* audit reads neither the exe link nor maps for its own columns */
	if (!pc->exe[0]) {
		ssize_t len = readlinkat(dfd, "exe", pc->exe, sizeof(pc->exe) - 1);

		pc->exe[len > 0 ? len : 0] = '\0';
	}
	if (!pc->objs.path && !pc->objs_errno) {
		rc = proc_maps_read_objects_at(dfd, &pc->objs);
		if (rc)
			pc->objs_errno = -rc;
		rc = 0;
	}
	f.objects_errno = pc->objs_errno;
	objs = calloc(pc->objs.n + 1, sizeof(*objs));
	facts = calloc(pc->objs.n + 1, sizeof(*facts));
	order = calloc(pc->objs.n + 1, sizeof(*order));
	if (!objs || !facts || !order) {
		rc = -ENOMEM;
		goto out;
	}
	read_tunables(dfd, &f);
	gather(dfd, pc, cache, objs, facts, &n, &loader);
	/* no loader, and the program unreadable: static is not known either */
	if (!*loader && facts[0].dyn_rc < 0 && !f.objects_errno)
		f.objects_errno = -facts[0].dyn_rc;
	f.nstartup = why_loader_order(objs, n, order);
	f.objs = objs;
	f.order = order;
	f.nobjs = n;
	f.loader = loader;
	for (i = 1; i < n && *loader; i++)
		if (objs[i].path == loader) {
			f.loader_version = facts[i].version;
			f.loader_marking = facts[i].marking;
		}
	why_off_decide(&f, &pc->why);
	/* keep the named object past the facts */
	if (pc->why.object) {
		snprintf(pc->why_object, sizeof(pc->why_object), "%s", pc->why.object);
		pc->why.object = pc->why_object;
	}
out:
	free(objs);
	free(facts);
	free(order);
	close(dfd);
	return rc;
}
