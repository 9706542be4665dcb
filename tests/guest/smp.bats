#!/usr/bin/env bats
# Shadow stacks on two CPUs (issue 22). Helper: shstk_smp (tests/guest/helpers/shstk_smp.c;
# its header says what each case checks), plus shstk_flow and shstk_fuzz under taskset.
#
# Needs at least 2 online CPUs, else every test skips with "1 CPU online": the default
# Bochs tier boots 1 CPU. The 2-CPU run is the opt-in soak (vm/bochs/README.md, SMP;
# CETCTL_BOCHS_SMP=1 for tests/run-all.sh bochs):
#   vm/run-bochs.sh KERNEL INITRD --cpus 2 --suites smp,conformance-flow,fuzz-shstk --timeout 5400
# Without CET hardware (QEMU, -smp 2) the shstk_smp cases run with --dry (pinning, forks,
# hops and TLB shootdowns without a shadow stack: the harness itself) and then skip,
# saying that the shadow-stack parts could not run; in the Bochs tier a missing
# user_shstk is a failure.
#
# Bounds (guest seconds; on the kernel command line as KEY=VALUE, see fuzz-shstk.bats):
#   SHSTK_SMP_SECS       each shstk_smp case (default 5; cow twice that; --dry: 2)
#   SHSTK_SMP_MIN        minimum iterations/forks per case, whatever the time (20)
#   SHSTK_SMP_FUZZ_SECS  each of the two pinned fuzzer runs (default 20)

load lib/common

setup_file() {
	# #CP and SIGSEGV of the flow cases, the fuzzer's sacrificed children, the broken
	# variants' #CP (fuzz-shstk.bats and conformance-flow.bats declare the same)
	expect_kernel_log 'control protection|segfault|bad frame|traps: [^ []+\[[0-9]+\] '
}

online_cpus() { grep -c '^processor' /proc/cpuinfo; }

require_smp() {
	local n
	n=$(online_cpus)
	((n >= 2)) || skip "1 CPU online (the SMP cases need 2: vm/run-bochs.sh --cpus 2)"
}

smp_dry_then_skip() {
	run_helper shstk_smp --dry "$@" || return 1
	grep -E '^  info (pinned|cow|migrate):' <<<"$output" | sed 's/^  info /# --dry /' >&3
	skip "no shadow-stack hardware (cpuinfo lacks user_shstk): the shadow-stack checks cannot run; the scheduling parts passed without a shadow stack (--dry)"
}

secs() { echo "${SHSTK_SMP_SECS:-5}"; }

# run_case CASE SECS: shstk_smp with its shadow stack where there is CET; without, in the
# Bochs tier a failure, elsewhere --dry (2 s) and a skip that says so
run_case() {
	require_smp
	require_kernel_support || return 1
	if ! have_shstk_hw; then
		[[ ${CETCTL_TIER:-} != bochs ]] || { require_shstk; return 1; }
		smp_dry_then_skip "$1" "${SHSTK_SMP_SECS:-2}"
		return
	fi
	run_helper shstk_smp "$@" || return 1
	# every check and figure as TAP comments: which CPU each thread ran on, with which SSP
	grep -E '^  (ok  |info) ' <<<"$output" | sed 's/^  /# /' >&3
}

@test "smp: a thread pinned to each CPU runs there with its shadow stack (RDSSP, smaps, status) and recurses" {
	run_case pinned "$(secs)"
}

@test "smp: forks race with shadow-stack recursion on every CPU; children inherit the marker chain and return through it" {
	run_case cow "$(($(secs) * 2))"
}

@test "smp: a shadow-stack thread hops between CPUs (sched_setaffinity) while another thread causes TLB shootdowns" {
	run_case migrate "$(secs)"
}

@test "smp: the checks fail on broken variants (wrong CPU, WRSS-changed marker, changed return -> #CP, no hop)" {
	require_smp
	require_kernel_support || return 1
	local v out rc dry=()
	[[ -x $HELPERS/shstk_smp ]] || fail "helper $HELPERS/shstk_smp is missing"
	if ! have_shstk_hw; then
		[[ ${CETCTL_TIER:-} != bochs ]] || { require_shstk; return 1; }
		dry=(--dry)
	fi
	for v in cpu:pinned marker:cow ret:cow hop:migrate; do
		if ((${#dry[@]})) && [[ $v == marker:* || $v == ret:* ]]; then
			continue	# WRSS needs the shadow stack
		fi
		rc=0
		out=$(SHSTK_SMP_BREAK=${v%%:*} SHSTK_SMP_MIN=3 "$HELPERS/shstk_smp" "${dry[@]}" "${v#*:}" 0.5 2>&1) || rc=$?
		printf '%s\n' "--- SHSTK_SMP_BREAK=${v%%:*} ${v#*:}: exit $rc" "$out"
		[[ $rc == 1 ]] || fail "broken variant ${v%%:*} of ${v#*:}: exit $rc, expected 1 (a failed check)"
		case ${v%%:*} in
		cpu) grep -q '^  FAIL thread .* pinned to CPU .*wrong)' <<<"$out" || fail "no wrong-CPU FAIL" ;;
		marker) grep -q '^  FAIL .* children exited 12: inherited shadow-stack slots differ' <<<"$out" ||
			fail "no FAIL for the changed marker" ;;
		ret) grep -q '^  FAIL .* children exited 110: SIGSEGV SEGV_CPERR' <<<"$out" ||
			fail "no FAIL for the #CP of the changed return address" ;;
		hop) grep -q '^  FAIL thread .* hops in .* wrong' <<<"$out" || fail "no FAIL for the missing hop" ;;
		esac
		echo "# broken variant ${v%%:*} (${v#*:}): exit $rc, $(grep -c '^  FAIL' <<<"$out") FAIL line(s)" >&3
	done
	((${#dry[@]} == 0)) ||
		skip "no shadow-stack hardware: only the scheduling variants (cpu, hop) were shown to fail (--dry)"
}

@test "smp: the flow cases on the last CPU (taskset -c N)" {
	require_smp
	require_shstk || return 1
	local last c on
	last=$(($(online_cpus) - 1))
	on=$(taskset -c "$last" awk '{ print $39 }' /proc/self/stat)
	[[ $on == "$last" ]] || fail "taskset -c $last: /proc/self/stat says CPU $on"
	for c in cperr signal sigforge pivot wrss fork threads vfork; do
		run taskset -c "$last" "$HELPERS/shstk_flow" "$c"
		printf '%s\n' "--- taskset -c $last shstk_flow $c: exit $status" "$output"
		[[ $status == 0 ]] || fail "shstk_flow $c on CPU $last exited with status $status"
	done
	echo "# 8 flow cases on CPU $last" >&3
}

@test "smp: two shadow-stack fuzzers at once, one pinned to each of CPU 0 and 1 (taskset)" {
	require_smp
	require_shstk || return 1
	local secs=${SHSTK_SMP_FUZZ_SECS:-20} hang=${SHSTK_FUZZ_HANG:-60} c rc=() pid=() o d
	d=$(mktemp -d)
	# SHSTK_FUZZ_THP=0 on one: both would switch and restore the same sysfs knob
	for c in 0 1; do
		SHSTK_FUZZ_THP=$((c == 0)) timeout -k 5 $((secs + 3 * hang + 60)) \
			taskset -c "$c" "$HELPERS/shstk_fuzz" "$secs" "${SHSTK_FUZZ_OPS:-100000}" >"$d/$c" 2>&1 &
		pid[c]=$!
	done
	for c in 0 1; do
		rc[c]=0
		wait "${pid[c]}" || rc[c]=$?
	done
	for c in 0 1; do
		o=$(cat "$d/$c")
		printf '%s\n' "--- taskset -c $c shstk_fuzz $secs: exit ${rc[c]}" "$o"
		grep -E '^seed=|info rounds=|^RESULT' <<<"$o" | sed "s/^/# CPU $c: /" >&3
		[[ ${rc[c]} == 0 ]] || fail "shstk_fuzz on CPU $c exited with status ${rc[c]}"
		grep -q '^RESULT: all checks passed' <<<"$o" || fail "shstk_fuzz on CPU $c: no passing RESULT line"
	done
	rm -rf "$d"
}
