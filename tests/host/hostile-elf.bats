#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Hostile inputs for `cetctl elf` (issue 7): special files that must never
# be opened or block, huge and sparse files, truncated headers, notes with
# absurd sizes, symlink loops, deep trees, unreadable files, files that
# change while they are read. Every run is under `timeout`: a hang fails
# the test (status 124) instead of the suite. "Sane" means exit 0 or 1, a
# message, no sanitizer report, no signal.

load helpers

setup_file() {
	build_fixtures
}

setup() {
	require_cetctl
	[ -f "$FIXTURES/.stamp" ] || skip "fixtures not built"
	TMP=$(mktemp -d "${BATS_TMPDIR:-/tmp}/cetctl-hostile.XXXXXX")
	chmod 755 "$TMP"
	bg=()
}

teardown() {
	cleanup_test
}

# celf ARGS...: cetctl elf under a 10 s timeout, via `run`
celf() {
	run timeout -k 2 10 "$CETCTL" elf "$@"
}

# sane [ALLOWED_STATUS...]: the last `run` ended normally (default 0 or 1)
sane() {
	local ok=("${@:-0 1}") s
	[ "$status" -ne 124 ] && [ "$status" -ne 137 ] || { echo "timed out: $output"; return 1; }
	[[ "$output${stderr:-}" != *AddressSanitizer* && "$output${stderr:-}" != *"runtime error"* &&
	   "$output${stderr:-}" != *LeakSanitizer* ]] || { echo "$output${stderr:-}"; return 1; }
	# shellcheck disable=SC2048  # the default "0 1" is one word that must split in two
	for s in ${ok[*]}; do
		[ "$status" -eq "$s" ] && return 0
	done
	echo "exit status $status: $output"
	return 1
}

# unix_socket PATH: create a listening-less AF_UNIX socket file
unix_socket() {
	python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$1"
}

@test "hostile elf: /dev/zero, /dev/null, /dev/urandom and a tty are refused, never read" {
	for dev in /dev/zero /dev/null /dev/urandom /dev/full; do
		[ -c "$dev" ] || continue
		celf "$dev"
		sane 1
		[[ "$output" == *"$dev: not a regular file"* ]]
	done
	# through a symlink, the target decides
	ln -s /dev/zero "$TMP/zero-link"
	celf "$TMP/zero-link"
	sane 1
	[[ "$output" == *"not a regular file"* ]]
}

@test "hostile elf: a FIFO with no writer, and one with a writer that never writes" {
	mkfifo "$TMP/fifo" "$TMP/fifo-w"
	celf "$TMP/fifo"
	sane 1
	[[ "$output" == *"fifo: not a regular file"* ]]
	# a writer holding the FIFO open: reading would block forever
	sleep 30 >"$TMP/fifo-w" & bg+=($!)
	celf "$TMP/fifo-w"
	sane 1
	[[ "$output" == *"not a regular file"* ]]
}

@test "hostile elf: a unix socket is refused" {
	command -v python3 >/dev/null || skip "python3 not installed"
	unix_socket "$TMP/sock"
	[ -S "$TMP/sock" ]
	celf "$TMP/sock"
	sane 1
	[[ "$output" == *"sock: not a regular file"* ]]
}

@test "hostile elf: -r over a tree of FIFOs, sockets, device links and one ELF file" {
	mkdir -p "$TMP/t/sub"
	mkfifo "$TMP/t/fifo" "$TMP/t/sub/fifo2"
	command -v python3 >/dev/null && unix_socket "$TMP/t/sub/sock"
	ln -s /dev/zero "$TMP/t/zero"
	ln -s /dev/tty "$TMP/t/sub/tty"
	cp "$FIXTURES/hello-marked" "$TMP/t/sub/"
	celf -r -J "$TMP/t"
	sane 0
	run jq -r '.files[].file' <<<"$output"
	[ "$output" = "$TMP/t/sub/hello-marked" ]
}

@test "hostile elf: a 10 GiB sparse file is answered from its headers, at once" {
	truncate -s 10G "$TMP/sparse"
	SECONDS=0
	celf "$TMP/sparse"
	sane 1
	[[ "$output" == *"not an ELF file"* ]]
	# a real program with 10 GiB of holes after it: still read, still marked
	cp "$FIXTURES/hello-marked" "$TMP/big-elf"
	truncate -s 10G "$TMP/big-elf"
	celf -J -o FILE,SHSTK,LOADER "$TMP/big-elf"
	sane 0
	[ "$(jq -r '.files[0].loader.features | join(",")' <<<"$output")" = "ibt,shstk" ]
	[ "$SECONDS" -lt 5 ]
}

@test "hostile elf: a note segment at 9 GiB into a sparse file, 4 GiB long" {
	command -v python3 >/dev/null || skip "python3 not installed"
	python3 - "$TMP/far-note" <<'PY'
import struct, sys
G = 1 << 30
eh = (b'\x7fELF\x02\x01\x01' + b'\0' * 9 +
      struct.pack('<HHIQQQIHHHHHH', 2, 62, 1, 0, 64, 0, 0, 64, 56, 2, 64, 0, 0))
ph = lambda t: struct.pack('<IIQQQQQQ', t, 4, 9 * G, 0, 0, 4 * G, 4 * G, 8)
with open(sys.argv[1], 'wb') as f:
    f.write(eh + ph(4) + ph(0x6474e553))
    f.truncate(14 * G)
PY
	SECONDS=0
	# a static program (ET_EXEC, no interpreter): its own note decides
	run --separate-stderr timeout -k 2 10 "$CETCTL" elf -J --kernel-policy=block -o FILE,NOTE,KERNEL "$TMP/far-note"
	sane 0
	# only the first MiB is looked at (zeros: no note); the kernel reads at
	# most 1 KiB of PT_GNU_PROPERTY and ignores a larger one (the series' legacy-ELF patch: a
	# property note never fails exec, it counts as unmarked)
	[ "$(jq -r '.files[0].note' <<<"$output")" = null ]
	jq -e '.files[0].kernel == {"verdict": "allows", "errno": null, "reason": null}' <<<"$output"
	[ "$SECONDS" -lt 5 ]
}

@test "hostile elf: every truncation of an ELF64 and an ELF32 header is an error, not a crash" {
	local f n
	for f in "$FIXTURES/start-marked" "$FIXTURES/start32-marked"; do
		[ -e "$f" ] || continue
		for n in $(seq 0 3 150); do
			head -c "$n" "$f" >"$TMP/trunc"
			celf "$TMP/trunc"
			sane 1
			[[ "$output" == *"not an ELF file"* || "$output" == *"corrupt ELF file"* ]] ||
				{ echo "$n bytes of $f: $output"; false; }
		done
	done
}

@test "hostile elf: notes with absurd sizes (fuzz regressions) give an answer or a clear error" {
	local f d=$CETCTL_BUILD/fuzz-seeds/regressions/fuzz-elf-notes
	# decoded from tests/fuzz/regressions/fuzz-elf-notes/*.hex by the build
	[ -f "$d/note-descsz-4g" ] || skip "no decoded fuzz regressions in $d (tests/fuzz/make-seeds.sh)"
	for f in "$d"/*; do
		celf -J "$f"
		sane 0 1
		if [ "$status" -eq 1 ]; then
			[[ "$output" == *"corrupt ELF file"* || "$output" == *"not an ELF file"* ]] ||
				{ echo "$f: $output"; false; }
		fi
	done
	# a descsz of 4 GiB in the note the loader reads: ignored, with the reason
	celf -o LOADER -n "$d/note-descsz-4g"
	sane 0
	[[ "$output" == *"ignored"* ]]
}

@test "hostile elf: self-referencing and mutual symlink loops, and a directory loop under -r" {
	ln -s self "$TMP/self"
	ln -s b "$TMP/a"
	ln -s a "$TMP/b"
	mkdir "$TMP/d"
	ln -s .. "$TMP/d/up"
	ln -s "$TMP/d" "$TMP/d/again"
	cp "$FIXTURES/hello-marked" "$TMP/d/"
	for l in self a; do
		celf "$TMP/$l"
		sane 1
		[[ "$output" == *"Too many levels of symbolic links"* ]]
	done
	celf -r "$TMP/d"
	sane 0
	[ "$(grep -c 'hello-marked' <<<"$output")" -eq 1 ]
}

@test "hostile elf: a tree nested deeper than PATH_MAX is cut off with a message" {
	command -v python3 >/dev/null || skip "python3 not installed"
	python3 - "$TMP/deep" <<'PY'
import os, sys
os.makedirs(sys.argv[1])
os.chdir(sys.argv[1])
for _ in range(700):        # 700 * 9 bytes > PATH_MAX
    os.mkdir('dddddddd')
    os.chdir('dddddddd')
open('x', 'w').close()
PY
	cp "$FIXTURES/hello-marked" "$TMP/deep/"
	celf -r "$TMP/deep"
	sane 1
	[[ "$output" == *"hello-marked"* ]]
	[[ "$output" == *"nested too deeply"* || "$output" == *"File name too long"* ]]
}

@test "hostile elf: unreadable files and directories (as nobody): Permission denied, scan goes on" {
	[ "$(id -u)" -eq 0 ] || skip "needs root to run cetctl as nobody"
	command -v setpriv >/dev/null || skip "setpriv (util-linux) not installed"
	setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$CETCTL" ||
		skip "nobody cannot execute $CETCTL (directory permissions)"
	mkdir -p "$TMP/t/closed"
	cp "$FIXTURES/hello-marked" "$TMP/t/secret"
	cp "$FIXTURES/hello-marked" "$TMP/t/open"
	cp "$FIXTURES/hello-marked" "$TMP/t/closed/inside"
	chmod 600 "$TMP/t/secret"
	chmod 700 "$TMP/t/closed"
	run timeout -k 2 10 setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$CETCTL" elf "$TMP/t/secret"
	sane 1
	[[ "$output" == *"secret: Permission denied"* ]]
	run timeout -k 2 10 setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$CETCTL" elf -r -n -o FILE "$TMP/t"
	sane 1
	[[ "$output" == *"$TMP/t/open"* ]]
	[[ "$output" == *"Permission denied"* ]]
	[[ "$output" != *"inside"* ]]
}

@test "hostile elf: files replaced and rewritten while being read: only sane outcomes" {
	local variants=("$FIXTURES/hello-marked" "$FIXTURES/start-unmarked" "$FIXTURES/made/trunc-note"
			"$FIXTURES/not-elf.sh" "$FIXTURES/empty")
	local v
	for v in "${variants[@]}"; do [ -e "$v" ] || skip "fixture $v missing"; done
	cp "$FIXTURES/hello-marked" "$TMP/target"
	cp "$FIXTURES/hello-marked" "$TMP/inplace"
	# writer: rename new contents over one file, rewrite the other in place
	# (truncate then write: readers see it short, empty, or growing)
	( i=0
	  while [ ! -e "$TMP/.stop" ]; do
		v=${variants[$((i % ${#variants[@]}))]}
		cp "$v" "$TMP/.next" && mv -f "$TMP/.next" "$TMP/target"
		cat "$v" >"$TMP/inplace"
		head -c $((RANDOM % 20000)) /dev/urandom >>"$TMP/inplace"
		i=$((i + 1))
	  done ) & bg+=($!)
	local n0=0 n1=0
	for _ in $(seq 150); do
		celf -J "$TMP/target" "$TMP/inplace"
		sane 0 1
		[ "$status" -eq 0 ] && n0=$((n0 + 1)) || n1=$((n1 + 1))
		# stdout is one JSON document whatever happened
		run --separate-stderr timeout -k 2 10 "$CETCTL" elf -J "$TMP/inplace"
		sane 0 1
		jq -e '.files | length <= 1' <<<"$output" >/dev/null
	done
	touch "$TMP/.stop"	# the writer finishes its round and stops
	wait "${bg[0]}" || true
	echo "# 150 rounds: $n0 all read, $n1 with an error" >&3
}
