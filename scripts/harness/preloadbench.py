# SPDX-License-Identifier: GPL-2.0
"""make bench, the preload library: what one sched_getcpu()
costs an unmodified dynamically linked program, real (glibc's rseq on,
and off) against libpda-getcpu.so preloaded, and the system call itself.

Guest: tests/bench/getcpu_bench (dynamic, with the loader and libc from
the distribution's packages, scripts/harness/preload.py; on i386 and arm
also built against Debian 11's glibc 2.31, which has no rseq, and run on
its loader, glibc231.py) on make bench's PDA kernels, booted RUNS times under -icount as bench.py boots; the
instruction counts must agree.  Host: the same program natively, TSC
ticks turned into core cycles with segbench's calibration.  Writes
results/preload.json, a section of results/REPORT.md and the README's
preload headline.
"""

import json
import subprocess
import time

from . import benchlib, glibc231, guest, hostcaps, preload
from .arches import HOST, HOST_32
from .benchlib import RUNS, table
from .guestout import PREFIX, parse_bench_lines
from .ktap import test_blocks
from .paths import BUILD, LOGS, REPO
from .progress import Phase, fail, reset_log, run
from .targets import TARGETS

ORDER = tuple(n for n, t in TARGETS.items() if t.preload_bench)
PROGRAM = "getcpu_bench"
COMPAT = "getcpu_bench_32"
# The same program and library against glibc 2.31, where the arch record
# says glibc231: its real.* cases are one call, glibc 2.31's (no rseq).
GLIBC231 = "getcpu_bench_glibc231"
BENCH_PREFIX = "getcpu-bench: "
CASES = [
    ("real.rseq", "glibc's sched_getcpu(), rseq registered"),
    ("real.norseq", "glibc's, `glibc.pthread.rseq=0`"),
    ("preload.rseq", "`LD_PRELOAD=libpda-getcpu.so`"),
    ("preload.norseq", "`LD_PRELOAD=libpda-getcpu.so`, rseq off"),
    ("syscall", "`syscall(SYS_getcpu)`"),
    ("floor", "a function of a shared library that returns 0, called as "
     "`sched_getcpu()` is: the floor"),
]
FLOOR = "libgetcpu-floor.so"
GOAL = 100
STATE = BUILD / "preload-state.json"
SECTION_BEGIN = "<!-- preload:begin: written by `make bench` " \
    "(preloadbench.py) -->"
SECTION_END = "<!-- preload:end -->"
README_BEGIN = "<!-- preload-headline:begin: written by `make bench` " \
    "from results/preload.json; do not edit by hand -->"
README_END = "<!-- preload-headline:end -->"


def parse(lines):
    """getcpu_bench's lines -> {case: row}, with the method it reported."""
    mine = [ln[len(BENCH_PREFIX):] for ln in lines
            if ln.startswith(BENCH_PREFIX)]
    rows = parse_bench_lines([PREFIX + ln.split(" method=", 1)[0]
                              for ln in mine])
    methods = {ln.split()[0]: ln.split(" method=", 1)[1]
               for ln in mine if " method=" in ln}
    for case, row in rows["ops"].items():
        if "na" not in row:
            row["method"] = methods.get(case)
    return rows["ops"]


def programs_of(target):
    if target.user_arch_64:
        progs = [(PROGRAM, target.user_arch_64), (COMPAT, target.user_arch)]
    else:
        progs = [(PROGRAM, target.user_arch)]
    if target.user_arch.glibc231:
        progs.append((GLIBC231, target.user_arch))
    return progs


def build(arch, out, tree, log, sysroot=None):
    """(getcpu_bench, libgetcpu-floor.so) of @arch in @out.  The program
    looks for the library in its own directory ($ORIGIN: natively, where
    both are built; no path of this machine's in a guest's binary) and
    then in the loader's, where runtime_files() packs it for a guest.
    @sysroot: glibc 2.31's root; the program then starts on that glibc's
    loader in a guest (glibc231.link_flags())."""
    floor = preload.build_shared(arch, REPO / "tests/bench/getcpu_floor.c",
                                 out / FLOOR, log, sysroot=sysroot)
    link = [floor, "-Wl,-rpath,$ORIGIN"]
    if sysroot:
        link += glibc231.link_flags(arch)
    exe = preload.build_program(
        arch, REPO / "tests/bench/getcpu_bench.c", out / PROGRAM, tree, log,
        link=link, sysroot=sysroot)
    if sysroot:
        preload.require_glibc231(exe, floor)
    return exe, floor


def initramfs(target, tree):
    arch0 = target.user_arch_64 or target.user_arch
    log = reset_log(LOGS / "preloadbench" / f"user-{arch0.name}.log")
    with Phase("preload", f"initramfs ({arch0.name})", log):
        fs = benchlib.initramfs(arch0, tree,
                                BUILD / f"bench-user-{arch0.name}", log)
        for name, arch in programs_of(target):
            old = name == GLIBC231
            out = BUILD / ("preloadbench-" + ("glibc231-" if old else "") +
                           arch.name)
            out.mkdir(parents=True, exist_ok=True)
            root = glibc231.sysroot(arch, log) if old else None
            lib = preload.build_library(arch, out, log, sysroot=root)
            if old:
                preload.require_glibc231(lib)
            lib = guest.stripped(lib, arch, log)
            exe, _ = build(arch, out, tree, log, sysroot=root)
            exe = guest.stripped(exe, arch, log)
            at = glibc231.guest_lib(arch) if old else preload.guest_lib(arch)
            fs.add_test(name, exe, [at])
            fs.add_file_at(at, lib)
            for path, src in preload.runtime_files(
                    arch, [exe, lib], lib_dirs=[out],
                    libc=glibc231.libc(arch, log) if old else None):
                fs.add_file_at(path, src)
        return benchlib.write_initramfs(
            fs, tree, BUILD / f"preloadbench-{arch0.name}.cpio", log)


def boot_once(target, label, bdir, cpio, n):
    console = LOGS / label / f"preloadbench-{n}.console.log"
    blocks = test_blocks(benchlib.icount_boot(
        target, label, bdir, cpio, console,
        f"preload bench boot {n}/{RUNS}"))
    res = {name: parse(blocks.get(name, []))
           for name, _ in programs_of(target)}
    for (name, arch), rows in zip(programs_of(target), res.values()):
        if {c for c, _ in CASES} - set(rows):
            fail(f"[{label}] {name}: rows missing", console)
        na = [f"{c}: {r['na']}" for c, r in rows.items() if "na" in r]
        if na:
            fail(f"[{label}] {name}: not measured: {'; '.join(na)}",
                 console)
        for case in ("preload.rseq", "preload.norseq"):
            if rows[case]["method"] != arch.preload_method:
                fail(f"[{label}] {name} {case}: the library answered "
                     f"through {rows[case]['method']}, not "
                     f"{arch.preload_method}", console)
        if any(r["unit"] != "insns" for r in rows.values()):
            fail(f"[{label}] {name}: not instruction counts", console)
        below = [c for c, r in rows.items()
                 if r["median"] < rows["floor"]["median"]]
        if below:
            fail(f"[{label}] {name}: {', '.join(below)} below the floor "
                 f"({rows['floor']['median']} instructions): the loops do "
                 "not call as the floor's does", console)
    return res


def differences(runs):
    """(program, case) rows not the same in every boot, as messages."""
    rows = sorted({(prog, case) for r in runs for prog in r
                   for case in r[prog]})
    return [f"{prog} {case}" for prog, case in rows
            if any(r.get(prog, {}).get(case) !=
                   runs[0].get(prog, {}).get(case) for r in runs)]


def host(arches):
    """getcpu_bench natively, each of @arches' builds (the host's own
    first): {build: {case: row in cycles}}."""
    log = reset_log(LOGS / "preloadbench" / "host.log")
    out = {}
    with Phase("host", "getcpu_bench natively (cycles)", log):
        seg = guest.build_segbench(arches[0], BUILD / "preloadbench-host" /
                                   "segbench", log)
        cal = BUILD / "preloadbench-host" / "cal.json"
        run([seg, "--filter", "cpu.rseq", "--json", "-o", cal], log,
            what="segbench calibration")
        machine = json.loads(cal.read_text())["machine"]
        scale = machine["core_mhz"] / machine["tsc_mhz"]
        for arch in arches:
            d = BUILD / "preloadbench-host" / arch.name
            d.mkdir(parents=True, exist_ok=True)
            lib = preload.build_library(arch, d, log)
            exe, _ = build(arch, d, REPO, log)
            proc = subprocess.run([exe, lib], stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
            with open(log, "a") as f:
                f.write(proc.stdout)
            if proc.returncode:
                fail(f"getcpu_bench ({arch.name}) failed natively", log)
            rows = parse(proc.stdout.splitlines())
            for row in rows.values():
                for k in ("min", "median"):
                    row[k] = round(row[k] * scale, 2)
                row["unit"] = "cycles"
            out[arch.name] = rows
    return {"machine": machine, "builds": out}


def measure(pristine, tree, unverified, timings, names):
    """make bench's PDA kernels of @names; on the host, its own build of
    getcpu_bench and, where it runs them, the i386 one."""
    started = time.monotonic()
    results = benchlib.pda_kernel_boots(
        names, pristine, tree, unverified, timings, "preload bench boot",
        initramfs, boot_once, differences, "preloadbench-*.console.log")
    start = time.monotonic()
    native = host((HOST,) + ((HOST_32,) if hostcaps.i386()[0] else ()))
    timings.append(("host", "getcpu_bench", time.monotonic() - start))
    state = {"guests": results, "host": native, "runs": RUNS,
             "cpus": {n: TARGETS[n].icount_cpus or TARGETS[n].cpus
                      for n in results},
             "minutes": (time.monotonic() - started) / 60}
    STATE.write_text(json.dumps(state, indent=1))
    return state


# ------------------------------------------------------------ report

def figure(row, key):
    """Two decimals at most, no trailing zeros: "5.1", not "5.10"."""
    return "n/a" if row is None else f"{row[key]:.2f}".rstrip("0").rstrip(".")


def label(target, prog):
    return target + (" (32-bit program)" if prog == COMPAT else
                     " (64-bit program)" if TARGETS[target].user_arch_64
                     else "")


def ratio(rows, base="syscall", case="preload.norseq"):
    """base / case, medians: how many times fewer."""
    a, b = rows.get(base), rows.get(case)
    return a["median"] / b["median"] if a and b and b["median"] else None


def times(x):
    return "n/a" if x is None else f"{x:.0f}×" if x >= 10 else f"{x:.1f}×"


def rows_of(progs, target):
    """[(program, its rows, the glibc 2.31 build's rows of the same
    architecture or None)]: one table row each, the 2.31 build's figures
    beside its architecture's."""
    same = COMPAT if TARGETS[target].user_arch_64 else PROGRAM
    return [(prog, rows, progs.get(GLIBC231) if prog == same else None)
            for prog, rows in progs.items() if prog != GLIBC231]


def old_glibc(rows, key):
    """glibc 2.31's call, then preloaded on it: "plain → preloaded"."""
    if rows is None:
        return "—"
    return (f"{figure(rows['real.rseq'], key)} → "
            f"{figure(rows['preload.rseq'], key)}")


def guest_table(state):
    out = []
    for target, progs in state["guests"].items():
        for prog, rows, old in rows_of(progs, target):
            out.append([label(target, prog)] +
                       [f"{figure(rows.get(c), 'min')} / "
                        f"{figure(rows.get(c), 'median')}" for c, _ in CASES] +
                       [rows["preload.norseq"]["method"],
                        times(ratio(rows)),
                        times(ratio(rows, "real.norseq")),
                        times(ratio(rows, "real.rseq", "preload.rseq")),
                        old_glibc(old, "min"), old_glibc(old, "median"),
                        "—" if old is None else
                        times(ratio(old, "real.rseq", "preload.rseq"))])
    head = ["target"] + [f"`{c}`" for c, _ in CASES] + \
        ["preloaded via", "syscall / preloaded",
         "glibc, rseq off / preloaded", "glibc, rseq on / preloaded",
         "glibc 2.31 → preloaded, min", "median", "glibc 2.31 / preloaded"]
    return table(head, out)


def host_table(state):
    out = []
    for arch, rows in state["host"]["builds"].items():
        out.append([arch] + [f"{figure(rows.get(c), 'min')} / "
                             f"{figure(rows.get(c), 'median')}"
                             for c, _ in CASES] +
                   [rows["preload.norseq"]["method"]])
    return table(["build"] + [f"`{c}`" for c, _ in CASES] +
                 ["preloaded via"], out)


def goal_text(state):
    """Whether the goal was met, and if not, why not."""
    got = [(ratio(rows), rows) for progs in state["guests"].values()
           for rows in progs.values() if ratio(rows)]
    if not got:
        return ""
    lo, hi = min(r for r, _ in got), max(r for r, _ in got)
    worst = min(got, key=lambda g: g[0])[1]
    sysc, calls = worst["syscall"]["median"], \
        worst["preload.norseq"]["median"]
    text = (f"The goal was at least {GOAL}× fewer instructions than the "
            f"system call; measured: {lo:.0f}× to {hi:.0f}×.")
    if lo >= GOAL:
        return text + " Met."
    floor = worst.get("floor", {}).get("median")
    if floor is None:
        return text + " **Not met** (this state has no floor row)."
    room = sysc / GOAL
    budget = (f"less than the call alone costs ({floor:.0f}, the floor: a "
              "function of a shared library that returns 0, called the "
              "same way), so no function in a shared library can meet it"
              if room < floor else
              f"{room - floor:.1f} above the call alone ({floor:.0f}, the "
              "floor: a function of a shared library that returns 0, "
              "called the same way): room for the load, nothing else")
    return text + (
        f" **Not met.** Where it is furthest, the system call is "
        f"{sysc:.0f} instructions, so {GOAL}× leaves {room:.1f} per "
        f"call, {budget}. Beyond the call, the "
        "library must also check, "
        "on every call, that this thread's register holds the PDA "
        "selector (or that it registered a getcpu_cache word), since a "
        "thread may hold someone else's selector there; and on i386 a "
        "shared library needs its PIC base (`call __x86.get_pc_thunk`, 4 "
        f"instructions) to find the CPU table. So {calls:.0f}, "
        f"{calls - floor:.0f} above the floor, is close to the least a "
        "safe preloaded function can cost; a program built with "
        "`pda.h` gets the one load inline. Against what an unmodified "
        "program pays today (glibc's own call, the next columns) the gain "
        "is what a deployment sees: large where glibc makes the system "
        "call (i386, ARM, rseq off), small where it already reads rseq or "
        "the vDSO.")


def section(state, repo=None):
    m = state["host"]["machine"]
    return "\n".join([
        SECTION_BEGIN,
        "## `sched_getcpu()` in unmodified programs: the preload library",
        "",
        "`tests/bench/getcpu_bench`, dynamically linked against the "
        "distribution's glibc 2.36, runs itself once per case; each figure "
        "is (a loop of 2000 calls − the same loop without them) / 2000, 15 "
        "repetitions after a warm-up, pinned to CPU 0, **min / median**; "
        "the loop calls by name, through the dynamic linker's tables, as a "
        "program does, so a figure includes the call. "
        "On i386 and arm the program and the library are also built "
        "against Debian 11's glibc 2.31 and run on its loader and "
        "libraries (`getcpu_bench_glibc231` in `results/preload.json`); "
        "that glibc registers no rseq, so its two `real` cases are one "
        "call, shown as \"glibc 2.31 → preloaded\" (`real.rseq` → "
        "`preload.rseq`) beside its architecture's row. "
        "Cases: " + "; ".join(f"`{c}`: {w}" for c, w in CASES) + ". "
        "\"Preloaded via\" is the library's own answer "
        "(`pda_getcpu_method()`) with rseq off.", "",
        f"### In the guests (instructions per call, `qemu -icount "
        f"shift=0`, make bench's PDA kernels, {state['runs']} boots "
        "identical)", "",
        guest_table(state), "",
        goal_text(state), "ARM kernels boot one CPU here (`-icount` and "
        "ARM spin-waits, see above).", "",
        "### On the host (core cycles per call, native)", "",
        f"{m.get('cpu_model', '?')} ({m.get('cpu_id', '?')}), kernel "
        f"{m.get('kernel', '?')}, {m.get('virt', '?')}; TSC ticks × core "
        f"{m.get('core_mhz', 0):.0f} MHz / TSC {m.get('tsc_mhz', 0):.0f} "
        "MHz (segbench's calibration). The host kernel is not a PDA "
        "kernel: the library falls back to rseq's `cpu_id`, or with rseq "
        "off to the C library's call, so this shows its overhead there, "
        "not the segment's cost (segbench's `cpu.pda` row has that). "
        "The glibc 2.31 builds run in the guests only: their interpreter "
        "is the guest's path of that loader.", "",
        host_table(state), "",
        f"This part took {state['minutes']:.1f} min. Raw rows: "
        "`results/preload.json`.",
        SECTION_END])


def readme_section(state):
    costs = [r["preload.norseq"]["median"] for progs in
             state["guests"].values() for r in progs.values()]
    rows = []
    for target, progs in state["guests"].items():
        for prog, r, old in rows_of(progs, target):
            rows.append([label(target, prog), figure(r["syscall"], "median"),
                         figure(r["real.norseq"], "median"),
                         figure(r["real.rseq"], "median"),
                         figure(r["preload.norseq"], "median"),
                         figure(r.get("floor"), "median"),
                         r["preload.norseq"]["method"],
                         times(ratio(r, "real.norseq")),
                         old_glibc(old, "median")])
    return "\n".join([
        README_BEGIN,
        "### `sched_getcpu()` with the preload library (`make bench`)", "",
        "Guest instructions per call, the call included (median of 15, "
        "`qemu -icount`, make bench's PDA kernels, two boots identical; "
        "glibc 2.36, whose rseq-off path is what an older glibc does on "
        "i386 and ARM). The floor is a function of a shared library that "
        "returns 0, called the same way: what the call costs before the "
        "function does anything. The last column is what a legacy "
        "deployment gains: the same program and library built against "
        "Debian 11's glibc 2.31, which has no rseq, on that glibc's loader "
        "and libraries (i386 and arm builds; the other builds have none).",
        "",
        table(["target", "`syscall(SYS_getcpu)`", "glibc, rseq off",
               "glibc, rseq on", "preloaded", "floor", "via",
               "glibc rseq off / preloaded", "glibc 2.31 → preloaded"],
              rows), "",
        f"The goal set for the library, {GOAL}× fewer instructions than "
        "the system call, is not met: a safe preloaded function costs "
        f"{min(costs):.0f}-{max(costs):.0f} instructions (why, every case "
        "and the host's cycles: `results/REPORT.md`).",
        "", README_END])


def state_from_results(repo):
    """The state write() had (all of it but the minutes), read back from
    results/preload.json; None without the file."""
    return benchlib.read_results_json(repo, "preload.json", ORDER)


def write(repo, state, readme):
    """results/preload.json, and the README headline (readme: not after a
    subset of the targets)."""
    written = [benchlib.write_results_json(
        repo, "preload.json",
        {k: v for k, v in state.items() if k != "minutes"})]
    if readme:
        written.append(benchlib.replace_readme(
            repo, (README_BEGIN, README_END), readme_section(state)))
    return written


PART = benchlib.BenchPart(
    name="preload", key="preload", targets=ORDER, measure=measure,
    write=write, section=section, markers=(SECTION_BEGIN, SECTION_END))
