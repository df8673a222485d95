# SPDX-License-Identifier: GPL-2.0
"""Phase lines, logged commands, and failures that name their log."""

import os
import subprocess
import sys
import time
from pathlib import Path


class StepFailed(Exception):
    """A step failed; the message says what, and where its log is."""


def say(msg):
    # One write per line: make bench prints from two threads.
    sys.stdout.write(f"{msg}\n")
    sys.stdout.flush()


def tail(log, lines=25):
    try:
        text = Path(log).read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join("    | " + line for line in text[-lines:])


def fail(what, log, lines=25):
    """Raise StepFailed naming the log and quoting its last lines."""
    raise StepFailed(f"{what}\n  log: {log}\n  last lines:\n{tail(log, lines)}")


class Phase:
    """`with Phase("i386-smp", "build", log):` prints start and end lines."""

    def __init__(self, target, phase, log=None):
        self.target, self.phase, self.log = target, phase, log

    def __enter__(self):
        self.start = time.monotonic()
        where = f" (log: {self.log})" if self.log else ""
        say(f"[{self.target}] {self.phase} ...{where}")
        return self

    def __exit__(self, exc_type, exc, tb):
        took = time.monotonic() - self.start
        state = "done" if exc_type is None else "FAILED"
        say(f"[{self.target}] {self.phase} {state} in {took:.1f}s")
        return False


def run(cmd, log, cwd=None, env=None, what=None, timeout=None):
    """Run cmd with its output appended to log; StepFailed on failure."""
    Path(log).parent.mkdir(parents=True, exist_ok=True)
    full_env = dict(os.environ, **(env or {}))
    with open(log, "a") as out:
        out.write(f"\n$ {' '.join(map(str, cmd))}\n")
        out.flush()
        try:
            rc = subprocess.call([str(c) for c in cmd], cwd=cwd,
                                 env=full_env, stdout=out,
                                 stderr=subprocess.STDOUT, timeout=timeout)
        except subprocess.TimeoutExpired:
            rc = "timeout"
    if rc != 0:
        fail(f"{what or cmd[0]} failed (exit {rc})", log)


def reset_log(log):
    Path(log).parent.mkdir(parents=True, exist_ok=True)
    Path(log).write_text("")
    return log
