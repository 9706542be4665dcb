#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# cetctl status reads only what the chosen columns need (issue 13): smaps,
# the exe link and maps are often unreadable for other users' processes, and
# a column list that does not show them must not fail because of them.

load helpers

setup() {
	require_cetctl
	EMU=$HOST_TESTS/fixtures/proc/cet-emulated
	TMP=$(mktemp -d "${BATS_TMPDIR:-/tmp}/cetctl-reads.XXXXXX")
	bg=()
}

teardown() {
	cleanup_test
}

# broken_tree: the recorded tree with smaps, maps and exe of pid 3114 made
# unreadable in a way root cannot bypass (directories)
broken_tree() {
	cp -a "$EMU" "$TMP/tree"
	local d=$TMP/tree/3114
	rm -f "$d/smaps" "$d/maps" "$d/exe"
	mkdir "$d/smaps" "$d/maps" "$d/exe"
	echo "$TMP/tree"
}

@test "status reads: -o without VMA, exe or object columns ignores unreadable smaps/maps/exe" {
	local t; t=$(broken_tree)
	run --separate-stderr "$CETCTL" --proc-root "$t" status -o PID,COMM,FEATURES,LOCKED,SHSTK 3114
	# shellcheck disable=SC2154  # stderr: set by bats' run --separate-stderr
	[ "$status" -eq 0 ] || { echo "$stderr"; return 1; }
	[[ $stderr != *"cannot read"* ]]
	[[ $output == *sleep*shstk* ]]
	run --separate-stderr "$CETCTL" --proc-root "$t" status -J -o PID,THREADS,FEATURES 3114
	[ "$status" -eq 0 ]
	jq -e '.processes[0].features == ["shstk"] and .errors == []' <<<"$output"
}

@test "status reads: the columns that need them still report the failure" {
	local t; t=$(broken_tree)
	run --separate-stderr "$CETCTL" --proc-root "$t" status -o PID,SS-SIZE 3114
	[ "$status" -eq 1 ]
	[[ $stderr == *"cannot read smaps"* ]]
	[[ $stderr != *"cannot read maps"* && $stderr != *"cannot read exe"* ]]
	run --separate-stderr "$CETCTL" --proc-root "$t" status -o PID,UNMARKED 3114
	[ "$status" -eq 1 ]
	[[ $stderr == *"cannot read maps"* ]]
	[[ $stderr != *"cannot read smaps"* ]]
	run --separate-stderr "$CETCTL" --proc-root "$t" status -o PID,EXE 3114
	[ "$status" -eq 1 ]
	[[ $stderr == *"cannot read exe"* ]]
	[[ $stderr != *"smaps"* ]]
}

@test "status reads: strace shows no smaps, maps or exe access for -o PID,FEATURES" {
	command -v strace >/dev/null || skip "strace not installed"
	[[ $CETCTL_BUILD != *asan* ]] || skip "ASan's own /proc reads would confuse the trace"
	sleep 60 & bg+=($!)
	strace -f -e trace=open,openat,readlink,readlinkat,newfstatat,stat,statx -o "$TMP/trace" \
		"$CETCTL" status -o PID,FEATURES "${bg[0]}" >/dev/null
	# the trace works: status itself was read
	grep -q "/proc/${bg[0]}\|\"status\"" "$TMP/trace"
	run grep -E '"(smaps|maps|exe)"|/(smaps|maps|exe)"' "$TMP/trace"
	[ "$status" -ne 0 ] || { echo "$output"; return 1; }
	# and the default columns (VERDICT needs them) do read them
	strace -f -e trace=open,openat,readlink,readlinkat -o "$TMP/trace2" \
		"$CETCTL" status "${bg[0]}" >/dev/null
	grep -qE '"(maps|exe)"|/(maps|exe)"' "$TMP/trace2"
}

@test "status reads: permission denied to root says so, never \"needs root\"" {
	[ "$(id -u)" -eq 0 ] || skip "needs root"
	command -v setpriv >/dev/null || skip "setpriv (util-linux) not installed"
	cp -a "$EMU" "$TMP/tree"
	chmod 000 "$TMP/tree/3114/smaps"
	# root without CAP_DAC_OVERRIDE/CAP_DAC_READ_SEARCH: EACCES as root
	run --separate-stderr setpriv --bounding-set=-dac_override,-dac_read_search \
		"$CETCTL" --proc-root "$TMP/tree" status 3114
	echo "$stderr"
	[ "$status" -eq 1 ]
	[[ $stderr == *"3114: cannot read smaps: Permission denied"* ]]
	[[ $stderr != *"needs root"* ]]
	# as another user it is the hint it was
	if setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$CETCTL"; then
		chmod 755 "$TMP"
		run --separate-stderr setpriv --reuid=65534 --regid=65534 --clear-groups \
			"$CETCTL" --proc-root "$TMP/tree" status 3114
		[[ $stderr == *"Permission denied (needs root or the process's owner)"* ]]
	fi
}
