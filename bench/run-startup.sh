#!/bin/bash
# bench/run-startup.sh [CETCTL] — start-up overhead of `cetctl run` against a plain exec.
#
# Compares, for a program that does nothing (/bin/true) and one that maps a few
# libraries (/bin/ls /):
#   plain            the program itself
#   run              cetctl run PROG            (resolve + exec: the launcher's floor)
#   run --trace-only cetctl run --trace-only    (tracer forked as a grandchild, seize before
#                                                the exec, exec event, AT_SECURE, one injected
#                                                syscall, restore, /proc check, detach; the
#                                                program replaces cetctl: no wait)
#   run --shstk      cetctl run --shstk -q      (the real thing: enable + lock + /proc check;
#                                                only where this CPU/kernel has user_shstk)
# Uses hyperfine when installed (vm/install-deps.sh installs it), else a bash loop.
# Results: a table on stdout; with hyperfine also bench/results-<host>.md if BENCH_SAVE=1.
#
# BENCH_PERF=1: perf stat instead, BENCH_ROUNDS (3) interleaved rounds of BENCH_RUNS
# each, CPU time (task-clock: the command and its children, tracer included), wall
# time and context switches per start-up, for /bin/true; BENCH_BASELINE=OTHER-CETCTL
# adds its rows (before/after comparisons in the same period on a shared machine),
# and the --trace-only --method=glibc row is added (the loader traced to the entry).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
CETCTL=${1:-${CETCTL:-$top/build/cetctl}}
[[ -x $CETCTL ]] || { echo "run-startup: no cetctl at $CETCTL (build first)" >&2; exit 1; }
runs=${BENCH_RUNS:-200}

shstk=0
if grep -qw user_shstk /proc/cpuinfo && grep -q '^x86_Thread_features:' /proc/self/status; then
	shstk=1
fi

if [[ ${BENCH_PERF:-0} == 1 ]]; then
	cmds=("/bin/true")
	[[ -n ${BENCH_BASELINE:-} ]] && cmds+=("$BENCH_BASELINE run /bin/true"
		"$BENCH_BASELINE run --trace-only /bin/true")
	cmds+=("$CETCTL run /bin/true" "$CETCTL run --trace-only /bin/true"
		"$CETCTL run --trace-only --method=glibc /bin/true")
	for ((r = 1; r <= ${BENCH_ROUNDS:-3}; r++)); do
		echo "== round $r, $(cut -d' ' -f1-3 /proc/loadavg) load"
		for c in "${cmds[@]}"; do
			# shellcheck disable=SC2086  # $c: a command line, split into its words
			perf stat -r "$runs" -e task-clock,context-switches $c 2>&1 >/dev/null |
				awk -v c="$c" '/task-clock/ {cpu = $1} /context-switches/ {cs = $1}
					/elapsed/ {w = $1 * 1000}
					END {printf "%-60s cpu %6.2f ms  wall %6.2f ms  cs %s\n", c, cpu, w, cs}'
		done
	done
	exit 0
fi

for prog in "/bin/true" "/bin/ls /"; do
	cmds=("$prog" "$CETCTL run $prog" "$CETCTL run --trace-only $prog")
	((shstk)) && cmds+=("$CETCTL run --shstk -q $prog")
	echo "== $prog  (user shadow stacks here: $([[ $shstk == 1 ]] && echo yes || echo no))"
	if command -v hyperfine >/dev/null; then
		args=(--warmup 20 --runs "$runs" -N --style basic)
		[[ ${BENCH_SAVE:-0} == 1 ]] &&
			args+=(--export-markdown "$top/bench/results-$(hostname)-${prog//[^a-z]/_}.md")
		hyperfine "${args[@]}" "${cmds[@]}" 2>&1 | grep -v '^ *$' | sed -n '/Time\|±\|faster\|^ *[0-9.]* ±\|Summary\|Benchmark/p'
	else
		for c in "${cmds[@]}"; do
			start=$(date +%s%N)
			for ((i = 0; i < runs; i++)); do $c >/dev/null; done
			end=$(date +%s%N)
			printf '%-50s %8.1f us/run\n' "$c" "$(((end - start) / runs / 1000)).0"
		done
	fi
done
