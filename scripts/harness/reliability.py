# SPDX-License-Identifier: GPL-2.0
"""The reliability figures of make check-full, from the console logs:
what every guest test printed as "# pda-stat: KEY=N"
(tests/guest/lib/stat.h) and the splats kernel_log_clean found, per run.
Written to results/RELIABILITY.md and the README's table."""

import os
import platform
import re
import time
from pathlib import Path

from .markers import replace_marked
from .paths import LOGS, REPO

STAT = re.compile(r"# pda-stat: (\w+)=(\d+)")
SPLATS = re.compile(r"# (\d+) suspicious line\(s\) in the")
KEYS = ("checks", "migrations", "fuzz_iterations", "hotplug_cycles")
HEADER = ("run", "result", "tests passed", "failed", "CPU reads checked",
          "migrations", "fuzz iterations", "hotplug cycles", "splats")

README_BEGIN = "<!-- reliability:begin: written by `make check-full`; " \
    "do not edit by hand -->"
README_END = "<!-- reliability:end -->"


def figures(console):
    """{key: sum} of the pda-stat lines, plus "splats"."""
    text = Path(console).read_text(errors="replace") \
        if Path(console).exists() else ""
    sums = dict.fromkeys(KEYS, 0)
    for key, n in STAT.findall(text):
        if key in sums:
            sums[key] += int(n)
    sums["splats"] = sum(int(n) for n in SPLATS.findall(text))
    return sums


def table_rows(rows):
    """One line per guest run (host rows have no console), then the sum."""
    out, total = [], dict.fromkeys(KEYS + ("splats", "pass", "fail"), 0)
    for name, outcome, rep, _ in rows:
        if name.startswith("host:") or name == "tree":
            continue
        # No report: it never booted, and a console log there is an
        # earlier run's.
        fig = figures(LOGS / name / "console.log") if rep else \
            dict.fromkeys(KEYS + ("splats",), 0)
        fig["pass"] = rep.count("pass") if rep else 0
        fig["fail"] = rep.count("fail") if rep else 1
        for k in total:
            total[k] += fig[k]
        out.append([name, outcome] + [fig[k] for k in
                                      ("pass", "fail") + KEYS + ("splats",)])
    out.append(["**all runs**", ""] + [total[k] for k in
                                        ("pass", "fail") + KEYS +
                                        ("splats",)])
    return out


def markdown(rows):
    lines = ["| " + " | ".join(HEADER) + " |",
             "|---|---|" + "---:|" * (len(HEADER) - 2)]
    for r in table_rows(rows):
        lines.append("| " + " | ".join(f"{c:,}" if isinstance(c, int) else c
                                       for c in r) + " |")
    return "\n".join(lines)


def machine():
    model = ""
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{model or platform.machine()}, {os.cpu_count()} CPUs"


def report(rows, seed, minutes):
    when = time.strftime("%Y-%m-%d")
    return "\n".join([
        "# Reliability figures (`make check-full`)", "",
        f"Run of {when} on {machine()}, {minutes:.0f} min in all, fuzzer "
        f"seed {seed} (`make check-full SEED={seed}` replays it).", "",
        "Every guest run of `make check` (QEMU and Bochs), the debug "
        "kernels (`configs/debug.config`: lockdep, DEBUG_PREEMPT, "
        "DEBUG_ATOMIC_SLEEP, UBSAN, DEBUG_LIST, KFENCE, DEBUG_VM) with all "
        "guest tests, and the soak (`-soak`: every stress test at "
        "`pda.scale=10`). Figures are what the tests counted and printed as "
        "`pda-stat` lines: CPU-number reads checked against the pinned CPU, "
        "migrations (pinned windows that moved the thread), fuzzer calls "
        "whose outcome matched the model, CPUs taken offline and back. "
        "Splats are the kernel-log lines `kernel_log_clean` found (BUG, "
        "WARNING, Oops, lockdep, UBSAN, KFENCE, ...).", "",
        markdown(rows), ""])


def readme_section(rows, seed, minutes):
    return "\n".join([
        README_BEGIN,
        "### Reliability (`make check-full`)", "",
        markdown(rows), "",
        f"Seed {seed}; {minutes:.0f} min on {machine()}. Method and "
        "definitions: [`results/RELIABILITY.md`](results/RELIABILITY.md).",
        "", README_END])


def write(rows, seed, minutes, repo=REPO):
    results = Path(repo) / "results"
    results.mkdir(exist_ok=True)
    (results / "RELIABILITY.md").write_text(report(rows, seed, minutes))
    readme = Path(repo) / "README.md"
    if README_BEGIN in readme.read_text():
        readme.write_text(replace_marked(readme.read_text(), README_BEGIN,
                                         README_END,
                                         readme_section(rows, seed,
                                                        minutes)))
