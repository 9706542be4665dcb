#!/usr/bin/env bats
# Kernel conformance: arch_prctl(ARCH_SHSTK_*) and its ptrace side, exec, /proc status,
# the NT_X86_SHSTK regset. Helper: shstk_api (tests/guest/helpers/shstk_api.c).
# The no-hardware cases run for real in the QEMU tier; the hardware ones under Bochs.

load lib/common

setup_file() {
	expect_fault_lines
}

@test "prctl: every task shows both status lines; a shell has nothing enabled or locked" {
	require_kernel_support
	local f
	for f in /proc/self/status /proc/1/status /proc/$$/status; do
		grep -qP '^x86_Thread_features:\t$' "$f" || fail "$f: $(grep '^x86_Thread' "$f")"
		grep -qP '^x86_Thread_features_locked:\t$' "$f" || fail "$f: $(grep '^x86_Thread' "$f")"
	done
	# one pair per thread directory as well
	for f in /proc/$$/task/*/status; do
		[[ $(grep -c '^x86_Thread_features' "$f") == 2 ]] || fail "$f"
	done
}

@test "prctl: no hardware: STATUS 0, ENABLE/DISABLE EOPNOTSUPP, bad bits EINVAL, LOCK then EPERM" {
	require_no_shstk_hw
	run_helper shstk_api nohw
}

@test "prctl: hardware: ENABLE/DISABLE/LOCK/STATUS, WRSS needs SHSTK, locked -> EPERM" {
	require_shstk
	run_helper shstk_api prctl
}

@test "prctl: via ptrace ENABLE/DISABLE refused; LOCK, UNLOCK, STATUS allowed; self-UNLOCK refused" {
	require_kernel_support
	run_helper shstk_api ptrace-prctl
}

@test "prctl: exec resets enabled and locked features" {
	require_kernel_support
	run_helper shstk_api exec
}

@test "prctl: /proc/PID/task/TID/status lines are per thread" {
	require_kernel_support
	run_helper shstk_api status-threads
}

@test "prctl: NT_X86_SHSTK of a task without shadow stack: ENODEV" {
	require_kernel_support
	run_helper shstk_api regset-nohw
}

@test "prctl: NT_X86_SHSTK get/set, bad sizes and values EINVAL, SSP+8 -> #CP" {
	require_shstk
	run_helper shstk_api regset
}
