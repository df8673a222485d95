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
import json
import time
from pathlib import Path

from . import benchlib, benchparts, benchreport, check, guest, hostcaps, \
    kbuild, ktap, source
from .arches import HOST, HOST_32
from .benchlib import BENCH_CONFIG, RUNS, build, size_of
from .guestout import parse_bench_lines
from .ktap import test_blocks
from .paths import BUILD, LOGS, REPO
from .progress import Phase, fail, reset_log, run, say
from .targets import TARGETS

BENCH_ORDER = tuple(n for n, t in TARGETS.items() if t.bench)
# What `--only` takes: these targets, and the parts after them (arm64's
# TLB invalidation, the segment census, the preload library), each of
# which alone runs that part only.
ONLY_CHOICES = BENCH_ORDER + tuple(p.name for p in benchparts.PARTS)
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

def bench_arch(target):
    """The user space a target's bench boots run: the native one."""
    return target.user_arch_64 or target.user_arch


def initramfs(target, tree):
    """/init, pda_bench and segbench of the target's native user space;
    on x86_64 the 32-bit segbench too."""
    arch = bench_arch(target)
    out = BUILD / f"bench-user-{arch.name}"
    log = reset_log(LOGS / f"bench-user-{arch.name}.log")
    with Phase(f"user-{arch.name}", "initramfs: init, pda_bench, segbench",
               log):
        fs = benchlib.initramfs(arch, tree, out, log)
        fs.add_test("pda_bench", guest.stripped(
            guest.build_pda_bench(arch, out, log), arch, log))
        segbench = guest.stripped(guest.build_segbench(
            arch, out / "segbench", log), arch, log)
        for name, argv in GUEST_SEGBENCH.items():
            fs.add_test(name, segbench, argv)
        if target.user_arch_64:
            arch32 = target.user_arch
            segbench32 = guest.stripped(guest.build_segbench(
                arch32, BUILD / f"bench-user-{arch32.name}" / "segbench",
                log), arch32, log)
            for name, argv in GUEST_SEGBENCH.items():
                fs.add_test(name + COMPAT_BLOCK, segbench32, argv)
        return benchlib.write_initramfs(fs, tree,
                                        BUILD / f"bench-{arch.name}.cpio",
                                        log)


# ------------------------------------------------------------ boots

def boot_once(target, label, bdir, cpio, n):
    console = LOGS / label / f"bench-{n}.console.log"
    res = parse_console(benchlib.icount_boot(target, label, bdir, cpio,
                                             console,
                                             f"bench boot {n}/{RUNS}"))
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
    return benchlib.boot_until_identical(
        label, "boot", lambda n: boot_once(target, label, bdir, cpio, n),
        differences, timings, f"{LOGS / label}/bench-*.console.log")


# ------------------------------------------------------------ host

def host_segbench(args=(), where="bench-host"):
    """segbench natively: the i386 build, as tools/segbench/record.sh
    does, or the x86-64 build on a host that cannot run 32-bit programs
    (its rows that need 32-bit mode are then not measured).  @args: more
    of segbench's arguments (make run's --filter); @where: the build and
    log directory's name.  The JSON, with "build" and "log" added."""
    can, how = hostcaps.i386()
    arch = HOST_32 if can else HOST
    out = BUILD / where
    log = reset_log(LOGS / where / "segbench.log")
    what = " ".join(("segbench",) + tuple(args))
    say(f"[host] executes 32-bit x86 programs: {how}")
    with Phase("host", f"{what}, native {arch.name} (cycles)", log):
        exe = guest.build_segbench(arch, out / arch.name, log)
        res = out / "segbench.json"
        run([exe, *args, "--json", "-o", res], log,
            what=f"{what} on the host")
    host = json.loads(res.read_text())
    host["build"] = arch.name
    host["log"] = str(log)
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


def main(only=None):
    started = time.monotonic()
    parts = [p for p in benchparts.PARTS if not only or p.name in only]
    names = [t for t in only if t in BENCH_ORDER] if only else \
        list(BENCH_ORDER)
    pristine, tree = check.patched_tree()
    unverified = kbuild.series_options()
    timings = []
    if not names:
        # --only with parts alone: their results/ files and REPORT.md
        # sections alone.
        for part in parts:
            state = part.measure(pristine, tree, unverified, timings,
                                 part.targets)
            written = part.write(REPO, state, readme=True)
            written.append(benchlib.replace_section(
                REPO, part.markers, part.section(state, REPO)))
            for path in written:
                say(f"  wrote {path.relative_to(REPO)}")
        return 0
    targets = [TARGETS[t] for t in names]
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
                cpios[arch] = initramfs(target, tree)
            for k in benchlib.kernel_pair(target.name, pristine, tree,
                                          unverified):
                bdir = build(target, k.src, k.build_label, k.unverified,
                             timings)
                v = {"label": k.label, "target": target.name,
                     "kind": k.kind,
                     "source": f"Linux {version}" +
                     (" + PDA series" if k.kind == "pda" else ""),
                     "cpus": target.icount_cpus or target.cpus,
                     "cpus_why": BENCH_CPUS_WHY
                     if target.icount_cpus else "",
                     "arch": target.arch.name,
                     "bdir": bdir,
                     "config": benchlib.read_config(Path(bdir) / ".config"),
                     "size": size_of(target, Path(bdir) / "vmlinux")}
                v["boots"] = boots.submit(boot_variant, target, k.label,
                                          bdir, cpios[arch], timings)
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
    states = {}
    for part in benchparts.PARTS:
        # A part's targets narrowed to those given; one with none of them
        # does not run.
        mine = part.targets if not only or part.targets is None else \
            tuple(t for t in part.targets if t in names)
        states[part.key] = part.measure(pristine, tree, unverified, timings,
                                        mine) \
            if part in parts and mine != () else None
    state = {"variants": [{k: str(v) if k == "bdir" else v
                           for k, v in var.items()} for var in variants],
             "host": host, "series": sorted(unverified),
             "option_costs": costs, **states,
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
            parts={p.key: state.get(p.key) for p in benchparts.PARTS})
    for path in written:
        say(f"  wrote {path.relative_to(REPO)}")
    say(f"bench: done in {state['minutes']:.1f} min")
    return 0
