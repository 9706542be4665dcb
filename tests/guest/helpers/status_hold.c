// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * status_hold - a process for tests/guest/cetctl-status.bats to look at with
 * `cetctl status` while it runs (usually launched by `cetctl run --shstk`).
 *
 *   status_hold [-t THREADS] [-d] SECONDS
 *
 * Starts THREADS extra threads (default 0) that sleep, prints "ready" once
 * they all run, then sleeps SECONDS and exits 0. With -d the last thread
 * turns its own shadow stack off first (ARCH_SHSTK_DISABLE; works only when
 * the features are not locked) and prints "disable: ok" or the errno, which
 * makes the process "mixed".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cet-abi.h"

static pthread_barrier_t started;
static unsigned int seconds;

struct arg {
	int disable;
};

static void *body(void *p)
{
	struct arg *a = p;

	if (a->disable) {
		/* raw syscall: nothing returns through a frame pushed before it */
		long r = syscall(SYS_arch_prctl, ARCH_SHSTK_DISABLE, ARCH_SHSTK_SHSTK);

		printf("disable: %s\n", r == 0 ? "ok" : strerror(errno));
		fflush(stdout);
	}
	pthread_barrier_wait(&started);
	sleep(seconds);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = 0, disable = 0, c, i;
	pthread_t *t;
	struct arg *args;

	while ((c = getopt(argc, argv, "t:d")) != -1) {
		if (c == 't')
			threads = atoi(optarg);
		else if (c == 'd')
			disable = 1;
		else
			return 2;
	}
	if (optind >= argc || threads < 0 || threads > 64) {
		fprintf(stderr, "usage: status_hold [-t THREADS] [-d] SECONDS\n");
		return 2;
	}
	seconds = (unsigned int)atoi(argv[optind]);
	t = calloc((size_t)threads + 1, sizeof(*t));
	args = calloc((size_t)threads + 1, sizeof(*args));
	if (!t || !args)
		return 1;
	pthread_barrier_init(&started, NULL, (unsigned int)threads + 1);
	for (i = 0; i < threads; i++) {
		args[i].disable = disable && i == threads - 1;
		if (pthread_create(&t[i], NULL, body, &args[i]) != 0)
			return 1;
	}
	pthread_barrier_wait(&started);
	printf("ready\n");
	fflush(stdout);
	sleep(seconds);
	return 0;
}
