// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The program as /proc shows it, read from the right process: its pid as
 * the /proc we read numbers it (through a pidfd), the new image's auxv
 * (AT_SECURE, AT_ENTRY) and exe (x86-64 or not), its stat (resumed or
 * still stopped) and status (TracerPid; the features the kernel reports,
 * with ARCH_SHSTK_STATUS through ptrace for the final verification).
 * Calls the stopped-program part (launch_pt(), launch_fail()) and the
 * events part's clock.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cet-abi.h"
#include "elf-notes.h"
#include "shstk-launch-internal.h"
#include "shstk.h"

#ifndef AT_SECURE
#define AT_SECURE		23
#endif

/* The file at @path, NUL-terminated in @buf (at most @size - 1 bytes):
 * its length, or -errno. (Also Yama's /proc/sys file, for the caller.) */
ssize_t launch_read_file(const char *path, char *buf, size_t size)
{
	ssize_t n, total = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while ((size_t)total < size - 1) {
		n = read(fd, buf + total, size - 1 - (size_t)total);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			n = -errno;
			close(fd);
			return n;
		}
		if (n == 0)
			break;
		total += n;
	}
	close(fd);
	buf[total] = '\0';
	return total;
}

/* The number after "@key:" in @text, or -1. */
static long field_long(const char *text, const char *key)
{
	size_t n = strlen(key);
	const char *p = text;

	while (p && *p) {
		if (strncmp(p, key, n) == 0 && p[n] == ':')
			return strtol(p + n + 1, NULL, 10);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

/* The hexadecimal mask after "@key:" in @text, or 0. */
static unsigned long long field_hex(const char *text, const char *key)
{
	size_t n = strlen(key);
	const char *p = text;

	while (p && *p) {
		if (strncmp(p, key, n) == 0 && p[n] == ':')
			return strtoull(p + n + 1, NULL, 16);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return 0;
}

/*
 * The tracee's pid as /proc numbers it: in a child pid namespace with the
 * parent's /proc mounted (unshare -p without --mount-proc), /proc/<our pid>
 * is another process. A pidfd's fdinfo "Pid:" is translated into the pid
 * namespace of the /proc it is read from; 0 there means the process is not
 * visible in that /proc at all.
 */
int launch_resolve_proc_pid(struct launch *l)
{
	char path[64], buf[4096], self[32];
	long pid;
	ssize_t n;
	int fd;

	n = readlink("/proc/self", self, sizeof(self) - 1);
	if (n <= 0)
		return launch_fail(l, LAUNCH_VERIFY, n < 0 ? -errno : -EPROTO, "readlink /proc/self");
	self[n] = '\0';
	l->proc_self = (pid_t)atoi(self);

	fd = (int)syscall(SYS_pidfd_open, l->pid, 0);
	if (fd < 0) {
		/* No pidfds (before 5.3): only trust a /proc of our namespace. */
		if (l->proc_self != getpid())
			return launch_fail(l, LAUNCH_VERIFY, -EXDEV, "/proc is another pid namespace's");
		l->proc_pid = l->pid;
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	n = launch_read_file(path, buf, sizeof(buf));
	close(fd);
	if (n < 0)
		return launch_fail(l, LAUNCH_VERIFY, (int)n, "reading the pidfd's fdinfo");
	pid = field_long(buf, "Pid");
	if (pid < 0 && l->proc_self == getpid())
		pid = l->pid;	/* fdinfo without Pid: (old kernel), same namespace */
	if (pid <= 0)
		return launch_fail(l, LAUNCH_VERIFY, -EXDEV, "the program is not visible in /proc");
	l->proc_pid = (pid_t)pid;
	return 0;
}

/* 1 when the kernel set AT_SECURE in the new image's auxv, 0 not, or -1;
 * the entry point (AT_ENTRY) in l->entry. */
int launch_at_secure(struct launch *l)
{
	char path[64];
	unsigned long auxv[2 * 64];
	ssize_t n;
	size_t i;
	int fd, ret = -1;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)l->proc_pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return launch_fail(l, LAUNCH_TRACE, -errno, "reading /proc/PID/auxv");
	n = read(fd, auxv, sizeof(auxv));
	close(fd);
	if (n < (ssize_t)(2 * sizeof(long)))
		return launch_fail(l, LAUNCH_TRACE, n < 0 ? -errno : -EPROTO, "reading /proc/PID/auxv");
	for (i = 0; i + 1 < (size_t)n / sizeof(long) && auxv[i] != AT_NULL; i += 2) {
		if (auxv[i] == AT_ENTRY)
			l->entry = auxv[i + 1];
		if (auxv[i] == AT_SECURE)
			ret = auxv[i + 1] != 0;
	}
	if (ret < 0 || !l->entry)
		return launch_fail(l, LAUNCH_TRACE, -EPROTO, "no AT_SECURE or AT_ENTRY in /proc/PID/auxv");
	return ret;
}

/* 0 when the new image is an x86-64 ELF program (not x32, not i386). */
int launch_check_x86_64(struct launch *l)
{
	enum elf_arch arch;
	char path[64];
	int fd;

	if (l->saved.cs != USER_CS_64)
		return launch_fail(l, LAUNCH_NOT64, -ENOEXEC, "a 32-bit program");
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)l->proc_pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return launch_fail(l, LAUNCH_TRACE, -errno, "opening /proc/PID/exe");
	arch = elf_arch_read_fd(fd);
	close(fd);
	if (arch == ELF_ARCH_NOT_ELF)
		return launch_fail(l, LAUNCH_NOT64, -ENOEXEC, "not an ELF image");
	if (arch != ELF_ARCH_X86_64)
		return launch_fail(l, LAUNCH_NOT64, -ENOEXEC,
			    arch == ELF_ARCH_X32 ? "an x32 program" : "not an x86-64 program");
	return 0;
}

/* Trust, but verify, from the kernel, for the stopped program. */
int launch_verify(struct launch *l, const struct launch_opts *o)
{
	struct shstk_proc_features f;
	unsigned long status = 0;
	char path[64], buf[8192];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)l->proc_pid);
	n = launch_read_file(path, buf, sizeof(buf));
	if (n < 0)
		return launch_fail(l, LAUNCH_VERIFY, (int)n, "reading /proc/PID/status");
#ifdef CETCTL_FAULT_HOOKS
	if (getenv("CETCTL_FAULT_VERIFY"))
		buf[0] = '\0';	/* a status that proves nothing */
#endif
	/* Signals the kernel holds for it (arrived while it stayed stopped). */
	l->kernel_pending = field_hex(buf, "SigPnd") | field_hex(buf, "ShdPnd");
	/* The right process: the only one this tracer traces. */
	if (field_long(buf, "TracerPid") != l->proc_self)
		return launch_fail(l, LAUNCH_VERIFY, -ESRCH, "/proc/PID/status is not the traced program");
	if (!o->enable)
		return 0;
	shstk_features_parse(buf, &f);
	l->res->status_lines = f.present;
	l->res->got_enabled = f.enabled;
	l->res->got_locked = f.locked;
	if (!f.present || (f.enabled & o->enable) != o->enable || (f.locked & o->lock) != o->lock)
		return launch_fail(l, LAUNCH_VERIFY, -EPROTO, NULL);
	if (launch_pt(PTRACE_ARCH_PRCTL, l->pid, (unsigned long)&status, ARCH_SHSTK_STATUS) < 0)
		return launch_fail(l, LAUNCH_VERIFY, -errno, "PTRACE_ARCH_PRCTL(ARCH_SHSTK_STATUS)");
	if ((status & o->enable) != o->enable) {
		l->res->got_enabled = status;
		return launch_fail(l, LAUNCH_VERIFY, -EPROTO, NULL);
	}
	return 0;
}

/*
 * Before the exec, a resume counts only when observed: the caller has left
 * its ptrace stop (/proc/PID/stat no longer says 't'), or a new event of it
 * (another stop, its death) is waiting. A PTRACE_CONT answered 0 without
 * resuming (a seccomp filter) would otherwise leave the caller stopped and
 * the tracer waiting for its exec for ever. 0, or -EPROTO once the step's
 * time is up; nothing here allocates (see launch_tracer()).
 */
int launch_observe_resumed(const struct launch *l)
{
	long long deadline = launch_now_ms() + launch_step_timeout_ms();
	struct timespec pause = { 0, 1000000 };
	char path[64], buf[512], *close_paren;
	siginfo_t si;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)l->proc_pid);
	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)l->pid, &si, WEXITED | WSTOPPED | WNOHANG | WNOWAIT | __WALL) == 0 &&
		    si.si_pid == l->pid)
			return 0;
		/* unreadable: not observed (its death shows in the wait above) */
		if (launch_read_file(path, buf, sizeof(buf)) > 0) {
			close_paren = strrchr(buf, ')');
			if (close_paren && close_paren[1] == ' ' && close_paren[2] &&
			    close_paren[2] != 't')
				return 0;
		}
		if (launch_now_ms() >= deadline)
			return -EPROTO;
		nanosleep(&pause, NULL);
	}
}

/* The TracerPid /proc/PID/status gives, or -1. */
long launch_tracer_pid(const struct launch *l)
{
	char path[64], buf[4096];

	snprintf(path, sizeof(path), "/proc/%d/status", (int)l->proc_pid);
	if (launch_read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	return field_long(buf, "TracerPid");
}
