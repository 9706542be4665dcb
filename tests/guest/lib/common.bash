# tests/guest/lib/common.bash — shared by the kernel conformance suites
# (tests/guest/conformance-*.bats). Load with:  load lib/common
#
# Where the helpers are: $HELPERS if set, else $CETCTL_HELPERS (exported by the guest's
# /init), else /opt/cetctl/helpers, else the repository's build directory (running the
# suites by hand on the host: `bats tests/guest/conformance-prctl.bats`).
#
# Tiers: in the guest (/init exports CETCTL_IN_GUEST=1) the kernel under test must have
# user shadow-stack support, so its absence is a failure; on the host it is a skip.
# Without CET hardware the hardware cases skip with
#   "no shadow-stack hardware (cpuinfo lacks user_shstk)"
# except in the Bochs tier (CETCTL_TIER=bochs), where missing user_shstk is a failure.

if [[ -z ${HELPERS:-} ]]; then
	for d in "${CETCTL_HELPERS:-}" /opt/cetctl/helpers \
		"$BATS_TEST_DIRNAME/../../build/tests/guest-helpers"; do
		if [[ -n $d && -d $d ]]; then
			HELPERS=$(cd "$d" && pwd)
			break
		fi
	done
fi
HELPERS=${HELPERS:-/opt/cetctl/helpers}
export HELPERS

in_guest() { [[ ${CETCTL_IN_GUEST:-} == 1 ]]; }

fail() {
	printf '%s\n' "$*" >&2
	return 1
}

# For teardown: kill the processes a test started in the background (pids in
# the array bg) and reap them.
# shellcheck disable=SC2154  # bg: the test's array, set in its setup
stop_bg() {
	local p
	for p in "${bg[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${bg[@]}"; do wait "$p" 2>/dev/null || true; done
}

have_kernel_support() { grep -q '^x86_Thread_features:' /proc/self/status; }
have_shstk_hw() { grep -qw user_shstk /proc/cpuinfo; }

# The kernel was built with user shadow stacks (it prints the status lines).
require_kernel_support() {
	have_kernel_support && return 0
	if in_guest; then
		fail "kernel under test lacks user shadow-stack support (no x86_Thread_features in /proc/self/status)"
		return 1
	fi
	skip "kernel without user shadow-stack support (host kernel: no x86_Thread_features in /proc/self/status)"
}

# In the Bochs tier (tigerlake: emulated CET) the hardware cases must run: a kernel that
# does not advertise user_shstk there is a failure, not a reason to skip.
require_shstk() {
	require_kernel_support || return 1
	have_shstk_hw && return 0
	if [[ ${CETCTL_TIER:-} == bochs ]]; then
		fail "Bochs tier (emulated CET) but cpuinfo lacks user_shstk: the kernel did not enable user shadow stacks"
		return 1
	fi
	skip "no shadow-stack hardware (cpuinfo lacks user_shstk)"
}

# find_preload: CETCTL_PRELOAD, when unset, the library next to $CETCTL or in the
# lib/cetctl beside its bin/ (how the image installs it).
find_preload() {
	[[ -z ${CETCTL_PRELOAD:-} ]] || return 0
	local d p
	d=$(dirname "$CETCTL")
	for p in "$d/libcetctl-preload.so" "$d/../lib/cetctl/libcetctl-preload.so"; do
		[[ -f $p ]] && { export CETCTL_PRELOAD=$p; return 0; }
	done
	return 0
}

# need_preload_hw: the kernel's support and the hardware (else skip, saying which),
# and the preload library, which the image must have.
need_preload_hw() {
	require_kernel_support || return 1
	have_shstk_hw || skip "no shadow-stack hardware (cpuinfo lacks user_shstk)"
	[[ -n ${CETCTL_PRELOAD:-} && -f $CETCTL_PRELOAD ]] ||
		fail "preload library not in the image (CETCTL_PRELOAD=${CETCTL_PRELOAD:-unset})"
}

require_no_shstk_hw() {
	require_kernel_support || return 1
	if have_shstk_hw; then
		skip "shadow-stack hardware present: the no-hardware behaviour does not apply"
	fi
}

# Declare that kernel log lines matching ERE are provoked on purpose from now until the
# end of the current suite, so vm/parse-results.sh does not count them as failures.
# Protocol (vm/guest-expect, vm/parse-results.py): a line "CETCTL-EXPECT ERE" in the
# kernel log. Only inside the guest: on the host there is no kernel under test.
expect_kernel_log() {
	in_guest || return 0
	if command -v cetctl-expect >/dev/null; then
		cetctl-expect "$1"
	else
		printf 'CETCTL-EXPECT %s\n' "$1" >/dev/kmsg
	fi
}

# The fault lines a conformance suite provokes: #CP ("control protection") and
# unhandled SIGSEGV ("segfault"), plus the rt_sigreturn refusals ("bad frame").
expect_fault_lines() {
	expect_kernel_log 'control protection|segfault|bad frame'
}

# run_helper NAME [ARGS...]: run a C helper; its exit status decides:
#   0 pass, 77 skip (its "SKIP: reason" line becomes the skip reason), else fail.
# Its whole output is printed, so a failing test shows every check.
# shellcheck disable=SC2154  # output, status: set by bats' run
run_helper() {
	local bin=$HELPERS/$1
	shift
	[[ -x $bin ]] || {
		fail "helper $bin is missing (build: cmake --build build; guest: image lacks it)"
		return 1
	}
	run "$bin" "$@"
	printf '%s\n' "$output"
	case $status in
	0) return 0 ;;
	77)
		local why
		why=$(grep -m1 '^SKIP: ' <<<"$output")
		skip "${why#SKIP: }"
		;;
	*)
		fail "helper ${bin##*/} $* exited with status $status"
		return 1
		;;
	esac
}

# Value of a key=value word in a helper's one-line report.
field() { # field KEY TEXT
	local w
	for w in $2; do
		[[ $w == "$1="* ]] && {
			printf '%s\n' "${w#*=}"
			return 0
		}
	done
	return 1
}

# Legacy-ELF policy in force ("x86/shstk: Block the shadow stack interface for legacy
# ELF binaries", see the kernel-series cover letter): the boot parameter
# shstk_legacy_elf=block|allow wins; else CONFIG_X86_USER_SHADOW_STACK_ALLOW_BROKEN=y
# means "allow"; else "block". Mainline (the reference run, cetctl.ref=1) has no such
# policy: a legacy ELF may enable shadow stacks, as with "allow".
legacy_elf_policy() {
	if grep -qw 'shstk_legacy_elf=allow' /proc/cmdline || grep -qw 'cetctl.ref=1' /proc/cmdline; then
		echo allow
	elif grep -qw 'shstk_legacy_elf=block' /proc/cmdline; then
		echo block
	elif [[ -r /proc/config.gz ]] &&
		zcat /proc/config.gz 2>/dev/null | grep -q '^CONFIG_X86_USER_SHADOW_STACK_ALLOW_BROKEN=y'; then
		echo allow
	else
		echo block
	fi
}

# What userfaultfd on a shadow stack is expected to do: SHSTK_UFFD_EXPECT if set, else
# "refused": UFFDIO_REGISTER fails with EINVAL, on our series (issue 11: UFFDIO_COPY
# could plant return addresses) as on mainline 6.12.
uffd_expectation() {
	echo "${SHSTK_UFFD_EXPECT:-refused}"
}
