#!/usr/bin/env bats
# Purging the cetctl package on a system that ran its audit timer: the units, their
# enablement state and the metrics file node_exporter serves must go.
load lib

PROM=/var/lib/prometheus/node-exporter/cetctl-audit.prom
METRICS=http://127.0.0.1:9100/metrics

@test "before the purge: the timer is enabled and the metrics file exists" {
	systemctl enable --now cetctl-audit.timer
	systemctl start cetctl-audit.service
	[ -f "$PROM" ]
	http "$METRICS" | grep -q '^cetctl_audit_processes_checked '
}

@test "apt purges cetctl: the package, its units and the timer are gone" {
	run env DEBIAN_FRONTEND=noninteractive apt-get purge -y cetctl
	echo "$output" | tail -n 8
	[ "$status" -eq 0 ]
	run dpkg-query -W -f '${Status}' cetctl
	[[ $output != *installed* ]]
	[ ! -e /lib/systemd/system/cetctl-audit.timer ]
	[ ! -e /lib/systemd/system/cetctl-audit.service ]
	[ ! -e /usr/bin/cetctl ]
}

@test "the purge stops the audit timer" {
	systemctl daemon-reload
	run systemctl is-active cetctl-audit.timer
	echo "cetctl-audit.timer after the purge: $output"
	# TODO(finding 1, issue 21): dh_installsystemd --no-start also leaves the package
	# without a prerm, so nothing stops the timer on removal: it stays active (its
	# unit file gone) until the next boot. Seen in 1 of 3 QEMU runs (racy). Known to
	# fail until the finding-1 fix (units stopped and started by the maintainer
	# scripts) is merged; the skip is taken ONLY on exactly that symptom. Remove it
	# with the fix.
	if [ "$output" = active ]; then
		skip "KNOWN FAILING, finding 1 (issue 21): the purge left cetctl-audit.timer active"
	fi
	[ "$output" != active ]
}

@test "purge removes the units' enablement state" {
	[ ! -e /etc/systemd/system/timers.target.wants/cetctl-audit.timer ]
	left=$(find /var/lib/systemd/deb-systemd-helper-enabled /var/lib/systemd/deb-systemd-helper-masked \
		-name 'cetctl-audit*' 2>/dev/null || true)
	echo "deb-systemd-helper state left: ${left:-none}"
	[ -z "$left" ]
	run systemctl list-unit-files 'cetctl-audit*' --no-legend
	echo "$output"
	[ -z "$output" ]
}

@test "purge removes the metrics file; node_exporter stops serving cetctl_* series" {
	present=0
	[ -e "$PROM" ] && present=1
	served=$(http "$METRICS" | grep -c '^cetctl_' || true)
	echo "metrics file present: $present, cetctl_* series served: $served"
	# TODO(finding 4, issue 21): the purge leaves cetctl-audit.prom behind and
	# node_exporter keeps serving stale cetctl_audit_* metrics. Known to fail until
	# that fix is merged; the skip is taken ONLY on exactly that symptom. Remove it
	# with the fix.
	if ((present)); then
		skip "KNOWN FAILING, finding 4 (issue 21): purge left $PROM ($served stale cetctl_* series served)"
	fi
	[ "$served" -eq 0 ]
}
