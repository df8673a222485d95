# SPDX-License-Identifier: GPL-2.0
"""Read the results a guest runner or a host test printed as (K)TAP."""

import fnmatch
import re
from dataclasses import dataclass, field
from pathlib import Path

from .paths import REPO
from .progress import StepFailed

RESULT = re.compile(r"^(not ok|ok) (\d+) ([^#]*?)\s*(?:#\s*(.*))?$")
PLAN = re.compile(r"^1\.\.(\d+)")
DONE = "# pda-init: done"
# What the kernel prints when the initramfs is cut short.
UNPACK_FAILED = "Initramfs unpacking failed"
# What a target is known to fail, and how; what it may skip, and why.
KNOWN_FAILURES = REPO / "tests/known-failures"
EXPECTED_SKIPS = REPO / "tests/expected-skips"


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
    """{test: (outcome, reason)} of tests/known-failures for this target:
    the outcome is what the runner prints after the #, "signal=SIGSEGV",
    or several such, "exit=1|signal=SIGILL", for a test whose way of
    failing varies from run to run."""
    out = {}
    for name, rest in _listed(KNOWN_FAILURES, target).items():
        words = rest.split(None, 1)
        if len(words) != 2:
            raise StepFailed(f"{KNOWN_FAILURES}: {target} {name}: want "
                             "an outcome and a reason")
        out[name] = tuple(words)
    return out


def not_run(target, full=False):
    """{test: reason} a run leaves out: tests/not-run always, and
    tests/check-full-only unless this is make check-full."""
    left = _listed(REPO / "tests/not-run", target)
    if not full:
        left.update((name, f"make check-full only: {why}") for name, why in
                    full_only(target).items())
    return left


def apply_known(rep, target):
    """A listed test failing as listed is a known failure; failing any
    other way, or passing, it fails: a known failure that changes is news."""
    known = known_failures(target)
    for r in rep.results:
        if r.name not in known:
            continue
        outcome, why = known[r.name]
        if r.status == "fail" and r.detail in outcome.split("|"):
            r.status = "xfail"
            r.detail = f"known failure ({outcome}): {why}"
        elif r.status == "fail":
            r.detail = f"{r.detail or 'failed'}, not {outcome} as " \
                "tests/known-failures says"
        elif r.status == "pass":
            r.status = "fail"
            r.detail = f"passed, but tests/known-failures says it fails " \
                f"({outcome}): remove its entry"
    return rep


def test_blocks(text):
    """{test name: [its output lines, indent removed]} from a console log
    of tests/init/init.c: output is indented by 4 spaces and ends with the
    test's `ok N name` line."""
    _, found, user = text.partition(INIT_STARTS)
    blocks, cur = {}, []
    for line in user.splitlines() if found else []:
        line = line.rstrip("\r")
        if line.startswith("    "):
            cur.append(line[4:])
            continue
        m = RESULT.match(line)
        if m:
            blocks[m.group(3).strip()] = cur
            cur = []
    return blocks


def _matches(name, globs):
    """Does @name match one of the comma-separated @globs?"""
    return any(fnmatch.fnmatchcase(name, g.strip()) for g in globs.split(","))


def expected_skips(target):
    """[(programs, case glob, reason)] of tests/expected-skips whose
    targets match @target.  Fields are separated by " | " (case names have
    spaces); targets and programs are comma-separated globs, the case one
    glob (case names have commas), "-" for a whole program's skip."""
    out = []
    path = EXPECTED_SKIPS
    for line in path.read_text().splitlines() if path.exists() else []:
        if line.startswith("#"):
            continue
        if not line.strip():
            continue
        words = [w.strip() for w in line.split(" | ")]
        if len(words) != 4 or not all(words):
            raise StepFailed(f"{path}: want 'target | program | case | "
                             f"reason': {line!r}")
        if _matches(target, words[0]):
            out.append(tuple(words[1:]))
    return out


def skipped_cases(text):
    """[(program, case, reason)] of the "ok N case # SKIP reason" lines a
    test binary printed; a nameless case is named by its reason."""
    out = []
    for prog, lines in test_blocks(text).items():
        for line in lines:
            m = RESULT.match(line)
            directive = (m.group(4) or "") if m else ""
            if m and m.group(1) == "ok" and \
                    directive.upper().startswith("SKIP"):
                why = directive[4:].strip()
                out.append((prog, m.group(3).strip() or why, why))
    return out


def apply_skips(rep, text, target):
    """Names every skip: a whole test's (exit 4) and each case a test
    binary skipped, as "program: case".  A skip tests/expected-skips does
    not list for @target fails."""
    expected = expected_skips(target)

    def listed(prog, case):
        return next((why for progs, cg, why in expected
                     if _matches(prog, progs) and
                     fnmatch.fnmatchcase(case, cg)), None)

    def judge(r, prog, case, said):
        why = listed(prog, case)
        r.status = "skip" if why else "fail"
        r.detail = f"expected skip: {why}" if why else \
            f"unexpected skip ({said or 'no reason given'}): not in " \
            "tests/expected-skips"
        return r

    for r in rep.results:
        if r.status == "skip" and not r.detail.startswith("not run") and \
                not r.name.startswith("kunit:"):
            judge(r, r.name, "-", r.detail[4:].strip())
    rep.results += [judge(Result(f"{prog}: {case}", "skip"), prog, case, why)
                    for prog, case, why in skipped_cases(text)]
    return rep


def packed_tests(cpio):
    """The tests guest.Initramfs packed into @cpio, from its listing."""
    listing = Path(str(cpio) + ".list")
    if not listing.exists():
        return []
    return [words[1].removeprefix("/tests/") for line in
            listing.read_text().splitlines()
            if (words := line.split())[:1] == ["file"] and
            words[1].startswith("/tests/") and
            not words[1].endswith(".args")]


def missing_results(rep, packed):
    """A test packed into the initramfs that reported nothing failed: a
    partly unpacked initramfs would otherwise just run fewer tests."""
    seen = {r.name for r in rep.results}
    return [Result(name, "fail", "packed into the initramfs but reported "
                   "no result") for name in packed if name not in seen]


def read(path, start_marker=None):
    return parse(Path(path).read_text(errors="replace"), start_marker)
