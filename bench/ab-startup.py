#!/usr/bin/env python3
# bench/ab-startup.py N "CMD A" "CMD B" - paired, interleaved start-up timing of two
# commands on a machine that is not quiet: N pairs, the order alternating (ABBA) so
# that neither command always runs first; each command posix_spawn()ed and waited for,
# stdout to /dev/null, 20 pairs of warm-up. Prints both medians and the median of the
# paired differences (B - A) with its quartiles, in ms: the difference, not the
# absolute numbers, is what survives the load. A and B the same command is the control.
import os
import statistics
import sys
import time

if len(sys.argv) != 4:
    sys.exit('usage: bench/ab-startup.py N "CMD A" "CMD B"')
n = int(sys.argv[1])
a, b = sys.argv[2].split(), sys.argv[3].split()
devnull = os.open(os.devnull, os.O_RDWR)


def once(cmd):
    t = time.perf_counter_ns()
    pid = os.posix_spawn(cmd[0], cmd, os.environ,
                         file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1)])
    _, st = os.waitpid(pid, 0)
    if st != 0:
        sys.exit(f"ab-startup: {' '.join(cmd)}: wait status {st}")
    return (time.perf_counter_ns() - t) / 1e6


for _ in range(20):
    once(a)
    once(b)
ta, tb, diff = [], [], []
for i in range(n):
    if i % 2 == 0:
        x = once(a)
        y = once(b)
    else:
        y = once(b)
        x = once(a)
    ta.append(x)
    tb.append(y)
    diff.append(y - x)
q = statistics.quantiles(diff, n=4)
print(f"A median {statistics.median(ta):.3f} ms  B median {statistics.median(tb):.3f} ms  "
      f"B-A paired median {statistics.median(diff):+.3f} ms "
      f"(quartiles {q[0]:+.3f} {q[2]:+.3f})")
