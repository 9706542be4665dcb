/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The user shadow-stack ABI as merged in Linux 6.6 (and carried by our
 * 6.1 series). Defined here because Debian 12's headers predate it.
 */
#ifndef CETCTL_CET_ABI_H
#define CETCTL_CET_ABI_H

#ifndef ARCH_SHSTK_ENABLE
#define ARCH_SHSTK_ENABLE	0x5001
#define ARCH_SHSTK_DISABLE	0x5002
#define ARCH_SHSTK_LOCK		0x5003
#define ARCH_SHSTK_UNLOCK	0x5004	/* only via ptrace(PTRACE_ARCH_PRCTL) */
#define ARCH_SHSTK_STATUS	0x5005
#endif
#ifndef ARCH_SHSTK_SHSTK
#define ARCH_SHSTK_SHSTK	(1ULL << 0)
#define ARCH_SHSTK_WRSS		(1ULL << 1)
#endif

#ifndef __NR_map_shadow_stack
#define __NR_map_shadow_stack	453	/* x86_64 */
#endif
#ifndef SHADOW_STACK_SET_TOKEN
#define SHADOW_STACK_SET_TOKEN	(1ULL << 0)
#endif

#ifndef SEGV_CPERR
#define SEGV_CPERR		10
#endif
#ifndef NT_X86_SHSTK
#define NT_X86_SHSTK		0x204
#endif
/*
 * PTRACE_ARCH_PRCTL (30) is not defined here: glibc's <sys/ptrace.h> has it
 * in an enum, which a macro of the same name defined first would break.
 */

/* ELF property note (NT_GNU_PROPERTY_TYPE_0) types and bits. */
#define CET_GNU_PROPERTY_X86_FEATURE_1_AND	0xc0000002U
#define CET_GNU_PROPERTY_X86_ISA_1_NEEDED	0xc0008002U
#define CET_GNU_PROPERTY_X86_ISA_1_USED		0xc0010002U
#define CET_GNU_PROPERTY_X86_FEATURE_2_USED	0xc0010001U
#define CET_X86_FEATURE_1_IBT			(1U << 0)
#define CET_X86_FEATURE_1_SHSTK			(1U << 1)
#define CET_X86_FEATURE_1_LAM_U48		(1U << 2)
#define CET_X86_FEATURE_1_LAM_U57		(1U << 3)

#endif
