#!/usr/bin/env bats
# The preload library's trust in a user namespace other than the initial one
# (issue 32, defect 5; run-env.c trusted_file, cetctl-run(1) "Which preload
# library is trusted"). In `unshare -Ur` run by a user, files of users not
# mapped into the namespace, host root's among them, show as the overflow uid
# (65534): before, every path was refused there. Now a component owned by the
# overflow uid is trusted exactly when cetctl's own executable is owned by the
# overflow uid too; uid 0 of the namespace as before; anything else refused.
#
# The namespaces are made by root as another user (setpriv to nobody, 65534):
# root makes the files of the other users the cases need.

load helpers

setup() {
	require_cetctl
	BUILD=${CETCTL_BUILD:-$(dirname "$CETCTL")}
	LIB=$BUILD/libcetctl-preload.so
	[ -f "$LIB" ] || { echo "preload library not built: $LIB"; return 1; }
	[ "$(id -u)" -eq 0 ] || skip "needs root: it makes namespaces as nobody and files of other users"
	[ "$(stat -c %u "$BUILD")" -eq 0 ] || skip "the build directory is not root's"
	# the library and every directory above it trusted outside a namespace
	trusted_preload_path "$LIB" || skip "cetctl refuses $LIB even outside a user namespace"
	as_nobody_userns true 2>/dev/null ||
		skip "unprivileged user namespaces are not available (setpriv ... unshare -Ur true fails)"
	OVERFLOW=$(cat /proc/sys/kernel/overflowuid 2>/dev/null || echo 65534)
	# the library of the build as the namespace sees it: not mapped
	[ "$(as_nobody_userns stat -c %u "$LIB")" = "$OVERFLOW" ] ||
		skip "root's files do not show as the overflow uid $OVERFLOW in the namespace"
	unset CETCTL_PRELOAD
	PROBE='grep -q libcetctl-preload /proc/$$/maps && echo 1 || echo 0'
	cd /
}

teardown() {
	[ -z "${TD:-}" ] || rm -rf "$TD"
}

# Run "$@" as nobody (65534) in a new user namespace mapping it to uid 0.
as_nobody_userns() {
	setpriv --reuid=65534 --regid=65534 --clear-groups unshare -Ur "$@"
}

# A scratch directory under the (root-owned) build directory, which nobody
# can read.
trust_dir() {
	TD=$(realpath "$(mktemp -d "$BUILD/userns-trust.XXXXXX")")
	chmod 755 "$TD"
}

# Run `CMD... run --trace-only` (CMD: a cetctl, with what puts it in a
# namespace first): the program runs without the library, and cetctl says
# "not using libcetctl-preload.so: WHY".
refused() {
	local why=$1
	shift
	run "$@" run --trace-only -- sh -c "$PROBE"
	if [ "$status" -ne 0 ] || [ "${lines[-1]}" != 0 ]; then
		echo "$output"
		return 1
	fi
	[[ $output == *"not using libcetctl-preload.so: $why"* ]] || { echo "$output"; return 1; }
}

@test "userns: root's cetctl loads root's library in unshare -Ur (both the overflow uid there)" {
	run as_nobody_userns "$CETCTL" run --trace-only -- sh -c "$PROBE"
	[ "$status" -eq 0 ] && [ "${lines[-1]}" = 1 ] || { echo "$output"; return 1; }
	[[ $output != *"not using"* ]] || { echo "$output"; return 1; }
	# CETCTL_PRELOAD to another root-owned copy: the same
	trust_dir
	cp "$LIB" "$TD/libcetctl-preload.so"
	CETCTL_PRELOAD=$TD/libcetctl-preload.so run as_nobody_userns "$CETCTL" run --trace-only -- sh -c "$PROBE"
	[ "$status" -eq 0 ] && [ "${lines[-1]}" = 1 ] || { echo "$output"; return 1; }
	# root in a namespace mapping root to itself: uid 0 there, trusted as before
	run unshare -Ur "$CETCTL" run --trace-only -- sh -c "$PROBE"
	[ "$status" -eq 0 ] && [ "${lines[-1]}" = 1 ] || { echo "root -Ur: $output"; return 1; }
}

@test "userns: a cetctl of the namespace's own user does not vouch for outside files" {
	trust_dir
	# the namespace's owner (nobody, uid 0 inside) owns this copy of cetctl;
	# the library next to it and the directories above are root's: outside
	mkdir "$TD/bin"
	cp "$CETCTL" "$LIB" "$TD/bin/"
	chown 65534 "$TD/bin/cetctl"
	refused "$TD/bin/libcetctl-preload.so is owned by uid $OVERFLOW (a user outside this user namespace) and cetctl itself is not" \
		as_nobody_userns "$TD/bin/cetctl"
	# a library another outside user owns, for this cetctl: the same
	cp "$LIB" "$TD/other.so"
	chown 1234 "$TD/other.so"
	CETCTL_PRELOAD=$TD/other.so refused "$TD/other.so is owned by uid $OVERFLOW (a user outside this user namespace) and cetctl itself is not" \
		as_nobody_userns "$TD/bin/cetctl"
}

@test "userns: outside files writable by group or others stay refused, said as such" {
	trust_dir
	cp "$LIB" "$TD/groupw.so"
	chmod 664 "$TD/groupw.so"
	CETCTL_PRELOAD=$TD/groupw.so refused "$TD/groupw.so is writable by its group" \
		as_nobody_userns "$CETCTL"
	mkdir -m 777 "$TD/open"
	cp "$LIB" "$TD/open/lib.so"
	CETCTL_PRELOAD=$TD/open/lib.so refused "$TD/open is writable by everyone" as_nobody_userns "$CETCTL"
}

@test "userns: files of a mapped user other than uid 0 stay refused, said as such" {
	# root mapped to uid 1234 of the namespace: its files are 1234's there,
	# neither the namespace's root nor outside it
	refused "$LIB is owned by uid 1234, not root (uid 0 of this user namespace)" \
		unshare -U --map-user=1234 "$CETCTL"
}
