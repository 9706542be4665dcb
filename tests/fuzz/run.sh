#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/fuzz/run.sh [SECONDS] — run every libFuzzer target for SECONDS
# (default 20) each, and report execs and crashes per target.
#
# Builds the targets first when needed, in ${CETCTL_FUZZ_BUILD:-build-fuzz}
# (CC=clang, -DCETCTL_FUZZ=ON). Each target starts from its seed corpus
# (made from the test fixtures) plus tests/fuzz/regressions/<target>/ and
# grows a working corpus under the build directory (never in the repo).
# Crashing inputs are saved as <build>/fuzz-crashes/<target>/crash-*;
# add them to tests/fuzz/regressions/<target>/ once fixed so ctest keeps
# replaying them (a binary input as NAME.hex: see regressions/README.md).
# Output: one line per target
#   fuzz-elf-notes: 123456 execs in 20 s, 0 crashes
# and the exit status is 1 when any target crashed or could not run.
set -uo pipefail

secs=${1:-20}
case $secs in ''|*[!0-9]*) echo "usage: run.sh [SECONDS]" >&2; exit 1 ;; esac
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${CETCTL_FUZZ_BUILD:-$top/build-fuzz}
targets=(fuzz-elf-notes fuzz-proc-status fuzz-proc-smaps fuzz-ld-cache)

if ! command -v clang >/dev/null; then
	echo "run.sh: clang is not installed (vm/install-deps.sh)" >&2
	exit 1
fi
mkdir -p "$build"
if ! { CC=clang cmake -S "$top" -B "$build" -DCETCTL_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$build/fuzz-configure.log" 2>&1 &&
       cmake --build "$build" -j2 --target fuzz >"$build/fuzz-build.log" 2>&1; }; then
	cat "$build/fuzz-configure.log" "$build/fuzz-build.log" >&2 2>/dev/null
	echo "run.sh: building the fuzz targets failed" >&2
	exit 1
fi

status=0
total_execs=0 total_crashes=0
for t in "${targets[@]}"; do
	bin=$build/tests/fuzz/$t
	work=$build/fuzz-corpus/$t
	crashes=$build/fuzz-crashes/$t
	log=$build/fuzz-logs/$t.log
	mkdir -p "$work" "$crashes" "$(dirname "$log")"
	before=$(find "$crashes" -type f | wc -l)
	# -timeout: one input taking over 10 s counts as a hang (a crash here);
	# -rss_limit_mb: a parser allocating gigabytes is a bug too.
	timeout -k 10 $((secs + 60)) "$bin" -max_total_time="$secs" -timeout=10 \
		-rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
		-artifact_prefix="$crashes/" \
		"$work" "$build/fuzz-seeds/$t" "$build/fuzz-seeds/regressions/$t" >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
	after=$(find "$crashes" -type f | wc -l)
	new=$((after - before))
	if [ "$rc" -ne 0 ] && [ "$new" -eq 0 ]; then
		new=1	# died without an artifact (e.g. killed by timeout)
	fi
	echo "$t: ${execs:-0} execs in $secs s, $new crashes (corpus $(find "$work" -type f | wc -l) inputs, log $log)"
	if [ "$new" -gt 0 ]; then
		status=1
		grep -m1 -E 'ERROR|SUMMARY|runtime error|deadly signal' "$log" | sed 's/^/    /'
		ls -t "$crashes" | head -n "$new" | sed "s|^|    artifact: $crashes/|"
	fi
	total_execs=$((total_execs + ${execs:-0}))
	total_crashes=$((total_crashes + new))
done
echo "fuzz: $total_execs execs, $total_crashes crashes"
exit $status
