#!/usr/bin/env bats
# Kernel conformance: regression tests for the bugs a review against mainline found in
# the series (issue 11). Helper: shstk_hazard (tests/guest/helpers/shstk_hazard.c).
# Each was seen failing on the series before its fix (an oops, a hang, a #CP or a
# wrong placement); the kernel-log check of the run catches an oops or BUG even where
# the helper itself could not report it.

load lib/common

setup_file() {
	expect_fault_lines
}

@test "hazard: PTRACE_GETREGSET/SETREGSET with every note type and size (type 0 oopsed)" {
	require_kernel_support
	run_helper shstk_hazard regset
}

@test "hazard: a signal frame that cannot be written leaves SSP alone" {
	require_shstk
	run_helper shstk_hazard sigframe-fail
}

@test "hazard: rt_sigreturn with an unreadable token under mmap_lock contention never hangs" {
	require_shstk
	run_helper shstk_hazard sigreturn-lock "${SHSTK_SIGRETURN_ATTEMPTS:-50}"
}

@test "hazard: a new shadow stack keeps its guard gap free when placed" {
	require_shstk
	run_helper shstk_hazard placement
}

@test "hazard: mprotect of a shadow-stack huge page (BUG_ON in change_huge_pmd)" {
	require_shstk
	run_helper shstk_hazard thp-mprotect
}

@test "hazard: mlock/mlockall do not fault in a shadow stack (mlock: ENOMEM, as mainline)" {
	require_shstk
	run_helper shstk_hazard mlock
}

# Issue 22: bugs the series shared with mainline 6.12. Each shows as a WARN in the
# kernel log; the helper watches /dev/kmsg itself, so the failure names its test.
@test "hazard: core dump of a shadow-stack process with an io_uring worker (WARN in ssp_get)" {
	require_shstk
	run_helper shstk_hazard iouring-core
}

@test "hazard: a thread exit whose shadow-stack munmap fails with ENOMEM does not WARN" {
	require_shstk
	run_helper shstk_hazard munmap-enomem
}

@test "hazard: clone() failing in copy_thread() leaks no shadow stack" {
	require_shstk
	run_helper shstk_hazard clone-fail
}
