/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Shadow-stack system calls and instructions for the calling process:
 * arch_prctl(ARCH_SHSTK_*), map_shadow_stack(2), RDSSP, and a pivot onto
 * a mapped shadow stack (RSTORSSP/SAVEPREVSSP), plus the /proc facts
 * `cetctl run` verifies a launched process against.
 *
 * Library code: every function returns 0/a value or -errno, never prints.
 */
#ifndef CETCTL_SHSTK_H
#define CETCTL_SHSTK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "cet-abi.h"

/* arch_prctl(option, arg) as a raw system call: 0/value or -errno. */
long shstk_arch_prctl(int option, unsigned long arg);

/*
 * map_shadow_stack(addr, size, flags). On success stores the address in
 * *mapped and returns 0; -errno otherwise (-EOPNOTSUPP / -ENOSYS: no
 * support, -ERANGE: addr below 4 GiB, -ENOSPC: no room for the token,
 * -EINVAL: bad flags, -EEXIST: addr already mapped, -ENOMEM).
 */
int shstk_map(unsigned long addr, unsigned long size, unsigned int flags,
	      unsigned long *mapped);

/*
 * Where map_shadow_stack(SHADOW_STACK_SET_TOKEN) puts the restore token
 * and what it contains: the last 8 bytes of the mapping, holding the
 * address just above the token with bit 0 set (64-bit mode).
 */
static inline unsigned long shstk_token_addr(unsigned long addr, unsigned long size)
{
	return addr + size - 8;
}

static inline unsigned long shstk_token_value(unsigned long addr, unsigned long size)
{
	return (addr + size) | 1UL;
}

/*
 * The current shadow-stack pointer; 0 when shadow stacks are off (RDSSP
 * is a NOP then, also on CPUs without CET, so the register keeps 0).
 */
static inline unsigned long shstk_rdssp(void)
{
	unsigned long ssp = 0;

	__asm__ volatile("rdsspq %0" : "+r"(ssp));
	return ssp;
}

/* What a pivot did: the SSP before, inside @fn and after switching back. */
struct shstk_pivot_result {
	unsigned long ssp_before;	/* on the original shadow stack */
	unsigned long ssp_inside;	/* as @fn saw it: on the mapped stack */
	unsigned long ret_slot;		/* the mapped stack's top entry inside @fn */
	unsigned long ssp_after;	/* back on the original stack */
	unsigned long token_after;	/* the word at the token address afterwards */
	bool enabled_temporarily;	/* shadow stacks were enabled for the pivot */
};

/*
 * Switch the shadow stack onto the restore token at @token (RSTORSSP +
 * SAVEPREVSSP, which leaves a restore token on the old stack), call a
 * probe function there, and switch back the same way (which re-creates
 * the token on the mapped stack). If shadow stacks are off in this
 * process they are enabled for the duration and disabled afterwards; the
 * pivot runs in assembly with no frame in between, so the empty new
 * kernel shadow stack is never returned through.
 * Returns 0, or -errno from enabling (-EOPNOTSUPP, -EINVAL, -EPERM).
 */
int shstk_pivot(unsigned long token, struct shstk_pivot_result *res);

/* The x86_Thread_features lines of one process ("x86: Expose thread
 * features in /proc/$PID/status", kernel-series/). */
struct shstk_proc_features {
	bool present;		/* the kernel prints the lines */
	unsigned long enabled;	/* ARCH_SHSTK_SHSTK / ARCH_SHSTK_WRSS bits */
	unsigned long locked;
};

/* Parse status text; never fails (absent lines: present = false). */
void shstk_features_parse(const char *status, struct shstk_proc_features *f);

/* "shstk wrss" style words for a feature mask, "none" for 0. */
const char *shstk_features_str(unsigned long bits, char *buf, size_t size);

#endif
