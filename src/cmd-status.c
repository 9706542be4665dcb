// SPDX-License-Identifier: GPL-2.0-or-later
/* cetctl status - not written yet; the command refuses to pretend. */
#include <err.h>
#include "cetctl.h"

int cmd_status(int argc, char **argv)
{
	warnx("status: not implemented yet");
	return CETCTL_EXIT_FAILURE;
}
