#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# The systemd units (systemd/): installed by cmake --install, checked by
# systemd-analyze verify (units, the ExecStart binary, the man page named
# in Documentation=), sandboxed without hiding /proc, and their command is
# one cetctl accepts and that writes the metrics.

load helpers

setup() {
	require_cetctl
	[ -f "$CETCTL_BUILD/CMakeCache.txt" ] || skip "no CMake build at $CETCTL_BUILD"
	# shellcheck disable=SC2034  # bg: read by cleanup_test in teardown
	bg=()
	TMP=$(mktemp -d "${BATS_TMPDIR:-/tmp}/cetctl-systemd.XXXXXX")
	# the prefix is the test directory itself, so ExecStart names a binary
	# that exists and systemd-analyze can check it
	P=$TMP/usr
	run cmake --install "$CETCTL_BUILD" --prefix "$P"
	[ "$status" -eq 0 ] || { echo "$output"; return 1; }
	U=$P/lib/systemd/system
}

teardown() {
	cleanup_test
}

verify() {
	MANPATH=$P/share/man SYSTEMD_LOG_COLOR=0 systemd-analyze verify "$@" 2>&1
}

@test "systemd: service and timer installed, ExecStart names the installed cetctl" {
	[ "$(stat -c %a "$U/cetctl-audit.service")" = 644 ]
	[ "$(stat -c %a "$U/cetctl-audit.timer")" = 644 ]
	grep -qx "ExecStart=$P/bin/cetctl audit -o PID -n --prometheus /var/lib/prometheus/node-exporter" \
		"$U/cetctl-audit.service"
	grep -qx 'OnUnitActiveSec=1h' "$U/cetctl-audit.timer"
	grep -qx 'WantedBy=timers.target' "$U/cetctl-audit.timer"
}

@test "systemd: systemd-analyze verify accepts both units (and rejects a broken copy)" {
	command -v systemd-analyze >/dev/null || skip "systemd-analyze not installed (package systemd)"
	run verify "$U/cetctl-audit.service" "$U/cetctl-audit.timer"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	# the check can fail: an unknown key is reported
	mkdir "$TMP/broken"
	sed -e 's/^NoNewPrivileges=/NoNewPrivilege=/' \
		"$U/cetctl-audit.service" >"$TMP/broken/cetctl-audit.service"
	run verify "$TMP/broken/cetctl-audit.service"
	echo "$output"
	[[ "$output" == *NoNewPrivilege* ]]
}

@test "systemd: sandboxed, but /proc of every process stays readable" {
	s=$U/cetctl-audit.service
	grep -qx 'ProtectSystem=strict' "$s"
	grep -qx 'NoNewPrivileges=yes' "$s"
	grep -qx 'ReadWritePaths=-/var/lib/prometheus/node-exporter' "$s"
	grep -qx 'PrivateNetwork=yes' "$s"
	# these would hide other processes or /proc files cetctl reads
	! grep -E '^(ProtectProc|ProcSubset|PrivatePIDs|User|DynamicUser)=' "$s" || false
	# the capabilities it keeps are those needed to read other users' /proc
	grep -qx 'CapabilityBoundingSet=CAP_SYS_PTRACE CAP_DAC_READ_SEARCH' "$s"
	command -v systemd-analyze >/dev/null || skip "systemd-analyze not installed (package systemd)"
	run systemd-analyze security --offline=true --no-pager "$s"
	echo "$output" | tail -n 1
	level=$(sed -n 's/.*Overall exposure level for cetctl-audit.service: \([0-9.]*\).*/\1/p' <<<"$output")
	[ -n "$level" ]
	# 10 is fully exposed; under 3 is what systemd calls OK or better
	awk -v l="$level" 'BEGIN { exit !(l < 3) }'
}

@test "systemd: the service's command line works (into a test directory)" {
	line=$(sed -n 's/^ExecStart=//p' "$U/cetctl-audit.service")
	read -r -a cmd <<<"${line//\/var\/lib\/prometheus\/node-exporter/$TMP}"
	[ "${cmd[0]}" = "$P/bin/cetctl" ]
	run "${cmd[@]}"
	[ "$status" -eq 0 ]
	grep -q '^cetctl_audit_processes_checked [1-9]' "$TMP/cetctl-audit.prom"
}
