#!/usr/bin/env bats
# Host tests of vm/demo.sh's option handling and of vm/demo-check.py, the judge of what the
# guest demo shows. demo-bochs.txt and demo-qemu.txt are real transcripts (Bochs with
# emulated CET, QEMU without) saved from `bash vm/demo.sh`; every check must be able to
# fail, so each test below breaks one claim in a copy and expects that check to fail.
# Run: bats vm/selftest/demo.bats

# shellcheck disable=SC2154  # stderr, stderr_lines: set by bats' run --separate-stderr
bats_require_minimum_version 1.5.0

D="$BATS_TEST_DIRNAME/.."
CHECK="$D/demo-check.py"
GOOD_BOCHS="$BATS_TEST_DIRNAME/demo-bochs.txt"
GOOD_QEMU="$BATS_TEST_DIRNAME/demo-qemu.txt"

# broken SED-SCRIPT [FILE]: a copy of the Bochs (or FILE) transcript edited by sed -E
broken() {
	sed -E "$1" "${2:-$GOOD_BOCHS}" > "$BATS_TEST_TMPDIR/t"
	cmp -s "$BATS_TEST_TMPDIR/t" "${2:-$GOOD_BOCHS}" && { echo "sed changed nothing: $1" >&2; return 1; }
	echo "$BATS_TEST_TMPDIR/t"
}
# fails_with MODE FILE TEXT: demo-check exits 1 and a FAILED line contains TEXT
fails_with() {
	run python3 "$CHECK" "$1" "$2"
	echo "$output"
	[ "$status" -eq 1 ]
	grep 'FAILED: ' <<<"$output" | grep -qF -- "$3"
}

@test "demo.sh --help describes the default and --qemu-only" {
	run bash "$D/demo.sh" --help
	[ "$status" -eq 0 ]
	[[ $output == *"--qemu-only"* && $output == *Bochs* ]]
}

@test "demo.sh: an unknown option is refused before anything is built" {
	run bash "$D/demo.sh" --bogus
	[ "$status" -eq 1 ]
	[[ $output == *"unknown option '--bogus'"* ]]
	[[ $output != *"==>"* ]]
}

@test "demo.sh: --qemu-only and --bochs exclude each other" {
	run bash "$D/demo.sh" --qemu-only --bochs
	[ "$status" -eq 1 ]
	[[ $output == *"exclude each other"* ]]
}

@test "demo-check: usage errors exit 2" {
	run python3 "$CHECK" bochs
	[ "$status" -eq 2 ]
	run python3 "$CHECK" arm "$GOOD_BOCHS"
	[ "$status" -eq 2 ]
	run python3 "$CHECK" bochs "$BATS_TEST_TMPDIR/missing"
	[ "$status" -eq 2 ]
}

@test "demo-check: the real Bochs transcript passes every check" {
	run python3 "$CHECK" bochs "$GOOD_BOCHS"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output != *FAILED* ]]
	[ "$(grep -c ': ok: ' <<<"$output")" -ge 20 ]
}

@test "demo-check: the real QEMU transcript passes, and is not taken for the Bochs demo" {
	run python3 "$CHECK" qemu "$GOOD_QEMU"
	[ "$status" -eq 0 ]
	run python3 "$CHECK" bochs "$GOOD_QEMU"
	[ "$status" -eq 1 ]
	[[ $output == *"FAILED: info: supported yes"* ]]
}

@test "demo-check: an empty transcript (guest died early) fails" {
	: > "$BATS_TEST_TMPDIR/empty"
	fails_with bochs "$BATS_TEST_TMPDIR/empty" "info: supported yes"
	fails_with qemu "$BATS_TEST_TMPDIR/empty" "the demo ran to its end"
}

@test "demo-check: the ROP not dying with SEGV_CPERR fails" {
	t=$(broken 's/^SEGV si_code=10$/SEGV si_code=1/')
	fails_with bochs "$t" "SEGV_CPERR"
	t=$(broken '/^SEGV si_code=10$/d')
	fails_with bochs "$t" "SEGV_CPERR"
}

@test "demo-check: the ROP reaching its gadget under cetctl run fails" {
	# what an unprotected run prints, in the protected run's place
	t=$(broken '/^\$ cetctl run --shstk -q -- run_probe rop$/,/^\[exit/{s/^SEGV si_code=10$/ROP reached the gadget: no shadow stack/;s/^\[exit 42\]/[exit 3]/}')
	fails_with bochs "$t" "the handler's exit 42"
}

@test "demo-check: the unhandled ROP not killed by SIGSEGV fails" {
	t=$(broken 's/^\[exit 139\]$/[exit 0]/')
	fails_with bochs "$t" "killed by SIGSEGV"
	t=$(broken '/control protection ip:/d')
	fails_with bochs "$t" "the kernel logged the control-protection fault"
}

@test "demo-check: a program not locked fails" {
	t=$(broken 's/^(x86_Thread_features_locked:\t).*/\1/')
	fails_with bochs "$t" "run --shstk: ... and locked"
	t=$(broken 's/^(x86_Thread_features:\t).*/\1/')
	fails_with bochs "$t" "grep's own status has shstk enabled"
}

@test "demo-check: status or audit not showing the protected process locked fails" {
	t=$(broken 's/enabled and locked$/enabled, not locked: the process can turn it off/')
	fails_with bochs "$t" "enabled and locked"
}

@test "demo-check: audit --require passing, or naming the protected process, fails" {
	t=$(broken '/^\$ cetctl audit --require/,/^\[exit/s/^\[exit 1\]$/[exit 0]/')
	fails_with bochs "$t" "audit --require shstk,locked: exit 1"
	prot=$(sed -n 's/^# protected: PID \([0-9]*\) .*/\1/p' "$GOOD_BOCHS")
	[ -n "$prot" ]
	line=$(grep -m1 "^ *$prot .*enabled and locked" "$GOOD_BOCHS")
	t=$(broken "/^\\\$ cetctl audit --require/a\\
$line")
	fails_with bochs "$t" "does not list PID $prot"
}

@test "demo-check: info not supported, map --pivot failing, elf not marked fail" {
	t=$(broken 's/^supported +yes/supported        no /')
	fails_with bochs "$t" "info: supported yes"
	t=$(broken '/^\$ cetctl map --pivot$/,/^\[exit/s/^\[exit 0\]$/[exit 1]/')
	fails_with bochs "$t" "map --pivot: exit 0"
	t=$(broken 's/^(shstk_elf_marked +x86-64 +static +no +)yes/\1no /')
	fails_with bochs "$t" "shstk_elf_marked is marked SHSTK"
}

@test "demo-check: QEMU launching although there is no CET fails" {
	t=$(broken 's/^\[exit 125\]$/[exit 0]/' "$GOOD_QEMU")
	fails_with qemu "$t" "run --shstk refuses"
}

# console TRANSCRIPT [END]: a guest console log around TRANSCRIPT as the serial line
# brings it (CR LF, kernel lines in between, the markers; no CETCTL-DEMO-END with END=no)
console() {
	{
		printf '%s\n' '[    0.000000] Linux version 6.1.192-cetctl' 'CETCTL-GUEST-START tier=bochs up=1.0' \
			'CETCTL-DEMO-BEGIN'
		sed '4a [   12.345678] random: crng init done' "$1"
		[ "${2:-yes}" = no ] || echo 'CETCTL-DEMO-END'
		echo 'CETCTL-GUEST-DONE rc=0 up=9.0'
	} | sed 's/$/\r/' > "$BATS_TEST_TMPDIR/console"
	echo "$BATS_TEST_TMPDIR/console"
}

@test "demo-check show: the transcript out of a console log, saved, shown and judged" {
	run --separate-stderr python3 "$CHECK" show bochs "$(console "$GOOD_BOCHS")" "$BATS_TEST_TMPDIR/saved"
	echo "$stderr"
	[ "$status" -eq 0 ]
	# no CR, no marker, no kernel line: the transcript as the guest printed it
	cmp "$BATS_TEST_TMPDIR/saved" "$GOOD_BOCHS"
	[ "$output" = "$(cat "$GOOD_BOCHS")" ]
	n=$(python3 "$CHECK" bochs "$GOOD_BOCHS" | grep -c ': ok: ')
	[ "${stderr_lines[-1]}" = "demo: bochs: all $n checks of what the demo shows passed (vm/demo-check.py)" ]
	[[ $stderr != *FAILED* ]]
}

@test "demo-check show: a console log without CETCTL-DEMO-END fails and saves nothing" {
	run --separate-stderr python3 "$CHECK" show qemu "$(console "$GOOD_QEMU" no)" "$BATS_TEST_TMPDIR/saved"
	[ "$status" -eq 1 ]
	[[ $stderr == "demo: the guest did not finish the demo; console log: "*console ]]
	[ ! -e "$BATS_TEST_TMPDIR/saved" ]
	run python3 "$CHECK" show qemu "$BATS_TEST_TMPDIR/missing" "$BATS_TEST_TMPDIR/saved"
	[ "$status" -eq 1 ]
	[[ $output == *"did not finish the demo"* ]]
}

@test "demo-check show: a claim that does not hold fails, named on stderr" {
	t=$(broken 's/^\[exit 125\]$/[exit 0]/' "$GOOD_QEMU")
	run --separate-stderr python3 "$CHECK" show qemu "$(console "$t")" "$BATS_TEST_TMPDIR/saved"
	echo "$stderr"
	[ "$status" -eq 1 ]
	cmp "$BATS_TEST_TMPDIR/saved" "$t"
	[ "${stderr_lines[0]}" = "demo-check: FAILED: run --shstk refuses without CET (exit 125)" ]
	[ "${stderr_lines[-1]}" = "demo: qemu: the guest did NOT show what the demo claims (transcript $BATS_TEST_TMPDIR/saved)" ]
	[[ $stderr != *": ok: "* ]]
}

@test "demo-check show: a transcript that cannot be saved fails" {
	run --separate-stderr python3 "$CHECK" show qemu "$(console "$GOOD_QEMU")" "$BATS_TEST_TMPDIR/no/such/dir/saved"
	[ "$status" -eq 1 ]
	[[ $stderr == *"cannot write"* ]]
	[ "$output" = "$(cat "$GOOD_QEMU")" ]
}
