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

from . import benchlib, censusreport, guest, hostcaps, ktap
from .arches import HOST, HOST_32
from .benchlib import QEMU_ARGS, RUNS, bench_args
from .ktap import test_blocks
from .paths import BUILD, LOGS, REPO
from .progress import Phase, StepFailed, fail, reset_log, run
from .targets import TARGETS

ORDER = tuple(n for n, t in TARGETS.items() if t.census)
PROGRAM = "seg_census"
# x86_64 also boots the 32-bit build: a legacy program on a 64-bit kernel.
COMPAT = "seg_census_32"
PREFIX = "seg-census: "
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
HOST_FILTERS = ("sel.mov.*", "sel.pushpop.*", "sel.kentry.*", "probe.*")


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


def initramfs(target, tree):
    """/init and the census program(s) for a target's user space."""
    arch = target.user_arch_64 or target.user_arch
    out = BUILD / f"census-user-{arch.name}"
    log = reset_log(LOGS / "census" / f"user-{arch.name}.log")
    with Phase("census", f"initramfs ({arch.name})", log):
        fs = benchlib.initramfs(arch, tree, out, log)
        exe = guest.build_bench_program(PROGRAM, arch, out, log)
        fs.add_test(PROGRAM, guest.stripped(exe, arch, log))
        if target.user_arch_64:
            exe = guest.build_bench_program(PROGRAM, target.user_arch,
                                            out / "32", log)
            fs.add_test(COMPAT, guest.stripped(exe, target.user_arch, log))
        return benchlib.write_initramfs(fs, tree,
                                        BUILD / f"census-{arch.name}.cpio",
                                        log)


def programs_of(target):
    """[(test name, bits)] in the order /init runs them (by name)."""
    if target.user_arch_64:
        return [(PROGRAM, 64), (COMPAT, 32)]
    return [(PROGRAM, 32)]


def kernel_base(target, bdir):
    if target.arch.bits == 64:
        return KERNEL_BASE_64, 64
    base = benchlib.read_config(Path(bdir) / ".config").get(
        "CONFIG_PAGE_OFFSET", "")
    if not re.fullmatch(r"0x[0-9a-fA-F]+", base):
        raise StepFailed(f"{bdir}/.config has no CONFIG_PAGE_OFFSET")
    return int(base, 16), 32


# ------------------------------------------------------------ boots

def boot_once(target, label, bdir, cpio, n, so):
    console = LOGS / label / f"census-{n}.console.log"
    windows = LOGS / label / f"census-{n}.windows.txt"
    base, bits = kernel_base(target, bdir)
    text = benchlib.icount_boot(
        target, label, bdir, cpio, console,
        f"census boot {n}/{RUNS} with segcensus",
        QEMU_ARGS + ("-plugin", f"{so},out={windows},kernel={base:#x},"
                     f"bits={bits}"))
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


def boot_variant(target, label, bdir, cpio, so, timings):
    return benchlib.boot_until_identical(
        label, "census boot",
        lambda n: boot_once(target, label, bdir, cpio, n, so), differences,
        timings, f"{LOGS / label}/census-*.windows.txt")[0]


# ------------------------------------------------------------ host

def host_costs(arch):
    """segbench's selector-load and probe rows, natively, of @arch's
    build: {row: {min, median}} cycles, and the machine."""
    out = BUILD / "census-host"
    log = reset_log(LOGS / "census" / "host-segbench.log")
    rows, machine = {}, {}
    with Phase("census", f"host segbench ({arch.name}): selector loads, "
               "iret, probes", log):
        exe = guest.build_segbench(arch, out / arch.name, log)
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

def measure(pristine, tree, unverified, timings, names):
    """make bench's kernels of @names, booted as make bench boots them,
    and segbench on the host: its i386 build where the host runs it."""
    started = time.monotonic()
    so = plugin()
    cpios, variants = {}, []
    for name in names:
        target = TARGETS[name]
        arch = target.user_arch_64 or target.user_arch
        if arch not in cpios:
            cpios[arch] = initramfs(target, tree)
        for k in benchlib.kernel_pair(name, pristine, tree, unverified):
            bdir = benchlib.build(target, k.src, k.build_label,
                                  k.unverified, timings)
            config = benchlib.read_config(Path(bdir) / ".config")
            census = boot_variant(target, k.label, bdir, cpios[arch], so,
                                  timings)
            for prog, bits in programs_of(target):
                check_paths(f"[{k.label}] {prog}", census[prog],
                            *required_paths(bits, k.kind == "pda",
                                            target.cpus))
            variants.append({
                "label": k.label, "target": name, "kind": k.kind,
                "cpus": target.cpus,
                "up_noseg": config.get("CONFIG_X86_PDA_UP_NOSEG") == "y",
                "smp": config.get("CONFIG_SMP") == "y",
                "census": census})
    start = time.monotonic()
    host = host_costs(HOST_32 if hostcaps.i386()[0] else HOST)
    timings.append(("host", "census segbench", time.monotonic() - start))
    state = {"variants": variants, "host": host, "runs": RUNS,
             "qemu_args": list(QEMU_ARGS),
             # One architecture's kernels, one command line.
             "bench_args": bench_args(TARGETS[names[0]]),
             "minutes": (time.monotonic() - started) / 60}
    STATE.write_text(json.dumps(state, indent=1))
    return state


PART = benchlib.BenchPart(
    name="census", key="census", targets=ORDER, measure=measure,
    write=censusreport.write, section=censusreport.section,
    markers=(censusreport.SECTION_BEGIN, censusreport.SECTION_END))
