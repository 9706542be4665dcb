#!/usr/bin/env bats
# vm/kselftest-compare.py, the judge of the kselftest tier: a timeout of ours
# where 6.1 passed is a regression, unless 6.1 itself needed 3/4 of the limit.

bats_require_minimum_version 1.5.0

load helpers

setup() {
	TMP=$BATS_TEST_TMPDIR
	# unpatched 6.1: x needs 100 s of 120, y 10 s; z times out (the limit: 120)
	printf '%s\n' 'KSFT a/x PASS rc=0 secs=100' 'KSFT a/y PASS rc=0 secs=10' \
		'KSFT a/z TIMEOUT rc=124 secs=120' KSFT-DONE >"$TMP/base"
}

compare() {
	run python3 "$REPO/vm/kselftest-compare.py" "$TMP/base" "$TMP/ours"
	echo "$output"
}

@test "kselftest-compare: a timeout of a test 6.1 barely passed is 'slow', not a regression" {
	printf '%s\n' 'KSFT a/x TIMEOUT rc=124 secs=120' 'KSFT a/y PASS rc=0 secs=11' \
		'KSFT a/z TIMEOUT rc=124 secs=120' KSFT-DONE >"$TMP/ours"
	compare
	[ "$status" -eq 0 ]
	grep -Eq '^a/x +PASS +TIMEOUT +slow$' <<<"$output"
	[[ $output == *"kselftest: 1 passed, 0 failed, 2 skipped"* ]]
}

@test "kselftest-compare: a timeout of a quick test, or a failure, is a regression" {
	printf '%s\n' 'KSFT a/x FAIL rc=1 secs=3' 'KSFT a/y TIMEOUT rc=124 secs=120' \
		'KSFT a/z TIMEOUT rc=124 secs=120' KSFT-DONE >"$TMP/ours"
	compare
	[ "$status" -eq 1 ]
	grep -Eq '^a/x +PASS +FAIL +REGRESSION$' <<<"$output"
	grep -Eq '^a/y +PASS +TIMEOUT +REGRESSION$' <<<"$output"
	[[ $output == *"kselftest: 0 passed, 2 failed, 1 skipped"* ]]
}

@test "kselftest-compare: a log without KSFT-DONE fails" {
	printf '%s\n' 'KSFT a/x PASS rc=0 secs=100' 'KSFT a/y PASS rc=0 secs=10' >"$TMP/ours"
	compare
	[ "$status" -eq 1 ]
	[[ $output == *"did not finish"* ]]
}

@test "kselftest-compare --record: a baseline out of a console log, KSFT lines as they came" {
	# the console: kernel lines, the runner's lines (with bats' "# " in front when it ran
	# inside a suite) and their CRs; only the KSFT ones, without that "# ", are kept
	printf '%s\n' '[    1.0] Linux version 6.1' '1..1' '# KSFT a/x PASS rc=0 secs=100' \
		$'KSFT a/y FAIL rc=1 secs=3\r' $'# KSFT-LOG y: [FAIL] why\r' 'noise # not a result' \
		'ok 1 kselftest' 'x # KSFT-DONE' >"$TMP/console"
	run python3 "$REPO/vm/kselftest-compare.py" --record k1 'unpatched 6.1, today' "$TMP/console"
	[ "$status" -eq 0 ]
	printf '%s\n' '# key: k1' '# unpatched 6.1, today' 'KSFT a/x PASS rc=0 secs=100' \
		$'KSFT a/y FAIL rc=1 secs=3\r' $'KSFT-LOG y: [FAIL] why\r' 'x # KSFT-DONE' >"$TMP/want"
	python3 "$REPO/vm/kselftest-compare.py" --record k1 'unpatched 6.1, today' "$TMP/console" >"$TMP/got"
	cmp "$TMP/want" "$TMP/got"
	# and it reads back as the unpatched side
	cp "$TMP/got" "$TMP/base"
	printf '%s\n' 'KSFT a/x PASS rc=0 secs=90' 'KSFT a/y FAIL rc=1 secs=3' KSFT-DONE >"$TMP/ours"
	compare
	[ "$status" -eq 0 ]
	[[ $output == *"kselftest: 1 passed, 0 failed, 1 skipped"* ]]
}

@test "kselftest-compare --key: the key a baseline was recorded for, nothing without one" {
	run python3 "$REPO/vm/kselftest-compare.py" --key "$REPO/tests/guest/kselftest-baseline-6.1.txt"
	[ "$status" -eq 0 ]
	[[ $output =~ ^[0-9a-f]{16}$ ]]
	run python3 "$REPO/vm/kselftest-compare.py" --key "$TMP/base"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	python3 "$REPO/vm/kselftest-compare.py" --record 4eba365b 'note' "$TMP/base" >"$TMP/rec"
	run python3 "$REPO/vm/kselftest-compare.py" --key "$TMP/rec"
	[ "$output" = 4eba365b ]
}

@test "kselftest-compare --record: an unreadable log is an error, the header printed all the same" {
	run --separate-stderr python3 "$REPO/vm/kselftest-compare.py" --record k 'n' "$TMP/missing"
	[ "$status" -eq 1 ]
	[ "$output" = $'# key: k\n# n' ]
}
