// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Shadow-stack system calls and instructions. The pivot is written in
 * assembly because nothing may call or return between switching shadow
 * stacks (a compiler-generated call could land on the wrong stack) and
 * because enabling shadow stacks in the middle of a function leaves its
 * return address off the new, empty shadow stack.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "proc-status.h"
#include "shstk.h"

long shstk_arch_prctl(int option, unsigned long arg)
{
	long ret = syscall(SYS_arch_prctl, option, arg);

	return ret < 0 ? -errno : ret;
}

int shstk_map(unsigned long addr, unsigned long size, unsigned int flags,
	      unsigned long *mapped)
{
	long ret = syscall(__NR_map_shadow_stack, addr, size, flags);

	if (ret == -1)
		return -errno;
	*mapped = (unsigned long)ret;
	return 0;
}

/*
 * long cetctl_shstk_pivot_asm(unsigned long token, void (*probe)(void),
 *                             int enable, unsigned long ssp[2])
 *
 * ssp[0] = SSP before the switch, ssp[1] = SSP after switching back.
 * Returns 0, -EOPNOTSUPP when no shadow stack is active, or the negative
 * errno of arch_prctl(ARCH_SHSTK_ENABLE).
 *
 * The dance (Intel SDM, RSTORSSP/SAVEPREVSSP):
 *  RSTORSSP (token): checks the restore token (token+8 | 1), replaces it
 *      with a "previous SSP" token (old SSP | 2 | 1), SSP = token.
 *  SAVEPREVSSP: pops that token (SSP = token + 8 = top of the new stack)
 *      and writes a restore token (old SSP | 1) at old SSP - 8 on the old
 *      stack.
 *  ... call/return, balanced, on the new stack ...
 *  RSTORSSP (old SSP - 8) + SAVEPREVSSP: back to exactly the old SSP, and
 *      a restore token for the new stack is written at its top again.
 * Five pushes after the return address leave %rsp 16-byte aligned for
 * the call.
 */
/* the ABI numbers in the assembly below: cet-abi.h's, as text */
#define ABI_STR_(x)	#x
#define ABI_STR(x)	ABI_STR_(x)
_Static_assert(ARCH_SHSTK_SHSTK == 1, "the assembly passes ARCH_SHSTK_SHSTK as $1");

__asm__(
	".text\n"
	".globl cetctl_shstk_pivot_asm\n"
	".hidden cetctl_shstk_pivot_asm\n"
	".type cetctl_shstk_pivot_asm, @function\n"
	"cetctl_shstk_pivot_asm:\n"
	"	endbr64\n"
	"	push %rbx\n"
	"	push %r12\n"
	"	push %r13\n"
	"	push %r14\n"
	"	push %r15\n"
	"	mov %rdi, %r12\n"
	"	mov %rsi, %r13\n"
	"	mov %edx, %r14d\n"
	"	mov %rcx, %r15\n"
	"	test %r14d, %r14d\n"
	"	jz 1f\n"
	"	mov $158, %eax\n"		/* arch_prctl */
	"	mov $" ABI_STR(ARCH_SHSTK_ENABLE) ", %edi\n"
	"	mov $1, %esi\n"			/* ARCH_SHSTK_SHSTK */
	"	syscall\n"
	"	test %rax, %rax\n"
	"	jnz 9f\n"
	"1:	xor %ebx, %ebx\n"
	"	rdsspq %rbx\n"
	"	mov %rbx, (%r15)\n"
	"	test %rbx, %rbx\n"
	"	jz 8f\n"
	"	rstorssp (%r12)\n"
	"	saveprevssp\n"
	"	call *%r13\n"
	"	lea -8(%rbx), %rdi\n"
	"	rstorssp (%rdi)\n"
	"	saveprevssp\n"
	"	xor %ecx, %ecx\n"
	"	rdsspq %rcx\n"
	"	mov %rcx, 8(%r15)\n"
	"	xor %eax, %eax\n"
	"	test %r14d, %r14d\n"
	"	jz 9f\n"
	/* Disable again before returning: our own return address was
	 * pushed before shadow stacks were on. It cannot fail: enabling
	 * just worked and nothing locked the feature in between. */
	"	mov $158, %eax\n"
	"	mov $" ABI_STR(ARCH_SHSTK_DISABLE) ", %edi\n"
	"	mov $1, %esi\n"
	"	syscall\n"
	"	xor %eax, %eax\n"
	"	jmp 9f\n"
	"8:	mov $-95, %rax\n"		/* -EOPNOTSUPP */
	"9:	pop %r15\n"
	"	pop %r14\n"
	"	pop %r13\n"
	"	pop %r12\n"
	"	pop %rbx\n"
	"	ret\n"
	".size cetctl_shstk_pivot_asm, .-cetctl_shstk_pivot_asm\n"
);

long cetctl_shstk_pivot_asm(unsigned long token, void (*probe)(void),
			    int enable, unsigned long ssp[2]);

/* Written by the probe while it runs on the mapped shadow stack. */
static volatile unsigned long probe_ssp, probe_slot;

static void __attribute__((noinline)) pivot_probe(void)
{
	unsigned long ssp = shstk_rdssp();

	probe_ssp = ssp;
	/* Shadow-stack memory is readable with ordinary loads. */
	probe_slot = ssp ? *(volatile unsigned long *)ssp : 0;
}

int shstk_pivot(unsigned long token, struct shstk_pivot_result *res)
{
	unsigned long ssp[2] = { 0, 0 };
	long ret;
	int enable;

	memset(res, 0, sizeof(*res));
	enable = shstk_rdssp() == 0;
	probe_ssp = probe_slot = 0;
	ret = cetctl_shstk_pivot_asm(token, pivot_probe, enable, ssp);
	if (ret < 0)
		return (int)ret;
	res->enabled_temporarily = enable;
	res->ssp_before = ssp[0];
	res->ssp_after = ssp[1];
	res->ssp_inside = probe_ssp;
	res->ret_slot = probe_slot;
	res->token_after = *(volatile unsigned long *)token;
	return 0;
}

/* Words after "<key>:" on their own line, or NULL. */
static const char *status_field(const char *text, const char *key)
{
	size_t klen = strlen(key);
	const char *p = text;

	while (p && *p) {
		if (strncmp(p, key, klen) == 0 && p[klen] == ':')
			return p + klen + 1;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

/* the words of one line, by the one parser of them (proc-status.c) */
static unsigned long feature_words(const char *p)
{
	struct cet_feature_line fl;

	cet_feature_words_parse(p, &fl);
	return fl.bits;
}

void shstk_features_parse(const char *status, struct shstk_proc_features *f)
{
	const char *en = status_field(status, "x86_Thread_features");
	const char *lk = status_field(status, "x86_Thread_features_locked");

	memset(f, 0, sizeof(*f));
	f->present = en != NULL;
	if (en)
		f->enabled = feature_words(en);
	if (lk)
		f->locked = feature_words(lk);
}

const char *shstk_features_str(unsigned long bits, char *buf, size_t size)
{
	snprintf(buf, size, "%s%s%s",
		 bits & ARCH_SHSTK_SHSTK ? "shstk" : "",
		 (bits & ARCH_SHSTK_SHSTK) && (bits & ARCH_SHSTK_WRSS) ? " " : "",
		 bits & ARCH_SHSTK_WRSS ? "wrss" : "");
	if (!bits)
		snprintf(buf, size, "none");
	return buf;
}
