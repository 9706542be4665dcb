/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cetctl - shared declarations of the command front end (not the library).
 */
#ifndef CETCTL_H
#define CETCTL_H

#include <stdbool.h>

/* Exit codes (cetctl(1), EXIT STATUS). */
#define CETCTL_EXIT_OK		0
#define CETCTL_EXIT_FAILURE	1	/* failure or usage error */
#define CETCTL_EXIT_UNSUPPORTED	2	/* CPU or kernel cannot do it */
/* `cetctl run` launcher codes (coreutils env/timeout conventions). */
#define CETCTL_EXIT_RUN_FAILED	125
#define CETCTL_EXIT_CANNOT_EXEC	126
#define CETCTL_EXIT_NOT_FOUND	127
/* Not an exit status: a step of a command that says the command goes on. */
#define CETCTL_CONTINUE		(-1)

/* Options given before the subcommand; subcommands may set them too. */
struct cetctl_globals {
	bool json;		/* -J/--json */
	const char *proc_root;	/* --proc-root DIR: a recorded /proc stands in */
	const char *proc_root_origin;	/* "--proc-root" or "CETCTL_PROC_ROOT" */
};
extern struct cetctl_globals cetctl_globals;

struct cetctl_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

int cmd_elf(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_audit(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_map(int argc, char **argv);

/* Print "Try 'cetctl [CMD] --help'." and return CETCTL_EXIT_FAILURE. */
int cetctl_usage_error(const char *cmd);
/*
 * The end of a subcommand's option switch: -h prints @usage and returns
 * 0, -V the version; anything else is a usage error of @cmd.
 */
int cetctl_option_other(int c, void (*usage)(void), const char *cmd);
/* Print the version line for --version, return 0. */
int cetctl_print_version(void);

/*
 * A tree other than /proc stands in for the running system: every output
 * mode says so (tables: a note on stderr; JSON: a "proc_root" member; info:
 * a row), so a recorded or fake tree is never taken for this machine.
 */
bool cetctl_proc_root_is_recorded(void);
/* Where the tree was given: "--proc-root" or "CETCTL_PROC_ROOT". */
const char *cetctl_proc_root_origin(void);
/* Text mode: the stderr note "cetctl: CMD: reading ... from DIR (...)". */
void cetctl_proc_root_note(const char *cmd);

#endif
