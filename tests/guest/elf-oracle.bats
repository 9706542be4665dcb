#!/usr/bin/env bats
# The KERNEL verdict of `cetctl elf` against the kernel itself (issue 13): every
# ELF fixture of the host tier (static and dynamic, PIE and not, each malformed-note
# case, interpreters that are marked, malformed, missing or not ELF, ELF32, x32) is
# exec'd by exec_oracle under ptrace (no instruction of it runs), which then asks
# the kernel for the shadow-stack interface (PTRACE_ARCH_PRCTL ARCH_SHSTK_LOCK:
# EINVAL when the legacy-ELF policy blocks it). cetctl, run in the same guest for
# the running kernel's policy, must agree on every file it calls a program.
# tests/run-all.sh runs it under both policies: in the qemu tier (the
# Kconfig default, block) and in a second boot with shstk_legacy_elf=allow.

bats_require_minimum_version 1.5.0
load lib/common

FIX=${CETCTL_FIXTURES:-/usr/libexec/cetctl/fixtures}

# want VERDICT: the oracle line cetctl's verdict predicts ("" = not compared)
want() {
	case $1 in
	refuses) echo "exec=0 lock=EINVAL" ;;
	allows|"allows (policy allow)") echo "exec=0 lock=0" ;;
	"n/a (no policy)") echo "exec=0 lock=0" ;;
	"no-shstk (i386)"|"no-shstk (x32)") echo "exec=0" ;;
	E*) echo "exec=$1" ;;
	*) echo "" ;;
	esac
}

@test "elf oracle: cetctl elf's KERNEL verdict agrees with execve on every ELF fixture" {
	require_kernel_support
	[[ -d $FIX/made ]] || fail "no ELF fixtures at $FIX (vm/mkinitramfs.sh copies build/tests/guest-fixtures)"
	local oracle=$HELPERS/exec_oracle
	[[ -x $oracle ]] || fail "exec_oracle not built"
	# the raw table: FILE KERNEL, spaces in the verdict as \x20; corrupt files are
	# errors (exit 1) and not listed
	run --separate-stderr cetctl elf -r --raw -n -o FILE,KERNEL "$FIX"
	# shellcheck disable=SC2154  # stderr: set by bats' run --separate-stderr
	[[ -n $output ]] || fail "cetctl elf listed nothing: $stderr"
	echo "# ${stderr##*; }" >&3
	# cetctl judged for the policy the kernel runs with (the boot parameter
	# of the second QEMU boot, tests/run-all.sh qemu-allow, included)
	# (mainline, vm/run-ref.sh: no policy at all)
	local policy; policy=$(legacy_elf_policy)
	grep -qw 'cetctl.ref=1' /proc/cmdline && policy=none
	[[ $stderr == *"kernel policy $policy "* ]] ||
		fail "cetctl judged for another policy than the kernel's ($policy): ${stderr##*; }"
	local file verdict expect got n=0 agree=0 skipped=0 bad=()
	while read -r file verdict; do
		verdict=${verdict//\\x20/ }
		expect=$(want "$verdict")
		if [[ -z $expect ]]; then
			skipped=$((skipped + 1))
			continue
		fi
		n=$((n + 1))
		got=$("$oracle" "$file")
		got=${got#"$file "}
		# "exec=0" alone: the lock answer is not predicted
		if [[ $got == "$expect" || ( $expect == exec=0 && $got == exec=0\ * ) ]]; then
			agree=$((agree + 1))
		else
			bad+=("$file: cetctl '$verdict', kernel '$got'")
		fi
	done <<<"$output"
	echo "# policy $policy: $agree of $n programs agree, $skipped not programs" >&3
	((n >= 20)) || fail "only $n programs compared"
	if ((${#bad[@]})); then
		printf '%s\n' "${bad[@]}" >&2
		return 1
	fi
}
