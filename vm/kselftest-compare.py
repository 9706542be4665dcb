#!/usr/bin/env python3
"""vm/kselftest-compare.py BASE_LOG OURS_LOG — compare kernel selftest results.

Reads the "KSFT <name> <RESULT> ..." lines that vm/guest-kselftest.sh printed on the
console of two boots (unpatched 6.1 and our series, same config, same programs) and
prints one table row per test. Verdict per test:
  same       both kernels agree (PASS/PASS, FAIL/FAIL, SKIP/SKIP, ...)
  better     ours passes where 6.1 does not
  REGRESSION 6.1 passes (or skips) and ours fails, times out or lacks the result
  slow       ours timed out where 6.1 passed, but 6.1 itself needed at least 3/4 of
             the time limit (the longest TIMEOUT of either log): under load such a
             test times out on either kernel (seen: userfaultfd-hugetlb_shared:dev,
             100 s of 120 on 6.1, timed out on ours at load average 6, while its
             sibling did the reverse). Counted as skipped and listed, never passed.
The last line is "kselftest: N passed, N failed, N skipped" (passed = same or better
with ours passing, failed = regressions, skipped = both not passing, e.g. a test that
needs hardware QEMU lacks). Exit 1 on any regression, or when a log has no KSFT-DONE.

The unpatched side may come from a recorded baseline (tests/guest/kselftest-baseline-6.1.txt),
which tests/run-all.sh writes and checks with these two:
  vm/kselftest-compare.py --record KEY NOTE LOG
        prints a baseline: "# key: KEY", "# NOTE", then the KSFT lines of the console LOG
        (those holding "KSFT" at the start or after "# ", which bats puts before a
        suite's output; that "# " at the start is dropped; bytes kept, CRs too);
        exit 1 when LOG cannot be read (the two comment lines are printed all the same)
  vm/kselftest-compare.py --key BASELINE
        prints the KEY a baseline was recorded for (nothing when it has none), for the
        caller to compare with the key of its inputs
"""
import re
import sys

LINE = re.compile(r'KSFT (\S+) (PASS|FAIL|SKIP|TIMEOUT) rc=(\d+)(?: secs=(\d+))?')


def read(path):
    res, secs, done = {}, {}, False
    with open(path, errors='replace') as f:
        for line in f:
            m = LINE.search(line)
            if m:
                res[m.group(1)] = m.group(2)
                secs[m.group(1)] = int(m.group(4) or 0)
            elif 'KSFT-DONE' in line:
                done = True
    return res, secs, done


KSFT_OUT = re.compile(rb'(^|# )KSFT')


def record(key, note, log):
    """The baseline's bytes: two comment lines, then LOG's KSFT lines (none when LOG
    cannot be read: the error is said on stderr) and whether LOG was read."""
    out = [b'# key: ' + key.encode(), b'# ' + note.encode()]
    try:
        with open(log, 'rb') as f:
            lines = f.read().split(b'\n')
    except OSError as e:
        print(f"kselftest-compare: cannot read {log}: {e.strerror}", file=sys.stderr)
        lines = None
    if lines and lines[-1] == b'':
        lines.pop()
    for line in lines or []:
        if KSFT_OUT.search(line):
            out.append(line[2:] if line.startswith(b'# ') else line)
    return b''.join(line + b'\n' for line in out), lines is not None


def recorded_key(path):
    """The "# key: " lines' values of a baseline (one, normally)."""
    with open(path, 'rb') as f:
        return [line[len(b'# key: '):] for line in f.read().split(b'\n')
                if line.startswith(b'# key: ')]


def main():
    if len(sys.argv) == 5 and sys.argv[1] == '--record':
        text, whole = record(*sys.argv[2:])
        sys.stdout.buffer.write(text)
        sys.exit(0 if whole else 1)
    if len(sys.argv) == 3 and sys.argv[1] == '--key':
        try:
            sys.stdout.buffer.write(b''.join(k + b'\n' for k in recorded_key(sys.argv[2])))
        except OSError as e:
            sys.exit(f"kselftest-compare: cannot read {sys.argv[2]}: {e.strerror}")
        return
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    base, base_secs, base_done = read(sys.argv[1])
    ours, ours_secs, ours_done = read(sys.argv[2])
    limit = max([t for r, s in ((base, base_secs), (ours, ours_secs))
                 for n, t in s.items() if r[n] == 'TIMEOUT'] or [120])
    passed = failed = skipped = 0
    rows = []
    for name in sorted(set(base) | set(ours)):
        b, o = base.get(name, 'MISSING'), ours.get(name, 'MISSING')
        if b == 'PASS' and o == 'TIMEOUT' and base_secs.get(name, 0) * 4 >= limit * 3:
            verdict = 'slow'
        elif b == 'PASS' and o != 'PASS':
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
