#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/elf.sh [DIR] — `cetctl elf` against its peers over a directory tree
# (default /usr), warm cache, same machine, same run:
#
#   cetctl elf -r DIR          the real use: walk, skip non-ELF, read notes
#   cetctl elf FILE...         the ELF files only (found by the walk above)
#   readelf -n, one per file   a shell loop (a sample of BENCH_SAMPLE files)
#   eu-readelf -n FILE...      elfutils, many files per call (xargs)
#   scanelf -R -B -e DIR       pax-utils, walks the tree, reads program headers
#
# Prints seconds, µs per ELF file and each peer's time per ELF file divided
# by cetctl's (how many times faster cetctl is). Environment:
# CETCTL (default build/cetctl), BENCH_RUNS (3), BENCH_SAMPLE (1000).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/lib.sh"
CETCTL=${CETCTL:-$top/build/cetctl}
dir=${1:-/usr}
runs=${BENCH_RUNS:-3}
sample=${BENCH_SAMPLE:-1000}
[ -x "$CETCTL" ] || { echo "bench/elf: no cetctl at $CETCTL (build first)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The ELF files of the tree, and how many files the walk looked at.
"$CETCTL" elf -r -n -o FILE "$dir" >"$tmp/elf.list" 2>"$tmp/summary" || true
nelf=$(wc -l <"$tmp/elf.list")
nall=$(find "$dir" -xdev -type f 2>/dev/null | wc -l)
[ "$nelf" -gt 0 ] || { echo "bench/elf: no ELF file under $dir" >&2; exit 1; }
# (no `| head`: under pipefail the SIGPIPE it gives awk would end the script)
awk -v n="$nelf" -v s="$sample" 'c < s && (n <= s || NR % int(n / s) == 0) { print; c++ }' \
	"$tmp/elf.list" >"$tmp/sample.list"
nsample=$(wc -l <"$tmp/sample.list")

echo "bench/elf: $dir: $nall regular files, $nelf ELF; readelf sample $nsample files; timer: $(bench_timer)"
echo "cetctl: $CETCTL ($("$CETCTL" --version 2>/dev/null | head -n1))"

# row NAME FILES BASE "WALL CPU": remembered for the table; BASE is the
# cetctl row it is compared with (0: both walk the tree, 1: both are given
# the ELF files)
names=() files=() bases=() secs=() cpus=()
row() { names+=("$1"); files+=("$2"); bases+=("$3"); secs+=("${4% *}"); cpus+=("${4#* }"); }

row "cetctl elf -r $dir" "$nelf" 0 "$(bench_mean "$runs" 1 "'$CETCTL' elf -r '$dir' >/dev/null 2>&1")"
row "cetctl elf FILE... (ELF only)" "$nelf" 1 \
	"$(bench_mean "$runs" 1 "xargs -d '\n' -a '$tmp/elf.list' '$CETCTL' elf >/dev/null 2>&1")"
if command -v readelf >/dev/null; then
	row "readelf -n, one call per file" "$nsample" 1 \
		"$(bench_mean "$runs" 0 "while IFS= read -r f; do readelf -n \"\$f\"; done <'$tmp/sample.list' >/dev/null 2>&1")"
fi
if command -v eu-readelf >/dev/null; then
	row "eu-readelf -n FILE... (xargs)" "$nelf" 1 \
		"$(bench_mean "$runs" 1 "xargs -d '\n' -a '$tmp/elf.list' eu-readelf -n >/dev/null 2>&1")"
fi
if command -v scanelf >/dev/null; then
	row "scanelf -R -B -e $dir" "$nelf" 0 "$(bench_mean "$runs" 1 "scanelf -R -B -e '$dir' >/dev/null 2>&1")"
else
	echo "(scanelf not installed: package pax-utils)"
fi

printf '\n%-36s %6s %8s %8s %9s %9s %7s %7s\n' tool files "wall s" "cpu s" "wall us/f" "cpu us/f" "x wall" "x cpu"
for i in "${!names[@]}"; do
	b=${bases[$i]}
	awk -v name="${names[$i]}" -v n="${files[$i]}" -v s="${secs[$i]}" -v c="${cpus[$i]}" \
		-v bs="${secs[$b]}" -v bc="${cpus[$b]}" -v bn="${files[$b]}" -v self="$((i == b))" \
		'BEGIN { printf "%-36s %6d %8.3f %8.3f %9.1f %9.1f", name, n, s, c, s / n * 1e6, c / n * 1e6
			 if (self) print "       -       -"
			 else printf " %7.1f %7.1f\n", (s / n) / (bs / bn), (c / n) / (bc / bn) }'
done
cat <<'TXT'
(per ELF file; x wall / x cpu: the tool's time per ELF file over cetctl's on the same
 task, > 1 means cetctl is faster: scanelf -R against cetctl elf -r (both walk the
 tree), readelf and eu-readelf against cetctl elf FILE... (all are given the ELF files))
TXT
awk -v s="${secs[0]}" -v c="${cpus[0]}" -v n="$nall" 'BEGIN {
	printf "cetctl elf -r: %.1f us wall, %.1f us cpu per file walked (ELF or not)\n", s / n * 1e6, c / n * 1e6 }'
