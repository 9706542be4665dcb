// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the program's environment (src/run-env.c): a sanitizer
 * runtime recognised in LD_PRELOAD as the loader splits it (issue 31, c),
 * and the variable set in a copy of environ.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run-env.h"

#include "check.h"

extern char **environ;

static void test_sanitizer(void)
{
	char name[64];

	CHECK(!run_preloads_sanitizer(NULL, name, sizeof(name)));
	CHECK(!run_preloads_sanitizer("", name, sizeof(name)));
	CHECK(!run_preloads_sanitizer("/usr/lib/libfoo.so:libbar.so", name, sizeof(name)));
	CHECK(run_preloads_sanitizer("/usr/lib/x86_64-linux-gnu/libasan.so.8", name, sizeof(name)) &&
	      strcmp(name, "/usr/lib/x86_64-linux-gnu/libasan.so.8") == 0);
	/* behind others, split at colons and spaces, with or without a path */
	CHECK(run_preloads_sanitizer("/a.so:libtsan.so.2 /b.so", name, sizeof(name)) &&
	      strcmp(name, "libtsan.so.2") == 0);
	CHECK(run_preloads_sanitizer("/a.so /x/libhwasan.so", name, sizeof(name)) &&
	      strcmp(name, "/x/libhwasan.so") == 0);
	CHECK(run_preloads_sanitizer("::/x/libclang_rt.asan-x86_64.so", name, sizeof(name)) &&
	      strcmp(name, "/x/libclang_rt.asan-x86_64.so") == 0);
	/* a directory of that name is not the runtime, nor another name ending so */
	CHECK(!run_preloads_sanitizer("/libasan.so.8/libfoo.so", name, sizeof(name)));
	CHECK(!run_preloads_sanitizer("/x/mylibasan.so", name, sizeof(name)));
}

static void test_env_with(void)
{
	char *env0[] = { "A=1", "LD_PRELOAD=/x.so", "LD_PRELOAD=/dup.so", "B=2", NULL };
	char **saved = environ, **e;

	environ = env0;
	/* LD_PRELOAD: ours first, the duplicate dropped */
	e = run_env_with("LD_PRELOAD", "/lib.so", ':', false);
	CHECK(e && strcmp(e[0], "A=1") == 0 && strcmp(e[1], "B=2") == 0 &&
	      strcmp(e[2], "LD_PRELOAD=/lib.so:/x.so") == 0 && !e[3]);
	run_env_free(e);
	/* absent: set */
	e = run_env_with("GLIBC_TUNABLES", "t=1", ':', true);
	CHECK(e && strcmp(e[4], "GLIBC_TUNABLES=t=1") == 0 && !e[5]);
	run_env_free(e);
	environ = saved;
}

int main(void)
{
	test_sanitizer();
	test_env_with();
	printf("test-run-env: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
