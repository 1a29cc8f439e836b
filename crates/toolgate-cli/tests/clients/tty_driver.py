"""Runs a program on a fresh pseudo-terminal as its controlling terminal, and answers it.

Run by crates/toolgate-cli/tests/cli/approvals.rs to drive `toolgate call`'s approval prompt
the way a person at a terminal would (stdlib only: pty, os, select).

  tty_driver.py --script JSON --stdin FILE --stdout FILE -- PROGRAM ARGS...

The child gets the pty as its controlling terminal and as stderr; its stdin comes from FILE
(so a test can put data there that must not be read as an answer) and its stdout goes to
FILE. The script is a list of steps, in order:

  {"expect": TEXT, "send": TEXT}   wait (up to 20 s) until TEXT appeared since the last step,
                                   then type TEXT
  {"expect": TEXT, "eof": true}    wait for TEXT, then send end of input (Ctrl-D)

Prints one JSON object: {"exit": CODE, "transcript": EVERYTHING_THE_TERMINAL_SHOWED}.
Exits 1 (with the transcript) when an expected text does not appear in time.
"""

from __future__ import annotations

import argparse
import json
import os
import pty
import select
import sys
import time


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--script", required=True)
    p.add_argument("--stdin", required=True)
    p.add_argument("--stdout", required=True)
    p.add_argument("argv", nargs="+")
    args = p.parse_args()
    steps = json.loads(args.script)

    pid, fd = pty.fork()
    if pid == 0:
        # the child: the pty is its controlling terminal and stderr
        stdin = os.open(args.stdin, os.O_RDONLY)
        stdout = os.open(args.stdout, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(stdin, 0)
        os.dup2(stdout, 1)
        os.execv(args.argv[0], args.argv)

    transcript = b""
    seen = 0

    def read_some(timeout: float) -> bool:
        nonlocal transcript
        r, _, _ = select.select([fd], [], [], timeout)
        if not r:
            return True
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            return False
        if not chunk:
            return False
        transcript += chunk
        return True

    def fail(why: str) -> None:
        print(json.dumps({"error": why, "transcript": transcript.decode("utf-8", "replace")}))
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
        sys.exit(1)

    for step in steps:
        want = step["expect"].encode()
        deadline = time.monotonic() + 20
        while want not in transcript[seen:]:
            if time.monotonic() > deadline:
                fail(f"timed out waiting for {step['expect']!r}")
            if not read_some(0.1):
                fail(f"the terminal closed before {step['expect']!r}")
        seen = transcript.index(want, seen) + len(want)
        if step.get("eof"):
            os.write(fd, b"\x04")
        else:
            os.write(fd, step["send"].encode())

    deadline = time.monotonic() + 60
    status = None
    while status is None:
        if time.monotonic() > deadline:
            fail("the program did not exit")
        open_ = read_some(0.1)
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            status = st
            while read_some(0.05) and select.select([fd], [], [], 0)[0]:
                pass
        elif not open_:
            _, status = os.waitpid(pid, 0)
    print(json.dumps({"exit": os.waitstatus_to_exitcode(status), "transcript": transcript.decode("utf-8", "replace")}))


if __name__ == "__main__":
    main()
