/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * /proc/<pid>/status and /proc/<pid>/task/<tid>/status: the fields cetctl
 * needs, above all the x86_Thread_features lines of the shadow-stack kernel
 * ("x86: Expose thread features in /proc/$PID/status"). Parsers take text so unit tests can feed them strings; the
 * readers take a root (NULL = /proc) so recorded trees can stand in, or
 * the process's directory opened with cet_proc_pid_open() (the *_at ones).
 * Everything returns 0 or -errno and never prints.
 */
#ifndef CETCTL_PROC_STATUS_H
#define CETCTL_PROC_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "cet-abi.h"

/*
 * Bits of the feature words the kernel prints: the arch_prctl() feature
 * bits themselves (one namespace for /proc, ptrace and arch_prctl).
 */
#define CET_FEAT_SHSTK	((unsigned int)ARCH_SHSTK_SHSTK)
#define CET_FEAT_WRSS	((unsigned int)ARCH_SHSTK_WRSS)

/* One "x86_Thread_features[_locked]:" line. */
struct cet_feature_line {
	bool present;		/* the line exists (kernel has the support) */
	unsigned int bits;	/* CET_FEAT_* words that were recognised */
	char unknown[96];	/* other words, space separated, kept verbatim */
};

struct proc_status {
	char name[64];		/* Name: the comm, the kernel's escapes undone */
	char state;		/* first letter of State: ('R', 'S', 'Z', ...) */
	pid_t tgid;
	pid_t pid;
	pid_t ppid;
	uid_t euid;		/* second field of Uid: (what ps shows as USER) */
	int threads;		/* Threads: (0 when absent) */
	int kthread;		/* Kthread: 1/0, or -1 when the kernel has no such line */
	bool has_vm;		/* VmSize: present (false: kernel thread or zombie) */
	struct cet_feature_line features;
	struct cet_feature_line locked;
};

/* Parse status text. -EINVAL when it does not look like a status file. */
int proc_status_parse(const char *text, struct proc_status *st);

/*
 * Read <root>/<pid>/status (tid == 0) or <root>/<pid>/task/<tid>/status.
 * -ENOENT/-ESRCH: the process is gone.
 */
int proc_status_read(const char *root, pid_t pid, pid_t tid, struct proc_status *st);
int proc_status_read_at(int piddir, pid_t tid, struct proc_status *st);

/* Parse one feature list ("shstk wrss ") into @fl; the words only. */
void cet_feature_words_parse(const char *words, struct cet_feature_line *fl);

/*
 * Format @fl back into words ("shstk wrss" then unknown words), "" for no
 * feature, "-" when the line is absent. Returns @buf.
 */
const char *cet_feature_line_str(const struct cet_feature_line *fl, char *buf, size_t size);

/* State letter from <piddir>/stat read now, or 0 when it cannot be read. */
char proc_stat_state_at(int piddir);

/* Whether the process is a kernel thread (Kthread:, else PF_KTHREAD in stat). */
bool proc_is_kthread_at(int piddir, const struct proc_status *st);

/*
 * List <piddir>/task: a sorted malloc'ed array of tids in *tids.
 * Returns the count or -errno.
 */
int proc_tasks_list_at(int piddir, pid_t **tids);

/*
 * List the numeric entries of <root> (the processes): sorted, malloc'ed.
 * Returns the count or -errno.
 */
int proc_pids_list(const char *root, pid_t **pids);

/* readlink <piddir>/exe into @buf. Returns the length or -errno. */
int proc_exe_read_at(int piddir, char *buf, size_t size);

/*
 * User name of @uid (getpwuid, remembered for the next call with the same
 * uid), or the number when there is no such user. Returns @buf.
 */
const char *proc_user_name(uid_t uid, char *buf, size_t size);

/* Parse a user name or number into @uid. 0 or -ENOENT. */
int proc_user_parse(const char *s, uid_t *uid);

/*
 * The systemd unit process @pid runs in, from <root>/<pid>/cgroup: the
 * deepest component of its cgroup path that names a unit (.service,
 * .scope, .socket, .mount, .swap; a .slice only when nothing deeper does),
 * on the unified (0::) hierarchy, else on the name=systemd one (cgroup v1).
 * "" when none (not under systemd). Returns 0 or -errno.
 */
int proc_unit_read(const char *root, pid_t pid, char *buf, size_t size);

#endif
