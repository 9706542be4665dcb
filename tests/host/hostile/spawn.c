// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Process populations for tests/host/hostile-proc.bats, cheaper than a
 * shell loop (a fork without exec costs a few pages):
 *
 *   spawn hold N       fork N children (comm "hostile-hold") that wait on a
 *                      pipe; print "ready <n>" (n < N when fork hits a limit),
 *                      then on SIGTERM/SIGINT/SIGHUP (or after 300 s) let
 *                      them exit, reap them all and exit 0. If spawn is killed,
 *                      the pipe closes and the children exit by themselves.
 *   spawn churn SECS   for SECS seconds keep up to 64 short-lived children
 *                      (comm "hostile-churn", every 4th with a second thread,
 *                      every 8th living 300 ms, the others under 2 ms)
 *                      starting and exiting; print "churned <n>".
 *   spawn zombie       fork a child that exits at once and do not reap it;
 *                      print "zombie <pid>", reap on SIGTERM and exit 0.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Until SIGTERM/SIGINT/SIGHUP, or 300 s so that nothing outlives a test. */
static void wait_for_stop(void)
{
	sigset_t set;
	struct timespec ts = { 300, 0 };

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	while (sigtimedwait(&set, NULL, &ts) < 0 && errno == EINTR)
		;
}

static void reap_all(void)
{
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
}

static int hold(long n)
{
	int fds[2];
	long made = 0;

	if (pipe(fds))
		return 1;
	for (; made < n; made++) {
		pid_t pid = fork();

		if (pid < 0)
			break;	/* EAGAIN: the limit is part of the answer */
		if (pid == 0) {
			char c;

			prctl(PR_SET_NAME, "hostile-hold");
			close(fds[1]);
			while (read(fds[0], &c, 1) < 0 && errno == EINTR)
				;
			_exit(0);
		}
	}
	close(fds[0]);
	printf("ready %ld\n", made);
	fflush(stdout);
	wait_for_stop();
	close(fds[1]);
	reap_all();
	return 0;
}

static void *thread_main(void *arg)
{
	usleep(200);
	return arg;
}

static int churn(long secs)
{
	time_t end = time(NULL) + secs;
	long total = 0, live = 0;

	while (time(NULL) < end) {
		pid_t pid;

		while (live >= 64 && waitpid(-1, NULL, 0) > 0)
			live--;
		while (live > 0 && waitpid(-1, NULL, WNOHANG) > 0)
			live--;
		pid = fork();
		if (pid < 0) {
			usleep(1000);
			continue;
		}
		if (pid == 0) {
			pthread_t t;

			prctl(PR_SET_NAME, "hostile-churn");
			if (total % 4 == 0 && pthread_create(&t, NULL, thread_main, NULL) == 0)
				pthread_join(t, NULL);
			/* most live a few hundred µs, every 8th 300 ms */
			usleep(total % 8 == 0 ? 300000 : (unsigned int)(total % 7) * 300);
			_exit(0);
		}
		live++;
		total++;
	}
	reap_all();
	printf("churned %ld\n", total);
	return 0;
}

static int zombie(void)
{
	pid_t pid = fork();

	if (pid < 0)
		return 1;
	if (pid == 0)
		_exit(0);
	printf("zombie %d\n", (int)pid);
	fflush(stdout);
	wait_for_stop();
	reap_all();
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "hold") == 0)
		return hold(atol(argv[2]));
	if (argc == 3 && strcmp(argv[1], "churn") == 0)
		return churn(atol(argv[2]));
	if (argc == 2 && strcmp(argv[1], "zombie") == 0)
		return zombie();
	fprintf(stderr, "usage: spawn hold N | churn SECS | zombie\n");
	return 2;
}
