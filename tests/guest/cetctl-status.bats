#!/usr/bin/env bats
# cetctl status / audit / info inside the guest, against the kernel under test.
#  QEMU (no CET in the CPU): the status lines are there and empty, nothing is
#    enabled, info exits 2 and blames the CPU, audit sees kernel support.
#  Bochs (emulated CET, cpuinfo has user_shstk): programs started with
#    `cetctl run --shstk` show enabled + locked, one shadow-stack VMA per thread,
#    wrss, unlocked and mixed states; info exits 0; audit --require passes for them.
# Helper: status_hold (tests/guest/helpers/status_hold.c). No jq in the guest:
# the text output is checked (-n --raw -o ...).

bats_require_minimum_version 1.5.0
load lib/common

setup() {
	CETCTL=${CETCTL:-$(command -v cetctl || echo "$BATS_TEST_DIRNAME/../../build/cetctl")}
	[[ -x $CETCTL ]] || fail "no cetctl binary"
	HOLD=$HELPERS/status_hold
	bg=()
}

teardown() {
	stop_bg
}

# The test needs `cetctl run` (written in parallel); skip, saying why, when it is not there.
need_run() {
	local out
	out=$("$CETCTL" run --help 2>&1) || true
	[[ $out == *"not implemented"* ]] && skip "cetctl run is not implemented in this build"
	return 0
}

need_hw() {
	require_kernel_support || return 1
	have_shstk_hw || skip "no shadow-stack hardware (cpuinfo lacks user_shstk)"
	need_run
}

# start_hold ARGS...: `cetctl run ARGS` in the background, wait for "ready";
# sets HOLD_PID to the held program (cetctl run itself, after its exec).
start_hold() {
	local out=$BATS_TEST_TMPDIR/hold.out
	[[ -x $HOLD ]] || fail "helper $HOLD missing"
	"$CETCTL" run "$@" >"$out" 2>&1 &
	bg+=($!)
	for _ in $(seq 100); do
		grep -q '^ready' "$out" && break
		sleep 0.1
	done
	grep -q '^ready' "$out" || fail "held program did not start: $(cat "$out")"
	# cetctl run becomes the program (the tracer is a detached grandchild)
	HOLD_PID=${bg[-1]}
	[[ $(cat "/proc/$HOLD_PID/comm") != cetctl ]] || fail "cetctl run did not become the program"
	HOLD_OUT=$out
}

field() {	# field N "line": the N-th space-separated field
	echo "$2" | awk -v n="$1" '{ print $n }'
}

# ---- every tier with the series kernel ----------------------------------------

@test "status: the series kernel prints the lines: self is not enabled, verdict says so" {
	require_kernel_support
	run "$CETCTL" status -n --raw -o FEATURES,LOCKED,SHSTK,SHSTK-LOCKED self
	echo "$output"
	[[ $status -eq 0 ]] || fail "status $status"
	# empty feature words, booleans "no" (not empty: the lines exist)
	[[ $output == "  no no" ]] || fail "unexpected: '$output'"
	run "$CETCTL" status -n -o VERDICT self
	[[ $output == "not enabled"* ]] || fail "verdict: $output"
}

@test "status: every thread's lines are read (threads of a plain process)" {
	require_kernel_support
	[[ -x $HOLD ]] || fail "helper $HOLD missing"
	"$HOLD" -t 2 30 >"$BATS_TEST_TMPDIR/o" &
	bg+=($!)
	for _ in $(seq 50); do grep -q ready "$BATS_TEST_TMPDIR/o" && break; sleep 0.1; done
	run "$CETCTL" status -n --raw -o TID,SHSTK "${bg[0]}"
	echo "$output"
	[[ $status -eq 0 ]] || fail "status $status"
	# one process line (no TID) and three thread lines, all "no"
	[[ $(echo "$output" | grep -c ' no$') -eq 4 ]] || fail "expected 4 lines ending in no"
}

@test "audit: sees the kernel's support; --require shstk fails for unprotected processes" {
	require_kernel_support
	run "$CETCTL" audit --prometheus "$BATS_TEST_TMPDIR/m.prom" -o PID -n
	[[ $status -eq 0 ]] || fail "status $status: $output"
	grep -qx 'cetctl_audit_kernel_support 1' "$BATS_TEST_TMPDIR/m.prom" || fail "$(cat "$BATS_TEST_TMPDIR/m.prom")"
	run "$CETCTL" audit --require shstk --pid $$
	[[ $status -eq 1 ]] || fail "status $status"
	[[ $output == *"1 of 1 processes do not meet --require shstk"* ]] || fail "$output"
}

@test "info: without CET hardware exits 2 and blames the CPU, not the kernel" {
	require_no_shstk_hw
	run "$CETCTL" info -n --raw -o NAME,VALUE
	echo "$output"
	[[ $status -eq 2 ]] || fail "status $status"
	[[ $output == *"status-lines yes"* ]] || fail "status lines not seen"
	[[ $output == *"cpu-user-shstk no"* ]] || fail "user_shstk"
	run "$CETCTL" info -n -o DETAIL
	[[ $output == *"lacks"* ]] || fail "reason: $output"
	[[ $output != *"no x86_Thread_features line"* ]] || fail "blamed the kernel"
}

# ---- emulated CET (Bochs tier) ----------------------------------------------

@test "info: with emulated CET exits 0" {
	need_hw
	run "$CETCTL" info -n --raw -o NAME,VALUE
	echo "$output"
	[[ $status -eq 0 ]] || fail "status $status"
	[[ $output == *"supported yes"* ]] || fail "not supported"
}

@test "status: under cetctl run --shstk: enabled and locked, with a shadow-stack VMA" {
	need_hw
	run --separate-stderr "$CETCTL" run --shstk -- "$CETCTL" status -n --raw -o FEATURES,LOCKED,SHSTK,SHSTK-LOCKED,WRSS,SS-SIZE self
	echo "$output"
	# shellcheck disable=SC2154  # stderr: set by bats' run --separate-stderr
	echo "$stderr"
	[[ $status -eq 0 ]] || fail "status $status"
	line=$(echo "$output" | tail -1)
	# LOCKED: shstk, and wrss too when the launcher locks every feature
	[[ $(field 1 "$line") == shstk && $(field 2 "$line") == shstk* ]] || fail "features: $line"
	[[ $(field 3 "$line") == yes && $(field 4 "$line") == yes && $(field 5 "$line") == no ]] || fail "booleans: $line"
	[[ $(field 6 "$line") -gt 0 ]] || fail "no ss VMA: $line"
	run --separate-stderr "$CETCTL" run --shstk -- "$CETCTL" status -n -o VERDICT self
	[[ $output == *"enabled and locked"* ]] || fail "verdict: $output"
}

@test "status: under cetctl run --shstk --wrss: wrss shown and explained" {
	need_hw
	run --separate-stderr "$CETCTL" run --shstk --wrss -- "$CETCTL" status -n --raw -o WRSS,VERDICT self
	echo "$output"
	[[ $status -eq 0 ]] || fail "status $status"
	[[ $(echo "$output" | tail -1) == "yes "*"WRSS"* ]] || fail "$output"
	run --separate-stderr "$CETCTL" run --shstk --wrss -- "$CETCTL" status -n --raw -o FEATURES self
	[[ $output == *'shstk\x20wrss'* || $output == *"shstk wrss"* ]] || fail "$output"
}

@test "status: under cetctl run --shstk --no-lock: enabled, not locked" {
	need_hw
	run --separate-stderr "$CETCTL" run --shstk --no-lock -- "$CETCTL" status -n -o VERDICT self
	echo "$output"
	[[ $status -eq 0 ]] || fail "status $status"
	[[ $output == *"enabled, not locked: the process can turn it off"* ]] || fail "$output"
}

@test "status: a threaded program under run --shstk: every thread enabled and locked, one ss VMA each" {
	need_hw
	start_hold --shstk -- "$HOLD" -t 3 60
	run "$CETCTL" status -n --raw -o TID,FEATURES,LOCKED,THREADS,VERDICT "$HOLD_PID"
	echo "$output"
	[[ $status -eq 0 ]] || fail "status $status"
	[[ $(echo "$output" | grep -c 'shstk shstk') -eq 5 ]] || fail "expected the process + 4 threads with shstk shstk"
	run "$CETCTL" status -n -o VERDICT "$HOLD_PID"
	[[ $output == *"enabled and locked"* ]] || fail "verdict: $output"
	# the kernel gives every thread its own shadow stack
	run "$CETCTL" audit -n --raw -o SS-VMAS --pid "$HOLD_PID"
	echo "ss VMAs: $output"
	[[ $output -ge 4 ]] || fail "expected >= 4 shadow-stack VMAs, saw $output"
	run "$CETCTL" audit --require shstk,locked --pid "$HOLD_PID"
	[[ $status -eq 0 ]] || fail "audit --require: status $status: $output"
}

@test "status: a thread that turned its shadow stack off makes the process mixed" {
	need_hw
	start_hold --shstk --no-lock -- "$HOLD" -t 2 -d 60
	grep -q 'disable: ok' "$HOLD_OUT" || fail "disable in thread: $(cat "$HOLD_OUT")"
	run "$CETCTL" status -n -o VERDICT "$HOLD_PID"
	echo "$output"
	[[ $output == *"mixed: 2 of 3 threads run with a shadow stack"* ]] || fail "$output"
	run "$CETCTL" audit -n --raw -o PID,DIFFER --pid "$HOLD_PID"
	[[ $output == "$HOLD_PID 1" ]] || fail "audit DIFFER: $output"
	run "$CETCTL" audit --require shstk --pid "$HOLD_PID"
	[[ $status -eq 1 ]] || fail "a mixed process must offend --require shstk"
}
