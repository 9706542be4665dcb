#!/usr/bin/env bats
# Opt-in: record real /proc fixtures for the host tests from a CET guest.
# Runs only when the kernel command line has cetctl.record=1, e.g.
#   vm/run-bochs.sh KERNEL INITRD --suites zz-record-proc --append cetctl.record=1
# then on the host:
#   tests/host/fixtures/extract-guest-recording.sh CONSOLE.LOG tests/host/fixtures/proc/NAME
# The files go out on the TAP stream as "# REC-FILE path base64" / "# REC-LINK path
# target" lines (the console is the only way out of the guest). Same files as
# tests/host/fixtures/record-proc.sh records.

bats_require_minimum_version 1.5.0
load lib/common
load lib/record

setup() {
	grep -qw 'cetctl.record=1' /proc/cmdline || skip "recording not asked for (cetctl.record=1)"
	CETCTL=${CETCTL:-$(command -v cetctl)}
	HOLD=$HELPERS/status_hold
	bg=()
}

teardown() {
	stop_bg
}

# hold OUTFILE ARGS... : cetctl run ARGS in the background; the held pid is left in
# $held (not printed: in a $(...) subshell the bg+= would be lost and teardown could
# not stop the process)
hold() {
	local out=$1; shift
	"$CETCTL" run "$@" >"$out" 2>&1 &
	held=$!	# cetctl run becomes the program
	bg+=("$held")
	for _ in $(seq 100); do grep -q '^ready' "$out" && break; sleep 0.1; done
	grep -q '^ready' "$out" || { echo "# held process $held not ready: $(cat "$out")" >&3; return 1; }
}

@test "record: /proc of processes under cetctl run on this kernel" {
	require_shstk
	hold "$BATS_TEST_TMPDIR/a" --shstk -- "$HOLD" 300
	locked=$held
	hold "$BATS_TEST_TMPDIR/b" --shstk -- "$HOLD" -t 3 300
	threads=$held
	hold "$BATS_TEST_TMPDIR/c" --shstk --wrss -- "$HOLD" 300
	wrss=$held
	hold "$BATS_TEST_TMPDIR/d" --shstk --no-lock -- "$HOLD" 300
	unlocked=$held
	hold "$BATS_TEST_TMPDIR/e" --shstk --no-lock -- "$HOLD" -t 2 -d 300
	mixed=$held
	"$HOLD" 300 >/dev/null & plain=$!
	bg+=("$plain")
	sleep 0.5
	echo "# REC-BEGIN $(uname -r)" >&3
	emit cpuinfo /proc/cpuinfo
	emit cmdline /proc/cmdline
	[[ -r /proc/config.gz ]] && emit config.gz /proc/config.gz
	record_pid single "$locked"
	record_pid threads "$threads"
	record_pid wrss "$wrss"
	record_pid unlocked "$unlocked"
	record_pid mixed "$mixed"
	record_pid plain "$plain"
	record_pid kthread 2
	echo "# REC-SELF $locked" >&3
	echo "# REC-END" >&3
}
