// SPDX-License-Identifier: GPL-2.0-or-later
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "elf-deps.h"
#include "elf-notes.h"
#include "proc-status.h"
#include "sysinfo-cet.h"
#include "util.h"

#define KCONFIG_MAX	(8UL * 1024 * 1024)

static bool is_live_root(const char *root)
{
	return !root || !*root || strcmp(root, "/proc") == 0 || strcmp(root, "/proc/") == 0;
}

/* Whether the space separated @list contains @word. */
static bool has_word(const char *list, const char *word, const char *seps)
{
	size_t n = strlen(word);
	const char *p = list;

	while (*p && *p != '\n') {
		size_t len;

		p += strspn(p, seps);
		len = strcspn(p, seps);
		if (len == 0)
			break;
		if (len == n && strncmp(p, word, n) == 0)
			return true;
		p += len;
	}
	return false;
}

void cet_cpuinfo_parse(const char *text, struct cet_sysinfo *si)
{
	const char *line;

	/* The first "flags" line is enough: the kernel prints the same
	 * (boot CPU derived) capability words for every CPU. */
	for (line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		if (strncmp(line, "vendor_id", 9) == 0)
			si->cpu_x86 = true;
		if (strncmp(line, "flags", 5) == 0 && (line[5] == '\t' || line[5] == ' ' || line[5] == ':')) {
			const char *v = strchr(line, ':');

			if (!v)
				continue;
			si->cpu_x86 = true;
			si->cpu_shstk = has_word(v + 1, "shstk", " \t\n");
			si->cpu_ibt = has_word(v + 1, "ibt", " \t\n");
			si->cpu_user_shstk = has_word(v + 1, "user_shstk", " \t\n");
			return;
		}
	}
}

static enum cet_tri kconfig_value(const char *text, const char *name)
{
	size_t n = strlen(name);
	const char *line;

	for (line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		if (strncmp(line, name, n) == 0 && line[n] == '=')
			return line[n + 1] == 'y' ? CET_YES : CET_NO;
		if (strncmp(line, "# ", 2) == 0 && strncmp(line + 2, name, n) == 0 &&
		    strncmp(line + 2 + n, " is not set", 11) == 0)
			return CET_NO;
	}
	/* A full config that does not mention the symbol: the kernel
	 * predates it, which is also a "no". */
	return CET_NO;
}

/* Whether the config names @name at all (set, or "is not set"). */
static bool kconfig_mentions(const char *text, const char *name)
{
	size_t n = strlen(name);
	const char *line;

	for (line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		if (strncmp(line, name, n) == 0 && line[n] == '=')
			return true;
		if (strncmp(line, "# ", 2) == 0 && strncmp(line + 2, name, n) == 0 &&
		    line[2 + n] == ' ')
			return true;
	}
	return false;
}

void cet_kconfig_parse(const char *text, struct cet_sysinfo *si)
{
	si->kconfig_shstk = kconfig_value(text, "CONFIG_X86_USER_SHADOW_STACK");
	si->kconfig_allow_broken = kconfig_value(text, "CONFIG_X86_USER_SHADOW_STACK_ALLOW_BROKEN");
	si->kconfig_legacy_policy =
		kconfig_mentions(text, "CONFIG_X86_USER_SHADOW_STACK_ALLOW_BROKEN") ? CET_YES : CET_NO;
	si->kconfig_x32 = kconfig_value(text, "CONFIG_X86_X32_ABI");
}

void cet_cmdline_parse(const char *text, struct cet_sysinfo *si)
{
	const char *p = text;

	si->clearcpuid[0] = '\0';
	si->clearcpuid_shstk = false;
	si->shstk_legacy_elf[0] = '\0';
	while (*p) {
		size_t len;

		p += strspn(p, " \t\n");
		len = strcspn(p, " \t\n");
		if (len == 0)
			break;
		if (len == 2 && strncmp(p, "--", 2) == 0)
			break;	/* the rest belongs to init */
		if (strncmp(p, "clearcpuid=", 11) == 0) {
			size_t vl = len - 11;

			if (vl >= sizeof(si->clearcpuid))
				vl = sizeof(si->clearcpuid) - 1;
			memcpy(si->clearcpuid, p + 11, vl);
			si->clearcpuid[vl] = '\0';
			si->clearcpuid_shstk = has_word(si->clearcpuid, "shstk", ",") ||
					       has_word(si->clearcpuid, "user_shstk", ",");
		} else if (strncmp(p, "shstk_legacy_elf=", 17) == 0) {
			size_t vl = len - 17;

			if (vl >= sizeof(si->shstk_legacy_elf))
				vl = sizeof(si->shstk_legacy_elf) - 1;
			memcpy(si->shstk_legacy_elf, p + 17, vl);
			si->shstk_legacy_elf[vl] = '\0';
		}
		p += len;
	}
}

int cet_glibc_version_cmp(const char *a, const char *b)
{
	while (*a || *b) {
		char *ea, *eb;
		long x = strtol(a, &ea, 10), y = strtol(b, &eb, 10);

		if (x != y)
			return x < y ? -1 : 1;
		a = *ea == '.' ? ea + 1 : ea + strlen(ea);
		b = *eb == '.' ? eb + 1 : eb + strlen(eb);
		if (ea == a && eb == b)
			break;
	}
	return 0;
}

/*
 * config.gz without a build dependency: libz is always in the process
 * (libelf needs it), so resolve the few gz* calls at run time.
 */
static long read_gz(const char *path, size_t max, char **out)
{
	typedef void *(*gzopen_t)(int, const char *);
	typedef int (*gzread_t)(void *, void *, unsigned);
	typedef int (*gzclose_t)(void *);
	gzopen_t zopen;
	gzread_t zread;
	gzclose_t zclose;
	size_t len = 0, cap = 65536;
	void *h, *gz;
	char *buf;
	struct stat st;
	int fd;

	*out = NULL;
	/* Like cet_read_file(): a FIFO or device in a recorded tree must not
	 * block or feed us forever, so only a regular file is handed to zlib. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	h = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		close(fd);
		return -ENOSYS;
	}
	zopen = (gzopen_t)dlsym(h, "gzdopen");
	zread = (gzread_t)dlsym(h, "gzread");
	zclose = (gzclose_t)dlsym(h, "gzclose");
	if (!zopen || !zread || !zclose) {
		close(fd);
		dlclose(h);
		return -ENOSYS;
	}
	gz = zopen(fd, "rb");	/* gzclose() closes fd */
	if (!gz) {
		int e = errno ? errno : EIO;

		close(fd);
		dlclose(h);
		return -e;
	}
	buf = malloc(cap + 1);
	while (buf) {
		int r;

		if (len == cap) {
			char *nb;

			if (cap >= max)
				break;
			cap *= 2;
			nb = realloc(buf, cap + 1);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
		}
		r = zread(gz, buf + len, (unsigned)(cap - len));
		if (r < 0) {
			free(buf);
			buf = NULL;
			zclose(gz);
			dlclose(h);
			return -EIO;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	zclose(gz);
	dlclose(h);
	if (!buf)
		return -ENOMEM;
	buf[len] = '\0';
	*out = buf;
	return (long)len;
}

/* No kernel configuration read (yet, or found): every symbol unknown. */
static void kconfig_unknown(struct cet_sysinfo *si)
{
	si->kconfig_shstk = CET_UNKNOWN;
	si->kconfig_allow_broken = CET_UNKNOWN;
	si->kconfig_legacy_policy = CET_UNKNOWN;
	si->kconfig_x32 = CET_UNKNOWN;
	si->kconfig_source[0] = '\0';
}

static void read_kconfig(const char *root, struct cet_sysinfo *si)
{
	char path[PATH_MAX], *text = NULL;
	struct utsname u;
	long n = -ENOENT;

	kconfig_unknown(si);

	if (!cet_proc_path(path, sizeof(path), root, "config.gz"))
		n = read_gz(path, KCONFIG_MAX, &text);
	if (n < 0 && !is_live_root(root)) {
		/* A recorded tree may carry the config uncompressed. */
		if (!cet_proc_path(path, sizeof(path), root, "config"))
			n = cet_read_file(path, KCONFIG_MAX, &text);
	}
	if (n < 0 && is_live_root(root) && uname(&u) == 0) {
		snprintf(path, sizeof(path), "/boot/config-%s", u.release);
		n = cet_read_file(path, KCONFIG_MAX, &text);
	}
	if (n <= 0) {
		free(text);
		return;
	}
	snprintf(si->kconfig_source, sizeof(si->kconfig_source), "%s", path);
	cet_kconfig_parse(text, si);
	free(text);
}

bool cet_ss_is_x86_shstk(const char *root, char *machine, size_t size)
{
	struct cet_sysinfo tmp = { 0 };
	char path[PATH_MAX], *text = NULL;
	struct utsname u;

	if (is_live_root(root)) {
		if (uname(&u) != 0)
			return false;
		snprintf(machine, size, "%s", u.machine);
		return strcmp(u.machine, "x86_64") == 0;
	}
	if (!cet_proc_path(path, sizeof(path), root, "cpuinfo") &&
	    cet_read_file(path, 1024 * 1024, &text) > 0) {
		cet_cpuinfo_parse(text, &tmp);
		free(text);
		snprintf(machine, size, "%s", tmp.cpu_x86 ? "x86_64 (from cpuinfo)" : "not x86 (from cpuinfo)");
		return tmp.cpu_x86;
	}
	free(text);	/* an empty cpuinfo still returns a buffer */
	snprintf(machine, size, "x86_64 (assumed: no cpuinfo in the recorded tree)");
	return true;
}

int cet_sysinfo_read_support(const char *root, struct cet_sysinfo *si)
{
	char path[PATH_MAX], *text;
	struct proc_status st;
	long n;
	int rc;

	memset(si, 0, sizeof(*si));
	kconfig_unknown(si);
	si->glibc_cet = CET_UNKNOWN;	/* cet_sysinfo_read() finds out */

	rc = cet_proc_path(path, sizeof(path), root, "cpuinfo");
	if (rc)
		return rc;
	n = cet_read_file(path, 4UL * 1024 * 1024, &text);
	if (n < 0) {
		si->cpuinfo_errno = (int)-n;
	} else {
		cet_cpuinfo_parse(text, si);
		free(text);
	}

	rc = -ENOENT;
	if (!cet_proc_path(path, sizeof(path), root, "self/status") &&
	    (n = cet_read_file(path, 65536, &text)) >= 0) {
		rc = proc_status_parse(text, &st);
		free(text);
	}
	si->status_lines = rc == 0 ? (st.features.present ? CET_YES : CET_NO) : CET_UNKNOWN;

	snprintf(si->glibc_version, sizeof(si->glibc_version), "%s", gnu_get_libc_version());
	si->ss_is_x86_shstk = cet_ss_is_x86_shstk(root, si->machine, sizeof(si->machine));
	return 0;
}

int cet_sysinfo_read(const char *root, struct cet_sysinfo *si)
{
	int rc;

	rc = cet_sysinfo_read_support(root, si);
	if (rc)
		return rc;
	/* cetctl's own libc, found through /proc/self/maps: only the full read
	 * (info) needs it; status and audit must not read maps they were not
	 * asked for (tests/host/status-reads.bats) */
	si->glibc_cet = cet_glibc_cet_built();
	si->glibc_can_enable = cet_glibc_manages_shstk(si->glibc_version) && si->glibc_cet == CET_YES;
	return cet_sysinfo_read_policy(root, si);
}

int cet_sysinfo_read_policy(const char *root, struct cet_sysinfo *si)
{
	char path[PATH_MAX], *text;
	int rc;

	read_kconfig(root, si);
	rc = cet_proc_path(path, sizeof(path), root, "cmdline");
	if (rc)
		return rc;
	if (cet_read_file(path, 65536, &text) >= 0) {
		cet_cmdline_parse(text, si);
		free(text);
	}
	return 0;
}

unsigned int cet_sysinfo_lacks(const struct cet_sysinfo *si)
{
	/* user_shstk in cpuinfo is the kernel saying "I run user shadow
	 * stacks on this CPU"; the status lines say the kernel was built with
	 * the support. Both are needed. */
	return (si->status_lines == CET_YES ? 0 : CET_LACKS_KERNEL) |
	       (si->cpu_user_shstk ? 0 : CET_LACKS_CPU);
}

bool cet_sysinfo_supported(const struct cet_sysinfo *si)
{
	return cet_sysinfo_lacks(si) == 0;
}

bool cet_glibc_manages_shstk(const char *version)
{
	return cet_glibc_version_cmp(version, CET_GLIBC_MANAGES_SHSTK) >= 0;
}

enum cet_tri cet_glibc_cet_built(void)
{
	struct elf_cet_info info;
	char path[PATH_MAX];

	if (!cet_libc_path(path, sizeof(path)) || elf_cet_read_path(path, &info) != 0)
		return CET_UNKNOWN;
	return elf_cet_shstk_marked(&info) ? CET_YES : CET_NO;
}

const char *cet_libc_path(char *buf, size_t size)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[4096];

	buf[0] = '\0';
	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');

		if (p && strstr(p, "/libc.so.6")) {
			p[strcspn(p, "\n")] = '\0';
			snprintf(buf, size, "%s", p);
			break;
		}
	}
	fclose(f);
	return buf[0] ? buf : NULL;
}

const char *cet_sysinfo_legacy_policy(const struct cet_sysinfo *si, const char **why)
{
	if (si->kconfig_shstk == CET_NO || si->status_lines == CET_NO) {
		*why = "the kernel has no shadow-stack support";
		return "none";
	}
	if (si->kconfig_shstk == CET_YES && si->kconfig_legacy_policy == CET_NO) {
		/* shstk_legacy_elf= means nothing to such a kernel */
		*why = "the kernel has no legacy-ELF policy (its config does not know "
		       "CONFIG_X86_USER_SHADOW_STACK_ALLOW_BROKEN: mainline)";
		return "none";
	}
	if (strcmp(si->shstk_legacy_elf, "allow") == 0) {
		*why = "boot parameter shstk_legacy_elf=allow";
		return "allow";
	}
	if (strcmp(si->shstk_legacy_elf, "block") == 0) {
		*why = "boot parameter shstk_legacy_elf=block";
		return "block";
	}
	if (si->kconfig_allow_broken == CET_YES) {
		*why = "CONFIG_X86_USER_SHADOW_STACK_ALLOW_BROKEN=y";
		return "allow";
	}
	if (si->kconfig_allow_broken == CET_NO) {
		*why = "CONFIG_X86_USER_SHADOW_STACK_ALLOW_BROKEN is not set";
		return "block";
	}
	*why = "kernel configuration unknown";
	return "unknown";
}
