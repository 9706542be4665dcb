#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# cetctl run --shstk and the compatibility verdict (issue 31, part 3): a
# known-incompatible program is refused before anything of it runs, with one
# line naming the object and the reason (125); --force-incompatible runs it;
# unknown and uncovered verdicts warn (not with -q). The refusal comes before
# the check of the CPU and kernel, so this host (no shadow stacks) reaches
# it; the warnings come after that check, so they are driven with the test
# build cetctl-faults and CETCTL_FAULT_GLIBC (pretends a glibc >= 2.39 on a
# system with shadow stacks; the start-up then fails its verification, 125).

load helpers

setup_file() {
	build_fixtures
}

setup() {
	require_cetctl
	[ -f "$FIXTURES/.stamp" ] || skip "fixtures not built"
	C=$FIXTURES/compat
	FAULTS=$CETCTL_BUILD/cetctl-faults
	TMP=$BATS_TEST_TMPDIR
	ulimit -c 0
	unset CETCTL_PRELOAD
}

@test "run --shstk: a known-incompatible program is refused before it runs (125, one line)" {
	run --separate-stderr "$CETCTL" run --shstk "$C/go-note" "$TMP/started"
	[ "$status" -eq 125 ]
	[ ! -e "$TMP/started" ]
	[ -z "$output" ]
	# shellcheck disable=SC2154  # stderr_lines: set by bats' run --separate-stderr
	[ "${#stderr_lines[@]}" -eq 1 ]
	# shellcheck disable=SC2154  # stderr: set by bats' run --separate-stderr
	[[ $stderr == "cetctl: run: refusing to run $C/go-note: incompatible: Go runtime: it switches goroutine stacks itself ($C/go-note: note Go/4); --force-incompatible runs it anyway; program not run" ]]
	# whichever mark it has; --wrss implies --shstk; the method does not matter
	for f in go-section-stripped go-symbol fcontext-app; do
		run --separate-stderr "$CETCTL" run --wrss --method=ptrace "$C/$f" "$TMP/started"
		[ "$status" -eq 125 ] || { echo "$f: $status $stderr"; return 1; }
		[[ $stderr == *"refusing to run $C/$f: incompatible: "* ]]
	done
	[ ! -e "$TMP/started" ]
}

@test "run --shstk: the program runs when nothing is forced (--trace-only, plain exec)" {
	run "$CETCTL" run --trace-only "$C/go-note" "$TMP/traced"
	[ "$status" -eq 0 ]
	[ -e "$TMP/traced" ]
	run "$CETCTL" run "$C/go-note" "$TMP/plain"
	[ "$status" -eq 0 ]
	[ -e "$TMP/plain" ]
}

@test "run --shstk: a real Go program is refused (prometheus-node-exporter)" {
	local go=/usr/bin/prometheus-node-exporter
	[ -x "$go" ] || skip "$go not installed (Debian package prometheus-node-exporter)"
	run --separate-stderr "$CETCTL" run --shstk -q "$go" --version
	[ "$status" -eq 125 ]
	[[ $stderr == *"refusing to run $go: incompatible: Go runtime"* ]]
	[[ $stderr == *"--force-incompatible"* ]]
	[ -z "$output" ]
}

@test "run --shstk: a script is judged by its interpreter" {
	printf '#!%s\n' "$C/go-note" >"$TMP/script"
	chmod +x "$TMP/script"
	run --separate-stderr "$CETCTL" run --shstk "$TMP/script"
	[ "$status" -eq 125 ]
	[[ $stderr == *"refusing to run $TMP/script (a script run by $C/go-note): incompatible:"* ]]
	printf '#!/bin/sh\nexit 0\n' >"$TMP/sh-script"
	chmod +x "$TMP/sh-script"
	run --separate-stderr "$CETCTL" run --shstk "$TMP/sh-script"
	[[ $stderr != *"refusing"* ]]
}

@test "run --shstk --force-incompatible: the verdict lets it through" {
	run --separate-stderr "$CETCTL" run --shstk --force-incompatible "$C/go-note" "$TMP/started"
	[[ $stderr != *"refusing"* ]]
	if ! grep -qw user_shstk /proc/cpuinfo; then
		# then this host refuses it for its own reason
		[ "$status" -eq 125 ]
		[[ $stderr == *"cannot do shadow stacks"* ]]
	fi
	[ -x "$FAULTS" ] || skip "test build cetctl-faults not built"
	# past the host's check: the warning, then the start-up (which fails here)
	CETCTL_FAULT_GLIBC=1 run --separate-stderr "$FAULTS" run --shstk --force-incompatible \
		"$C/go-note" "$TMP/started"
	[[ $stderr == *"warning: $C/go-note: incompatible: Go runtime: it switches goroutine stacks itself ($C/go-note: note Go/4); running it all the same (--force-incompatible)"* ]]
	CETCTL_FAULT_GLIBC=1 run --separate-stderr "$FAULTS" run --shstk -q --force-incompatible \
		"$C/go-note" "$TMP/started"
	[[ $stderr != *"warning"* ]]
}

@test "run --shstk: unknown and uncovered warn (not with -q); forced-safe and covered say nothing" {
	[ -x "$FAULTS" ] || skip "test build cetctl-faults not built"
	CETCTL_FAULT_GLIBC=1 run --separate-stderr "$FAULTS" run --shstk "$C/pcre2-app"
	[[ $stderr == *"warning: $C/pcre2-app: unknown: JIT (PCRE2): not known to be safe ($C/pcre2-app: pcre2_jit_compile_8); it may die of a control-protection fault"* ]]
	CETCTL_FAULT_GLIBC=1 run --separate-stderr "$FAULTS" run --shstk -q "$C/pcre2-app"
	[[ $stderr != *"warning"* ]]
	local f
	for f in plain longjmp ucontext; do
		CETCTL_FAULT_GLIBC=1 run --separate-stderr "$FAULTS" run --shstk "$C/$f"
		[[ $stderr != *"control-protection"* ]] || { echo "$f: $stderr"; return 1; }
		[[ $stderr != *"refusing"* ]]
	done
	if [ -f "$C/longjmp-static" ]; then
		CETCTL_FAULT_GLIBC=1 run --separate-stderr "$FAULTS" run --shstk "$C/longjmp-static"
		[[ $stderr == *"warning: $C/longjmp-static: switches stacks, not covered: longjmp"*"a static program gets no preload library); it may die of a control-protection fault"* ]]
	fi
}

@test "run --shstk: not found and not executable still come first (127, 126)" {
	run -127 "$CETCTL" run --shstk "$TMP/nonexistent"
	cp "$C/go-note" "$TMP/noexec"
	chmod -x "$TMP/noexec"
	run -126 "$CETCTL" run --shstk "$TMP/noexec"
}
