#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/floor.sh [DIR] — `cetctl elf FILE...` per ELF file against the
# system-call floor (bench/syscall-floor.c: open + one 1 KiB pread + close
# per file), on the same list of ELF files (those `cetctl elf -r DIR` finds,
# default /usr), warm cache, same run. Goal (issue 14): cetctl elf within
# 1.5x the floor per ELF file. Both are one process over the whole list,
# so each side's start-up (cetctl: libelf, libsmartcols; the floor: libc)
# is in its figure. Environment: CETCTL (default build/cetctl),
# SYSCALL_FLOOR (default build/bench/syscall-floor, else compiled here),
# BENCH_RUNS (10).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/lib.sh"
CETCTL=${CETCTL:-$top/build/cetctl}
dir=${1:-/usr}
runs=${BENCH_RUNS:-10}
[ -x "$CETCTL" ] || { echo "bench/floor: no cetctl at $CETCTL (build first)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
floor=${SYSCALL_FLOOR:-$(dirname "$CETCTL")/bench/syscall-floor}
if [ ! -x "$floor" ]; then
	floor=$tmp/syscall-floor
	cc -O2 -o "$floor" "$top/bench/syscall-floor.c"
fi

"$CETCTL" elf -r -n -o FILE "$dir" >"$tmp/elf.list" 2>/dev/null || true
n=$(wc -l <"$tmp/elf.list")
[ "$n" -gt 0 ] || { echo "bench/floor: no ELF file under $dir" >&2; exit 1; }
echo "bench/floor: $n ELF files under $dir; timer: $(bench_timer); $runs runs"
"$floor" "$tmp/elf.list"

names=() secs=() cpus=()
row() { names+=("$1"); secs+=("${2% *}"); cpus+=("${2#* }"); }
row "floor: open+pread 1KiB+close" "$(bench_mean "$runs" 2 "'$floor' '$tmp/elf.list' >/dev/null")"
row "cetctl's system calls alone" "$(bench_mean "$runs" 2 "'$floor' --as-cetctl '$tmp/elf.list' >/dev/null")"
row "cetctl elf FILE... (table)" \
	"$(bench_mean "$runs" 2 "xargs -d '\n' -a '$tmp/elf.list' '$CETCTL' elf >/dev/null 2>&1")"
row "cetctl elf -J FILE..." \
	"$(bench_mean "$runs" 2 "xargs -d '\n' -a '$tmp/elf.list' '$CETCTL' elf -J >/dev/null 2>&1")"
row "cetctl elf -n -o FILE,SHSTK FILE..." \
	"$(bench_mean "$runs" 2 "xargs -d '\n' -a '$tmp/elf.list' '$CETCTL' elf -n -o FILE,SHSTK >/dev/null 2>&1")"

printf '\n%-36s %8s %8s %10s %10s %7s %7s\n' command "wall s" "cpu s" "wall us/f" "cpu us/f" "x wall" "x cpu"
for i in "${!names[@]}"; do
	awk -v name="${names[$i]}" -v n="$n" -v s="${secs[$i]}" -v c="${cpus[$i]}" \
		-v bs="${secs[0]}" -v bc="${cpus[0]}" \
		'BEGIN { printf "%-36s %8.4f %8.4f %10.2f %10.2f %7.2f %7.2f\n", name, s, c,
			 s / n * 1e6, c / n * 1e6, s / bs, c / bc }'
done
echo "(x wall / x cpu: time over the floor's on the same files; goal <= 1.5)"
