#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# cetctl audit --prometheus as a sysadmin runs it: the real
# prometheus-node-exporter (Debian package) with its textfile collector
# reads the directory cetctl writes into, and /metrics is scraped with curl.
# The exporter listens on 127.0.0.1 only, on a free port, with every other
# collector off, runs as nobody when we are root (as Debian runs it as
# 'prometheus', never as the user who wrote the file), and is stopped in
# teardown; every wait is bounded.
#
# promtool is not used: in Debian 12 it only comes in the 'prometheus'
# package, which is the Prometheus server itself (and its service).

load helpers

EXPORTER=${CETCTL_NODE_EXPORTER:-prometheus-node-exporter}

setup() {
	require_cetctl
	command -v "$EXPORTER" >/dev/null ||
		skip "$EXPORTER not installed (Debian package prometheus-node-exporter, vm/install-deps.sh)"
	command -v curl >/dev/null || skip "curl not installed"
	bg=()
	# not under BATS_TEST_TMPDIR: its parents are 0700, and the exporter
	# runs as another user
	TMP=$(mktemp -d /tmp/cetctl-ne.XXXXXX)
	chmod 755 "$TMP"
	TEXTDIR=$TMP/textfile
	mkdir -m 755 "$TEXTDIR"
	FIX=$HOST_TESTS/fixtures/proc
}

teardown() {
	[ -z "${TMP:-}" ] || [ ! -f "$TMP/exporter.log" ] || sed 's/^/# exporter: /' "$TMP/exporter.log" | tail -n 5
	cleanup_test
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Start the exporter on a free loopback port; sets PORT. A port taken
# between free_port and the exporter's bind is retried.
start_exporter() {
	local as=()
	[ "$(id -u)" -ne 0 ] || as=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
	for _ in 1 2 3; do
		PORT=$(free_port)
		timeout 120 "${as[@]}" "$EXPORTER" \
			--web.listen-address="127.0.0.1:$PORT" \
			--collector.disable-defaults --collector.textfile \
			--collector.textfile.directory="$TEXTDIR" \
			--web.disable-exporter-metrics >"$TMP/exporter.log" 2>&1 &
		bg+=($!)
		for _ in $(seq 50); do
			curl -sf -m 2 -o /dev/null "http://127.0.0.1:$PORT/metrics" && return 0
			kill -0 "${bg[-1]}" 2>/dev/null || break
			sleep 0.1
		done
		kill "${bg[-1]}" 2>/dev/null || true
	done
	echo "exporter did not come up on 127.0.0.1:$PORT" >&2
	cat "$TMP/exporter.log" >&2
	return 1
}

scrape() {
	curl -sf -m 5 "http://127.0.0.1:$PORT/metrics" >"$TMP/scrape.txt"
}

# value NAME_WITH_LABELS: the value of one series in the last scrape
value() {
	# ENVIRON, not -v: awk -v would undo the backslash escapes
	S=$1 awk 'index($0, ENVIRON["S"] " ") == 1 { print substr($0, length(ENVIRON["S"]) + 2) }' "$TMP/scrape.txt"
}

@test "node_exporter: serves cetctl's metrics (umask 077, exporter as another user), values and labels intact" {
	start_exporter
	umask 077
	run "$CETCTL" --proc-root "$FIX/cet-emulated" audit -o PID -n --require shstk,locked \
		--label 'note=say "hi" \o/' --prometheus "$TEXTDIR"
	umask 022
	[ "$status" -eq 1 ]	# offenders
	[ -f "$TEXTDIR/cetctl-audit.prom" ]
	scrape
	grep '^cetctl_\|^node_textfile' "$TMP/scrape.txt" | sed 's/^/# /' >&3
	[ "$(value node_textfile_scrape_error)" = 0 ]
	l='note="say \"hi\" \\o/"'
	[ "$(value "cetctl_audit_processes_checked{$l}")" = 7 ]
	[ "$(value "cetctl_audit_shstk_processes{$l,state=\"enabled_locked\"}")" = 3 ]
	[ "$(value "cetctl_audit_shstk_processes{$l,state=\"disabled\"}")" = 2 ]
	[ "$(value "cetctl_audit_offending_processes{$l,require=\"shstk,locked\"}")" = 4 ]
	[ "$(value "cetctl_audit_shstk_supported{$l}")" = 1 ]
	[ "$(value "cetctl_audit_skipped_processes{$l,reason=\"kernel_thread\"}")" = 1 ]
	# every series cetctl wrote came through, each with HELP and gauge TYPE
	wrote=$(grep -vc '^#' "$TEXTDIR/cetctl-audit.prom")
	[ "$(grep -c '^cetctl_audit_' "$TMP/scrape.txt")" -eq "$wrote" ]
	for m in $(grep '^# TYPE cetctl_' "$TEXTDIR/cetctl-audit.prom" | cut -d' ' -f3); do
		grep -q "^# TYPE $m gauge$" "$TMP/scrape.txt"
	done
}

@test "node_exporter: a live audit next to a broken file: the error shows, cetctl's series stay" {
	start_exporter
	run "$CETCTL" audit -o PID -n --prometheus "$TEXTDIR/live.prom"
	[ "$status" -eq 0 ]
	scrape
	[ "$(value node_textfile_scrape_error)" = 0 ]
	n=$(value cetctl_audit_processes_checked)
	[ "$n" -gt 0 ]
	# a file the collector cannot parse is reported, not silently dropped
	printf 'cetctl_broken{x="unterminated} 1\n' >"$TEXTDIR/broken.prom"
	chmod 644 "$TEXTDIR/broken.prom"
	scrape
	[ "$(value node_textfile_scrape_error)" = 1 ]
	[ -n "$(value cetctl_audit_processes_checked)" ]
	rm "$TEXTDIR/broken.prom"
	scrape
	[ "$(value node_textfile_scrape_error)" = 0 ]
}

@test "node_exporter: a 0600 file (what umask 077 gave before) is a scrape error" {
	# the failure the 0644 fix is about, shown against the real collector
	[ "$(id -u)" -eq 0 ] || skip "needs root to run the exporter as another user"
	start_exporter
	run "$CETCTL" --proc-root "$FIX/cet-emulated" audit -o PID -n --prometheus "$TEXTDIR/x.prom"
	[ "$status" -eq 0 ]
	chmod 600 "$TEXTDIR/x.prom"
	scrape
	[ "$(value node_textfile_scrape_error)" = 1 ]
	[ -z "$(value cetctl_audit_processes_checked)" ]
}
