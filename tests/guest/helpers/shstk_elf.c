// SPDX-License-Identifier: GPL-2.0
/*
 * shstk_elf - the kernel series' legacy-ELF policy, seen from the program itself.
 *
 * Built twice from this file: shstk_elf_plain (no marking) and shstk_elf_marked (linked
 * with -z shstk: GNU_PROPERTY_X86_FEATURE_1_AND carries SHSTK). The kernel may refuse
 * the shadow-stack APIs to a marked binary (old binaries carry the bit without being
 * compatible). This program reports what it is and what it got, one line:
 *
 *   marked=0|1 enable=<errno name|0> map=<errno name|0>
 *
 * and the bats suite judges it against the policy in force. Exit 0 when it could report,
 * 1 when it could not read its own ELF file.
 */
#include "shstk.h"

#include <elf.h>
#include <fcntl.h>

#ifndef PT_GNU_PROPERTY
#define PT_GNU_PROPERTY 0x6474e553
#endif
#ifndef NT_GNU_PROPERTY_TYPE_0
#define NT_GNU_PROPERTY_TYPE_0 5
#endif
#define X86_FEATURE_1_AND 0xc0000002U
#define X86_FEATURE_1_SHSTK 0x2U

/* FEATURE_1_AND of our own executable, from PT_GNU_PROPERTY; -1 if unreadable. */
static long own_feature_1_and(void)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int fd = open("/proc/self/exe", O_RDONLY);
	long result = 0;

	if (fd < 0 || pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG))
		return -1;
	for (int i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), eh.e_phoff + (off_t)i * eh.e_phentsize) != sizeof(ph))
			return -1;
		if (ph.p_type != PT_GNU_PROPERTY || ph.p_filesz > 4096)
			continue;
		unsigned char buf[4096];
		if (pread(fd, buf, ph.p_filesz, ph.p_offset) != (ssize_t)ph.p_filesz)
			return -1;
		Elf64_Nhdr *n = (Elf64_Nhdr *)buf;
		if (ph.p_filesz < sizeof(*n) + 4 || n->n_type != NT_GNU_PROPERTY_TYPE_0 || n->n_namesz != 4 ||
		    memcmp(buf + sizeof(*n), "GNU", 4) || sizeof(*n) + 4 + n->n_descsz > ph.p_filesz)
			continue;
		unsigned char *d = buf + sizeof(*n) + 4, *end = d + n->n_descsz;
		while (d + 8 <= end) {
			uint32_t type, sz;

			memcpy(&type, d, 4);
			memcpy(&sz, d + 4, 4);
			if (type == X86_FEATURE_1_AND && sz == 4 && d + 12 <= end) {
				uint32_t v;
				memcpy(&v, d + 8, 4);
				result = v;
			}
			d += 8 + ((sz + 7) & ~7U);
		}
	}
	close(fd);
	return result;
}

int main(void)
{
	long f1 = own_feature_1_and(), map, en;
	unsigned long st = 0;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (f1 < 0) {
		printf("cannot read own ELF file\n");
		return 1;
	}
	map = map_shadow_stack(0, PAGE, SHADOW_STACK_SET_TOKEN);
	if (map > 0)
		munmap((void *)map, PAGE);
	long rs = arch_prctl_raw(ARCH_SHSTK_STATUS, (unsigned long)&st);
	/* last, because success means this function must never return */
	en = arch_prctl_raw(ARCH_SHSTK_ENABLE, F_SHSTK);
	printf("marked=%d enable=%s map=%s status=%s feature_1_and=%#lx\n", !!(f1 & X86_FEATURE_1_SHSTK),
	       en ? strerrorname_np((int)-en) : "0", map < 0 ? strerrorname_np((int)-map) : "0",
	       rs ? strerrorname_np((int)-rs) : "0", (unsigned long)f1);
	exit(0);
}
