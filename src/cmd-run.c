// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cetctl run - run a program with shadow stacks enabled (and locked) from
 * its first instruction, as a launcher in the manner of env(1)/timeout(1):
 * the program is resolved before anything else (127 not found, 126 not
 * executable), cetctl's own failures exit 125 (the program does not run),
 * otherwise the program replaces cetctl (lib/shstk-launch.c) and its
 * status is the caller's to see.
 *
 * Methods:
 *  ptrace  the fail-closed exec-stop injection (lib/shstk-launch.c), verified
 *          from the kernel;
 *          with a glibc that does not manage shadow stacks, a preload
 *          library keeps setjmp/longjmp consistent with the shadow stack;
 *  glibc   GLIBC_TUNABLES=glibc.cpu.hwcaps=SHSTK (glibc >= 2.39 only);
 *  auto    glibc when it is new enough, else ptrace (default).
 * Without --shstk/--wrss the program is simply exec'd.
 *
 * cmd_run(): parse the options, resolve the program, gather the facts
 * (the library's probes), ask run_plan() (run-plan.c, pure) what to do,
 * say what it decided, and carry it out.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <gnu/libc-version.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "c.h"
#include "cetctl.h"
#include "config.h"
#include "shstk-launch.h"
#include "run-plan.h"
#include "shstk.h"

#include "elf-deps.h"
#include "elf-notes.h"
#include "sysinfo-cet.h"

extern char **environ;

#define PRELOAD_NAME	"libcetctl-preload.so"

/* Bytes of @s that make a printable UTF-8 character (U+00A0 and above,
 * or printable ASCII other than the backslash) at its start, or 0. */
static size_t printable_len(const unsigned char *s)
{
	unsigned long c;
	size_t n, i;

	if (*s >= 0x20 && *s < 0x7f && *s != '\\')
		return 1;
	if (*s >= 0xc2 && *s <= 0xdf)
		n = 2, c = *s & 0x1f;
	else if (*s >= 0xe0 && *s <= 0xef)
		n = 3, c = *s & 0x0f;
	else if (*s >= 0xf0 && *s <= 0xf4)
		n = 4, c = *s & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	/* no C1 controls (a CSI is 0x9b), overlongs or surrogates */
	if (c < 0xa0 || (n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10ffff)) ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return n;
}

/*
 * Build a message fully, then write it once: stderr is shared with the
 * child. Whatever it quotes (a program's name may hold a newline or a
 * terminal escape) is shown escaped, as util-linux does: a byte that is not
 * part of a printable character as \xNN. The line always ends in a newline.
 */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char raw[8192], buf[2048];
	const unsigned char *p;
	size_t n, k, room = sizeof(buf) - 1;	/* the newline */
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	n = (size_t)snprintf(buf, sizeof(buf), "cetctl: run: ");
	for (p = (const unsigned char *)raw; *p; p += k) {
		k = printable_len(p);
		if (k) {
			if (n + k > room)
				break;
			memcpy(buf + n, p, k);
			n += k;
		} else {
			if (n + 4 > room)
				break;
			n += (size_t)snprintf(buf + n, 5, "\\x%02x", *p);
			k = 1;
		}
	}
	buf[n++] = '\n';
	if (write(STDERR_FILENO, buf, n) < 0)
		return;
}

/*
 * A name for a message: shortened in the middle when long (the start and
 * the end tell most), in @buf (NAME_SHOWN bytes).
 */
#define NAME_SHOWN	164
static const char *shown(const char *name, char *buf)
{
	size_t len = strlen(name);

	if (len < NAME_SHOWN)
		return name;
	memcpy(buf, name, 78);
	memcpy(buf + 78, "...", 3);
	memcpy(buf + 81, name + len - 78, 78);
	buf[159] = '\0';
	return buf;
}

/* ---- resolving the program (before anything else) ---- */

/* 0 and the path in @out; or CETCTL_EXIT_NOT_FOUND / CANNOT_EXEC with a message. */
static int resolve_program(const char *prog, char *out, size_t size)
{
	char nbuf[NAME_SHOWN];
	const char *path, *p;
	struct stat st;
	int saw_noexec = 0;

	if (strchr(prog, '/')) {
		if (stat(prog, &st) < 0) {
			say("%s: %s", shown(prog, nbuf), strerror(errno));
			return errno == ENOENT || errno == ENOTDIR ?
				CETCTL_EXIT_NOT_FOUND : CETCTL_EXIT_CANNOT_EXEC;
		}
		if (S_ISDIR(st.st_mode)) {
			say("%s: %s", shown(prog, nbuf), strerror(EISDIR));
			return CETCTL_EXIT_CANNOT_EXEC;
		}
		if (access(prog, X_OK) < 0) {
			say("%s: %s", shown(prog, nbuf), strerror(errno));
			return CETCTL_EXIT_CANNOT_EXEC;
		}
		snprintf(out, size, "%s", prog);
		return 0;
	}
	if (!*prog) {
		say("'': %s", strerror(ENOENT));
		return CETCTL_EXIT_NOT_FOUND;
	}
	path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/bin:/usr/bin";	/* execvp's default */
	for (p = path;; p++) {
		const char *e = strchrnul(p, ':');
		int len = (int)(e - p);

		/* An empty element means the current directory. */
		if (snprintf(out, size, "%.*s%s%s", len, len ? p : ".", "/", prog) < (int)size &&
		    stat(out, &st) == 0 && !S_ISDIR(st.st_mode)) {
			if (access(out, X_OK) == 0)
				return 0;
			saw_noexec = 1;
		}
		if (!*e)
			break;
		p = e;
	}
	if (saw_noexec) {
		say("%s: found in PATH but not executable", shown(prog, nbuf));
		return CETCTL_EXIT_CANNOT_EXEC;
	}
	say("%s: command not found in PATH", shown(prog, nbuf));
	return CETCTL_EXIT_NOT_FOUND;
}

/* ---- the preload library ---- */

/*
 * Whether the library at @p may be loaded into the program: it and every
 * directory above it (symbolic links resolved) are owned by root and not
 * writable by group or others, so nobody but root can change what is
 * loaded between this check and the loader's open. The resolved path goes
 * into @out. On refusal, the reason in @why.
 * The test build (cetctl-faults) also trusts files owned by the caller, so
 * that tests can run in a build tree that is not root's.
 */
static bool trusted_file(const char *p, char *out, size_t size, char *why, size_t wsize)
{
	char real[PATH_MAX], cur[PATH_MAX];
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
#ifdef CETCTL_FAULT_HOOKS
		if (st.st_uid != 0 && st.st_uid != geteuid()) {
#else
		if (st.st_uid != 0) {
#endif
			snprintf(why, wsize, "%.400s is owned by uid %u, not root", cur,
				 (unsigned int)st.st_uid);
			return false;
		}
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
static enum run_preload find_preload(char *buf, size_t size, char *why, size_t wsize)
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
 * A copy of environ with @name set: value prepended (LD_PRELOAD: ours
 * first) or appended (GLIBC_TUNABLES: the last setting wins) to the
 * existing list with @sep, or set when absent. The parent's
 * environment is not changed.
 */
static char **env_with(const char *name, const char *value, char sep, bool append)
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

/* Free what env_with() allocated: the array and its last entry. */
static void env_free(char **env)
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

/* ---- diagnosis of a failed start-up ---- */

/*
 * Why a seize may say EPERM: a tracer already attached (a debugger, strace:
 * /proc says which), else a policy. In @buf.
 */
static const char *eperm_hint(char *buf, size_t size)
{
	char status[4096], path[64], comm[64] = "";
	const char *p;
	long tracer = 0;
	ssize_t n;
	int fd;

	fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, status, sizeof(status) - 1);
		close(fd);
		status[n > 0 ? n : 0] = '\0';
		p = strstr(status, "\nTracerPid:");
		if (p)
			tracer = strtol(p + 11, NULL, 10);
	}
	if (tracer <= 0)
		return " (ptrace is not permitted here: seccomp, a container policy or Yama may "
		       "forbid it)";
	snprintf(path, sizeof(path), "/proc/%ld/comm", tracer);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, comm, sizeof(comm) - 1);
		close(fd);
		comm[n > 0 ? n : 0] = '\0';
		comm[strcspn(comm, "\n")] = '\0';
	}
	snprintf(buf, size, " (cetctl is already traced by process %ld%s%s%s: a debugger or "
		 "strace; a process has one tracer)", tracer, *comm ? " (" : "", comm,
		 *comm ? ")" : "");
	return buf;
}

/*
 * Why arch_prctl(ARCH_SHSTK_ENABLE) failed, said: @prog is the program's
 * path (read again for the legacy-ELF diagnosis), @path its name as shown.
 */
static void say_enable_failed(const struct launch_result *r, const char *prog, const char *path)
{
	const char *what = r->stage == LAUNCH_ENABLE_WRSS ? "WRSS" : "the shadow stack";
	char ibuf[PATH_MAX];
	const char *blocked;
	int err = -r->err;

	if (err == EOPNOTSUPP || err == ENOTSUP)
		say("cannot enable %s for %s: this CPU/kernel cannot do shadow stacks "
		    "(arch_prctl(ARCH_SHSTK_ENABLE): %s)", what, path, errname(err));
	else if (err == EPERM)
		say("cannot enable %s for %s: the features are already locked "
		    "(arch_prctl(ARCH_SHSTK_ENABLE): EPERM)", what, path);
	else if (err == EINVAL &&
		 (blocked = elf_legacy_blocker(prog, ibuf, sizeof(ibuf))) != NULL)
		say("cannot enable %s for %s: the kernel refuses shadow stacks for this "
		    "program because %s carries the old IBT/SHSTK ELF marking (legacy-ELF "
		    "policy; see cetctl info) (arch_prctl(ARCH_SHSTK_ENABLE): EINVAL)",
		    what, path, blocked);
	else if (err == EINVAL)
		say("cannot enable %s for %s: the kernel refused (arch_prctl("
		    "ARCH_SHSTK_ENABLE): EINVAL); either it has no shadow-stack support or "
		    "its legacy-ELF policy blocks this binary or its ELF interpreter "
		    "(old IBT/SHSTK marking)", what, path);
	else if (err == ENOMEM)
		say("cannot enable %s for %s: no memory for the shadow stack "
		    "(arch_prctl(ARCH_SHSTK_ENABLE): ENOMEM)", what, path);
	else
		say("cannot enable %s for %s: arch_prctl(ARCH_SHSTK_ENABLE): %s (%s)",
		    what, path, strerror(err), errname(err));
}

/*
 * The one line for a failed start-up, and the exit status: 125, or 126/127
 * when the exec itself failed. Called in cetctl before the exec and in the
 * tracer after it (the program is then made to exit with the status).
 */
static int start_failed(const struct launch_result *r, void *arg)
{
	char feat[64], lock[64], ibuf[PATH_MAX], nbuf[NAME_SHOWN];
	const char *path = shown(arg, nbuf);
	int err = -r->err;

	switch (r->stage) {
	case LAUNCH_DIED:
		return CETCTL_EXIT_RUN_FAILED;	/* the program's own status is the answer */
	case LAUNCH_EXEC:
		say("%s: %s", path, strerror(err));
		return err == ENOENT ? CETCTL_EXIT_NOT_FOUND : CETCTL_EXIT_CANNOT_EXEC;
	case LAUNCH_SPAWN:
	case LAUNCH_TRACE:
		say("cannot trace the start-up of %s: %s: %s (%s)%s; program not run", path,
		    r->what ? r->what : launch_stage_str(r->stage), strerror(err), errname(err),
		    err == EPERM ? eperm_hint(ibuf, sizeof(ibuf)) : "");
		return CETCTL_EXIT_RUN_FAILED;
	case LAUNCH_TRACER:
		say("the start-up tracer of %s went away before the exec; program not run", path);
		return CETCTL_EXIT_RUN_FAILED;
	case LAUNCH_SECURE:
		say("refusing to run %s: the kernel made its exec privileged (AT_SECURE: "
		    "set-user-ID, set-group-ID or file capabilities, of the program or its "
		    "interpreter); tracing would drop its privileges and glibc ignores tunables "
		    "for it; enable shadow stacks inside it instead; program not run", path);
		return CETCTL_EXIT_RUN_FAILED;
	case LAUNCH_NOT64:
		say("%s: %s, not an x86-64 one; shadow stacks exist only for x86-64 programs "
		    "here; program not run", path, r->what ? r->what : "not a 64-bit program");
		return CETCTL_EXIT_RUN_FAILED;
	case LAUNCH_ENABLE_SHSTK:
	case LAUNCH_ENABLE_WRSS:
		say_enable_failed(r, arg, path);
		return CETCTL_EXIT_RUN_FAILED;
	case LAUNCH_LOCK:
		say("cannot lock the shadow-stack features of %s: PTRACE_ARCH_PRCTL("
		    "ARCH_SHSTK_LOCK): %s (%s); program not run", path, strerror(err), errname(err));
		return CETCTL_EXIT_RUN_FAILED;
	case LAUNCH_VERIFY:
		if (err != EPROTO || r->what)
			say("cannot verify the start-up of %s: %s: %s; program not run", path,
			    r->what ? r->what : "reading /proc", strerror(err));
		else if (!r->status_lines)
			say("%s: /proc shows no x86_Thread_features line: the kernel has no "
			    "user shadow-stack support; program not run", path);
		else
			say("%s: the kernel does not show what was asked: enabled '%s', locked '%s'; "
			    "program not run", path,
			    shstk_features_str(r->got_enabled, feat, sizeof(feat)),
			    shstk_features_str(r->got_locked, lock, sizeof(lock)));
		return CETCTL_EXIT_RUN_FAILED;
	case LAUNCH_STATIC:
		say("%s has no dynamic loader: glibc would enable its shadow stack in the "
		    "program's own start-up code, too late to verify before it runs; use "
		    "--method=ptrace; program not run", path);
		return CETCTL_EXIT_RUN_FAILED;
	case LAUNCH_OK:
		break;
	}
	say("start-up of %s failed; program not run", path);
	return CETCTL_EXIT_RUN_FAILED;
}

/*
 * launch_exec() returned: nothing ran. When the exec itself failed, this
 * process is still traced by the start-up tracer (which leaves when we do);
 * when the tracer went away silently, it may have seized us first and be
 * traced still (until the kernel's kill-on-exit lands, or as long as a
 * tracer that closed its pipe lingers): exit at once, without exit
 * handlers that cannot work under ptrace (a sanitizer's leak check stops
 * the world with ptrace). stderr is unbuffered.
 */
static int launch_failed(const struct launch_result *res, const char *path)
{
	int rc = start_failed(res, (void *)path);

	/* LAUNCH_TRACE before the exec: a seize that was answered but not
	 * observed may have attached all the same, and a debugger attached
	 * to us makes the seize fail: traced either way. */
	if (res->stage == LAUNCH_EXEC || res->stage == LAUNCH_TRACER ||
	    res->stage == LAUNCH_TRACE)
		_exit(rc);
	return rc;
}

/* ---- PID 1 and subreapers ---- */

/*
 * When cetctl is the init of a pid namespace (a container's entrypoint) or
 * a child subreaper, the start-up's helper processes, orphaned, would be
 * handed to the program itself, whose wait() would reap the tracer instead
 * of its own worker. Then cetctl does not become the program: it forks it
 * and stays its parent, as a container's init does: the program's children
 * and wait() are its own; cetctl forwards every signal it can catch to the
 * program, reaps whatever orphan is handed to it (the tracer among them),
 * and exits with the program's status (128+N for a signal N as PID 1,
 * where raising it on itself would be ignored; re-raised otherwise).
 * Returns -1 in the child (which goes on to start the program), or the
 * status to exit with.
 */
static int stay_parent(void)
{
	sigset_t all, old;
	siginfo_t si;
	pid_t child, r;
	int st, sig;

	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	child = fork();
	if (child < 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		say("cannot fork the program (cetctl stays its parent as PID 1 or a "
		    "subreaper): %s; program not run", strerror(errno));
		return CETCTL_EXIT_RUN_FAILED;
	}
	if (child == 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		return -1;
	}
	for (;;) {
		sig = sigwaitinfo(&all, &si);
		if (sig < 0)
			continue;
		if (sig != SIGCHLD) {
			kill(child, sig);
			continue;
		}
		while ((r = waitpid(-1, &st, WNOHANG)) > 0) {
			if (r != child)
				continue;	/* an orphan handed to us: reaped */
			if (WIFEXITED(st))
				return WEXITSTATUS(st);
			sig = WTERMSIG(st);
			if (getpid() != 1) {
				signal(sig, SIG_DFL);
				sigemptyset(&all);
				sigaddset(&all, sig);
				sigprocmask(SIG_UNBLOCK, &all, NULL);
				raise(sig);
			}
			return 128 + sig;
		}
	}
}

static bool init_like(void)
{
	int subreaper = 0;

	return getpid() == 1 ||
	       (prctl(PR_GET_CHILD_SUBREAPER, (unsigned long)&subreaper, 0, 0, 0) == 0 &&
		subreaper);
}

/* ---- the command ---- */

/* A usage error: 125 like env(1) and timeout(1), so that it cannot be
 * mistaken for the program's own status. */
static int run_usage_error(void)
{
	cetctl_usage_error("run");
	return CETCTL_EXIT_RUN_FAILED;
}

static void usage(void)
{
	printf("Usage: cetctl run [options] [--] <program> [arguments...]\n\n");
	printf("Run a program with shadow stacks enabled and locked from its first instruction.\n\n");
	printf("Options:\n");
	printf("  -s, --shstk            enable the shadow stack\n");
	printf("  -w, --wrss             also enable WRSS (implies --shstk)\n");
	printf("      --lock             lock the features after enabling (default)\n");
	printf("      --no-lock          leave the features unlocked\n");
	printf("  -m, --method <how>     ptrace, glibc (glibc >= 2.39 built with CET, verified\n"
	       "                         at the entry point after the loader) or auto (default)\n");
	printf("  -q, --quiet            no warnings about markings and the C library\n");
	printf("      --no-preload       do not preload the setjmp/longjmp helper library\n");
	printf("      --trace-only       start through the tracer but enable nothing (tests;\n"
	       "                         with --method=glibc: its start-up and entry check)\n");
	printf("  -h, --help             display this help\n");
	printf("  -V, --version          display version\n");
	printf("\nWithout --shstk or --wrss the program is simply executed.\n");
	printf("With them it runs protected from its first instruction (--method=glibc:\n"
	       "from its entry point, after the loader), or not at all: if cetctl or its\n"
	       "tracer dies during the start-up, the program does not run.\n");
	printf("--trace-only excludes --shstk; --method=glibc excludes --wrss and --no-lock.\n");
	printf("Exit status: the program's own (it replaces cetctl); 125 cetctl failed and\n"
	       "the program did not run (usage; shadow stacks cannot be enabled, locked or\n"
	       "verified; refused by the legacy-ELF policy; already locked; a privileged\n"
	       "exec; not an x86-64 program; tracing not permitted; --method=glibc not\n"
	       "possible here), 126 the program cannot be executed, 127 it was not found.\n");
}

/*
 * Everything one run knows: the command line, the facts, the plan, and the
 * strings the messages quote. One of these, in cmd_run()'s frame.
 */
struct run_ctx {
	struct run_opts o;
	char **argv;			/* the program and its arguments */
	char path[PATH_MAX];		/* the program, resolved */
	struct run_facts f;
	struct run_plan p;
	const char *glibc;		/* gnu_get_libc_version() */
	char libc[PATH_MAX];		/* the C library's path, "" unknown */
	char preload[PATH_MAX];		/* the preload library, when found */
	char why[512];			/* why not, when not */
};

/* Parse the options into @c: -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct run_ctx *c)
{
	enum { OPT_LOCK = 256, OPT_NO_LOCK, OPT_NO_PRELOAD, OPT_TRACE_ONLY };
	static const struct option longopts[] = {
		{ "shstk",      no_argument,       NULL, 's' },
		{ "wrss",       no_argument,       NULL, 'w' },
		{ "lock",       no_argument,       NULL, OPT_LOCK },
		{ "no-lock",    no_argument,       NULL, OPT_NO_LOCK },
		{ "method",     required_argument, NULL, 'm' },
		{ "quiet",      no_argument,       NULL, 'q' },
		{ "no-preload", no_argument,       NULL, OPT_NO_PRELOAD },
		{ "trace-only", no_argument,       NULL, OPT_TRACE_ONLY },
		{ "help",       no_argument,       NULL, 'h' },
		{ "version",    no_argument,       NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct run_opts *o = &c->o;
	int ch;

	/* '+': options end at the program name; its own options are its own. */
	while ((ch = getopt_long(argc, argv, "+swm:qhV", longopts, NULL)) != -1) {
		switch (ch) {
		case 's':
			o->shstk = true;
			break;
		case 'w':
			o->wrss = o->shstk = true;
			break;
		case OPT_LOCK:
			o->lock = true;
			break;
		case OPT_NO_LOCK:
			o->lock = false;
			break;
		case 'm':
			if (strcmp(optarg, "ptrace") == 0)
				o->method = RUN_METHOD_PTRACE;
			else if (strcmp(optarg, "glibc") == 0)
				o->method = RUN_METHOD_GLIBC;
			else if (strcmp(optarg, "auto") == 0)
				o->method = RUN_METHOD_AUTO;
			else {
				warnx("run: unknown method '%s' (ptrace, glibc or auto)", optarg);
				return run_usage_error();
			}
			break;
		case 'q':
			o->quiet = true;
			break;
		case OPT_NO_PRELOAD:
			o->preload = false;
			break;
		case OPT_TRACE_ONLY:
			o->trace_only = true;
			break;
		case 'h':
			usage();
			return CETCTL_EXIT_OK;
		case 'V':
			return cetctl_print_version();
		default:
			return run_usage_error();
		}
	}
	if (optind >= argc) {
		warnx("run: no program given");
		return run_usage_error();
	}
	c->argv = argv + optind;
	if (o->trace_only && o->shstk) {
		warnx("run: --trace-only enables nothing; it cannot be combined with --shstk/--wrss");
		return run_usage_error();
	}
	return -1;
}

/* Whether the ELF file at @path is marked SHSTK: 1, 0, or -1 unknown. */
static int marked(const char *path)
{
	struct elf_cet_info info;

	return elf_cet_read_path(path, &info) == 0 ? elf_cet_shstk_marked(&info) : -1;
}

/* The facts the plan decides from, each read only when it can matter. */
static void gather_facts(struct run_ctx *c)
{
	const struct run_opts *o = &c->o;
	struct run_facts *f = &c->f;
	bool said = run_plan_warns(o);
	struct elf_cet_info prog;
	struct cet_sysinfo si;
	int prog_rc = -1;

	c->glibc = gnu_get_libc_version();
	/* a recent glibc manages shadow stacks only when built with CET support:
	 * its libc.so.6 is marked (Debian 13's glibc 2.41 is not) */
	f->libc_marked = cet_libc_path(c->libc, sizeof(c->libc)) ? marked(c->libc) : -1;
	f->glibc_manages = cet_glibc_manages_shstk(c->glibc) && f->libc_marked == 1;
	if (!o->trace_only && cet_sysinfo_read_support(NULL, &si) == 0)
		f->lacks = cet_sysinfo_lacks(&si);
	else if (!o->trace_only)
		f->lacks = CET_LACKS_KERNEL | CET_LACKS_CPU;
#ifdef CETCTL_FAULT_HOOKS
	/* Tests: pretend glibc >= 2.39 on a system with shadow stacks, to drive
	 * the glibc method's verification where neither exists. */
	if (getenv("CETCTL_FAULT_GLIBC")) {
		f->glibc_manages = true;
		f->lacks = 0;
	}
#endif
	if ((o->method == RUN_METHOD_AUTO && f->glibc_manages) || said)
		prog_rc = elf_cet_read_path(c->path, &prog);
	f->has_interp = prog_rc == 0 && elf_cet_interp64(&prog);
	f->prog_marked = prog_rc == 0 ? elf_cet_shstk_marked(&prog) : -1;
	f->exec_only = faccessat(AT_FDCWD, c->path, R_OK, AT_EACCESS) < 0 && errno == EACCES;
	if (run_plan_method(o, f) == RUN_METHOD_PTRACE && o->preload)
		f->uses_asan = elf_needs_prefix(c->path, "libasan.so") == 1;
	if (run_plan_wants_preload(o, f))
		f->preload = find_preload(c->preload, sizeof(c->preload), c->why, sizeof(c->why));
}

/* What the system lacks, for the refusal. */
static const char *lacks_str(unsigned int lacks)
{
	if (lacks == (CET_LACKS_KERNEL | CET_LACKS_CPU))
		return "the kernel has no user shadow-stack support: /proc/self/status has no "
		       "x86_Thread_features line and /proc/cpuinfo lacks user_shstk";
	if (lacks & CET_LACKS_KERNEL)
		return "the kernel has no user shadow-stack support: /proc/self/status has no "
		       "x86_Thread_features line";
	return "the CPU has no user shadow stacks, or the kernel does not use them on it: "
	       "/proc/cpuinfo lacks user_shstk";
}

/* The one line for a refusal before anything started; the exit status. */
static int say_refusal(const struct run_ctx *c)
{
	char nbuf[NAME_SHOWN];

	switch (c->p.refusal) {
	case RUN_GO:
		return 0;
	case RUN_REFUSE_GLIBC_OLD:
		say("--method=glibc needs a glibc >= %s built with CET, which manages shadow "
		    "stacks itself; this is glibc %s%s (use --method=ptrace)", CET_GLIBC_MANAGES_SHSTK,
		    c->glibc, cet_glibc_manages_shstk(c->glibc) ?
		    ", built without CET (its libc.so.6 is not marked SHSTK)" : "");
		break;
	case RUN_REFUSE_GLIBC_OPTIONS:
		say("--method=glibc cannot do --wrss or --no-lock (glibc locks the "
		    "shadow stack itself); use --method=ptrace");
		break;
	case RUN_REFUSE_UNSUPPORTED:
		say("this CPU/kernel cannot do shadow stacks (%s); %s was not started",
		    lacks_str(c->f.lacks), shown(c->path, nbuf));
		break;
	case RUN_REFUSE_EXEC_ONLY:
		/* (Swapped in after this check, it is killed at the first failed read.) */
		say("refusing to run %s: it is execute-only for you (not readable): the kernel "
		    "hides such a process from its tracer, so its start-up cannot be verified; "
		    "program not run", shown(c->path, nbuf));
		break;
	}
	return CETCTL_EXIT_RUN_FAILED;
}

static void say_warnings(const struct run_ctx *c)
{
	unsigned int w = c->p.warn;

	if (w & RUN_WARN_PROG_UNMARKED)
		say("warning: %s is not marked shadow-stack compatible (no SHSTK "
		    "property); it may fault where it switches stacks", c->path);
	if (w & RUN_WARN_LIBC_UNMARKED)
		say("warning: the C library %s is not marked shadow-stack compatible", c->libc);
	if (w & RUN_WARN_GLIBC_UNAWARE)
		say("warning: glibc %s does not manage shadow stacks: %s; "
		    "makecontext/swapcontext are not covered", c->glibc,
		    c->o.preload ? "longjmp is kept consistent by the preload library" :
		    "longjmp will fault (--no-preload)");
	if (w & RUN_WARN_ASAN)
		say("warning: %s uses AddressSanitizer: not preloading %s", c->path,
		    PRELOAD_NAME);
	if (w & RUN_WARN_NO_PRELOAD)
		say("warning: not using %s: %s; running without it%s", PRELOAD_NAME, c->why,
		    c->o.trace_only ? "" : ", longjmp will fault");
}

/* Start the program as planned: it replaces cetctl, or the status. */
static int execute(struct run_ctx *c)
{
	struct launch_result res;
	char **envp = environ;
	int rc;

	if (init_like()) {
		rc = stay_parent();
		if (rc >= 0)
			return rc;
	}
	/* GLIBC_TUNABLES appended: there the last setting of a tunable wins.
	 * Started through the tracer all the same: a privileged exec (where
	 * glibc ignores tunables) is refused, and what the loader did is
	 * verified at the program's entry point (lib/shstk-launch.c). LD_PRELOAD
	 * prepended: ours first. */
	if (c->p.tunable)
		envp = env_with("GLIBC_TUNABLES", "glibc.cpu.hwcaps=SHSTK", ':', true);
	else if (c->p.preload)
		envp = env_with("LD_PRELOAD", c->preload, ':', false);
	if (!envp) {
		say("out of memory");
		return CETCTL_EXIT_RUN_FAILED;
	}
	launch_exec(c->path, c->argv, envp, &c->p.launch, start_failed, c->path, &res);
	env_free(envp);
	return launch_failed(&res, c->path);
}

/* Without --shstk/--wrss/--trace-only: the program, simply exec'd. */
static int exec_plain(struct run_ctx *c)
{
	char nbuf[NAME_SHOWN];
	int err;

	execve(c->path, c->argv, environ);
	err = errno;
	say("%s: %s", shown(c->path, nbuf), strerror(err));
	return err == ENOENT ? CETCTL_EXIT_NOT_FOUND : CETCTL_EXIT_CANNOT_EXEC;
}

/* parse -> resolve -> gather facts -> plan -> say -> execute */
int cmd_run(int argc, char **argv)
{
	struct run_ctx c = {
		.o = { .lock = true, .preload = true, .method = RUN_METHOD_AUTO },
	};
	int rc;

	rc = parse_args(argc, argv, &c);
	if (rc >= 0)
		return rc;
	rc = resolve_program(c.argv[0], c.path, sizeof(c.path));
	if (rc)
		return rc;
	if (!c.o.shstk && !c.o.trace_only)
		return exec_plain(&c);
	gather_facts(&c);
	run_plan(&c.o, &c.f, &c.p);
	if (c.p.refusal)
		return say_refusal(&c);
	say_warnings(&c);
	return execute(&c);
}
