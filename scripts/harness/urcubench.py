# SPDX-License-Identifier: GPL-2.0
"""make bench, a real library on the preload library: what
libpda-getcpu.so does to Debian's liburcu (liburcu8 0.13, unmodified,
urcu.py), which asks sched_getcpu() on every add and delete of a
CDS_LFHT_ACCOUNTING hash table and on every call_rcu() with per-CPU
workers.

Guest: tests/bench/urcu_bench (dynamic, with the distribution's loader,
C library and liburcu) on make bench's PDA kernels of the preload
library's targets, booted RUNS times under -icount; four ways (glibc's
own sched_getcpu() with rseq on and off, libpda-getcpu.so preloaded with
rseq on and off), each workload's instructions per operation and, from
runs with tests/bench/getcpu_count.c's counting interposer preloaded
first, its sched_getcpu() calls per operation.  The boots must agree.
Writes results/urcu.json, a section of results/REPORT.md and the
README's liburcu headline.
"""

import json
import statistics
import time
from pathlib import PurePosixPath

from . import benchlib, guest, preload, urcu
from .benchlib import RUNS, fmt, table
from .ktap import test_blocks
from .paths import BUILD, LOGS, REPO
from .progress import Phase, fail, reset_log
from .targets import TARGETS

ORDER = tuple(n for n, t in TARGETS.items() if t.preload_bench)
PROGRAM = "urcu_bench"
COMPAT = "urcu_bench_32"
COUNTER = "libgetcpu-count.so"
# tests/bench/jemalloc_calls: jemalloc's sched_getcpu() calls, counted in
# the 64-bit x86 program's boots (one architecture says it: the calls
# follow from jemalloc's arena choice, not from the CPU).
JEMALLOC = "jemalloc_calls"
JEMALLOC_PREFIX = "jemalloc-calls: "
PREFIX = "urcu-bench: "
WAYS = [
    ("real.rseq", "glibc, rseq on"),
    ("real.norseq", "glibc, rseq off"),
    ("preload.rseq", "preloaded"),
    ("preload.norseq", "preloaded, rseq off"),
]
WORKLOADS = [
    ("lfht.pinned", "`cds_lfht_add()` + `cds_lfht_del()`, pinned"),
    ("lfht.migrating", "`cds_lfht_add()` + `cds_lfht_del()`, migrating"),
    ("call_rcu.pinned", "`call_rcu()`, pinned"),
    ("call_rcu.migrating", "`call_rcu()`, migrating"),
]
# What liburcu 0.13's source says each operation asks: ht_count_add()
# and ht_count_del(), get_call_rcu_data().
EXPECTED_CALLS = {"lfht": 2, "call_rcu": 1}
STATE = BUILD / "urcu-state.json"
SECTION_BEGIN = "<!-- urcu:begin: written by `make bench` (urcubench.py) -->"
SECTION_END = "<!-- urcu:end -->"
README_BEGIN = "<!-- urcu-headline:begin: written by `make bench` " \
    "from results/urcu.json; do not edit by hand -->"
README_END = "<!-- urcu-headline:end -->"


def parse(lines):
    """urcu_bench's lines -> ({way: {workload: row}}, [failures]).  A row
    is {"min", "median", "reps", "ops", "threads", "unit", "method",
    "calls"} (calls: sched_getcpu() per operation, from the counted run)
    or {"na": reason}."""
    rows, failed = {}, []
    for line in lines:
        if not line.startswith(PREFIX):
            continue
        words = line[len(PREFIX):].split(None, 2)
        if len(words) < 3:
            continue
        way, load, rest = words
        if load == "FAILED" or rest.startswith("FAILED"):
            failed.append(" ".join(words))
            continue
        row = rows.setdefault(way, {}).setdefault(load, {})
        if rest.startswith("n/a"):
            row["na"] = rest[3:].strip()
            continue
        kv = dict(w.partition("=")[::2] for w in rest.split())
        if "calls" in kv:
            row["calls"] = float(kv["calls"])
            continue
        row.update(min=float(kv["min"]), median=float(kv["median"]),
                   reps=int(kv["reps"]), ops=int(kv["ops"]),
                   threads=int(kv["threads"]), unit=kv["unit"],
                   method=kv["method"])
    return rows, failed


def check(rows, failed, arch):
    """What makes a boot's rows unusable, as messages: a failure, a way or
    workload missing, a figure without its count or not in instructions,
    a preloaded way that did not answer the PDA kernel's way."""
    bad = list(failed)
    for way, _ in WAYS:
        for load, _ in WORKLOADS:
            row = rows.get(way, {}).get(load)
            if row is None:
                bad.append(f"{way} {load}: missing")
            elif "na" in row:
                continue
            elif "median" not in row or "calls" not in row:
                bad.append(f"{way} {load}: timed or counted run missing")
            elif row["unit"] != "insns":
                bad.append(f"{way} {load}: {row['unit']}, not "
                           "instructions (no -icount?)")
            elif way.startswith("preload.") and \
                    row["method"] != arch.preload_method:
                bad.append(f"{way} {load}: answered through "
                           f"{row['method']}, not {arch.preload_method}")
    return bad


def parse_jemalloc(lines):
    """jemalloc_calls' lines -> ({"calls": [per repetition], "allocs",
    "threads", "percpu_arena"}, [failures])."""
    row, failed = {"calls": []}, []
    for line in lines:
        if not line.startswith(JEMALLOC_PREFIX):
            continue
        rest = line[len(JEMALLOC_PREFIX):]
        if rest.startswith("FAILED"):
            failed.append(rest)
            continue
        kv = dict(w.partition("=")[::2] for w in rest.split())
        try:
            row["calls"].append(int(kv["calls"]))
            row.update(allocs=int(kv["allocs"]),
                       threads=int(kv["threads"]),
                       percpu_arena=kv["percpu_arena"])
        except (KeyError, ValueError):
            failed.append(f"malformed line: {line}")
    if not row["calls"] and not failed:
        failed.append("no result line")
    elif row.get("percpu_arena", "percpu") != "percpu":
        failed.append(f"percpu_arena={row['percpu_arena']}: jemalloc "
                      "refused MALLOC_CONF=percpu_arena:percpu")
    return row, failed


def counts_jemalloc(target, arch):
    return arch is target.user_arch_64 and urcu.counts_jemalloc(arch)


def programs_of(target):
    if target.user_arch_64:
        return [(PROGRAM, target.user_arch_64), (COMPAT, target.user_arch)]
    return [(PROGRAM, target.user_arch)]


def guest_counter(arch):
    return str(PurePosixPath(preload.guest_lib(arch)).parent / COUNTER)


def build(arch, out, tree, log):
    """(urcu_bench, libgetcpu-count.so) of @arch in @out."""
    cflags, libs = urcu.build_flags(arch, log)
    counter = preload.build_shared(arch, REPO / "tests/bench/getcpu_count.c",
                                   out / COUNTER, log)
    exe = preload.build_program(arch, REPO / "tests/bench/urcu_bench.c",
                                out / PROGRAM, tree, log, libs, cflags)
    return exe, counter


def build_jemalloc_count(arch, out, tree, log):
    return preload.build_program(arch, REPO / "tests/bench/jemalloc_calls.c",
                                 out / JEMALLOC, tree, log)


def initramfs(target, tree):
    arch0 = target.user_arch_64 or target.user_arch
    log = reset_log(LOGS / "urcubench" / f"user-{arch0.name}.log")
    with Phase("urcu", f"initramfs ({arch0.name})", log):
        fs = benchlib.initramfs(arch0, tree,
                                BUILD / f"bench-user-{arch0.name}", log)
        for name, arch in programs_of(target):
            out = BUILD / f"urcubench-{arch.name}"
            out.mkdir(parents=True, exist_ok=True)
            lib = guest.stripped(preload.build_library(arch, out, log), arch,
                                 log)
            exe, counter = (guest.stripped(f, arch, log)
                            for f in build(arch, out, tree, log))
            fs.add_test(name, exe, [preload.guest_lib(arch),
                                    guest_counter(arch)])
            fs.add_file_at(preload.guest_lib(arch), lib)
            fs.add_file_at(guest_counter(arch), counter)
            binaries = [exe, lib, counter]
            if counts_jemalloc(target, arch):
                jemalloc = urcu.unpack(arch, log) / urcu.JEMALLOC
                guest_jemalloc = f"{arch.guest_libc_dir}/{urcu.JEMALLOC}"
                count = guest.stripped(
                    build_jemalloc_count(arch, out, tree, log), arch, log)
                fs.add_test(JEMALLOC, count,
                            [guest_counter(arch), guest_jemalloc])
                fs.add_file_at(guest_jemalloc, jemalloc)
                binaries += [count, jemalloc]
            for path, src in preload.runtime_files(
                    arch, binaries, lib_dirs=[urcu.unpack(arch, log)]):
                fs.add_file_at(path, src)
        return benchlib.write_initramfs(
            fs, tree, BUILD / f"urcubench-{arch0.name}.cpio", log)


def boot_once(target, label, bdir, cpio, n):
    console = LOGS / label / f"urcubench-{n}.console.log"
    blocks = test_blocks(benchlib.icount_boot(
        target, label, bdir, cpio, console, f"urcu bench boot {n}/{RUNS}"))
    res = {}
    for name, arch in programs_of(target):
        rows, failed = parse(blocks.get(name, []))
        bad = check(rows, failed, arch)
        if bad:
            fail(f"[{label}] {name}: " + "; ".join(bad), console)
        res[name] = rows
        if counts_jemalloc(target, arch):
            row, failed = parse_jemalloc(blocks.get(JEMALLOC, []))
            if failed:
                fail(f"[{label}] {JEMALLOC}: " + "; ".join(failed), console)
            res[JEMALLOC] = row
    return res


def differences(runs):
    """(program, way, workload) rows, and jemalloc's counts, not the same
    in every boot."""
    keys = sorted({(prog, way, load) for r in runs for prog in r
                   if prog != JEMALLOC
                   for way in r[prog] for load in r[prog][way]})
    jemalloc = [JEMALLOC] if any(r.get(JEMALLOC) != runs[0].get(JEMALLOC)
                                 for r in runs) else []
    return [f"{prog} {way} {load}" for prog, way, load in keys
            if any(r.get(prog, {}).get(way, {}).get(load) !=
                   runs[0].get(prog, {}).get(way, {}).get(load)
                   for r in runs)] + jemalloc


def measure(pristine, tree, unverified, timings, names):
    """make bench's PDA kernels of @names, each booted RUNS times."""
    started = time.monotonic()
    results = benchlib.pda_kernel_boots(
        names, pristine, tree, unverified, timings, "urcu bench boot",
        initramfs, boot_once, differences, "urcubench-*.console.log")
    jemalloc = {t: progs.pop(JEMALLOC) for t, progs in results.items()
                if JEMALLOC in progs}
    state = {"guests": results, "runs": RUNS, "jemalloc": jemalloc,
             "libjemalloc2": {t: urcu.version(a, "libjemalloc2")
                              for t in jemalloc
                              for _, a in programs_of(TARGETS[t])
                              if counts_jemalloc(TARGETS[t], a)},
             "cpus": {n: TARGETS[n].icount_cpus or TARGETS[n].cpus
                      for n in results},
             "liburcu": {a.name: urcu.version(a) for t in results
                         for _, a in programs_of(TARGETS[t])},
             "minutes": (time.monotonic() - started) / 60}
    STATE.write_text(json.dumps(state, indent=1))
    return state


# ------------------------------------------------------------ report

def label(target, prog):
    return target + (" (32-bit program)" if prog == COMPAT else
                     " (64-bit program)" if TARGETS[target].user_arch_64
                     else "")


def cell(row, key="median"):
    """A way's figure and its sched_getcpu() calls per operation."""
    if row is None:
        return "n/a"
    if "na" in row:
        return "n/a"
    return f"{fmt(row[key], 1)} ({fmt(row['calls'])})"


def saving(rows, load, key="median", base="real.norseq",
           case="preload.norseq"):
    """Instructions per operation the preload saves against @base, of
    the @key figures."""
    a, b = rows.get(base, {}).get(load), rows.get(case, {}).get(load)
    if not a or not b or "na" in a or "na" in b:
        return None
    return a[key] - b[key]


def rows_of(state, loads, key="median"):
    out = []
    for target, progs in state["guests"].items():
        for prog, rows in progs.items():
            for load, what in WORKLOADS:
                if load not in loads:
                    continue
                first = rows.get(WAYS[0][0], {}).get(load, {})
                threads = first.get("threads", "")
                via = rows.get("preload.norseq", {}).get(load, {})
                out.append([label(target, prog), what, threads] +
                           [cell(rows.get(w, {}).get(load), key)
                            for w, _ in WAYS] +
                           [via.get("method", ""),
                            fmt(saving(rows, load, key), 1)])
    return out


def grid(rows):
    """The table of rows_of(): the workload left-aligned too."""
    return table(HEAD, rows, ["---", "---"] + ["---:"] * (len(HEAD) - 2))


def calls_text(state):
    """What the counts say against liburcu's source."""
    seen = {}
    for progs in state["guests"].values():
        for rows in progs.values():
            for way_rows in rows.values():
                for load, row in way_rows.items():
                    if "calls" in row:
                        seen.setdefault(load.split(".")[0], set()).add(
                            row["calls"])
    parts = []
    for kind, want in EXPECTED_CALLS.items():
        got = sorted(seen.get(kind, ()))
        if not got:
            continue
        verdict = "as liburcu's source says" if got == [want] else \
            f"liburcu's source says {want}"
        parts.append(f"{kind}: {', '.join(fmt(g) for g in got)} "
                     f"`sched_getcpu()` per operation ({verdict})")
    return "; ".join(parts)


def jemalloc_text(state):
    """What jemalloc asked, or "" if no boot counted it."""
    parts = []
    for target, row in state.get("jemalloc", {}).items():
        calls = sorted(row["calls"])
        version = state.get("libjemalloc2", {}).get(target) or "?"
        per = row["allocs"] / max(statistics.median(calls), 1)
        parts.append(
            f"Not jemalloc: Debian's libjemalloc2 {version}, preloaded with "
            "`MALLOC_CONF=percpu_arena:percpu` (which jemalloc reports "
            f"back as in force), asked `sched_getcpu()` {calls[0]:,} to "
            f"{calls[-1]:,} times in {row['allocs']:,} allocations and frees "
            f"({row['threads']} threads on "
            f"{state.get('cpus', {}).get(target, '?')} CPUs, sizes up to "
            f"64 KiB, {len(calls)} repetitions, {label(target, PROGRAM)}, "
            f"{state.get('runs', '?')} boots identical, "
            f"`tests/bench/jemalloc_calls.c`): one call per {per:,.0f} "
            "allocations, since it asks only when a thread's arena was "
            "last used by another thread (more often when threads share "
            "CPUs, still rare). The preload library has nothing to gain "
            "there.")
    return " ".join(parts)


HEAD = ["target", "workload", "threads"] + [w for _, w in WAYS] + \
    ["via", "preloaded saves (rseq off)"]


def section(state, repo=None):
    found = {a: v for a, v in state.get("liburcu", {}).items() if v}
    versions = f"liburcu8 {next(iter(found.values()))} on every " \
        "architecture" if len(set(found.values())) == 1 else \
        ", ".join(f"{a}: liburcu8 {v}" for a, v in sorted(found.items()))
    return "\n".join([
        SECTION_BEGIN,
        "## A library users run: Debian's liburcu on the preload library",
        "",
        "`tests/bench/urcu_bench`, dynamically linked against Debian's "
        f"own liburcu shared libraries, unmodified ({versions}; the "
        "default urcu-memb flavour and liburcu-cds), and the "
        "distribution's glibc 2.36. liburcu 0.13 asks `sched_getcpu()` "
        "in `ht_count_add()` and `ht_count_del()` (rculfhash.c: which "
        "per-CPU split counter of a `CDS_LFHT_ACCOUNTING` table an add or "
        "a delete updates) and in `get_call_rcu_data()` (which CPU's "
        "worker a `call_rcu()` queues on, once "
        "`create_all_cpu_call_rcu_data()` made them). Workloads "
        "(`tests/preload/urcu_work.h`): a thread per CPU, two at least, "
        "each 1000 operations, pinned or moving to the next CPU every 64; "
        "an lfht operation is an add and a delete of one node, a "
        "call_rcu one is one call. A figure is the instructions all CPUs "
        "ran from the first thread's start to the last one's end, less "
        "the same run without the calls, per operation (`qemu -icount "
        "shift=0`, make bench's PDA kernels, median of 5 after a "
        f"warm-up, {state['runs']} boots identical); call_rcu's "
        "callbacks run after that span (a worker sleeps 10 ms once "
        "woken). In brackets: `sched_getcpu()` calls per operation, "
        "counted in runs of their own by `tests/bench/getcpu_count.c`, "
        "preloaded first, which counts each thread's calls and passes "
        "them on (counting costs instructions, and the timed runs leave "
        "it out). \"Via\" is how the preloaded library answered with "
        "rseq off (`pda_getcpu_method()`, the same in every thread, or "
        "the run fails); the last column is glibc with rseq off less "
        "preloaded with rseq off: what the library is for, an older "
        "glibc's system call replaced.", "",
        "### Instructions per operation (median), and `sched_getcpu()` "
        "calls per operation", "",
        grid(rows_of(state, {w for w, _ in WORKLOADS})), "",
        calls_text(state) + ".", "",
        *([jemalloc_text(state), ""] if state.get("jemalloc") else []),
        "### The same, min of the repetitions", "",
        grid(rows_of(state, {w for w, _ in WORKLOADS}, "min")), "",
        "CPUs: " + ", ".join(f"{t} {c}" for t, c in state["cpus"].items()) +
        " (ARM kernels boot one CPU under `-icount`, see above: their "
        "threads share it, and nothing migrates). This part took "
        f"{state['minutes']:.1f} min. Raw rows: `results/urcu.json`.",
        SECTION_END])


def readme_section(state):
    pinned = {"lfht.pinned", "call_rcu.pinned"}
    return "\n".join([
        README_BEGIN,
        "### Debian's liburcu on the preload library (`make bench`)", "",
        "Guest instructions per operation of an unmodified program on "
        "Debian 12's liburcu 0.13, a thread per CPU pinned (median, "
        "`qemu -icount`, make bench's PDA kernels, two boots identical), "
        "and in brackets liburcu's `sched_getcpu()` calls per operation, "
        "counted:", "",
        grid(rows_of(state, pinned)), "",
        "Migrating threads, the min, the method: `results/REPORT.md`.",
        *(["", jemalloc_text(state)] if state.get("jemalloc") else []),
        "", README_END])


def state_from_results(repo):
    """The state write() had (all of it but the minutes), read back from
    results/urcu.json; None without the file."""
    return benchlib.read_results_json(repo, "urcu.json", ORDER)


def write(repo, state, readme):
    """results/urcu.json, and the README headline (readme: not after a
    subset of the targets)."""
    written = [benchlib.write_results_json(
        repo, "urcu.json", {k: v for k, v in state.items()
                            if k != "minutes"})]
    if readme:
        written.append(benchlib.replace_readme(
            repo, (README_BEGIN, README_END), readme_section(state)))
    return written


PART = benchlib.BenchPart(
    name="urcu", key="urcu", targets=ORDER, measure=measure, write=write,
    section=section, markers=(SECTION_BEGIN, SECTION_END))
