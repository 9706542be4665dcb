// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * syscall-floor [--as-cetctl] LIST — the system-call floor of `cetctl elf
 * FILE...`: for each path in LIST (one a line), open it, pread its first
 * KiB and close it, nothing else. What cetctl elf must do at the least per
 * ELF file, so bench/floor.sh divides cetctl's time per file by this
 * program's. --as-cetctl makes the system calls cetctl makes per file
 * (stat before the open, so no device or FIFO is ever opened, and fstat
 * after it, which catches a file swapped in between), to show how much of
 * cetctl's time is system calls. Prints how many files it read.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char buf[1024], *line = NULL;
	size_t cap = 0;
	unsigned long ok = 0, bad = 0, bytes = 0;
	ssize_t len;
	FILE *list;
	int as_cetctl = argc == 3 && strcmp(argv[1], "--as-cetctl") == 0;

	if (argc != 2 + as_cetctl) {
		fprintf(stderr, "usage: syscall-floor [--as-cetctl] LIST (one path a line, - for stdin)\n");
		return 2;
	}
	argv += as_cetctl;
	list = strcmp(argv[1], "-") ? fopen(argv[1], "r") : stdin;
	if (!list) {
		perror(argv[1]);
		return 1;
	}
	while ((len = getline(&line, &cap, list)) > 0) {
		struct stat st;
		ssize_t n;
		int fd;

		if (line[len - 1] == '\n')
			line[len - 1] = '\0';
		if (as_cetctl && (stat(line, &st) < 0 || !S_ISREG(st.st_mode))) {
			bad++;
			continue;
		}
		fd = open(line, O_RDONLY | O_CLOEXEC | O_NOCTTY | (as_cetctl ? O_NONBLOCK : 0));
		if (fd < 0) {
			bad++;
			continue;
		}
		if (as_cetctl && fstat(fd, &st) < 0) {
			bad++;
			close(fd);
			continue;
		}
		n = pread(fd, buf, sizeof(buf), 0);
		if (n > 0)
			bytes += (unsigned long)n;
		close(fd);
		ok++;
	}
	free(line);
	printf("syscall-floor: %lu files read (%lu bytes), %lu not opened or not regular\n", ok, bytes, bad);
	return 0;
}
