#!/usr/bin/env bats
# Host tests of vm/results.py, which reads the counts tests/run-all.sh adds up from
# bats' TAP, ctest's log, the fuzz log and a verdict's summary line. A log without a
# result must never read as "0 failed": results.py exits 1 and run-all counts the tier
# as broken.
# Run: bats vm/selftest/results.bats

R="$BATS_TEST_DIRNAME/../results.py"

f() { printf '%s\n' "$@" > "$BATS_TEST_TMPDIR/log"; echo "$BATS_TEST_TMPDIR/log"; }

@test "results: TAP passed, failed, skipped and TODO" {
	run python3 "$R" tap "$(f '1..5' 'ok 1 a' 'not ok 2 b' 'ok 3 c # skip no CET' \
		'not ok 4 d # TODO later' 'ok 5 e # SKIP 1 CPU online' '# ok 6 a comment')"
	[ "$status" -eq 0 ]
	[ "$output" = "1 1 3" ]
}

@test "results: TAP without a test line is no result, not zero failures" {
	run python3 "$R" tap "$(f '1..0' 'bats: command not found')"
	[ "$status" -eq 1 ]
	[[ $output == *"no tap result"* ]]
}

@test "results: ctest's last summary line counts; none is no result" {
	run python3 "$R" ctest "$(f '90% tests passed, 1 tests failed out of 10' \
		'100% tests passed, 0 tests failed out of 11')"
	[ "$status" -eq 0 ]
	[ "$output" = "11 0 0" ]
	run python3 "$R" ctest "$(f '  Start 1: elf-notes' 'Segmentation fault')"
	[ "$status" -eq 1 ]
	run python3 "$R" ctest "$(f 'No tests were found!!!')"
	[ "$status" -eq 0 ]
	[ "$output" = "0 0 0" ]
}

@test "results: a fuzz target with crashes fails, the total line is not a target" {
	run python3 "$R" fuzz "$(f 'fuzz-elf-notes: 1000 execs in 15 s, 0 crashes (corpus 9 inputs, log x)' \
		'fuzz-proc-status: 10 execs in 15 s, 2 crashes (corpus 3 inputs, log y)' \
		'fuzz: 1010 execs, 2 crashes')"
	[ "$status" -eq 0 ]
	[ "$output" = "1 1 0" ]
	run python3 "$R" fuzz "$(f 'fuzz: 0 execs, 0 crashes')"
	[ "$status" -eq 1 ]
}

@test "results: the last TIER summary line of a verdict" {
	run python3 "$R" summary "$(f 'suite a: 3 passed, 0 failed, 0 skipped' 'bochs: 100 passed, 2 failed, 30 skipped')"
	[ "$status" -eq 0 ]
	[ "$output" = "100 2 30" ]
	run python3 "$R" summary "$(f 'CETCTL-GUEST-START' 'Kernel panic')"
	[ "$status" -eq 1 ]
}

@test "results: usage errors and unreadable files exit 2" {
	run python3 "$R" tap
	[ "$status" -eq 2 ]
	run python3 "$R" bogus "$(f x)"
	[ "$status" -eq 2 ]
	run python3 "$R" tap "$BATS_TEST_TMPDIR/missing"
	[ "$status" -eq 2 ]
}
