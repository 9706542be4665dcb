#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Every shell script of vm/, tests/, bench/ and .ci/ passes shellcheck
# (issue 23) at severity warning: no error and no warning. The info and style
# notes (SC2086 on words known to be safe, SC2015 on `a && b || c` used as
# intended, ...) are left out on purpose: they are advice, not defects. An
# exception is written in place, on the line above what it covers, with its
# reason: `# shellcheck disable=SCxxxx  # why`; the third test holds that.
#
# The file set is read from the repository, so a new script is covered
# without editing this file: the files git tracks or would add (or, outside a
# git checkout, every file) under those directories whose name ends in .sh,
# .bash or .bats, or whose first line is a sh, bash, dash or bats shebang.
# The .bats files are checked too: shellcheck 0.9 reads the bats shebang and
# knows @test, run, $output, $status and $lines (not $stderr: see the
# exceptions), and it finds a real class of bats bug, `! cmd` in the middle
# of a test, which never fails it (SC2314).
# Run from the repository root with -x, shellcheck follows `. "$REPO/vm/lib.sh"`
# and the like, so each script is checked with the library it sources (and
# the result does not depend on which files share one shellcheck run).

load helpers

setup() {
	command -v shellcheck >/dev/null ||
		skip "shellcheck not installed (vm/install-deps.sh installs it)"
}

# shell_scripts: the file set, NUL-terminated, relative to $REPO
shell_scripts() {
	local f first
	{
		if git -C "$REPO" rev-parse --git-dir >/dev/null 2>&1; then
			git -C "$REPO" ls-files -z --cached --others --exclude-standard -- vm tests bench .ci
		else
			(cd "$REPO" && find vm tests bench .ci -type f -print0)
		fi
	} | while IFS= read -r -d '' f; do
		# a symlink (the recorded /proc trees have exe links) is not ours
		[[ -f $REPO/$f && ! -L $REPO/$f ]] || continue
		case $f in
		*.sh|*.bash|*.bats) printf '%s\0' "$f"; continue ;;
		esac
		first=
		IFS= read -r first 2>/dev/null <"$REPO/$f" || true
		if [[ $first =~ ^'#!'.*[/\ ](sh|bash|dash|bats)([[:space:]]|$) ]]; then
			printf '%s\0' "$f"
		fi
	done
}

@test "shellcheck: the file set holds the scripts of every kind it must" {
	local files
	files=$(shell_scripts | tr '\0' '\n')
	echo "$files"
	local want
	for want in tests/run-all.sh .ci/run vm/lib.sh vm/guest-init vm/guest-expect \
		vm/debian-guest/run-tests bench/lib.sh tests/host/helpers.bash \
		tests/guest/lib/common.bash tests/debian/lib.bash tests/host/shellcheck.bats \
		vm/selftest/demo.bats; do
		grep -qxF "$want" <<<"$files" || { echo "missing: $want"; return 1; }
	done
	# and nothing that is not shell
	! grep -E '\.(py|pl|c|h|txt|md)$' <<<"$files" || false
}

@test "shellcheck: no error or warning in vm/, tests/, bench/ and .ci/" {
	local files=()
	mapfile -d '' files < <(shell_scripts)
	[ "${#files[@]}" -gt 0 ]
	cd "$REPO"
	# a few files per shellcheck, one per core: it is the slow part
	run xargs -0 -n 8 -P "$(nproc)" shellcheck -x -S warning -f gcc < <(printf '%s\0' "${files[@]}")
	sort <<<"$output"
	echo "$(grep -c ': error:' <<<"$output") errors, $(grep -c ': warning:' <<<"$output") warnings in ${#files[@]} files (exit $status)"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "shellcheck: every exception in those files says why, on its line" {
	local files=()
	mapfile -d '' files < <(shell_scripts)
	cd "$REPO"
	# `# shellcheck disable=SC1234,SC5678  # the reason`
	run grep -nE '^[[:space:]]*# *shellcheck +disable=' "${files[@]}"
	! grep -vE 'disable=SC[0-9]{4}(,SC[0-9]{4})* +# +[^ ]' <<<"$output" || false
}
