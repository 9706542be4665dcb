// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * seccomp-lie RULE[,RULE...] PROG [ARG...]: install a real seccomp filter
 * (with no_new_privs, as any unprivileged user may) that answers the named
 * calls with 0 without doing them (SECCOMP_RET_ERRNO with errno 0), then
 * exec PROG. A RULE is a system call name (wait4, waitid) or ptrace=REQ,
 * REQ the request number (0x4206 PTRACE_SEIZE, 13 PTRACE_SETREGS, ...).
 * The filter is inherited by every process PROG starts.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_RULES 16

int main(int argc, char *argv[])
{
	struct sock_filter f[8 + 4 * MAX_RULES];
	struct sock_fprog prog;
	char *rules, *r, *save;
	unsigned n = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: seccomp-lie RULE[,RULE...] PROG [ARG...]\n");
		return 2;
	}
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, arch));
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	rules = strdup(argv[1]);
	for (r = strtok_r(rules, ",", &save); r; r = strtok_r(NULL, ",", &save)) {
		long nr;

		if (n + 6 > sizeof(f) / sizeof(f[0]))
			return 2;
		f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						      offsetof(struct seccomp_data, nr));
		if (strncmp(r, "ptrace=", 7) == 0) {
			unsigned long req = strtoul(r + 7, NULL, 0);

			/* nr == ptrace && args[0] (low half) == req -> lie */
			f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
							      SYS_ptrace, 0, 3);
			f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
							      offsetof(struct seccomp_data, args[0]));
			f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
							      (unsigned)req, 0, 1);
			f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 0);
			continue;
		}
		if (strcmp(r, "wait4") == 0)
			nr = SYS_wait4;
		else if (strcmp(r, "waitid") == 0)
			nr = SYS_waitid;
		else if (strcmp(r, "arch_prctl") == 0)
			nr = SYS_arch_prctl;
		else {
			fprintf(stderr, "seccomp-lie: unknown rule: %s\n", r);
			return 2;
		}
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 1);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 0);
	}
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	prog.len = (unsigned short)n;
	prog.filter = f;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0) {
		perror("seccomp-lie: installing the filter");
		return 2;
	}
	execvp(argv[2], argv + 2);
	perror("seccomp-lie: exec");
	return 127;
}
