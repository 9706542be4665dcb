#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# cetctl elf on fixtures built at test time (fixtures/build.sh): real gcc
# output, hand-made notes glibc rejects, broken files, special files.

load helpers

setup_file() {
	build_fixtures
}

setup() {
	require_cetctl
	[ -f "$FIXTURES/.stamp" ] || skip "fixtures not built"
	F=$FIXTURES
	TMP=$(mktemp -d "${BATS_TMPDIR:-/tmp}/cetctl-elf.XXXXXX")
}

teardown() {
	[ -n "${TMP:-}" ] && rm -rf "$TMP"
}

# The KERNEL column models the series' legacy-ELF policy (CONFIG_X86_USER_SHADOW_STACK_ALLOW_BROKEN) for a named policy; these
# tests judge for "block", the series' default, whatever this host runs.
refused() {
	echo "refuses"
}

# elf_json FILE... -> JSON of the default columns plus the note values
elf_json() {
	"$CETCTL" elf -J --kernel-policy=block \
		-o FILE,ARCH,TYPE,IBT,SHSTK,LAM,NOTE,LOADER,KERNEL,ISA_NEEDED "$@"
}

# field FILE COLUMN -> the value of COLUMN for FILE (one file per call)
field() {
	elf_json "$1" | jq -r ".files[0].\"$2\" | if type == \"object\" then (.features | join(\",\")) elif type == \"array\" then join(\",\") else . end"
}

@test "elf --help: every option, exit 0 on stdout" {
	run --separate-stderr "$CETCTL" elf --help
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	for o in --recursive --deps --kernel-policy --json --output --list-columns --noheadings --raw --help; do
		grep -q -- "$o" <<<"$output" || { echo "missing $o"; return 1; }
	done
}

@test "elf: usage errors exit 1 with a hint" {
	run --separate-stderr "$CETCTL" elf
	[ "$status" -eq 1 ]
	[[ $stderr == *"Try 'cetctl elf --help'"* ]]
	run --separate-stderr "$CETCTL" elf --bogus "$F/hello-marked"
	[ "$status" -eq 1 ]
	[[ $stderr == *"Try 'cetctl elf --help'"* ]]
	run --separate-stderr "$CETCTL" elf -o FILE,NOPE "$F/hello-marked"
	[ "$status" -eq 1 ]
	[[ $stderr == *"unknown column: NOPE"* ]]
}

@test "elf --list-columns: every column, text and JSON" {
	run "$CETCTL" elf --list-columns
	[ "$status" -eq 0 ]
	for c in FILE ARCH TYPE IBT SHSTK LAM FEATURE_1_AND ISA_NEEDED ISA_USED FEATURE_2_USED \
		 NOTE LOADER KERNEL DEPS DEPS_IBT NDEPS MISSING COMPAT; do
		grep -qw "$c" <<<"$output" || { echo "missing column $c"; return 1; }
	done
	run "$CETCTL" elf -J --list-columns
	[ "$status" -eq 0 ]
	jq -e '.columns | length == 18' <<<"$output"
}

@test "elf: gcc -Wl,-z,ibt,-z,shstk program is marked, accepted, refused by the kernel policy" {
	run elf_json "$F/hello-marked"
	[ "$status" -eq 0 ]
	jq -e --arg k "$(refused)" "$JQ_KTEXT"'.files[0] | .arch == "x86-64" and .type == "pie" and
		.ibt == true and .shstk == true and .note == "PT_GNU_PROPERTY" and
		(.loader | if . == null then null elif .status == "ignored" then "ignored: " + .reason elif .features == [] then "none" else (.features | join(",")) end) == "ibt,shstk" and (.kernel | ktext) == $k and .isa_needed == ["x86-64-baseline"]' <<<"$output"
	[ "$(field "$F/hello-marked-nopie" type)" = exec ]
	[ "$(field "$F/hello-marked-nopie" loader)" = ibt,shstk ]
}

@test "elf: -fcf-protection alone does not mark a libc program (crt1.o is unmarked)" {
	run elf_json "$F/hello-plain" "$F/hello-none"
	[ "$status" -eq 0 ]
	jq -e "$JQ_KTEXT"'[.files[] | .ibt == false and .shstk == false and (.loader | if . == null then null elif .status == "ignored" then "ignored: " + .reason elif .features == [] then "none" else (.features | join(",")) end) == "none" and
		(.kernel | ktext) == "allows"] | all' <<<"$output"
}

@test "elf: SHSTK-only marking" {
	run elf_json "$F/hello-shstk"
	[ "$status" -eq 0 ]
	jq -e '.files[0] | .ibt == false and .shstk == true and (.loader | if . == null then null elif .status == "ignored" then "ignored: " + .reason elif .features == [] then "none" else (.features | join(",")) end) == "shstk"' <<<"$output"
}

@test "elf: -nostdlib static programs: marked, unmarked, static-pie" {
	run elf_json "$F/start-marked" "$F/start-unmarked" "$F/start-marked-spie"
	[ "$status" -eq 0 ]
	jq -e '.files[0] | .type == "static" and .ibt and .shstk and (.loader | if . == null then null elif .status == "ignored" then "ignored: " + .reason elif .features == [] then "none" else (.features | join(",")) end) == "ibt,shstk"' <<<"$output"
	jq -e "$JQ_KTEXT"'.files[1] | .type == "static" and .ibt == false and .note == null and
		(.loader | if . == null then null elif .status == "ignored" then "ignored: " + .reason elif .features == [] then "none" else (.features | join(",")) end) == "none" and (.kernel | ktext) == "allows"' <<<"$output"
	jq -e '.files[2] | .type == "static-pie" and .shstk and (.loader | if . == null then null elif .status == "ignored" then "ignored: " + .reason elif .features == [] then "none" else (.features | join(",")) end) == "ibt,shstk"' <<<"$output"
}

@test "elf: glibc static program is unmarked" {
	require_fixture hello-static
	[ "$(field "$F/hello-static" type)" = static ]
	[ "$(field "$F/hello-static" shstk)" = false ]
}

@test "elf: ELF32 i386 (-m32 -nostdlib)" {
	require_fixture start32-marked
	run elf_json "$F/start32-marked" "$F/start32-unmarked"
	[ "$status" -eq 0 ]
	jq -e "$JQ_KTEXT"'.files[0] | .arch == "i386" and .ibt and .shstk and (.loader | if . == null then null elif .status == "ignored" then "ignored: " + .reason elif .features == [] then "none" else (.features | join(",")) end) == "ibt,shstk" and
		(.kernel | ktext) == "no-shstk (i386)"' <<<"$output"
	jq -e '.files[1] | .arch == "i386" and .shstk == false' <<<"$output"
}

# x32_tree on|off -> a recorded tree whose kernel config has CONFIG_X86_X32_ABI
# set or not (the KERNEL verdict of x32 programs depends on it)
x32_tree() {
	mkdir -p "$TMP/x32$1"
	if [ "$1" = on ]; then
		printf 'CONFIG_X86_USER_SHADOW_STACK=y\nCONFIG_X86_X32_ABI=y\n' >"$TMP/x32$1/config"
	else
		printf 'CONFIG_X86_USER_SHADOW_STACK=y\n# CONFIG_X86_X32_ABI is not set\n' >"$TMP/x32$1/config"
	fi
	echo "$TMP/x32$1"
}

@test "elf: x32 (-mx32 -nostdlib): no shadow stacks, and no exec without CONFIG_X86_X32_ABI" {
	require_fixture startx32-marked
	run --separate-stderr "$CETCTL" --proc-root "$(x32_tree on)" elf -J --kernel-policy=block "$F/startx32-marked" "$F/made/note-x32"
	[ "$status" -eq 0 ]
	jq -e "$JQ_KTEXT"'.files[0] | .arch == "x32" and .shstk and (.loader | if . == null then null elif .status == "ignored" then "ignored: " + .reason elif .features == [] then "none" else (.features | join(",")) end) == "ibt,shstk" and
		(.kernel | ktext) == "no-shstk (x32)"' <<<"$output"
	jq -e "$JQ_KTEXT"'(.files[1].kernel | ktext) == "no-shstk (x32)"' <<<"$output"
	# the QEMU oracle showed it: compat_elf_check_arch() refuses x32 first
	run --separate-stderr "$CETCTL" --proc-root "$(x32_tree off)" elf -J --kernel-policy=block "$F/startx32-marked" "$F/made/note-x32"
	jq -e "$JQ_KTEXT"'[.files[].kernel | ktext] == ["ENOEXEC", "ENOEXEC"]' <<<"$output"
}

@test "elf: relocatable objects read .note.gnu.property" {
	run elf_json "$F/obj-marked.o" "$F/obj-none.o"
	[ "$status" -eq 0 ]
	jq -e "$JQ_KTEXT"'.files[0] | .type == "rel" and .note == ".note.gnu.property" and .ibt and .shstk and
		(.loader | if . == null then null elif .status == "ignored" then "ignored: " + .reason elif .features == [] then "none" else (.features | join(",")) end) == null and (.kernel | ktext) == "n/a (not a program)"' <<<"$output"
	jq -e '.files[1] | .type == "rel" and .note == null and .shstk == false' <<<"$output"
}

# made/<name> LOADER KERNEL IBT SHSTK
@test "elf: notes glibc would ignore are shown, with the reason" {
	local r; r=$(refused)
	while IFS='|' read -r name loader kernel ibt shstk; do
		run elf_json "$F/made/$name"
		[ "$status" -eq 0 ] || { echo "$name: exit $status"; return 1; }
		jq -e --arg l "$loader" --arg k "$kernel" --argjson i "$ibt" --argjson s "$shstk" \
			"$JQ_KTEXT"'.files[0] | (.loader | if . == null then null elif .status == "ignored" then "ignored: " + .reason elif .features == [] then "none" else (.features | join(",")) end) == $l and (.kernel | ktext) == $k and .ibt == $i and .shstk == $s' \
			<<<"$output" || { echo "$name: $output"; return 1; }
	done <<EOT
note-good64|ibt,shstk|$r|true|true
note-align4|ignored: alignment not 8|$r|true|true
note-unordered|ignored: properties not in ascending order|allows|true|true
note-shortdesc|ignored: descsz < 8|allows|false|false
note-datasz8|ignored: pr_datasz != 4|allows|false|false
note-duplicate|ignored: more than one property note|$r|true|true
note-static-ptnote|ignored: static executable without PT_GNU_PROPERTY|allows|true|true
note-static-good|ibt,shstk|$r|true|true
note-static-unordered|ignored: properties not in ascending order|allows|true|true
note-static-datasz8|ignored: pr_datasz != 4|allows|false|false
note-static-big|ibt,shstk|allows|true|true
note-big|ibt,shstk|allows|true|true
note-good32|ibt,shstk|no-shstk (i386)|true|true
note-32-align8|ignored: alignment not 4|no-shstk (i386)|true|true
note-ibt-only|ibt|$r|true|false
note-zero|none|allows|false|false
EOT
	[ "$(field "$F/made/note-lam" lam)" = "u48,u57" ]
}

@test "elf: truncated and corrupt files: clear error, exit 1, scan goes on" {
	while IFS='|' read -r name why; do
		run --separate-stderr "$CETCTL" elf -n -o FILE "$F/made/$name" "$F/hello-marked"
		[ "$status" -eq 1 ] || { echo "$name: exit $status"; return 1; }
		[[ $stderr == *"$name: corrupt ELF file: $why"* ]] || { echo "$name: $stderr"; return 1; }
		[ "$output" = "$F/hello-marked" ] || { echo "$name: $output"; return 1; }
	done <<EOT
trunc-note|note segment extends past the end of the file
trunc-phdr|program headers extend past the end of the file
trunc-magic|truncated ELF header
corrupt-phoff|program headers extend past the end of the file
corrupt-phnum|program headers extend past the end of the file
corrupt-noteoff|note segment extends past the end of the file
corrupt-class|unknown ELF class
EOT
}

@test "elf: truncating a real binary anywhere never crashes" {
	local size n=0 rc
	size=$(stat -c %s "$F/hello-marked")
	for cut in 0 3 17 63 64 100 500 800 900 1000 4096 $((size / 2)) $((size - 1)); do
		head -c "$cut" "$F/hello-marked" >"$TMP/cut"
		rc=0
		"$CETCTL" elf "$TMP/cut" >/dev/null 2>"$TMP/err" || rc=$?
		# 0 (headers and note survived the cut) or 1 with a message; never a crash
		[ "$rc" -eq 0 ] || { [ "$rc" -eq 1 ] && grep -q "$TMP/cut: " "$TMP/err"; } ||
			{ echo "cut $cut: rc $rc: $(cat "$TMP/err")"; return 1; }
		n=$((n + 1))
	done
	[ "$n" -eq 13 ]
}

@test "elf: non-ELF files are errors when named" {
	run --separate-stderr "$CETCTL" elf -n -o FILE "$F/not-elf.sh" "$F/empty" "$F/hello-plain"
	[ "$status" -eq 1 ]
	[[ $stderr == *"not-elf.sh: not an ELF file"* ]]
	[[ $stderr == *"empty: not an ELF file"* ]]
	[ "$output" = "$F/hello-plain" ]
}

@test "elf: a directory needs -r; -r walks it, skipping non-ELF quietly" {
	run --separate-stderr "$CETCTL" elf "$F/deps"
	[ "$status" -eq 1 ]
	[[ $stderr == *"is a directory (use --recursive)"* ]]
	run --separate-stderr "$CETCTL" elf -r -J -o FILE "$F/deps"
	[ "$status" -eq 0 ]
	jq -e '.files | length == 12' <<<"$output"
	jq -e --arg f "$F/deps/libtop.so" '[.files[].file] | index($f) != null' <<<"$output"
	# the whole fixture tree: non-ELF skipped, the broken files of made/ reported
	run --separate-stderr "$CETCTL" elf -r -J -o FILE "$F"
	[ "$status" -eq 1 ]
	jq -e --arg f "$F/made/note-good64" '[.files[].file] | index($f) != null' <<<"$output"
	jq -e '.summary | .errors == 7 and .not_elf >= 3' <<<"$output"
}

@test "elf -r: corrupt ELF files in a tree are errors, non-ELF is counted" {
	mkdir -p "$TMP/t/sub"
	cp "$F/hello-marked" "$TMP/t/sub/"
	cp "$F/made/trunc-note" "$TMP/t/"
	cp "$F/not-elf.sh" "$TMP/t/"
	run --separate-stderr "$CETCTL" elf -r -J -o FILE "$TMP/t"
	[ "$status" -eq 1 ]
	[[ $stderr == *"trunc-note: corrupt ELF file"* ]]
	jq -e '.summary | .files == 1 and .not_elf == 1 and .errors == 1' <<<"$output"
	jq -e --arg f "$TMP/t/sub/hello-marked" '.files[0].file == $f' <<<"$output"
}

@test "elf: FIFOs and devices are never opened (no hang)" {
	mkfifo "$TMP/fifo"
	run --separate-stderr timeout 10 "$CETCTL" elf "$TMP/fifo"
	[ "$status" -eq 1 ]
	[[ $stderr == *"fifo: not a regular file"* ]]
	run --separate-stderr timeout 10 "$CETCTL" elf /dev/null
	[ "$status" -eq 1 ]
	[[ $stderr == *"/dev/null: not a regular file"* ]]
	mkdir "$TMP/d"
	mkfifo "$TMP/d/fifo"
	cp "$F/hello-marked" "$TMP/d/"
	run --separate-stderr timeout 10 "$CETCTL" elf -r -n -o FILE "$TMP/d"
	[ "$status" -eq 0 ]
	[ "$output" = "$TMP/d/hello-marked" ]
}

@test "elf: symlink loops fail cleanly; -r does not follow symlinks" {
	ln -s loop-b "$TMP/loop-a"
	ln -s loop-a "$TMP/loop-b"
	run --separate-stderr timeout 10 "$CETCTL" elf "$TMP/loop-a"
	[ "$status" -eq 1 ]
	[[ $stderr == *"loop-a: Too many levels of symbolic links"* ]]
	mkdir -p "$TMP/w/x"
	ln -s .. "$TMP/w/x/up"
	ln -s "$F/hello-marked" "$TMP/w/link"
	cp "$F/hello-plain" "$TMP/w/x/"
	run --separate-stderr timeout 20 "$CETCTL" elf -r -n -o FILE "$TMP"
	[ "$status" -eq 0 ]
	[ "$output" = "$TMP/w/x/hello-plain" ]
	# a symlink named on the command line is followed
	run --separate-stderr "$CETCTL" elf -n -o FILE,SHSTK "$TMP/w/link"
	[ "$status" -eq 0 ]
	[[ $output == *yes ]]
}

@test "elf -r: an entry the directory says is a regular file is not stat'ed by name" {
	# Issue 23: with -r the directory entry's type replaces the stat before
	# the open; the descriptor is still fstat'ed once opened. Symlinks and
	# FIFOs are known from their type too, and never opened.
	command -v strace >/dev/null || skip "strace not installed"
	[[ $CETCTL_BUILD != *asan* ]] || skip "ASan cannot run under strace (LeakSanitizer aborts)"
	mkdir "$TMP/n"
	for i in $(seq 1 20); do cp "$F/hello-marked" "$TMP/n/elf$i"; done
	cp "$F/not-elf.sh" "$TMP/n/"
	mkfifo "$TMP/n/fifo"
	ln -s elf1 "$TMP/n/link"
	strace -qq -f -e trace=stat,lstat,newfstatat,fstatat64,statx,openat -o "$TMP/trace" \
		"$CETCTL" elf -r -n -o FILE "$TMP/n" >"$TMP/out" 2>/dev/null
	[ "$(wc -l <"$TMP/out")" -eq 20 ]
	# no stat names an entry of the directory, by path or relative to it
	named=$(grep -E '(^|[ ])(stat|lstat|newfstatat|fstatat64|statx)\(.*"('"$TMP"'/n/[^"]*|elf[0-9]+|not-elf\.sh|fifo|link)"' \
		"$TMP/trace" || true)
	[[ -z $named ]] || { echo "stat by name: $named"; return 1; }
	# 21 regular files opened (the ELF ones and the script), each fstat'ed
	[ "$(grep -cE 'openat\(.*"(elf[0-9]+|not-elf\.sh)"' "$TMP/trace")" -eq 21 ]
	[ "$(grep -cE 'fstat(at)?\([0-9]+, "",.*AT_EMPTY_PATH|^[0-9 ]*fstat\(' "$TMP/trace")" -ge 21 ]
	if grep -E 'openat\(.*"(fifo|link)"' "$TMP/trace"; then return 1; fi
}

@test "elf: the plain table is laid out as libsmartcols lays it out" {
	# table-text.c lays out a flat table of printable ASCII cells itself (not on
	# a terminal); a cell with another byte sends the whole table to
	# libsmartcols. The same files, one named "zz" in one tree and "zé" in
	# the other (both one column wide in a UTF-8 locale), must give the
	# same table either way, but for that name.
	local set args
	# the second set: narrow cells, so that the width hints count (ARCH 6, LOADER 12)
	for set in "hello-marked hello-plain hello-static obj-marked.o obj-none.o start-marked-spie \
		    start32-marked startx32-marked deps/libtop.so made/note-align4" \
		   "start32-marked start32-unmarked"; do
		rm -rf "$TMP/a" "$TMP/b"
		mkdir "$TMP/a" "$TMP/b"
		for f in $set; do
			[ -f "$F/$f" ] || continue
			cp "$F/$f" "$TMP/a/"
			cp "$F/$f" "$TMP/b/"
		done
		cp "$F/start32-marked" "$TMP/a/zz"
		cp "$F/start32-marked" "$TMP/b/zé"
		for args in "" "-n" "-o FILE,NOTE,IBT" "-o +LAM,FEATURE_1_AND,ISA_NEEDED,ISA_USED,FEATURE_2_USED" \
			    "-o ARCH,FILE,TYPE,FILE" "--kernel-policy=block -o TYPE,KERNEL,LOADER" \
			    "-o ARCH,LOADER,IBT,FILE"; do
			# shellcheck disable=SC2086  # $args: options, split into words on purpose
			LC_ALL=C.UTF-8 "$CETCTL" elf -r $args "$TMP/a" 2>/dev/null |
				sed "s|$TMP/a/|X/|g" >"$TMP/plain" || true
			# shellcheck disable=SC2086  # $args: options, split into words on purpose
			LC_ALL=C.UTF-8 "$CETCTL" elf -r $args "$TMP/b" 2>/dev/null |
				sed "s|$TMP/b/|X/|g; s|zé|zz|g" >"$TMP/scols" || true
			[ -s "$TMP/plain" ]
			diff "$TMP/plain" "$TMP/scols" || { echo "layouts differ for: elf -r $args"; return 1; }
		done
	done
}

@test "elf: -n, --raw, -o and the summary line" {
	run --separate-stderr "$CETCTL" elf --kernel-policy=block -n --raw -o FILE,IBT,SHSTK,KERNEL "$F/hello-marked" "$F/hello-plain"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "$F/hello-marked yes yes $(refused | sed 's/ /\\x20/g')" ]
	[ "${lines[1]}" = "$F/hello-plain no no allows" ]
	[[ $stderr == *"2 ELF files: 1 shstk, 1 ibt, 0 notes ignored by the loader"* ]]
	run --separate-stderr "$CETCTL" elf -o +FEATURE_1_AND,FEATURE_2_USED,ISA_USED "$F/hello-marked"
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == FILE*KERNEL*FEATURE_1_AND*FEATURE_2_USED*ISA_USED ]]
	[[ ${lines[1]} == *0x3* ]]
}

@test "elf --json: one document with the files and a summary" {
	run --separate-stderr "$CETCTL" elf -J --kernel-policy=block "$F/hello-marked" "$F/hello-plain" \
		"$F/made/note-align4" "$F/made/note-static-unordered" "$F/not-elf.sh"
	[ "$status" -eq 1 ]
	jq -e '.files | length == 4' <<<"$output"
	jq -e '.summary | .files == 4 and .shstk == 1 and .ibt == 1 and .ignored == 2 and
		.enoexec == 0 and .errors == 1' <<<"$output"
	# the global -J works as well
	run "$CETCTL" -J elf "$F/hello-marked"
	[ "$status" -eq 0 ]
	jq -e '.files[0].shstk == true' <<<"$output"
}

@test "elf --deps: libc and ld.so are the weakest links of a marked program" {
	cd /
	run --separate-stderr "$CETCTL" elf --deps -J -o FILE,DEPS,DEPS_IBT,NDEPS,MISSING "$F/deps/app-marked"
	[ "$status" -eq 0 ]
	jq -e '.files[0] | .ndeps == 4 and .missing == []' <<<"$output"
	jq -e '.files[0].deps.verdict == "no"' <<<"$output"
	jq -e --arg f "$F/deps/app-marked" '.files[0].deps.objects | join(",") | contains("libc.so.6") and
		contains("ld-linux-x86-64.so.2") and (contains("libcetfix") | not) and
		(contains($f) | not)' <<<"$output"
}

@test "elf --deps: --raw names every object lacking the marking, never \"+N more\"" {
	# cetctl itself: not marked, nor is its closure (over 4 objects)
	run --separate-stderr "$CETCTL" elf --deps -J -o DEPS "$CETCTL"
	local n
	n=$(jq '.files[0].deps.objects | length' <<<"$output")
	[ "$n" -gt 4 ] || skip "the closure of $CETCTL has only $n unmarked objects"
	run --separate-stderr "$CETCTL" elf --deps -n --raw -o DEPS "$CETCTL"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output != *more* ]]
	# "no: (self),a,b,...": one name per object
	[ "$(sed 's/\\x20/ /g; s/^no: //' <<<"$output" | tr ',' '\n' | wc -l)" -eq "$n" ]
	# the table for a terminal still keeps the cell short
	run --separate-stderr "$CETCTL" elf --deps -n -o DEPS "$CETCTL"
	[[ $output == *" +$((n - 4)) more"* ]]
}

@test "elf --deps: RUNPATH and RPATH with \$ORIGIN, from another directory" {
	cd /
	run "$CETCTL" elf --deps -J -o FILE,NDEPS,MISSING "$F/deps/app-marked" "$F/deps/app-rpath"
	[ "$status" -eq 0 ]
	jq -e '[.files[] | .ndeps == 4 and .missing == []] | all' <<<"$output"
}

@test "elf --deps: a fully marked closure is ok, one unmarked object breaks it" {
	run "$CETCTL" elf --deps -J -o FILE,DEPS,DEPS_IBT,NDEPS "$F/deps/libtop.so" "$F/deps/libtop-weak.so"
	[ "$status" -eq 0 ]
	jq -e '.files[0] | .deps.verdict == "ok" and .deps_ibt.verdict == "ok" and .ndeps == 2' <<<"$output"
	jq -e '.files[1] | .deps.verdict == "no" and (.deps.objects | map(split("/")[-1])) == ["libcetfix-none.so"] and .ndeps == 2' <<<"$output"
	jq -e '.summary.deps_ok == 1' <<<"$output"
}

@test "elf --deps: missing libraries are named; static programs have no closure" {
	run "$CETCTL" elf --deps -J -o FILE,DEPS,MISSING "$F/deps/app-missing" "$F/start-marked"
	[ "$status" -eq 0 ]
	jq -e '.files[0].missing == ["libgone.so"]' <<<"$output"
	jq -e '.files[1].deps == null' <<<"$output"
}

@test "elf --deps: LD_LIBRARY_PATH is searched like the loader does" {
	mkdir "$TMP/l"
	cp "$F/deps/libcetfix-none.so" "$TMP/l/libcetfix.so"
	# RUNPATH comes after LD_LIBRARY_PATH: the unmarked copy wins
	LD_LIBRARY_PATH="$TMP/l" run "$CETCTL" elf --deps -J -o FILE,DEPS "$F/deps/libtop.so"
	[ "$status" -eq 0 ]
	jq -e '.files[0] | .deps.verdict == "no" and (.deps.objects | map(split("/")[-1])) == ["libcetfix.so"]' <<<"$output"
	# RPATH comes before it: the marked one next to the program wins
	LD_LIBRARY_PATH="$TMP/l" run "$CETCTL" elf --deps -J -o FILE,DEPS,NDEPS "$F/deps/app-rpath"
	[ "$status" -eq 0 ]
	jq -e '.files[0].deps.objects | join(",") | contains("libcetfix") | not' <<<"$output"
}

@test "elf --deps: a name already loaded is not searched again (DT_SONAME/name match)" {
	cd /
	run "$CETCTL" elf --deps -J -o FILE,NDEPS,MISSING "$F/deps/app-soname" "$F/deps/private/libouter.so"
	[ "$status" -eq 0 ]
	# libouter.so finds libinner.so only because the program loaded it first
	jq -e '.files[0] | .ndeps == 5 and .missing == []' <<<"$output"
	# on its own it cannot
	jq -e '.files[1] | .missing == ["libinner.so"]' <<<"$output"
}

@test "elf --deps: \$ORIGIN inside a DT_NEEDED name" {
	cd /
	run "$CETCTL" elf --deps -J -o FILE,NDEPS,MISSING "$F/deps/app-dollar"
	[ "$status" -eq 0 ]
	jq -e '.files[0] | .ndeps == 4 and .missing == []' <<<"$output"
}

@test "elf: the kernel column follows shstk_legacy_elf= on the (recorded) command line" {
	mkdir "$TMP/proc"
	echo "BOOT_IMAGE=/vmlinuz shstk_legacy_elf=allow quiet" >"$TMP/proc/cmdline"
	run --separate-stderr "$CETCTL" --proc-root "$TMP/proc" elf -n --raw -o KERNEL "$F/hello-marked" "$F/hello-plain"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 'allows\x20(policy\x20allow)' ]
	[ "${lines[1]}" = allows ]
	[[ $stderr == *"0 refused by the kernel policy"* ]]
	# the last one wins
	echo "shstk_legacy_elf=allow shstk_legacy_elf=block" >"$TMP/proc/cmdline"
	run --separate-stderr "$CETCTL" --proc-root "$TMP/proc" elf -n --raw -o KERNEL "$F/hello-marked"
	[ "$output" = refuses ]
	[[ $stderr == *"1 refused by the kernel policy"* ]]
	echo "no_shstk_legacy_elf=allow" >"$TMP/proc/cmdline"
	run --separate-stderr "$CETCTL" --proc-root "$TMP/proc" elf -n --raw -o KERNEL "$F/hello-marked"
	[ "$output" != 'allows\x20(policy\x20allow)' ]
}

# --- the KERNEL verdict models the legacy-ELF policy (issue 13) ---------------------------

@test "elf kernel: a dynamic program's own malformed note never fails the exec" {
	# binfmt_elf parses the interpreter's note; the program's own one only
	# decides the legacy-ELF policy, and a malformed one counts as unmarked
	for p in block allow; do
		run "$CETCTL" elf -J --kernel-policy=$p -o FILE,KERNEL "$F/made/note-unordered" \
			"$F/made/note-shortdesc" "$F/made/note-datasz8" "$F/made/note-big"
		[ "$status" -eq 0 ]
		jq -e "$JQ_KTEXT"'[.files[].kernel | ktext] == ["allows", "allows", "allows", "allows"]' <<<"$output"
		jq -e '.summary.enoexec == 0' <<<"$output"
	done
}

# elf -J FILE,KERNEL of the five interpreter fixtures (bad, marked, missing,
# not ELF, no NUL) judged for policy $1
elf_interp_fixtures() {
	"$CETCTL" elf -J --kernel-policy="$1" -o FILE,KERNEL "$F/made/note-interp-bad" \
		"$F/made/note-interp-marked" "$F/made/note-interp-missing" \
		"$F/made/note-interp-notelf" "$F/made/note-interp-nonul"
}

@test "elf kernel: the interpreter's note neither fails the exec nor counts as a marking" {
	run elf_interp_fixtures block
	echo "$output"
	# interp-notelf is shorter than an ELF header: elf_read() fails with EIO
	# a malformed note never fails exec on the series (its legacy-ELF patch), only PT_INTERP itself can
	jq -e "$JQ_KTEXT"'[.files[].kernel | ktext] == ["allows", "allows", "ENOENT", "EIO", "ENOEXEC"]' <<<"$output"
	# a longer file that is not ELF: ELIBBAD
	# a short path: it replaces the interpreter path inside the program
	local zeros
	zeros=$(mktemp /tmp/cz.XXXXXX)
	head -c 100 /dev/zero >"$zeros"
	chmod +x "$zeros"
	python3 - "$F/made/note-interp-notelf" "$TMP/prog" "$zeros" <<'PY'
import sys
data = open(sys.argv[1], 'rb').read()
end = data.index(b'/interp-notelf\0') + len(b'/interp-notelf')
old = data[data.rindex(b'\0', 0, end) + 1:end]
new = sys.argv[3].encode()
assert len(new) <= len(old), (new, old)
data = data.replace(old + b'\0', new + b'\0' * (len(old) - len(new) + 1), 1)
open(sys.argv[2], 'wb').write(data)
PY
	run "$CETCTL" elf -J --kernel-policy=block -o KERNEL "$TMP/prog"
	rm -f "$zeros"
	jq -e "$JQ_KTEXT"'(.files[0].kernel | ktext) == "ELIBBAD"' <<<"$output"
}

@test "elf kernel: n/a (not a program) for shared libraries, .o, core files and kernel images" {
	run "$CETCTL" elf -J --kernel-policy=block -o FILE,TYPE,KERNEL "$F/deps/libdollar.so" \
		"$F/obj-marked.o" "$F/made/core" "$F/made/vmlinux-like" "$F/made/interp-marked"
	echo "$output"
	jq -e "$JQ_KTEXT"'[.files[].kernel | ktext] | all(. == "n/a (not a program)")' <<<"$output"
	jq -e '.summary.kernel_refuses == 0' <<<"$output"
}

@test "elf kernel: without a legacy-ELF policy (mainline), exec failures are still predicted" {
	# mainline 6.12 has no policy, but execve still fails on a missing, short or
	# unreadable interpreter: "n/a (no policy)" only where the exec succeeds
	# (the elf oracle on the 6.12 reference kernel found the difference)
	run elf_interp_fixtures none
	echo "$output"
	jq -e "$JQ_KTEXT"'[.files[].kernel | ktext] == ["n/a (no policy)", "n/a (no policy)", "ENOENT", "EIO", "ENOEXEC"]' <<<"$output"
	jq -e '.summary.enoexec == 3 and .summary.kernel_policy == "none"' <<<"$output"
}

@test "elf kernel: --kernel-policy allow and none; a bad policy is a usage error" {
	run "$CETCTL" elf -J --kernel-policy=allow -o KERNEL "$F/hello-marked" "$F/made/note-static-unordered"
	jq -e "$JQ_KTEXT"'[.files[].kernel | ktext] == ["allows (policy allow)", "allows"] and
		.summary.kernel_policy == "allow"' <<<"$output"
	run "$CETCTL" elf -J --kernel-policy=none -o KERNEL "$F/hello-marked" "$F/made/note-static-unordered"
	jq -e "$JQ_KTEXT"'[.files[].kernel | ktext] == ["n/a (no policy)", "n/a (no policy)"] and
		.summary.enoexec == 0 and .summary.kernel_policy == "none"' <<<"$output"
	run --separate-stderr "$CETCTL" elf --kernel-policy=maybe "$F/hello-marked"
	[ "$status" -eq 1 ]
	[[ $stderr == *"unknown policy 'maybe'"* ]]
}

# kobj POLICY [PROC-ROOT] FILE -> the KERNEL member of `elf -J` for FILE
kobj() {
	local pol=$1; shift
	local root=()
	[ $# -lt 2 ] || { root=(--proc-root "$1"); shift; }
	"$CETCTL" "${root[@]}" elf -J --kernel-policy="$pol" -o KERNEL "$1" | jq -c '.files[0].kernel'
}

# ktable POLICY [PROC-ROOT] FILE -> the KERNEL cell of the raw table for FILE
ktable() {
	local pol=$1; shift
	local root=()
	[ $# -lt 2 ] || { root=(--proc-root "$1"); shift; }
	"$CETCTL" "${root[@]}" elf -n --raw --kernel-policy="$pol" -o KERNEL "$1" | sed 's/\\x20/ /g'
}

@test "elf -J kernel: an object {verdict, errno, reason} for every verdict, the table unchanged" {
	require_fixture start32-marked
	require_fixture startx32-marked
	local x32; x32=$(x32_tree on)
	local nox32; nox32=$(x32_tree off)
	# POLICY|ROOT|FILE|table text|JSON object (keys sorted, as jq -c -S prints them)
	while IFS='|' read -r pol root file text obj; do
		local args=("$pol")
		[ -z "$root" ] || args+=("$root")
		args+=("$file")
		got=$(kobj "${args[@]}" | jq -c -S .)
		[ "$got" = "$obj" ] || { echo "$file ($pol): JSON $got, want $obj"; return 1; }
		got=$(ktable "${args[@]}")
		[ "$got" = "$text" ] || { echo "$file ($pol): table '$got', want '$text'"; return 1; }
	done <<EOT
block||$F/hello-plain|allows|{"errno":null,"reason":null,"verdict":"allows"}
block||$F/hello-marked|refuses|{"errno":null,"reason":null,"verdict":"refuses"}
allow||$F/hello-marked|allows (policy allow)|{"errno":null,"reason":"policy allow","verdict":"allows"}
none||$F/hello-marked|n/a (no policy)|{"errno":null,"reason":"no policy","verdict":"n/a"}
block||$F/obj-marked.o|n/a (not a program)|{"errno":null,"reason":"not a program","verdict":"n/a"}
block||$F/made/core|n/a (not a program)|{"errno":null,"reason":"not a program","verdict":"n/a"}
block||$F/start32-marked|no-shstk (i386)|{"errno":null,"reason":"i386","verdict":"no-shstk"}
block|$x32|$F/startx32-marked|no-shstk (x32)|{"errno":null,"reason":"x32","verdict":"no-shstk"}
block|$nox32|$F/startx32-marked|ENOEXEC|{"errno":"ENOEXEC","reason":null,"verdict":"fails"}
block||$F/made/note-interp-missing|ENOENT|{"errno":"ENOENT","reason":null,"verdict":"fails"}
block||$F/made/note-interp-notelf|EIO|{"errno":"EIO","reason":null,"verdict":"fails"}
block||$F/made/note-interp-nonul|ENOEXEC|{"errno":"ENOEXEC","reason":null,"verdict":"fails"}
EOT
}

# every file of the fixtures: the JSON object says what the table says
@test "elf -J kernel: the objects of a whole tree agree with the table's KERNEL column" {
	local p
	for p in block allow none; do
		"$CETCTL" elf -r -n --raw --kernel-policy=$p -o FILE,KERNEL "$F" 2>/dev/null |
			sed 's/\\x20/ /g' | sort >"$TMP/table"
		"$CETCTL" elf -r -J --kernel-policy=$p -o FILE,KERNEL "$F" 2>/dev/null |
			jq -r "$JQ_KTEXT"'.files[] | "\(.file) \(.kernel | ktext)"' | sort >"$TMP/json"
		[ "$(wc -l <"$TMP/table")" -gt 30 ] || { echo "$p: too few files"; cat "$TMP/table"; return 1; }
		diff "$TMP/table" "$TMP/json" || { echo "policy $p: JSON and table differ"; return 1; }
	done
}

@test "elf kernel: the default policy is the kernel's: series config, mainline, no shstk" {
	local fix=$HOST_TESTS/fixtures/proc
	# the series' config (ALLOW_BROKEN not set): block
	run --separate-stderr "$CETCTL" --proc-root "$fix/cet-emulated" elf -n --raw -o KERNEL "$F/hello-marked"
	[ "$output" = refuses ]
	[[ $stderr == *"kernel policy block (CONFIG_X86_USER_SHADOW_STACK_ALLOW_BROKEN is not set)"* ]]
	# mainline 6.12 with shadow stacks: no such policy
	run --separate-stderr "$CETCTL" --proc-root "$fix/bochs-ref612" elf -n --raw -o KERNEL "$F/hello-marked"
	[ "$output" = 'n/a\x20(no\x20policy)' ]
	[[ $stderr == *"kernel policy none (the kernel has no legacy-ELF policy"* ]]
	# a kernel without shadow stacks, even with the boot parameter
	cp -a "$fix/host-nocet" "$TMP/nocet"
	echo "shstk_legacy_elf=block" >"$TMP/nocet/cmdline"
	run --separate-stderr "$CETCTL" --proc-root "$TMP/nocet" elf -n --raw -o KERNEL "$F/hello-marked"
	[ "$output" = 'n/a\x20(no\x20policy)' ]
	# the live kernel: what info says
	live=$("$CETCTL" info -J | jq -r '.info[] | select(.name == "legacy-elf") | .value')
	run --separate-stderr "$CETCTL" elf -J -o KERNEL "$F/hello-marked"
	case "$live" in
	none) jq -e "$JQ_KTEXT"'(.files[0].kernel | ktext) == "n/a (no policy)"' <<<"$output" ;;
	block|unknown) jq -e "$JQ_KTEXT"'(.files[0].kernel | ktext) == "refuses"' <<<"$output" ;;
	allow) jq -e "$JQ_KTEXT"'(.files[0].kernel | ktext) == "allows (policy allow)"' <<<"$output" ;;
	esac
}

@test "elf: relocatable objects are not counted as shstk/ibt in the summary" {
	run --separate-stderr "$CETCTL" elf -J "$F/obj-marked.o" "$F/hello-marked"
	[ "$status" -eq 0 ]
	jq -e '.files[0].shstk and .summary.files == 2 and .summary.shstk == 1 and .summary.ibt == 1' <<<"$output"
}
