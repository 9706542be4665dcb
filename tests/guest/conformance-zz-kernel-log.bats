#!/usr/bin/env bats
# Kernel conformance, last: after all the suites above, the kernel log has no warning,
# BUG or oops (the provoked user faults — "control protection", "segfault" — are not
# kernel problems; vm/parse-results.sh judges those against CETCTL-EXPECT lines).

load lib/common

@test "kernel log: no WARN, BUG, Oops or corruption report after the conformance suites" {
	in_guest || skip "on the host the kernel log is not the kernel under test's"
	run dmesg
	[[ $status == 0 ]] || fail "dmesg failed: $output"
	local bad
	bad=$(grep -E 'WARNING: CPU|WARNING: at |BUG: |kernel BUG at|Oops|Kernel panic|general protection fault(,|:) |list_(add|del) corruption|UBSAN:|bad page state|Bad rss-counter' <<<"$output" || true)
	[[ -z $bad ]] || fail "kernel problems in dmesg:" "$bad"
}
