#!/usr/bin/env python3
"""count-sig.py READYFILE [SIG]: counts the copies of SIG (default USR1) sent
to it in the 2 s after it created READYFILE, then prints "got N".

The signal is blocked and taken with sigtimedwait(), one copy at a time: a
real-time signal queues every copy in the kernel, so two deliveries are
counted as two (a handler, in Perl or Python, may run once for both).
"""
import os
import signal
import sys
import time

sig = getattr(signal, "SIG" + (sys.argv[2] if len(sys.argv) > 2 else "USR1"))
signal.pthread_sigmask(signal.SIG_BLOCK, [sig])
with open(sys.argv[1], "w"):
    pass
n, end = 0, time.monotonic() + 2
while True:
    left = end - time.monotonic()
    if left <= 0:
        break
    if signal.sigtimedwait([sig], left) is not None:
        n += 1
print("got %d" % n)
