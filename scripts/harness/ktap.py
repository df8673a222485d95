# SPDX-License-Identifier: GPL-2.0
"""Read the results a guest runner or a host test printed as (K)TAP."""

import re
from dataclasses import dataclass, field
from pathlib import Path

from .paths import REPO

RESULT = re.compile(r"^(not ok|ok) (\d+) ([^#]*?)\s*(?:#\s*(.*))?$")
PLAN = re.compile(r"^1\.\.(\d+)")
DONE = "# pda-init: done"


@dataclass
class Result:
    name: str
    status: str          # pass, fail, skip, xfail
    detail: str = ""


@dataclass
class Report:
    results: list = field(default_factory=list)
    planned: int = -1
    done: bool = False

    def count(self, status):
        return sum(1 for r in self.results if r.status == status)


def parse(text, start_marker=None):
    """Top-level TAP lines only; indented subtest lines are the detail."""
    lines = text.splitlines()
    if start_marker is not None:
        for i, line in enumerate(lines):
            if line.strip() == start_marker:
                lines = lines[i + 1:]
                break
        else:
            return Report()
    rep = Report()
    for line in lines:
        line = line.rstrip("\r")
        if line.startswith(DONE):
            rep.done = True
        m = PLAN.match(line)
        if m and rep.planned < 0:
            rep.planned = int(m.group(1))
            continue
        m = RESULT.match(line)
        if not m:
            continue
        directive = m.group(4) or ""
        if m.group(1) == "ok":
            status = "skip" if directive.upper().startswith("SKIP") else "pass"
        else:
            status = "fail"
        rep.results.append(Result(m.group(3).strip(), status, directive))
    if rep.planned > len(rep.results):
        rep.results.append(Result("(missing results)", "fail",
                                  f"planned {rep.planned}, "
                                  f"got {len(rep.results)}"))
    return rep


KUNIT_CASE = re.compile(r"^    (not ok|ok) \d+ (\S+)\s*(?:#\s*(.*))?$")
KUNIT_SUITE = re.compile(r"^\s*# Subtest: (\S+)")
INIT_STARTS = "Run /init as init process"


def parse_kunit(text):
    """KUnit cases the kernel printed at boot, as "kunit:suite.case"."""
    results, suite = [], "?"
    for line in text.splitlines():
        line = line.rstrip("\r")
        m = KUNIT_SUITE.match(line)
        if m:
            suite = m.group(1)
            continue
        m = KUNIT_CASE.match(line)
        if m:
            directive = m.group(3) or ""
            status = "fail" if m.group(1) == "not ok" else \
                "skip" if directive.upper().startswith("SKIP") else "pass"
            results.append(Result(f"kunit:{suite}.{m.group(2)}", status,
                                  directive))
    return results


def parse_console(text):
    """KUnit results from boot, then the runner's results from /init."""
    boot, found, user = text.partition(INIT_STARTS)
    rep = parse(user, "KTAP version 1") if found else Report()
    rep.results = parse_kunit(boot) + rep.results
    return rep


def _listed(path, target):
    """{test: reason} for this target from a `target test reason` file."""
    listed = {}
    for line in path.read_text().splitlines() if path.exists() else []:
        words = line.split("#", 1)[0].split(None, 2)
        if len(words) == 3 and (words[0] == target or words[0] == "*"):
            listed[words[1]] = words[2]
    return listed


def full_only(target):
    """{test: reason} of tests/check-full-only for this target."""
    return _listed(REPO / "tests/check-full-only", target)


def known_failures(target):
    return _listed(REPO / "tests/known-failures", target)


def not_run(target, full=False):
    """{test: reason} a run leaves out: tests/not-run always, and
    tests/check-full-only unless this is make check-full."""
    left = _listed(REPO / "tests/not-run", target)
    if not full:
        left.update((name, f"make check-full only: {why}") for name, why in
                    full_only(target).items())
    return left


def apply_known(rep, target):
    known = known_failures(target)
    for r in rep.results:
        if r.name in known and r.status == "fail":
            r.status = "xfail"
            r.detail = f"known failure: {known[r.name]}"
    return rep


def read(path, start_marker=None):
    return parse(Path(path).read_text(errors="replace"), start_marker)
