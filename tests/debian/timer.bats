#!/usr/bin/env bats
# cetctl-audit.timer, enabled the way its comment says, fires; cetctl-audit.service
# writes its metrics and node_exporter in the guest serves cetctl_* series.
load lib

METRICS=http://127.0.0.1:9100/metrics
PROM=/var/lib/prometheus/node-exporter/cetctl-audit.prom

@test "node_exporter runs and serves its metrics on 127.0.0.1:9100" {
	run systemctl is-active prometheus-node-exporter.service
	[ "$output" = active ]
	wait_for 60 http "$METRICS" >/dev/null
	http "$METRICS" | grep -q '^node_textfile_scrape_error 0$'
}

@test "cetctl-audit.timer, enabled with --now, fires and the audit succeeds" {
	# the timer waits 5 min after boot (+ up to 5 min at random): a runtime
	# drop-in makes it fire 2 s after it starts, the way an admin would test it
	mkdir -p /run/systemd/system/cetctl-audit.timer.d
	printf '[Timer]\nOnActiveSec=2s\nRandomizedDelaySec=0\n' \
		> /run/systemd/system/cetctl-audit.timer.d/cetctl-test.conf
	systemctl daemon-reload
	rm -f "$PROM"
	systemctl enable --now cetctl-audit.timer
	[ "$(systemctl is-enabled cetctl-audit.timer)" = enabled ]
	fired() { [ "$(prop cetctl-audit.service ExecMainExitTimestampMonotonic)" != 0 ]; }
	wait_for 180 fired
	[ "$(prop cetctl-audit.timer LastTriggerUSecMonotonic)" != 0 ]
	run prop cetctl-audit.service Result
	echo "Result=$output ExecMainStatus=$(prop cetctl-audit.service ExecMainStatus)"
	journalctl -b -u cetctl-audit.service --no-pager | tail -n 5
	[ "$output" = success ]
	[ "$(prop cetctl-audit.service ExecMainStatus)" = 0 ]
	[ "$(systemctl is-active cetctl-audit.timer)" = active ]
	[ -f "$PROM" ]
	[ "$(stat -c %a "$PROM")" = 644 ]
}

@test "node_exporter in the guest serves the cetctl_* series of the audit" {
	body=$(http "$METRICS")
	grep -E '^cetctl_' <<<"$body" | head -n 20
	grep -Eq '^cetctl_audit_processes_checked [1-9][0-9]*$' <<<"$body"
	grep -q '^cetctl_audit_shstk_processes{state="disabled"}' <<<"$body"
	grep -q '^node_textfile_scrape_error 0$' <<<"$body"
	# the support gauge tells the truth for this CPU
	if has_cet; then
		grep -q '^cetctl_audit_shstk_supported 1$' <<<"$body"
	else
		grep -q '^cetctl_audit_shstk_supported 0$' <<<"$body"
	fi
}
