# SPDX-License-Identifier: GPL-2.0
"""make bench: unpatched mainline 6.12 against the PDA kernel, per target.

For each target, two kernels from the same fragments plus
configs/bench.config (test-only options off, as a user builds it):
`mainline-<target>` built straight from the pristine tree, `<target>` from
the patched tree (in build/bench-<target>).  Each boots twice
under `qemu -icount shift=0` with the same initramfs: tests/bench's
pda_bench and segbench's CPU-number and per-CPU increment rows.  Under
-icount the guest figures are instruction counts, so the two boots must
agree exactly; any difference fails the run and names the row.  segbench
also runs natively on the host for cycles.  benchreport.py turns it all
into results/ and the README's headline section.

Beside them, size only, what single options cost: the PDA kernel as
`make check` builds it (KUnit and the suite on; its build is reused), and
on i386-up the PDA kernel with X86_PDA_UP_NOSEG off.

Kernel builds run one at a time; boots run on a second thread while the
next kernel builds (TCG uses one host core).
"""

import concurrent.futures
import csv
import dataclasses
import json
import re
import subprocess
import time
from pathlib import Path

from . import benchreport, boot, census, censusreport, check, guest, \
    hostcaps, kbuild, ktap, preloadbench, source, targetrun, tlbbench
from .arches import HOST, HOST_32
from .guestout import parse_bench_lines
from .ktap import test_blocks
from .paths import BUILD, LOGS, REPO
from .progress import Phase, StepFailed, fail, reset_log, run, say
from .targets import TARGETS

BENCH_ORDER = tuple(n for n, t in TARGETS.items() if t.bench)
# After them, arm64 measures its own question (tlbbench.py: patch 0011's
# local TLB invalidation), not pda_bench's rows.
TLB_TARGET = tlbbench.TARGET
# And the segment census (census.py) of make bench's x86 kernels;
# `--only census` runs it alone.
CENSUS = "census"
# And the preload library's sched_getcpu() (preloadbench.py); `--only
# preload` alone.
PRELOAD = "preload"
BOOT_TIMEOUT = 900
RUNS = 2
# Kernel arguments of every bench boot: the guest counts instructions, and
# user-space addresses are not randomised (one more source of difference).
# Each arch may add its own (bench_args()).
BENCH_ARGS = "pda.icount norandmaps"
# The same seed for QEMU's guest RNG (RDRAND, the ARM DT rng-seed) on
# every boot, and an RTC that follows virtual time from a fixed date.
QEMU_ARGS = ("-seed", "1", "-rtc", "base=2026-01-01T00:00:00,clock=vm")
# The initramfs is byte-identical from run to run: every entry gets this
# mtime (2026-01-01, the RTC's date).  With each file's own mtime, ARM's
# context-switch figures moved by a few instructions between runs.
CPIO_MTIME = 1767225600
# segbench in the guests: the CPU-number methods and single-thread
# per-CPU increments; CSV so each row is one console line.
GUEST_SEGBENCH = {
    "segbench_cpu": ["--filter", "cpu.", "--quick", "--csv"],
    "segbench_inc": ["--filter", "inc.*.1t", "--quick", "--csv"],
}
# x86_64 boots the 64-bit pda_bench and segbench (the PDA read through
# %gs), and the 32-bit segbench too (through %fs, as a legacy program on
# a 64-bit kernel): its blocks are NAME_32, its rows ROW + COMPAT_ROW.
COMPAT_BLOCK = "_32"
COMPAT_ROW = ".ia32"
# The bench kernels, mainline and PDA: test-only options off.
BENCH_CONFIG = REPO / "configs/bench.config"
# i386-up's PDA kernel once more, with UP NOSEG off: the option's own size.
NOSEG_OFF_CONFIG = REPO / "configs/bench-noseg-off.config"
# Everything a run measured, so that --report-only can write results/ again.
STATE = BUILD / "bench-state.json"
# QEMU 7.2 runs -icount vCPUs round-robin on one thread, and a vCPU that
# busy-waits keeps its whole slice.  x86's cpu_relax() is PAUSE, which
# ends the slice; ARMv7's is a barrier, so an SMP ARM guest crawls through
# every spin-wait (stop_machine() in free_initmem(), CPU bring-up) and
# stalls RCU: it had not reached /init after 6 minutes.  ARM boots its
# SMP kernel on one CPU (its target's icount_cpus); its cross-CPU rows are
# n/a.
BENCH_CPUS_WHY = (
    "QEMU 7.2 runs `-icount` vCPUs round-robin on one host thread and a "
    "busy-waiting vCPU keeps its whole slice; ARMv7's `cpu_relax()` does "
    "not end it (x86's PAUSE does), so a 4-CPU ARM guest crawled through "
    "every spin-wait (CPU bring-up, `stop_machine()`) and had not reached "
    "`/init` after 6 minutes")


# ------------------------------------------------------------ parsing

def parse_segbench_csv(lines):
    """segbench --csv lines -> {name: row}; row as in parse_bench_lines,
    plus "note" and "desc"; skipped rows are {"na": note}."""
    start = next((i for i, line in enumerate(lines)
                  if line.startswith("name,group,status,")), None)
    rows = {}
    if start is None:
        return rows
    for rec in csv.DictReader(lines[start:]):
        if not rec.get("name") or rec.get("status") not in ("ok", "skip"):
            continue
        if rec["status"] == "skip":
            rows[rec["name"]] = {"na": rec["note"], "desc": rec["desc"]}
            continue
        rows[rec["name"]] = {"min": float(rec["min_ns"]),
                             "median": float(rec["median_ns"]),
                             "unit": rec["unit"], "note": rec["note"],
                             "emulated": rec["emulated"] == "1",
                             "desc": rec["desc"]}
    return rows


def parse_console(text):
    """One bench boot: pda_bench rows, segbench rows, the test verdicts."""
    blocks = test_blocks(text)
    res = parse_bench_lines(blocks.get("pda_bench", []))
    res["segbench"] = {}
    for name in GUEST_SEGBENCH:
        res["segbench"].update(parse_segbench_csv(blocks.get(name, [])))
        compat = parse_segbench_csv(blocks.get(name + COMPAT_BLOCK, []))
        res["segbench"].update({row + COMPAT_ROW: v
                                for row, v in compat.items()})
    rep = ktap.parse_console(text)
    res["tests"] = {r.name: r.status for r in rep.results}
    return res


def _figure(row):
    return f"n/a ({row['na']})" if "na" in row else \
        f"min={row['min']:.2f} median={row['median']:.2f}"


def differences(runs):
    """Rows whose figures are not identical in every run, as messages."""
    diffs = []
    for kind in ("ops", "segbench"):
        names = sorted(set().union(*(r[kind] for r in runs)))
        for name in names:
            rows = [r[kind].get(name) for r in runs]
            figs = [None if row is None else
                    {k: row.get(k) for k in ("min", "median", "na")}
                    for row in rows]
            if any(f != figs[0] for f in figs):
                shown = "; ".join(f"run {i + 1}: " +
                                  ("missing" if row is None else _figure(row))
                                  for i, row in enumerate(rows))
                diffs.append(f"{name}: {shown}")
    return diffs


# ------------------------------------------------------- the kernels

def read_config(path):
    """{CONFIG_X: value} of a built .config."""
    have = {}
    for line in Path(path).read_text().splitlines():
        m = re.match(r"^(CONFIG_\w+)=(.*)$", line)
        if m:
            have[m.group(1)] = m.group(2).strip('"')
    return have


def size_of(target, path):
    """(text, data, bss) of an ELF file, by binutils' size (Berkeley)."""
    tool = f"{target.arch.cross}size"
    out = subprocess.run([tool, str(path)], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    if out.returncode:
        raise StepFailed(f"{tool} {path} failed:\n{out.stdout}")
    text, data, bss = out.stdout.splitlines()[1].split()[:3]
    return {"text": int(text), "data": int(data), "bss": int(bss)}


def series_objects(target, pda_dir, mainline_dir):
    """{object: size} for each object file only the PDA build has."""
    objs = {}
    for obj in sorted(Path(pda_dir).rglob("*.o")):
        rel = obj.relative_to(pda_dir)
        if rel.name.endswith((".mod.o", "vmlinux.o")) or \
                rel.parts[0] in (".tmp_vmlinux", "scripts", "usr") or \
                (Path(mainline_dir) / rel).exists():
            continue
        objs[str(rel)] = size_of(target, obj)
    return objs


def build(target, src, label, unverified, timings,
          fragments=(BENCH_CONFIG,)):
    """label: the build directory and log directory under the cache."""
    start = time.monotonic()
    bdir = targetrun.kernel(target, src, label=label, unverified=unverified,
                            extra_fragments=fragments)
    timings.append((label, "configure + build", time.monotonic() - start))
    return bdir


def option_costs(target, tree, bench_pda_dir, timings):
    """[{option, on, off}]: `size vmlinux` with one option on and off, the
    same tree and configuration otherwise.  KUnit: make check's build
    (reused) against the bench kernel; UP NOSEG: the bench kernel against
    a build without it."""
    frags = [kbuild.CONFIGS / f"{f}.config" for f in target.fragments]
    want = kbuild.requested(frags)
    bench = size_of(target, Path(bench_pda_dir) / "vmlinux")
    costs = []
    if want.get("CONFIG_KUNIT") == "y":
        bdir = build(target, tree, target.name, (), timings, ())
        obj = Path(bdir) / "arch/x86/kernel/pda_kunit.o"
        costs.append({"option": "KUNIT, X86_PDA_USER_SEG_KUNIT_TEST "
                      "(make check's kernel)",
                      "on": size_of(target, Path(bdir) / "vmlinux"),
                      "off": bench,
                      "object": ["pda_kunit.o", size_of(target, obj)]
                      if obj.exists() else None})
    if want.get(benchreport.NOSEG) == "y":
        bdir = build(target, tree, f"bench-{target.name}-noseg-off", (),
                     timings, (BENCH_CONFIG, NOSEG_OFF_CONFIG))
        costs.append({"option": "X86_PDA_UP_NOSEG", "on": bench,
                      "off": size_of(target, Path(bdir) / "vmlinux"),
                      "object": None})
    for c in costs:
        c["target"] = target.name
    return costs


# ------------------------------------------------------ user space

def user_space(arch, tree):
    """/init, pda_bench and segbench for arch: only what the bench boots."""
    out = BUILD / f"bench-user-{arch.name}"
    log = reset_log(LOGS / f"bench-user-{arch.name}.log")
    with Phase(f"user-{arch.name}", "build init, pda_bench, segbench", log):
        init = guest.build_init(arch, tree, out, log)
        pda_bench = guest.build_pda_bench(arch, out, log)
        segbench = guest.build_segbench(arch, out / "segbench", log)
    return init, pda_bench, segbench


def bench_arch(target):
    """The user space a target's bench boots run: the native one."""
    return target.user_arch_64 or target.user_arch


def bench_args(target):
    """The kernel arguments of a target's bench boots."""
    return " ".join(filter(None, (BENCH_ARGS, target.arch.icount_args)))


def initramfs(target, tree, user, segbench32=None):
    """segbench32: the 32-bit segbench, also run (x86_64)."""
    arch = bench_arch(target)
    log = reset_log(LOGS / f"bench-{arch.name}.initramfs.log")
    init, pda_bench, segbench = (guest.stripped(exe, arch, log)
                                 for exe in user)
    cpio = BUILD / f"bench-{arch.name}.cpio"
    fs = guest.Initramfs(init)
    fs.add_test("pda_bench", pda_bench)
    for name, argv in GUEST_SEGBENCH.items():
        fs.add_test(name, segbench, argv)
    if segbench32:
        segbench32 = guest.stripped(segbench32, target.user_arch, log)
        for name, argv in GUEST_SEGBENCH.items():
            fs.add_test(name + COMPAT_BLOCK, segbench32, argv)
    fs.write(tree, cpio, log, mtime=CPIO_MTIME)
    return cpio


# ------------------------------------------------------------ boots

def boot_once(target, label, bdir, cpio, n):
    target = dataclasses.replace(target,
                                 cpus=target.icount_cpus or target.cpus)
    console = LOGS / label / f"bench-{n}.console.log"
    with Phase(label, f"bench boot {n}/{RUNS} (qemu -icount shift=0, "
               f"{target.cpus} CPUs)", console):
        outcome, rep = boot.icount(target, bdir, cpio, console, BOOT_TIMEOUT,
                                   bench_args(target), QEMU_ARGS)
    if outcome != boot.PASS:
        fail(f"[{label}] bench boot {n}: {boot.describe(outcome, rep)}",
             console)
    res = parse_console(console.read_text(errors="replace"))
    if res["failed"] or not res["ops"]:
        fail(f"[{label}] pda_bench failed: " +
             ("; ".join(res["failed"]) or "no figures"), console)
    bad = [name for name, row in res["ops"].items()
           if "na" not in row and row["unit"] != "insns"]
    if bad:
        fail(f"[{label}] not instruction counts (no -icount?): {bad}",
             console)
    res["console"] = str(console)
    return res


def boot_variant(target, label, bdir, cpio, timings):
    """Boot RUNS times; the figures must be identical every time."""
    runs = []
    for n in range(1, RUNS + 1):
        start = time.monotonic()
        runs.append(boot_once(target, label, bdir, cpio, n))
        timings.append((label, f"boot {n}", time.monotonic() - start))
    diffs = differences(runs)
    if diffs:
        raise StepFailed(
            f"[{label}] instruction counts differ between the {RUNS} "
            "boots:\n    " + "\n    ".join(diffs) + "\n  logs: " +
            ", ".join(r["console"] for r in runs))
    say(f"[{label}] {len(runs[0]['ops']) + len(runs[0]['segbench'])} "
        f"rows, identical in {RUNS} boots")
    return runs


# ------------------------------------------------------------ host

def host_segbench():
    """segbench natively: the i386 build, as tools/segbench/record.sh
    does, or the x86-64 build on a host that cannot run 32-bit programs
    (its rows that need 32-bit mode are then not measured)."""
    can, how = hostcaps.i386()
    arch = HOST_32 if can else HOST
    out = BUILD / "bench-host"
    log = reset_log(LOGS / "bench-host" / "segbench.log")
    say(f"[host] executes 32-bit x86 programs: {how}")
    with Phase("host", f"segbench, native {arch.name} (cycles)", log):
        exe = guest.build_segbench(arch, out / arch.name, log)
        res = out / "segbench.json"
        run([exe, "--json", "-o", res], log, what="segbench on the host")
    host = json.loads(res.read_text())
    host["build"] = arch.name
    if not can:
        host["not_measured"] = "needs 32-bit mode; this host cannot run " \
            f"32-bit x86 programs ({hostcaps.why_not()})"
    return host


# ------------------------------------------------------------ main

def _raise_failed_boot(variants):
    """Stop at the first failed boot rather than after every build."""
    for v in variants:
        fut = v.get("boots")
        if fut is not None and fut.done() and fut.exception():
            raise fut.exception()


def tlb_part(pristine, tree, unverified, timings, alone=False):
    return tlbbench.main(pristine, tree, unverified, timings, BENCH_ARGS,
                         QEMU_ARGS, CPIO_MTIME, BENCH_CONFIG, alone)


def census_part(pristine, tree, unverified, timings, only=None):
    return census.measure(
        pristine, tree, unverified, timings, build, guest.stripped,
        bench_args, QEMU_ARGS, CPIO_MTIME, guest.build_segbench,
        HOST_32 if hostcaps.i386()[0] else HOST, only)


def preload_part(tree, timings, only=None):
    return preloadbench.measure(
        tree, timings, build, guest.stripped, bench_args, QEMU_ARGS,
        CPIO_MTIME, (HOST,) + ((HOST_32,) if hostcaps.i386()[0] else ()),
        only)


def main(only=None):
    started = time.monotonic()
    with_tlb = not only or TLB_TARGET in only
    with_census = not only or CENSUS in only
    with_preload = not only or PRELOAD in only
    only = [t for t in only if t not in (TLB_TARGET, CENSUS, PRELOAD)] \
        if only else None
    pristine, tree = check.patched_tree()
    unverified = kbuild.series_options()
    timings = []
    if only == []:
        # --only arm64 / census: their results/ files and REPORT.md
        # sections alone.
        if with_tlb:
            tlb_part(pristine, tree, unverified, timings, alone=True)
        if with_census:
            state = census_part(pristine, tree, unverified, timings)
            for path in censusreport.write(REPO, state, alone=True):
                say(f"  wrote {path.relative_to(REPO)}")
        if with_preload:
            state = preload_part(tree, timings)
            for path in preloadbench.write(REPO, state, alone=True):
                say(f"  wrote {path.relative_to(REPO)}")
        return 0
    targets = [TARGETS[t] for t in only or BENCH_ORDER]
    version = source.kernel_version(pristine)
    start = time.monotonic()
    host = host_segbench()
    timings.append(("host", "segbench", time.monotonic() - start))
    variants, cpios = [], {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as boots:
        for target in targets:
            # One initramfs per arch, written once: a boot on the other
            # thread may be reading it.
            arch = bench_arch(target)
            if arch not in cpios:
                cpios[arch] = initramfs(
                    target, tree, user_space(arch, tree),
                    user_space(target.user_arch, tree)[2]
                    if target.user_arch_64 else None)
            cpio = cpios[arch]
            for kind, src, label, bdir_label in (
                    ("mainline", pristine, f"mainline-{target.name}",
                     f"mainline-{target.name}"),
                    ("pda", tree, target.name, f"bench-{target.name}")):
                bdir = build(target, src, bdir_label,
                             unverified if kind == "mainline" else (),
                             timings)
                v = {"label": label, "target": target.name, "kind": kind,
                     "source": f"Linux {version}" +
                     (" + PDA series" if kind == "pda" else ""),
                     "cpus": target.icount_cpus or target.cpus,
                     "cpus_why": BENCH_CPUS_WHY
                     if target.icount_cpus else "",
                     "arch": target.arch.name,
                     "bdir": bdir,
                     "config": read_config(Path(bdir) / ".config"),
                     "size": size_of(target, Path(bdir) / "vmlinux")}
                v["boots"] = boots.submit(boot_variant, target, label, bdir,
                                          cpio, timings)
                variants.append(v)
                _raise_failed_boot(variants)
        costs = []
        for target in targets:
            pda = next(v for v in variants
                       if v["target"] == target.name and v["kind"] == "pda")
            costs += option_costs(target, tree, pda["bdir"], timings)
            _raise_failed_boot(variants)
        for v in variants:
            v["runs"] = v.pop("boots").result()
    for target in targets:
        pair = {v["kind"]: v for v in variants if v["target"] == target.name}
        pair["pda"]["objects"] = series_objects(
            target, pair["pda"]["bdir"], pair["mainline"]["bdir"])
    tlbi = tlb_part(pristine, tree, unverified, timings) if with_tlb \
        else None
    census_only = [t for t in census.ORDER if not only or t in only]
    segcensus = census_part(pristine, tree, unverified, timings,
                            census_only) \
        if with_census and census_only else None
    preload_only = [t for t in preloadbench.ORDER if not only or t in only]
    getcpu = preload_part(tree, timings, preload_only) \
        if with_preload and preload_only else None
    state = {"variants": [{k: str(v) if k == "bdir" else v
                           for k, v in var.items()} for var in variants],
             "host": host, "series": sorted(unverified),
             "option_costs": costs, "tlbi": tlbi, "census": segcensus,
             "preload": getcpu,
             "minutes": (time.monotonic() - started) / 60,
             "partial": bool(only), "timings": timings}
    STATE.write_text(json.dumps(state, indent=1))
    return report(state)


def report(state=None):
    """Write results/ from a run's state (default: the last run's)."""
    state = state or json.loads(STATE.read_text())
    with Phase("report", "results/REPORT.md, JSON, plots, README"):
        written = benchreport.write(
            REPO, state["variants"], state["host"], set(state["series"]),
            state["minutes"], partial=state["partial"],
            timings=[tuple(t) for t in state["timings"]],
            option_costs=state.get("option_costs", []),
            tlbi=state.get("tlbi"), census=state.get("census"),
            preload=state.get("preload"))
    for path in written:
        say(f"  wrote {path.relative_to(REPO)}")
    say(f"bench: done in {state['minutes']:.1f} min")
    return 0
