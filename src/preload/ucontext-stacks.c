// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The shadow stacks of contexts (see ucontext.c): mapped at a made
 * context's first switch, recorded in a table keyed by their base with the
 * end of the context's stack, and given up when they can no longer be used:
 *  - when the context's function has returned and the trampoline has
 *    switched to uc_link (cetctl_uc_stack_release);
 *  - when the program unmaps the memory of the context's stack: munmap is
 *    interposed (only while contexts exist; QEMU frees a coroutine's stack
 *    so), and a sweep, run when the table has doubled since the last one
 *    (at 64 entries first), asks mincore() about the stack of each context,
 *    for the munmaps we cannot see (glibc's own, for example in free()).
 * Given up means kept as a spare for the next context of the same size, up
 * to SPARES, else unmapped: a context that starts and ends then costs no
 * system call of ours for its shadow stack (in Bochs a map_shadow_stack and
 * munmap pair per context made 100,000 contexts take minutes).
 *
 * The bound: context shadow stacks mapped <= max(64, 2 * L) + SPARES (8),
 * L being the largest number of contexts at a sweep that were started,
 * have not returned, and whose stack memory was not unmapped. Made but
 * never switched to: none. What no library can tell from a live context
 * stays: a context left in the middle of its function whose stack the
 * program keeps, or frees to malloc, which keeps the memory (glibc 2.39
 * keeps every shadow stack it maps, finished or not). Contexts are never
 * matched by their stack's address: shared-stack coroutine libraries run
 * many live contexts on one stack. Measured in tests/guest/
 * preload-ucontext.bats: 100,000 contexts run to their end, made and
 * dropped, or left midway with their stacks unmapped.
 *
 * Locking: a spin lock (the table is touched for microseconds), held with
 * signals blocked, so that a handler that starts or ends a context cannot
 * wait for its own thread. A fork child starts with the lock free. Our own
 * munmaps are system calls, not the interposed munmap.
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
#define SPARES		8

struct ctx_stack {
	unsigned long base;	/* 0: a free slot */
	unsigned long size;
	unsigned long hi;	/* the end of the context's stack */
};

static struct {
	struct ctx_stack *slot;	/* open addressing by base, linear probing */
	unsigned long cap;	/* a power of two, or 0 */
	unsigned long sweep_at;
	struct ctx_stack spare[SPARES];
	unsigned int nspare;
	int lock;
} tab = { .sweep_at = SWEEP_FIRST };

/* Entries in the table: read without the lock by munmap's fast path. */
__attribute__((visibility("hidden"))) unsigned long cetctl_uc_live;

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

static void sys_munmap(unsigned long addr, unsigned long len)
{
	syscall(__NR_munmap, addr, len);
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
	cetctl_uc_live--;
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

/* A shadow stack no context can use any more: a spare, or unmapped. */
static void give_up(const struct ctx_stack *e)
{
	if (tab.nspare < SPARES)
		tab.spare[tab.nspare++] = *e;
	else
		sys_munmap(e->base, e->size);
}

static unsigned long my_ssp(void)
{
	unsigned long ssp = 0;

	__asm__ volatile(UC_RDSSP("%0") : "+r"(ssp));
	return ssp;
}

static int running_on(const struct ctx_stack *e, unsigned long ssp)
{
	return ssp >= e->base && ssp <= e->base + e->size;
}

/* Which contexts are gone: a sweep asks mincore(), munmap(addr, len) says. */
struct gone {
	unsigned long addr, len;	/* len 0: the sweep */
	unsigned long ssp;
};

static int is_gone(const struct ctx_stack *e, const struct gone *g)
{
	unsigned char v;

	if (running_on(e, g->ssp))
		return 0;
	if (g->len)
		return e->hi - 1 >= g->addr && e->hi - 1 - g->addr < g->len;
	return mincore((void *)((e->hi - 1) & ~(PAGE - 1)), PAGE, &v) != 0 && errno == ENOMEM;
}

/* Rebuild the table into @cap slots, giving up (with @g) the shadow stacks
 * of contexts that are gone. Under the lock. */
static void rebuild(unsigned long cap, const struct gone *g)
{
	struct ctx_stack *slot = mmap(NULL, cap * sizeof(*slot), PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned long i, kept = 0;

	if (slot == MAP_FAILED)
		cetctl_preload_fatal("cannot grow the table of context shadow stacks", errno);
	for (i = 0; i < tab.cap; i++) {
		struct ctx_stack *e = &tab.slot[i];

		if (!e->base)
			continue;
		if (g && is_gone(e, g)) {
			give_up(e);
			continue;
		}
		put(slot, cap, e);
		kept++;
	}
	if (tab.slot)
		sys_munmap((unsigned long)tab.slot, tab.cap * sizeof(*slot));
	tab.slot = slot;
	tab.cap = cap;
	cetctl_uc_live = kept;
}

static void add(const struct ctx_stack *e)
{
	if (cetctl_uc_live >= tab.sweep_at) {
		struct gone g = { .ssp = my_ssp() };

		rebuild(tab.cap, &g);
		tab.sweep_at = cetctl_uc_live * 2 > SWEEP_FIRST ? cetctl_uc_live * 2 : SWEEP_FIRST;
	}
	if ((cetctl_uc_live + 1) * 2 > tab.cap)
		rebuild(tab.cap ? tab.cap * 2 : 2 * SWEEP_FIRST, NULL);
	put(tab.slot, tab.cap, e);
	cetctl_uc_live++;
}

/* A spare of @size: its restore token's slot, or 0. A spare was left by one
 * SAVEPREVSSP (its context switched away for the last time), so exactly one
 * restore token is on it. */
static unsigned long take_spare(unsigned long size, unsigned long *base)
{
	unsigned int i;
	unsigned long s, top;

	for (i = tab.nspare; i-- > 0;) {
		if (tab.spare[i].size != size)
			continue;
		*base = tab.spare[i].base;
		tab.spare[i] = tab.spare[--tab.nspare];
		top = *base + size;
		for (s = top; s - 8 >= *base; s -= 8)
			if ((*(volatile unsigned long *)(s - 8) & ~7UL) == s)
				return s - 8;
		sys_munmap(*base, size);	/* no token: not usable */
		return 0;
	}
	return 0;
}

__attribute__((visibility("hidden"))) unsigned long
cetctl_uc_stack_new(unsigned long size, unsigned long hi)
{
	struct ctx_stack e = { .size = size, .hi = hi };
	unsigned long token;
	sigset_t old;
	long p;

	/* signals blocked with the lock: a handler would run on the new,
	 * small shadow stack while cetctl_uc_prime is on it */
	lock(&old);
	token = take_spare(size, &e.base);
	if (!token) {
		unlock(&old);
		p = syscall(__NR_map_shadow_stack, 0UL, size, SHADOW_STACK_SET_TOKEN);
		if (p == -1) {
			char what[128];
			int err = errno;

			snprintf(what, sizeof(what), "cannot map a shadow stack of %lu bytes for a "
				 "context (map_shadow_stack)", size);
			cetctl_preload_fatal(what, err);
		}
		e.base = (unsigned long)p;
		token = e.base + size - 8;
		lock(&old);
	}
	cetctl_uc_prime(token, e.base + size);
	add(&e);
	unlock(&old);
	return e.base;
}

__attribute__((visibility("hidden"))) void cetctl_uc_stack_release(unsigned long base)
{
	unsigned long i;
	sigset_t old;

	lock(&old);
	i = find(base);
	if (i != ~0UL) {
		struct ctx_stack e = tab.slot[i];

		take_out(i);
		give_up(&e);
	}
	unlock(&old);
}

/* The program is about to unmap [@addr, @addr + @len): the contexts whose
 * stack ends in there are gone (called by the interposed munmap). */
__attribute__((visibility("hidden"))) void cetctl_uc_stack_unmapped(unsigned long addr,
								     unsigned long len)
{
	struct gone g = { .addr = addr, .len = len, .ssp = my_ssp() };
	unsigned long i;
	sigset_t old;

	if (!len)
		return;
	lock(&old);
	for (i = 0; i < tab.cap; i++)
		if (tab.slot[i].base && is_gone(&tab.slot[i], &g)) {
			rebuild(tab.cap, &g);
			break;
		}
	unlock(&old);
}
