// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `cetctl run --shstk`: the compatibility verdict before the start-up
 * (run-compat.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cetctl.h"
#include "compat-cell.h"
#include "compat-scan.h"
#include "run-compat.h"
#include "run-say.h"

enum run_compat_action run_compat_action(const struct run_opts *o, enum compat_class c)
{
	if (!o->shstk)
		return RUN_COMPAT_GO;	/* --trace-only, or a plain exec: nothing forced */
	if (c == COMPAT_INCOMPATIBLE)
		return o->force_incompatible ? RUN_COMPAT_FORCED : RUN_COMPAT_REFUSE;
	if (c == COMPAT_SWITCHES_UNCOVERED || c == COMPAT_UNKNOWN)
		return RUN_COMPAT_WARN;
	return RUN_COMPAT_GO;
}

/*
 * The interpreter of the script @path ("#!" line, as the kernel reads it:
 * the first word after "#!"), in @buf; NULL for anything else.
 */
static const char *script_interpreter(const char *path, char *buf, size_t size)
{
	char head[256];
	ssize_t n;
	size_t len;
	char *p;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0)
		return NULL;
	n = read(fd, head, sizeof(head) - 1);
	close(fd);
	if (n < 3 || head[0] != '#' || head[1] != '!')
		return NULL;
	head[n] = '\0';
	p = head + 2 + strspn(head + 2, " \t");
	len = strcspn(p, " \t\n");
	if (*p != '/' || len == 0 || len >= size || p[len] == '\0')
		return NULL;	/* relative, empty, or cut off by the read */
	memcpy(buf, p, len);
	buf[len] = '\0';
	return buf;
}

int run_compat(const struct run_opts *o, const struct run_facts *f, const struct run_plan *p,
	       const char *path)
{
	struct compat_env env = {
		.preload = p->preload,
		.preload_ucontext = COMPAT_PRELOAD_MENDS_UCONTEXT,
		.glibc_manages = f->glibc_manages,
	};
	char ibuf[PATH_MAX], what[PATH_MAX + 32];
	const char *judged = path, *interp;
	struct compat_ctx *cc = NULL;
	struct compat_verdict vd;
	struct compat_value *v = NULL;
	struct cetctl_text text = { 0 };
	enum run_compat_action act;
	size_t size;
	int rc = 0;

	if (!o->shstk)
		return 0;
	interp = script_interpreter(path, ibuf, sizeof(ibuf));
	if (interp) {
		judged = interp;
		snprintf(what, sizeof(what), "%s (a script run by %s)", path, interp);
	} else {
		snprintf(what, sizeof(what), "%s", path);
	}
	if (compat_ctx_new(&cc, NULL) < 0 || compat_judge_path(cc, judged, &env, &vd) < 0 ||
	    !(v = compat_value_new(&vd, &size))) {
		run_say("out of memory");
		compat_ctx_free(cc);
		return CETCTL_EXIT_RUN_FAILED;
	}
	act = run_compat_action(o, vd.cls);
	if (act != RUN_COMPAT_GO)
		compat_value_text(v, true, &text);
	switch (act) {
	case RUN_COMPAT_GO:
		break;
	case RUN_COMPAT_REFUSE:
		run_say("refusing to run %s: %s; --force-incompatible runs it anyway; program not run",
		    what, text.s);
		rc = CETCTL_EXIT_RUN_FAILED;
		break;
	case RUN_COMPAT_FORCED:
		if (!p->refusal && run_plan_warns(o))
			run_say("warning: %s: %s; running it all the same (--force-incompatible)",
			    what, text.s);
		break;
	case RUN_COMPAT_WARN:
		if (!p->refusal && run_plan_warns(o))
			run_say("warning: %s: %s; it may die of a control-protection fault", what,
			    text.s);
		break;
	}
	free(text.s);
	free(v);
	compat_ctx_free(cc);
	return rc;
}
