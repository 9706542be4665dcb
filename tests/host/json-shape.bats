#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# The shape of -J output (issue 13, "JSON you can build on"): lists are
# arrays, not strings packed with separators; the loader's reason is apart
# from its verdict; deps are complete; no "-"/"?" placeholders; empty lists
# are []; threads nest the same way whatever -o selects; errors are objects
# naming the file or pid. json-schema.bats checks the types against the
# schemas, this file checks the values a consumer relies on.

load helpers

setup_file() {
	build_fixtures
}

setup() {
	require_cetctl
	command -v jq >/dev/null || skip "jq not installed"
	PROCFIX=$HOST_TESTS/fixtures/proc
	EMU=$PROCFIX/cet-emulated
	F=$FIXTURES
	TMP=$(mktemp -d "${BATS_TMPDIR:-/tmp}/cetctl-shape.XXXXXX")
	# shellcheck disable=SC2034  # bg: read by cleanup_test in teardown
	bg=()
}

teardown() {
	cleanup_test
}

all_columns() {	# all_columns CMD -> every column, comma separated
	"$CETCTL" "$1" --list-columns -J | jq -r '[.columns[].name] | join(",")'
}

# no_placeholders FILE: no string value anywhere is "-" or "?"
no_placeholders() {
	run jq -r '[.. | strings | select(. == "-" or . == "?")] | length' "$1"
	[ "$status" -eq 0 ]
	[ "$output" = 0 ] || { echo "placeholders in $1:"; head -c 2000 "$1"; return 1; }
}

@test "shape: elf -J, ISA levels, LAM and FEATURE_2 bits are arrays" {
	"$CETCTL" elf -J -o FILE,LAM,ISA_NEEDED,ISA_USED,FEATURE_2_USED "$F/hello-marked" \
		"$F/made/note-lam" >"$TMP/o.json"
	run jq -r '.files[0].isa_needed | type' "$TMP/o.json"
	[ "$output" = array ]
	run jq -r '.files[0].isa_needed[0]' "$TMP/o.json"
	[[ $output == x86-64-* ]]
	run jq -c '.files[1].lam' "$TMP/o.json"
	[[ $output == '["u48"'* || $output == '["u57"]' ]]
	# a property that is absent is null, a marking without LAM bits is []
	run jq -c '.files[0].lam' "$TMP/o.json"
	[ "$output" = '[]' ]
	no_placeholders "$TMP/o.json"
}

@test "shape: elf -J, the loader's verdict and its reason are apart" {
	"$CETCTL" elf -J -o FILE,LOADER "$F/made/note-align4" "$F/made/note-unordered" \
		"$F/hello-marked" "$F/hello-plain" >"$TMP/o.json"
	run jq -c '.files[0].loader' "$TMP/o.json"
	[ "$output" = '{"status":"ignored","features":[],"reason":"alignment not 8"}' ]
	run jq -r '.files[1].loader.status + "|" + .files[1].loader.reason' "$TMP/o.json"
	[ "$output" = "ignored|properties not in ascending order" ]
	run jq -c '.files[2].loader' "$TMP/o.json"
	[ "$output" = '{"status":"used","features":["ibt","shstk"],"reason":null}' ]
	run jq -c '.files[3].loader' "$TMP/o.json"
	[ "$output" = '{"status":"used","features":[],"reason":null}' ]
	# the table keeps its one-cell form
	run --separate-stderr "$CETCTL" elf -n -o LOADER "$F/made/note-align4"
	[ "$output" = "ignored: alignment not 8" ]
}

@test "shape: elf -J --deps, every object that breaks the closure is named" {
	local prog n
	# a Debian program (unmarked) with more dependencies than the table names
	for prog in /usr/bin/python3 /usr/bin/ssh /usr/bin/curl /usr/bin/gpg /usr/bin/git; do
		[ -x "$prog" ] || continue
		n=$("$CETCTL" elf -J --deps -o NDEPS "$prog" 2>/dev/null | jq '.files[0].ndeps')
		[ "${n:-0}" -gt 6 ] && break
		prog=
	done
	[ -n "$prog" ] || skip "no program with more than 6 dependencies here"
	"$CETCTL" elf -J --deps -o FILE,DEPS,DEPS_IBT,NDEPS,MISSING "$prog" >"$TMP/o.json"
	run jq -r '.files[0].deps.verdict' "$TMP/o.json"
	[ "$output" = no ]
	# Debian's objects are unmarked: all of them break it, all are named
	run jq -r '(.files[0].deps.objects | length) == .files[0].ndeps' "$TMP/o.json"
	[ "$output" = true ]
	run jq -r '.files[0].deps_ibt.objects[0]' "$TMP/o.json"
	[ "$output" = "$prog" ]
	run jq -c '.files[0].missing' "$TMP/o.json"
	[ "$output" = '[]' ]
	run grep -c 'more' "$TMP/o.json"
	[ "$output" = 0 ]
	# a closure that is whole
	"$CETCTL" elf -J --deps -o DEPS "$F/made/interp-marked" >"$TMP/o2.json"
	run jq -c '.files[0].deps' "$TMP/o2.json"
	[ "$output" = '{"verdict":"ok","objects":[],"reason":null}' ]
}

@test "shape: elf -J, a failing file is an error object naming it" {
	"$CETCTL" elf -J "$F/hello-marked" /nonexistent "$F/made/trunc-phdr" >"$TMP/o.json" 2>/dev/null || true
	run jq -c '.errors[0]' "$TMP/o.json"
	[ "$output" = '{"file":"/nonexistent","error":"No such file or directory","errno":"ENOENT"}' ]
	run jq -r '.errors[1].file + "|" + (.errors[1].errno | tostring)' "$TMP/o.json"
	[ "$output" = "$F/made/trunc-phdr|null" ]
	run jq -r '.errors[1].error' "$TMP/o.json"
	[[ $output == *"corrupt ELF file"* ]]
	run jq -r '.files | length' "$TMP/o.json"
	[ "$output" = 1 ]
	# no error: an empty list
	"$CETCTL" elf -J "$F/hello-marked" >"$TMP/o.json"
	run jq -c '.errors' "$TMP/o.json"
	[ "$output" = '[]' ]
}

@test "shape: elf -J, every column: no - or ? placeholders" {
	"$CETCTL" elf -J --deps -o "$(all_columns elf)" "$F"/hello-* "$F"/start* "$F"/obj-*.o \
		"$F"/made/note-* "$F"/made/core "$F"/made/vmlinux-like >"$TMP/o.json" 2>/dev/null || true
	no_placeholders "$TMP/o.json"
	run jq -r '.files | length' "$TMP/o.json"
	[ "$output" -gt 20 ]
}

@test "shape: status -J, feature words and markings are arrays" {
	"$CETCTL" --proc-root "$EMU" status -J -o PID,FEATURES,LOCKED,MARKING,UNMARKED 4001 3114 >"$TMP/o.json"
	run jq -c '.processes[0].features' "$TMP/o.json"
	[ "$output" = '["shstk","wrss"]' ]
	run jq -c '.processes[1].locked' "$TMP/o.json"
	[ "$output" = '["shstk"]' ]
	run jq -c '.processes[1].marking' "$TMP/o.json"
	[ "$output" = '[]' ]
	run jq -r '.processes[1].unmarked[0]' "$TMP/o.json"
	[ "$output" = /usr/bin/sleep ]
	no_placeholders "$TMP/o.json"
}

@test "shape: status -J, shadow-stack mappings are objects with numbers" {
	"$CETCTL" --proc-root "$EMU" status -J -o PID,SS-VMAS,SS-SIZE 3115 >"$TMP/o.json"
	run jq -c '.processes[0]."ss-vmas"[0]' "$TMP/o.json"
	[ "$output" = '{"start":"0x7fb68dfb4000","end":"0x7fb68e7b4000","size":8192,"rss":4}' ]
	run jq -r '([.processes[0]."ss-vmas"[].size] | add) == .processes[0]."ss-size"' "$TMP/o.json"
	[ "$output" = true ]
}

@test "shape: status -J, threads nest under their process (tasks) whatever -o selects" {
	local o
	for o in PID,FEATURES PID,COMM,FEATURES FEATURES PID,TID,FEATURES,SS-VMAS "$(all_columns status)"; do
		"$CETCTL" --proc-root "$EMU" status -J -o "$o" 3115 3114 >"$TMP/o.json"
		# one object per process, its threads below it, each with its tid
		run jq -r '.processes | length' "$TMP/o.json"
		[ "$output" = 2 ] || { echo "-o $o"; cat "$TMP/o.json"; return 1; }
		run jq -c '[.processes[0].tasks[].tid]' "$TMP/o.json"
		[ "$output" = '[3115,3119,3120]' ] || { echo "-o $o: $output"; return 1; }
		# a feature line with no word is [] (null: no line at all)
		run jq -c '.processes[0].tasks[2].features' "$TMP/o.json"
		[ "$output" = '[]' ]
		run jq -c '.processes[0].tasks[0].features' "$TMP/o.json"
		[ "$output" = '["shstk"]' ]
		# thread objects carry only what a thread has
		run jq -r '[.processes[0].tasks[] | keys[] | select(. == "ss-vmas" or . == "unmarked" or . == "marking" or . == "pid")] | length' "$TMP/o.json"
		[ "$output" = 0 ]
		run jq -r 'has("children")' <(jq '.processes[0]' "$TMP/o.json")
		[ "$output" = false ]
		# a single-threaded process has its one thread listed too
		run jq -c '[.processes[1].tasks[].tid]' "$TMP/o.json"
		[ "$output" = '[3114]' ]
	done
}

@test "shape: status -J, a failing pid is an error object" {
	"$CETCTL" --proc-root "$EMU" status -J 3114 999999 2 >"$TMP/o.json" 2>/dev/null || true
	run jq -c '[.errors[].pid]' "$TMP/o.json"
	[ "$output" = '[999999,2]' ]
	run jq -r '.errors[0].errno' "$TMP/o.json"
	[ "$output" = ENOENT ] || [ "$output" = ESRCH ]
	run jq -r '.errors[1].error' "$TMP/o.json"
	[[ $output == *"kernel thread"* ]]
	run jq -r '.processes | length' "$TMP/o.json"
	[ "$output" = 1 ]
}

@test "shape: audit -J, feature words arrays, errors as objects, no placeholders" {
	"$CETCTL" --proc-root "$EMU" audit -J -o "$(all_columns audit)" >"$TMP/o.json"
	run jq -c '.processes[] | select(.pid == 4001) | .features' "$TMP/o.json"
	[ "$output" = '["shstk","wrss"]' ]
	# a line without words is [], no line at all (a kernel without the
	# interface) is null
	run jq -c '.processes[] | select(.pid == 3116) | .features' "$TMP/o.json"
	[ "$output" = '[]' ]
	run jq -c '.processes[] | select(.pid == 3114) | .features' \
		<("$CETCTL" --proc-root "$PROCFIX/host-nocet" audit -J -o PID,FEATURES)
	[ "$output" = null ]
	run jq -c '.errors' "$TMP/o.json"
	[ "$output" = '[]' ]
	no_placeholders "$TMP/o.json"
	"$CETCTL" --proc-root "$EMU" audit -J --pid 3114,999999,2 >"$TMP/o.json" 2>/dev/null || true
	run jq -c '[.errors[].pid]' "$TMP/o.json"
	[ "$output" = '[999999,2]' ]
	run jq -r '.errors[1].error' "$TMP/o.json"
	[[ $output == *"kernel thread"* ]]
}
