// SPDX-License-Identifier: GPL-2.0-or-later
/* cetctl audit - not written yet; the command refuses to pretend. */
#include <err.h>
#include "cetctl.h"

int cmd_audit(int argc, char **argv)
{
	warnx("audit: not implemented yet");
	return CETCTL_EXIT_FAILURE;
}
