#!/usr/bin/env python3
"""vm/kselftest-compare.py BASE_LOG OURS_LOG — compare kernel selftest results.

Reads the "KSFT <name> <RESULT> ..." lines that vm/guest-kselftest.sh printed on the
console of two boots (unpatched 6.1 and our series, same config, same programs) and
prints one table row per test. Verdict per test:
  same       both kernels agree (PASS/PASS, FAIL/FAIL, SKIP/SKIP, ...)
  better     ours passes where 6.1 does not
  REGRESSION 6.1 passes (or skips) and ours fails, times out or lacks the result
The last line is "kselftest: N passed, N failed, N skipped" (passed = same or better
with ours passing, failed = regressions, skipped = both not passing, e.g. a test that
needs hardware QEMU lacks). Exit 1 on any regression, or when a log has no KSFT-DONE.
"""
import re
import sys

LINE = re.compile(r'KSFT (\S+) (PASS|FAIL|SKIP|TIMEOUT) rc=(\d+)')


def read(path):
    res, done = {}, False
    with open(path, errors='replace') as f:
        for line in f:
            m = LINE.search(line)
            if m:
                res[m.group(1)] = m.group(2)
            elif 'KSFT-DONE' in line:
                done = True
    return res, done


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    base, base_done = read(sys.argv[1])
    ours, ours_done = read(sys.argv[2])
    passed = failed = skipped = 0
    rows = []
    for name in sorted(set(base) | set(ours)):
        b, o = base.get(name, 'MISSING'), ours.get(name, 'MISSING')
        if b == 'PASS' and o != 'PASS':
            verdict = 'REGRESSION'
        elif b == 'SKIP' and o not in ('PASS', 'SKIP'):
            verdict = 'REGRESSION'
        elif o == 'PASS' and b != 'PASS':
            verdict = 'better'
        else:
            verdict = 'same'
        if verdict == 'REGRESSION':
            failed += 1
        elif o == 'PASS':
            passed += 1
        else:
            skipped += 1
        rows.append((name, b, o, verdict))
    w = max([len(r[0]) for r in rows] + [4])
    print(f"{'TEST':<{w}}  {'6.1':<8} {'OURS':<8} VERDICT")
    for r in rows:
        print(f"{r[0]:<{w}}  {r[1]:<8} {r[2]:<8} {r[3]}")
    ok = True
    for path, done in ((sys.argv[1], base_done), (sys.argv[2], ours_done)):
        if not done:
            print(f"kselftest-compare: {path}: the runner did not finish (no KSFT-DONE)")
            ok = False
    if not rows:
        print("kselftest-compare: no results at all")
        ok = False
    print(f"kselftest: {passed} passed, {failed} failed, {skipped} skipped")
    sys.exit(0 if ok and failed == 0 else 1)


if __name__ == '__main__':
    main()
