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
	# finding 1 of issue 21: the package had no prerm, so nothing stopped the
	# timer on removal (seen in 1 of 3 runs before debian/prerm)
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
	# finding 4 of issue 21: the purge left the file, and node_exporter served
	# its stale series (seen before debian/postrm removed it)
	[ "$present" -eq 0 ]
	[ "$served" -eq 0 ]
}
