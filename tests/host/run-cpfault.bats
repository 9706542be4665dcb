#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# The preload library's diagnosis of a control-protection fault
# (src/preload/cpfault.c, issue 31 part 4) on the host, which has no shadow
# stacks: the library built with CETCTL_PRELOAD_FAKE_SSP installs its handler
# (RDSSP reads a constant) and tools/cpfault-fake.c queues itself a SIGSEGV
# with si_code SEGV_CPERR at a `ret` whose return address it chose. What
# this covers: the handler's installation rules, the message's objects and
# symbols (from /proc/self/maps and the files), the evidence for generated
# code and a stack switch, the program's own handler running after the
# diagnosis (cpfault-chain.c), a SIGSEGV that is not a #CP dying as before. What it cannot: reading the real shadow
# stack (what it expected; a non-local jump) and a real #CP's repetition:
# tests/guest/run-diagnose.bats in the Bochs guest.

setup_file() {
	local top=$BATS_TEST_DIRNAME/../..
	export FAKE=$BATS_FILE_TMPDIR/fake-ssp.so CPF=$BATS_FILE_TMPDIR/cpfault-fake
	gcc -O2 -shared -fPIC -fcf-protection=full -DCETCTL_PRELOAD_FAKE_SSP -I"$top/src/lib" \
		-o "$FAKE" "$top/src/preload/preload.c" "$top/src/preload/cpfault.c" \
		"$top/src/preload/cpfault-chain.c" "$top/src/preload/ldso-unwind.c" -ldl
	gcc -O2 -fcf-protection=full -o "$CPF" "$top/tests/host/tools/cpfault-fake.c" -lpthread
}

setup() {
	load helpers
	require_cetctl
	LIB=$CETCTL_BUILD/libcetctl-preload.so
	ulimit -c 0
}

teardown() {
	[ -z "${TD:-}" ] || rm -rf "$TD"
}

# The message's lines, for one run: "$output" of `run`.
has() {
	grep -qF -- "$1" <<<"$output" || { echo "missing: $1"; echo "$output"; return 1; }
}

@test "cpfault: the message names the object and symbol of the fault and of the return address" {
	run env LD_PRELOAD="$FAKE" "$CPF" plain
	[ "$status" -eq 3 ]
	has "libcetctl-preload: control-protection fault (SIGSEGV, SEGV_CPERR) in process "
	[[ $output =~ "  at           0x"[0-9a-f]+" $CPF (fake_cp+0x"[0-9a-f]+")" ]]
	[[ $output =~ "  returning to 0x"[0-9a-f]+" $CPF (landing+0x0) (on the stack at 0x"[0-9a-f]+")" ]]
	# the host cannot read a shadow stack: it says so, it does not guess
	has "  expected     (the shadow stack could not be read)"
	has "  likely:      unknown: no evidence of a stack switch, a non-local jump or generated code"
	# one message, written once, before the program goes on (here: no real fault)
	[ "$(grep -c 'control-protection fault' <<<"$output")" -eq 1 ]
	[ "${lines[-1]}" = "landed dfl=1" ]	# and SIGSEGV is back at its default
}

@test "cpfault: evidence: generated code (anonymous executable mapping), a stack switch" {
	run env LD_PRELOAD="$FAKE" "$CPF" jit
	[ "$status" -eq 3 ]
	[[ $output =~ "  at           0x"[0-9a-f]+" (anonymous executable mapping)" ]]
	has "likely:      generated code (JIT): the faulting code is in an anonymous executable mapping"
	run env LD_PRELOAD="$FAKE" "$CPF" stack
	[ "$status" -eq 3 ]
	has "likely:      stack switch: the stack pointer 0x"
	has "is outside this thread's stack"
	# a thread on its own stack is no stack switch: its stack is found by its descriptor
	run env LD_PRELOAD="$FAKE" "$CPF" thread
	[ "$status" -eq 3 ]
	has "likely:      unknown:"
	local pid tid
	read -r pid tid < <(sed -nE 's/.* in process ([0-9]+), thread ([0-9]+):$/\1 \2/p' <<<"$output")
	[ -n "$pid" ] && [ "$pid" != "$tid" ]
}

@test "cpfault: a fork child keeps the handler and names itself" {
	run env LD_PRELOAD="$FAKE" "$CPF" fork
	[ "$status" -eq 0 ]
	local child
	child=$(sed -nE 's/^child ([0-9]+): exit 3$/\1/p' <<<"$output")
	[ -n "$child" ] || { echo "$output"; return 1; }
	has "in process $child, thread $child:"
}

@test "cpfault: the program's own handler (signal()) runs after the diagnosis" {
	# before cpfault-chain.c: the program's handler replaced ours, and the
	# output was "own handler" alone
	run env LD_PRELOAD="$FAKE" "$CPF" own-handler
	echo "$output"
	[ "$status" -eq 42 ]
	has "control-protection fault (SIGSEGV, SEGV_CPERR) in process"
	[ "${lines[-1]}" = "own handler" ]
	[ "$(grep -c 'control-protection fault' <<<"$output")" -eq 1 ]
}

# chained MODE STATUS FIRST LAST: cpfault-fake MODE exits STATUS, prints
# FIRST, the diagnosis, and LAST at the end
chained() {
	run env LD_PRELOAD="$FAKE" "$CPF" "$1"
	echo "$output"
	[ "$status" -eq "$2" ] && [ "${lines[0]}" = "$3" ] && [ "${lines[-1]}" = "$4" ] &&
		has "control-protection fault (SIGSEGV, SEGV_CPERR) in process"
}

@test "cpfault: sigaction(SA_SIGINFO|SA_RESETHAND): the program reads back its own, gets the fault's siginfo, then the default" {
	chained own-siginfo 42 "reads back own=1 siginfo=1" "own si_code=10 dfl=1"
}

@test "cpfault: the program's handler for a SIGSEGV sent by kill: nothing said; SIG_DFL again: the diagnosis as before" {
	run env LD_PRELOAD="$FAKE" "$CPF" own-kill
	[ "$status" -eq 42 ]
	[ "$output" = "own handler" ]
	chained own-dfl 3 "signal() gave back own=1" "landed dfl=1"
}

@test "cpfault: other SIGSEGVs die as before" {
	# sent by kill: sent again to the default action; a fault: repeated
	for m in kill null; do
		run env LD_PRELOAD="$FAKE" "$CPF" "$m"
		[ "$status" -eq 139 ] || { echo "$m: $status $output"; return 1; }
		[[ $output != *survived* && $output != *control-protection* ]]
	done
}

@test "cpfault: no handler without a shadow stack, or when SIGSEGV is not at its default" {
	# the real library on this host: RDSSP reads 0, nothing is installed
	[ -f "$LIB" ] || skip "preload library not built: $LIB"
	run env LD_PRELOAD="$LIB" "$CPF" plain
	[ "$status" -eq 139 ]
	[[ $output != *control-protection* ]]
	# an ignored SIGSEGV (inherited) is left alone
	run perl -e '$SIG{SEGV} = "IGNORE"; exec @ARGV' env LD_PRELOAD="$FAKE" "$CPF" plain
	[ "$status" -eq 3 ]
	[[ $output != *control-protection* ]]
	[ "$output" = "landed dfl=0" ]
}

@test "cpfault: through cetctl run, the program's status is its own" {
	TD=$(trusted_tmpdir) || skip "no directory cetctl trusts for a preload library"
	cp "$FAKE" "$TD/libcetctl-preload.so"
	CETCTL_PRELOAD=$TD/libcetctl-preload.so run "$CETCTL" run --trace-only "$CPF" plain
	[ "$status" -eq 3 ]
	has "(landing+0x0)"
	CETCTL_PRELOAD=$TD/libcetctl-preload.so run "$CETCTL" run --trace-only "$CPF" null
	[ "$status" -eq 139 ]
}
