#!/usr/bin/env python3
"""vm/parse-results.py LOG TIER [--allow ERE]...  (vm/parse-results.sh is the same)

Turns a guest console log (written by vm/run-qemu.sh / vm/run-bochs.sh, produced by
vm/guest-init) into a verdict for one tier. Prints per-suite counts, every failing test,
every unexpected kernel line, and as the last line

    TIER: N passed, N failed, N skipped

Exit status: 0 when nothing failed, 1 otherwise, 2 on usage errors / unreadable log.

What counts as failed (each adds to "failed"):
  * a TAP "not ok" line;
  * tests a suite announced in its plan (1..N) but never reported (crash or timeout),
    or a suite that exited non-zero without any "not ok" (bats error, timeout rc=124);
  * a missing final marker "CETCTL-GUEST-DONE rc=N" (hung, crashed or panicked guest);
  * unexpected kernel lines (one failure for all of them together): WARNING (WARN*),
    BUG, Oops, Kernel panic, general protection fault, "control protection", "segfault",
    RCU stalls / soft lockups, hung tasks ("blocked for more than N seconds"), bad page
    state / Bad rss-counter, list corruption, UBSAN.
Skipped: TAP "ok N ... # skip reason" (the reason is printed).

Expected kernel lines — how a test excuses the fault it provokes on purpose:
  in the guest, `cetctl-expect 'ERE'` (vm/guest-expect) writes "CETCTL-EXPECT ERE" to
  /dev/kmsg; from that line on, kernel lines matching ERE (Python re.search on the
  message text) are counted as expected instead of failing, until the end of the
  current suite (vm/guest-init writes "CETCTL-SUITE-BEGIN name" to /dev/kmsg, which
  clears all expectations) or an explicit "CETCTL-EXPECT-CLEAR" (`cetctl-expect --clear`).
  Because the declaration travels through the kernel log itself, it is ordered exactly
  with the kernel's own messages. Lines before the declaration are never excused.
  --allow ERE (repeatable) excuses matching lines for the whole log (e.g. for the opt-in
  Bochs run without the workaround, where boot-time warnings are the point).
The kernel log is taken from the CETCTL-DMESG-BEGIN/END dump that /init prints at the
end; when the guest died before it, from the console's "[ time ] ..." kernel lines.
"""
import re
import sys

TAP = re.compile(r'^(not ok|ok)\s+(\d+)\b\s*(.*)$')
PLAN = re.compile(r'^1\.\.(\d+)\s*$')
SKIP = re.compile(r'#\s*skip\b\s*(.*)$', re.I)
DIAG_MAX = 12           # diagnostic lines reported per failed test
TS = re.compile(r'^\[\s*\d+\.\d+\]\s?')
BAD = re.compile(
    r'WARNING: CPU:|WARNING: at |\bBUG: |kernel BUG at|\bOops\b|Kernel panic|'
    r'general protection fault|control protection|segfault|soft lockup|'
    r'hard LOCKUP|detected stalls|UBSAN:|list_(add|del) corruption|'
    r'double fault|unable to handle page fault|[Bb]ad page state|Bad rss-counter|'
    r'blocked for more than \d+ seconds')


def usage(msg):
    print(f"parse-results: {msg}\nusage: vm/parse-results.sh LOG TIER [--allow ERE]...",
          file=sys.stderr)
    sys.exit(2)


def main(argv):
    args, allow = [], []
    i = 0
    while i < len(argv):
        if argv[i] == '--allow':
            if i + 1 >= len(argv):
                usage("--allow needs an ERE")
            allow.append(re.compile(argv[i + 1]))
            i += 2
        elif argv[i] in ('-h', '--help'):
            print(__doc__)
            return 0
        else:
            args.append(argv[i])
            i += 1
    if len(args) != 2:
        usage("need LOG and TIER")
    logf, tier = args
    try:
        with open(logf, 'rb') as f:
            raw = f.read().decode('utf-8', 'replace')
    except OSError as e:
        usage(f"cannot read {logf}: {e}")
    lines = [l.rstrip('\r') for l in raw.replace('\r\n', '\n').split('\n')]

    passed = failed = skipped = 0
    problems = []          # harness-level failures (each counts as one failure)
    fails, skips = [], []
    suites = []            # (name, ok, fail, skip, rc)
    cur = None             # current suite dict
    done_rc = None
    in_dmesg = False
    dmesg, console_k = [], []
    diag = None            # diagnostics of the last failed test, while they come

    def close_suite(rc):
        nonlocal failed
        s = cur
        reported = s['ok'] + s['fail'] + s['skip']
        if s['plan'] is not None and reported < s['plan']:
            miss = s['plan'] - reported
            failed += miss
            problems.append(f"{s['name']}: {miss} of {s['plan']} planned tests never reported "
                            f"(suite rc={rc}, crashed or timed out)")
        elif rc not in (None, 0) and s['fail'] == 0:
            failed += 1
            problems.append(f"{s['name']}: exited rc={rc} without a failing test "
                            f"({'timeout' if rc == 124 else 'bats error'})")
        elif rc is None:
            failed += 1
            problems.append(f"{s['name']}: never finished (no CETCTL-SUITE-END)")
        suites.append((s['name'], s['ok'], s['fail'], s['skip'], rc))

    for l in lines:
        if in_dmesg:
            if l.startswith('CETCTL-DMESG-END'):
                in_dmesg = False
            else:
                dmesg.append(l)
            continue
        if l.startswith('CETCTL-DMESG-BEGIN'):
            in_dmesg = True
            continue
        m = re.match(r'^CETCTL-SUITE-BEGIN (\S+)', l)
        if m:
            if cur:
                close_suite(None)
            cur = {'name': m.group(1), 'ok': 0, 'fail': 0, 'skip': 0, 'plan': None}
            continue
        m = re.match(r'^CETCTL-SUITE-END (\S+) rc=(\d+)', l)
        if m and cur:
            close_suite(int(m.group(2)))
            cur = None
            continue
        m = re.search(r'CETCTL-GUEST-DONE rc=(\d+)', l)
        if m:
            done_rc = int(m.group(1))
            continue
        if TS.match(l):
            console_k.append(l)
        if cur is None:
            continue
        m = PLAN.match(l)
        if m and cur['plan'] is None:
            cur['plan'] = int(m.group(1))
            continue
        m = TAP.match(l)
        if not m:
            # bats' diagnostics of a failed test ("# " lines after its "not ok"):
            # the first few go into the report, so that a CI log that keeps only
            # the summary still says why
            if diag is not None and l.startswith('# ') and len(diag) < DIAG_MAX:
                diag.append(l.rstrip())
            continue
        diag = None
        desc = m.group(3)
        if m.group(1) == 'not ok':
            cur['fail'] += 1
            failed += 1
            diag = []
            fails.append((f"{cur['name']}: not ok {m.group(2)} {desc}", diag))
        elif SKIP.search(desc):
            cur['skip'] += 1
            skipped += 1
            skips.append(f"{cur['name']}: {desc}")
        else:
            cur['ok'] += 1
            passed += 1
    if cur:
        close_suite(None)

    # kernel log check
    klog = dmesg if dmesg else console_k
    expects, unexpected, expected_n = [], [], 0
    for l in klog:
        msg = TS.sub('', l)
        if 'CETCTL-SUITE-BEGIN' in msg or 'CETCTL-EXPECT-CLEAR' in msg:
            expects = []
            continue
        m = re.search(r'CETCTL-EXPECT (.*)$', msg)
        if m:
            try:
                expects.append(re.compile(m.group(1)))
            except re.error as e:
                problems.append(f"bad CETCTL-EXPECT regex {m.group(1)!r}: {e}")
            continue
        if 'CETCTL-' in msg or not BAD.search(msg):
            continue
        if any(e.search(msg) for e in expects) or any(a.search(msg) for a in allow):
            expected_n += 1
        else:
            unexpected.append(l)
    if unexpected:
        failed += 1
        problems.append(f"{len(unexpected)} unexpected kernel log line(s) "
                        "(WARN/BUG/Oops/panic/control protection/segfault)")

    if done_rc is None:
        failed += 1
        problems.append("final marker CETCTL-GUEST-DONE missing: the guest hung, crashed, "
                        "panicked or timed out")
    if not suites:
        failed += 1
        problems.append("no test suite ran in the guest")

    # report
    print(f"== {tier}: results from {logf}")
    for name, o, f_, s, rc in suites:
        print(f"   {name}: {o} passed, {f_} failed, {s} skipped (rc={rc})")
    for s in skips:
        print(f"   skip  {s}")
    for f_, d in fails:
        print(f"   FAIL  {f_}")
        for dl in d:
            print(f"         {dl}")
    for u in unexpected[:40]:
        print(f"   KERNEL {u}")
    if len(unexpected) > 40:
        print(f"   ... {len(unexpected) - 40} more unexpected kernel lines")
    if expected_n:
        print(f"   ({expected_n} kernel line(s) matched a CETCTL-EXPECT/--allow and were excused)")
    for p in problems:
        print(f"   PROBLEM {p}")
    print(f"{tier}: {passed} passed, {failed} failed, {skipped} skipped")
    return 0 if failed == 0 else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
