#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# `cmake --install` of the build into a DESTDIR, with a prefix other than
# the one configured (as a distribution package does): every file is where
# it belongs with its mode, and the installed cetctl finds the installed
# preload library (relative to itself, not the configure-time prefix).

load helpers

setup() {
	require_cetctl
	command -v cmake >/dev/null || skip "cmake not installed"
	[ -f "$CETCTL_BUILD/CMakeCache.txt" ] || skip "no CMake build at $CETCTL_BUILD"
	# shellcheck disable=SC2034  # bg: read by cleanup_test in teardown
	bg=()
	# not under /tmp: the installed cetctl only loads a preload library from a
	# path nobody but root can change
	TMP=$(trusted_tmpdir) || skip "no root-owned scratch directory (/run, /var/lib, the build dir)"
	D=$TMP/root
}

teardown() {
	cleanup_test
}

# mode_is MODE FILE
mode_is() {
	local m
	m=$(stat -c %a "$2")
	[ "$m" = "$1" ] || { echo "$2: mode $m, want $1"; return 1; }
}

@test "install: cmake --install --prefix /usr into a DESTDIR puts every file in place" {
	run env DESTDIR="$D" cmake --install "$CETCTL_BUILD" --prefix /usr
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	mode_is 755 "$D/usr/bin/cetctl"
	mode_is 644 "$D/usr/lib/cetctl/libcetctl-preload.so"
	for p in "$REPO"/man/*.1; do
		mode_is 644 "$D/usr/share/man/man1/$(basename "$p")"
	done
	[ "$(ls "$D/usr/share/man/man1" | wc -l)" -eq "$(ls "$REPO"/man/*.1 | wc -l)" ]
	mode_is 644 "$D/usr/share/bash-completion/completions/cetctl"
	mode_is 644 "$D/usr/share/zsh/vendor-completions/_cetctl"
	mode_is 644 "$D/usr/share/fish/vendor_completions.d/cetctl.fish"
	mode_is 644 "$D/usr/lib/systemd/system/cetctl-audit.service"
	mode_is 644 "$D/usr/lib/systemd/system/cetctl-audit.timer"
	# the unit names the binary of this install's prefix, not the configured one
	grep -q '^ExecStart=/usr/bin/cetctl ' "$D/usr/lib/systemd/system/cetctl-audit.service"
	# nothing outside the prefix, nothing but files and directories
	[ "$(ls "$D")" = usr ]
	[ -z "$(find "$D" ! -type f ! -type d)" ]
	# no group- or world-writable file or directory
	[ -z "$(find "$D" -perm /022)" ]
}

@test "install: the installed cetctl runs and finds the installed preload library" {
	run env DESTDIR="$D" cmake --install "$CETCTL_BUILD" --prefix /usr
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	run "$D/usr/bin/cetctl" --version
	[ "$status" -eq 0 ]
	[[ "$output" == *cetctl* ]]
	run "$D/usr/bin/cetctl" run --trace-only sh -c 'grep -o "/[^ ]*libcetctl-preload.so" /proc/$$/maps | sort -u'
	[ "$status" -eq 0 ]
	[ "$output" = "$D/usr/lib/cetctl/libcetctl-preload.so" ]
}
