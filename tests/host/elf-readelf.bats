#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Cross-check cetctl elf against binutils' readelf -n over every ELF file
# under /usr/bin and /usr/lib of this machine: the IBT and SHSTK bits must
# agree, and cetctl must find every ELF file. One cetctl run, one readelf
# run over the same list, so it stays bounded (about 15 s here).

load helpers

setup() {
	require_cetctl
	command -v readelf >/dev/null || skip "readelf not installed (binutils)"
	command -v python3 >/dev/null || skip "python3 not installed"
	TMP=$(mktemp -d "${BATS_TMPDIR:-/tmp}/cetctl-xcheck.XXXXXX")
}

teardown() {
	[ -n "${TMP:-}" ] && rm -rf "$TMP"
}

@test "elf: IBT/SHSTK agree with readelf -n on every ELF file in /usr/bin and /usr/lib" {
	local dirs=(/usr/bin /usr/lib)

	# 1. cetctl, once. Unreadable or broken files would be errors: allow
	#    them but keep them out of the comparison.
	timeout 600 "$CETCTL" elf -r --raw -n -o FILE,IBT,SHSTK "${dirs[@]}" \
		>"$TMP/cetctl.out" 2>"$TMP/cetctl.err" || true
	grep -q 'ELF files' "$TMP/cetctl.err" || { cat "$TMP/cetctl.err"; return 1; }
	grep -v '\\' "$TMP/cetctl.out" | sort -o "$TMP/cetctl.out"

	# 2. the set of ELF files, independently: regular files (symlinks not
	#    followed, like -r) starting with the ELF magic.
	python3 - "${dirs[@]}" >"$TMP/elf-files" <<'PY'
import os, sys
for top in sys.argv[1:]:
    for root, dirs, files in os.walk(top):
        for name in files:
            p = os.path.join(root, name)
            if any(c.isspace() or c == '\\' for c in p):
                continue    # the text comparison below splits on spaces
            try:
                if not os.path.isfile(p) or os.path.islink(p):
                    continue
                with open(p, 'rb') as f:
                    if f.read(4) == b'\x7fELF':
                        print(p)
            except OSError:
                pass
PY
	sort -o "$TMP/elf-files" "$TMP/elf-files"
	local n_elf n_cet
	n_elf=$(wc -l <"$TMP/elf-files")
	n_cet=$(wc -l <"$TMP/cetctl.out")
	[ "$n_elf" -gt 100 ] || { echo "only $n_elf ELF files found"; return 1; }
	# every file cetctl could not read must have said so on stderr
	comm -23 "$TMP/elf-files" <(cut -d' ' -f1 "$TMP/cetctl.out") >"$TMP/not-listed"
	while read -r f; do
		grep -qF "$f: " "$TMP/cetctl.err" || { echo "cetctl skipped ELF file $f silently"; return 1; }
	done <"$TMP/not-listed"

	# 3. readelf, once over the same list: first "x86 feature:" per file.
	tr '\n' '\0' <"$TMP/elf-files" | xargs -0 -r timeout 600 readelf -nW 2>/dev/null | awk '
		/^File: / { f = substr($0, 7); next }
		/x86 feature: / && !(f in seen) {
			seen[f] = 1
			s = $0; sub(/.*x86 feature: /, "", s); sub(/, x86 .*/, "", s)
			ibt = (s ~ /(^|, )IBT(,|$)/) ? "yes" : "no"
			shstk = (s ~ /(^|, )SHSTK(,|$)/) ? "yes" : "no"
			print f, ibt, shstk
		}' | sort >"$TMP/readelf.marked"
	# files without the property: no/no
	join -v1 "$TMP/elf-files" "$TMP/readelf.marked" | awk '{ print $1, "no", "no" }' |
		sort -m - "$TMP/readelf.marked" >"$TMP/readelf.out"

	# 4. compare the files cetctl listed
	join "$TMP/cetctl.out" "$TMP/readelf.out" | awk '$2 != $4 || $3 != $5' >"$TMP/diff"
	if [ -s "$TMP/diff" ]; then
		echo "cetctl and readelf disagree (file cetctl-ibt cetctl-shstk readelf-ibt readelf-shstk):"
		head -n 20 "$TMP/diff"
		return 1
	fi
	local n_cmp
	n_cmp=$(join "$TMP/cetctl.out" "$TMP/readelf.out" | wc -l)
	echo "# compared $n_cmp of $n_elf ELF files ($(grep -c ' yes' "$TMP/cetctl.out") with a bit set)" >&3
	[ "$n_cmp" -eq "$n_cet" ]
	[ "$n_cmp" -gt 100 ]
}
