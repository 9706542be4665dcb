#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# cetctl elf --compat: the compatibility verdict before a forced shadow stack
# (issue 31, part 3) on fixtures that carry one mark each
# (fixtures/compat.c, built by fixtures/build.sh) and on real programs.

load helpers

setup_file() {
	build_fixtures
}

setup() {
	require_cetctl
	[ -f "$FIXTURES/.stamp" ] || skip "fixtures not built"
	C=$FIXTURES/compat
	TMP=$(mktemp -d "${BATS_TMPDIR:-/tmp}/cetctl-compat.XXXXXX")
}

teardown() {
	[ -n "${TMP:-}" ] && rm -rf "$TMP"
}

# compat FILE -> the COMPAT member of FILE as compact JSON
compat() {
	"$CETCTL" elf -J --compat -o FILE,COMPAT "$1" | jq -c '.files[0].compat'
}

# compat_has FILE FILTER...: FILE's COMPAT member passes every jq FILTER
compat_has() {
	local f=$1 q
	shift
	run compat "$f"
	[ "$status" -eq 0 ] || { echo "$f: $output"; return 1; }
	for q; do
		jq -e "$q" <<<"$output" >/dev/null || { echo "$f: $output (want $q)"; return 1; }
	done
}

@test "elf --compat: every class, with the object and what matched" {
	local f want
	# file  verdict  match
	while read -r f want; do
		compat_has "$C/$f" "[.verdict, .match] == $want"
	done <<'EOF'
go-note ["incompatible","note Go/4"]
go-section-stripped ["incompatible",".go.buildinfo"]
go-symbol ["incompatible","runtime.morestack"]
fcontext-app ["incompatible","jump_fcontext"]
libboost_context.so.1.74.0 ["incompatible","libboost_context.so.1.74.0"]
pcre2-app ["unknown","pcre2_jit_compile_8"]
ucontext ["switches-covered","swapcontext"]
longjmp ["forced-safe","longjmp"]
plain ["forced-safe",null]
EOF
}

@test "elf --compat: reasons and covers say why" {
	compat_has "$C/go-note" '.reason | test("Go runtime")' '.cover == null and .errno == null'
	compat_has "$C/ucontext" '.cover == "preload" and (.reason | test("ucontext"))'
	compat_has "$C/longjmp" '.cover == "preload" and (.reason | test("longjmp"))'
	compat_has "$C/pcre2-app" '.reason == "JIT (PCRE2): not known to be safe"'
	compat_has "$C/plain" '.object != null and (.reason | test("not marked"))'
}

@test "elf --compat: static programs get no preload; without symbols, no verdict" {
	[ -f "$C/longjmp-static" ] || skip "$(grep compat "$FIXTURES/SKIPPED.txt")"
	compat_has "$C/longjmp-static" \
		'.verdict == "switches-uncovered" and .cover == "static" and .match == "longjmp"'
	compat_has "$C/static-stripped" '.verdict == "unknown" and (.reason | test("without symbols"))'
}

@test "elf --compat: the closure is judged, and the library that breaks it is named" {
	# the program's import first, then the library's name and definition
	compat_has "$C/fcontext-app" '.object | endswith("/compat/fcontext-app")' \
		'[.findings[] | select(.object | endswith("/libboost_context.so.1.74.0"))] |
		 map(.match) | sort == ["jump_fcontext", "libboost_context.so.1.74.0"]' \
		'.findings[0] == (del(.findings, .more))'
	# a library that is not there: unknown, named
	compat_has "$FIXTURES/deps/app-missing" \
		'.verdict == "unknown" and .match == "libgone.so" and .object == null'
	# marked through and through: the fixture closure without libc
	compat_has "$FIXTURES/deps/libtop.so" '.verdict == "marked" and .findings == []'
	compat_has "$FIXTURES/deps/libtop-weak.so" \
		'.verdict == "forced-safe" and (.object | endswith("libcetfix-none.so"))'
}

@test "elf --compat: the table says class, reason, object and match in one cell" {
	run --separate-stderr "$CETCTL" elf --compat -n -o COMPAT "$C/go-note" "$C/fcontext-app" \
		"$C/ucontext" "$C/plain" "$FIXTURES/deps/libtop.so"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "incompatible: Go runtime: it switches goroutine stacks itself (self: note Go/4)" ]
	[ "${lines[1]}" = "incompatible: Boost.Context: switches stacks in its own assembly (fcontext) (self: jump_fcontext)" ]
	[[ ${lines[2]} == "switches stacks, covered: ucontext"*"(self: swapcontext; mended by the preload library)" ]]
	[ "${lines[3]}" = "forced-safe" ]
	[ "${lines[4]}" = "marked" ]
	# the column is in the defaults with --compat only
	run --separate-stderr "$CETCTL" elf "$C/plain"
	[[ ${lines[0]} != *COMPAT* ]]
	run --separate-stderr "$CETCTL" elf --compat "$C/plain"
	[[ ${lines[0]} == *" COMPAT" ]]
	# -o COMPAT is enough, and --deps shares its resolver
	run --separate-stderr "$CETCTL" elf --deps -n -o DEPS,COMPAT "$C/go-note"
	[[ $output == "no: "*"incompatible: "* ]]
}

@test "elf --compat: no verdict for what is not an x86-64 program or library" {
	run --separate-stderr "$CETCTL" elf -J --compat -o FILE,COMPAT "$FIXTURES/obj-none.o" "$FIXTURES/made/core"
	jq -e '[.files[].compat] == [null, null]' <<<"$output"
	run --separate-stderr "$CETCTL" elf -n --compat -o COMPAT "$FIXTURES/obj-none.o"
	[ "$output" = "-" ]
	if [ -f "$FIXTURES/start32-unmarked" ]; then
		run --separate-stderr "$CETCTL" elf -J --compat -o COMPAT "$FIXTURES/start32-unmarked"
		jq -e '.files[0].compat == null' <<<"$output"
	fi
}

@test "elf --compat: a real Go program is incompatible (prometheus-node-exporter)" {
	local go=/usr/bin/prometheus-node-exporter
	[ -x "$go" ] || skip "$go not installed (Debian package prometheus-node-exporter)"
	run compat "$go"
	jq -e '.verdict == "incompatible" and (.reason | test("Go"))' <<<"$output"
	# both of its marks are found
	jq -e '[.findings[].match] | contains(["note Go/4", ".go.buildinfo"])' <<<"$output"
}

@test "elf --compat: real programs: bash forced-safe, grep's PCRE2 JIT unknown" {
	run compat /bin/bash
	jq -e '.verdict == "forced-safe"' <<<"$output"
	if nm -D --undefined-only /usr/bin/grep 2>/dev/null | grep -q pcre2_jit_compile_8; then
		run compat /usr/bin/grep
		jq -e '.verdict == "unknown" and .match == "pcre2_jit_compile_8"' <<<"$output"
	fi
}

@test "elf --compat: the JSON matches the schema, -r over the fixtures too" {
	python3 -c 'import jsonschema' 2>/dev/null || skip "python3-jsonschema not installed"
	"$CETCTL" elf -J --compat "$C"/* "$FIXTURES"/deps/app-* >"$TMP/o.json" 2>/dev/null
	python3 "$HOST_TESTS/schema/validate.py" "$HOST_TESTS/schema/elf.json" "$TMP/o.json"
	"$CETCTL" elf -r -J --compat "$FIXTURES" >"$TMP/r.json" 2>/dev/null || true
	python3 "$HOST_TESTS/schema/validate.py" "$HOST_TESTS/schema/elf.json" "$TMP/r.json"
	[ "$(jq '[.files[].compat | select(. != null)] | length' "$TMP/r.json")" -gt 20 ]
}

@test "elf --compat: a glibc >= 2.39 built without CET mends nothing (the preload does)" {
	# the rule of run and info (a recent glibc manages shadow stacks only when
	# its libc.so.6 is marked SHSTK), here with this host's unmarked libc.so.6
	# and a version a shim makes up
	! ldd "$CETCTL" | grep -q libasan || skip "an ASan cetctl takes no LD_PRELOAD shim"
	local libc
	libc=$(ldd "$CETCTL" | awk '$1 == "libc.so.6" { print $3 }')
	! readelf -n "$libc" | grep -q 'x86 feature:.*SHSTK' || skip "this host's $libc is marked SHSTK"
	gcc -shared -fPIC -o "$TMP/glibc-version.so" "$HOST_TESTS/tools/glibc-version.c"
	LD_PRELOAD=$TMP/glibc-version.so CETCTL_TEST_GLIBC_VERSION=2.41 \
		"$CETCTL" elf -J --compat -o FILE,COMPAT "$C/longjmp" "$C/ucontext" >"$TMP/o.json"
	jq -e '[.files[].compat.cover] == ["preload", "preload"]' "$TMP/o.json" ||
		{ cat "$TMP/o.json"; return 1; }
}
