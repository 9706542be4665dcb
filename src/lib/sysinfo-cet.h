/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Can this system do user shadow stacks? CPU flags (<root>/cpuinfo), the
 * kernel (config, the status lines, clearcpuid=), the legacy-ELF policy and
 * the C library. Every file is read under the proc root (NULL = /proc), so a
 * recorded tree answers for the system it was recorded on. Never prints.
 */
#ifndef CETCTL_SYSINFO_CET_H
#define CETCTL_SYSINFO_CET_H

#include <stdbool.h>
#include <stddef.h>

/* Tri-state for facts that may be unknown. */
enum cet_tri { CET_NO = 0, CET_YES = 1, CET_UNKNOWN = -1 };

struct cet_sysinfo {
	/* <root>/cpuinfo */
	int cpuinfo_errno;		/* 0 or the errno reading it */
	bool cpu_x86;			/* has x86 "flags"/"vendor_id" lines */
	bool cpu_shstk;			/* "shstk": the hardware feature */
	bool cpu_ibt;			/* "ibt" */
	bool cpu_user_shstk;		/* "user_shstk": the kernel uses it for user space */
	/* kernel configuration */
	char kconfig_source[4096];	/* file read, "" when none was found */
	enum cet_tri kconfig_shstk;	/* CONFIG_X86_USER_SHADOW_STACK */
	enum cet_tri kconfig_allow_broken; /* CONFIG_X86_USER_SHADOW_STACK_ALLOW_BROKEN */
	/* the config knows that symbol at all: the kernel has the series'
	 * legacy-ELF policy (mainline does not) */
	enum cet_tri kconfig_legacy_policy;
	enum cet_tri kconfig_x32;	/* CONFIG_X86_X32_ABI: x32 programs can run */
	/* <root>/self/status */
	enum cet_tri status_lines;	/* x86_Thread_features: present */
	/* <root>/cmdline */
	char clearcpuid[128];		/* value of clearcpuid=, "" when absent */
	bool clearcpuid_shstk;		/* it names shstk or user_shstk */
	char shstk_legacy_elf[16];	/* value of shstk_legacy_elf=, "" when absent */
	/* the C library cetctl runs with */
	char glibc_version[32];
	/* its libc.so.6 is marked SHSTK: built with CET support (see
	 * cet_glibc_cet_built()) */
	enum cet_tri glibc_cet;
	bool glibc_can_enable;		/* >= 2.39 and built with CET: manages shadow stacks itself */
	/* architecture */
	char machine[32];		/* uname -m, or inferred for a recorded tree */
	bool ss_is_x86_shstk;		/* smaps "ss" means an x86 shadow stack */
};

/* The glibc release from which the C library enables shadow stacks itself. */
#define CET_GLIBC_MANAGES_SHSTK	"2.39"

/* Fill @si. Missing files are facts (recorded as unknown), not errors. */
int cet_sysinfo_read(const char *root, struct cet_sysinfo *si);
/*
 * Only what cet_sysinfo_supported() needs: cpuinfo, the status lines, the
 * glibc version and the machine. The kernel configuration (an inflated
 * config.gz, about 1 ms), the command line and whether the C library is built
 * with CET (read through /proc/self/maps) are not: glibc_cet stays unknown,
 * glibc_can_enable false. For callers that ask no more than that
 * (`cetctl run` on every start-up).
 */
int cet_sysinfo_read_support(const char *root, struct cet_sysinfo *si);
/*
 * Add to @si what cet_sysinfo_legacy_policy() needs: the kernel
 * configuration and the command line (cet_sysinfo_read() does it too).
 */
int cet_sysinfo_read_policy(const char *root, struct cet_sysinfo *si);

/* What keeps user shadow stacks from running right now (bits; 0: nothing). */
#define CET_LACKS_KERNEL	(1U << 0)	/* no x86_Thread_features status lines */
#define CET_LACKS_CPU		(1U << 1)	/* cpuinfo lacks user_shstk */
unsigned int cet_sysinfo_lacks(const struct cet_sysinfo *si);
/* Overall: the kernel and CPU can run user shadow stacks right now. */
bool cet_sysinfo_supported(const struct cet_sysinfo *si);

/*
 * Whether glibc @version (gnu_get_libc_version()) is recent enough to manage
 * shadow stacks. It does only when also built with CET support, which not
 * every distribution does (Debian 13's glibc 2.41 is not): see
 * cet_glibc_cet_built(); a glibc manages them when both hold.
 */
bool cet_glibc_manages_shstk(const char *version);
/*
 * Whether the C library of this process was built with CET support: its
 * libc.so.6 carries the SHSTK marking (glibc's --enable-cet compiles it with
 * -fcf-protection, and its loader's shadow-stack code exists only then).
 * CET_UNKNOWN when the library cannot be found or read.
 */
enum cet_tri cet_glibc_cet_built(void);
/*
 * The path of the C library mapped into this process (the system's
 * libc.so.6, from /proc/self/maps) into @buf; NULL when none is found.
 */
const char *cet_libc_path(char *buf, size_t size);
/*
 * The legacy-ELF policy of the kernel (CONFIG_X86_USER_SHADOW_STACK_ALLOW_BROKEN): "block", "allow", "none"
 * (no such policy: no shadow-stack support, or a mainline kernel) or
 * "unknown" (no kernel configuration to tell), and why.
 */
const char *cet_sysinfo_legacy_policy(const struct cet_sysinfo *si, const char **why);

/* Parsers exposed for unit tests. */
void cet_cpuinfo_parse(const char *text, struct cet_sysinfo *si);
void cet_kconfig_parse(const char *text, struct cet_sysinfo *si);
void cet_cmdline_parse(const char *text, struct cet_sysinfo *si);
/* Compare "2.39" style versions: <0, 0, >0. */
int cet_glibc_version_cmp(const char *a, const char *b);
/*
 * Whether smaps "ss" means an x86 shadow stack. Live (root NULL/"/proc"):
 * uname's machine is x86_64. Recorded tree: decided from its cpuinfo (x86
 * "flags" line); without one cetctl assumes x86_64 (documented).
 */
bool cet_ss_is_x86_shstk(const char *root, char *machine, size_t size);

#endif
