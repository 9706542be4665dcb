#!/usr/bin/env bats
# cetctl's commands on the real processes and files of a Debian 13 system with CET
# (Bochs): info, status, elf, audit and map, as a sysadmin there would use them.
load lib

setup() {
	has_cet || skip "no CET in this CPU"
}

teardown() {
	[[ -z ${bgpid:-} ]] || { kill "$bgpid" 2>/dev/null; wait "$bgpid" 2>/dev/null; } || true
}

# info_value NAME: the VALUE of a row of `cetctl info` (taken from $output)
info_value() { awk -v n="$1" '$1 == n { print $2 }' <<<"$output"; }

@test "info: supported; kernel config from /boot, no legacy-ELF policy, glibc 2.41 cannot enable" {
	run cetctl info
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(info_value supported)" = yes ]
	[ "$(info_value cpu-user-shstk)" = yes ]
	[ "$(info_value status-lines)" = yes ]
	# Debian's kernel has no /proc/config.gz: the config is the one in /boot
	[ "$(info_value kernel-config)" = yes ]
	grep -q "^kernel-config .*/boot/config-$(uname -r)" <<<"$output"
	# mainline: the series' legacy-ELF policy does not exist
	[ "$(info_value legacy-elf)" = none ]
	grep -q '^legacy-elf .*mainline' <<<"$output"
	[ "$(info_value glibc)" = 2.41 ]
	# glibc >= 2.39, but built without CET: only cetctl run --shstk enables
	[ "$(info_value glibc-can-enable)" = no ]
	grep -q '^glibc-can-enable .*built without CET' <<<"$output"
}

@test "status: systemd is not enabled (unmarked), a program under run --shstk is, and locked" {
	run cetctl status 1
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q 'not enabled' <<<"$output"
	cetctl run --shstk -q -- sleep 600 &
	bgpid=$!
	wait_for 60 grep -q 'shstk' "/proc/$bgpid/status"
	run cetctl status -n --raw -o PID,FEATURES,LOCKED,VERDICT "$bgpid"
	echo "$output"
	[ "$status" -eq 0 ]
	# cetctl run's exec replaces it: the PID is sleep's
	[ "$(readlink "/proc/$bgpid/exe")" = /usr/bin/sleep ]
	# (--raw writes a space inside a value as \x20)
	[ "$output" = "$bgpid shstk shstk\\x20wrss enabled\\x20and\\x20locked" ]
	run cetctl status -n --raw -o SS-SIZE "$bgpid"
	[ "$output" -gt 0 ]
}

@test "elf: no program or library of this Debian 13 system is marked for shadow stacks" {
	# every ELF file of /usr/bin, /usr/sbin and the multiarch library directory
	run cetctl elf -n --raw -o FILE,SHSTK /usr/bin/* /usr/sbin/* /usr/lib/x86_64-linux-gnu/*.so*
	echo "${lines[-1]}"
	marked=$(awk '$2 == "yes"' <<<"$output")
	echo "marked: ${marked:-none}"
	[ -z "$marked" ]
	# many files were read (not an empty or failed listing)
	((${#lines[@]} > 200))
	# and so no closure is: lighttpd's, as --deps says
	run cetctl elf --deps -n --raw -o DEPS /usr/sbin/lighttpd
	echo "$output"
	[[ $output == no:* ]]
}

@test "audit: every process is unprotected but the one cetctl started; --require says so" {
	cetctl run --shstk -q -- sleep 600 &
	bgpid=$!
	wait_for 60 grep -q 'shstk' "/proc/$bgpid/status"
	run cetctl audit -n --raw -o PID,SHSTK,SHSTK-LOCKED
	echo "$output"
	[ "$status" -eq 0 ]
	protected=$(awk '$2 == "yes" { print $1 }' <<<"$output" | tr '\n' ' ')
	echo "protected: $protected"
	[[ " $protected " == *" $bgpid "* ]]
	grep -Eq "^$bgpid yes yes$" <<<"$output"
	# systemd and the rest are not: the policy fails, naming them
	run cetctl audit --require shstk,locked
	[ "$status" -eq 1 ]
	grep -q 'do not meet --require shstk,locked' <<<"$output"
	run cetctl audit --require shstk,locked --pid "$bgpid"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "map: a shadow stack from map_shadow_stack, with its token, switched to and back" {
	run cetctl map --pivot
	echo "$output"
	[ "$status" -eq 0 ]
	grep -Eq '^token valid: +yes' <<<"$output"
	grep -Eq '^ss VMA: +yes' <<<"$output"
	grep -Eq '^on new stack: +yes' <<<"$output"
	grep -Eq '^returned: +yes' <<<"$output"
}
