#!/usr/bin/env bats
# Kernel conformance: the kernel series' legacy-ELF policy. A binary marked SHSTK in
# GNU_PROPERTY_X86_FEATURE_1_AND is refused the shadow-stack APIs (EINVAL, except
# ARCH_SHSTK_STATUS) unless the policy allows it (boot parameter shstk_legacy_elf=allow|block,
# else CONFIG_X86_USER_SHADOW_STACK_ALLOW_BROKEN). Unmarked binaries are never blocked.
# Helpers: shstk_elf_plain / shstk_elf_marked (the same source, tests/guest/helpers/shstk_elf.c).

load lib/common

# report NAME: run the helper, print and keep its one-line report in $report
report() {
	run_helper "$1"
	report=$(grep -m1 '^marked=' <<<"$output") || fail "no report line"
	echo "policy=$(legacy_elf_policy) hardware=$(have_shstk_hw && echo yes || echo no)"
}

@test "elf: the helpers carry the markings the tests rely on" {
	require_kernel_support
	report shstk_elf_plain
	[[ $(field marked "$report") == 0 ]] || fail "shstk_elf_plain is marked"
	report shstk_elf_marked
	[[ $(field marked "$report") == 1 ]] || fail "shstk_elf_marked is not marked SHSTK"
}

@test "elf: an unmarked binary is never blocked" {
	require_kernel_support
	report shstk_elf_plain
	local want=EOPNOTSUPP
	have_shstk_hw && want=0
	[[ $(field enable "$report") == "$want" ]] || fail "ENABLE: expected $want"
	[[ $(field map "$report") == "$want" ]] || fail "map_shadow_stack: expected $want"
	[[ $(field status "$report") == 0 ]] || fail "STATUS must work"
}

@test "elf: a marked binary gets what the policy in force says" {
	require_kernel_support
	report shstk_elf_marked
	local en map policy
	en=$(field enable "$report")
	map=$(field map "$report")
	policy=$(legacy_elf_policy)
	# blocked or not, ARCH_SHSTK_STATUS stays available (cover letter; mainline has no block)
	[[ $(field status "$report") == 0 ]] || fail "STATUS must work for a marked binary too"
	if have_shstk_hw; then
		if [[ $policy == block ]]; then
			[[ $en == EINVAL ]] || fail "blocked: ENABLE must be EINVAL"
			[[ $map == EINVAL ]] || fail "blocked: map_shadow_stack must be EINVAL"
		else
			[[ $en == 0 ]] || fail "allowed: ENABLE must succeed"
			[[ $map == 0 ]] || fail "allowed: map_shadow_stack must succeed"
		fi
	else
		if [[ $policy == allow ]]; then
			[[ $en == EOPNOTSUPP && $map == EOPNOTSUPP ]] ||
				fail "allowed, no hardware: both must be EOPNOTSUPP like an unmarked binary"
		else
			# the refusal may come before or after the hardware check: either is
			# consistent, but nothing else is
			[[ $en == EINVAL || $en == EOPNOTSUPP ]] || fail "blocked, no hardware: ENABLE $en"
			[[ $map == EINVAL || $map == EOPNOTSUPP ]] || fail "blocked, no hardware: map $map"
			echo "blocked without hardware: ENABLE $en, map_shadow_stack $map"
		fi
	fi
}

@test "elf: a static program whose property note cannot be parsed runs, as unmarked" {
	require_kernel_support
	# shstk_elf_badnote = shstk_elf_marked with FEATURE_1_AND's pr_datasz 5: the
	# series once failed such an exec with ENOEXEC (mainline x86 never parses it)
	report shstk_elf_badnote
	local want=EOPNOTSUPP
	have_shstk_hw && want=0
	[[ $(field enable "$report") == "$want" ]] || fail "ENABLE: expected $want (unmarked, whatever the policy)"
	[[ $(field map "$report") == "$want" ]] || fail "map_shadow_stack: expected $want"
}
