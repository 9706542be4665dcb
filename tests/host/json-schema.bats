#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Every subcommand's -J output against its documented JSON schema
# (tests/host/schema/*.json, described in the man pages), with python3-jsonschema
# (Debian package), on the live system, recorded trees and hostile names.

load helpers

setup_file() {
	build_fixtures
}

setup() {
	require_cetctl
	python3 -c 'import jsonschema' 2>/dev/null ||
		skip "python3-jsonschema not installed (vm/install-deps.sh)"
	SCHEMA=$HOST_TESTS/schema
	PROCFIX=$HOST_TESTS/fixtures/proc
	F=$FIXTURES
	TMP=$(mktemp -d "${BATS_TMPDIR:-/tmp}/cetctl-schema.XXXXXX")
	bg=()
}

teardown() {
	cleanup_test
}

# valid SCHEMA CETCTL-ARGS...: the JSON on stdout matches tests/host/schema/SCHEMA.json
valid() {
	local schema=$1; shift
	"$CETCTL" "$@" >"$TMP/out.json" 2>"$TMP/err" || true
	python3 "$SCHEMA/validate.py" "$SCHEMA/$schema.json" "$TMP/out.json" ||
		{ echo "cetctl $*:"; head -c 3000 "$TMP/out.json"; cat "$TMP/err"; return 1; }
}

all_columns() {	# all_columns CMD -> every column, comma separated
	"$CETCTL" "$1" --list-columns -J | jq -r '[.columns[].name] | join(",")'
}

@test "schema: elf -J, every column, fixtures, --deps, -r, policies" {
	local cols; cols=$(all_columns elf)
	valid elf elf -J -o "$cols" "$F"/hello-* "$F"/start* "$F"/obj-*.o "$F"/made/note-*
	valid elf elf -J --deps -o "$cols" "$F/deps/app-marked" "$F/deps/app-soname" "$F/deps/libdollar.so"
	valid elf elf -r -J "$F"
	for p in block allow none; do valid elf elf -J --kernel-policy=$p -o "$cols" "$F/made"; done
	valid elf --proc-root "$PROCFIX/cet-emulated" elf -J "$F/hello-marked"
	# an error still gives a valid document (the failing file is left out)
	valid elf elf -J "$F/hello-marked" /nonexistent
}

@test "schema: status -J, every column, live and recorded, threads nested" {
	local cols; cols=$(all_columns status)
	valid status status -J self
	valid status status -J -o "$cols" self 1
	for t in cet-emulated bochs-ref612 host-nocet; do
		pids=$(awk '{ print $2 }' "$PROCFIX/$t/roles" | tr '\n' ' ')
		# shellcheck disable=SC2086  # $pids: one pid per word
		valid status --proc-root "$PROCFIX/$t" status -J -o "$cols" $pids
	done
	# errors: objects naming the pid
	valid status --proc-root "$PROCFIX/cet-emulated" status -J 3114 999999 2
}

@test "schema: audit -J, every column, live and recorded, with and without --require" {
	local cols; cols=$(all_columns audit)
	valid audit audit -J
	valid audit audit -J -o "$cols"
	valid audit audit -J --require shstk,locked
	for t in cet-emulated bochs-ref612 host-nocet arm64-ss; do
		valid audit --proc-root "$PROCFIX/$t" audit -J -o "$cols"
		valid audit --proc-root "$PROCFIX/$t" audit -J --require shstk
	done
	valid audit --proc-root "$PROCFIX/cet-emulated" audit -J --pid 3114,999999,2
	# nothing selected: still a document with a summary
	valid audit audit -J --comm no-such-process-name
}

@test "schema: info -J, live and recorded" {
	valid info info -J
	for t in cet-emulated bochs-ref612 host-nocet arm64-ss; do
		valid info --proc-root "$PROCFIX/$t" info -J
	done
}

@test "schema: --list-columns -J of every table command" {
	for c in elf status audit info; do valid columns "$c" --list-columns -J; done
}

@test "schema: hostile file and process names" {
	mkdir "$TMP/d"
	for n in $'bad\xff' $'ctl\x01"q\\' $'a[ null ]b' 'héllo'; do cp /bin/true "$TMP/d/$n"; done
	valid elf elf -r -J -o "$(all_columns elf)" "$TMP/d"
	cp /bin/sleep "$TMP/"$'sl\xffeep'
	"$TMP/"$'sl\xffeep' 60 & bg+=($!)
	valid audit audit -J -o "$(all_columns audit)"
	valid status status -J -o "$(all_columns status)" "$!"
	cp -a "$PROCFIX/cet-emulated" "$TMP/"$'tree\xff'
	valid info --proc-root "$TMP/"$'tree\xff' info -J
}
