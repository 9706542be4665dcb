// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cetctl run - run a program with shadow stacks enabled (and locked) from
 * its first instruction, as a launcher in the manner of env(1)/timeout(1):
 * the program is resolved before anything else (127 not found, 126 not
 * executable), cetctl's own failures exit 125 (the program does not run),
 * otherwise the program replaces cetctl (lib/shstk-launch.h) and its
 * status is the caller's to see.
 *
 * Methods:
 *  ptrace  the fail-closed exec-stop injection (lib/shstk-launch-*.c), verified
 *          from the kernel;
 *          with a glibc that does not manage shadow stacks, a preload
 *          library keeps setjmp/longjmp consistent with the shadow stack;
 *  glibc   GLIBC_TUNABLES=glibc.cpu.hwcaps=SHSTK (glibc >= 2.39 only);
 *  auto    glibc when it is new enough, else ptrace (default).
 * Without --shstk/--wrss the program is simply exec'd.
 *
 * cmd_run(): parse the options, resolve the program, gather the facts
 * (the library's probes), ask run_plan() (run-plan.c, pure) what to do,
 * say what it decided, and carry it out. Beside it: run-env.c (the preload
 * library and the program's environment), run-parent.c (as PID 1 or a
 * subreaper), run-say.c (the messages).
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <gnu/libc-version.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "c.h"
#include "cetctl.h"
#include "shstk-launch.h"
#include "run-env.h"
#include "run-parent.h"
#include "run-plan.h"
#include "run-compat.h"
#include "run-say.h"
#include "shstk.h"

#include "elf-deps.h"
#include "elf-notes.h"
#include "sysinfo-cet.h"

extern char **environ;

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
			run_say("%s: %s", run_shown(prog, nbuf), strerror(errno));
			return errno == ENOENT || errno == ENOTDIR ?
				CETCTL_EXIT_NOT_FOUND : CETCTL_EXIT_CANNOT_EXEC;
		}
		if (S_ISDIR(st.st_mode)) {
			run_say("%s: %s", run_shown(prog, nbuf), strerror(EISDIR));
			return CETCTL_EXIT_CANNOT_EXEC;
		}
		if (access(prog, X_OK) < 0) {
			run_say("%s: %s", run_shown(prog, nbuf), strerror(errno));
			return CETCTL_EXIT_CANNOT_EXEC;
		}
		snprintf(out, size, "%s", prog);
		return 0;
	}
	if (!*prog) {
		run_say("'': %s", strerror(ENOENT));
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
		run_say("%s: found in PATH but not executable", run_shown(prog, nbuf));
		return CETCTL_EXIT_CANNOT_EXEC;
	}
	run_say("%s: command not found in PATH", run_shown(prog, nbuf));
	return CETCTL_EXIT_NOT_FOUND;
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
		run_say("cannot enable %s for %s: this CPU/kernel cannot do shadow stacks "
			"(arch_prctl(ARCH_SHSTK_ENABLE): %s)", what, path, errname(err));
	else if (err == EPERM)
		run_say("cannot enable %s for %s: the features are already locked "
			"(arch_prctl(ARCH_SHSTK_ENABLE): EPERM)", what, path);
	else if (err == EINVAL &&
		 (blocked = elf_legacy_blocker(prog, ibuf, sizeof(ibuf))) != NULL)
		run_say("cannot enable %s for %s: the kernel refuses shadow stacks for this "
			"program because %s carries the old IBT/SHSTK ELF marking (legacy-ELF "
			"policy; see cetctl info) (arch_prctl(ARCH_SHSTK_ENABLE): EINVAL)",
			what, path, blocked);
	else if (err == EINVAL)
		run_say("cannot enable %s for %s: the kernel refused (arch_prctl("
			"ARCH_SHSTK_ENABLE): EINVAL); either it has no shadow-stack support or "
			"its legacy-ELF policy blocks this binary or its ELF interpreter "
			"(old IBT/SHSTK marking)", what, path);
	else if (err == ENOMEM)
		run_say("cannot enable %s for %s: no memory for the shadow stack "
			"(arch_prctl(ARCH_SHSTK_ENABLE): ENOMEM)", what, path);
	else
		run_say("cannot enable %s for %s: arch_prctl(ARCH_SHSTK_ENABLE): %s (%s)",
			what, path, strerror(err), errname(err));
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
	char sanitizer[256];		/* the sanitizer runtime in LD_PRELOAD */
};

/*
 * The one line for a failed start-up, and the exit status: 125, or 126/127
 * when the exec itself failed. Called in cetctl before the exec and in the
 * tracer after it (the program is then made to exit with the status). @arg:
 * the run (struct run_ctx).
 */
static int start_failed(const struct launch_result *r, void *arg)
{
	const struct run_ctx *c = arg;
	char feat[64], lock[64], ibuf[PATH_MAX], nbuf[NAME_SHOWN], nr[160];
	const char *path = run_shown(c->path, nbuf);
	/* The glibc method verifies at the entry point: the loader and the
	 * program's start-up code (IFUNC resolvers, preinit functions, its
	 * libraries' constructors) have run by then; its main has not. What
	 * that code forked meanwhile was killed. */
	const char *not_run = "program not run";
	int err = -r->err;

	if (r->startup_ran) {
		int n = snprintf(nr, sizeof(nr), "its start-up code ran (loader, constructors), "
				 "its entry point did not");

		if (r->forks_killed > 0 && n > 0 && (size_t)n < sizeof(nr))
			snprintf(nr + n, sizeof(nr) - (size_t)n, "; the %d process%s it forked "
				 "meanwhile %s killed", r->forks_killed,
				 r->forks_killed == 1 ? "" : "es", r->forks_killed == 1 ? "was" : "were");
		not_run = nr;
	}

	switch (r->stage) {
	case LAUNCH_DIED:
		return CETCTL_EXIT_RUN_FAILED;	/* the program's own status is the answer */
	case LAUNCH_EXEC:
		run_say("%s: %s", path, strerror(err));
		return err == ENOENT ? CETCTL_EXIT_NOT_FOUND : CETCTL_EXIT_CANNOT_EXEC;
	case LAUNCH_SPAWN:
	case LAUNCH_TRACE:
		run_say("cannot trace the start-up of %s: %s: %s (%s)%s; %s", path,
			r->what ? r->what : launch_stage_str(r->stage), strerror(err), errname(err),
			err == EPERM ? eperm_hint(ibuf, sizeof(ibuf)) : "", not_run);
		return CETCTL_EXIT_RUN_FAILED;
	case LAUNCH_TRACER:
		run_say("the start-up tracer of %s went away before the exec; program not run", path);
		return CETCTL_EXIT_RUN_FAILED;
	case LAUNCH_SECURE:
		run_say("refusing to run %s: the kernel made its exec privileged (AT_SECURE: "
			"set-user-ID, set-group-ID or file capabilities, of the program or its "
			"interpreter); tracing would drop its privileges and glibc ignores tunables "
			"for it; enable shadow stacks inside it instead; program not run", path);
		return CETCTL_EXIT_RUN_FAILED;
	case LAUNCH_NOT64:
		run_say("%s: %s, not an x86-64 one; shadow stacks exist only for x86-64 programs "
			"here; program not run", path, r->what ? r->what : "not a 64-bit program");
		return CETCTL_EXIT_RUN_FAILED;
	case LAUNCH_ENABLE_SHSTK:
	case LAUNCH_ENABLE_WRSS:
		say_enable_failed(r, c->path, path);
		return CETCTL_EXIT_RUN_FAILED;
	case LAUNCH_LOCK:
		run_say("cannot lock the shadow-stack features of %s: PTRACE_ARCH_PRCTL("
			"ARCH_SHSTK_LOCK): %s (%s); program not run", path, strerror(err), errname(err));
		return CETCTL_EXIT_RUN_FAILED;
	case LAUNCH_VERIFY:
		if (err != EPROTO || r->what)
			run_say("cannot verify the start-up of %s: %s: %s; %s", path,
				r->what ? r->what : "reading /proc", strerror(err), not_run);
		else if (!r->status_lines)
			run_say("%s: /proc shows no x86_Thread_features line: the kernel has no "
				"user shadow-stack support; %s", path, not_run);
		else
			run_say("%s: the kernel does not show what was asked: enabled '%s', locked '%s'; "
				"%s", path,
				shstk_features_str(r->got_enabled, feat, sizeof(feat)),
				shstk_features_str(r->got_locked, lock, sizeof(lock)), not_run);
		return CETCTL_EXIT_RUN_FAILED;
	case LAUNCH_STATIC:
		run_say("%s has no dynamic loader: glibc would enable its shadow stack in the "
			"program's own start-up code, too late to verify before it runs; use "
			"--method=ptrace; program not run", path);
		return CETCTL_EXIT_RUN_FAILED;
	case LAUNCH_OK:
		break;
	}
	run_say("start-up of %s failed; %s", path, not_run);
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
static int launch_failed(const struct launch_result *res, struct run_ctx *c)
{
	int rc = start_failed(res, c);

	/* LAUNCH_TRACE before the exec: a seize that was answered but not
	 * observed may have attached all the same, and a debugger attached
	 * to us makes the seize fail: traced either way. */
	if (res->stage == LAUNCH_EXEC || res->stage == LAUNCH_TRACER ||
	    res->stage == LAUNCH_TRACE)
		_exit(rc);
	return rc;
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
	printf("      --force-incompatible\n"
	       "                         run a program known not to survive a shadow stack\n"
	       "                         (Go, Boost.Context, Ruby, V8; see cetctl elf COMPAT)\n");
	printf("  -h, --help             display this help\n");
	printf("  -V, --version          display version\n");
	printf("\nWithout --shstk or --wrss the program is simply executed.\n");
	printf("With them it runs protected from its first instruction (--method=glibc:\n"
	       "from its entry point, after the loader), or not at all: if cetctl or its\n"
	       "tracer dies during the start-up, the program does not run.\n");
	printf("--trace-only excludes --shstk; --method=glibc excludes --wrss and --no-lock.\n");
	printf("Exit status: the program's own: its exit status N, or it dies of the\n"
	       "signal that killed it (a shell shows 128+N: 137 for SIGKILL; as PID 1 cetctl\n"
	       "exits 128+N itself). 125: cetctl failed and said why; the program did not run\n"
	       "(usage; known incompatible with shadow stacks; they cannot be enabled, locked\n"
	       "or verified; refused by the legacy-ELF policy; already locked; a privileged\n"
	       "exec; not an x86-64 program; tracing not permitted; unshare -p without\n"
	       "--fork; --method=glibc not possible here), or with --method=glibc its start-up\n"
	       "code ran but its entry point did not. 126: the program cannot be executed;\n"
	       "127: it was not found. A program that dies of a control-protection fault\n"
	       "dies of SIGSEGV (139 in a shell); the preload library says why. See\n"
	       "cetctl-run(1), EXIT STATUS.\n");
}

/* Parse the options into @c: -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct run_ctx *c)
{
	enum { OPT_LOCK = 256, OPT_NO_LOCK, OPT_NO_PRELOAD, OPT_TRACE_ONLY, OPT_FORCE_INCOMPATIBLE };
	static const struct option longopts[] = {
		{ "shstk",      no_argument,       NULL, 's' },
		{ "wrss",       no_argument,       NULL, 'w' },
		{ "lock",       no_argument,       NULL, OPT_LOCK },
		{ "no-lock",    no_argument,       NULL, OPT_NO_LOCK },
		{ "method",     required_argument, NULL, 'm' },
		{ "quiet",      no_argument,       NULL, 'q' },
		{ "no-preload", no_argument,       NULL, OPT_NO_PRELOAD },
		{ "trace-only", no_argument,       NULL, OPT_TRACE_ONLY },
		{ "force-incompatible", no_argument, NULL, OPT_FORCE_INCOMPATIBLE },
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
		case OPT_FORCE_INCOMPATIBLE:
			o->force_incompatible = true;
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
	if ((o->method == RUN_METHOD_AUTO && f->glibc_manages) || said || o->preload)
		prog_rc = elf_cet_read_path(c->path, &prog);
	f->has_interp = prog_rc == 0 && elf_cet_interp64(&prog);
	/* (not ld.so run as the program, ELF_KIND_DYN: it reads LD_PRELOAD) */
	f->prog_static = prog_rc == 0 &&
			 (prog.kind == ELF_KIND_STATIC || prog.kind == ELF_KIND_STATIC_PIE);
	f->sanitizer_preloaded = run_preloads_sanitizer(getenv("LD_PRELOAD"), c->sanitizer,
							sizeof(c->sanitizer));
	f->prog_marked = prog_rc == 0 ? elf_cet_shstk_marked(&prog) : -1;
	f->exec_only = faccessat(AT_FDCWD, c->path, R_OK, AT_EACCESS) < 0 && errno == EACCES;
	if (run_plan_method(o, f) == RUN_METHOD_PTRACE && o->preload)
		f->uses_asan = elf_needs_prefix(c->path, "libasan.so") == 1;
	if (run_plan_wants_preload(o, f))
		f->preload = run_find_preload(c->preload, sizeof(c->preload), c->why, sizeof(c->why));
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
		run_say("--method=glibc needs a glibc >= %s built with CET, which manages shadow "
			"stacks itself; this is glibc %s%s (use --method=ptrace)",
			CET_GLIBC_MANAGES_SHSTK, c->glibc, cet_glibc_manages_shstk(c->glibc) ?
			", built without CET (its libc.so.6 is not marked SHSTK)" : "");
		break;
	case RUN_REFUSE_GLIBC_OPTIONS:
		run_say("--method=glibc cannot do --wrss or --no-lock (glibc locks the "
			"shadow stack itself); use --method=ptrace");
		break;
	case RUN_REFUSE_UNSUPPORTED:
		run_say("this CPU/kernel cannot do shadow stacks (%s); %s was not started",
			lacks_str(c->f.lacks), run_shown(c->path, nbuf));
		break;
	case RUN_REFUSE_EXEC_ONLY:
		/* (Swapped in after this check, it is killed at the first failed read.) */
		run_say("refusing to run %s: it is execute-only for you (not readable): the kernel "
			"hides such a process from its tracer, so its start-up cannot be verified; "
			"program not run", run_shown(c->path, nbuf));
		break;
	}
	return CETCTL_EXIT_RUN_FAILED;
}

static void say_warnings(const struct run_ctx *c)
{
	unsigned int w = c->p.warn;

	if (w & RUN_WARN_PROG_UNMARKED)
		run_say("warning: %s is not marked shadow-stack compatible (no SHSTK "
			"property); it may fault where it switches stacks", c->path);
	if (w & RUN_WARN_LIBC_UNMARKED)
		run_say("warning: the C library %s is not marked shadow-stack compatible", c->libc);
	if (w & RUN_WARN_GLIBC_UNAWARE)
		run_say("warning: glibc %s does not manage shadow stacks: %s", c->glibc,
			!c->o.preload ? "longjmp and makecontext/swapcontext will fault "
					"(--no-preload)" :
			c->f.prog_static ? "longjmp and makecontext/swapcontext will fault "
					   "(a static program loads no preload library)" :
			"longjmp and makecontext/swapcontext are kept consistent by the "
			"preload library");
	if (w & RUN_WARN_ASAN)
		run_say("warning: %s uses AddressSanitizer: not preloading %s", c->path,
			PRELOAD_NAME);
	if (w & RUN_WARN_SANITIZER_PRELOADED)
		run_say("warning: LD_PRELOAD holds the sanitizer runtime %s, which must come first "
			"and intercepts setjmp/longjmp itself: not preloading %s", c->sanitizer,
			PRELOAD_NAME);
	if (w & RUN_WARN_NO_PRELOAD)
		run_say("warning: not using %s: %s; running without it%s", PRELOAD_NAME, c->why,
			c->o.trace_only ? "" : ", longjmp will fault");
}

/* Start the program as planned: it replaces cetctl, or the status. */
static int execute(struct run_ctx *c)
{
	struct launch_result res;
	char **envp = environ;
	int rc;

	if (run_pidns_unforked()) {
		run_say("started in a pid namespace it is not in itself (unshare -p without "
			"--fork?): the processes it starts would be in the new one, the first of "
			"them its init, and the start-up cannot be traced; run it as PID 1 of the "
			"namespace instead (unshare --pid --fork --mount-proc cetctl run ...); "
			"program not run");
		return CETCTL_EXIT_RUN_FAILED;
	}
	if (run_init_like()) {
		rc = run_stay_parent();
		if (rc >= 0)
			return rc;
	}
	/* GLIBC_TUNABLES appended: there the last setting of a tunable wins.
	 * Started through the tracer all the same: a privileged exec (where
	 * glibc ignores tunables) is refused, and what the loader did is
	 * verified at the program's entry point (lib/shstk-launch-tracer.c). LD_PRELOAD
	 * prepended: ours first. */
	if (c->p.tunable)
		envp = run_env_with("GLIBC_TUNABLES", "glibc.cpu.hwcaps=SHSTK", ':', true);
	else if (c->p.preload)
		envp = run_env_with("LD_PRELOAD", c->preload, ':', false);
	if (!envp) {
		run_say("out of memory");
		return CETCTL_EXIT_RUN_FAILED;
	}
	launch_exec(c->path, c->argv, envp, &c->p.launch, start_failed, c, &res);
	run_env_free(envp);
	return launch_failed(&res, c);
}

/* Without --shstk/--wrss/--trace-only: the program, simply exec'd. */
static int exec_plain(struct run_ctx *c)
{
	char nbuf[NAME_SHOWN];
	int err;

	execve(c->path, c->argv, environ);
	err = errno;
	run_say("%s: %s", run_shown(c->path, nbuf), strerror(err));
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
	rc = run_compat(&c.o, &c.f, &c.p, c.path);
	if (rc)
		return rc;
	if (c.p.refusal)
		return say_refusal(&c);
	say_warnings(&c);
	return execute(&c);
}
