# SPDX-License-Identifier: GPL-2.0
"""The state of make check-full: one JSON file per part under the cache,
the latest run of that part: the code it ran (code_key()), commit, date,
seed, minutes, and per run (one boot, or one host test) its outcome, test
counts, pda-stat figures and fuzzer checksums, read from the console log
when the run ended (a later run overwrites the log)."""

import hashlib
import json
import subprocess
import time

from . import reliability
from .paths import CACHE, LOGS, REPO

STATE = CACHE / "check-full"
# What a part's figures do not depend on: a commit touching only these
# leaves every part up to date.
NOT_CODE = ("results", "README.md")


def _git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True,
                          capture_output=True, text=True).stdout


def _is_code(path):
    return not any(path == p or path.startswith(p + "/") for p in NOT_CODE)


def code_key(repo=REPO):
    """A hash of every tracked file but NOT_CODE, as committed; None when
    a tracked one differs from the commit in the working tree (nothing can
    be up to date with code that was never committed)."""
    try:
        changed = _git(repo, "status", "--porcelain", "--untracked-files=no",
                       "-z").split("\0")
        if any(_is_code(line[3:]) for line in changed if line):
            return None
        files = [line for line in _git(repo, "ls-tree", "-r", "HEAD")
                 .splitlines() if _is_code(line.split("\t", 1)[1])]
    except (OSError, subprocess.CalledProcessError):
        return None
    return hashlib.sha256("\n".join(files).encode()).hexdigest()[:16]


def commit(repo=REPO):
    try:
        head = _git(repo, "rev-parse", "--short=12", "HEAD").strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head if code_key(repo) else f"{head}+uncommitted"


def path(part):
    return STATE / f"{part}.json"


def load(part):
    try:
        return json.loads(path(part).read_text())
    except (OSError, ValueError):
        return None


def load_all(parts):
    """{part: state} of those of @parts that have run."""
    return {p: s for p in parts if (s := load(p))}


def stale(part, key, seed=None):
    """Whether make check-full must run @part again: never run, failed,
    run on other code, or (SEED=N given) with another seed."""
    s = load(part)
    return (s is None or s["result"] != "pass" or key is None or
            s["code"] != key or (seed is not None and s["seed"] != seed))


def describe(s):
    return f"{s['result']}, commit {s['commit']}, {s['date']}, seed " \
        f"{s['seed']}, {s['minutes']:.1f} min" if s else "never run"


def run_record(kind, label, outcome, rep, where):
    """One run as the state keeps it."""
    console = LOGS / label / "console.log"
    booted = rep is not None and not label.startswith("host:")
    rec = {"run": label, "kind": kind, "outcome": outcome, "where": where,
           "passed": rep.count("pass") if rep else 0,
           "failed": rep.count("fail") if rep else 1,
           "skipped": rep.count("skip") + rep.count("xfail") if rep else 0,
           "failing": [r.name for r in rep.results if r.status == "fail"]
           if rep else [outcome]}
    if booted:
        rec.update(reliability.console_figures(console))
        rec["debug"] = [r.name for r in rep.results
                        if r.name.startswith("debug:") and
                        r.status == "pass"]
    return rec


def record(part, key, seed, minutes, rows):
    """Writes @part's state from this run's rows; returns it."""
    runs = [run_record(*r) for r in rows]
    state = {"part": part, "code": key, "commit": commit(),
             "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
             "seed": seed, "minutes": round(minutes, 1),
             "machine": reliability.machine(),
             "result": "pass" if all(r["outcome"] == "pass" for r in runs)
             else "fail",
             "runs": runs}
    STATE.mkdir(parents=True, exist_ok=True)
    path(part).write_text(json.dumps(state, indent=1) + "\n")
    return state
