// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cetctl - inspect and control x86 CET user shadow stacks.
 *
 * main() parses the global options and dispatches, by exact name, to one
 * cmd-<name>.c per subcommand. Prefixes are not accepted on purpose: a
 * later subcommand must never change what an abbreviation means.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <locale.h>
#include <stdio_ext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "c.h"
#include "cetctl.h"
#include "outbuf.h"
#include "config.h"
#ifdef CETCTL_FAULT_HOOKS
#include "shstk-launch.h"
#endif

struct cetctl_globals cetctl_globals = {
	.json = false,
	.proc_root = NULL,
};

static const struct cetctl_cmd commands[] = {
	{ "elf",    cmd_elf,    "show the CET marking of ELF files and what the loader makes of it" },
	{ "status", cmd_status, "show shadow-stack state of running processes" },
	{ "audit",  cmd_audit,  "audit all processes against a shadow-stack policy" },
	{ "info",   cmd_info,   "show whether this CPU, kernel and libc can do shadow stacks" },
	{ "run",    cmd_run,    "run a program with shadow stacks enabled and locked" },
	{ "map",    cmd_map,    "map a test shadow stack with map_shadow_stack(2)" },
};

int cetctl_usage_error(const char *cmd)
{
	if (cmd)
		fprintf(stderr, "Try 'cetctl %s --help' for more information.\n", cmd);
	else
		fprintf(stderr, "Try 'cetctl --help' for more information.\n");
	return CETCTL_EXIT_FAILURE;
}

int cetctl_option_other(int c, void (*usage)(void), const char *cmd)
{
	if (c == 'h') {
		usage();
		return CETCTL_EXIT_OK;
	}
	if (c == 'V')
		return cetctl_print_version();
	return cetctl_usage_error(cmd);
}

int cetctl_print_version(void)
{
	printf("cetctl %s\n", CETCTL_VERSION);
	return CETCTL_EXIT_OK;
}

bool cetctl_proc_root_is_recorded(void)
{
	const char *r = cetctl_globals.proc_root;

	return r && *r && strcmp(r, "/proc") != 0 && strcmp(r, "/proc/") != 0;
}

const char *cetctl_proc_root_origin(void)
{
	return cetctl_globals.proc_root_origin ? cetctl_globals.proc_root_origin : "--proc-root";
}

void cetctl_proc_root_note(const char *cmd)
{
	if (cetctl_proc_root_is_recorded())
		fprintf(stderr, "cetctl: %s: reading %s instead of /proc (%s)\n", cmd,
			cetctl_globals.proc_root, cetctl_proc_root_origin());
}

/*
 * At exit, as util-linux's close_stdout() does: an audit tool whose output
 * went nowhere must not report success. A stream error seen earlier, or a
 * failing flush or close, is "cetctl: write error: ..." and exit status 1,
 * whatever the command was going to return. A closed stdout with nothing
 * pending is not an error (coreutils' close_stream() rule), so quiet runs
 * with >&- still work. EPIPE only happens with SIGPIPE ignored: the reader
 * went away on purpose, stay quiet but still fail.
 */
static bool stdout_was_closed;

/*
 * A standard descriptor the caller closed stays closed for us: it is held by
 * an O_PATH placeholder, on which every read and write fails with EBADF as on
 * a closed descriptor. Otherwise the first file cetctl opens would take its
 * number: the output would be written into /proc's directory descriptor and
 * closed as stdout at exit, and a message meant for stderr into whatever file
 * took 2. Close-on-exec, so the program of `run` inherits the caller's
 * descriptors exactly, closed ones closed.
 */
static void hold_closed_std_fds(void)
{
	int fd;

	/* in order: open() takes the lowest free number, which is fd */
	for (fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		if (open("/", O_PATH | O_CLOEXEC) != fd)
			return;	/* not possible with 0..fd-1 open; nothing to hold */
		if (fd == STDOUT_FILENO)
			stdout_was_closed = true;
	}
}

static void close_stdout(void)
{
	bool pending = __fpending(stdout) != 0;
	bool prev_fail = ferror(stdout) != 0;
	bool fclose_fail;
	int saved;

	errno = 0;
	fclose_fail = fclose(stdout) != 0;
	if (prev_fail || (fclose_fail && (pending || errno != EBADF))) {
		if (!fclose_fail)
			errno = 0;
		prev_fail = true;
	}
	saved = errno;
	/* an earlier write of ours failed (table-text.c, jsonwrt.c): its reason */
	if (prev_fail && !saved && !stdout_was_closed)
		saved = outbuf_write_errno();
	/* nothing left to flush, so the close succeeded: the reason is known */
	if (prev_fail && !saved && stdout_was_closed)
		saved = EBADF;
	if (prev_fail) {
		if (saved != EPIPE) {
			if (saved)
				fprintf(stderr, "cetctl: write error: %s\n", strerror(saved));
			else
				fprintf(stderr, "cetctl: write error\n");
		}
		_exit(CETCTL_EXIT_FAILURE);
	}
	if (fflush(stderr) != 0)
		_exit(CETCTL_EXIT_FAILURE);
}

static void usage(void)
{
	size_t i;

	printf("Usage: cetctl [options] <command> [command options] [args]\n\n");
	printf("Inspect and control x86 CET user shadow stacks.\n\n");
	printf("Commands:\n");
	for (i = 0; i < ARRAY_SIZE(commands); i++)
		printf("  %-8s %s\n", commands[i].name, commands[i].summary);
	printf("\nOptions:\n");
	printf("  -J, --json             use JSON output format\n");
	printf("      --proc-root <dir>  read process information from <dir> instead of /proc\n"
	       "                         (also CETCTL_PROC_ROOT=<dir>); every output says so\n");
	printf("  -h, --help             display this help\n");
	printf("  -V, --version          display version\n");
	printf("\nRun 'cetctl <command> --help' for the options of a command.\n");
	printf("Exit status: 0 success, 1 failure or usage error, 2 not supported by this\n"
	       "CPU or kernel; 'run' exits with the program's status (125-127: see cetctl-run).\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json",      no_argument,       NULL, 'J' },
		{ "proc-root", required_argument, NULL, 'P' },
		{ "help",      no_argument,       NULL, 'h' },
		{ "version",   no_argument,       NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const char *env;
	size_t i;
	int c;

	hold_closed_std_fds();
	atexit(close_stdout);
#ifdef CETCTL_FAULT_HOOKS
	/* the test build: the start-up's fault points, for the tests */
	env = getenv("CETCTL_FAULT_LIST");
	if (env)
		return launch_fault_list(stdout, env) == 0 ? 0 : 1;
#endif

	env = getenv("CETCTL_PROC_ROOT");
	if (env && *env) {
		cetctl_globals.proc_root = env;
		cetctl_globals.proc_root_origin = "CETCTL_PROC_ROOT";
	}

	/*
	 * getopt names argv[0] in its messages: "cetctl: ..." as every other
	 * message, whatever path cetctl was started by, and "cetctl: CMD: ..."
	 * for a subcommand's options (below).
	 */
	if (argc > 0)
		argv[0] = (char *)"cetctl";
	/* '+': stop at the first non-option, the subcommand owns the rest. */
	while ((c = getopt_long(argc, argv, "+JhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'J':
			cetctl_globals.json = true;
			break;
		case 'P':
			cetctl_globals.proc_root = optarg;
			cetctl_globals.proc_root_origin = "--proc-root";
			break;
		case 'h':
			usage();
			return CETCTL_EXIT_OK;
		case 'V':
			return cetctl_print_version();
		default:
			return cetctl_usage_error(NULL);
		}
	}

	if (optind >= argc) {
		warnx("no command given");
		return cetctl_usage_error(NULL);
	}

	for (i = 0; i < ARRAY_SIZE(commands); i++) {
		if (strcmp(argv[optind], commands[i].name) == 0) {
			static char prog[32];

			argc -= optind;
			argv += optind;
			snprintf(prog, sizeof(prog), "cetctl: %s", commands[i].name);
			argv[0] = prog;
			optind = 0;	/* full getopt reset for the subcommand */
			/*
			 * The locale decides which names the tables can print
			 * as they are (libsmartcols escapes what the locale
			 * cannot print); numbers stay in the C format, they are
			 * read by programs (JSON, metrics). `run` prints no
			 * table, and loading a locale is a tenth of its
			 * start-up: it stays in the C locale.
			 */
			if (commands[i].fn != cmd_run) {
				setlocale(LC_ALL, "");
				setlocale(LC_NUMERIC, "C");
			}
			return commands[i].fn(argc, argv);
		}
	}
	warnx("unknown command '%s'", argv[optind]);
	return cetctl_usage_error(NULL);
}
