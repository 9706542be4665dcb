#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Why a process runs without a shadow stack (cetctl status/audit WHY-OFF,
# WHY-OBJECT and the verdict), on a RECORDED /proc tree, one process per reason
# (roles: on, weak, shstk-off, hwcaps-off, plain, unmarked-exe, permissive):
# tests/host/fixtures/proc/glibc-cet-bochs when it is there (recorded by
# tests/guest/glibc-cet.bats in the Bochs guest, emulated CET, from programs
# linked against Debian 13's glibc 2.41 built with CET), else
# proc/glibc-cet-derived (the same programs recorded on the host and edited:
# derive-why-fixtures.sh lists every edit).
# The objects its maps name are not on this machine: each test gives the
# recorded processes a `root` link to a sysroot holding what build-why.sh
# builds for the host (same names, sonames, DT_NEEDED and marking; stand-ins,
# never run, for the CET glibc's loader and libc).

load helpers

setup_file() {
	build_fixtures
}

setup() {
	require_cetctl
	REC=$HOST_TESTS/fixtures/proc/glibc-cet-bochs
	[ -f "$REC/roles" ] || REC=$HOST_TESTS/fixtures/proc/glibc-cet-derived
	[ -f "$REC/roles" ] || skip "no glibc-cet recording in tests/host/fixtures/proc"
	TMP=$(mktemp -d "${BATS_TMPDIR:-/tmp}/cetctl-why.XXXXXX")
	TREE=$TMP/tree
	SYS=$TMP/sysroot
	WHY=/usr/libexec/cetctl/why
	cp -a "$REC" "$TREE"
	mkdir -p "$SYS$WHY" "$SYS/opt/glibc-cet/lib"
	cp -a "$FIXTURES"/why/lib* "$FIXTURES"/why/why-* "$SYS$WHY/"
	cp -a "$FIXTURES"/why/glibc/libc.so.6 "$FIXTURES"/why/glibc/ld-linux-x86-64.so.2 \
		"$SYS/opt/glibc-cet/lib/"
	for d in "$TREE"/[0-9]*; do ln -s "$SYS" "$d/root"; done
}

teardown() {
	cleanup_test
}

quiet() { "$@" 2>/dev/null; }	# without the --proc-root note on stderr

pid_of() { awk -v r="$1" '$1 == r { print $2 }' "$TREE/roles"; }

# why ROLE [CMD]: "WHY-OFF WHY-OBJECT" of the recorded process (status or audit)
why() {
	local pid; pid=$(pid_of "$1")
	[ -n "$pid" ] || { echo "no role $1 in $TREE/roles"; return 1; }
	if [ "${2:-status}" = audit ]; then
		"$CETCTL" --proc-root "$TREE" audit -n --raw -o WHY-OFF,WHY-OBJECT --pid "$pid" 2>/dev/null
	else
		"$CETCTL" --proc-root "$TREE" status -n --raw -o WHY-OFF,WHY-OBJECT "$pid" 2>/dev/null
	fi
}

verdict() {
	"$CETCTL" --proc-root "$TREE" status -n -o VERDICT "$(pid_of "$1")" 2>/dev/null
}

@test "why-off: the recording is what the guest saw (on is on, the others are off)" {
	on=$(pid_of on)
	grep -q '^x86_Thread_features:.*shstk' "$TREE/$on/status"
	for r in weak shstk-off hwcaps-off plain unmarked-exe permissive; do
		p=$(pid_of "$r")
		[ -n "$p" ]
		! grep -q '^x86_Thread_features:.*shstk' "$TREE/$p/status"
	done
	run why on
	[ "$output" = " " ]
	[[ "$(verdict on)" == "enabled and locked"* ]]
}

@test "why-off: an unmarked library: the first in the loader's order, not the lowest mapped" {
	p=$(pid_of weak)
	# the premise: libwhy-z (needed by libwhy-a) is mapped below libwhy-b
	first=$(grep -o "$WHY/libwhy-[bz].so.1" "$TREE/$p/maps" | head -n1)
	[ "$first" = "$WHY/libwhy-z.so.1" ]
	run why weak
	[ "$output" = "unmarked $WHY/libwhy-b.so.1" ]
	run verdict weak
	[[ "$output" == "not enabled: $WHY/libwhy-b.so.1 is not marked: "* ]]
	run why weak audit
	[ "$output" = "unmarked $WHY/libwhy-b.so.1" ]
}

@test "why-off: glibc.cpu.x86_shstk=off and glibc.cpu.hwcaps=-SHSTK: the tunable" {
	run why shstk-off
	[ "$output" = "tunable-off " ]
	[[ "$(verdict shstk-off)" == *"glibc.cpu.x86_shstk=off"* ]]
	run why hwcaps-off
	[ "$output" = "tunable-off " ]
	[[ "$(verdict hwcaps-off)" == *"glibc.cpu.hwcaps=-SHSTK"* ]]
}

@test "why-off: no GLIBC_TUNABLES: never asked for" {
	[ ! -s "$TREE/$(pid_of plain)/environ" ]
	run why plain
	[ "$output" = "not-requested " ]
	[[ "$(verdict plain)" == *"glibc.cpu.hwcaps=SHSTK"* ]]
}

@test "why-off: an unmarked program is named itself" {
	run why unmarked-exe
	[ "$output" = "unmarked $WHY/why-plain" ]
}

@test "why-off: permissive: the dlopen'ed unmarked plugin" {
	run why permissive
	[ "$output" = "unmarked $WHY/why-plugin.so" ]
	[[ "$(verdict permissive)" == *"loaded after start-up"* ]]
	# the same process without the permissive tunable: glibc would have
	# refused that dlopen while the shadow stack was on, so it is not the reason
	p=$(pid_of permissive)
	printf 'GLIBC_TUNABLES=glibc.cpu.hwcaps=SHSTK\0' >"$TREE/$p/environ"
	run why permissive
	[ "$output" = "unknown " ]
}

@test "why-off: a glibc without CET support: its loader is named" {
	# Debian 12's loader in place of the CET one (a stand-in: release 2.36, unmarked)
	cp "$FIXTURES/why/glibc/ld-2.36.so" "$SYS/opt/glibc-cet/lib/ld-linux-x86-64.so.2"
	run why plain
	[ "$output" = "glibc-without-cet /opt/glibc-cet/lib/ld-linux-x86-64.so.2" ]
	[[ "$(verdict plain)" == *"older than 2.39"*"cetctl run --shstk"* ]]
	# and the real one of this host, in the derived cet-emulated tree
	run quiet "$CETCTL" --proc-root "$HOST_TESTS/fixtures/proc/cet-emulated" status -n --raw \
		-o WHY-OFF 3116
	[ "$output" = "glibc-without-cet" ]
}

@test "why-off: the CPU or the kernel cannot: no-support, before anything else" {
	sed -i 's/ user_shstk//g' "$TREE/cpuinfo"
	run why weak
	[ "$output" = "no-support " ]
	[[ "$(verdict weak)" == *"CPU"* ]]
	run quiet "$CETCTL" --proc-root "$HOST_TESTS/fixtures/proc/host-nocet" status -n --raw \
		-o WHY-OFF 3114
	[ "$output" = "no-support" ]
}

@test "why-off: our kernel's legacy-ELF policy (block) refused a marked program: kernel-policy" {
	# the recording's kernel lets marked programs have one (the glibc-cet boot
	# has shstk_legacy_elf=allow); the `on` process with its shadow stack gone,
	# asked for and every object marked: unknown under allow, the kernel's
	# policy under block (glibc's request fails: the interface says EINVAL)
	local pid d
	pid=$(pid_of on)
	for d in "$TREE/$pid" "$TREE/$pid"/task/*; do
		sed -i 's/^\(x86_Thread_features\(_locked\)\?:\).*/\1\t/' "$d/status"
	done
	grep -q 'shstk_legacy_elf=allow' "$TREE/cmdline"
	run why on
	[ "$output" = "unknown " ]
	sed -i 's/shstk_legacy_elf=allow/shstk_legacy_elf=block/' "$TREE/cmdline"
	run why on
	[ "$output" = "kernel-policy " ]
	run why on audit
	[ "$output" = "kernel-policy " ]
	[[ "$(verdict on)" == *"legacy-ELF policy"*"shstk_legacy_elf=allow"* ]]
	# not asked: that stays the reason, the kernel never saw a request
	run why plain
	[ "$output" = "not-requested " ]
	# mainline has no such policy (its config does not know ALLOW_BROKEN)
	zcat "$TREE/config.gz" | grep -v ALLOW_BROKEN | gzip > "$TREE/config.gz.new"
	mv "$TREE/config.gz.new" "$TREE/config.gz"
	run why on
	[ "$output" = "unknown " ]
}

@test "why-off: an unreadable environment is not taken for 'nothing asked'" {
	rm "$TREE/$(pid_of plain)/environ"
	run why plain
	[ "$output" = "unknown " ]
	[[ "$(verdict plain)" == *"GLIBC_TUNABLES"*"could not be read"* ]]
	# ...but an unmarked library is a reason whatever the tunables
	rm "$TREE/$(pid_of weak)/environ"
	run why weak
	[ "$output" = "unmarked $WHY/libwhy-b.so.1" ]
}

@test "why-off: -J carries why-off and why-object with the verdict, for status and audit" {
	p=$(pid_of weak)
	"$CETCTL" --proc-root "$TREE" status -J "$p" 2>/dev/null >"$TMP/s.json"
	[ "$(jq -r '.processes[0]["why-off"]' "$TMP/s.json")" = unmarked ]
	[ "$(jq -r '.processes[0]["why-object"]' "$TMP/s.json")" = "$WHY/libwhy-b.so.1" ]
	"$CETCTL" --proc-root "$TREE" audit -J 2>/dev/null >"$TMP/a.json"
	[ "$(jq -r --argjson p "$p" '.processes[] | select(.pid == $p) | .["why-object"]' "$TMP/a.json")" = "$WHY/libwhy-b.so.1" ]
	if python3 -c 'import jsonschema' 2>/dev/null; then
		python3 "$HOST_TESTS/schema/validate.py" "$HOST_TESTS/schema/status.json" "$TMP/s.json"
		python3 "$HOST_TESTS/schema/validate.py" "$HOST_TESTS/schema/audit.json" "$TMP/a.json"
	fi
	# a process with a shadow stack: null, not an empty string
	[ "$(jq -r --argjson p "$(pid_of on)" '.processes[] | select(.pid == $p) | .["why-off"]' "$TMP/a.json")" = null ]
}

@test "why-off: an object whose name is not UTF-8 is named in valid JSON" {
	p=$(pid_of weak)
	bad=$'libwhy-b\xff.so.1'
	sed -i "s|$WHY/libwhy-b.so.1|$WHY/$bad|" "$TREE/$p/maps"
	mv "$SYS$WHY/libwhy-b.so.1" "$SYS$WHY/$bad"
	# matched by its DT_SONAME, not its file name
	"$CETCTL" --proc-root "$TREE" status -J "$p" 2>/dev/null >"$TMP/s.json"
	python3 -c 'import json,sys; d=json.loads(open(sys.argv[1],"rb").read().decode("utf-8","strict")); print(d["processes"][0]["why-object"])' \
		"$TMP/s.json" >"$TMP/obj"
	[ "$(cat "$TMP/obj")" = "$WHY/libwhy-b"$'\xef\xbf\xbd'".so.1" ]
}
