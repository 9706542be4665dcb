#!/usr/bin/env bats
# Host tests of vm/bochs/noquirks-check.py, the verdict of vm/bochs/demo-noquirks.sh: a
# boot without the workaround's quirks demonstrates the Bochs 2.7 bugs when one of the
# state tests of tests/guest/bochs-quirks.bats fails or never reports; passed and skipped
# tests demonstrate nothing. Run: bats vm/selftest/noquirks.bats

C="$BATS_TEST_DIRNAME/../bochs/noquirks-check.py"
YMM='YMM registers survive context switches (avx_check)'
SS='shadow-stack state survives fork, threads, signals, timers (shstk_stress)'
TH="a thread's shadow-stack state is its own after many switches"

# log LINE...: a console log of the bochs-quirks suite holding LINE..., as the serial
# line brings it (CR LF)
log() {
	printf '%s\n' 'CETCTL-SUITE-BEGIN bochs-quirks.bats up=1' '1..5' \
		'ok 1 bochs-quirks: the kernel uses XSAVE(S) with a consistent xstate layout' \
		"$@" 'CETCTL-SUITE-END bochs-quirks.bats rc=1 up=2' | sed 's/$/\r/' >"$BATS_TEST_TMPDIR/log"
	echo "$BATS_TEST_TMPDIR/log"
}

@test "noquirks-check: a failed state test demonstrates the bug" {
	run python3 "$C" "$(log "not ok 3 bochs-quirks: $YMM" '# [FAIL] 11/200 round trips corrupted YMM' \
		"ok 4 bochs-quirks: $SS # skip no CET_U xfeature" "ok 5 bochs-quirks: $TH")"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "demo: OBSERVED without the workaround: 'YMM registers survive' FAILED" ]
	[ "${lines[1]}" = "demo: 'shadow-stack state survives' skipped: no CET_U xfeature" ]
	[ "${lines[2]}" = "demo: 'a thread's shadow-stack state' passed even without the workaround" ]
	[ "${lines[3]}" = "demo:   # [FAIL] 11/200 round trips corrupted YMM" ]
	[ "${lines[-1]}" = "demo: the Bochs 2.7 bugs are observable without vm/bochs/cet-bochs27-quirks.patch's quirks" ]
}

@test "noquirks-check: passed and skipped tests demonstrate nothing" {
	run python3 "$C" "$(log "ok 3 bochs-quirks: $YMM # skip AVX is off" "ok 4 bochs-quirks: $SS" \
		"ok 5 bochs-quirks: $TH")"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output != *OBSERVED* ]]
	[ "${lines[0]}" = "demo: 'YMM registers survive' skipped: AVX is off" ]
	[ "${lines[-1]}" = "demo: nothing demonstrated" ]
}

@test "noquirks-check: a test that never reported (hung guest) demonstrates the bug" {
	local l
	l=$(log "ok 3 bochs-quirks: $YMM" "ok 4 bochs-quirks: $SS")
	run python3 "$C" "$l"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[2]}" = "demo: OBSERVED without the workaround: 'a thread's shadow-stack state' never reported — the guest hung or crashed in it (see $l)" ]
	# "not ok" wins over an "ok" of the same test
	run python3 "$C" "$(log "ok 3 bochs-quirks: $YMM" "not ok 3 bochs-quirks: $YMM" \
		"ok 4 bochs-quirks: $SS" "ok 5 bochs-quirks: $TH")"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "demo: OBSERVED without the workaround: 'YMM registers survive' FAILED" ]
}

@test "noquirks-check: at most 20 lines of the stress programs are shown" {
	local s=() i
	for i in $(seq 1 25); do s+=("[STRESS] round $i"); done
	run python3 "$C" "$(log "${s[@]}" "not ok 3 bochs-quirks: $YMM" "ok 4 bochs-quirks: $SS" \
		"ok 5 bochs-quirks: $TH")"
	[ "$status" -eq 0 ]
	[ "$(grep -c '^demo:   \[STRESS\] round' <<<"$output")" -eq 20 ]
	[[ $output == *"round 20"* && $output != *"round 21"* ]]
}

@test "noquirks-check: no log, or no argument, is a harness error, not a demonstration" {
	run python3 "$C" "$BATS_TEST_TMPDIR/missing"
	[ "$status" -eq 2 ]
	[[ $output != *OBSERVED* ]]
	run python3 "$C"
	[ "$status" -eq 2 ]
}

@test "noquirks-check: every test it looks for is a test of tests/guest/bochs-quirks.bats" {
	run python3 -c 'import importlib.util, sys
spec = importlib.util.spec_from_file_location("c", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
print("\n".join(m.TESTS))' "$C"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 3 ]
	local t
	for t in "${lines[@]}"; do
		grep -qF "@test \"bochs-quirks: $t" "$BATS_TEST_DIRNAME/../../tests/guest/bochs-quirks.bats" ||
			{ echo "no test named '$t...'"; return 1; }
	done
}
