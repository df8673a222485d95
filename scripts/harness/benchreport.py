# SPDX-License-Identifier: GPL-2.0
"""results/ from a `make bench` run: JSON per kernel, REPORT.md, SVG plots
(gnuplot), and the READMEs' regions between their markers: README.md's
headline and size paragraph, results/README.md's size figures.
regions_from_results() gives those regions, and the bench parts' README
headlines, from the results/ files alone; `python3 -m harness.benchreport
--readme` (from scripts/) writes them, and tests/host/readme compares them.

Input, from bench.py: the variants (one per kernel: label, target, kind
"mainline" or "pda", .config, size, the parsed guest runs) and the host's
segbench JSON.  Nothing here measures; every number comes from the input.
The per-kernel JSON holds only what must come out the same on every run
(instruction counts, sizes, options), so a fresh clone's `make bench`
can be compared with the committed files.
"""

import json
import os
import re
import sys
import time
from pathlib import Path

from . import benchlib, benchparts
from .arches import HOST_32
from .benchlib import bar_plot, fmt, table, write_results_json
from .markers import replace_marked
from .targets import TARGETS

README_BEGIN = "<!-- bench:begin: written by `make bench` from results/; " \
    "do not edit by hand -->"
README_END = "<!-- bench:end -->"
# The size sentences: README.md's "Size" paragraph and results/README.md's
# "Size" section, each between its own markers.
SIZE_BEGIN = "<!-- size:begin: written by `make bench` from " \
    "results/bench-*.json; do not edit by hand -->"
SIZE_END = "<!-- size:end -->"
SIZE_NOTES_BEGIN = "<!-- size-notes:begin: written by `make bench` from " \
    "results/bench-*.json; do not edit by hand -->"
SIZE_NOTES_END = "<!-- size-notes:end -->"
RESULTS_README = "results/README.md"
# The results/ files of the comparison that are not one kernel's.
HOST_JSON = "bench-host.json"
COSTS_JSON = "bench-option-costs.json"
# REPORT.md's last line about the run: its minutes.
TOTAL_LINE = re.compile(r"^Total: ([0-9.]+) min", re.M)
# The order make bench runs its targets in (bench.BENCH_ORDER).
BENCH_ORDER = tuple(n for n, t in TARGETS.items() if t.bench)

# Guest rows: (op, what it is), per table.
SYSCALL_ROWS = [
    ("sys.int80", "null syscall, `int $0x80`"),
    ("sys.vsyscall", "null syscall, `__kernel_vsyscall`"),
    ("sys.svc", "null syscall, `svc #0`"),
    ("sys.syscall", "null syscall, `syscall` (64-bit)"),
    ("fault.anon", "page fault, anonymous write"),
]
SCENARIOS = [
    ("ctxsw.same", "context switch, both threads on CPU 0"),
    ("ctxsw.cross", "context switch, threads on CPUs 0 and 1"),
    ("migrate", "migration, CPU 0 <-> 1"),
]
REGS = ("none", "rseq", "getcpu_cache")
HOST_CPU_ROWS = ["cpu.rseq", "cpu.pda", "cpu.rdpid", "cpu.glibc", "cpu.vdso",
                 "cpu.lsl", "cpu.syscall", "cpu.getcpu_cache"]
HOST_INC_PREFIX = "inc."
HOST_SEG_ROWS = ["sel.mov.fs.null", "sel.mov.fs.user_ds", "sel.mov.fs.tls",
                 "sel.pushpop.fs.tls", "sys.int80.fs_null",
                 "sys.int80.fs_user_ds", "sys.int80.fs_tls",
                 "sys.vsyscall.fs_null", "sys.vsyscall.fs_tls"]
# What the x86-64 build measures in their place (64-bit %fs is glibc's).
HOST_SEG_GS_ROWS = ["sel.mov.gs.null", "sel.mov.gs.user_ds", "sel.mov.gs.tls",
                    "sel.mov.gs.ldt", "sel.pushpop.gs.tls",
                    "sel.pushpop.gs.ldt"]
# Options whose presence in a PDA build's .config adds a row or a note.
NOSEG = "CONFIG_X86_PDA_UP_NOSEG"
GETCPU_CACHE = "CONFIG_GETCPU_CACHE"


# ------------------------------------------------------------ helpers

def cell(row, key="median"):
    if row is None:
        return "—"
    if "na" in row:
        return "n/a"
    return fmt(row[key])


def minmed(row):
    if row is None:
        return "—"
    if "na" in row:
        return f"n/a ({row['na']})" if row["na"] else "n/a"
    return f"{fmt(row['min'])} / {fmt(row['median'])}"


def delta(a, b, key="median"):
    """b - a and b / a, as cells; n/a unless both are figures."""
    if not a or not b or "na" in a or "na" in b:
        return "", ""
    d = b[key] - a[key]
    ratio = f"{b[key] / a[key]:.3f}" if a[key] else ""
    return (("+" if d > 0 else "") + fmt(d)), ratio


def pairs(variants):
    """[(target, mainline variant, pda variant)] in the run's order."""
    out = []
    for v in variants:
        if v["kind"] != "mainline":
            continue
        pda = next((p for p in variants if p["kind"] == "pda" and
                    p["target"] == v["target"]), None)
        if pda:
            out.append((v["target"], v, pda))
    return out


def ops(v):
    return v["runs"][0]["ops"]


def seg(v):
    return v["runs"][0]["segbench"]


def series_on(v, series_opts):
    """The series' options as this build's .config has them."""
    return {o: v["config"].get(o, "n") for o in sorted(series_opts)
            if o in v["config"]}


def target_note(target, pda):
    notes = []
    if pda["config"].get(NOSEG) == "y":
        notes.append("UP NOSEG")
    if pda["config"].get(GETCPU_CACHE) == "y":
        notes.append("getcpu_cache")
    if pda["config"].get("CONFIG_X86_PDA_USER_SEG") == "y":
        notes.append("user segment")
    return f"{target} ({', '.join(notes)})" if notes else target


def host_rows(host):
    return {r["name"]: r for r in host.get("results", [])}


def host_cells(r):
    if r is None:
        return ["—"] * 3
    if r.get("status") != "ok":
        return ["n/a", "n/a", r.get("note") or ""]
    return [f"{r[k]:.1f}" if r.get(k) is not None else "n/a"
            for k in ("min_cycles", "median_cycles", "ratio_ref")]


# ---------------------------------------------------------- sections

def syscall_table(prs):
    rows = []
    for target, main, pda in prs:
        for op, what in SYSCALL_ROWS:
            a, b = ops(main).get(op), ops(pda).get(op)
            if a is None and b is None:
                continue
            d, r = delta(a, b)
            rows.append([target_note(target, pda), what, minmed(a),
                         minmed(b), d, r])
    return table(["target (PDA options on)", "operation",
                  "mainline min / median", "PDA min / median",
                  "PDA − mainline", "PDA / mainline"], rows,
                 ["---", "---", "---:", "---:", "---:", "---:"])


def ctxsw_table(prs):
    rows = []
    for target, main, pda in prs:
        for kind, v in (("mainline", main), ("PDA", pda)):
            for scen, what in SCENARIOS:
                cells = {r: ops(v).get(f"{scen}.{r}") for r in REGS}
                if all(c is None for c in cells.values()):
                    continue
                row = [target, kind, what, minmed(cells["none"])]
                for r in REGS[1:]:
                    d, _ = delta(cells["none"], cells[r])
                    row.append(minmed(cells[r]) + (f" ({d})" if d else ""))
                rows.append(row)
    return table(["target", "kernel", "what", "nothing registered",
                  "rseq (Δ nothing)", "getcpu_cache (Δ nothing)"], rows,
                 ["---", "---", "---", "---:", "---:", "---:"])


def guest_segbench_table(prs, prefix):
    rows = []
    for target, main, pda in prs:
        names = sorted(n for n in set(seg(main)) | set(seg(pda))
                       if n.startswith(prefix))
        for n in names:
            a, b = seg(main).get(n), seg(pda).get(n)
            note = " ".join(sorted({("emulated descriptor" if r and
                                     r.get("emulated") else "")
                                    for r in (a, b)} - {""}))
            rows.append([target, f"`{n}`", minmed(a), minmed(b), note])
    return table(["target", "segbench row", "mainline min / median",
                  "PDA min / median", "note"], rows,
                 ["---", "---", "---:", "---:", "---"])


def host_table(host, names):
    """A row per name the host measured; on a host that ran the x86-64
    build, the rows only the i386 build has say why they are missing."""
    hr = host_rows(host)
    rows = []
    for n in names:
        if n in hr:
            r = hr[n]
            rows.append([f"`{n}`", r.get("desc", "")] + host_cells(r))
        elif host.get("not_measured"):
            rows.append([f"`{n}`", "not measured on this host",
                         "n/a", "n/a", host["not_measured"]])
    return table(["segbench row", "what", "min cycles", "median cycles",
                  "× rseq (median)"], rows,
                 ["---", "---", "---:", "---:", "---:"])


def host_seg_rows(host):
    """The i386 build's %fs rows; the x86-64 build has %gs ones instead."""
    if host.get("build", HOST_32.name) == HOST_32.name:
        return HOST_SEG_ROWS
    return HOST_SEG_ROWS + [n for n in HOST_SEG_GS_ROWS
                            if n in host_rows(host)]


def size_table(prs, series_opts):
    rows = []
    for target, main, pda in prs:
        a, b = main["size"], pda["size"]
        on = [o.replace("CONFIG_", "") for o, val in
              series_on(pda, series_opts).items() if val == "y"]
        rows.append([target, f"{a['text']} / {a['data']} / {a['bss']}",
                     f"{b['text']} / {b['data']} / {b['bss']}",
                     f"{b['text'] - a['text']:+d}",
                     f"{b['data'] - a['data']:+d}",
                     f"{b['bss'] - a['bss']:+d}", ", ".join(on) or "none"])
    return table(["target", "mainline text / data / bss",
                  "PDA text / data / bss", "Δ text", "Δ data", "Δ bss",
                  "series options on"], rows,
                 ["---", "---:", "---:", "---:", "---:", "---:", "---"])


def objects_table(prs):
    rows = []
    for target, _, pda in prs:
        for obj, s in sorted(pda.get("objects", {}).items()):
            rows.append([target, f"`{obj}`", s["text"], s["data"], s["bss"]])
    if not rows:
        return "No object file exists only in the PDA builds."
    return table(["target", "object only the PDA build has", "text", "data",
                  "bss"], rows, ["---", "---", "---:", "---:", "---:"])


def costs_table(costs):
    rows = []
    for c in costs:
        on, off = c["on"], c["off"]
        obj = c.get("object")
        rows.append([c["target"], f"`{c['option']}`",
                     f"{on['text']} / {on['data']} / {on['bss']}",
                     f"{off['text']} / {off['data']} / {off['bss']}",
                     f"{on['text'] - off['text']:+d}",
                     f"{on['data'] - off['data']:+d}",
                     f"{on['bss'] - off['bss']:+d}",
                     f"`{obj[0]}` text {obj[1]['text']}, data "
                     f"{obj[1]['data']}" if obj else ""])
    if not rows:
        return "No option was measured on its own in this run."
    return table(["target", "option", "on: text / data / bss",
                  "off: text / data / bss", "Δ text", "Δ data", "Δ bss",
                  "its own object"], rows,
                 ["---", "---", "---:", "---:", "---:", "---:", "---:",
                  "---"])


def headline(prs):
    """The README's table: medians, mainline against PDA."""
    rows = []
    for target, main, pda in prs:
        wanted = [(op, what) for op, what in SYSCALL_ROWS] + [
            (f"{s}.{r}", f"{what}, {r if r != 'none' else 'nothing'} "
             "registered") for s, what in SCENARIOS[:1]
            for r in REGS] + [(f"migrate.{r}", f"migration, {r} registered")
                              for r in ("getcpu_cache",)]
        for op, what in wanted:
            a, b = ops(main).get(op), ops(pda).get(op)
            # A row neither kernel has a figure for waits for its option
            # (REPORT.md says why); it appears once one has.
            if all(r is None or "na" in r for r in (a, b)):
                continue
            d, r = delta(a, b)
            rows.append([target_note(target, pda), what, cell(a), cell(b),
                         d, r])
        d = pda["size"]["text"] - main["size"]["text"]
        rows.append([target_note(target, pda), "`size vmlinux`: text bytes",
                     main["size"]["text"], pda["size"]["text"], f"{d:+d}",
                     f"{pda['size']['text'] / main['size']['text']:.4f}"])
    return table(["target (PDA options on)", "guest instructions per op "
                  "(median)", "mainline 6.12", "PDA", "Δ", "PDA / mainline"],
                 rows, ["---", "---", "---:", "---:", "---:", "---:"])


# ------------------------------------------------------------ plots

def median_of(v, op):
    row = ops(v).get(op)
    return None if row is None or "na" in row else row["median"]


def plots(results, prs):
    made = []
    labels, m, p = [], [], []
    for target, main, pda in prs:
        for op, what in SYSCALL_ROWS:
            if op in ops(main) or op in ops(pda):
                labels.append(f"{target} {op}")
                m.append(median_of(main, op))
                p.append(median_of(pda, op))
    if labels:
        out = results / "bench-syscall.svg"
        bar_plot(out, "Null syscall and page fault: guest instructions "
                 "(median, qemu -icount)", "instructions per op", labels,
                 [("mainline 6.12", m), ("PDA", p)])
        made.append(out)
    labels, cols = [], {r: [] for r in REGS}
    for target, _, pda in prs:
        for scen, _ in SCENARIOS:
            if any(f"{scen}.{r}" in ops(pda) for r in REGS):
                labels.append(f"{target} {scen}")
                for r in REGS:
                    cols[r].append(median_of(pda, f"{scen}.{r}"))
    if labels:
        out = results / "bench-ctxsw.svg"
        bar_plot(out, "PDA kernels: context switch and migration by what "
                 "is registered (median, qemu -icount)",
                 "instructions per switch / migration", labels,
                 [(f"{r} registered" if r != "none" else "nothing", cols[r])
                  for r in REGS])
        made.append(out)
    return made


# ----------------------------------------------------------- writing

def variant_json(v, series_opts):
    run = v["runs"][0]
    return {"label": v["label"], "target": v["target"], "kernel": v["kind"],
            "source": v["source"], "cpus": v["cpus"],
            "series_options": series_on(v, series_opts),
            "size_vmlinux": v["size"], "series_objects": v.get("objects", {}),
            "guest": {"info": run["info"], "ops": run["ops"],
                      "segbench": run["segbench"]},
            "identical_boots": len(v["runs"])}


def count_figures(variants):
    return sum(len(v["runs"][0]["ops"]) + len(v["runs"][0]["segbench"])
               for v in variants)


def report_md(variants, host, series_opts, minutes, partial, timings,
              option_costs=(), parts=None, repo=None):
    """parts: {BenchPart key: its state, or None if it did not run}."""
    prs = pairs(variants)
    hm = host.get("machine", {})
    qemu = benchlib.qemu_version("qemu-system-i386")
    src = next((v["source"] for v in variants if v["kind"] == "mainline"),
               "Linux 6.12")
    nruns = min((len(v["runs"]) for v in variants), default=0)
    out = [f"# make bench: mainline {src.replace('Linux ', '')} against PDA",
           "",
           f"Written by `make bench` ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
           f"{minutes:.1f} min{', a subset of the targets' if partial else ''}); "
           "do not edit, run it again. Raw figures: `results/bench-*.json`.",
           "",
           "## How it was measured", "",
           f"- **Kernels.** For each target, `mainline-<target>` is {src} "
           "exactly as Debian's `linux-source-6.12` ships it, built from the "
           "unpacked tree; `<target>` is the same tree plus this series "
           "(`patches/series`). Both are `tinyconfig` plus the same "
           "`configs/` fragments plus `configs/bench.config`, which turns "
           "the test-only options (KUnit and the PDA suite) off in both, as "
           "a user builds the kernel; the series' own options (each defined by "
           "the patch that implements it) do not exist in mainline and are "
           "not verified there. Which series options each PDA build has is "
           "read from its `.config` (tables below).",
           f"- **Guest figures** are instruction counts. {qemu}, TCG, "
           "`-icount shift=0,sleep=off -seed 1 -rtc base=2026-01-01T00:00:00,"
           "clock=vm`; kernel arguments `pda.icount norandmaps`, and on x86 "
           "`no_timer_check`. Under `-icount shift=0` virtual time advances "
           "1 ns per guest instruction, on whichever vCPU runs it (TCG runs "
           "the vCPUs in turn). x86 reads it with `rdtsc`; ARM with "
           "`CLOCK_MONOTONIC` from the 62.5 MHz architected timer (one tick "
           "per 16 instructions, spread over thousands of iterations). A "
           "REP string instruction counts once per iteration.",
           "- **pda_bench** (`tests/bench/pda_bench.c`): each figure is "
           "(loop with the operation − the same loop without it) / "
           "iterations, 7 repetitions after a warm-up, **min / median**. "
           "Context switch: pipe ping-pong, per switch (half a round trip: "
           "one 1-byte write, one read, one switch), on one CPU or across two "
           "(then the instructions of both CPUs). Migration: one "
           "`sched_setaffinity()` moving the thread between CPUs 0 and 1. "
           "\"nothing\" and getcpu_cache rows run with "
           "`GLIBC_TUNABLES=glibc.pthread.rseq=0` (glibc otherwise registers "
           "rseq for every thread); rseq rows with glibc's registration. "
           "getcpu_cache rows are n/a where syscall 463 is `ENOSYS`.",
           "- **segbench in the guests** (`tools/segbench`, `--quick`, "
           "`pda.icount`): the CPU-number methods and single-thread per-CPU "
           "increments, in instructions per op. On mainline the PDA rows run "
           "on a `set_thread_area` copy of the descriptor (\"emulated "
           "descriptor\").",
           "- **CPUs.** " + "; ".join(
               f"`{v['label']}` booted with {v['cpus']} "
               f"CPU{'s' if v['cpus'] > 1 else ''}"
               for v in variants if v["kind"] == "pda") + ". " +
           " ".join(sorted({f"{v['target']} boots with fewer CPUs than "
                            f"`make check` gives it: {v['cpus_why']}; its "
                            "cross-CPU and migration rows are n/a."
                            for v in variants if v.get("cpus_why")})),
           f"- **Determinism.** Every guest booted {nruns} times; all "
           f"{count_figures(variants)} guest figures (min and median) were "
           "identical in every boot of the same kernel, or `make bench` would "
           "have failed naming the row. That is checked, not assumed: the "
           "QEMU seed and the VM-clock RTC are what make boots repeat "
           "exactly.",
           "- **Instructions are not cycles.** A `mov` to `%fs` or an `lsl` is "
           "one instruction and ~25-30 cycles; the host table has cycles.",
           f"- **Host figures**: segbench natively (the "
           f"{host.get('build', HOST_32.name)} build) on "
           f"{hm.get('cpu_model', '?')} ({hm.get('virt', '?')}), kernel "
           f"{hm.get('kernel', '?')}, {hm.get('libc', '?')}; load average "
           f"{hm.get('loadavg', '?')} when it started (other builds share "
           "these cores). Min and median cycles over trials, empty loop "
           "subtracted; method in `tools/segbench/README.md`. The host kernel "
           "has no entry 29: its PDA rows use an emulated descriptor." + (
               f" Rows that need 32-bit mode are not measured: "
               f"{host['not_measured']}." if host.get("not_measured")
               else ""),
           "- **Ratios** (PDA / mainline, × rseq) compare figures from this "
           "one run.", ""]
    out += ["## Headline", "", headline(prs), "",
            "![null syscall and page fault](bench-syscall.svg)", ""]
    up = [(t, p) for t, _, p in prs if p["config"].get("CONFIG_SMP") != "y"]
    out += ["## Null system call and page fault (guest instructions)", "",
            syscall_table(prs), ""]
    for t, p in up:
        if p["config"].get(NOSEG) == "y":
            out.append(f"On `{t}` the PDA kernel has `{NOSEG}=y`: entry and "
                       "exit do no segment-register work; the rows above are "
                       "the UP NOSEG comparison.")
        else:
            out.append(f"`{NOSEG}` is not in this series yet: the "
                       f"`{t}` rows compare mainline with the rest of the "
                       "series only.")
    out += ["", "## Context switch and migration (guest instructions)", "",
            ctxsw_table(prs), "",
            "![context switch and migration](bench-ctxsw.svg)", "",
            "Each figure repeats exactly from boot to boot and from clone "
            "to clone. Across kernels, though, the rows with two CPUs move "
            "with anything that changes the kernel image or the seed of "
            "its RNG, which mixes in the version banner: two i386-smp "
            "builds of the same sources that differed only in the build "
            "number (`#2`, `#3`) measured migration 4.9 % apart and a "
            "switch across CPUs 0.1 % apart. A mainline-to-PDA difference "
            "smaller than that on those rows is not the series' cost; the "
            "one-CPU rows move by a few instructions.", ""]
    if not any(p["config"].get(GETCPU_CACHE) == "y" for _, _, p in prs):
        out += [f"`{GETCPU_CACHE}` is in no PDA build of this run: "
                "its rows are n/a.", ""]
    out += ["## CPU-number methods", "",
            "### In the guests (instructions per read, segbench under "
            "`-icount`)", "", guest_segbench_table(prs, "cpu."), "",
            "### On the host (cycles per read, segbench native)", "",
            host_table(host, HOST_CPU_ROWS), "",
            "## Per-CPU increment", "",
            "### In the guests (instructions per increment, one thread)", "",
            guest_segbench_table(prs, "inc."), "",
            "### On the host (cycles per increment)", "",
            host_table(host, sorted(n for n in host_rows(host)
                                    if n.startswith(HOST_INC_PREFIX))), "",
            "## Segment-register operations on the host (cycles)", "",
            "What a kernel entry/exit that loads `%fs` pays per load, and a "
            "null syscall with each user `%fs`:", "",
            host_table(host, host_seg_rows(host)), "",
            "## Kernel size (`size vmlinux`, bytes)", "",
            size_table(prs, series_opts), "", objects_table(prs), "",
            "### What single options cost", "",
            "The same tree and configuration with one option on and off. "
            "KUnit: the PDA kernel as `make check` builds it (KUnit and the "
            "`pda_user_seg` suite on) against the bench PDA kernel above; "
            "`X86_PDA_UP_NOSEG`: the bench PDA kernel against one built with "
            "`configs/bench-noseg-off.config`.", "",
            costs_table(option_costs), ""]
    # The parts after the comparison: each its own question, its own
    # section.
    for part in benchparts.PARTS:
        state = (parts or {}).get(part.key)
        if state:
            out += [part.section(state, repo), ""]
    out += ["## This run", "",
            table(["kernel", "phase", "seconds"],
                  [[a, b, f"{c:.0f}"] for a, b, c in timings],
                  ["---", "---", "---:"]), "",
            f"Total: {minutes:.1f} min, {os.cpu_count()} host CPUs. Console "
            "logs of every boot: "
            "`~/.cache/pda/logs/<kernel>/bench-N.console.log`.", ""]
    return "\n".join(out)


def readme_section(prs, minutes):
    return "\n".join([
        README_BEGIN,
        "### Mainline 6.12 against PDA (`make bench`)", "",
        "Unpatched 6.12 and the PDA kernel from the same fragments, each "
        "booted twice under `qemu -icount shift=0`; guest instructions per "
        "operation, median of 7 (the min, the method and everything else "
        "are in [`results/REPORT.md`](results/REPORT.md)). The two boots "
        "agree exactly, or `make bench` fails.", "",
        headline(prs), "",
        "![null syscall and page fault](results/bench-syscall.svg)", "",
        f"The run that wrote this took {minutes:.0f} min on this 2-core "
        "machine, other builds sharing its cores; where the time went is at "
        "the end of the report.", "",
        README_END])


def rewrite_readme(text, section):
    """Replace the marked region; the markers must be there, once each."""
    return replace_marked(text, README_BEGIN, README_END, section)


# ------------------------------------------------------ size sentences

def size_deltas(prs):
    """[(target, {"text", "data", "bss"}: PDA - mainline)], run order."""
    return [(t, {k: pda["size"][k] - main["size"][k]
                 for k in ("text", "data", "bss")}) for t, main, pda in prs]


def per_target(deltas, key, unit=""):
    """"i386-smp +426, arm +328" or "+0 everywhere" / "... , +0 elsewhere":
    one section of `size vmlinux` (@key) against mainline, per target."""
    moved = [f"{t} {d[key]:+d}" for t, d in deltas if d[key]]
    if not moved:
        return "+0 everywhere"
    if len(moved) < len(deltas):
        return ", ".join(moved) + unit + ", +0 elsewhere"
    return ", ".join(moved) + unit


def option_cost(costs, option):
    return next((c for c in costs if c["option"] == option), None)


def size_readme_section(prs, costs):
    """README.md's "Size" paragraph: every figure from the run's
    results/bench-*.json and bench-option-costs.json."""
    deltas = size_deltas(prs)
    out = ["`make bench` measures the kernels as a user builds them (KUnit "
           "and the PDA suite off in both, `configs/bench.config`). PDA "
           "against mainline, `size vmlinux`: text " +
           per_target(deltas, "text", " bytes") + "; data " +
           per_target(deltas, "data") + "; bss " +
           per_target(deltas, "bss") + "."]
    noseg = option_cost(costs, NOSEG.removeprefix("CONFIG_"))
    if noseg:
        t = noseg["target"]
        out.append(f"`{NOSEG.removeprefix('CONFIG_')}` alone, on {t}: text "
                   f"{noseg['on']['text'] - noseg['off']['text']:+d} bytes "
                   "(the bench kernel against one built without it).")
        pair = next(((m, p) for tt, m, p in prs if tt == t), None)
        a, b = (ops(pair[0]).get("sys.int80"), ops(pair[1]).get("sys.int80")) \
            if pair else (None, None)
        if a and b and "na" not in a and "na" not in b:
            out.append(f"With it, {t}'s null system call through "
                       f"`int $0x80` is {cell(b)} instructions against "
                       f"mainline's {cell(a)} (median).")
    out.append("Per object and per option: "
               "[`results/README.md`](results/README.md#size).")
    return "\n".join([SIZE_BEGIN, "", " ".join(out), "", SIZE_END])


def size_notes_section(prs, costs):
    """results/README.md's "Size" figures: the run's deltas, the objects
    only the PDA builds have, and what single options cost."""
    rows, padded = [], []
    for (t, d), (_, _, pda) in zip(size_deltas(prs), prs):
        objs = sorted(pda.get("objects", {}).items())
        inside = sum(s["text"] for _, s in objs)
        rows.append([t, f"{d['text']:+d}", f"{d['data']:+d}",
                     f"{d['bss']:+d}",
                     ", ".join(f"`{o}` {s['text']}" for o, s in objs) or
                     "none", f"{d['text'] - inside:+d}"])
        if inside > d["text"]:
            padded.append(f"on {t} the new objects hold {inside} bytes of "
                          f"text and `vmlinux`'s text grew by {d['text']}")
    out = [SIZE_NOTES_BEGIN, "",
           "`make bench` measures the kernels as a user builds them: KUnit "
           "and the PDA suite off in both (`configs/bench.config`). PDA "
           "against mainline, `size vmlinux` in bytes (`REPORT.md`, \"Kernel "
           "size\"; `bench-<target>.json`):", "",
           table(["target", "Δ text", "Δ data", "Δ bss",
                  "text of the objects only the PDA build has",
                  "Δ text outside them"], rows,
                 ["---", "---:", "---:", "---:", "---", "---:"]), ""]
    if padded:
        out += ["`vmlinux`'s sections are padded to alignment, so its size "
                "moves in steps: " + "; ".join(padded) + ".", ""]
    out += ["What single options cost, the same tree with the option on and "
            "off, same run (`bench-option-costs.json`):", ""]
    for c in costs:
        on, off, obj = c["on"], c["off"], c.get("object")
        out.append(f"- `{c['option']}` on {c['target']}: text "
                   f"{on['text'] - off['text']:+d}, data "
                   f"{on['data'] - off['data']:+d}, bss "
                   f"{on['bss'] - off['bss']:+d}" +
                   (f"; its own `{obj[0]}`: text {obj[1]['text']}, data "
                    f"{obj[1]['data']}" if obj else "") + ".")
    if not costs:
        out.append("No option was measured on its own in this run.")
    return "\n".join(out + ["", SIZE_NOTES_END])


# ----------------------------------------------- regions from results/

def regions(prs, costs, minutes):
    """[(file, begin, end, section)]: every region of README.md and
    results/README.md the comparison writes."""
    return [("README.md", README_BEGIN, README_END,
             readme_section(prs, minutes)),
            ("README.md", SIZE_BEGIN, SIZE_END,
             size_readme_section(prs, costs)),
            (RESULTS_README, SIZE_NOTES_BEGIN, SIZE_NOTES_END,
             size_notes_section(prs, costs))]


def rewrite_regions(repo, marked):
    """Write @marked (regions()) into their files; the files that changed."""
    written = []
    for name in dict.fromkeys(f for f, _, _, _ in marked):
        path = Path(repo) / name
        text = old = path.read_text()
        for f, begin, end, section in marked:
            if f == name:
                text = replace_marked(text, begin, end, section, name)
        if text != old:
            path.write_text(text)
            written.append(path)
    return written


def variants_from_results(repo):
    """The variants write() had, read back from results/bench-<label>.json
    (what the README's regions need: label, target, kind, series options as
    the config, size, objects, one run's figures), in make bench's order."""
    out = []
    for path in sorted(Path(repo, "results").glob("bench-*.json")):
        if path.name in (HOST_JSON, COSTS_JSON):
            continue
        d = json.loads(path.read_text())
        run = {"info": d["guest"]["info"], "ops": d["guest"]["ops"],
               "segbench": d["guest"]["segbench"]}
        out.append({"label": d["label"], "target": d["target"],
                    "kind": d["kernel"], "source": d["source"],
                    "cpus": d["cpus"], "config": d["series_options"],
                    "size": d["size_vmlinux"],
                    "objects": d["series_objects"],
                    "runs": [run] * d["identical_boots"]})
    order = {t: i for i, t in enumerate(BENCH_ORDER)}
    return sorted(out, key=lambda v: (order.get(v["target"], len(order)),
                                      v["target"], v["kind"] != "mainline"))


def report_minutes(repo):
    """The minutes REPORT.md says the run took, or None."""
    path = Path(repo, "results/REPORT.md")
    m = TOTAL_LINE.search(path.read_text()) if path.exists() else None
    return float(m.group(1)) if m else None


def parts_regions(repo):
    """[(file, begin, end, section)]: the README headlines of the bench
    parts that can be written again from their results/ file alone."""
    out = []
    for part in benchparts.PARTS:
        mod = sys.modules[part.write.__module__]
        load = getattr(mod, "state_from_results", None)
        state = load(repo) if load else None
        if state is not None:
            out.append(("README.md", mod.README_BEGIN, mod.README_END,
                        mod.readme_section(state)))
    return out


def regions_from_results(repo):
    """regions() and parts_regions() from results/ as it is: what make bench
    would write into the READMEs from the same figures, without a run."""
    costs = json.loads(Path(repo, "results", COSTS_JSON).read_text())
    minutes = report_minutes(repo)
    if minutes is None:
        raise ValueError("results/REPORT.md has no \"Total: N min\" line")
    return regions(pairs(variants_from_results(repo)), costs, minutes) + \
        parts_regions(repo)


def readme_from_results(repo):
    """Rewrite the READMEs' regions from results/; the files changed."""
    return rewrite_regions(repo, regions_from_results(repo))


def write(repo, variants, host, series_opts, minutes, partial=False,
          timings=(), option_costs=(), parts=None):
    """parts: {BenchPart key: its state, or None if it did not run}."""
    repo = Path(repo)
    parts = parts or {}
    results = repo / "results"
    written = [write_results_json(repo, f"bench-{v['label']}.json",
                                  variant_json(v, series_opts))
               for v in variants]
    written.append(write_results_json(repo, "bench-host.json", host,
                                      sort_keys=False))
    written.append(write_results_json(repo, "bench-option-costs.json",
                                      list(option_costs), sort_keys=False))
    prs = pairs(variants)
    written += plots(results, prs)
    for part in benchparts.PARTS:
        if parts.get(part.key):
            written += part.write(repo, parts[part.key],
                                  readme=not partial)
    path = results / "REPORT.md"
    path.write_text(report_md(variants, host, series_opts, minutes, partial,
                              timings, option_costs, parts, repo))
    written.append(path)
    if not partial:
        written += rewrite_regions(repo, regions(prs, list(option_costs),
                                                 minutes))
    return written


def main(argv):
    """python3 -m harness.benchreport --readme (from scripts/): the READMEs'
    regions written again from results/ as it is, no run."""
    if argv != ["--readme"]:
        print(main.__doc__.strip(), file=sys.stderr)
        return 2
    repo = Path(__file__).resolve().parents[2]
    for path in readme_from_results(repo):
        print(f"wrote {path.relative_to(repo)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
