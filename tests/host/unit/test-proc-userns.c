// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the user-namespace facts behind the preload library's trust
 * (src/lib/proc-userns.c, issue 32, 5): the initial namespace told from
 * uid_map, the overflow uid, both read from a made-up /proc tree, and
 * failing closed (the initial namespace) when uid_map is missing or odd.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc-userns.h"

#include "check.h"

static void test_uid_map(void)
{
	CHECK(proc_uid_map_initial("         0          0 4294967295\n") == 1);
	CHECK(proc_uid_map_initial("0 0 4294967295") == 1);
	/* unshare -Ur; root mapping only itself; a wider range; two lines */
	CHECK(proc_uid_map_initial("         0      65534          1\n") == 0);
	CHECK(proc_uid_map_initial("0 0 1\n") == 0);
	CHECK(proc_uid_map_initial("0 0 4294967294\n") == 0);
	CHECK(proc_uid_map_initial("0 0 4294967295\n0 0 4294967295\n") == 0);
	CHECK(proc_uid_map_initial("0 100000 65536\n65536 1000 1\n") == 0);
	/* not a uid_map: not known to be another namespace */
	CHECK(proc_uid_map_initial("") == -EINVAL);
	CHECK(proc_uid_map_initial("0 0\n") == -EINVAL);
	CHECK(proc_uid_map_initial("0 0 4294967296\n") == -EINVAL);
	CHECK(proc_uid_map_initial("0 0 -1\n") == -EINVAL);
	CHECK(proc_uid_map_initial("0 0 4294967295 x\n") == -EINVAL);
}

static char root[64];

static void put(const char *rel, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	CHECK(f && fputs(text, f) >= 0 && fclose(f) == 0);
}

static void drop(const char *rel)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	unlink(path);
}

static void test_read(void)
{
	struct proc_userns ns;
	char path[256];
	uid_t uid = 4242;

	snprintf(root, sizeof(root), "/tmp/test-proc-userns.XXXXXX");
	CHECK(mkdtemp(root) != NULL);
	snprintf(path, sizeof(path), "%s/self", root);
	CHECK(mkdir(path, 0755) == 0);
	snprintf(path, sizeof(path), "%s/sys", root);
	CHECK(mkdir(path, 0755) == 0);
	snprintf(path, sizeof(path), "%s/sys/kernel", root);
	CHECK(mkdir(path, 0755) == 0);

	put("self/uid_map", "         0       1000          1\n");
	put("sys/kernel/overflowuid", "4000\n");
	CHECK(proc_userns_read(root, &ns) == 0 && !ns.initial && ns.overflow == 4000);
	put("self/uid_map", "         0          0 4294967295\n");
	CHECK(proc_userns_read(root, &ns) == 0 && ns.initial && ns.overflow == 4000);
	/* the sysctl unreadable or odd: the kernel's default */
	put("self/uid_map", "0 1000 1\n");
	put("sys/kernel/overflowuid", "lots\n");
	CHECK(proc_userns_read(root, &ns) == 0 && !ns.initial && ns.overflow == 65534);
	drop("sys/kernel/overflowuid");
	CHECK(proc_userns_read(root, &ns) == 0 && !ns.initial && ns.overflow == 65534);
	/* uid_map unreadable or odd: fails closed, the initial namespace */
	put("self/uid_map", "");
	CHECK(proc_userns_read(root, &ns) == -EINVAL && ns.initial);
	drop("self/uid_map");
	CHECK(proc_userns_read(root, &ns) == -ENOENT && ns.initial);

	/* self/exe: the owner of what it leads to; none: an error, uid kept */
	snprintf(path, sizeof(path), "%s/self/exe", root);
	CHECK(proc_self_exe_owner(root, &uid) == -ENOENT && uid == 4242);
	CHECK(symlink("/proc/self/exe", path) == 0);
	CHECK(proc_self_exe_owner(root, &uid) == 0 && uid == geteuid());
	unlink(path);
	drop("self/exe");
	snprintf(path, sizeof(path), "%s/sys/kernel", root);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/sys", root);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/self", root);
	rmdir(path);
	rmdir(root);
}

int main(void)
{
	test_uid_map();
	test_read();
	printf("test-proc-userns: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
