#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Every -J output is valid UTF-8 JSON whatever the names it carries: any
# local user can create a file or process whose name is not UTF-8. Bytes that
# are not UTF-8 become U+FFFD (documented in cetctl(1)); valid UTF-8 names are
# kept as they are, in JSON and, in a UTF-8 locale, in the tables.
# The checker is Python's json module over strictly decoded UTF-8.

load helpers

setup() {
	require_cetctl
	TMP=$(mktemp -d "${BATS_TMPDIR:-/tmp}/cetctl-names.XXXXXX")
	bg=()
}

teardown() {
	cleanup_test
}

# strict_json: stdin must be UTF-8 and one JSON document; prints the
# strings of the document (keys and values), one per line, \-escaped.
strict_json() {
	python3 -c '
import json, sys
doc = json.loads(sys.stdin.buffer.read().decode("utf-8", "strict"))
def walk(v):
    if isinstance(v, dict):
        for k, x in v.items():
            print(ascii(k)); walk(x)
    elif isinstance(v, list):
        for x in v: walk(x)
    elif isinstance(v, str):
        print(ascii(v))
walk(doc)'
}

# hostile names: a lone 0xff, a truncated sequence, an overlong '/', a UTF-16
# surrogate, a code point past U+10FFFF, plus control characters and quotes
HOSTILE=($'bad\xff' $'trunc\xc3' $'over\xc0\xaflong' $'surr\xed\xa0\x80' $'big\xf4\x90\x80\x80' $'ctl\x01\x1b[31m"q\\')

@test "json names: elf -J on files with invalid UTF-8 names is valid JSON" {
	for n in "${HOSTILE[@]}"; do
		cp /bin/true "$TMP/$n"
		run -0 bash -c '"$0" elf -J "$1" | python3 -c "import json,sys; json.loads(sys.stdin.buffer.read().decode(\"utf-8\"))"' "$CETCTL" "$TMP/$n"
	done
	# replaced, not dropped: the valid part and U+FFFD are both there
	"$CETCTL" elf -J "$TMP/${HOSTILE[0]}" | strict_json | grep -F "bad\\ufffd"
}

@test "json names: elf -r -J over a directory of hostile names is valid JSON" {
	mkdir "$TMP/d"
	for n in "${HOSTILE[@]}"; do cp /bin/true "$TMP/d/$n"; done
	mkdir "$TMP/d/"$'dir\xfe'
	cp /bin/true "$TMP/d/"$'dir\xfe'/x
	"$CETCTL" elf -r -J "$TMP/d" >"$TMP/out.json"
	strict_json <"$TMP/out.json" >"$TMP/strings"
	grep -F "dir\\ufffd/x" "$TMP/strings"
	[ "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1],"rb"))["files"]))' "$TMP/out.json")" -eq 7 ]
}

@test "json names: audit -J and status -J with a process named in invalid UTF-8" {
	cp /bin/sleep "$TMP/"$'sl\xffeep'
	"$TMP/"$'sl\xffeep' 60 & bg+=($!)
	p=$!
	"$CETCTL" audit -J -o PID,COMM,EXE >"$TMP/audit.json"
	strict_json <"$TMP/audit.json" >"$TMP/strings"
	grep -F "sl\\ufffdeep" "$TMP/strings"
	"$CETCTL" status -J -o PID,COMM,EXE,VERDICT "$p" >"$TMP/status.json"
	strict_json <"$TMP/status.json" | grep -F "sl\\ufffdeep"
}

@test "json names: info -J with a recorded tree whose command line is not UTF-8" {
	cp -a "$HOST_TESTS/fixtures/proc/cet-emulated" "$TMP/"$'tree\xff'
	printf 'BOOT_IMAGE=/vmlinuz clearcpuid=avx,\xff\xfe shstk_legacy_elf=\xc3\n' >"$TMP/"$'tree\xff'/cmdline
	run bash -c '"$0" --proc-root "$1" info -J' "$CETCTL" "$TMP/"$'tree\xff'
	echo "$output" | strict_json
}

@test "json names: a valid UTF-8 name is kept as it is, in JSON and in a UTF-8 table" {
	n='héllo-名前'
	cp /bin/true "$TMP/$n"
	LC_ALL=C.UTF-8 "$CETCTL" elf -J "$TMP/$n" | strict_json | grep -F "$(python3 -c 'import sys; print(ascii(sys.argv[1])[1:-1])' "$TMP/$n")"
	# the table shows the name, not \x escapes
	out=$(LC_ALL=C.UTF-8 "$CETCTL" elf -o FILE -n "$TMP/$n")
	echo "$out"
	[[ $out == *"$n"* ]]
	# in the C locale the table escapes what it cannot print, JSON never does
	out=$(LC_ALL=C "$CETCTL" elf -o FILE -n "$TMP/$n")
	[[ $out == *'\x'* ]]
}
