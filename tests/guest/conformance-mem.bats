#!/usr/bin/env bats
# Kernel conformance: shadow-stack memory. Helper: shstk_mem (tests/guest/helpers/shstk_mem.c).

load lib/common

setup_file() {
	expect_fault_lines
}

@test "mem: no hardware: map_shadow_stack fails with EOPNOTSUPP" {
	require_no_shstk_hw
	run_helper shstk_mem map-nohw
}

@test "mem: map_shadow_stack: token, no token, rounding, fixed address, EEXIST, errnos" {
	require_shstk
	run_helper shstk_mem map
}

@test "mem: smaps VmFlags 'ss' exactly on shadow-stack VMAs" {
	require_shstk
	run_helper shstk_mem smaps
}

@test "mem: normal stores to shadow-stack memory fault (user SEGV_ACCERR, kernel EFAULT)" {
	require_shstk
	run_helper shstk_mem store
}

@test "mem: GUP: /proc/self/mem (FOLL_FORCE) reads and writes, process_vm_writev EFAULT, CoW" {
	require_shstk
	run_helper shstk_mem gup
}

@test "mem: ptrace PEEKDATA/POKEDATA on a tracee's shadow stack" {
	require_shstk
	run_helper shstk_mem peekpoke
}

@test "mem: mprotect PROT_READ blocks WRSS, PROT_WRITE restores it, never normal stores" {
	require_shstk
	run_helper shstk_mem mprotect
}

@test "mem: MADV_DONTNEED zaps, the re-fault is a shadow-stack page again" {
	require_shstk
	run_helper shstk_mem madvise
}

@test "mem: userfaultfd on a shadow stack behaves as the kernel promises" {
	require_shstk
	local want
	want=$(uffd_expectation)
	echo "expected behaviour: $want (kernel $(uname -r); override with SHSTK_UFFD_EXPECT)"
	run_helper shstk_mem uffd "$want"
}

@test "mem: guard gap: nothing is placed in the page below a shadow stack" {
	require_shstk
	run_helper shstk_mem guard
}
