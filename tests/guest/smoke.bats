#!/usr/bin/env bats
# Smoke checks of the guest image itself (vm/guest-init, vm/mkinitramfs.sh): run first,
# in every tier. If these fail, the other suites' results are not trustworthy.

@test "smoke: running the cetctl test kernel (6.1, -cetctl localversion)" {
	run uname -r
	[ "$status" -eq 0 ]
	if grep -qw cetctl.ref=1 /proc/cmdline; then
		# vm/run-ref.sh: the mainline reference kernel (Debian linux-source-6.12)
		[[ "$output" == 6.12.*-cetctl* ]]
	else
		[[ "$output" == 6.1.*-cetctl* ]]
	fi
}

@test "smoke: /proc, /sys and /dev are mounted by /init" {
	grep -q '^proc /proc proc' /proc/mounts
	grep -q ' /sys sysfs' /proc/mounts
	grep -q ' /dev devtmpfs' /proc/mounts
	[ -r /proc/self/status ]
	[ -c /dev/null ]
}

@test "smoke: /init passed a known tier (cetctl.tier=qemu|bochs)" {
	[[ "$CETCTL_TIER" == qemu || "$CETCTL_TIER" == bochs ]]
	grep -q "cetctl.tier=$CETCTL_TIER" /proc/cmdline
}

@test "smoke: cetctl --version runs in the guest" {
	[ -x /usr/bin/cetctl ] || skip "cetctl not in the image (build dir had no cetctl)"
	run cetctl --version
	[ "$status" -eq 0 ]
	[[ "$output" == *cetctl* ]]
}

@test "smoke: shared libraries and tools the suites use are present" {
	for t in bash grep sed awk find ps perl timeout dmesg cetctl-expect; do
		command -v "$t" >/dev/null || { echo "missing: $t"; return 1; }
	done
	run perl -e 'use strict; use warnings; print "ok\n"'
	[ "$output" = ok ]
}

@test "smoke: cetctl-expect registers a line in the kernel log" {
	cetctl-expect 'cetctl-smoke-marker-[0-9]+'
	dmesg | grep -q 'CETCTL-EXPECT cetctl-smoke-marker-\[0-9\]+'
}
