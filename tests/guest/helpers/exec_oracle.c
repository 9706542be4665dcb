// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * exec_oracle FILE... — what the running kernel really does with each file:
 * execve() it (traced, so not one instruction of it runs), then ask the
 * kernel for the shadow-stack interface of the new program with
 * PTRACE_ARCH_PRCTL(ARCH_SHSTK_LOCK, 0): the series' legacy-ELF policy
 * (the legacy-ELF policy) refuses every ARCH_SHSTK_* but STATUS with EINVAL, before the
 * LOCK case and before any hardware check, so this works without CET
 * hardware; LOCK of no feature changes nothing. One line per file:
 *   FILE exec=0 lock=0|EINVAL|E...      or   FILE exec=ENOEXEC|ENOENT|...
 * tests/guest/elf-oracle.bats compares it with `cetctl elf -J`.
 */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cet-abi.h"

static const char *ename(int e)
{
	const char *n = e ? strerrorname_np(e) : "0";

	return n ? n : "E?";
}

static void oracle(const char *path)
{
	int pfd[2], status, child_errno = 0;
	pid_t pid;
	ssize_t n;

	if (pipe2(pfd, O_CLOEXEC) < 0) {
		perror("pipe2");
		exit(2);
	}
	pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(2);
	}
	if (pid == 0) {
		char *argv[] = { (char *)path, NULL };
		char *envp[] = { NULL };
		int e;

		close(pfd[0]);
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
			_exit(3);
		execve(path, argv, envp);
		e = errno;
		if (write(pfd[1], &e, sizeof(e)) != sizeof(e))
			_exit(4);
		_exit(5);
	}
	close(pfd[1]);
	/* the write end closes at a successful exec (O_CLOEXEC) or at exit */
	n = read(pfd[0], &child_errno, sizeof(child_errno));
	close(pfd[0]);
	if (waitpid(pid, &status, 0) < 0) {
		perror("waitpid");
		exit(2);
	}
	if (n == (ssize_t)sizeof(child_errno)) {
		printf("%s exec=%s\n", path, ename(child_errno));
		if (WIFSTOPPED(status))
			kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return;
	}
	if (!WIFSTOPPED(status)) {
		/* killed during the exec, after the point of no return */
		printf("%s exec=0 lock=dead(%d)\n", path, status);
		return;
	}
	errno = 0;
	if (ptrace(PTRACE_ARCH_PRCTL, pid, (void *)0UL, (void *)(unsigned long)ARCH_SHSTK_LOCK) < 0)
		printf("%s exec=0 lock=%s\n", path, ename(errno));
	else
		printf("%s exec=0 lock=0\n", path);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: exec_oracle FILE...\n");
		return 2;
	}
	for (int i = 1; i < argc; i++)
		oracle(argv[i]);
	return 0;
}
