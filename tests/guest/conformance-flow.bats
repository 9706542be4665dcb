#!/usr/bin/env bats
# Kernel conformance: control flow with shadow stacks (#CP, signals, RSTORSSP, WRSS,
# fork, threads, vfork). Helper: shstk_flow (tests/guest/helpers/shstk_flow.c).
# Every case needs CET hardware (Bochs tier).

load lib/common

setup_file() {
	expect_fault_lines
}

@test "flow: a corrupted return raises SIGSEGV with si_code SEGV_CPERR" {
	require_shstk
	run_helper shstk_flow cperr
}

@test "flow: signal frame on the shadow stack: restorer + token, SSP restored" {
	require_shstk
	run_helper shstk_flow signal
}

@test "flow: sigreturn refuses forged shadow-stack tokens" {
	require_shstk
	run_helper shstk_flow sigforge
}

@test "flow: RSTORSSP pivot onto a mapped shadow stack and back; no token -> #CP" {
	require_shstk
	run_helper shstk_flow pivot
}

@test "flow: WRSS only when enabled (#UD otherwise) and only on shadow-stack memory" {
	require_shstk
	run_helper shstk_flow wrss
}

@test "flow: fork: the child has a working CoW copy, the parent is unaffected" {
	require_shstk
	run_helper shstk_flow fork
}

@test "flow: threads get their own shadow stacks, unmapped when they exit" {
	require_shstk
	run_helper shstk_flow threads
}

@test "flow: vfork child shares the parent's shadow stack and does not free it" {
	require_shstk
	run_helper shstk_flow vfork
}
