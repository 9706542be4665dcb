#!/usr/bin/env python3
"""ptyjob.py READY KEYS CMD...: a job-control shell on a pseudo-terminal.

Runs CMD as the foreground job of a new session whose controlling terminal
is a new pty: its own process group, given the terminal, as an interactive
shell does. Once the file READY exists, types KEYS into the terminal: "^Z",
"^C" etc. are the control characters, "." a pause of 0.3 s, anything else
itself. Whenever the job stops, does what `fg` does: takes the terminal
back, gives it to the job again and continues its group. Prints
"exit N stops S" or "signal N stops S" when the job ended, "hung stops S"
(and kills the group) when it did not end within 30 s, then what the job
wrote to the terminal, one "tty: " line each.
"""
import os
import pty
import select
import signal
import sys
import termios
import time
import fcntl


def shell(slave, argv, out):
    """The session leader: starts the job, fg at every stop, the verdict."""
    os.setsid()
    fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
    signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    job = os.fork()
    if job == 0:
        os.setpgid(0, 0)
        for s in (signal.SIGTTOU, signal.SIGTSTP, signal.SIGINT, signal.SIGQUIT):
            signal.signal(s, signal.SIG_DFL)
        for fd in (0, 1, 2):
            os.dup2(slave, fd)
        os.execvp(argv[0], argv)
    os.setpgid(job, job)
    os.tcsetpgrp(slave, job)
    stops = 0
    while True:
        _, st = os.waitpid(job, os.WUNTRACED)
        if os.WIFSTOPPED(st):
            stops += 1
            if stops > 20:
                os.write(out, b"stop loop\n")
                os.killpg(job, signal.SIGKILL)
                os._exit(1)
            os.tcsetpgrp(slave, os.getpgrp())
            os.tcsetpgrp(slave, job)
            os.killpg(job, signal.SIGCONT)
            continue
        if os.WIFEXITED(st):
            verdict = "exit %d" % os.WEXITSTATUS(st)
        else:
            verdict = "signal %d" % os.WTERMSIG(st)
        os.write(out, ("%s stops %d\n" % (verdict, stops)).encode())
        os._exit(0)


def keys(spec):
    """KEYS as written bytes and pauses (None)."""
    i = 0
    while i < len(spec):
        if spec[i] == "^" and i + 1 < len(spec):
            yield bytes([ord(spec[i + 1].upper()) & 0x1f])
            i += 2
        elif spec[i] == ".":
            yield None
            i += 1
        else:
            yield spec[i].encode()
            i += 1


def main():
    ready, spec, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
    master, slave = pty.openpty()
    rd, wr = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(master)
        os.close(rd)
        shell(slave, argv, wr)
    os.close(slave)
    os.close(wr)
    tty, verdict, typed = b"", b"", False
    end = time.monotonic() + 30
    while True:
        if not typed and os.path.exists(ready):
            typed = True
            for k in keys(spec):
                if k is None:
                    time.sleep(0.3)
                else:
                    os.write(master, k)
        r, _, _ = select.select([master, rd], [], [], 0.05)
        if master in r:
            try:
                tty += os.read(master, 4096)
            except OSError:
                pass
        if rd in r:
            got = os.read(rd, 256)
            verdict += got
            if not got or verdict.endswith(b"\n"):
                break
        if time.monotonic() > end:
            pgid = None
            try:
                pgid = os.tcgetpgrp(master)
            except OSError:
                pass
            verdict = b"hung stops ?\n"
            os.kill(pid, signal.SIGKILL)
            if pgid:
                try:
                    os.killpg(pgid, signal.SIGKILL)
                except OSError:
                    pass
            break
    os.waitpid(pid, 0)
    while select.select([master], [], [], 0.1)[0]:
        try:
            more = os.read(master, 4096)
        except OSError:
            break
        if not more:
            break
        tty += more
    sys.stdout.write(verdict.decode())
    for line in tty.decode(errors="replace").replace("\r", "").splitlines():
        sys.stdout.write("tty: %s\n" % line)


main()
