#!/usr/bin/env bats
# Where the shadow-stack ABI of our kernel series (Debian 12 tiers: debian, debian-bochs)
# and of mainline (Debian 13's 6.12: the debian13 tier) differ, as cetctl and the programs
# it runs see it; the same suite on both kernels, each test expecting its kernel's answer
# (series_kernel, lib.bash). README "Kernels" and kernel-series/PARITY.md (C1, C4) say why.
#   - the legacy-ELF policy (ours only): a program marked SHSTK in its ELF property note
#     gets EINVAL from the shadow-stack API, and cetctl names the policy; mainline has none
#   - ARCH_SHSTK_UNLOCK by the task itself: ours EINVAL always; mainline has no such case:
#     a locked feature gets EPERM, an unlocked one falls through to ENABLE
#   - the same on both: the x86_Thread_features lines, LOCK, DISABLE of a locked feature
load lib

# arch_prctl(2) from perl (syscall 158; 0x5001 ENABLE .. 0x5005 STATUS; feature bits
# SHSTK 1, WRSS 2): each call's result, "0" or the errno number, one word per call;
# STATUS as "s=<features>".
PRCTL='
sub ap { my $r = syscall(158, $_[0], $_[1]); print $r == -1 ? ($! + 0) : 0, " " }
sub st { my $b = pack("Q", 0); syscall(158, 0x5005, $b) == 0 or die "STATUS: $!";
	 print "s=", unpack("Q", $b), " " }
'
EPERM=1 EINVAL=22 EOPNOTSUPP=95

@test "cetctl info: the legacy-ELF policy is block on ours, none on mainline" {
	run cetctl info -n --raw -o NAME,VALUE
	echo "$output"
	if series_kernel; then
		grep -qx 'legacy-elf block' <<<"$output"
	else
		grep -qx 'legacy-elf none' <<<"$output"
	fi
}

@test "cetctl elf: the KERNEL column of a marked program: refuses on ours, no policy on mainline" {
	run cetctl elf -n --raw -o SHSTK,KERNEL "$HELPERS/shstk_elf_marked" "$HELPERS/shstk_elf_plain"
	echo "$output"
	if series_kernel; then
		[ "${lines[0]}" = "yes refuses" ]
	else
		[ "${lines[0]}" = "yes n/a\\x20(no\\x20policy)" ]
	fi
	[[ ${lines[1]} == "no "* && ${lines[1]} != *refuses* ]]
}

@test "a program marked SHSTK: the shadow-stack API refused on ours (EINVAL), given on mainline" {
	run "$HELPERS/shstk_elf_marked"
	echo "$output"
	if series_kernel; then
		# the policy refuses before anything else, CET or not
		[[ $output == "marked=1 enable=EINVAL map=EINVAL status=0 "* ]]
	else
		has_cet || skip "mainline without CET: nothing differs from an unmarked program"
		[[ $output == "marked=1 enable=0 map=0 status=0 "* ]]
	fi
	# the unmarked one: refused only for want of CET
	run "$HELPERS/shstk_elf_plain"
	echo "$output"
	if has_cet; then
		[[ $output == "marked=0 enable=0 map=0 status=0 "* ]]
	else
		[[ $output == "marked=0 enable=EOPNOTSUPP map=EOPNOTSUPP status=0 "* ]]
	fi
}

@test "cetctl run --shstk of a marked program: refused naming the policy on ours, runs on mainline" {
	has_cet || skip "no CET in this CPU: run --shstk refuses every program"
	run cetctl run --shstk -q -- "$HELPERS/shstk_elf_marked"
	echo "status $status: $output"
	if series_kernel; then
		[ "$status" -eq 125 ]
		[[ $output == *"carries the old IBT/SHSTK ELF marking (legacy-ELF policy"* ]]
		[[ $output != *marked=* ]]
	else
		[ "$status" -eq 0 ]
		# enabled and locked by cetctl: its own ENABLE is refused as locked
		[[ $output == "marked=1 enable=EPERM map=0 status=0 "* ]]
	fi
}

@test "the x86_Thread_features lines read the same on both kernels" {
	has_cet || skip "no CET in this CPU"
	run cetctl run --shstk -q -- grep '^x86_Thread_features' /proc/self/status
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = $'x86_Thread_features:\tshstk \nx86_Thread_features_locked:\tshstk wrss ' ]
}

# calls OURS MAINLINE CETCTL_OPTION... -- CALLS: the perl calls CALLS in a program started
# by cetctl run with the options; its output must be OURS on our kernel, MAINLINE on 6.12.
calls() {
	local ours=$1 mainline=$2 opts=()
	shift 2
	while [[ $1 != -- ]]; do opts+=("$1"); shift; done
	run cetctl run "${opts[@]}" -q -- perl -e "$PRCTL$2"
	echo "$output"
	[ "$status" -eq 0 ]
	if series_kernel; then
		[ "$output" = "$ours" ]
	else
		[ "$output" = "$mainline" ]
	fi
}

@test "ARCH_SHSTK_UNLOCK by a locked task itself: EINVAL on ours, EPERM on mainline" {
	has_cet || skip "no CET in this CPU"
	# enabled and locked (SHSTK and WRSS) by cetctl: UNLOCK WRSS, UNLOCK SHSTK, DISABLE SHSTK
	calls "s=1 $EINVAL $EINVAL $EPERM s=1 " "s=1 $EPERM $EPERM $EPERM s=1 " --shstk -- \
		'st; ap(0x5004, 2); ap(0x5004, 1); ap(0x5002, 1); st'
}

@test "ARCH_SHSTK_UNLOCK by an unlocked task itself: EINVAL on ours, an ENABLE on mainline" {
	has_cet || skip "no CET in this CPU"
	# --no-lock: SHSTK on, nothing locked. UNLOCK WRSS, then LOCK SHSTK, DISABLE SHSTK
	# (locked now: EPERM on both). Mainline's UNLOCK of the unlocked WRSS goes on to
	# ENABLE it: features 3
	calls "s=1 $EINVAL s=1 0 $EPERM s=1 " "s=1 0 s=3 0 $EPERM s=3 " --shstk --no-lock -- \
		'st; ap(0x5004, 2); st; ap(0x5003, 1); ap(0x5002, 1); st'
}

@test "no CET: ARCH_SHSTK_UNLOCK by the task itself is EINVAL on ours; LOCK takes, DISABLE is then EPERM" {
	has_cet && skip "this CPU has CET (the other tests cover it)"
	series_kernel || skip "the tiers without CET boot our kernel only"
	run perl -e "$PRCTL"'st; ap(0x5004, 1); ap(0x5001, 1); ap(0x5003, 1); ap(0x5002, 1); st'
	echo "$output"
	[ "$output" = "s=0 $EINVAL $EOPNOTSUPP 0 $EPERM s=0 " ]
}
