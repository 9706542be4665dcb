#!/usr/bin/env python3
"""vm/demo-check.py bochs|qemu TRANSCRIPT — does the guest demo's output (vm/guest-demo.sh,
as vm/demo.sh prints it: the lines between the CETCTL-DEMO markers) show what the demo
claims? One line per check ("demo-check: ok: ..." or "demo-check: FAILED: ...") on stdout;
exit 0 when all hold, 1 when one does not, 2 on a usage error.

  bochs  the CET demo: info says supported; `run --shstk` of grep shows shadow stacks
         enabled and locked in its own status; the return-address overwrite reaches
         its gadget without a shadow stack and dies with SIGSEGV/SEGV_CPERR (si_code
         10) with one, and without a handler is killed by SIGSEGV with the kernel logging
         the control-protection fault; status and audit show the protected process
         "enabled and locked" and the unprotected one "not enabled"; audit --require
         shstk,locked fails (exit 1) naming the unprotected one and not the protected
         one; map --pivot succeeds; elf --deps shows the marked program marked SHSTK and
         the unmarked one's closure not shadow-stack ready.
  qemu   the quick boot without CET: our kernel's interface is there (the status
         lines), info says not supported, and run --shstk refuses (exit 125).

A transcript is a sequence of blocks: a line "$ COMMAND", the command's output, and a
last line "[exit N]". A check names the command exactly, or by a prefix ending in '*'.

vm/demo-check.py show bochs|qemu CONSOLE_LOG TRANSCRIPT — what vm/demo.sh runs after a
guest's boot: takes the transcript out of the console log (the lines from the one holding
CETCTL-DEMO-BEGIN through the one holding CETCTL-DEMO-END, without carriage returns, the
marker lines and the kernel's "[ time ]" lines), saves it to TRANSCRIPT and prints it on
stdout, then checks it as above and says on stderr how many checks held or which did not.
Exit 0 when all hold; 1 when one does not, when the console log has no CETCTL-DEMO-END
(the guest did not finish the demo; TRANSCRIPT is then left alone), or when TRANSCRIPT
cannot be written.
"""
import re
import sys

EXIT = re.compile(r'^\[exit [0-9]+\]$')


class Transcript:
    def __init__(self, lines):
        self.lines = lines

    def block(self, cmd):
        """The output of the first block shown as "$ cmd" (through its [exit N] line)."""
        want = '$ ' + cmd
        prefix = want[:-1] if want.endswith('*') else None
        out, on = [], False
        for line in self.lines:
            if not on:
                on = line.startswith(prefix) if prefix is not None else line == want
                continue
            out.append(line)
            if EXIT.match(line):
                break
        return out

    def has(self, cmd, ere):
        r = re.compile(ere)
        return any(r.search(line) for line in self.block(cmd))

    def exits(self, cmd, code):
        b = self.block(cmd)
        return bool(b) and b[-1] == f'[exit {code}]'


def qemu_checks(t):
    yield ("the demo ran to its end",
           any(line.startswith('$ cetctl run --shstk') for line in t.lines))
    yield ("info: the kernel has the x86_Thread_features lines",
           t.has("cetctl info", r'^status-lines +yes'))
    yield ("info: not supported without CET (exit 2)", t.exits("cetctl info", 2))
    yield ("run --shstk refuses without CET (exit 125)",
           t.exits("cetctl run --shstk -- cat /proc/self/status", 125))


def bochs_checks(t):
    yield ("info: supported yes", t.has("cetctl info", r'^supported +yes'))
    yield ("info: exit 0", t.exits("cetctl info", 0))
    r = "cetctl run --shstk -- grep '^x86_Thread' /proc/self/status"
    yield ("run --shstk: grep's own status has shstk enabled",
           t.has(r, r'^x86_Thread_features:[ \t]*shstk'))
    yield ("run --shstk: ... and locked", t.has(r, r'^x86_Thread_features_locked:[ \t]*(.* )?shstk'))
    yield ("run --shstk: grep exit 0", t.exits(r, 0))
    yield ("ROP without a shadow stack reaches its gadget",
           t.has("run_probe rop", r'ROP reached the gadget'))
    yield ("ROP with a shadow stack: SIGSEGV with si_code 10 (SEGV_CPERR)",
           t.has("cetctl run --shstk -q -- run_probe rop", r'^SEGV si_code=10$'))
    yield ("ROP with a shadow stack: the handler's exit 42",
           t.exits("cetctl run --shstk -q -- run_probe rop", 42))
    yield ("ROP with a shadow stack, no handler: killed by SIGSEGV (exit 139)",
           t.exits("cetctl run --shstk -q -- run_probe rop-nohandler", 139))
    yield ("the kernel logged the control-protection fault at a near ret",
           t.has("dmesg -t | grep 'control protection'",
                 r'run_probe\[[0-9]+\] control protection .*\(near ret\)'))

    prot = plain = None
    named = re.compile(r'^# protected: PID ([0-9]*) .*; unprotected: PID ([0-9]*) .*')
    for line in t.lines:
        m = named.match(line)
        if m:
            prot, plain = m.group(1) or None, m.group(2) or None
            break
    yield ("the protected and unprotected PIDs are named", bool(prot and plain))
    prot, plain = prot or 'none', plain or 'none'
    for c in ("cetctl status *", "cetctl audit"):
        name = c[:-2] if c.endswith(' *') else c
        yield (f"{name}: PID {prot} enabled and locked", t.has(c, rf'^ *{prot} .*enabled and locked'))
        yield (f"{name}: PID {plain} not enabled", t.has(c, rf'^ *{plain} .*not enabled'))
    q = "cetctl audit --require shstk,locked"
    yield ("audit --require shstk,locked: exit 1 (offenders)", t.exits(q, 1))
    yield (f"audit --require shstk,locked: lists PID {plain}", t.has(q, rf'^ *{plain} '))
    yield (f"audit --require shstk,locked: does not list PID {prot}", not t.has(q, rf'^ *{prot} '))
    yield ("map --pivot: exit 0", t.exits("cetctl map --pivot", 0))
    e = "cetctl elf --deps shstk_elf_marked /usr/bin/grep"
    yield ("elf: shstk_elf_marked is marked SHSTK",
           t.has(e, r'^shstk_elf_marked +x86-64 +[a-z-]+ +(no|yes) +yes '))
    yield ("elf --deps: grep's closure is not shadow-stack ready", t.has(e, r'^/usr/bin/grep .* no: '))


def check(mode, text):
    """One (what, ok) per check of the transcript TEXT, for MODE bochs or qemu."""
    t = Transcript(text.split('\n'))
    return list(bochs_checks(t) if mode == 'bochs' else qemu_checks(t))


MARK = b'CETCTL-DEMO-'
KERNEL_LINE = re.compile(rb'^\[ *[0-9.]*\] ')


def transcript(raw):
    """The demo's lines out of a console log (bytes in, bytes out, each line ending in a
    newline): from a line holding CETCTL-DEMO-BEGIN through the next line holding
    CETCTL-DEMO-END (again for a later BEGIN), without carriage returns, without lines
    that start with CETCTL-DEMO- and without the kernel's "[ time ] " lines, which the
    console interleaves; None when no line holds CETCTL-DEMO-END."""
    lines = raw.split(b'\n')
    if lines and lines[-1] == b'':
        lines.pop()
    if not any(MARK + b'END' in line for line in lines):
        return None
    out, on = [], False
    for line in lines:
        if not on:
            on = MARK + b'BEGIN' in line
            if not on:
                continue
        elif MARK + b'END' in line:
            on = False
        line = line.replace(b'\r', b'')
        if line.startswith(MARK) or KERNEL_LINE.match(line):
            continue
        out.append(line + b'\n')
    return b''.join(out)


def show(mode, console, saved):
    """vm/demo.sh's step after a boot: see the module's doc string."""
    try:
        with open(console, 'rb') as fh:
            raw = fh.read()
    except OSError:
        raw = b''
    text = transcript(raw)
    if text is None:
        print(f"demo: the guest did not finish the demo; console log: {console}",
              file=sys.stderr)
        return 1
    try:
        with open(saved, 'wb') as fh:
            fh.write(text)
    except OSError as e:
        # shown all the same, but a demo whose transcript is not kept did not pass
        print(f"demo-check: cannot write {saved}: {e.strerror}", file=sys.stderr)
        saved = None
    sys.stdout.buffer.write(text)
    sys.stdout.flush()
    if saved is None:
        return 1
    results = check(mode, text.decode('utf-8', 'replace'))
    if all(ok for _, ok in results):
        print(f"\ndemo: {mode}: all {len(results)} checks of what the demo shows passed "
              "(vm/demo-check.py)", file=sys.stderr)
        return 0
    for what, ok in results:
        if not ok:
            print(f"demo-check: FAILED: {what}", file=sys.stderr)
    print(f"demo: {mode}: the guest did NOT show what the demo claims (transcript {saved})",
          file=sys.stderr)
    return 1


def main(argv):
    if len(argv) == 1 and argv[0] in ('-h', '--help'):
        print(__doc__)
        return 0
    if len(argv) == 4 and argv[0] == 'show' and argv[1] in ('bochs', 'qemu'):
        return show(argv[1], argv[2], argv[3])
    if len(argv) != 2 or argv[0] not in ('bochs', 'qemu'):
        print("usage: vm/demo-check.py bochs|qemu TRANSCRIPT\n"
              "       vm/demo-check.py show bochs|qemu CONSOLE_LOG TRANSCRIPT", file=sys.stderr)
        return 2
    try:
        with open(argv[1], 'rb') as fh:
            text = fh.read().decode('utf-8', 'replace')
    except OSError as e:
        print(f"demo-check: cannot read {argv[1]}: {e.strerror}", file=sys.stderr)
        return 2
    failed = 0
    for what, ok in check(argv[0], text):
        print(f"demo-check: {'ok' if ok else 'FAILED'}: {what}")
        failed |= not ok
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
