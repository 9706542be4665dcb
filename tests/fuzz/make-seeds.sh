#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/fuzz/make-seeds.sh OUTDIR FIXTURES — seed corpora of the fuzz
# targets from the test fixtures: OUTDIR/<target>/<sha1 of the input>; and
# the regression inputs of tests/fuzz/regressions/<target>/ as the targets
# read them, in OUTDIR/regressions/<target>/: a NAME.hex file (the binary
# ones: the source tree holds no binary a distribution would have to
# rebuild) decoded into NAME, any other file copied.
# FIXTURES is where tests/host/fixtures/build.sh puts the ELF fixtures
# (the same directory bats uses; build.sh is a no-op when it is current).
set -euo pipefail

out=${1:?usage: make-seeds.sh OUTDIR FIXTURES}
fixtures=${2:?usage: make-seeds.sh OUTDIR FIXTURES}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
proc=$here/../host/fixtures/proc

# put TARGET FILE: copy under its content hash (identical inputs once)
put() {
	local h
	h=$(sha1sum <"$2" | cut -c1-40)
	[ -e "$out/$1/$h" ] || cp "$2" "$out/$1/$h"
}

mkdir -p "$out"/fuzz-elf-notes "$out"/fuzz-proc-status "$out"/fuzz-proc-smaps "$out"/fuzz-ld-cache

# unhex IN OUT: '#' comment lines, then hex byte pairs separated by blanks
unhex() {
	local fmt="" b
	for b in $(grep -v '^#' "$1"); do
		[[ $b =~ ^[0-9a-fA-F]{2}$ ]] || { echo "make-seeds: $1: not a hex byte: '$b'" >&2; return 1; }
		fmt+="\\x$b"
	done
	printf "$fmt" >"$2.new" && mv "$2.new" "$2"
}

rm -rf "$out/regressions"
for d in "$here"/regressions/*/; do
	t=$(basename "$d")
	mkdir -p "$out/regressions/$t"
	for f in "$d"*; do
		case $f in
		*.hex) unhex "$f" "$out/regressions/$t/$(basename "$f" .hex)" ;;
		*) cp "$f" "$out/regressions/$t/" ;;
		esac
	done
done

# The fixtures are built with gcc whatever compiler this build uses.
if CC=${FIXTURE_CC:-gcc} bash "$here/../host/fixtures/build.sh" "$fixtures" >"$out/fixtures.log" 2>&1; then
	while IFS= read -r -d '' f; do
		# ELF files and the non-ELF ones (script, empty) alike; skip big ones
		[ "$(stat -c %s "$f")" -le 262144 ] && put fuzz-elf-notes "$f"
	done < <(find "$fixtures" -type f ! -name '.stamp' ! -name '*.txt' -print0)
else
	echo "make-seeds: building the ELF fixtures failed (see $out/fixtures.log); ELF seeds are only the regressions" >&2
fi

while IFS= read -r -d '' f; do
	case $f in
	*/status) put fuzz-proc-status "$f" ;;
	*/smaps|*/maps) put fuzz-proc-smaps "$f" ;;
	esac
done < <(find "$proc" -type f \( -name status -o -name smaps -o -name maps \) -print0)
# ld.so.cache: this machine's, and its first kilobytes (a truncated one)
if [ -f /etc/ld.so.cache ]; then
	put fuzz-ld-cache /etc/ld.so.cache
	head -c 4096 /etc/ld.so.cache >"$out/ld.so.cache.head" && put fuzz-ld-cache "$out/ld.so.cache.head"
	rm -f "$out/ld.so.cache.head"
fi
exit 0
