# SPDX-License-Identifier: GPL-2.0-or-later
# Shared helpers of the host bats tests: `load helpers` from tests/host/*.bats.
#
#   CETCTL        the binary under test (default <repo>/build/cetctl; the
#                 ASan tier points it at its own build)
#   CETCTL_BUILD  build directory (default <repo>/build); fixtures go under it
#   REPO          repository root
#   FIXTURES      ELF fixtures built at test time (see fixtures/build.sh)

HOST_TESTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HOST_TESTS/../.." && pwd)
CETCTL_BUILD=${CETCTL_BUILD:-$REPO/build}
CETCTL=${CETCTL:-$CETCTL_BUILD/cetctl}
FIXTURES=${CETCTL_FIXTURES:-$CETCTL_BUILD/fixtures}
export HOST_TESTS REPO CETCTL_BUILD CETCTL FIXTURES

bats_require_minimum_version 1.5.0

# Skip (with the reason) when the binary is not built.
require_cetctl() {
	[ -x "$CETCTL" ] || skip "cetctl not built at $CETCTL (cmake --build build)"
}

# The tests of run's start-up with the test build (cetctl-faults, with the
# fault points): $FAULTS, $TMP (the test's directory), no core files, and
# no fault, log or preload setting inherited. A missing test build fails.
require_faults() {
	require_cetctl
	FAULTS=${CETCTL_FAULTS:-$(dirname "$CETCTL")/cetctl-faults}
	[ -x "$FAULTS" ] || { echo "not built: $FAULTS"; return 1; }
	TMP=$BATS_TEST_TMPDIR
	ulimit -S -c 0
	unset CETCTL_PRELOAD CETCTL_FAULT CETCTL_FAULT_LOG
}

# For teardown: kill the processes a test started in the background (pids in
# the array bg) and reap them, then remove the test's TMP directory.
# shellcheck disable=SC2154  # bg: the test's array, set in its setup
cleanup_test() {
	local p
	for p in "${bg[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${bg[@]}"; do wait "$p" 2>/dev/null || true; done
	# a killed writer's last child may still be finishing a write
	[ -z "${TMP:-}" ] || rm -rf "$TMP" 2>/dev/null || { sleep 1; rm -rf "$TMP"; }
}

# A new scratch directory on a path cetctl trusts for its preload library
# (run-env.c trusted_file: every component root-owned and not writable by
# group or others, which rules out /tmp). Prints it; fails when none is.
trusted_tmpdir() {
	local base d
	for base in /run /var/lib "$CETCTL_BUILD"; do
		[[ -d $base && -w $base ]] || continue
		[[ $(stat -c '%u %a' "$base") == 0\ [0-7][0-5][0-5] ]] || continue
		d=$(mktemp -d "$base/cetctl-test.XXXXXX") || continue
		chmod 0755 "$d"
		echo "$d"
		return 0
	done
	return 1
}

# Whether cetctl may load the preload library at $1 (run-env.c trusted_file):
# the file and every directory above it owned by root (or, for the test build,
# by us) and not writable by group or others.
trusted_preload_path() {
	local p st
	p=$(realpath -e "$1" 2>/dev/null) || return 1
	while :; do
		st=$(stat -c '%u %a' "$p") || return 1
		[[ ${st% *} == 0 || ${st% *} == "$(id -u)" ]] || return 1
		(( (8#${st#* } & 8#022) == 0 )) || return 1
		[[ $p == / ]] && return 0
		p=$(dirname "$p")
	done
}

# Skip, with the reason, when the build tree lies where cetctl rightly
# refuses its preload library (a checkout under /tmp): the run tests expect
# the library to be used and cetctl to say nothing about it.
require_trusted_preload() {
	local lib=${CETCTL_BUILD:-$(dirname "$CETCTL")}/libcetctl-preload.so
	[ -f "$lib" ] || return 0	# the tests say themselves that it is missing
	trusted_preload_path "$lib" ||
		skip "cetctl refuses $lib: a directory above it is writable by group or others, or not root's (move the checkout, e.g. out of /tmp)"
}

# Build the ELF fixtures once per run (a stamp makes it a no-op when current).
# Call from setup_file; fails the file loudly when the build fails.
build_fixtures() {
	local log="$CETCTL_BUILD/fixtures-build.log"
	mkdir -p "$CETCTL_BUILD"
	if ! bash "$HOST_TESTS/fixtures/build.sh" "$FIXTURES" >"$log" 2>&1; then
		cat "$log" >&2
		echo "building fixtures failed (log: $log)" >&2
		return 1
	fi
}

# Skip when an optional fixture could not be built, with the reason.
require_fixture() {
	local f=$1
	if [ ! -e "$FIXTURES/$f" ]; then
		local why
		why=$(grep -h "^${f%%-*}" "$FIXTURES/SKIPPED.txt" 2>/dev/null | head -n1)
		skip "fixture $f not built: ${why:-unknown reason}"
	fi
}

# True when `cetctl CMD --help` works (the subcommand is implemented).
cetctl_has_cmd() {
	local out
	out=$("$CETCTL" "$1" --help 2>&1) || return 1
	! grep -q 'not implemented yet' <<<"$out"
}

# Long options (--foo) listed by `cetctl [CMD] --help`, one per line, sorted.
help_long_options() {
	"$CETCTL" "$@" --help 2>/dev/null |
		grep -oE '(^|[[:space:],])--[a-z0-9][a-z0-9-]*' |
		sed -E 's/^[[:space:],]*//' | sort -u
}

# A jq definition to put before an expression reading `cetctl elf -J`:
# `.kernel | ktext` is the KERNEL object as the table writes it ("allows",
# "refuses", "allows (policy allow)", "n/a (no policy)", "ENOEXEC", ...).
# shellcheck disable=SC2016,SC2034  # jq's \(.), not the shell's; used by the .bats files
JQ_KTEXT='def ktext: if type != "object" then error("kernel is not an object: \(.)")
	elif .verdict == "fails" then .errno
	elif .reason == null then .verdict else "\(.verdict) (\(.reason))" end; '

# Processes whose executable this user cannot read before a live test
# (in some sandboxes even root cannot read PID 1's exe link).
denied_exe_count() {
	# one ls for all of them: cheap even with thousands of processes
	# shellcheck disable=SC2010  # grep counts ls's error messages, not file names
	ls -l /proc/[0-9]*/exe 2>&1 >/dev/null | grep -c 'Permission denied' || true
}

# Drop audit's "N of M processes could be read only in part" line from
# stderr file $1 when N is at most $2 (the processes unreadable before the
# test started): any other line, or more such processes, stays.
drop_known_partial() {
	local n
	n=$(sed -nE 's/^cetctl: audit: ([0-9]+) of [0-9]+ process(es)? could be read only in part.*/\1/p' "$1")
	if [ -n "$n" ] && [ "$n" -le "$2" ]; then
		sed -i -E '/^cetctl: audit: [0-9]+ of [0-9]+ process(es)? could be read only in part/d' "$1"
	fi
}
