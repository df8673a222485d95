# SPDX-License-Identifier: GPL-2.0
"""make bench, the segment census: how many segment-register operations
each kernel path performs, mainline against PDA.

Kernels: make bench's own (`mainline-<target>` and `bench-<target>`,
configs/bench.config on top of each target's fragments), on i386-smp,
i386-up (X86_PDA_UP_NOSEG) and x86_64.  Guest: tests/bench/seg_census.c
(x86_64 boots its 64-bit and its 32-bit build).  QEMU: make bench's
-icount boot plus tools/segcensus's plugin, which counts every executed
instruction that writes a segment register, in windows the guest opens
and closes around each path.  Each kernel boots RUNS times; every window
of every path must come out identical, or the run fails naming it.

The host's segbench gives the cycles of each kind of operation;
censusreport.py turns counts and cycles into the report's estimate.
"""

import json
import re
import time
from pathlib import Path

from . import boot, guest, ktap
from .ktap import test_blocks
from .paths import BUILD, LOGS, REPO
from .progress import Phase, StepFailed, fail, reset_log, run, say
from .targets import TARGETS

ORDER = tuple(n for n, t in TARGETS.items() if t.census)
PROGRAM = "seg_census"
# x86_64 also boots the 32-bit build: a legacy program on a 64-bit kernel.
COMPAT = "seg_census_32"
PREFIX = "seg-census: "
RUNS = 2
BOOT_TIMEOUT = 900
# Where kernel code starts: a 32-bit kernel reads CONFIG_PAGE_OFFSET from
# .config; x86-64 user space ends below the canonical hole.
KERNEL_BASE_64 = 0xffff800000000000
PLUGIN_DIR = BUILD / "segcensus"
STATE = BUILD / "census-state.json"
# Paths whose windows count only with a kernel entry in them: the guest
# ends an "irq" window at a jump of the TSC, which is also what another
# vCPU's turn looks like (its window then holds no entry).
NEED_ENTRY = {"irq"}
# The window whose answer is known: "ops" loads of the user data selector
# (%ss's) and as many of the null selector into the PDA register; checked,
# then dropped.
KNOWN = "known"
# segbench rows the estimate needs, run natively on the host.
HOST_FILTERS = ("sel.mov.*", "sel.pushpop.*", "probe.*")


# ------------------------------------------------------------ parsing

def parse_windows(text):
    """The plugin's file -> [{"id", "seq", "bits", "counts"}]; errors
    raise."""
    windows = []
    for line in text.splitlines():
        if line.startswith("census error"):
            raise StepFailed(f"segcensus: {line}")
        if not line.startswith("census "):
            continue
        fields = dict(f.split("=", 1) for f in line.split()[1:])
        w = {k: int(fields.pop(k)) for k in ("id", "seq", "bits")}
        w["scope"] = fields.pop("scope")
        w["counts"] = {k: int(v) for k, v in fields.items()}
        windows.append(w)
    return windows


def parse_paths(lines):
    """A program's console lines -> {id: {"name", "ops"} or {"name",
    "na"}}, and whether it said "done"."""
    paths, done = {}, False
    for line in lines:
        if not line.startswith(PREFIX):
            continue
        rest = line[len(PREFIX):]
        if rest == "done":
            done = True
            continue
        m = re.match(r"path (\d+) (\S+) (?:ops=(\d+)|n/a (.*))$", rest)
        if not m:
            raise StepFailed(f"seg_census: unreadable line {line!r}")
        paths[int(m.group(1))] = {"name": m.group(2)} | (
            {"ops": int(m.group(3))} if m.group(3) else {"na": m.group(4)})
    return paths, done


def assign(windows, programs):
    """Join windows to paths.  programs: [(name, bits, paths)], in the
    order they ran; a program's windows are the ones its bits opened.
    The first window of each path is the warm-up and is dropped."""
    out = {}
    for name, bits, paths in programs:
        mine = [w for w in windows if w["bits"] == bits]
        res = {}
        for pid, p in paths.items():
            ws = [w["counts"] for w in mine if w["id"] == pid]
            if "na" in p:
                if ws:
                    raise StepFailed(f"{name}: {p['name']} is n/a but "
                                     "opened windows")
                res[p["name"]] = {"na": p["na"]}
                continue
            ws = ws[1:]
            if p["name"] in NEED_ENTRY:
                ws = [w for w in ws if w["entries"]]
            if not ws:
                raise StepFailed(f"{name}: {p['name']}: no windows")
            res[p["name"]] = {"ops": p["ops"], "windows": ws}
        out[name] = res
    return out


def check_known(name, bits, res):
    """Each window of the known path counted exactly its loads, and no
    other user-mode segment write: else the plugin miscounts, and every
    figure of the census with it.  Returns @res without the path."""
    path = res.pop(KNOWN, None)
    if path is None or "na" in path:
        raise StepFailed(f"{name}: no {KNOWN} window")
    reg = "gs" if bits == 64 else "fs"
    want = {f"u.mov.{reg}.sel": path["ops"], f"u.mov.{reg}.null": path["ops"]}
    for w in path["windows"]:
        got = {k: v for k, v in w.items()
               if k.startswith("u.") and k != "u.insns"}
        if got != want:
            raise StepFailed(f"{name}: the {KNOWN} window counted {got}, "
                             f"not {want}: the plugin miscounts")
    return res


def required_paths(bits, pda_kernel, cpus):
    """(paths that must have run, paths that must be n/a) of a program of
    @bits on a kernel: a missing path would leave its row out silently."""
    syscalls = ("sys.int80", "sys.vsyscall") if bits == 32 else \
        ("sys.syscall",)
    must = {"empty", "fault.anon", "ctxsw.same", "signal", "irq",
            *syscalls} | ({"migrate"} if cpus > 1 else set())
    pda = {f"{p}.pda" for p in syscalls + ("ctxsw.same",)}
    return (must | pda, set()) if pda_kernel else (must, pda)


def check_paths(name, res, must, never):
    """Fails naming the paths of @must that did not run and those of
    @never that did."""
    ran = {p for p, v in res.items() if "na" not in v}
    missing, extra = sorted(must - ran), sorted(never & ran)
    if missing or extra:
        raise StepFailed(f"{name}: paths that must run but did not: "
                         f"{missing or 'none'}; that must not: "
                         f"{extra or 'none'}")


def differences(runs):
    """Paths whose windows are not identical in every boot."""
    diffs = []
    for prog in runs[0]:
        for name in runs[0][prog]:
            got = [r.get(prog, {}).get(name) for r in runs]
            if any(g != got[0] for g in got):
                diffs.append(f"{prog} {name}")
    return diffs


# ------------------------------------------------------- building

def plugin():
    log = reset_log(LOGS / "census" / "plugin.log")
    with Phase("census", "build the QEMU plugin (tools/segcensus)", log):
        run(["make", "-C", REPO / "tools/segcensus", f"O={PLUGIN_DIR}",
             PLUGIN_DIR / "segcensus.so"], log, what="segcensus.so")
    return PLUGIN_DIR / "segcensus.so"


def initramfs(target, tree, cpio_mtime, strip):
    """/init and the census program(s) for a target's user space."""
    arch = target.user_arch_64 or target.user_arch
    out = BUILD / f"census-user-{arch.name}"
    log = reset_log(LOGS / "census" / f"user-{arch.name}.log")
    with Phase("census", f"initramfs ({arch.name})", log):
        init = guest.build_init(arch, tree, out, log)
        fs = guest.Initramfs(strip(init, arch, log))
        exe = guest.build_bench_program(PROGRAM, arch, out, log)
        fs.add_test(PROGRAM, strip(exe, arch, log))
        if target.user_arch_64:
            exe = guest.build_bench_program(PROGRAM, target.user_arch,
                                            out / "32", log)
            fs.add_test(COMPAT, strip(exe, target.user_arch, log))
        cpio = BUILD / f"census-{arch.name}.cpio"
        fs.write(tree, cpio, log, mtime=cpio_mtime)
    return cpio


def programs_of(target):
    """[(test name, bits)] in the order /init runs them (by name)."""
    if target.user_arch_64:
        return [(PROGRAM, 64), (COMPAT, 32)]
    return [(PROGRAM, 32)]


def kernel_base(target, bdir):
    if target.arch.bits == 64:
        return KERNEL_BASE_64, 64
    cfg = (Path(bdir) / ".config").read_text()
    m = re.search(r"^CONFIG_PAGE_OFFSET=(0x[0-9a-fA-F]+)$", cfg, re.M)
    if not m:
        raise StepFailed(f"{bdir}/.config has no CONFIG_PAGE_OFFSET")
    return int(m.group(1), 16), 32


# ------------------------------------------------------------ boots

def boot_once(target, label, bdir, cpio, n, so, bench_args, qemu_args):
    console = LOGS / label / f"census-{n}.console.log"
    windows = LOGS / label / f"census-{n}.windows.txt"
    base, bits = kernel_base(target, bdir)
    with Phase(label, f"census boot {n}/{RUNS} (qemu -icount shift=0 "
               f"+ segcensus, {target.cpus} CPUs)", console):
        outcome, rep = boot.icount(
            target, bdir, cpio, console, BOOT_TIMEOUT, bench_args,
            tuple(qemu_args) + (
                "-plugin", f"{so},out={windows},kernel={base:#x},"
                f"bits={bits}"))
    if outcome != boot.PASS:
        fail(f"[{label}] census boot {n}: {boot.describe(outcome, rep)}",
             console)
    text = console.read_text(errors="replace")
    blocks = test_blocks(text)
    progs = []
    for name, pbits in programs_of(target):
        paths, done = parse_paths(blocks.get(name, []))
        if not done:
            fail(f"[{label}] {name} did not finish", console)
        progs.append((name, pbits, paths))
    verdicts = {r.name: r.status for r in ktap.parse_console(text).results}
    bad = [k for k, v in verdicts.items() if v != "pass"]
    if bad:
        fail(f"[{label}] census boot {n}: {bad} failed", console)
    try:
        res = assign(parse_windows(windows.read_text()), progs)
        for name, pbits, _ in progs:
            check_known(name, pbits, res[name])
        return res
    except StepFailed as e:
        fail(f"[{label}] {e}", windows)


def boot_variant(target, label, bdir, cpio, so, bench_args, qemu_args,
                 timings):
    runs = []
    for n in range(1, RUNS + 1):
        start = time.monotonic()
        runs.append(boot_once(target, label, bdir, cpio, n, so, bench_args,
                              qemu_args))
        timings.append((label, f"census boot {n}", time.monotonic() - start))
    diffs = differences(runs)
    if diffs:
        raise StepFailed(f"[{label}] census windows differ between the "
                         f"{RUNS} boots: {', '.join(diffs)}\n  logs: "
                         f"{LOGS / label}/census-*.windows.txt")
    say(f"[{label}] census: {sum(len(p) for p in runs[0].values())} paths,"
        f" identical in {RUNS} boots")
    return runs[0]


# ------------------------------------------------------------ host

def host_costs(build_segbench, arch):
    """segbench's selector-load and probe rows, natively, of @arch's
    build: {row: {min, median}} cycles, and the machine."""
    out = BUILD / "census-host"
    log = reset_log(LOGS / "census" / "host-segbench.log")
    rows, machine = {}, {}
    with Phase("census", f"host segbench ({arch.name}): selector loads, "
               "iret, probes", log):
        exe = build_segbench(arch, out / arch.name, log)
        for pat in HOST_FILTERS:
            res = out / f"{pat.strip('.*')}.json"
            run([exe, "--filter", pat, "--json", "-o", res], log,
                what=f"segbench --filter {pat}")
            data = json.loads(res.read_text())
            machine = data["machine"]
            for r in data["results"]:
                if r["status"] == "ok":
                    rows[r["name"]] = {"min": r["min_cycles"],
                                       "median": r["median_cycles"]}
    return {"build": arch.name, "machine": machine, "rows": rows}


# ------------------------------------------------------------ main

def measure(pristine, tree, unverified, timings, build, strip, bench_args,
            qemu_args, cpio_mtime, build_segbench, host_arch, only=None):
    """build(target, src, label, unverified, timings) -> build dir and
    bench_args(target) -> kernel arguments: bench.py's, so the census
    boots make bench's kernels as make bench does; host_arch: the
    segbench build to run on the host."""
    started = time.monotonic()
    so = plugin()
    cpios, variants = {}, []
    names = only or ORDER
    for name in names:
        target = TARGETS[name]
        arch = target.user_arch_64 or target.user_arch
        if arch not in cpios:
            cpios[arch] = initramfs(target, tree, cpio_mtime, strip)
        for kind, src, label, bdir_label in (
                ("mainline", pristine, f"mainline-{name}",
                 f"mainline-{name}"),
                ("pda", tree, name, f"bench-{name}")):
            bdir = build(target, src, bdir_label,
                         unverified if kind == "mainline" else (), timings)
            cfg = (Path(bdir) / ".config").read_text()
            census = boot_variant(target, label, bdir, cpios[arch], so,
                                  bench_args(target), qemu_args, timings)
            for prog, bits in programs_of(target):
                check_paths(f"[{label}] {prog}", census[prog],
                            *required_paths(bits, kind == "pda",
                                            target.cpus))
            variants.append({
                "label": label, "target": name, "kind": kind,
                "cpus": target.cpus,
                "up_noseg": "CONFIG_X86_PDA_UP_NOSEG=y" in cfg,
                "smp": "CONFIG_SMP=y" in cfg,
                "census": census})
    start = time.monotonic()
    host = host_costs(build_segbench, host_arch)
    timings.append(("host", "census segbench", time.monotonic() - start))
    state = {"variants": variants, "host": host, "runs": RUNS,
             "qemu_args": list(qemu_args),
             # One architecture's kernels, one command line.
             "bench_args": bench_args(TARGETS[names[0]]),
             "minutes": (time.monotonic() - started) / 60}
    STATE.write_text(json.dumps(state, indent=1))
    return state
