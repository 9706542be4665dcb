#!/usr/bin/env python3
"""vm/results.py KIND FILE — the counts tests/run-all.sh adds up, read from one log.

Prints one line, "PASSED FAILED SKIPPED", for tests/run-all.sh to read:

  tap FILE      bats' TAP output: "ok N ..." passed, "ok N ... # skip ..." skipped,
                "not ok N ..." failed, "not ok N ... # TODO ..." skipped
  ctest FILE    ctest's log: its last "N% tests passed, F tests failed out of T" line
                (passed T-F, failed F); "No tests were found" counts as 0 0 0
  fuzz FILE     tests/fuzz/run.sh's log: one "fuzz-NAME: ... N crashes ..." line per
                target; a target with 0 crashes passed, any other count failed
  summary FILE  the last "TIER: N passed, N failed, N skipped" line of a verdict
                (vm/parse-results.py, vm/kselftest-compare.py)

Exit status: 0 with the line printed; 1 when FILE holds no such result (a tier that
reported nothing: tests/run-all.sh counts it as broken, never as passed); 2 on usage
errors or an unreadable FILE.
"""
import re
import sys

TAP = re.compile(r'^(not ok|ok)\s+\d+')
TAP_SKIP = re.compile(r'#\s*skip\b', re.I)
TAP_TODO = re.compile(r'#\s*todo\b', re.I)
CTEST = re.compile(r'\d+% tests passed, (\d+) tests failed out of (\d+)')
FUZZ = re.compile(r'^fuzz-[a-z-]+: .* (\d+) crashes ')
SUMMARY = re.compile(r': *(\d+) passed, (\d+) failed, (\d+) skipped')


def tap(lines):
    """bats TAP: (passed, failed, skipped), or None when no test line was seen."""
    p = f = s = 0
    seen = False
    for line in lines:
        m = TAP.match(line)
        if not m:
            continue
        seen = True
        if m.group(1) == 'ok':
            if TAP_SKIP.search(line):
                s += 1
            else:
                p += 1
        elif TAP_TODO.search(line):
            s += 1
        else:
            f += 1
    return (p, f, s) if seen else None


def ctest(lines):
    """ctest's last summary line; None when there is none (ctest crashed, or not run)."""
    last = None
    for line in lines:
        m = CTEST.search(line)
        if m:
            last = m
    if last:
        failed, total = int(last.group(1)), int(last.group(2))
        return (total - failed, failed, 0)
    if any('No tests were found' in line for line in lines):
        return (0, 0, 0)
    return None


def fuzz(lines):
    """One line per fuzz target; None when no target reported."""
    p = f = 0
    for line in lines:
        m = FUZZ.match(line)
        if not m:
            continue
        if int(m.group(1)) == 0:
            p += 1
        else:
            f += 1
    return (p, f, 0) if p + f else None


def summary(lines):
    """The last "TIER: N passed, N failed, N skipped" line."""
    last = None
    for line in lines:
        m = SUMMARY.search(line)
        if m:
            last = m
    return tuple(int(g) for g in last.groups()) if last else None


KINDS = {'tap': tap, 'ctest': ctest, 'fuzz': fuzz, 'summary': summary}


def main(argv):
    if len(argv) == 1 and argv[0] in ('-h', '--help'):
        print(__doc__)
        return 0
    if len(argv) != 2 or argv[0] not in KINDS:
        print("usage: vm/results.py tap|ctest|fuzz|summary FILE", file=sys.stderr)
        return 2
    try:
        with open(argv[1], 'rb') as fh:
            text = fh.read().decode('utf-8', 'replace')
    except OSError as e:
        print(f"results: cannot read {argv[1]}: {e.strerror}", file=sys.stderr)
        return 2
    counts = KINDS[argv[0]](text.replace('\r\n', '\n').split('\n'))
    if counts is None:
        print(f"results: {argv[1]}: no {argv[0]} result", file=sys.stderr)
        return 1
    print('%d %d %d' % counts)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
