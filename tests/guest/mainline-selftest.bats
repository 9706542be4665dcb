#!/usr/bin/env bats
# Mainline's own shadow-stack selftest (tools/testing/selftests/x86/test_shadow_stack.c
# of Debian's linux-source-6.12, compiled unmodified by vm/mainline-selftest.sh) on the
# kernel under test. An outside judge: it was written against mainline, not against us.
#
# The test stops at its first failing case. Its Userfaultfd case expects registration
# on a shadow stack to work, which mainline (since the refusal in vma_can_userfault())
# and our series refuse: as root that case must fail, for that reason and no other.
# Run a second time as an unprivileged user, userfaultfd is unavailable
# (vm.unprivileged_userfaultfd=0), the case skips itself, and every later case
# (guard gaps, ptrace, 32-bit, uretprobe) must pass.

load lib/common

SELFTEST=test_shadow_stack_612

setup_file() {
	expect_fault_lines
}

selftest_bin() {
	local b=$HELPERS/$SELFTEST
	[[ -x $b ]] || {
		fail "$b missing (vm/mainline-selftest.sh builds it)"
		return 1
	}
	echo "$b"
}

# ok_lines OUTPUT NAME...: every "[OK]<TAB>NAME" line is there
ok_lines() {
	local out=$1 n
	shift
	for n in "$@"; do
		grep -qxF "[OK]	$n" <<<"$out" || {
			fail "missing '[OK] $n'"
			return 1
		}
	done
}

@test "mainline selftest as root: all cases pass up to Userfaultfd, which fails because registration is refused" {
	require_shstk
	local bin slog
	bin=$(selftest_bin)
	slog=$BATS_TEST_TMPDIR/strace.log
	if command -v strace >/dev/null; then
		run strace -f -qq -e trace=ioctl -o "$slog" "$bin"
	else
		run "$bin"
	fi
	printf '%s\n' "$output"
	[[ $status -eq 1 ]] || fail "exit status $status, 1 expected (the Userfaultfd case fails)"
	ok_lines "$output" "Shadow stack pivot" "Shadow stack faults" "Shadow stack violation test" \
		"Shadow gup test" "mprotect() test"
	grep -qxF "[FAIL]	Userfaultfd test" <<<"$output" || fail "the Userfaultfd case did not fail"
	[[ $(grep -c '^\[FAIL\]' <<<"$output") -eq 1 ]] || fail "a case other than Userfaultfd failed"
	if [[ -f $slog ]]; then
		cat "$slog"
		grep -E 'UFFDIO_REGISTER|0xc020aa00' "$slog" | grep -q '= -1 EINVAL' ||
			fail "UFFDIO_REGISTER did not fail with EINVAL: the Userfaultfd case failed for another reason"
	else
		skip "strace missing: the reason of the Userfaultfd failure was not checked"
	fi
}

@test "mainline selftest without userfaultfd: every later case passes (guard gaps, ptrace, 32-bit)" {
	require_shstk
	local bin
	bin=$(selftest_bin)
	command -v setpriv >/dev/null || fail "setpriv missing in the guest image"
	if [[ -w /proc/sys/vm/unprivileged_userfaultfd ]]; then
		echo 0 >/proc/sys/vm/unprivileged_userfaultfd
	fi
	run setpriv --reuid=65534 --regid=65534 --clear-groups "$bin"
	printf '%s\n' "$output"
	[[ $status -eq 0 ]] || fail "exit status $status"
	grep -qxF "[SKIP]	Userfaultfd unavailable." <<<"$output" || fail "userfaultfd was available to nobody"
	ok_lines "$output" "Shadow stack pivot" "Shadow stack faults" "Shadow stack violation test" \
		"Shadow gup test" "mprotect() test" "Guard gap test, other mapping's gaps" \
		"Guard gap test, placement mapping's gaps" "Ptrace test" "32 bit test"
	grep -qE '^\[(OK|SKIP)\]	Uretprobe test' <<<"$output" || fail "no uretprobe result"
	! grep -q '^\[FAIL\]' <<<"$output" || fail "a case failed"
}
