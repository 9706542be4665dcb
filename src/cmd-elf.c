// SPDX-License-Identifier: GPL-2.0-or-later
/* cetctl elf - not written yet; the command refuses to pretend. */
#include <err.h>
#include "cetctl.h"

int cmd_elf(int argc, char **argv)
{
	warnx("elf: not implemented yet");
	return CETCTL_EXIT_FAILURE;
}
