#!/usr/bin/env bats
# The Debian 13 guest itself: trixie's systemd as PID 1 reached multi-user, on Debian 13's
# kernel (linux-source-6.12 with Debian's config, no series of ours: vm/debian13/README.md),
# with cetctl installed by apt from the checkout's .deb (the bookworm build).
bats_require_minimum_version 1.5.0
load lib

@test "systemd is PID 1 and multi-user.target is active, nothing failed" {
	[ "$(cat /proc/1/comm)" = systemd ]
	run systemctl is-active multi-user.target
	[ "$output" = active ]
	run systemctl is-system-running
	echo "state: $output"
	failed=$(systemctl --failed --plain --no-legend | awk '{print $1}' | tr '\n' ' ')
	echo "failed units: ${failed:-none}"
	[ "$output" = running ]
	[ -z "$failed" ]
}

@test "this is Debian 13 with glibc 2.41, whose C library is not marked for shadow stacks" {
	grep -q '^13\.' /etc/debian_version
	grep -qx 'VERSION_CODENAME=trixie' /etc/os-release
	run getconf GNU_LIBC_VERSION
	[ "$output" = "glibc 2.41" ]
	# Debian builds glibc without --enable-cet: neither the loader nor libc is marked
	# (the summary line goes to stderr)
	run --separate-stderr cetctl elf -n --raw -o SHSTK,LOADER /usr/lib/x86_64-linux-gnu/libc.so.6 \
		/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2
	echo "$output"
	[ "$output" = $'no none\nno none' ]
}

@test "the kernel is Debian 13's 6.12 with Debian's config and no series of ours" {
	rel=$(uname -r)
	echo "kernel $rel: $(cat /proc/version)"
	[[ $rel == 6.12.* ]]
	# the test build of vm/build-kernel.sh --debian13, laid out as Debian's package does
	grep -q 'cetctl@cetctl-build' /proc/version
	cfg=/boot/config-$rel
	grep -qx 'CONFIG_X86_USER_SHADOW_STACK=y' "$cfg"
	# Debian's own config: its distribution strings, no legacy-ELF policy (ours only)
	grep -qx 'CONFIG_MODULE_SIG=y' "$cfg"
	grep -qx 'CONFIG_SECURITY_APPARMOR=y' "$cfg"
	if series_kernel; then false; fi
	grep -q '^x86_Thread_features:' /proc/self/status
	grep -qw user_shstk /proc/cpuinfo
}

@test "the boot has only the documented Bochs workarounds (vm/debian13/README.md)" {
	cmd=$(cat /proc/cmdline)
	echo "$cmd"
	for p in nopku clearcpuid=avx,fsrm cet_bochs_cpuid cet_xinuse_quirk; do
		[[ " $cmd " == *" $p "* ]]
	done
	# the patch says it is active (vm/bochs/cet-bochs27-quirks.patch)
	dmesg | grep 'TEST-ONLY Bochs 2.7 quirks: cet_bochs_cpuid=1'
	[ -r /proc/cet_bochs_quirk ]
	cat /proc/cet_bochs_quirk
}

@test "cetctl is installed by apt from the checkout's .deb, its dependencies from trixie" {
	[ "$(dpkg-query -W -f '${Status}' cetctl)" = "install ok installed" ]
	[ "$(dpkg -S /usr/bin/cetctl)" = "cetctl: /usr/bin/cetctl" ]
	# the bookworm build's libelf1 dependency is met by trixie's libelf1t64
	[ "$(dpkg-query -W -f '${Status}' libelf1t64)" = "install ok installed" ]
	run cetctl --version
	[ "$status" -eq 0 ]
}
