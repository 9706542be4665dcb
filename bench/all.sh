#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/all.sh — every cetctl benchmark, one after the other, on this
# machine: elf.sh (/usr), floor.sh (the same files), audit.sh (3,000 processes) and, when present,
# run-startup.sh. Prints the tables; README.md in this directory shows one
# run and the command that produced it. Environment: CETCTL, BENCH_RUNS.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
export CETCTL=${CETCTL:-$top/build/cetctl}
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -srm), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
rc=0
echo; echo "## cetctl elf"; bash "$top/bench/elf.sh" "${BENCH_ELF_DIR:-/usr}" || rc=1
echo; echo "## cetctl elf against the system-call floor"; bash "$top/bench/floor.sh" "${BENCH_ELF_DIR:-/usr}" || rc=1
echo; echo "## cetctl audit"; bash "$top/bench/audit.sh" "${BENCH_NPROC:-3000}" || rc=1
if [ -f "$top/bench/run-startup.sh" ]; then
	echo; echo "## cetctl run start-up"; bash "$top/bench/run-startup.sh" "$CETCTL" || rc=1
fi
exit $rc
