# SPDX-License-Identifier: GPL-2.0
"""The TAP runner of the Python host tests: each test is a function that
passes by returning, fails by raising, and skips by raising Skip.  A test
that returns a string passes with it as TAP diagnostics (# lines)."""

import traceback


class Skip(Exception):
    """Cannot run on this host; the message says why."""


class Suite:
    def __init__(self):
        self.tests = []

    def test(self, fn):
        self.tests.append(fn)
        return fn

    def main(self):
        """Run every test in order, print TAP; exit status 1 on failure."""
        outcome = []
        for fn in self.tests:
            try:
                note = fn() or ""
                outcome.append((fn.__name__, "", "", note))
            except Skip as e:
                outcome.append((fn.__name__, "", f" # SKIP {e}", ""))
            except Exception:
                outcome.append((fn.__name__, traceback.format_exc(), "", ""))
        print(f"TAP version 13\n1..{len(outcome)}")
        for i, (name, err, skip, note) in enumerate(outcome, 1):
            print(f"{'not ok' if err else 'ok'} {i} {name}{skip}")
            print("".join(f"# {line}\n" for line in
                          (err or note).splitlines()), end="")
        return 1 if any(err for _, err, _, _ in outcome) else 0
