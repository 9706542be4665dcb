#!/usr/bin/env bats
# The 6.1 tree's own x86 and vm selftests (vm/kselftests.sh builds them into
# /opt/kselftest; vm/guest-kselftest.sh runs them). Only on the boots of
# `tests/run-all.sh kselftest` (kernel command line cetctl.kselftest=1), which boot
# our kernel and unpatched 6.1 with the same config and compare the results
# (vm/kselftest-compare.py): a test that passes on 6.1 and fails on ours fails the run.
# Here each result line is passed through to the console as "# KSFT ...".

load lib/common

@test "kselftest: the 6.1 x86 and vm selftests run to the end" {
	grep -qw 'cetctl.kselftest=1' /proc/cmdline ||
		skip "kselftest boots only (tests/run-all.sh kselftest)"
	[[ -d /opt/kselftest ]] || fail "/opt/kselftest missing: image built without --kselftest"
	# the selftests provoke these on purpose (signals, faults, bad sigreturn frames)
	expect_kernel_log 'segfault|general protection|bad frame|trap|control protection'
	local line done=0
	while IFS= read -r line; do
		printf '# %s\n' "$line" >&3
		[[ $line == KSFT-DONE ]] && done=1
	done < <(/usr/libexec/cetctl/kselftest.sh 2>&1)
	((done)) || fail "the selftest runner did not finish"
}
