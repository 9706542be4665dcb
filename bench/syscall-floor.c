// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * syscall-floor [--as-cetctl|--safe] LIST — the system-call floor of `cetctl elf
 * FILE...`: for each path in LIST (one a line), open it, pread its first
 * KiB and close it, nothing else. What cetctl elf must do at the least per
 * ELF file, so bench/floor.sh divides cetctl's time per file by this
 * program's. --as-cetctl makes the system calls cetctl makes per file
 * (stat before the open, so no device or FIFO is ever opened, and fstat
 * after it, which catches a file swapped in between), to show how much of
 * cetctl's time is system calls. --safe is the floor as issue 23 decided
 * it, what a safe reader must do: --as-cetctl's calls plus the preads the
 * answer needs beyond the first KiB (an object's section header table
 * with the KiB before it, where .shstrtab is, and its note sections; the
 * dynamic segment of an ET_DYN without PT_INTERP, which tells a static-pie
 * from a shared object; a PT_NOTE or PT_GNU_PROPERTY past the first KiB),
 * little-endian 64-bit files only, each read once. Prints how many files
 * it read and how many preads it made.
 */
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static unsigned long preads;

static char big[64 * 1024 + 1024];

static ssize_t read_at(int fd, uint64_t off, uint64_t len)
{
	ssize_t n;

	if (len > sizeof(big))
		len = sizeof(big);
	n = pread(fd, big, len, (off_t)off);
	preads++;
	return n;
}

/* The reads beyond @head (@n bytes from offset 0) a safe reader needs. */
static void needed_reads(int fd, const unsigned char *head, size_t n)
{
	const Elf64_Ehdr *eh = (const void *)head;
	int interp = 0;

	if (n < sizeof(*eh) || memcmp(head, ELFMAG, SELFMAG) || head[EI_CLASS] != ELFCLASS64 ||
	    head[EI_DATA] != ELFDATA2LSB)
		return;
	if (eh->e_type == ET_REL && eh->e_shoff && eh->e_shentsize == sizeof(Elf64_Shdr)) {
		uint64_t lo = eh->e_shoff > 1024 ? eh->e_shoff - 1024 : 0;
		ssize_t got = read_at(fd, lo, eh->e_shoff - lo + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr));
		size_t num;
		uint64_t notes[16][2];
		size_t nnotes = 0;

		if (got < (ssize_t)(eh->e_shoff - lo))
			return;
		num = ((size_t)got - (size_t)(eh->e_shoff - lo)) / sizeof(Elf64_Shdr);
		for (size_t i = 1; i < num && nnotes < 16; i++) {
			Elf64_Shdr sh;

			memcpy(&sh, big + (eh->e_shoff - lo) + i * sizeof(sh), sizeof(sh));
			if (sh.sh_type == SHT_NOTE && sh.sh_offset + sh.sh_size > n) {
				notes[nnotes][0] = sh.sh_offset;
				notes[nnotes++][1] = sh.sh_size;
			}
		}
		for (size_t i = 0; i < nnotes; i++)
			read_at(fd, notes[i][0], notes[i][1]);
		return;
	}
	if (eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > n)
		return;
	for (size_t i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const void *)(head + eh->e_phoff + i * sizeof(Elf64_Phdr));

		if (ph->p_type == PT_INTERP)
			interp = 1;
		if ((ph->p_type == PT_NOTE || ph->p_type == PT_GNU_PROPERTY) &&
		    ph->p_offset + ph->p_filesz > n)
			read_at(fd, ph->p_offset, ph->p_filesz);
	}
	if (eh->e_type != ET_DYN || interp)
		return;
	for (size_t i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const void *)(head + eh->e_phoff + i * sizeof(Elf64_Phdr));

		if (ph->p_type == PT_DYNAMIC && ph->p_offset + ph->p_filesz > n)
			read_at(fd, ph->p_offset, ph->p_filesz);
	}
}

int main(int argc, char **argv)
{
	char buf[1024], *line = NULL;
	size_t cap = 0;
	unsigned long ok = 0, bad = 0, bytes = 0;
	ssize_t len;
	FILE *list;
	int safe = argc == 3 && strcmp(argv[1], "--safe") == 0;
	int as_cetctl = argc == 3 && (safe || strcmp(argv[1], "--as-cetctl") == 0);

	if (argc != 2 + as_cetctl) {
		fprintf(stderr, "usage: syscall-floor [--as-cetctl|--safe] LIST (one path a line, - for stdin)\n");
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
		preads++;	/* (needed_reads() counts its own) */
		if (n > 0)
			bytes += (unsigned long)n;
		if (safe && n > 0)
			needed_reads(fd, (const unsigned char *)buf, (size_t)n);
		close(fd);
		ok++;
	}
	free(line);
	printf("syscall-floor: %lu files read (%lu bytes, %lu preads), %lu not opened or not regular\n",
	       ok, bytes, preads, bad);
	return 0;
}
