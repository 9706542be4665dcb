// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cetctl map - map a test shadow stack with map_shadow_stack(2) and show
 * what the kernel made of it: address, size, restore token and the smaps
 * entry (VmFlags "ss"). --pivot switches onto it and back; --hold keeps
 * it mapped so that `cetctl status PID` in another shell can look at it.
 *
 * Text and JSON come from the same emit_*() calls (one print path).
 */
#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "c.h"
#include "cetctl.h"
#include "jsonwrt.h"
#include "shstk.h"
#include "util.h"

#define SMAPS_MAX	(16 * 1024 * 1024)

struct emitter {
	bool json;
	struct jsonwrt w;
};

static void emit_open(struct emitter *e, const char *key, const char *title)
{
	if (e->json)
		jsonwrt_object_open(&e->w, key, JSONWRT_BLOCK);
	else if (title)
		printf("%s:\n", title);
}

static void emit_close(struct emitter *e)
{
	if (e->json)
		jsonwrt_object_close(&e->w);
}

/* text: "label value" */
static void emit_text(struct emitter *e, const char *label, const char *val)
{
	printf("%-13s %s\n", label, val);
}

static void emit_str(struct emitter *e, const char *key, const char *label, const char *val)
{
	if (e->json)
		jsonwrt_string(&e->w, key, val);
	else
		emit_text(e, label, val ? val : "-");
}

static void emit_hex(struct emitter *e, const char *key, const char *label, unsigned long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "0x%lx", v);
	emit_str(e, key, label, buf);
}

static void emit_num(struct emitter *e, const char *key, const char *label, unsigned long v)
{
	char buf[32];

	if (e->json) {
		jsonwrt_ulong(&e->w, key, v);
		return;
	}
	snprintf(buf, sizeof(buf), "%lu", v);
	emit_text(e, label, buf);
}

static void emit_bool(struct emitter *e, const char *key, const char *label, bool v)
{
	if (e->json)
		jsonwrt_bool(&e->w, key, v);
	else
		emit_text(e, label, v ? "yes" : "no");
}

/* The lines of one smaps entry: an array in JSON, indented in text. */
static void emit_lines(struct emitter *e, const char *key, const char *label,
		       const char *text, size_t len)
{
	const char *p = text, *end = text + len;

	if (e->json)
		jsonwrt_array_open(&e->w, key, JSONWRT_BLOCK);
	else
		printf("%s:\n", label);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (e->json)
			jsonwrt_string_n(&e->w, NULL, p, n);
		else
			printf("  %.*s\n", (int)n, p);
		p += n + 1;
	}
	if (e->json)
		jsonwrt_array_close(&e->w);
}

/*
 * Find the smaps entry starting at @addr: returns the offset of its first
 * line and its length in *len, or -1.
 */
static long smaps_entry(const char *text, unsigned long addr, size_t *len)
{
	const char *p = text, *start = NULL;

	while (*p) {
		unsigned long s, e;
		const char *nl = strchr(p, '\n');
		int n = 0;

		/* Header lines are "start-end perms ...", attribute lines "Key: value". */
		if (sscanf(p, "%lx-%lx %n", &s, &e, &n) == 2 && n > 0) {
			if (start) {
				*len = (size_t)(p - start);
				return start - text;
			}
			if (s == addr)
				start = p;
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	if (!start)
		return -1;
	*len = strlen(start);
	return start - text;
}

/* The VmFlags value inside an entry, copied to @buf ("" when absent). */
static void entry_vmflags(const char *entry, size_t len, char *buf, size_t size)
{
	const char *p = entry, *end = entry + len;

	buf[0] = '\0';
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (n > 8 && strncmp(p, "VmFlags:", 8) == 0) {
			const char *v = p + 8;

			v += strspn(v, " \t");
			n -= (size_t)(v - p);
			while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
				n--;
			snprintf(buf, size, "%.*s", (int)n, v);
			return;
		}
		p += n + 1;
	}
}

static bool vmflags_has(const char *flags, const char *flag)
{
	size_t fl = strlen(flag);
	const char *p = flags;

	while (*p) {
		size_t n = strcspn(p, " ");

		if (n == fl && strncmp(p, flag, n) == 0)
			return true;
		p += n;
		p += strspn(p, " ");
	}
	return false;
}

/* Kernel errnos of map_shadow_stack in words (mainline semantics). */
static const char *map_errno_words(int err)
{
	switch (err) {
	case EOPNOTSUPP:
	case ENOSYS:
		return "the kernel or CPU has no shadow-stack support";
	case ERANGE:
		return "the address is below 4 GiB, which shadow stacks may not use";
	case ENOSPC:
		return "the size leaves no room for the restore token (at least 8 bytes)";
	case EINVAL:
		return "invalid flags, size or address";
	case EEXIST:
		return "something is already mapped at that address";
	case ENOMEM:
		return "out of memory or address space";
	case EOVERFLOW:
		return "the size overflows when rounded up to pages";
	default:
		return strerror(err);
	}
}

/* Numbers: decimal, 0x hex or 0 octal, with an optional K/M/G (x1024) suffix. */
static int parse_size(const char *s, bool suffix, unsigned long *out)
{
	unsigned long long v, mul = 1;
	char *end;

	/* Digits first: strtoull would skip blanks and take a sign, and
	 * " -1" would wrap around to ULLONG_MAX. */
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -EINVAL;
	if (suffix && *end) {
		switch (*end) {
		case 'k': case 'K': mul = 1ULL << 10; break;
		case 'm': case 'M': mul = 1ULL << 20; break;
		case 'g': case 'G': mul = 1ULL << 30; break;
		default: return -EINVAL;
		}
		end++;
		if (*end == 'i' && end[1] == 'B')
			end += 2;
		else if (*end == 'B')
			end++;
	}
	if (*end)
		return -EINVAL;
	if (v > ULONG_MAX / mul)
		return -ERANGE;
	*out = (unsigned long)(v * mul);
	return 0;
}

static void usage(void)
{
	printf("Usage: cetctl map [options]\n\n");
	printf("Map a test shadow stack with map_shadow_stack(2) and show it.\n\n");
	printf("Options:\n");
	printf("  -s, --size <size>    size in bytes, K/M/G suffixes (default 4096)\n");
	printf("  -a, --addr <addr>    map at this address (at least 4 GiB; never replaces a mapping)\n");
	printf("  -t, --token          ask the kernel for a restore token at the top\n");
	printf("      --hold <secs>    keep the mapping for SECS seconds (prints the pid)\n");
	printf("  -p, --pivot          switch onto the new stack, call and return, switch back\n");
	printf("                       (implies --token; enables shadow stacks for the pivot\n");
	printf("                       if they are off in cetctl itself)\n");
	printf("  -J, --json           use JSON output format\n");
	printf("  -h, --help           display this help\n");
	printf("  -V, --version        display version\n");
	printf("\nExit status: 0 success, 1 failure or usage error, 2 no shadow-stack support\n"
	       "in this CPU or kernel.\n");
}

/* What the command line asks for. */
struct map_opts {
	unsigned long size, addr, hold;
	bool want_token, pivot, do_hold;
	bool json;
};

/* Parse the command line into @o: CETCTL_CONTINUE or the exit status. */
static int map_parse(int argc, char **argv, struct map_opts *o)
{
	static const struct option longopts[] = {
		{ "size",  required_argument, NULL, 's' },
		{ "addr",  required_argument, NULL, 'a' },
		{ "token", no_argument,       NULL, 't' },
		{ "hold",  required_argument, NULL, 'H' },
		{ "pivot", no_argument,       NULL, 'p' },
		{ "json",  no_argument,       NULL, 'J' },
		{ "help",  no_argument,       NULL, 'h' },
		{ "version", no_argument,     NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	o->size = 4096;
	o->json = cetctl_globals.json;
	while ((c = getopt_long(argc, argv, "s:a:tpJhV", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (parse_size(optarg, true, &o->size) < 0 || o->size == 0) {
				warnx("map: invalid size '%s'", optarg);
				return cetctl_usage_error("map");
			}
			break;
		case 'a':
			if (parse_size(optarg, false, &o->addr) < 0 || o->addr == 0) {
				warnx("map: invalid address '%s'", optarg);
				return cetctl_usage_error("map");
			}
			break;
		case 't':
			o->want_token = true;
			break;
		case 'H':
			if (parse_size(optarg, false, &o->hold) < 0 || o->hold > INT_MAX) {
				warnx("map: invalid number of seconds '%s'", optarg);
				return cetctl_usage_error("map");
			}
			o->do_hold = true;
			break;
		case 'p':
			o->pivot = o->want_token = true;
			break;
		case 'J':
			o->json = true;
			break;
		default:
			return cetctl_option_other(c, usage, "map");
		}
	}
	if (optind < argc) {
		warnx("map: unexpected argument '%s'", argv[optind]);
		return cetctl_usage_error("map");
	}
	return CETCTL_CONTINUE;
}

/* The mapping made and what smaps says of it. */
struct map_result {
	unsigned long mapped, token;
	char *smaps;		/* our smaps */
	long off;		/* of the mapping's entry in it, -1: none */
	size_t elen;		/* its length */
	char vmflags[256];
	bool ss;		/* VmFlags has "ss" */
};

/* map_shadow_stack(2), then our smaps. Returns CETCTL_CONTINUE or the exit status. */
static int map_execute(const struct map_opts *o, struct map_result *r)
{
	char path[64];
	long n;
	int ret;

	ret = shstk_map(o->addr, o->size, o->want_token ? SHADOW_STACK_SET_TOKEN : 0, &r->mapped);
	if (ret < 0) {
		warnx("map: map_shadow_stack(%#lx, %lu, %s) failed: %s (%s)", o->addr, o->size,
		      o->want_token ? "SHADOW_STACK_SET_TOKEN" : "0",
		      map_errno_words(-ret), errname(-ret));
		return (ret == -EOPNOTSUPP || ret == -ENOSYS) ?
			CETCTL_EXIT_UNSUPPORTED : CETCTL_EXIT_FAILURE;
	}
	if (o->want_token)
		r->token = shstk_token_addr(r->mapped, o->size);
	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)getpid());
	n = cet_read_file(path, SMAPS_MAX, &r->smaps);
	r->off = n >= 0 ? smaps_entry(r->smaps, r->mapped, &r->elen) : -1;
	r->vmflags[0] = '\0';
	if (r->off >= 0)
		entry_vmflags(r->smaps + r->off, r->elen, r->vmflags, sizeof(r->vmflags));
	r->ss = vmflags_has(r->vmflags, "ss");
	return CETCTL_CONTINUE;
}

/* The mapping, its token and its smaps entry. */
static void map_report(struct emitter *em, const struct map_opts *o, const struct map_result *r)
{
	volatile unsigned long *token = (volatile unsigned long *)r->token;

	emit_open(em, NULL, NULL);
	emit_hex(em, "address", "address:", r->mapped);
	emit_num(em, "size", "size:", o->size);
	emit_hex(em, "end", "end:", r->mapped + ((o->size + 4095) & ~4095UL));
	if (o->want_token) {
		emit_hex(em, "token_address", "token at:", r->token);
		emit_hex(em, "token_value", "token value:", *token);
		emit_bool(em, "token_valid", "token valid:",
			  *token == shstk_token_value(r->mapped, o->size));
	} else {
		emit_str(em, "token_address", "token at:", NULL);
	}
	emit_str(em, "vmflags", "VmFlags:", r->vmflags[0] ? r->vmflags : NULL);
	emit_bool(em, "shadow_stack_vma", "ss VMA:", r->ss);
	if (r->off >= 0)
		emit_lines(em, "smaps", "smaps", r->smaps + r->off, r->elen);
	else
		emit_str(em, "smaps", "smaps:", NULL);
}

/*
 * --pivot: onto the new stack and back, reported in a "pivot" section.
 * Returns CETCTL_EXIT_OK, CETCTL_EXIT_FAILURE when it did not behave as
 * the SDM says, or < 0: -errno of enabling shadow stacks (the document
 * then closed).
 */
static int map_pivot(struct emitter *em, const struct map_opts *o, const struct map_result *r)
{
	struct shstk_pivot_result pr;
	int ret = shstk_pivot(r->token, &pr);

	if (ret < 0) {
		emit_str(em, "pivot", "pivot:", NULL);
		emit_close(em);
		fflush(stdout);
		return ret;
	}
	bool inside = pr.ssp_inside >= r->mapped && pr.ssp_inside < r->mapped + o->size;
	bool back = pr.ssp_after == pr.ssp_before;
	bool restored = pr.token_after == shstk_token_value(r->mapped, o->size);

	emit_open(em, "pivot", "pivot");
	emit_bool(em, "enabled_temporarily", "temp enable:", pr.enabled_temporarily);
	emit_hex(em, "ssp_before", "ssp before:", pr.ssp_before);
	emit_hex(em, "ssp_inside", "ssp inside:", pr.ssp_inside);
	emit_hex(em, "return_slot", "return slot:", pr.ret_slot);
	emit_hex(em, "ssp_after", "ssp after:", pr.ssp_after);
	emit_bool(em, "on_new_stack", "on new stack:", inside);
	emit_bool(em, "returned", "returned:", back);
	emit_bool(em, "token_restored", "token again:", restored);
	emit_close(em);
	return inside && back && restored ? CETCTL_EXIT_OK : CETCTL_EXIT_FAILURE;
}

/* Enabling shadow stacks for the pivot failed with @ret: say why, return the status. */
static int pivot_failed(int ret)
{
	warnx("map: pivot: enabling shadow stacks in cetctl failed: %s (%s)",
	      ret == -EOPNOTSUPP ? "the kernel or CPU has no shadow-stack support" :
	      ret == -EPERM ? "the feature is locked (disabled) for this process" :
	      ret == -EINVAL ? "the kernel refused (no shadow-stack support, or "
	      "its legacy-ELF policy blocks cetctl)" :
	      strerror(-ret), errname(-ret));
	return ret == -EOPNOTSUPP ? CETCTL_EXIT_UNSUPPORTED : CETCTL_EXIT_FAILURE;
}

/* --hold: keep the mapping for `cetctl status PID` from another shell. */
static void map_hold(const struct map_opts *o)
{
	struct timespec ts = { .tv_sec = (time_t)o->hold };

	if (!o->json)
		fprintf(stderr, "cetctl: map: holding the mapping for %lu s (pid %d)\n",
			o->hold, (int)getpid());
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int cmd_map(int argc, char **argv)
{
	struct map_opts o = { 0 };
	struct map_result r = { 0 };
	struct emitter em = { 0 };
	int rc = map_parse(argc, argv, &o);

	if (rc == CETCTL_CONTINUE)
		rc = map_execute(&o, &r);
	if (rc != CETCTL_CONTINUE)
		return rc;
	em.json = o.json;
	/* stdout is written both ways: no buffered JSON behind a printf */
	jsonwrt_init(&em.w, stdout);
	map_report(&em, &o, &r);
	free(r.smaps);
	rc = o.pivot ? map_pivot(&em, &o, &r) : CETCTL_EXIT_OK;
	if (rc < 0)
		return pivot_failed(rc);
	if (o.do_hold)
		emit_num(&em, "pid", "pid:", (unsigned long)getpid());
	emit_close(&em);
	fflush(stdout);
	if (rc != CETCTL_EXIT_OK)
		warnx("map: pivot did not behave as the SDM says (see above)");
	if (!r.ss) {
		/* The kernel said yes but does not account it as a shadow stack. */
		warnx("map: the mapping at %#lx is not marked 'ss' in smaps (VmFlags: %s)",
		      r.mapped, r.vmflags[0] ? r.vmflags : "not found");
		rc = CETCTL_EXIT_FAILURE;
	}
	if (o.do_hold)
		map_hold(&o);
	return rc;
}
