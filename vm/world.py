#!/usr/bin/env python3
"""vm/world.py LOG [--tsv FILE] [--json FILE] [--md FILE] [--label NAME]

The world corpus's result (tests/world/run-corpus) from a console log or from
run-corpus's own output: the CETCTL-WORLD-PROG/-RUN/-OUTCOME records, one set per
program (a program seen twice keeps its last records). Writes the table as TSV, JSON
and markdown (each only when asked), prints the markdown table and the figures, and
as its last line

    LABEL: N passed, N failed, 0 skipped

counting the goal's two checks (tests/run-all.sh adds them up):
  1. of the programs that pass plainly, at least 95 % work or are refused before
     the start with cetctl's verdict;
  2. none of them fails without cetctl naming the cause.
"Pass plainly" is every outcome but plain-fails, missing and not-run (a run with
--modes plain only, which says nothing about --shstk).

Exit status: 0 when both checks hold, 1 when one does not, 2 on usage errors, an
unreadable LOG or a LOG without a single outcome record.
"""
import json
import sys

GOAL = 0.95
OUTCOMES = ('works', 'refused', 'fails', 'plain-fails', 'missing', 'not-run')
TSV_COLUMNS = ('name', 'program', 'version', 'subset', 'workload',
               'plain_status', 'plain_seconds', 'plain_stderr',
               'shstk_status', 'shstk_seconds', 'shstk_stderr', 'shstk_kernel',
               'outcome', 'diagnosed', 'detail')


def usage(msg):
    print(f"world: {msg}\nusage: vm/world.py LOG [--tsv FILE] [--json FILE] [--md FILE] "
          "[--label NAME]", file=sys.stderr)
    sys.exit(2)


def records(lines):
    """The programs, in the order first seen: {name: row}."""
    progs = {}

    def row(name):
        if name not in progs:
            progs[name] = {c: '' for c in TSV_COLUMNS}
            progs[name]['name'] = name
        return progs[name]

    for line in lines:
        i = line.find('CETCTL-WORLD-')
        if i < 0:
            continue
        f = line[i:].rstrip('\r\n').split('\t')
        kind = f[0]
        if kind == 'CETCTL-WORLD-PROG' and len(f) >= 7:
            r = row(f[1])
            r.update(program=f[2], version=f[4], subset=f[5], workload=f[6])
        elif kind == 'CETCTL-WORLD-RUN' and len(f) >= 7 and f[2] in ('plain', 'shstk'):
            r = row(f[1])
            m = f[2]
            r[f'{m}_status'], r[f'{m}_seconds'], r[f'{m}_stderr'] = f[3], f[4], f[6]
            if m == 'shstk':
                r['shstk_kernel'] = f[7] if len(f) > 7 else ''
        elif kind == 'CETCTL-WORLD-OUTCOME' and len(f) >= 5 and f[2] in OUTCOMES:
            r = row(f[1])
            r.update(outcome=f[2], diagnosed=f[3], detail=f[4])
    return {n: r for n, r in progs.items() if r['outcome']}


def figures(progs):
    rows = list(progs.values())
    n = {o: sum(1 for r in rows if r['outcome'] == o) for o in OUTCOMES}
    fails = [r for r in rows if r['outcome'] == 'fails']
    f = {
        'programs': len(rows),
        'pass_plainly': n['works'] + n['refused'] + n['fails'],
        'works': n['works'],
        'refused': n['refused'],
        'fails': n['fails'],
        'fails_diagnosed': sum(1 for r in fails if r['diagnosed'] == 'yes'),
        'fails_undiagnosed': sum(1 for r in fails if r['diagnosed'] != 'yes'),
        'plain_fails': n['plain-fails'],
        'missing': n['missing'],
        'not_run': n['not-run'],
    }
    good = f['works'] + f['refused']
    f['share'] = good / f['pass_plainly'] if f['pass_plainly'] else None
    f['goal_share_met'] = f['share'] is not None and f['share'] >= GOAL
    f['goal_diagnosis_met'] = f['fails_undiagnosed'] == 0
    return f


def cell_run(r, mode):
    st = r[f'{mode}_status']
    if st == '':
        return '-'
    secs = r[f'{mode}_seconds']
    return f"ok, {secs} s" if st == '0' else f"exit {st}, {secs} s"


def md_escape(s):
    return (s or '-').replace('|', '\\|')


def outcome_words(r):
    o = r['outcome']
    if o == 'fails':
        return 'fails (diagnosed)' if r['diagnosed'] == 'yes' else '**fails, no diagnosis**'
    return {'plain-fails': 'plain fails', 'not-run': 'not run'}.get(o, o)


def markdown(progs, f):
    out = ['| program | workload | plain | --shstk | outcome | diagnosis / verdict / reason |',
           '|---|---|---|---|---|---|']
    for r in progs.values():
        name = r['name'] if r['program'] in ('', r['name']) else f"{r['name']} ({r['program']})"
        detail = r['detail'] if r['detail'] != '-' else ''
        out.append('| ' + ' | '.join(md_escape(c) for c in (
            name, r['workload'], cell_run(r, 'plain'), cell_run(r, 'shstk'),
            outcome_words(r), detail)) + ' |')
    out.append('')
    out.extend(summary_lines(f))
    return '\n'.join(out) + '\n'


def summary_lines(f):
    share = 'n/a' if f['share'] is None else f"{100 * f['share']:.1f} %"
    return [
        f"{f['programs']} programs: {f['pass_plainly']} pass plainly; of those "
        f"{f['works']} work, {f['refused']} are refused before the start, {f['fails']} fail "
        f"({f['fails_diagnosed']} diagnosed, {f['fails_undiagnosed']} without diagnosis); "
        f"{f['plain_fails']} fail plainly, {f['missing']} missing, {f['not_run']} not run under --shstk",
        f"goal 1: work or refused {f['works'] + f['refused']}/{f['pass_plainly']} = {share} "
        f"(at least {int(GOAL * 100)} %): {'met' if f['goal_share_met'] else 'MISSED'}",
        f"goal 2: fails without diagnosis {f['fails_undiagnosed']} (none): "
        f"{'met' if f['goal_diagnosis_met'] else 'MISSED'}",
    ]


def main(argv):
    outs = {'--tsv': None, '--json': None, '--md': None, '--label': 'world'}
    pos = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ('-h', '--help'):
            print(__doc__)
            return 0
        if a in outs:
            if i + 1 >= len(argv):
                usage(f"{a} needs a value")
            outs[a] = argv[i + 1]
            i += 2
            continue
        if a.startswith('-'):
            usage(f"unknown option {a}")
        pos.append(a)
        i += 1
    if len(pos) != 1:
        usage("need one LOG")
    try:
        with open(pos[0], 'rb') as fh:
            text = fh.read().decode('utf-8', 'replace')
    except OSError as e:
        usage(f"cannot read {pos[0]}: {e.strerror}")
    progs = records(text.replace('\r\n', '\n').split('\n'))
    if not progs:
        print(f"world: {pos[0]}: no CETCTL-WORLD-OUTCOME record", file=sys.stderr)
        return 2
    f = figures(progs)
    md = markdown(progs, f)
    if outs['--md']:
        with open(outs['--md'], 'w') as fh:
            fh.write(md)
    if outs['--tsv']:
        with open(outs['--tsv'], 'w') as fh:
            fh.write('\t'.join(TSV_COLUMNS) + '\n')
            for r in progs.values():
                fh.write('\t'.join(r[c] for c in TSV_COLUMNS) + '\n')
    if outs['--json']:
        with open(outs['--json'], 'w') as fh:
            json.dump({'programs': list(progs.values()), 'figures': f}, fh, indent=1)
            fh.write('\n')
    print(md, end='')
    ok = int(f['goal_share_met']) + int(f['goal_diagnosis_met'])
    print(f"{outs['--label']}: {ok} passed, {2 - ok} failed, 0 skipped")
    return 0 if ok == 2 else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
