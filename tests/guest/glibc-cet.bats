#!/usr/bin/env bats
# A glibc that manages shadow stacks itself, for real: Debian 13's glibc 2.41
# built WITH CET (vm/build-glibc-cet.sh, in the image at /opt/glibc-cet only
# with vm/mkinitramfs.sh --glibc-cet DIR), and the why-off programs linked
# against it (tests/host/fixtures/build-why.sh, in /usr/libexec/cetctl/why).
# Under emulated CET (Bochs): asked for with GLIBC_TUNABLES=glibc.cpu.hwcaps=SHSTK,
# the marked program runs with a shadow stack (its status says so); each way
# glibc leaves it off makes `cetctl status PID` say why:
#   an unmarked library -> "unmarked", naming the first one in the loader's order
#   glibc.cpu.x86_shstk=off, glibc.cpu.hwcaps=-SHSTK -> "tunable-off"
#   no tunable -> "not-requested"; an unmarked program -> "unmarked", the program
#   x86_shstk=permissive and a dlopen of an unmarked plugin -> "unmarked", the plugin
# With cetctl.record=1 on the kernel command line the processes are recorded for
# the host tests (tests/host/fixtures/proc/glibc-cet-bochs, see lib/record.bash).
# No jq in the guest: the text output is checked (-n --raw -o ...).

bats_require_minimum_version 1.5.0
load lib/common
load lib/record

WHY=/usr/libexec/cetctl/why
GLIBC=/opt/glibc-cet

setup() {
	[[ -x $GLIBC/lib/ld-linux-x86-64.so.2 ]] ||
		skip "no CET glibc in this image (vm/mkinitramfs.sh --glibc-cet \$(vm/build-glibc-cet.sh))"
	[[ -x $WHY/why-marked ]] || fail "the CET glibc is there but the why-off programs are not"
	CETCTL=${CETCTL:-$(command -v cetctl)}
	bg=()
}

teardown() {
	stop_bg
}

# start TUNABLES PROG [ARGS]: PROG in the background with GLIBC_TUNABLES=TUNABLES
# ("-" for none); waits for its "ready" line; the pid in $pid, its output in $out.
start() {
	local tun=$1; shift
	out=$BATS_TEST_TMPDIR/out.$RANDOM
	if [[ $tun == - ]]; then
		env -u GLIBC_TUNABLES "$@" >"$out" 2>&1 &
	else
		env GLIBC_TUNABLES="$tun" "$@" >"$out" 2>&1 &
	fi
	pid=$!
	bg+=("$pid")
	for _ in $(seq 200); do grep -q '^ready' "$out" && break; sleep 0.1; done
	grep -q '^ready' "$out" || fail "$* did not start: $(cat "$out")"
}

features() {	# features PID: the x86_Thread_features words
	sed -n 's/^x86_Thread_features:[[:space:]]*//p' "/proc/$1/status"
}

why() {	# why PID: "WHY-OFF WHY-OBJECT" from cetctl status
	"$CETCTL" status -n --raw -o WHY-OFF,WHY-OBJECT "$1"
}

# off_because TUNABLES "WHY-OFF WHY-OBJECT" PROG [ARGS]: started so, PROG runs
# without a shadow stack and cetctl status gives that reason
off_because() {
	local tun=$1 expect=$2
	shift 2
	start "$tun" "$@"
	[[ $(features "$pid") != *shstk* ]] || fail "$*: a shadow stack with GLIBC_TUNABLES=$tun"
	run -0 why "$pid"
	[[ $output == "$expect" ]] || fail "$*: '$output', expected '$expect'"
}

# glibc_can_enable: skip unless the kernel lets glibc enable a shadow stack for a
# marked program. Our series' legacy-ELF policy, block by default, refuses the
# shadow-stack interface (EINVAL) to every executable with the SHSTK or IBT bit, so
# glibc's ARCH_SHSTK_ENABLE fails and the program runs without one; mainline has no
# such policy. tests/run-all.sh boots this suite with shstk_legacy_elf=allow.
glibc_can_enable() {
	local n v rest
	while read -r n v rest; do
		[[ $n == legacy-elf ]] || continue
		[[ $v != block ]] ||
			skip "legacy-ELF policy block (our series' default) refuses glibc's enable for marked programs: boot with shstk_legacy_elf=allow"
		return 0
	done < <("$CETCTL" info 2>/dev/null)
	return 0
}

@test "glibc-cet: the CET glibc's own objects are marked, its loader is 2.41" {
	# stderr has the summary line (which counts the policy's refusals)
	run -0 --separate-stderr "$CETCTL" elf -n --raw -o SHSTK $GLIBC/lib/ld-linux-x86-64.so.2 $GLIBC/lib/libc.so.6
	[[ $output == $'yes\nyes' ]] || fail "not marked: $output"
	run -0 $GLIBC/lib/ld-linux-x86-64.so.2 --version
	[[ $output == *"release version 2.41"* ]] || fail "$output"
}

@test "glibc-cet: asked with glibc.cpu.hwcaps=SHSTK, the marked program runs with a shadow stack" {
	require_shstk
	glibc_can_enable
	start glibc.cpu.hwcaps=SHSTK $WHY/why-marked
	[[ $(features "$pid") == *shstk* ]] || fail "no shadow stack: $(grep ^x86 "/proc/$pid/status")"
	# glibc locks what it enabled
	grep -q '^x86_Thread_features_locked:.*shstk' "/proc/$pid/status" || fail "not locked"
	run -0 "$CETCTL" status -n -o VERDICT "$pid"
	[[ $output == "enabled and locked" ]] || fail "$output"
	run -0 why "$pid"
	[[ $output == " " ]] || fail "a reason for a process that has one: $output"
}

@test "glibc-cet: legacy-ELF policy block (our series' default): glibc asks, the kernel refuses" {
	require_shstk
	local n v rest policy=
	while read -r n v rest; do [[ $n == legacy-elf ]] && policy=$v; done < <("$CETCTL" info 2>/dev/null)
	[[ $policy == block ]] || skip "legacy-ELF policy is '$policy', not block (this boot has shstk_legacy_elf=allow)"
	start glibc.cpu.hwcaps=SHSTK $WHY/why-marked
	[[ $(features "$pid") != *shstk* ]] ||
		fail "a marked program got a shadow stack under the block policy: $(grep ^x86 "/proc/$pid/status")"
	# and cetctl says why
	run -0 why "$pid"
	[[ $output == "kernel-policy " ]] || fail "'$output', expected 'kernel-policy '"
}

@test "glibc-cet: an unmarked library: cetctl names the first in the loader's order, not the lowest" {
	require_shstk
	off_because glibc.cpu.hwcaps=SHSTK "unmarked $WHY/libwhy-b.so.1" $WHY/why-weak
	# the premise: libwhy-z (needed by libwhy-a) is loaded last, so mapped lowest
	first=$(grep -o '/usr/libexec/cetctl/why/libwhy-[bz].so.1' "/proc/$pid/maps" | head -n1)
	[[ $first == $WHY/libwhy-z.so.1 ]] || fail "maps order not as expected: $first first"
	run -0 "$CETCTL" status -n -o VERDICT "$pid"
	[[ $output == "not enabled: $WHY/libwhy-b.so.1 is not marked"* ]] || fail "$output"
}

@test "glibc-cet: glibc.cpu.x86_shstk=off and glibc.cpu.hwcaps=-SHSTK: the tunable is the reason" {
	require_shstk
	off_because glibc.cpu.hwcaps=SHSTK:glibc.cpu.x86_shstk=off "tunable-off " $WHY/why-marked
	off_because glibc.cpu.hwcaps=-SHSTK "tunable-off " $WHY/why-marked
	run -0 "$CETCTL" status -n -o VERDICT "$pid"
	[[ $output == *"glibc.cpu.hwcaps=-SHSTK"* ]] || fail "$output"
}

@test "glibc-cet: no tunable: never asked for" {
	require_shstk
	off_because - "not-requested " $WHY/why-marked
}

@test "glibc-cet: an unmarked program is named, whatever the tunables" {
	require_shstk
	off_because glibc.cpu.hwcaps=SHSTK:glibc.cpu.x86_shstk=on "unmarked $WHY/why-plain" $WHY/why-plain
}

@test "glibc-cet: permissive: a dlopen'ed unmarked plugin turns it off, and is named" {
	require_shstk
	glibc_can_enable
	off_because glibc.cpu.hwcaps=SHSTK:glibc.cpu.x86_shstk=permissive "unmarked $WHY/why-plugin.so" \
		$WHY/why-marked $WHY/why-plugin.so
	! grep -q 'dlopen failed' "$out" || fail "$(cat "$out")"
	run -0 "$CETCTL" status -n -o VERDICT "$pid"
	[[ $output == *"loaded after start-up"* ]] || fail "$output"
}

@test "glibc-cet: by default the same dlopen fails and the shadow stack stays" {
	require_shstk
	glibc_can_enable
	start glibc.cpu.hwcaps=SHSTK $WHY/why-marked $WHY/why-plugin.so
	grep -q 'dlopen failed: .*SHSTK' "$out" || fail "the dlopen did not fail: $(cat "$out")"
	[[ $(features "$pid") == *shstk* ]] || fail "lost its shadow stack"
}

@test "glibc-cet: audit gives the same reasons" {
	require_shstk
	glibc_can_enable
	start glibc.cpu.hwcaps=SHSTK $WHY/why-weak
	run -0 "$CETCTL" audit -n --raw -o PID,WHY-OFF,WHY-OBJECT --pid "$pid"
	[[ $output == "$pid unmarked $WHY/libwhy-b.so.1" ]] || fail "$output"
}

@test "glibc-cet: record the processes for the host tests (cetctl.record=1)" {
	grep -qw 'cetctl.record=1' /proc/cmdline || skip "recording not asked for (cetctl.record=1)"
	require_shstk
	glibc_can_enable
	local -A role
	start glibc.cpu.hwcaps=SHSTK $WHY/why-marked; role[on]=$pid
	start glibc.cpu.hwcaps=SHSTK $WHY/why-weak; role[weak]=$pid
	start glibc.cpu.hwcaps=SHSTK:glibc.cpu.x86_shstk=off $WHY/why-marked; role[shstk-off]=$pid
	start glibc.cpu.hwcaps=-SHSTK $WHY/why-marked; role[hwcaps-off]=$pid
	start - $WHY/why-marked; role[plain]=$pid
	start glibc.cpu.hwcaps=SHSTK $WHY/why-plain; role[unmarked-exe]=$pid
	start glibc.cpu.hwcaps=SHSTK:glibc.cpu.x86_shstk=permissive $WHY/why-marked $WHY/why-plugin.so
	role[permissive]=$pid
	echo "# REC-BEGIN $(uname -r)" >&3
	emit cpuinfo /proc/cpuinfo
	emit cmdline /proc/cmdline
	[[ -r /proc/config.gz ]] && emit config.gz /proc/config.gz
	for r in "${!role[@]}"; do record_pid "$r" "${role[$r]}"; done
	echo "# REC-SELF ${role[on]}" >&3
	echo "# REC-END" >&3
}
