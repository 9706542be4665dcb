#!/usr/bin/env bats
# vm/kselftest-compare.py, the judge of the kselftest tier: a timeout of ours
# where 6.1 passed is a regression, unless 6.1 itself needed 3/4 of the limit.

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
