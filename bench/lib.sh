# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# Shared by the bench/ scripts: time a shell command, with hyperfine when it
# is installed (vm/install-deps.sh installs it), else a plain timing loop.
#
#   bench_mean RUNS WARMUP COMMAND   -> "WALL CPU": mean wall-clock seconds and
#                                       mean user+system CPU seconds (the
#                                       command and its children) per run
#
# Both are given because the machines this runs on are often shared: CPU
# time is what the tool costs, wall time what a user waits.
# Set BENCH_NO_HYPERFINE=1 to force the loop. Results are printed, never
# asserted: they depend on the machine.

bench_mean() {
	local runs=$1 warmup=$2 cmd=$3 json i t
	if [ "${BENCH_NO_HYPERFINE:-0}" != 1 ] && command -v hyperfine >/dev/null &&
	   command -v jq >/dev/null; then
		json=$(mktemp)
		if hyperfine --style none --runs "$runs" --warmup "$warmup" -i \
			--export-json "$json" "$cmd" >/dev/null 2>&1; then
			jq -r '.results[0] | "\(.mean) \(.user + .system)"' "$json"
			rm -f "$json"
			return 0
		fi
		rm -f "$json"
	fi
	for ((i = 0; i < warmup; i++)); do bash -c "$cmd" >/dev/null 2>&1 || true; done
	t=$( { TIMEFORMAT='%R %U %S'
	       time for ((i = 0; i < runs; i++)); do bash -c "$cmd" >/dev/null 2>&1 || true; done
	     } 2>&1 )
	awk -v t="$t" -v n="$runs" 'BEGIN { split(t, a, " "); printf "%.6f %.6f\n", a[1] / n, (a[2] + a[3]) / n }'
}

# bench_timer: which timer bench_mean uses
bench_timer() {
	if [ "${BENCH_NO_HYPERFINE:-0}" != 1 ] && command -v hyperfine >/dev/null &&
	   command -v jq >/dev/null; then
		hyperfine --version
	else
		echo "bash timing loop (hyperfine not installed)"
	fi
}
