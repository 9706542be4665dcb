#!/usr/bin/env bats
# The boot parameter nousershstk (as mainline; added by "x86/cpufeatures: Enable CET
# CR4 bit for shadow stack"): on a CPU with shadow stacks, user shadow stacks stay off.
# Only on the Bochs tier's second, short boot with that parameter (tests/run-all.sh
# bochs); every other boot skips this suite.

load lib/common

@test "nousershstk: no user_shstk in cpuinfo, the interface says EOPNOTSUPP" {
	grep -qw nousershstk /proc/cmdline || skip "only on the boot with nousershstk"
	require_kernel_support
	grep -qw shstk /proc/cpuinfo || fail "the CPU does not even have shstk: nothing to switch off here"
	! have_shstk_hw || fail "user_shstk still listed in /proc/cpuinfo"
	run_helper shstk_api nohw
}
