#!/usr/bin/env python3
"""vm/bochs/noquirks-check.py CONSOLE_LOG — the verdict of vm/bochs/demo-noquirks.sh.

Reads the console log of a Bochs boot without the workaround's quirks (run-bochs.sh
--no-quirks, suite bochs-quirks) and says, for each state-preservation test of
tests/guest/bochs-quirks.bats, what the boot showed:

  demo: OBSERVED without the workaround: 'T' FAILED         a "not ok" line
  demo: 'T' skipped: REASON                                 an "ok ... # skip" line
  demo: 'T' passed even without the workaround              an "ok" line
  demo: OBSERVED without the workaround: 'T' never reported ...   none: the guest hung
                                                            or crashed in it

then the first 20 [FAIL]/[STRESS]/[PASS] lines of the stress programs, and a last line.
Exit 0 when a test failed or never reported (the Bochs 2.7 bugs are observable), 1 when
all passed or skipped (nothing demonstrated), 2 on usage errors.
"""
import re
import sys

# the tests' names, as far as their TAP lines need to be told apart
TESTS = ('YMM registers survive', 'shadow-stack state survives',
         "a thread's shadow-stack state")
SUITE = 'bochs-quirks: '
STRESS = re.compile(r'\[FAIL\]|\[STRESS\]|\[PASS\]')
STRESS_MAX = 20


def verdict(lines, test, log):
    """(observed, message) for one test, from the first kind of line found for it:
    "not ok", then "ok ... # skip", then "ok"; none at all is observed too."""
    name = re.escape(SUITE + test)
    bad = re.compile(r'^not ok [0-9]* ' + name)
    good = re.compile(r'^ok [0-9]* ' + name)
    oks = [line for line in lines if good.match(line)]
    if any(bad.match(line) for line in lines):
        return True, f"demo: OBSERVED without the workaround: '{test}' FAILED"
    skipped = [line for line in oks if re.search(r'# skip', line)]
    if skipped:
        why = '\n'.join(re.sub(r'.*# skip ', '', line, count=1) for line in oks)
        return False, f"demo: '{test}' skipped: {why}"
    if oks:
        return False, f"demo: '{test}' passed even without the workaround"
    return True, (f"demo: OBSERVED without the workaround: '{test}' never reported — "
                  f"the guest hung or crashed in it (see {log})")


def main(argv):
    if len(argv) == 1 and argv[0] in ('-h', '--help'):
        print(__doc__)
        return 0
    if len(argv) != 1:
        print("usage: vm/bochs/noquirks-check.py CONSOLE_LOG", file=sys.stderr)
        return 2
    log = argv[0]
    try:
        with open(log, 'rb') as fh:
            text = fh.read().decode('utf-8', 'replace')
    except OSError as e:
        print(f"noquirks-check: cannot read {log}: {e.strerror}", file=sys.stderr)
        return 2
    lines = [line.rstrip('\r') for line in text.split('\n')]
    seen = False
    for test in TESTS:
        observed, say = verdict(lines, test, log)
        seen |= observed
        print(say)
    for line in [line for line in lines if STRESS.search(line)][:STRESS_MAX]:
        print(f"demo:   {line}")
    if seen:
        print("demo: the Bochs 2.7 bugs are observable without "
              "vm/bochs/cet-bochs27-quirks.patch's quirks")
        return 0
    print("demo: nothing demonstrated")
    return 1


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
