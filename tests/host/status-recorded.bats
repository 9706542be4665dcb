#!/usr/bin/env bats
# cetctl status/audit/info against a REAL recording from an emulated-CET guest:
# tests/host/fixtures/proc/bochs-ref612 (mainline 6.12 in Bochs 2.7 tigerlake,
# processes started with `cetctl run`; recorded by tests/guest/zz-record-proc.bats,
# extracted by tests/host/fixtures/extract-guest-recording.sh). Nothing edited.

setup_file() {
	export CETCTL="${CETCTL:-$BATS_TEST_DIRNAME/../../build/cetctl}"
	export TREE="$BATS_TEST_DIRNAME/fixtures/proc/bochs-ref612"
}

setup() {
	[ -x "$CETCTL" ] || skip "cetctl not built at $CETCTL"
	[ -f "$TREE/roles" ] || skip "no guest recording in $TREE"
}

# cetctl against the recording; its "reading TREE instead of /proc" note on
# stderr is checked in proc-root.bats, not here
ctree() {
	local rc=0
	"$CETCTL" --proc-root "$TREE" "$@" 2>"$BATS_FILE_TMPDIR/ctree.err" || rc=$?
	grep -v ' instead of /proc (' "$BATS_FILE_TMPDIR/ctree.err" >&2
	return $rc
}

role() {
	awk -v r="$1" '$1 == r { print $2 }' "$TREE/roles"
}

st() {	# st ROLE COLUMNS: one raw line of cetctl status for the process
	ctree status -n --raw -o "$2" "$(role "$1")"
}

@test "recorded guest: info says the system can do shadow stacks (exit 0)" {
	run ctree info -n --raw -o NAME,VALUE
	[ "$status" -eq 0 ]
	[[ "$output" == *"cpu-user-shstk yes"* ]]
	[[ "$output" == *"status-lines yes"* ]]
	[[ "$output" == *"supported yes"* ]]
}

@test "recorded guest: run --shstk is enabled and locked with one 8 MiB-or-smaller ss VMA" {
	run st single SHSTK,SHSTK-LOCKED,SS-VMAS
	[ "$status" -eq 0 ]
	[[ "$output" == "yes yes "* ]]
	run ctree audit -n --raw -o SS-VMAS,SS-SIZE --pid "$(role single)"
	[ "$(echo "$output" | awk '{ print $1 }')" -eq 1 ]
	[ "$(echo "$output" | awk '{ print $2 }')" -gt 0 ]
	run ctree status -n -o VERDICT "$(role single)"
	[ "$output" = "enabled and locked" ]
}

@test "recorded guest: four threads, each enabled and locked, each with its own ss VMA" {
	run ctree status -n --raw -o TID,SHSTK,SHSTK-LOCKED "$(role threads)"
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | grep -c 'yes yes$')" -eq 5 ]	# process line + 4 threads
	run ctree audit -n --raw -o SS-VMAS,DIFFER --pid "$(role threads)"
	[ "$output" = "4 0" ]
}

@test "recorded guest: wrss" {
	run st wrss WRSS
	[ "$output" = yes ]
	run ctree status -n -o VERDICT "$(role wrss)"
	[[ "$output" == *"WRSS on"* ]]
}

@test "recorded guest: --no-lock is enabled, not locked" {
	run ctree status -n -o VERDICT "$(role unlocked)"
	[ "$output" = "enabled, not locked: the process can turn it off" ]
}

@test "recorded guest: a thread that disabled its shadow stack makes the process mixed" {
	run ctree status -n -o VERDICT "$(role mixed)"
	[ "$output" = "mixed: 2 of 3 threads run with a shadow stack" ]
	run ctree audit -n --raw -o DIFFER --pid "$(role mixed)"
	[ "$output" = 1 ]
}

@test "recorded guest: a plain process has the lines, empty, and is not enabled" {
	run st plain FEATURES,LOCKED,SHSTK
	[ "$output" = "  no" ]
	run ctree status -n -o VERDICT "$(role plain)"
	[[ "$output" == "not enabled"* ]]
}

@test "recorded guest: audit --require shstk,locked names exactly the unprotected and unlocked" {
	run ctree audit -n --raw -o PID --require shstk,locked
	[ "$status" -eq 1 ]
	got=$(echo "$output" | grep -v 'do not meet' | sort -n | tr '\n' ' ')
	want=$(for r in unlocked mixed plain; do role $r; done | sort -n | tr '\n' ' ')
	[ "$got" = "$want" ]
}
