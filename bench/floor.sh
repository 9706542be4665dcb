#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/floor.sh [DIR] — `cetctl elf FILE...` per ELF file against the
# system-call floor, on the same list of ELF files (those `cetctl elf -r
# DIR` finds, default /usr), warm cache, same run. Floors
# (bench/syscall-floor.c): open + one 1 KiB pread + close; the safe floor
# of issue 23 (`--as-cetctl`: stat, open, fstat, pread 1 KiB, close); and
# the same with the further preads the answer needs (`--safe`: an object's
# section headers and notes, a shared object's dynamic segment). Goal
# (issue 23): cetctl elf, table and -J, within 1.5x the safe floor per ELF
# file. Each command is one process over the whole list (cetctl through
# xargs, which may split it), so start-up is in its figure.
# Environment: CETCTL (default build/cetctl); CETCTL_BEFORE, a second
# binary measured beside it (rows "before:"); BENCH_ROUNDS (1) rounds, the
# commands interleaved within each, means and ranges over the rounds;
# SYSCALL_FLOOR (default build/bench/syscall-floor, else compiled here);
# BENCH_RUNS (10) runs per command and round. Both binaries are copied to
# paths of the same length, so that xargs splits the list alike.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/lib.sh"
CETCTL=${CETCTL:-$top/build/cetctl}
dir=${1:-/usr}
runs=${BENCH_RUNS:-10}
rounds=${BENCH_ROUNDS:-1}
[ -x "$CETCTL" ] || { echo "bench/floor: no cetctl at $CETCTL (build first)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
floor=${SYSCALL_FLOOR:-$(dirname "$CETCTL")/bench/syscall-floor}
if [ ! -x "$floor" ]; then
	floor=$tmp/syscall-floor
	cc -O2 -o "$floor" "$top/bench/syscall-floor.c"
fi
mkdir "$tmp/aft" "$tmp/bef"
cp "$CETCTL" "$tmp/aft/cetctl"
[ -z "${CETCTL_BEFORE:-}" ] || cp "$CETCTL_BEFORE" "$tmp/bef/cetctl"

"$CETCTL" elf -r -n -o FILE "$dir" >"$tmp/elf.list" 2>/dev/null || true
n=$(wc -l <"$tmp/elf.list")
[ "$n" -gt 0 ] || { echo "bench/floor: no ELF file under $dir" >&2; exit 1; }
echo "bench/floor: $n ELF files under $dir; timer: $(bench_timer); $runs runs x $rounds rounds"
echo "load: $(cut -d" " -f1-3 /proc/loadavg) (1, 5, 15 min) at $(date -u +%H:%M) UTC"
"$floor" "$tmp/elf.list"
"$floor" --safe "$tmp/elf.list"

# rows: name and command; row 1 is the safe floor the goal is measured against
names=("floor: open+pread 1KiB+close" "safe floor (--as-cetctl)" "safe floor + needed preads")
cmds=("'$floor' '$tmp/elf.list'" "'$floor' --as-cetctl '$tmp/elf.list'" "'$floor' --safe '$tmp/elf.list'")
for who in bef aft; do
	[ "$who" = aft ] || [ -n "${CETCTL_BEFORE:-}" ] || continue
	label=$([ "$who" = bef ] && echo "before: " || { [ -n "${CETCTL_BEFORE:-}" ] && echo "after: "; } || true)
	names+=("${label}elf FILE... (table)" "${label}elf -J FILE..." "${label}elf -n -o FILE,SHSTK")
	for a in "" "-J" "-n -o FILE,SHSTK"; do
		cmds+=("xargs -d '\n' -a '$tmp/elf.list' '$tmp/$who/cetctl' elf $a >/dev/null 2>&1")
	done
done

declare -A wall cpu
for ((r = 0; r < rounds; r++)); do
	for i in "${!cmds[@]}"; do
		v=$(bench_mean "$runs" 2 "${cmds[$i]}")
		wall[$r,$i]=${v% *}
		cpu[$r,$i]=${v#* }
	done
	echo "round $((r + 1)) done, load $(cut -d" " -f1 /proc/loadavg)"
done

printf '\n%-34s %10s %10s %9s %9s %15s\n' command "wall us/f" "cpu us/f" "x safe" "x +reads" "x safe (range)"
for i in "${!cmds[@]}"; do
	ws=0 cs=0 lo=1e9 hi=0
	for ((r = 0; r < rounds; r++)); do
		ws=$(awk -v a="$ws" -v b="${wall[$r,$i]}" 'BEGIN { print a + b }')
		cs=$(awk -v a="$cs" -v b="${cpu[$r,$i]}" 'BEGIN { print a + b }')
		x=$(awk -v c="${cpu[$r,$i]}" -v f="${cpu[$r,1]}" 'BEGIN { print c / f }')
		lo=$(awk -v a="$lo" -v b="$x" 'BEGIN { print (b < a) ? b : a }')
		hi=$(awk -v a="$hi" -v b="$x" 'BEGIN { print (b > a) ? b : a }')
	done
	fs=0 gs=0
	for ((r = 0; r < rounds; r++)); do
		fs=$(awk -v a="$fs" -v b="${cpu[$r,1]}" 'BEGIN { print a + b }')
		gs=$(awk -v a="$gs" -v b="${cpu[$r,2]}" 'BEGIN { print a + b }')
	done
	awk -v name="${names[$i]}" -v n="$n" -v R="$rounds" -v w="$ws" -v c="$cs" -v f="$fs" -v g="$gs" \
		-v lo="$lo" -v hi="$hi" \
		'BEGIN { printf "%-34s %10.2f %10.2f %9.2f %9.2f %7.2f-%-7.2f\n", name, w / R / n * 1e6,
			 c / R / n * 1e6, c / f, c / g, lo, hi }'
done
echo "(cpu = user + system of the command and its children, mean over the rounds;"
echo " x safe: over the safe floor's cpu time, the goal <= 1.5; x +reads: over the"
echo " safe floor with the preads the answer needs; range: x safe in each round)"
