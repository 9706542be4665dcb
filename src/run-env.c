// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The environment `cetctl run` hands to the program: where the preload
 * library is and whether it may be loaded (only a file nobody but root
 * could have written: trusted_file()), and the copy of environ with
 * LD_PRELOAD or GLIBC_TUNABLES set. Says nothing itself: a refusal's
 * reason goes back to the caller, which decides whether to say it.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "proc-userns.h"
#include "run-env.h"

extern char **environ;

/*
 * What the dynamic loader does not take literally in an LD_PRELOAD entry: it
 * splits the list at spaces and colons, and expands $ORIGIN, $LIB and
 * $PLATFORM; the library's own clean-up (taking itself out of LD_PRELOAD)
 * splits at tabs too. A path holding any of them would be read as other
 * paths, relative ones among them (from the program's working directory).
 */
#define LOADER_SPECIAL	" :\t$"

/*
 * Who may own a directory or file on the library's path. In the initial
 * user namespace: root (uid 0) only. In any other (a rootless container,
 * `unshare -Ur`), stat() shows the files of users not mapped into it, host
 * root's among them, as the overflow uid: from inside, root cannot be told
 * from any other outside user. There uid 0 of the namespace (its owner, or
 * whoever is mapped to 0) is trusted as before, and the overflow uid only
 * when cetctl's own running executable shows as owned by it too: the
 * library gets no more trust than the cetctl already running has. Any
 * other uid is refused. When uid_map cannot be read or understood, this is
 * the initial namespace (fails closed: overflow owners refused).
 */
struct owner_rule {
	bool userns;		/* not the initial user namespace */
	uid_t overflow;		/* the uid an owner outside it shows as */
	bool exe_outside;	/* cetctl's executable shows as the overflow uid's */
};

static void owner_rule_read(struct owner_rule *r)
{
	struct proc_userns ns;
	uid_t exe;

	(void)proc_userns_read(NULL, &ns);	/* on failure: the initial one */
	r->userns = !ns.initial;
	r->overflow = ns.overflow;
	r->exe_outside = r->userns && proc_self_exe_owner(NULL, &exe) == 0 &&
			 exe == ns.overflow;
}

/*
 * Whether @uid may own @cur on the library's path (struct owner_rule); if
 * not, what was seen in @why. The overflow uid is judged first: should the
 * sysctl make it 0, uid 0 tells nothing in a namespace either.
 */
static bool owner_trusted(const struct owner_rule *r, const char *cur, uid_t uid, char *why,
			  size_t wsize)
{
#ifdef CETCTL_FAULT_HOOKS
	if (uid == geteuid())
		return true;
#endif
	if (!r->userns) {
		if (uid == 0)
			return true;
		snprintf(why, wsize, "%.400s is owned by uid %u, not root", cur, (unsigned int)uid);
		return false;
	}
	if (uid == r->overflow) {
		if (r->exe_outside)
			return true;
		snprintf(why, wsize, "%.300s is owned by uid %u (a user outside this user namespace) "
			 "and cetctl itself is not: an owner outside is trusted only when it owns "
			 "cetctl too", cur, (unsigned int)uid);
		return false;
	}
	if (uid == 0)
		return true;
	snprintf(why, wsize, "%.400s is owned by uid %u, not root (uid 0 of this user namespace)",
		 cur, (unsigned int)uid);
	return false;
}

/*
 * Whether the library at @p may be loaded into the program: it and every
 * directory above it (symbolic links resolved) are owned by root
 * (owner_trusted(): in a user namespace, see struct owner_rule) and not
 * writable by group or others, so nobody but root can change what is
 * loaded between this check and the loader's open; and its path is one the
 * loader reads as it is (LOADER_SPECIAL). The resolved path goes into @out. On refusal, the reason in @why.
 * The test build (cetctl-faults) also trusts files owned by the caller, so
 * that tests can run in a build tree that is not root's.
 */
static bool trusted_file(const char *p, char *out, size_t size, char *why, size_t wsize)
{
	char real[PATH_MAX], cur[PATH_MAX];
	struct owner_rule owners;
	struct stat st;
	char *slash;

	if (!p || *p != '/' || !realpath(p, real)) {
		snprintf(why, wsize, "%.400s: %s", p ? p : "", p && *p != '/' ? "not an absolute path" :
			 strerror(errno));
		return false;
	}
	if (snprintf(out, size, "%s", real) >= (int)size) {
		snprintf(why, wsize, "%.400s: path too long", p);
		return false;
	}
	if (strpbrk(real, LOADER_SPECIAL)) {
		snprintf(why, wsize, "%.400s: its path holds a space, colon, tab or '$', which the "
			 "dynamic loader would split or expand in LD_PRELOAD", real);
		return false;
	}
	owner_rule_read(&owners);
	snprintf(cur, sizeof(cur), "%s", real);
	for (bool file = true;; file = false) {
		if (stat(cur, &st) < 0) {
			snprintf(why, wsize, "%.400s: %s", cur, strerror(errno));
			return false;
		}
		if (file && !S_ISREG(st.st_mode)) {
			snprintf(why, wsize, "%.400s: not a regular file", cur);
			return false;
		}
		if (!owner_trusted(&owners, cur, st.st_uid, why, wsize))
			return false;
		if (st.st_mode & (S_IWGRP | S_IWOTH)) {
			snprintf(why, wsize, "%.400s is writable by %s", cur,
				 st.st_mode & S_IWOTH ? "everyone" : "its group");
			return false;
		}
		if (strcmp(cur, "/") == 0)
			break;
		slash = strrchr(cur, '/');
		if (slash == cur)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	if (access(out, R_OK) < 0) {
		snprintf(why, wsize, "%.400s: %s", out, strerror(errno));
		return false;
	}
	return true;
}

/* The library at @p, trusted or refused (trusted_file()). */
static enum run_preload trusted(const char *p, char *buf, size_t size, char *why, size_t wsize)
{
	return trusted_file(p, buf, size, why, wsize) ? RUN_PRELOAD_FOUND : RUN_PRELOAD_REFUSED;
}

/*
 * The preload library: CETCTL_PRELOAD; else next to the binary (a build
 * directory); else where `cmake --install` puts it relative to the binary,
 * <prefix>/lib/cetctl for <prefix>/bin/cetctl, so an install with another
 * --prefix or DESTDIR than the one configured (a distribution package)
 * still finds it; else the configured prefix. Only a trusted file (see
 * trusted_file): FOUND with its path in @buf; REFUSED or MISSING with the
 * reason in @why.
 */
enum run_preload run_find_preload(char *buf, size_t size, char *why, size_t wsize)
{
	const char *env = getenv("CETCTL_PRELOAD");
	char exe[PATH_MAX], cand[PATH_MAX];
	ssize_t n;

	snprintf(why, wsize, "not found (set CETCTL_PRELOAD)");
	if (env && *env)
		return trusted(env, buf, size, why, wsize);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		char *slash;

		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';		/* <dir>/cetctl -> <dir> */
			if (snprintf(cand, sizeof(cand), "%s/%s", exe, PRELOAD_NAME) <
			    (int)sizeof(cand) && access(cand, F_OK) == 0)
				return trusted(cand, buf, size, why, wsize);
			slash = strrchr(exe, '/');
			if (slash) {
				*slash = '\0';	/* <prefix>/bin -> <prefix> */
				if (snprintf(cand, sizeof(cand), "%s/" CETCTL_PRELOAD_LIBDIR "/%s", exe,
					     PRELOAD_NAME) < (int)sizeof(cand) &&
				    access(cand, F_OK) == 0)
					return trusted(cand, buf, size, why, wsize);
			}
		}
	}
	if (access(CETCTL_PRELOAD_INSTALLED, F_OK) == 0)
		return trusted(CETCTL_PRELOAD_INSTALLED, buf, size, why, wsize);
	return RUN_PRELOAD_MISSING;
}

/*
 * The basenames a sanitizer runtime starts with: GCC's (libasan.so.8 ...)
 * and LLVM's (libclang_rt.asan-x86_64.so ...). Each insists on coming first
 * among the loaded objects and intercepts setjmp/longjmp itself.
 */
static const char *const sanitizer_runtimes[] = {
	"libasan.so", "libhwasan.so", "libtsan.so", "liblsan.so", "libmsan.so",
	"libclang_rt.",
};

/* Whether the basename of the @len bytes at @e names a sanitizer runtime. */
static bool is_sanitizer(const char *e, size_t len)
{
	const char *base = e;

	for (size_t i = 0; i < len; i++)
		if (e[i] == '/')
			base = e + i + 1;
	len -= (size_t)(base - e);
	for (size_t i = 0; i < sizeof(sanitizer_runtimes) / sizeof(*sanitizer_runtimes); i++) {
		size_t n = strlen(sanitizer_runtimes[i]);

		if (len >= n && strncmp(base, sanitizer_runtimes[i], n) == 0)
			return true;
	}
	return false;
}

/*
 * Whether the LD_PRELOAD list @list (split as the loader splits it, at
 * spaces and colons) names a sanitizer runtime; the first such entry goes
 * into @name (cut to @size).
 */
bool run_preloads_sanitizer(const char *list, char *name, size_t size)
{
	const char *e = list;

	while (e && *e) {
		size_t len = strcspn(e, " :");

		if (len && is_sanitizer(e, len)) {
			snprintf(name, size, "%.*s", (int)len, e);
			return true;
		}
		e += len;
		e += strspn(e, " :");
	}
	return false;
}

/*
 * A copy of environ with @name set: value prepended (LD_PRELOAD: ours
 * first) or appended (GLIBC_TUNABLES: the last setting wins) to the
 * existing list with @sep, or set when absent. The parent's
 * environment is not changed.
 */
char **run_env_with(const char *name, const char *value, char sep, bool append)
{
	size_t n = 0, i, j = 0, nlen = strlen(name);
	const char *old = NULL;
	char **env, *var;

	while (environ[n])
		n++;
	env = calloc(n + 2, sizeof(*env));
	if (!env)
		return NULL;
	for (i = 0; i < n; i++) {
		if (strncmp(environ[i], name, nlen) == 0 && environ[i][nlen] == '=') {
			if (!old)
				old = environ[i] + nlen + 1;
			continue;	/* replaced below; duplicates dropped */
		}
		env[j++] = environ[i];
	}
	if (old && *old) {
		if ((append ? asprintf(&var, "%s=%s%c%s", name, old, sep, value) :
			      asprintf(&var, "%s=%s%c%s", name, value, sep, old)) < 0)
			var = NULL;
	} else if (asprintf(&var, "%s=%s", name, value) < 0) {
		var = NULL;
	}
	if (!var) {
		free(env);
		return NULL;
	}
	env[j++] = var;
	env[j] = NULL;
	return env;
}

/* Free what run_env_with() allocated: the array and its last entry. */
void run_env_free(char **env)
{
	size_t n = 0;

	if (!env || env == environ)
		return;
	while (env[n])
		n++;
	if (n)
		free(env[n - 1]);
	free(env);
}
