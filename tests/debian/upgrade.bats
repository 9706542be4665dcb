#!/usr/bin/env bats
# Upgrading the cetctl package (apt installs a second build with a higher version,
# vm/debian-image.sh) on a system where the admin enabled the audit timer.
load lib

@test "before the upgrade: the audit timer is enabled and active" {
	systemctl enable --now cetctl-audit.timer
	[ "$(systemctl is-enabled cetctl-audit.timer)" = enabled ]
	[ "$(systemctl is-active cetctl-audit.timer)" = active ]
}

@test "apt upgrades cetctl to the higher version" {
	old=$(dpkg-query -W -f '${Version}' cetctl)
	new=$(dpkg-deb -f "$(deb_path v2)" Version)
	dpkg --compare-versions "$new" gt "$old"
	run env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$(deb_path v2)"
	echo "$output" | tail -n 8
	[ "$status" -eq 0 ]
	[ "$(dpkg-query -W -f '${Version} ${Status}' cetctl)" = "$new install ok installed" ]
}

@test "the upgrade keeps the audit timer enabled" {
	[ "$(systemctl is-enabled cetctl-audit.timer)" = enabled ]
}

@test "the upgrade keeps the audit timer active" {
	run systemctl is-active cetctl-audit.timer
	echo "cetctl-audit.timer after the upgrade: $output"
	# finding 1 of issue 21: dh_installsystemd --no-start made the maintainer
	# scripts stop the timer on upgrade, and nothing started it again (seen
	# before --restart-after-upgrade)
	[ "$output" = active ]
}
