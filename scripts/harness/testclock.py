# SPDX-License-Identifier: GPL-2.0
"""The wall-clock time of each guest test, read off the console as it grows.

The guest prints its own time per test, but that is guest time: under
Bochs (clock sync=none) a guest second costs from 3 to 10 host seconds, so
only the host's clock says what a test costs make check.  The times go to
console.log.times, one "seconds name" line per test, boot first."""

import time
from pathlib import Path

from .ktap import RESULT

BOOT = "(boot to the first test)"
FIRST = "# pda-init: "


class TestClock:
    def __init__(self, console):
        self.console = Path(console)
        self.pos = 0
        self.partial = b""
        self.last = time.monotonic()
        self.started = False
        self.times = []          # (seconds, name)

    def poll(self):
        """Note the time of every result line written since the last poll."""
        try:
            with open(self.console, "rb") as f:
                f.seek(self.pos)
                data = f.read()
        except OSError:
            return
        self.pos += len(data)
        lines = (self.partial + data).split(b"\n")
        self.partial = lines.pop()
        now = time.monotonic()
        for raw in lines:
            line = raw.decode(errors="replace").rstrip("\r")
            if not self.started and line.startswith(FIRST):
                self.times.append((now - self.last, BOOT))
                self.started, self.last = True, now
                continue
            m = RESULT.match(line)
            if self.started and m:
                self.times.append((now - self.last, m.group(3).strip()))
                self.last = now

    def write(self):
        self.poll()
        Path(str(self.console) + ".times").write_text(
            "".join(f"{s:7.1f} {name}\n" for s, name in self.times))



def slowest(console, n=3):
    """The n slowest tests of the last run, as one line for the progress."""
    try:
        rows = Path(str(console) + ".times").read_text().splitlines()
    except OSError:
        return ""
    tests = sorted(((float(s), name) for s, name in
                    (r.split(None, 1) for r in rows) if name != BOOT),
                   reverse=True)
    return ", ".join(f"{name} {s:.0f} s" for s, name in tests[:n])
