// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The shadow stacks of contexts (see ucontext.c): mapped at a made
 * context's first switch, recorded in a table keyed by their base, unmapped
 * when they can no longer be used:
 *  - when the context's function has returned and the trampoline has
 *    switched to uc_link (cetctl_uc_stack_release);
 *  - when the program has unmapped the context's stack: a sweep, run when
 *    the table has doubled since the last one (at 64 entries first), asks
 *    mincore() for the page at the top of each context's stack.
 * So the number of context shadow stacks mapped stays below
 * max(64, 2 * L), L being the largest number of contexts at a sweep that
 * were started, have not returned, and whose stack is still mapped. Made
 * but never switched to: none. What no library can tell apart from a live
 * context stays: a context left in the middle of its function whose stack
 * the program keeps (or frees to malloc, which keeps it mapped); glibc
 * 2.39 keeps every one, finished or not. Measured (tests/guest/
 * preload-ucontext.bats): 100,000 contexts run to their end, made and
 * dropped, or left with their stacks unmapped.
 *
 * Locking: a spin lock (the table is touched for microseconds, once per
 * context start and end), held with signals blocked, so that a handler
 * that starts or ends a context cannot wait for its own thread. A fork
 * child starts with the lock free.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload.h"
#include "../lib/cet-abi.h"

#define PAGE		4096UL
#define SWEEP_FIRST	64

struct ctx_stack {
	unsigned long base;	/* 0: a free slot */
	unsigned long size;
	unsigned long hi;	/* the end of the context's stack */
};

static struct {
	struct ctx_stack *slot;	/* open addressing by base, linear probing */
	unsigned long cap;	/* a power of two, or 0 */
	unsigned long count;
	unsigned long sweep_at;
	int lock;
} tab = { .sweep_at = SWEEP_FIRST };

/* Signals are blocked while the lock is held: a handler that starts or
 * ends a context cannot wait for its own thread. */
static void lock(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, old);
	while (__atomic_exchange_n(&tab.lock, 1, __ATOMIC_ACQUIRE))
		sched_yield();
}

static void unlock(const sigset_t *old)
{
	__atomic_store_n(&tab.lock, 0, __ATOMIC_RELEASE);
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

static void child_after_fork(void)
{
	tab.lock = 0;
}

__attribute__((constructor)) static void stacks_init(void)
{
	pthread_atfork(NULL, NULL, child_after_fork);
}

static unsigned long home(unsigned long base, unsigned long cap)
{
	return ((base / PAGE) * 0x9e3779b97f4a7c15UL >> 20) & (cap - 1);
}

static unsigned long find(unsigned long base)
{
	unsigned long i;

	if (!tab.cap)
		return ~0UL;
	for (i = home(base, tab.cap); tab.slot[i].base; i = (i + 1) & (tab.cap - 1))
		if (tab.slot[i].base == base)
			return i;
	return ~0UL;
}

static void put(struct ctx_stack *slot, unsigned long cap, const struct ctx_stack *e)
{
	unsigned long i;

	for (i = home(e->base, cap); slot[i].base; i = (i + 1) & (cap - 1))
		;
	slot[i] = *e;
}

/* Remove slot @i, moving later entries of its probe run back into the gap. */
static void take_out(unsigned long i)
{
	unsigned long mask = tab.cap - 1, j = i, h;

	tab.slot[i].base = 0;
	tab.count--;
	for (;;) {
		j = (j + 1) & mask;
		if (!tab.slot[j].base)
			return;
		h = home(tab.slot[j].base, tab.cap);
		/* stays if its home lies cyclically in (i, j] */
		if (i < j ? (h > i && h <= j) : (h > i || h <= j))
			continue;
		tab.slot[i] = tab.slot[j];
		tab.slot[j].base = 0;
		i = j;
	}
}

static unsigned long my_ssp(void)
{
	unsigned long ssp = 0;

	__asm__ volatile(UC_RDSSP("%0") : "+r"(ssp));
	return ssp;
}

/* The program unmapped the context's stack: the context cannot run again. */
static int stack_gone(const struct ctx_stack *e)
{
	unsigned char v;

	return mincore((void *)((e->hi - 1) & ~(PAGE - 1)), PAGE, &v) != 0 && errno == ENOMEM;
}

/* Rebuild the table into @cap slots, unmapping (with @sweep) the shadow
 * stacks of contexts whose stack is gone. Under the lock. */
static void rebuild(unsigned long cap, int sweep)
{
	struct ctx_stack *slot = mmap(NULL, cap * sizeof(*slot), PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned long i, ssp = my_ssp(), kept = 0;

	if (slot == MAP_FAILED)
		cetctl_preload_fatal("cannot grow the table of context shadow stacks", errno);
	for (i = 0; i < tab.cap; i++) {
		struct ctx_stack *e = &tab.slot[i];

		if (!e->base)
			continue;
		if (sweep && !(ssp >= e->base && ssp <= e->base + e->size) && stack_gone(e)) {
			munmap((void *)e->base, e->size);
			continue;
		}
		put(slot, cap, e);
		kept++;
	}
	if (tab.slot)
		munmap(tab.slot, tab.cap * sizeof(*slot));
	tab.slot = slot;
	tab.cap = cap;
	tab.count = kept;
}

static void add(const struct ctx_stack *e)
{
	if (tab.count >= tab.sweep_at) {
		rebuild(tab.cap, 1);
		tab.sweep_at = tab.count * 2 > SWEEP_FIRST ? tab.count * 2 : SWEEP_FIRST;
	}
	if ((tab.count + 1) * 2 > tab.cap)
		rebuild(tab.cap ? tab.cap * 2 : 2 * SWEEP_FIRST, 0);
	put(tab.slot, tab.cap, e);
	tab.count++;
}

__attribute__((visibility("hidden"))) unsigned long
cetctl_uc_stack_new(unsigned long size, unsigned long hi)
{
	struct ctx_stack e = { .size = size, .hi = hi };
	sigset_t old;
	long p;

	p = syscall(__NR_map_shadow_stack, 0UL, size, SHADOW_STACK_SET_TOKEN);
	if (p == -1) {
		char what[128];
		int err = errno;

		snprintf(what, sizeof(what), "cannot map a shadow stack of %lu bytes for a context "
			 "(map_shadow_stack)", size);
		cetctl_preload_fatal(what, err);
	}
	e.base = (unsigned long)p;
	/* signals blocked from here: a handler would run on the new, small
	 * shadow stack while cetctl_uc_prime is on it */
	lock(&old);
	cetctl_uc_prime(e.base + size - 8);
	add(&e);
	unlock(&old);
	return e.base;
}

__attribute__((visibility("hidden"))) void cetctl_uc_stack_release(unsigned long base)
{
	struct ctx_stack e = { 0 };
	unsigned long i;
	sigset_t old;

	lock(&old);
	i = find(base);
	if (i != ~0UL) {
		e = tab.slot[i];
		take_out(i);
	}
	unlock(&old);
	if (e.base)
		munmap((void *)e.base, e.size);
}
