#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# run --method=glibc and the processes the program's start-up code forks
# (issue 32, defect 4). With this method the loader and the libraries'
# constructors run before the check at the entry point; a child forked
# there went on running after cetctl had said the start-up failed. Now the
# tracer holds each such child by a pidfd from its fork's exit stop and
# kills it when the start-up fails; the line says how many. On this host
# (no shadow stacks) --trace-only drives the start-up, and the test build's
# CETCTL_FAULT_VERIFY=1 makes the final check fail.

load helpers

setup() {
	require_faults || return 1
	# A library whose constructor forks CTOR_KIDS children that outlive it:
	# each sleeps 1.5 s, then writes "kid PID" to CTOR_OUT.
	cat > "$TMP/ctor.c" <<'EOC'
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
__attribute__((constructor)) static void ctor(void)
{
	const char *out = getenv("CTOR_OUT"), *k = getenv("CTOR_KIDS");
	int i, n = k ? atoi(k) : 0;

	for (i = 0; out && i < n; i++) {
		if (fork() == 0) {
			char line[64];
			int fd, len;

			usleep(1500 * 1000);
			fd = open(out, O_WRONLY | O_CREAT | O_APPEND, 0600);
			len = snprintf(line, sizeof(line), "kid %d\n", (int)getpid());
			if (fd >= 0 && write(fd, line, (size_t)len) == len)
				close(fd);
			_exit(0);
		}
	}
}
EOC
	gcc -shared -fPIC -o "$TMP/ctor.so" "$TMP/ctor.c"
	printf 'int main(void) { return 7; }\n' > "$TMP/prog.c"
	gcc -o "$TMP/prog" "$TMP/prog.c" -Wl,--no-as-needed "$TMP/ctor.so" -Wl,-rpath,"$TMP"
}

# started KIDS [ENV...]: run the program under the test build, glibc method;
# then wait for what its children would write
started() {
	local kids=$1
	shift
	run env CTOR_OUT="$TMP/out" CTOR_KIDS="$kids" "$@" \
		"$FAULTS" run --trace-only --method=glibc "$TMP/prog"
	echo "status $status: $output"
	sleep 2.5
	echo "children wrote: $(cat "$TMP/out" 2>/dev/null)"
}

@test "glibc method: children forked before the entry point are killed when the check fails" {
	# before the fix: 125 and "its entry point did not", but both children
	# went on and wrote their lines 1.5 s later
	started 2 CETCTL_FAULT_VERIFY=1
	[ "$status" -eq 125 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ $output == *"its start-up code ran (loader, constructors), its entry point did not; the 2 processes it forked meanwhile were killed" ]]
	[ ! -e "$TMP/out" ]
}

@test "glibc method: one child, the line in the singular; a verified start-up lets it run" {
	started 1 CETCTL_FAULT_VERIFY=1
	[ "$status" -eq 125 ]
	[[ $output == *"; the 1 process it forked meanwhile was killed" ]]
	[ ! -e "$TMP/out" ]
	started 1
	[ "$status" -eq 7 ]
	[ "$(grep -c '^kid ' "$TMP/out")" -eq 1 ]
}

@test "glibc method: no children, no count; the ptrace method says the program did not run" {
	started 0 CETCTL_FAULT_VERIFY=1
	[ "$status" -eq 125 ]
	[[ $output == *"its entry point did not" ]]
	run env CETCTL_FAULT_VERIFY=1 "$FAULTS" run --trace-only --method=ptrace "$TMP/prog"
	[ "$status" -eq 125 ]
	[[ $output == *"program not run" ]]
}
