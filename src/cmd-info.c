// SPDX-License-Identifier: GPL-2.0-or-later
/* cetctl info - not written yet; the command refuses to pretend. */
#include <err.h>
#include "cetctl.h"

int cmd_info(int argc, char **argv)
{
	warnx("info: not implemented yet");
	return CETCTL_EXIT_FAILURE;
}
