#!/usr/bin/env bats
# The Debian guest itself: systemd as PID 1 reached multi-user, on our kernel as
# installed by its linux-image .deb, with cetctl installed by apt from its .deb.
load lib

@test "systemd is PID 1 and multi-user.target is active" {
	[ "$(cat /proc/1/comm)" = systemd ]
	run systemctl is-active multi-user.target
	echo "$output"
	[ "$output" = active ]
}

@test "the boot finished; only units this tier expects failed" {
	run systemctl is-system-running
	echo "state: $output"
	[[ $output == running || $output == degraded ]]
	failed=$(systemctl --failed --plain --no-legend | awk '{print $1}' | sort | tr '\n' ' ')
	echo "failed units: ${failed:-none}"
	# without CET (QEMU) lighttpd under `cetctl run --shstk` is refused: daemon.bats
	if has_cet; then
		[ -z "$failed" ]
	else
		[ "$failed" = "lighttpd.service " ]
	fi
}

@test "the running kernel is the one dpkg installed from the linux-image package" {
	rel=$(uname -r)
	run dpkg -S "/boot/vmlinuz-$rel"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "linux-image-$rel: /boot/vmlinuz-$rel" ]
	[ "$(dpkg-query -W -f '${Status}' "linux-image-$rel")" = "install ok installed" ]
	# our build (vm/build-kernel.sh), with the shadow-stack series
	grep -q 'cetctl@cetctl-build' /proc/version
	grep -q '^x86_Thread_features:' /proc/self/status
}

@test "cetctl is installed by apt from this checkout's .deb" {
	[ "$(dpkg-query -W -f '${Status}' cetctl)" = "install ok installed" ]
	apt-mark showmanual | grep -qx cetctl
	[ "$(dpkg -S /usr/bin/cetctl)" = "cetctl: /usr/bin/cetctl" ]
	v=$(dpkg-query -W -f '${Version}' cetctl)
	[ "$(deb_path v1)" = "/var/cache/cetctl-test/cetctl_${v}_amd64.deb" ]
	run cetctl --version
	[ "$status" -eq 0 ]
	[ -f /lib/systemd/system/cetctl-audit.timer ]
	[ "$(systemctl is-enabled cetctl-audit.timer)" = disabled ]
}
