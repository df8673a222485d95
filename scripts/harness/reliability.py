# SPDX-License-Identifier: GPL-2.0
"""The reliability figures of make check-full: what every guest test
printed as "# pda-stat: KEY=N" (tests/guest/lib/stat.h), the splats
kernel_log_clean found and the fuzzers' checksums, per run, summed per
kernel kind over the latest run of every part (fullstate.py), against the
coverage make check-full is meant to reach.  Written to
results/RELIABILITY.md and the README's table."""

import os
import platform
import re
from pathlib import Path

from .ktap import test_blocks
from .markers import replace_marked
from .paths import REPO
from .targets import TARGETS

STAT = re.compile(r"# pda-stat: (\w+)=(\d+)")
SPLATS = re.compile(r"# (\d+) suspicious line\(s\) in the")
CHECKSUM = re.compile(r"(\w+): seed (\d+), operation stream checksum "
                      r"([0-9a-f]{8})")
KEYS = ("checks", "migrations", "fuzz_iterations", "hotplug_cycles",
        "tlb_checks")
FIGURE_HEADER = ("CPU reads checked", "migrations", "fuzz iterations",
                 "hotplug cycles", "TLB checks", "splats")
# The kernel kinds: what make check boots in QEMU.
KINDS = tuple(n for n, t in TARGETS.items() if t.check and not t.bochs)
SMP_KINDS = tuple(n for n in KINDS if TARGETS[n].cpus > 1)
DEBUG_KINDS = tuple(n for n in KINDS if TARGETS[n].debug)
# The kinds whose CPU hotplug cycles, and whose fuzzers' operations, must
# count on their own (targets.py's hotplug_goal, fuzz_goal).
HOTPLUG_KINDS = tuple(n for n in KINDS if TARGETS[n].hotplug_goal)
FUZZ_KINDS = tuple(n for n in KINDS if TARGETS[n].fuzz_goal)
# The kernels whose guests run 64-bit programs beside the 32-bit ones:
# their fuzzers count per program width.
KINDS_64 = tuple(n for n, t in TARGETS.items() if t.user_arch_64)
# What a debug run must show (checkfull.debug_active): lockdep and KFENCE
# live (their boot lines in the console log, and lockdep never turning
# itself off), UBSAN and DEBUG_VM built (the kernel's .config: they print
# nothing at boot).
DEBUG_LIVE = ("debug:lockdep_active", "debug:kfence_active",
              "debug:ubsan_built", "debug:debug_vm_built",
              "debug:lockdep_stayed_on")
DEBUG_GOAL = "debug kernels built with lockdep, KFENCE, UBSAN and DEBUG_VM, " \
    "lockdep and KFENCE live"
TLBI_OFF_RUN = "arm64-tlbi-off"
# The fuzzer of %gs in 64-bit programs.
GS_FUZZ_64 = "x86_64_gs_fuzz"

README_BEGIN = "<!-- reliability:begin: written by `make check-full`; " \
    "do not edit by hand -->"
README_END = "<!-- reliability:end -->"


def console_figures(console):
    """What a run's console log counted, read and split once:
    {"figures": {key: sum, "splats": n}, "fuzz": {program: fuzz iterations
    of the programs that counted any}, "checksums": [[program, test, seed,
    checksum]] of every fuzzer}."""
    text = Path(console).read_text(errors="replace") \
        if Path(console).exists() else ""
    sums = dict.fromkeys(KEYS, 0)
    for key, n in STAT.findall(text):
        if key in sums:
            sums[key] += int(n)
    sums["splats"] = sum(int(n) for n in SPLATS.findall(text))
    fuzz, checks = {}, []
    for prog, lines in test_blocks(text).items():
        n = 0
        for line in lines:
            if (m := STAT.search(line)) and m.group(1) == "fuzz_iterations":
                n += int(m.group(2))
            if m := CHECKSUM.search(line):
                checks.append([prog, m.group(1), int(m.group(2)),
                               m.group(3)])
        if n:
            fuzz[prog] = n
    return {"figures": sums, "fuzz": fuzz, "checksums": checks}


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


def _runs(states):
    for part, s in states.items():
        for run in s["runs"]:
            yield part, run


def per_kind(states):
    """{kind: {figure: sum, "runs", "passed", "failed"}}."""
    out = {k: dict.fromkeys(KEYS + ("splats", "runs", "passed", "failed"),
                            0) for k in KINDS}
    for _, run in _runs(states):
        k = out.get(run["kind"])
        if k is None:
            continue
        k["runs"] += 1
        k["passed"] += run["passed"]
        k["failed"] += run["failed"]
        for key, n in run.get("figures", {}).items():
            k[key] += n
    return out


def goals(states, parts, key):
    """[(what make check-full must reach, what it reached, met)]; @key:
    the code now (fullstate.code_key()), which every part must have run."""
    kinds = per_kind(states)
    missing = [p for p in parts if p not in states or
               states[p]["result"] != "pass" or states[p]["code"] != key]
    total = {k: sum(kind[k] for kind in kinds.values())
             for k in KEYS + ("splats",)}
    total["failed"] = sum(r["failed"] for _, r in _runs(states))
    tlb_off = sum(r.get("figures", {}).get("tlb_checks", 0)
                  for _, r in _runs(states) if r["run"] == TLBI_OFF_RUN)
    tlb_on = kinds[TARGETS[TLBI_OFF_RUN].kernel]["tlb_checks"] - tlb_off
    debug = {}
    for _, r in _runs(states):
        if r["run"].endswith("-debug"):
            debug[r["kind"]] = (r["outcome"] == "pass" and
                                set(DEBUG_LIVE) <= set(r.get("debug", ())) and
                                not r.get("figures", {}).get("splats"))
    least = min(KINDS, key=lambda k: kinds[k]["checks"])
    least_smp = min(SMP_KINDS, key=lambda k: kinds[k]["migrations"])
    x86_64 = [(prog, n) for _, r in _runs(states)
              if r["kind"] in KINDS_64
              for prog, n in r.get("fuzz", {}).items()]
    fuzz_from = {
        "32-bit programs on x86_64": sum(n for p, n in x86_64
                                         if not p.endswith("_64")),
        "64-bit programs on x86_64": sum(n for p, n in x86_64
                                         if p.endswith("_64")),
        "64-bit %gs programs": sum(n for p, n in x86_64
                                   if p.startswith(GS_FUZZ_64)),
        **{f"getcpu_cache on {k}": kinds[k]["fuzz_iterations"]
           for k in FUZZ_KINDS}}
    return [
        ("every part run and passed, on this code",
         f"not: {', '.join(missing)}" if missing else "all "
         f"{len(parts)}", not missing),
        ("CPU-number reads checked, on each kind",
         f"{kinds[least]['checks']:,} on {least}, the least",
         kinds[least]["checks"] >= 10**7),
        ("CPU-number reads checked, in all", f"{total['checks']:,}",
         total["checks"] >= 10**8),
        ("migrations, on each SMP kind",
         f"{kinds[least_smp]['migrations']:,} on {least_smp}, the least",
         kinds[least_smp]["migrations"] >= 10**5),
        ("migrations, in all", f"{total['migrations']:,}",
         total["migrations"] >= 10**6),
        ("fuzz operations matching the model, in all",
         f"{total['fuzz_iterations']:,}; " + ", ".join(
             f"{v:,} {k}" for k, v in fuzz_from.items()),
         total["fuzz_iterations"] >= 10**7 and all(fuzz_from.values())),
        (f"CPU hotplug cycles, with {' and '.join(HOTPLUG_KINDS)} among "
         "them",
         f"{total['hotplug_cycles']:,} (" + ", ".join(
             f"{k} {kinds[k]['hotplug_cycles']:,}" for k in HOTPLUG_KINDS) +
         ")",
         total["hotplug_cycles"] >= 1000 and
         all(kinds[k]["hotplug_cycles"] > 0 for k in HOTPLUG_KINDS)),
        (DEBUG_GOAL + ", 0 splats: " + ", ".join(DEBUG_KINDS),
         ", ".join(f"{k} {'yes' if debug.get(k) else 'NO'}"
                   for k in DEBUG_KINDS),
         all(debug.get(k) for k in DEBUG_KINDS)),
        ("arm64 TLB checks, with tlbi_local on and off",
         f"on {tlb_on:,}, off {tlb_off:,}",
         tlb_on >= 10**5 and tlb_off >= 10**5),
        ("no splat, no failed test", f"{total['splats']} splats, "
         f"{total['failed']} failed", not total["splats"] and
         not total["failed"]),
    ]


def _row(cells):
    return "| " + " | ".join(f"{c:,}" if isinstance(c, int) else str(c)
                             for c in cells) + " |"


def _table(header, rows, left=1):
    lines = [_row(header),
             "|" + "---|" * left + "---:|" * (len(header) - left)]
    return lines + [_row(r) for r in rows]


def kind_table(states):
    kinds = per_kind(states)
    rows = [[k, v["runs"], v["passed"], v["failed"]] +
            [v[key] for key in KEYS + ("splats",)]
            for k, v in kinds.items()]
    rows.append(["**all kinds**"] + [sum(r[i] for r in rows)
                                     for i in range(1, len(rows[0]))])
    return _table(("kernel kind", "runs", "tests passed", "failed") +
                  FIGURE_HEADER, rows)


def goal_lines(states, parts, key):
    return [f"- {'met' if ok else '**NOT met**'}: {what}: {got}"
            for what, got, ok in goals(states, parts, key)]


def part_table(states, parts):
    rows = []
    for p, (_, what) in parts.items():
        s = states.get(p)
        rows.append([f"`{p}`", what] +
                    ([s["result"], s["commit"], s["date"], str(s["seed"]),
                      s["machine"], f"{s['minutes']:.1f}"] if s else
                     ["not run", "", "", "", "", ""]))
    return _table(("part", "runs", "result", "commit", "date", "seed",
                   "machine", "minutes"), rows, left=7)


def run_table(states):
    rows = []
    for part, r in _runs(states):
        if r["run"].startswith("host:"):
            continue
        f = r.get("figures", dict.fromkeys(KEYS + ("splats",), 0))
        s = states[part]
        rows.append([part, s["commit"], s["date"], r["run"], r["kind"],
                     r["outcome"], r["passed"], r["failed"], r["skipped"]] +
                    [f[k] for k in KEYS + ("splats",)])
    host = [(p, r) for p, r in _runs(states)
            if r["run"].startswith("host:")]
    if host:
        s = states[host[0][0]]
        rows.append([host[0][0], s["commit"], s["date"], "host tests",
                     "host", "pass" if all(r["outcome"] == "pass"
                                           for _, r in host) else "fail",
                     sum(r["passed"] for _, r in host),
                     sum(r["failed"] for _, r in host),
                     sum(r["skipped"] for _, r in host)] + [0] * 6)
    return _table(("part", "commit", "date", "run", "kind", "result",
                   "passed", "failed", "skipped") + FIGURE_HEADER, rows,
                  left=6)


def checksum_table(states):
    rows = [[part, r["run"], prog, test, seed, f"`{sum_}`"]
            for part, r in _runs(states)
            for prog, test, seed, sum_ in r.get("checksums", ())]
    return _table(("part", "run", "program", "test", "seed", "checksum"),
                  rows, left=4)


def report(states, parts, key):
    seeds = sorted({s["seed"] for s in states.values()})
    return "\n".join([
        "# Reliability figures (`make check-full`)", "",
        "`make check-full` is the union of the parts below; "
        "`make check-full PART=name` runs one, and `make check-full` alone "
        "runs the parts that never ran, failed, or ran on other code (any "
        "tracked file but `results/` and `README.md` changed).  Each part "
        "keeps its latest run in `~/.cache/pda/check-full/PART.json`; the "
        "tables are the union of those: the parts table and every run "
        "say the commit, date and seed they ran with.  "
        "`make check-full SEED=N` runs again every part that ran with "
        "another seed (`PART=name SEED=N` one part); every fuzzer prints "
        "its seed and a checksum of its operation stream, listed at the "
        "end, so that two runs with one seed can be compared line by line "
        "(on the same kernel kind: the stream also depends on the number "
        "of CPUs, and `x86_64_gs_fuzz` on FSGSBASE).", "",
        "Figures are what the guest tests counted and printed as "
        "`pda-stat` lines: CPU-number reads checked against the pinned CPU, "
        "migrations (pinned windows that moved the thread), fuzzer "
        "operations whose outcome matched the model, CPUs taken offline "
        "and back, and "
        "the arm64 TLB tests' probes of a changed translation (a read, "
        "write or page scan whose outcome was checked).  Splats are the "
        "kernel-log lines `kernel_log_clean` found (BUG, WARNING, Oops, "
        "lockdep, UBSAN, KFENCE, ...).  bochs and bochs-up boot the "
        "i386-smp and i386-up kernels; arm64-tlbi-off boots the arm64 "
        "kernel without `tlbi_local=on`.", "",
        "## Coverage per kernel kind", "",
        "Sums over every run of every part (the runs table below says "
        "which commit and date each came from).", ""] +
        kind_table(states) + [
        "", "## Against what `make check-full` is meant to reach", ""] +
        goal_lines(states, parts, key) + [
        "", "## Parts", "",
        f"Seeds: {', '.join(map(str, seeds))}." if states else "", ""] +
        part_table(states, parts) + [
        "", "## Runs", ""] + run_table(states) + [
        "", "## Fuzzer checksums", ""] + checksum_table(states) + [""])


def readme_section(states, parts, key):
    return "\n".join([
        README_BEGIN,
        "### Reliability (`make check-full`)", "",
        "Sums over every run of the parts below, each part on the commit "
        "and date it shows.", ""] + kind_table(states) + [
        ""] + goal_lines(states, parts, key) + [
        "", "Parts (minutes as measured):", ""] +
        part_table(states, parts) + [
        "", "Method, every run and the fuzzers' checksums: "
        "[`results/RELIABILITY.md`](results/RELIABILITY.md).", "",
        README_END])


def write(states, parts, key, repo=REPO):
    results = Path(repo) / "results"
    results.mkdir(exist_ok=True)
    (results / "RELIABILITY.md").write_text(report(states, parts, key))
    readme = Path(repo) / "README.md"
    if README_BEGIN in readme.read_text():
        readme.write_text(replace_marked(readme.read_text(), README_BEGIN,
                                         README_END,
                                         readme_section(states, parts,
                                                        key)))
