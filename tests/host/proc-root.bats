#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# A tree other than /proc (--proc-root, CETCTL_PROC_ROOT) is stated in every
# output mode, so a recorded or fake tree is never taken for this machine;
# and info tells the truth on mainline (user_shstk) and lists every missing
# piece (issue 13).

load helpers

setup() {
	require_cetctl
	FIX=$HOST_TESTS/fixtures/proc
}

value() {	# value JSON NAME
	jq -r --arg n "$2" '.info[] | select(.name == $n) | .value' <<<"$1"
}

@test "proc-root: --help names the option and CETCTL_PROC_ROOT" {
	run -0 "$CETCTL" --help
	[[ $output == *"--proc-root"* && $output == *"CETCTL_PROC_ROOT"* ]]
}

@test "proc-root: JSON of status, audit, elf and info carries proc_root" {
	local t=$FIX/cet-emulated single
	single=$(awk '$1 == "single" { print $2 }' "$t/roles")
	run --separate-stderr "$CETCTL" --proc-root "$t" status -J "$single"
	jq -e --arg t "$t" '.proc_root == $t and (.processes | length == 1)' <<<"$output"
	run --separate-stderr "$CETCTL" --proc-root "$t" audit -J
	jq -e --arg t "$t" '.proc_root == $t' <<<"$output"
	run --separate-stderr "$CETCTL" --proc-root "$t" elf -J /bin/true
	jq -e --arg t "$t" '.proc_root == $t and .summary.files == 1' <<<"$output"
	run --separate-stderr "$CETCTL" --proc-root "$t" info -J
	jq -e --arg t "$t" '.proc_root == $t' <<<"$output"
	[ "$(value "$output" proc-root)" = "$t" ]
	# the environment variable too, named as the origin
	CETCTL_PROC_ROOT=$t run --separate-stderr "$CETCTL" audit -J
	jq -e --arg t "$t" '.proc_root == $t' <<<"$output"
	CETCTL_PROC_ROOT=$t run --separate-stderr "$CETCTL" info
	[[ $output == *"proc-root"*"(CETCTL_PROC_ROOT)"* ]]
}

@test "proc-root: tables say it on stderr; the live /proc is not mentioned" {
	local t=$FIX/cet-emulated
	run --separate-stderr "$CETCTL" --proc-root "$t" audit -o PID -n
	# shellcheck disable=SC2154  # stderr: set by bats' run --separate-stderr
	[[ $stderr == *"cetctl: audit: reading $t instead of /proc (--proc-root)"* ]]
	CETCTL_PROC_ROOT=$t run --separate-stderr "$CETCTL" status --raw self
	[[ $stderr == *"cetctl: status: reading $t instead of /proc (CETCTL_PROC_ROOT)"* ]]
	run --separate-stderr "$CETCTL" --proc-root "$t" elf /bin/true
	[[ $stderr == *"cetctl: elf: reading $t instead of /proc"* ]]
	run --separate-stderr "$CETCTL" audit -J
	jq -e 'has("proc_root") | not' <<<"$output"
	[[ $stderr != *"instead of /proc"* ]]
	run --separate-stderr "$CETCTL" --proc-root /proc audit -o PID -n
	[[ $stderr != *"instead of /proc"* ]]
}

@test "info: mainline cpuinfo (user_shstk, no shstk flag): cpu-shstk yes" {
	run "$CETCTL" --proc-root "$FIX/bochs-ref612" info -J
	# the recording really lacks the hardware flag
	grep -qw user_shstk "$FIX/bochs-ref612/cpuinfo"
	[ -z "$(grep -m1 '^flags' "$FIX/bochs-ref612/cpuinfo" | tr ' ' '\n' | grep -x shstk)" ]
	[ "$(value "$output" cpu-shstk)" = yes ]
	[ "$(value "$output" supported)" = yes ]
}

@test "info: every missing piece is listed, not only the first" {
	cp -a "$FIX/host-nocet" "$BATS_TEST_TMPDIR/t"
	echo "quiet clearcpuid=shstk" >"$BATS_TEST_TMPDIR/t/cmdline"
	run "$CETCTL" --proc-root "$BATS_TEST_TMPDIR/t" info -J
	[ "$status" -eq 2 ]
	d=$(jq -r '.info[] | select(.name == "supported") | .detail' <<<"$output")
	echo "$d"
	[[ $d == "kernel has no shadow-stack support"* ]]
	[[ $d == *"CONFIG_X86_USER_SHADOW_STACK"* ]]
	[[ $d == *"clearcpuid="* ]]
	[[ $d == *"CPU has no shadow-stack feature"* ]]
}
