#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/audit.sh [NPROC] — `cetctl audit` over many processes against
# reading the same /proc files with cat, same machine, same run:
#
#   cetctl audit               default table (status, exe marking, smaps when on)
#   cetctl audit -J            the same as JSON
#   cat /proc/[0-9]*/status    what the audit has to read at least
#   cat /proc/[0-9]*/smaps     what a naive shadow-stack scan would read
#
# NPROC (default 3000) idle processes are started for the run (fork only,
# tests/host/hostile/spawn.c) and stopped afterwards. Prints wall and CPU
# time per run, per process, and audit's time over cat's.
# Environment: CETCTL (default build/cetctl), BENCH_RUNS (10).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/lib.sh"
CETCTL=${CETCTL:-$top/build/cetctl}
nproc=${1:-3000}
runs=${BENCH_RUNS:-10}
[ -x "$CETCTL" ] || { echo "bench/audit: no cetctl at $CETCTL (build first)" >&2; exit 1; }
tmp=$(mktemp -d)
hold=
cleanup() {
	[ -n "$hold" ] && kill "$hold" 2>/dev/null && wait "$hold" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

gcc -O1 -pthread -o "$tmp/spawn" "$top/tests/host/hostile/spawn.c"
"$tmp/spawn" hold "$nproc" >"$tmp/hold.out" & hold=$!
for _ in $(seq 300); do grep -q '^ready' "$tmp/hold.out" 2>/dev/null && break; sleep 0.1; done
held=$(awk '/^ready/ { print $2 }' "$tmp/hold.out")
procs=(/proc/[0-9]*)
total=${#procs[@]}
echo "bench/audit: $held processes started, $total in /proc; timer: $(bench_timer)"

names=() secs=() cpus=()
row() { names+=("$1"); secs+=("${2% *}"); cpus+=("${2#* }"); }
row "cetctl audit" "$(bench_mean "$runs" 1 "'$CETCTL' audit >/dev/null 2>&1")"
row "cetctl audit -J" "$(bench_mean "$runs" 1 "'$CETCTL' audit -J >/dev/null 2>&1")"
row "cat /proc/[0-9]*/status" "$(bench_mean "$runs" 1 "cat /proc/[0-9]*/status >/dev/null 2>&1")"
row "cat /proc/[0-9]*/smaps" "$(bench_mean "$runs" 1 "cat /proc/[0-9]*/smaps >/dev/null 2>&1")"

printf '\n%-26s %8s %8s %10s %10s %14s\n' command "wall s" "cpu s" "wall us/p" "cpu us/p" "audit x (cpu)"
for i in "${!names[@]}"; do
	awk -v name="${names[$i]}" -v s="${secs[$i]}" -v c="${cpus[$i]}" -v n="$total" -v a="${cpus[0]}" \
		'BEGIN { printf "%-26s %8.3f %8.3f %10.1f %10.1f %14.2f\n", name, s, c, s / n * 1e6, c / n * 1e6, a / c }'
done
echo "(audit x: cetctl audit's CPU time over the command's; <= 1 means the audit costs no more)"
awk -v a="${secs[0]}" -v s="${secs[2]}" -v m="${secs[3]}" 'BEGIN {
	printf "wall ratios: audit / cat status = %.2f, audit / cat smaps = %.2f\n", a / s, a / m }'
