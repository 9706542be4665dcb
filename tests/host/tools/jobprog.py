#!/usr/bin/env python3
"""jobprog.py READY READLINE SECONDS: a program for the job-control tests.

Takes SIGINT with sigtimedwait() (blocked, so each copy the kernel holds is
counted once, and none is lost to a handler that runs once for two), makes
the file READY, reads a line from standard input when READLINE is 1, waits
SECONDS counting the SIGINTs, then prints "ints N line L" and exits 7.
"""
import signal
import sys
import time

ready, readline, seconds = sys.argv[1], sys.argv[2] == "1", float(sys.argv[3])
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT])
with open(ready, "w"):
    pass
line = sys.stdin.readline().rstrip("\n") if readline else "-"
n, end = 0, time.monotonic() + seconds
while True:
    left = end - time.monotonic()
    if left <= 0:
        break
    if signal.sigtimedwait([signal.SIGINT], left) is not None:
        n += 1
n += len(signal.sigpending() & {signal.SIGINT})
print("ints %d line %s" % (n, line), flush=True)
sys.exit(7)
