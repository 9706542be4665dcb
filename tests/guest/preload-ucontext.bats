#!/usr/bin/env bats
# libcetctl-preload.so's ucontext functions and landing records under
# `cetctl run --shstk` (issue 31), on Debian's glibc 2.36, which has no CET code:
# contexts on their own shadow stacks, uc_link, longjmp between contexts (QEMU's
# coroutines), swapcontext in a signal handler, a context ending in another thread,
# the number of shadow stacks 100,000 contexts leave, no memory for one, and the
# same program faulting without the library. Then qemu-img (ucontext coroutines).
# Bochs (emulated CET) runs them; in QEMU (no CET) they skip with the reason.
# Helpers (tests/guest/helpers): uc_shstk, preload_escape (dynamic).

bats_require_minimum_version 1.5.0
load lib/common

setup() {
	CETCTL=${CETCTL:-$(command -v cetctl || echo "$BATS_TEST_DIRNAME/../../build/cetctl")}
	[[ -x $CETCTL ]] || fail "no cetctl binary"
	UC=$HELPERS/uc_shstk
	[[ -x $UC ]] || fail "helper $UC missing"
	if [[ -z ${CETCTL_PRELOAD:-} ]]; then
		local d
		d=$(dirname "$CETCTL")
		for d in "$d" "$d/../lib/cetctl"; do
			[[ -f $d/libcetctl-preload.so ]] && export CETCTL_PRELOAD=$d/libcetctl-preload.so
		done
	fi
}

# The hardware cases: in the Bochs tier a missing user_shstk is a failure.
need_hw() {
	require_shstk || return 1
	[[ -n ${CETCTL_PRELOAD:-} && -f $CETCTL_PRELOAD ]] ||
		fail "preload library not in the image (CETCTL_PRELOAD=${CETCTL_PRELOAD:-unset})"
}

# uc_shstk MODE... under run --shstk with the library; its output is printed
uc() {
	run "$CETCTL" run --shstk -q -- "$UC" "$@"
	echo "status $status"
	printf '%s\n' "$output"
}

@test "ucontext: ping-pong between two contexts and main, each on its own shadow stack" {
	need_hw
	uc pingpong 200
	[[ $status -eq 0 ]] || fail "status $status"
	# ss=3/3: main's shadow stack and one per live context; once they returned,
	# theirs are kept as spares for the next contexts (ucontext-stacks.c)
	[[ $output == "pingpong: ok rounds=200 trace=abababab ssp=same ss=3/3" ]] || fail "output"
}

@test "ucontext: a context returns through uc_link into a made one, then into main; 8 arguments" {
	need_hw
	uc link
	# ss=3: main's and the two spares the finished contexts left
	[[ $status -eq 0 && $output == "link: ok args=8 chain=2 ssp=same ss=3" ]] || fail "link"
}

@test "ucontext: a context makes and runs a context of its own" {
	need_hw
	uc nested
	[[ $status -eq 0 && $output == "nested: ok ssp=same ss=3" ]] || fail "nested"
}

@test "ucontext: longjmp out of a context into main, and coroutines switched by siglongjmp (QEMU's way)" {
	need_hw
	uc longjmp
	[[ $status -eq 0 ]] || fail "status $status"
	# ss=5: main, the context left by the longjmp, three coroutines
	[[ $output == "longjmp: ok out-of-context=1 coroutines=3x50 ssp=same ss=5" ]] || fail "output"
}

@test "ucontext: swapcontext to a context and back inside a signal handler" {
	need_hw
	uc signal
	[[ $status -eq 0 && $output == "signal: ok swaps-in-handler=5 ssp=same" ]] || fail "signal"
}

@test "ucontext: a context started by main ends in another thread" {
	need_hw
	uc migrate
	# ss=2: main's and the spare (the thread's own went with it)
	[[ $status -eq 0 && $output == "migrate: ok ss=2" ]] || fail "migrate"
}

# 10,000 contexts each way in the default tiers, 100,000 with the kernel argument
# cetctl.long=1 (vm/run-bochs.sh --append cetctl.long=1: in Bochs the three take about
# 8 minutes at 100,000, too much for every CI run); "most" is sampled every 1000
# contexts and at the end.
churn_n() {
	if grep -qw 'cetctl.long=1' /proc/cmdline; then echo 100000; else echo 10000; fi
}

@test "ucontext: 10,000 (100,000) contexts run to their end leave no shadow stack behind" {
	need_hw
	n=$(churn_n)
	uc churn "$n" finish
	# main's and one spare, used by every next context
	[[ $status -eq 0 && $output == "churn: ok $n finish contexts, most ss VMAs=2, at the end=2" ]] ||
		fail "finish"
}

@test "ucontext: 10,000 (100,000) contexts made and dropped unrun map no shadow stack" {
	need_hw
	n=$(churn_n)
	uc churn "$n" unstarted
	[[ $status -eq 0 && $output == "churn: ok $n unstarted contexts, most ss VMAs=1, at the end=1" ]] ||
		fail "unstarted"
}

@test "ucontext: 10,000 (100,000) contexts left midway with their stacks unmapped leave none behind" {
	need_hw
	n=$(churn_n)
	uc churn "$n" unmapped
	# main's, and the spare taken from each unmapped context for the next one
	# (munmap is interposed while contexts exist)
	[[ $status -eq 0 && $output == "churn: ok $n unmapped contexts, most ss VMAs=2, at the end=2" ]] ||
		fail "unmapped"
}

@test "ucontext: no memory for a context's shadow stack: one clear message, SIGABRT" {
	need_hw
	run "$CETCTL" run --shstk -q -- "$UC" enomem
	echo "status $status"
	printf '%s\n' "$output"
	[[ $status -eq 134 ]] || fail "status $status, expected 134 (SIGABRT)"
	[[ $output == *"enomem: switching"* ]] || fail "did not get to the switch"
	[[ $output == *"libcetctl-preload: cannot map a shadow stack of 2208 bytes for a context (map_shadow_stack): Cannot allocate memory"* ]] ||
		fail "message"
	[[ $(grep -c '^libcetctl-preload:' <<<"$output") -eq 1 ]] || fail "not one message"
	[[ $output != *"the context ran"* ]] || fail "ran without a shadow stack"
}

@test "ucontext: without the preload library the same ping-pong faults (SEGV_CPERR)" {
	need_hw
	expect_fault_lines
	run bash -c '"$0" run --shstk -q --no-preload -- "$1" pingpong 2; echo "rc=$?"' "$CETCTL" "$UC"
	printf '%s\n' "$output"
	[[ $output == *"rc=139"* ]] || fail "expected a control-protection SIGSEGV"
	[[ $output != *"pingpong: ok"* ]] || fail "completed without the preload library"
	dmesg | grep -E 'uc_shstk.*control protection' | tail -n 2 || true
}

@test "landing records: after 31 and 1000 escaped longjmps a nested longjmp lands at its own setjmp" {
	need_hw
	local n
	[[ -x $HELPERS/preload_escape ]] || fail "helper preload_escape missing"
	for n in 31 1000; do
		run "$CETCTL" run --shstk -q -- "$HELPERS/preload_escape" "$n"
		echo "$n: status $status: $output"
		[[ $status -eq 0 && $output == "escapes=$n landed_at=1 inner=1 same_sp=1" ]] || fail "$n escapes"
	done
}

# qemu-img runs its block layer in coroutines: makecontext + swapcontext to start
# one, sigsetjmp/siglongjmp between them afterwards (QEMU's coroutine-ucontext.c).
@test "qemu-img create, convert and check a qcow2 image under --shstk" {
	need_hw
	command -v qemu-img >/dev/null || skip "qemu-img not in the image (package qemu-utils)"
	local d=$BATS_TEST_TMPDIR
	run "$CETCTL" run --shstk -q -- qemu-img create -f qcow2 "$d/a.qcow2" 8M
	echo "create: status $status: $output"
	[[ $status -eq 0 ]] || fail "create"
	printf 'cetctl-%04d\n' $(seq 1 300) > "$d/data"
	run "$CETCTL" run --shstk -q -- qemu-img convert -f raw -O qcow2 "$d/data" "$d/b.qcow2"
	echo "convert raw->qcow2: status $status: $output"
	[[ $status -eq 0 ]] || fail "convert to qcow2"
	run "$CETCTL" run --shstk -q -- qemu-img convert -f qcow2 -O raw "$d/b.qcow2" "$d/back"
	echo "convert qcow2->raw: status $status: $output"
	[[ $status -eq 0 ]] || fail "convert to raw"
	cmp -n "$(stat -c %s "$d/data")" "$d/data" "$d/back" || fail "the data did not survive"
	run "$CETCTL" run --shstk -q -- qemu-img check "$d/b.qcow2"
	echo "check: status $status: $output"
	[[ $status -eq 0 && $output == *"No errors were found on the image."* ]] || fail "check"
}

@test "qemu-img faults under --shstk without the preload library" {
	need_hw
	command -v qemu-img >/dev/null || skip "qemu-img not in the image (package qemu-utils)"
	expect_fault_lines
	run "$CETCTL" run --shstk -q -- qemu-img create -f qcow2 "$BATS_TEST_TMPDIR/c.qcow2" 1M
	[[ $status -eq 0 ]] || fail "create with the library: $output"
	run bash -c '"$0" run --shstk -q --no-preload -- qemu-img check "$1"; echo "rc=$?"' \
		"$CETCTL" "$BATS_TEST_TMPDIR/c.qcow2"
	printf '%s\n' "$output"
	[[ $output == *"rc=139"* ]] || fail "expected a control-protection SIGSEGV"
}
