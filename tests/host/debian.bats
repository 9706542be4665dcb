#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# The Debian package (debian/): built with `dpkg-buildpackage -us -uc`
# from a copy of the source tree (the build writes next to the tree),
# checked by lintian (no errors; what else it says is printed), unpacked
# with `dpkg -x` into a scratch root (never installed on this host) and run.

load helpers

setup_file() {
	export DEB_SKIP=""
	if ! command -v dpkg-buildpackage >/dev/null || ! command -v dh >/dev/null; then
		DEB_SKIP="dpkg-buildpackage or debhelper not installed (vm/install-deps.sh)"
		return 0
	fi
	if ! git -C "$REPO" rev-parse --git-dir >/dev/null 2>&1; then
		DEB_SKIP="$REPO is not a git checkout (the file list comes from git)"
		return 0
	fi
	export W=$BATS_FILE_TMPDIR/deb
	mkdir -p "$W/cetctl"
	# tracked and new files of the working tree, symlinks kept
	(cd "$REPO" && git ls-files -z --cached --others --exclude-standard |
		tar --null --no-recursion -T - -cf -) | tar -C "$W/cetctl" -xf -
	# source and binary: lintian checks both
	(cd "$W/cetctl" && timeout 900 dpkg-buildpackage -us -uc) >"$W/build.log" 2>&1
	echo $? >"$W/build.rc"
	DEB=$W/cetctl_$(dpkg-parsechangelog -l "$REPO/debian/changelog" -S Version)_amd64.deb
	export DEB
}

setup() {
	[ -z "$DEB_SKIP" ] || skip "$DEB_SKIP"
	if [ "$(cat "$W/build.rc")" != 0 ]; then
		tail -n 30 "$W/build.log"
		echo "dpkg-buildpackage failed (log: $W/build.log)"
		return 1
	fi
}

teardown() {
	[ -z "${TMP:-}" ] || rm -rf "$TMP"
}

@test "debian: dpkg-buildpackage builds the source and binary packages, the unit tests pass in it" {
	[ -f "$DEB" ]
	grep -q '100% tests passed' "$W/build.log"
	run dpkg-deb -f "$DEB" Package Architecture Depends
	echo "$output"
	[[ "$output" == *"Package: cetctl"* ]]
	[[ "$output" == *"libsmartcols1"* ]]
	run dpkg-deb -c "$DEB"
	for f in ./usr/bin/cetctl ./usr/lib/cetctl/libcetctl-preload.so \
		./usr/share/man/man1/cetctl.1.gz ./usr/share/man/man1/cetctl-audit.1.gz \
		./usr/share/bash-completion/completions/cetctl ./usr/share/zsh/vendor-completions/_cetctl \
		./usr/share/fish/vendor_completions.d/cetctl.fish \
		./lib/systemd/system/cetctl-audit.service ./lib/systemd/system/cetctl-audit.timer \
		./usr/share/doc/cetctl/copyright; do
		grep -q " $f\$" <<<"$output" || { echo "missing: $f"; false; }
	done
}

@test "debian: lintian reports no errors or warnings, source and binary (other tags printed)" {
	command -v lintian >/dev/null || skip "lintian not installed (vm/install-deps.sh)"
	run timeout 300 lintian -I -E --pedantic "${DEB%.deb}.changes"
	grep -v 'running with root privileges' <<<"$output" | sed 's/^/# lintian: /' >&3
	[ "$status" -eq 0 ]
	# both were checked
	ls "$W"/cetctl_*.dsc
	[ "$(grep -cE '^[EW]: ' <<<"$output")" -eq 0 ]
	# lintian does catch errors here: the same package without its copyright
	dpkg-deb -R "$DEB" "$W/broken"
	rm "$W/broken/usr/share/doc/cetctl/copyright"
	sed -i '/copyright/d' "$W/broken/DEBIAN/md5sums"
	dpkg-deb -b "$W/broken" "$W/broken.deb" >/dev/null
	run timeout 300 lintian "$W/broken.deb"
	[ "$status" -ne 0 ]
	[[ "$output" == *"E: cetctl: no-copyright-file"* ]]
}

@test "debian: unpacked (dpkg -x), cetctl runs, finds its preload library, man pages and completions work" {
	# a root-owned scratch root: cetctl refuses a preload library under /tmp
	TMP=$(trusted_tmpdir) || skip "no root-owned scratch directory (/run, /var/lib, the build dir)"
	R=$TMP/root
	dpkg -x "$DEB" "$R"
	run "$R/usr/bin/cetctl" --version
	[ "$status" -eq 0 ]
	[[ "$output" == *"$(dpkg-deb -f "$DEB" Version | cut -d- -f1)"* ]]
	run "$R/usr/bin/cetctl" run --trace-only sh -c 'grep -o "/[^ ]*libcetctl-preload.so" /proc/$$/maps | sort -u'
	[ "$status" -eq 0 ]
	[ "$output" = "$R/usr/lib/cetctl/libcetctl-preload.so" ]
	run "$R/usr/bin/cetctl" --proc-root "$HOST_TESTS/fixtures/proc/cet-emulated" audit --prometheus -
	[ "$status" -eq 0 ]
	grep -qx 'cetctl_audit_processes_checked 7' <<<"$output"
	for p in cetctl cetctl-audit cetctl-elf cetctl-info cetctl-map cetctl-run cetctl-status; do
		man -l "$R/usr/share/man/man1/$p.1.gz" 2>/dev/null | grep -q "^NAME" ||
			{ echo "man page $p does not render"; false; }
	done
	# the bash completion loads and registers itself (and, with the
	# bash-completion framework, completes a subcommand)
	run bash -c 'source "$1" && complete -p cetctl' _ "$R/usr/share/bash-completion/completions/cetctl"
	[[ "$output" == *"-F _cetctl cetctl"* ]]
	fw=/usr/share/bash-completion/bash_completion
	if [ -f "$fw" ]; then
		run bash -c 'source "$1"; source "$2"; COMP_WORDS=(cetctl au); COMP_CWORD=1; COMP_LINE="cetctl au"; COMP_POINT=9; _cetctl; echo "${COMPREPLY[*]}"' _ \
			"$fw" "$R/usr/share/bash-completion/completions/cetctl"
		[ "$output" = audit ]
	fi
	grep -qx 'ExecStart=/usr/bin/cetctl audit -o PID -n --prometheus /var/lib/prometheus/node-exporter' \
		"$R/lib/systemd/system/cetctl-audit.service"
	# the package neither starts the timer nor enables it on a first
	# install (only keeps it enabled across upgrades when the admin did)
	dpkg-deb -e "$DEB" "$W/control"
	! grep -qs "deb-systemd-invoke start" "$W/control/postinst" || false
	[ "$(grep -c 'deb-systemd-helper enable' "$W/control/postinst")" -eq \
	  "$(grep -B2 'deb-systemd-helper enable' "$W/control/postinst" | grep -c 'was-enabled')" ]
}

# Run maintainer script $1 of the built package with $2... as its arguments,
# as on a host where systemd runs: /run/systemd/system is a scratch
# directory and deb-systemd-invoke, deb-systemd-helper and systemctl are
# stubs that log their arguments to $TMP/calls.
run_maintscript() {
	local script=$1
	shift
	TMP=${TMP:-$(mktemp -d "$BATS_FILE_TMPDIR/ms.XXXXXX")}
	mkdir -p "$TMP/bin" "$TMP/run-systemd-system" "$TMP/ctl"
	[ -d "$TMP/ctl/DEBIAN" ] || dpkg-deb -e "$DEB" "$TMP/ctl/DEBIAN"
	for s in deb-systemd-invoke deb-systemd-helper systemctl; do
		printf '#!/bin/sh\necho "%s $*" >>"%s/calls"\n' "$s" "$TMP" >"$TMP/bin/$s"
		chmod +x "$TMP/bin/$s"
	done
	[ -f "$TMP/ctl/DEBIAN/$script" ] || return 0
	sed "s|/run/systemd/system|$TMP/run-systemd-system|g" "$TMP/ctl/DEBIAN/$script" >"$TMP/$script"
	PATH=$TMP/bin:$PATH sh -e "$TMP/$script" "$@"
}

@test "debian: an upgrade keeps a running timer running (not stopped, try-restarted)" {
	# what dpkg runs on an upgrade from 0.1: old prerm (ours, for the
	# test), new preinst, old postrm, new postinst
	run_maintscript prerm upgrade 99
	run_maintscript preinst upgrade 0.1
	run_maintscript postrm upgrade 99
	run_maintscript postinst configure 0.1
	cat "$TMP/calls"
	[ "$(grep -c 'deb-systemd-invoke stop' "$TMP/calls")" -eq 0 ]
	grep -qx "deb-systemd-invoke try-restart 'cetctl-audit.service' 'cetctl-audit.timer'" "$TMP/calls" ||
	grep -qx "deb-systemd-invoke try-restart cetctl-audit.service cetctl-audit.timer" "$TMP/calls"
	# a first install starts nothing: the admin enables the timer
	rm "$TMP/calls"
	run_maintscript postinst configure
	[ ! -f "$TMP/calls" ] || [ "$(grep -c 'deb-systemd-invoke' "$TMP/calls")" -eq 0 ]
	# removing the package stops both units (their files go away)
	run_maintscript prerm remove
	grep -q 'deb-systemd-invoke stop.*cetctl-audit.timer' "$TMP/calls"
}

@test "debian: purge removes the metrics file node_exporter would keep serving" {
	local d=$BATS_TEST_TMPDIR/root/var/lib/prometheus/node-exporter
	mkdir -p "$d"
	touch "$d/cetctl-audit.prom" "$d/.cetctl-audit.prom.1234.tmp" "$d/other.prom"
	DPKG_ROOT=$BATS_TEST_TMPDIR/root run_maintscript postrm remove
	[ -f "$d/cetctl-audit.prom" ]
	DPKG_ROOT=$BATS_TEST_TMPDIR/root run_maintscript postrm purge
	[ ! -e "$d/cetctl-audit.prom" ]
	[ ! -e "$d/.cetctl-audit.prom.1234.tmp" ]
	[ -f "$d/other.prom" ]
}
