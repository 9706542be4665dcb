// SPDX-License-Identifier: GPL-2.0-or-later
/* cetctl run - not written yet; the command refuses to pretend. */
#include <err.h>
#include "cetctl.h"

int cmd_run(int argc, char **argv)
{
	warnx("run: not implemented yet");
	return CETCTL_EXIT_FAILURE;
}
