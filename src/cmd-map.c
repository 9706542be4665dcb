// SPDX-License-Identifier: GPL-2.0-or-later
/* cetctl map - not written yet; the command refuses to pretend. */
#include <err.h>
#include "cetctl.h"

int cmd_map(int argc, char **argv)
{
	warnx("map: not implemented yet");
	return CETCTL_EXIT_FAILURE;
}
