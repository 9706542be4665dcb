#!/usr/bin/env bats
# Adversarial (issue 11): a purpose-built fuzzer of the shadow-stack interfaces, Bochs
# tier (emulated CET). Helper: shstk_fuzz (tests/guest/helpers/shstk_fuzz.c; its header
# lists the operations and what fails a run).
#
# Bounds (environment, guest seconds):
#   SHSTK_FUZZ_RUNS  runs of the helper, each with its own seed (CI: 3; long run: 5)
#   SHSTK_FUZZ_SECS  time budget of each run (CI: 30; long run: 120)
#   SHSTK_FUZZ_OPS   operation budget of each run (100000)
#   SHSTK_FUZZ_HANG  a child not done after this is hung (60)
#   SHSTK_FUZZ_SEED  the seed (default: from the clock; every run prints its own); when
#                    set, one run with it: a reproduction
# The long run is the kernel argument cetctl.fuzz=1 (CETCTL_FUZZ_SHSTK=1 for
# tests/run-all.sh bochs). In the guest, pass the bounds on the kernel command line (a
# word KEY=VALUE without a dot becomes /init's environment), e.g. to reproduce a failure:
#   bash vm/run-bochs.sh KERNEL INITRD --suites fuzz-shstk --append "SHSTK_FUZZ_SEED=N"
# The worker threads make a seed replay the same operations, not the same interleaving:
# add SHSTK_FUZZ_THREADS=0 for a closer replay.
#
# Measured in Bochs (series key f3a85a35, CI bounds): 3 runs, 28 worker rounds, 9823
# operations, the suite ~110 guest s (10 min wall on a loaded 2-core host); kernel log clean.
#
# The children the fuzzer sacrifices die of #CP ("control protection"), SIGSEGV
# ("segfault", e.g. a bad rt_sigreturn frame: "bad frame") or traps on random registers
# ("traps: NAME[PID] ..."): those kernel lines are declared. WARN, BUG, Oops, hung tasks and RCU
# stalls are never declared: vm/parse-results.py fails the run on them.

load lib/common

setup_file() {
	expect_kernel_log 'control protection|segfault at|bad frame|traps: [^ []+\[[0-9]+\] '
}

# fuzz_run CMD...: $status, $output and $lines as bats' run sets them, the output
# taken through a file: a process the fuzzer left behind with its output open cannot
# keep the test waiting (bats' run reads a pipe to its end; once it waited out the
# suite's 1800 s bound).
fuzz_run() {
	local f=$BATS_TEST_TMPDIR/fuzz.out
	status=0
	"$@" >"$f" 2>&1 </dev/null || status=$?
	output=$(<"$f")
	mapfile -t lines <<<"$output"
}

@test "fuzz: the belief check passes on layouts the kernel may make, fails on wrong ones (selftest)" {
	require_shstk
	fuzz_run timeout -k 5 120 "$HELPERS/shstk_fuzz" selftest
	printf '%s\n' "$output"
	grep -E '^selftest:|^RESULT' <<<"$output" | sed 's/^/# /' >&3
	[[ $status == 0 ]] || fail "shstk_fuzz selftest exited with status $status"
	grep -q '^RESULT: selftest passed' <<<"$output" || fail "no passing RESULT line"
}

@test "fuzz: shadow-stack interfaces with random arguments, bounded in time (seeds printed)" {
	require_shstk
	local runs secs hang=${SHSTK_FUZZ_HANG:-60} i out ops=0 rounds=0 took=0 seeds=() n o t
	if grep -qw 'cetctl.fuzz=1' /proc/cmdline; then	# the long run (CETCTL_FUZZ_SHSTK=1)
		runs=${SHSTK_FUZZ_RUNS:-5} secs=${SHSTK_FUZZ_SECS:-120}
	else						# CI
		runs=${SHSTK_FUZZ_RUNS:-3} secs=${SHSTK_FUZZ_SECS:-30}
	fi
	# a given seed is a reproduction: one run
	[[ -z ${SHSTK_FUZZ_SEED:-} ]] || runs=1
	for ((i = 1; i <= runs; i++)); do
		# the helper bounds itself; the timeout is for the helper hanging in the kernel
		fuzz_run timeout -k 5 $((secs + 3 * hang + 60)) "$HELPERS/shstk_fuzz" "$secs" "${SHSTK_FUZZ_OPS:-100000}"
		printf '%s\n' "$output"
		# the seed and the counts, also when the test passes (TAP comments)
		grep -E '^seed=|info rounds=|^RESULT' <<<"$output" | sed "s/^/# run $i: /" >&3
		[[ $status != 124 && $status != 137 ]] || fail "shstk_fuzz itself did not finish (timeout, status $status)"
		[[ $status == 0 ]] || fail "shstk_fuzz exited with status $status"
		grep -q '^seed=' <<<"$output" || fail "no seed printed"
		grep -q '^RESULT: all checks passed' <<<"$output" || fail "no passing RESULT line"
		seeds+=("$(sed -n 's/^seed=\([0-9]*\) .*/\1/p' <<<"$output")")
		out=$(sed -n 's/.*info rounds=\([0-9]*\) ops=\([0-9]*\) secs=\([0-9]*\).*/\1 \2 \3/p' <<<"$output")
		read -r n o t <<<"$out"
		rounds=$((rounds + ${n:-0})) ops=$((ops + ${o:-0})) took=$((took + ${t:-0}))
	done
	echo "# fuzz: $runs run(s), seeds ${seeds[*]}: $rounds worker rounds, $ops operations, ${took} s" >&3
	((ops > 0)) || fail "the fuzzer did no operation"
}

# The report itself (SHSTK_FUZZ_INJECT, a few seconds): the CI failure of seed
# 1805785439719359 left "*** stack smashing detected ***" lines that named no process.
# A worker that dies of SIGABRT fails the run, and the supervisor names it, what each of
# its threads was doing and its last operations; a sacrificial child's SIGABRT (glibc's
# abort after a corruption on purpose) is named at once and is not a failure.
@test "fuzz: a failed round names the dead process and its last operations (injected aborts)" {
	require_shstk
	fuzz_run timeout -k 5 120 env SHSTK_FUZZ_INJECT=worker-abort "$HELPERS/shstk_fuzz" 5 200
	printf '%s\n' "$output"
	[[ $status == 1 ]] || fail "worker-abort: status $status, expected 1 (a failed run)"
	grep -Eq '^  FAIL .*worker [0-9]+ of round 0 \(seed [0-9]+\) died: killed by ABRT$' <<<"$output" ||
		fail "worker-abort: no FAIL line naming the worker and its SIGABRT"
	grep -Eq '^  info worker [0-9]+ thread [0-9]+: in op_touch \(its operation [0-9]+\)$' <<<"$output" ||
		fail "worker-abort: the thread and the operation it died in are not named"
	grep -Eq '^  info trail: [0-9]+ ' <<<"$output" || fail "worker-abort: no trail of the worker's operations"
	grep -q '^RESULT: 1 failure' <<<"$output" || fail "worker-abort: no failing RESULT line"

	fuzz_run timeout -k 5 120 env SHSTK_FUZZ_INJECT=child-abort "$HELPERS/shstk_fuzz" 5 200
	printf '%s\n' "$output"
	[[ $status == 0 ]] || fail "child-abort: status $status, expected 0 (a sacrificial child's abort is no failure)"
	grep -Eq '^  info \[[0-9]+/[0-9]+\] sigreturn child [0-9]+ \(.*\): killed by ABRT, ' <<<"$output" ||
		fail "child-abort: no info line naming the aborted sigreturn child"
	grep -q '^RESULT: all checks passed' <<<"$output" || fail "child-abort: no passing RESULT line"
}
