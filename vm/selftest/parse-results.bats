#!/usr/bin/env bats
# Host tests of vm/parse-results.sh on synthetic console logs: every rule must be able
# to fail a run. Run: bats vm/selftest/parse-results.bats

P="$BATS_TEST_DIRNAME/../parse-results.sh"

mklog() { # body lines on stdin, wrapped into a complete guest run
	{
		echo "CETCTL-GUEST-START tier=qemu up=1.0"
		cat
		echo "CETCTL-DMESG-BEGIN"
		printf '%s\n' "${DMESG[@]}"
		echo "CETCTL-DMESG-END"
		[ -n "${NODONE:-}" ] || echo "CETCTL-GUEST-DONE rc=0 up=9.0"
	} | sed 's/$/\r/' > "$BATS_TEST_TMPDIR/log"
}
suite() { printf '%s\n' "CETCTL-SUITE-BEGIN a.bats up=1" "$@" "CETCTL-SUITE-END a.bats rc=${RC:-0} up=2"; }

@test "all ok: counts and exit 0" {
	DMESG=("[    0.000000] Linux version 6.1" "[    1.0] CETCTL-SUITE-BEGIN a.bats")
	suite "1..3" "ok 1 x" "ok 2 y # skip no shadow-stack hardware" "ok 3 z" | mklog
	run "$P" "$BATS_TEST_TMPDIR/log" qemu
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" = "qemu: 2 passed, 0 failed, 1 skipped" ]
	[[ "$output" == *"skip  a.bats: y # skip no shadow-stack hardware"* ]]
}

@test "not ok fails the run" {
	DMESG=()
	RC=1 suite "1..2" "ok 1 x" "not ok 2 y" | mklog
	run "$P" "$BATS_TEST_TMPDIR/log" bochs
	[ "$status" -eq 1 ]
	[ "${lines[-1]}" = "bochs: 1 passed, 1 failed, 0 skipped" ]
}

@test "a failed test's first diagnostic lines are in the report, at most 12" {
	DMESG=()
	local d=() i
	for i in $(seq 1 15); do d+=("# why $i"); done
	RC=1 suite "1..2" "not ok 1 y" "${d[@]}" "ok 2 x" "# not a diagnostic of y" | mklog
	run "$P" "$BATS_TEST_TMPDIR/log" qemu
	[ "$status" -eq 1 ]
	[[ "$output" == *"FAIL  a.bats: not ok 1 y"$'\n'"         # why 1"$'\n'* ]]
	[[ "$output" == *"# why 12"* ]]
	[[ "$output" != *"# why 13"* ]]
	[[ "$output" != *"not a diagnostic"* ]]
}

@test "missing final marker fails the run" {
	DMESG=()
	suite "1..1" "ok 1 x" | NODONE=1 mklog
	run "$P" "$BATS_TEST_TMPDIR/log" qemu
	[ "$status" -eq 1 ]
	[[ "$output" == *"CETCTL-GUEST-DONE missing"* ]]
}

@test "tests announced by the plan but never reported fail" {
	DMESG=()
	RC=124 suite "1..3" "ok 1 x" | mklog
	run "$P" "$BATS_TEST_TMPDIR/log" qemu
	[ "$status" -eq 1 ]
	[ "${lines[-1]}" = "qemu: 1 passed, 2 failed, 0 skipped" ]
}

@test "unexpected WARN / control protection / segfault lines fail the run" {
	for l in "WARNING: CPU: 0 PID: 1 at arch/x86/kernel/fpu/xstate.c:1 foo" \
		 "a.out[77] control protection ip:401000 sp:7ffc ssp:7f00 error:1(near ret)" \
		 "a.out[77]: segfault at 0 ip 0 sp 0 error 4" "BUG: kernel NULL pointer dereference" \
		 "Oops: 0000 [#1] PREEMPT SMP" \
		 "INFO: task a.out:77 blocked for more than 120 seconds."; do
		DMESG=("[    1.0] CETCTL-SUITE-BEGIN a.bats" "[    2.0] $l")
		suite "1..1" "ok 1 x" | mklog
		run "$P" "$BATS_TEST_TMPDIR/log" qemu
		[ "$status" -eq 1 ] || { echo "not caught: $l"; return 1; }
		[[ "$output" == *"KERNEL [    2.0] $l"* ]]
	done
}

@test "CETCTL-EXPECT excuses later matching lines of the same suite only" {
	DMESG=("[    1.0] CETCTL-SUITE-BEGIN a.bats"
	       "[    1.5] CETCTL-EXPECT control protection|segfault"
	       "[    2.0] t[7] control protection ip:1 sp:2 ssp:3 error:1(near ret)")
	suite "1..1" "ok 1 x" | mklog
	run "$P" "$BATS_TEST_TMPDIR/log" qemu
	[ "$status" -eq 0 ]
	[[ "$output" == *"1 kernel line(s) matched"* ]]
	# before the declaration: not excused
	DMESG=("[    1.0] CETCTL-SUITE-BEGIN a.bats"
	       "[    1.2] t[7] control protection ip:1 sp:2 ssp:3 error:1(near ret)"
	       "[    1.5] CETCTL-EXPECT control protection")
	suite "1..1" "ok 1 x" | mklog
	run "$P" "$BATS_TEST_TMPDIR/log" qemu
	[ "$status" -eq 1 ]
	# next suite: expectation gone
	DMESG=("[    1.0] CETCTL-SUITE-BEGIN a.bats" "[    1.5] CETCTL-EXPECT control protection"
	       "[    3.0] CETCTL-SUITE-BEGIN b.bats"
	       "[    3.5] t[8] control protection ip:1 sp:2 ssp:3 error:1(near ret)")
	suite "1..1" "ok 1 x" | mklog
	run "$P" "$BATS_TEST_TMPDIR/log" qemu
	[ "$status" -eq 1 ]
}

@test "without a dmesg dump, console kernel lines are checked" {
	printf '%s\r\n' "CETCTL-GUEST-START tier=qemu" "CETCTL-SUITE-BEGIN a.bats" "1..1" "ok 1 x" \
		"[    5.1] Kernel panic - not syncing: Attempted to kill init!" > "$BATS_TEST_TMPDIR/log"
	run "$P" "$BATS_TEST_TMPDIR/log" qemu
	[ "$status" -eq 1 ]
	[[ "$output" == *"KERNEL [    5.1] Kernel panic"* ]]
	[[ "$output" == *"never finished"* ]]
}

@test "usage errors exit 2" {
	run "$P" /nonexistent qemu
	[ "$status" -eq 2 ]
	run "$P" onlyone
	[ "$status" -eq 2 ]
}
