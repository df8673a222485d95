# SPDX-License-Identifier: GPL-2.0
"""make scale: every SMP kernel kind with the most CPUs it and QEMU take.

Each kind's scale target (targets.py: its kernel with
configs/scale-ARCH.config, booted with its arch record's scale_cpus on
scale_machine) runs PROGRAMS: one thread pinned to every online CPU at
once checking each CPU-number method, the per-CPU counters under
migration and, on arm64 with tlbi_local on and off, the TLB tests with
the mm spread over every CPU.  The kernel log
must stay clean, as in every boot.  Writes results/SCALE.md from each
kind's latest run (state in ~/.cache/pda/scale/).
"""

import dataclasses
import json
import re
import time

from . import benchlib, check, fullstate, guest, kbuild, ktap, reliability, \
    targetrun
from .guestout import parse_bench_lines
from .paths import BUILD, CACHE, LOGS, REPO
from .progress import StepFailed, fail, reset_log, say
from .targets import SCALE_BASES, TARGETS

STATE = CACHE / "scale"
REPORT = REPO / "results/SCALE.md"
COST_KINDS = tuple(f"{n}-scale" for n in SCALE_BASES)
KINDS = COST_KINDS + ("arm64-scale-tlbi-off",)
# What a scale boot runs, by program name (a 64-bit build's NAME_64 too).
# Not the hotplug tests: mainline 6.12 itself warns under them at this
# size.  hotplug_churn on arm at 32 CPUs drew "Dying CPU not properly
# vacated!" from sched_cpu_dying() ten times on make bench's mainline
# kernel and six on the PDA one, with 0 mismatches on both
# (x86_pda_hotplug needs the segment, so only hotplug_churn was
# compared); and each offline is a stop_machine() waiting for every vCPU
# (at 32 CPUs a CPU takes 7 to 10 s to go and 1 to 3 s to come back,
# against milliseconds at 4).
PROGRAMS = ("cpu_agree", "cpu_agree_all_at_once", "x86_pda_descriptor",
            "x86_pda_counter", "x86_pda_migration_storm",
            "getcpu_cache_migration", "tlb_mprotect", "tlb_madv_dontneed",
            "tlb_migrate")
# Hundreds of vCPUs on a host's few threads: a vCPU may wait long for its
# turn, which RCU's default 21 s would report as a stall.
ARGS = "rcupdate.rcu_cpu_stall_timeout=300"
TIMEOUT = 5400


# The cost boots: make bench's kernel pair (mainline 6.12 and PDA, the
# same config, here with the scale fragment) booted at COST_CPUS and at
# the maximum with tests/bench/kernel_memory and, where -icount runs SMP
# guests (x86: bench.BENCH_CPUS_WHY), pda_bench under -icount.
COST_CPUS = 4
# The meminfo figures whose growth per CPU the report shows.
PER_CPU_KEYS = ("Percpu_kB", "KernelStack_kB", "Slab_kB", "used_kB")
# pda_bench's rows on both kernels may differ in the series' excess
# between COST_CPUS and the maximum by this share of mainline's figure at
# the maximum, plus the widest spread (median less min) of the row's four
# figures: single -icount boots of the same kernel move a switch by up to
# 0.8 % (i386, 4 and 64 CPUs), and a migration's repetitions spread by up
# to 6 % within one boot, from what else the guest's scheduler has to
# look at, not from the series.
FLAT_SHARE = 0.02
MEM_LINE = re.compile(r"# pda-mem: (\w+)=(\d+)")


def kernel_args(target):
    return f"{ARGS} {target.arch.scale_args}".strip()


def keeps(prog):
    return prog.removesuffix("_64") in PROGRAMS


def needs(name):
    """The programs a kind's boot must find built: x86_* on x86 user
    space, tlb_* where the base kind's soak runs the TLB tests (arm64)."""
    base = TARGETS[name.removesuffix("-tlbi-off").removesuffix("-scale")]
    x86 = base.user_arch.family == "x86"
    tlb = bool(base.soak and base.soak.tlb)
    return tuple(p for p in PROGRAMS
                 if (x86 or not p.startswith("x86_")) and
                 (tlb or not p.startswith("tlb_")))


def run_kind(name, tree, args):
    target = TARGETS[name]
    started = time.monotonic()
    label, outcome, rep, where = targetrun.boot_chosen(
        name, name, tree, f"{args} {kernel_args(target)}", keeps,
        timeout=TIMEOUT,
        test_timeout=TIMEOUT // 2, need=needs(name))
    minutes = (time.monotonic() - started) / 60
    write_state(target, outcome, rep, minutes)
    return label, outcome, rep, where


def cost_initramfs(target, tree):
    """/init, kernel_memory and, under -icount, pda_bench: static, of the
    kernel's own architecture."""
    arch = target.user_arch_64 or target.user_arch
    out = BUILD / f"scale-user-{arch.name}"
    log = reset_log(LOGS / f"scale-user-{arch.name}.log")
    fs = benchlib.initramfs(arch, tree, out, log)
    fs.add_test("kernel_memory", guest.stripped(
        guest.build_bench_program("kernel_memory", arch, out, log), arch,
        log))
    if not target.icount_cpus:
        fs.add_test("pda_bench", guest.stripped(
            guest.build_pda_bench(arch, out, log), arch, log))
    return benchlib.write_initramfs(fs, tree, out / "cost.cpio", log)


def cost_boot(target, label, bdir, cpio, cpus):
    """{"mem": {KEY: N}, "ops": pda_bench's rows}: one boot at @cpus,
    under -icount where SMP guests run there, else TCG (no time figures
    then)."""
    t = dataclasses.replace(target, cpus=cpus, icount_cpus=0)
    console = LOGS / label / f"cost-{cpus}.console.log"
    what = f"cost boot, {cpus} CPUs"
    if target.icount_cpus:
        outcome, rep, console, _ = targetrun.boot_qemu(
            t, bdir, cpio, TIMEOUT, label=f"{label}-cost-{cpus}",
            extra_args=kernel_args(target))
        if outcome != "pass":
            fail(f"[{label}] {what}: {outcome}", console)
        text = console.read_text(errors="replace")
    else:
        text = benchlib.icount_boot(t, label, bdir, cpio, console, what)
    mem = {k: int(v) for k, v in MEM_LINE.findall(text)}
    ops = parse_bench_lines(ktap.test_blocks(text).get("pda_bench", []))
    if mem.get("cpus_online") != cpus:
        fail(f"[{label}] {what}: kernel_memory saw "
             f"{mem.get('cpus_online')} CPUs", console)
    return {"mem": mem, "ops": ops["ops"], "icount": not target.icount_cpus,
            "console": str(console)}


def costs(name, pristine, tree):
    """Both kernels of make bench's pair, with the scale config, each at
    COST_CPUS and at the maximum: what the series adds per CPU."""
    target = TARGETS[name]
    cpio = cost_initramfs(target, tree)
    out = {}
    for k in benchlib.kernel_pair(name, pristine, tree,
                                  kbuild.series_options()):
        bdir = benchlib.build(target, k.src, k.build_label, k.unverified,
                              [])
        out[k.kind] = {str(n): cost_boot(target, k.label, bdir, cpio, n)
                       for n in (COST_CPUS, target.cpus)}
    return out


def series_per_cpu(c, key):
    """What the series adds per CPU to meminfo's @key (kB), in bytes: the
    PDA kernel's excess over mainline at the maximum, less that at
    COST_CPUS, over the CPUs between; None if a figure is missing."""
    hi = max(c["pda"], key=int)
    lo = str(COST_CPUS)
    try:
        excess = [c["pda"][n]["mem"][key] - c["mainline"][n]["mem"][key]
                  for n in (lo, hi)]
    except KeyError:
        return None
    return (excess[1] - excess[0]) * 1024 / (int(hi) - COST_CPUS)


def flat_results(c):
    """What "the costs do not grow" means, as results: the series adds no
    per-CPU area (its Percpu excess over mainline is the same at COST_CPUS
    and at the maximum), and each pda_bench row both kernels have shows
    the series' excess the same at both counts, within FLAT_SHARE of
    mainline's figure plus the row's widest spread (median less min)."""
    hi, lo = str(max(map(int, c["pda"]))), str(COST_CPUS)
    if hi == lo or any(n not in c[k] for k in ("mainline", "pda")
                       for n in (lo, hi)):
        return [ktap.Result("cost:flat", "fail",
                            f"boots at {lo} and above missing on a kernel")]
    per = series_per_cpu(c, "Percpu_kB")
    out = [ktap.Result("cost:percpu_flat", "pass" if per == 0 else "fail",
                       "a Percpu figure missing" if per is None else
                       f"the series adds {round(per)} bytes of Percpu "
                       "per CPU")]
    for op in sorted(c["pda"][hi]["ops"]):
        rows = [c[k][n]["ops"].get(op, {})
                for k in ("mainline", "pda") for n in (lo, hi)]
        if any("median" not in r for r in rows):
            continue
        main_lo, main_hi, pda_lo, pda_hi = (r["median"] for r in rows)
        growth = (pda_hi - main_hi) - (pda_lo - main_lo)
        bound = FLAT_SHARE * main_hi + max(r["median"] - r["min"]
                                           for r in rows)
        out.append(ktap.Result(
            f"cost:{op}_flat", "pass" if abs(growth) <= bound else "fail",
            f"series excess {round(pda_lo - main_lo):+d} at {lo} CPUs, "
            f"{round(pda_hi - main_hi):+d} at {hi}; bound {bound:.0f}"))
    return out


def used_kb(mem):
    return mem["MemTotal_kB"] - mem["MemFree_kB"]


def cost_row(name, pristine, tree):
    """make check-full's row of a kind's costs, kept in its state."""
    target = TARGETS[name]
    started = time.monotonic()
    c = costs(name, pristine, tree)
    for kind in c.values():
        for boot_ in kind.values():
            boot_["mem"]["used_kB"] = used_kb(boot_["mem"])
    results = [ktap.Result(f"cost:{kind}_{n}_cpus", "pass",
                           boot_["console"])
               for kind, by_n in c.items() for n, boot_ in by_n.items()]
    flat = flat_results(c)
    results += flat
    state = load_state(name)
    state["costs"] = c
    state["cost_results"] = [[r.name, r.status, r.detail] for r in flat]
    state["costs_minutes"] = round((time.monotonic() - started) / 60, 1)
    state["costs_commit"] = fullstate.commit()
    save_state(name, state)
    outcome = "fail" if any(r.status == "fail" for r in results) else "pass"
    return (f"{name}-cost", outcome, ktap.Report(results, len(results), True),
            f"{COST_CPUS} and {target.cpus} CPUs, "
            f"{LOGS / ('bench-' + name)}")


def load_state(name):
    path = STATE / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else {}


def save_state(name, state):
    STATE.mkdir(parents=True, exist_ok=True)
    (STATE / f"{name}.json").write_text(json.dumps(state, indent=1) + "\n")


def write_state(target, outcome, rep, minutes):
    results = rep.results if rep else []
    state = load_state(target.name)
    state.update({
        "kind": target.name, "cpus": target.cpus,
        "machine": target.machine, "outcome": outcome,
        "commit": fullstate.commit(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "host": reliability.machine(),
        "minutes": round(minutes, 1),
        "results": [[r.name, r.status, r.detail] for r in results],
    })
    save_state(target.name, state)


def runs(pristine, tree, args, names=None):
    """[(label, run)]: each kind's tests, then each kind's costs."""
    return [(n, lambda n=n: run_kind(n, tree, args))
            for n in KINDS if not names or n in names] + \
        [(f"{n}-cost", lambda n=n: cost_row(n, pristine, tree))
         for n in COST_KINDS if not names or n in names]


def main(names=None, seed=None):
    started = time.monotonic()
    args = check.seed_args(seed)
    pristine, tree = check.patched_tree()
    out = []
    for label, run in runs(pristine, tree, args, names):
        try:
            out.append(run())
        except (StepFailed, OSError) as e:
            say(f"ERROR [{label}]: {e}")
            out.append((label, "build-failed", None,
                        (str(e).splitlines() or ["?"])[0]))
    write_report()
    return check.summary(out, started)


HEAD = """\
# The largest machines (`make scale`)

Written by `make scale` (`make check-full PART=scale`) from each kind's
latest run.  Each kind's PDA kernel with `configs/scale-ARCH.config`,
booted in QEMU 7.2 (TCG) with the most CPUs it and QEMU take together;
the limit column says which of the two binds.  The tests: {programs}
(those of the kind's architecture), with `{args}` (and on x86 `{x86_args}`); a test's name with
`_64` is the 64-bit build on x86_64.  The kernel log of every boot must
hold no splat.

Costs: make bench's two kernels (mainline 6.12 and PDA, the same config
with the scale fragment) booted at {cost_cpus} CPUs and at the maximum,
once each, with `tests/bench/kernel_memory` (the kernel's
`/proc/meminfo` at `/init`) and, on x86, `pda_bench` under
`qemu -icount shift=0` (instruction counts; ARM boots SMP guests under
TCG without `-icount`, so it has no time figures: see make bench's
note on ARM and `-icount`).  "Series per CPU" is the PDA kernel's
excess over mainline at the maximum, less its excess at {cost_cpus}
CPUs, over the CPUs between: what the series adds for each CPU.
"""


def _count(state, status):
    return sum(1 for r in state.get("results", []) if r[1] == status)


def _cost_lines(s):
    c = s.get("costs")
    if not c:
        return []
    ns = sorted(c["pda"], key=int)
    lines = ["", f"Costs ({s.get('costs_commit', '?')}, "
             f"{s.get('costs_minutes', '?')} min):", "",
             "| kernel | CPUs | used kB | Percpu kB | KernelStack kB | "
             "Slab kB | guest ms to /init |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for kind in ("mainline", "pda"):
        for n in ns:
            b = c[kind][n]
            m = b["mem"]
            ms = str(m.get("uptime_ms", "?")) if b["icount"] else \
                "n/a (TCG)"
            lines.append(f"| {kind} | {n} | {m.get('used_kB', '?')} | "
                         f"{m.get('Percpu_kB', '?')} | "
                         f"{m.get('KernelStack_kB', '?')} | "
                         f"{m.get('Slab_kB', '?')} | {ms} |")
    per = {k: series_per_cpu(c, k) for k in PER_CPU_KEYS}
    lines += ["", "Series per CPU: " + ", ".join(
        f"{k.removesuffix('_kB')} {'?' if v is None else round(v)} bytes"
        for k, v in per.items()) + ".  Percpu counts the per-CPU areas "
        "in whole pages, so it is exact to the page (what the series adds "
        "per CPU there is under a page when it does not move); "
        "KernelStack, Slab and `used` (MemTotal less MemFree) move "
        "with how many kernel threads and allocations exist when /init "
        "starts, one boot each, so tens of kB either way are noise (see the "
        "4-CPU rows)."]
    rows = []
    for op in sorted(c["pda"][ns[-1]]["ops"]):
        figs = [c[kind][n]["ops"].get(op, {}) for kind in ("mainline", "pda")
                for n in (ns[0], ns[-1])]
        if any("median" not in f for f in figs[2:]):
            continue
        rows.append(f"| {op} | " + " | ".join(
            f"{f['median']:.0f}" if "median" in f else "n/a"
            for f in figs) + " |")
    if rows:
        lines += ["", "pda_bench under -icount, median instructions per "
                  "operation (n/a: mainline has no getcpu_cache):", "",
                  f"| operation | mainline {ns[0]} | mainline {ns[-1]} | "
                  f"PDA {ns[0]} | PDA {ns[-1]} |",
                  "|---|---:|---:|---:|---:|"] + rows
    flat = s.get("cost_results", [])
    if flat:
        lines += ["", f"Flat from {ns[0]} to {ns[-1]} CPUs: the series' "
                  "excess over mainline the same at both counts; for a "
                  f"pda_bench row, within {FLAT_SHARE:.0%} of mainline's "
                  "figure plus the widest spread (median less min) of its "
                  "repetitions in the four boots.", ""]
        lines += [f"- {r[0].removeprefix('cost:').removesuffix('_flat')}: "
                  f"{r[1]} ({r[2]})" for r in flat]
    return lines


def write_report():
    states = [load_state(n) for n in KINDS]
    states = [s for s in states if s.get("kind")]
    lines = [HEAD.format(programs=", ".join(f"`{p}`" for p in PROGRAMS),
                         args=ARGS, cost_cpus=COST_CPUS,
                         x86_args=TARGETS["x86_64-scale"].arch.scale_args)]
    lines += ["| kind | CPUs | QEMU -M | what limits it | commit | date | "
              "passed | failed | skipped | minutes |",
              "|---|---:|---|---|---|---|---:|---:|---:|---:|"]
    for s in states:
        arch = TARGETS[s["kind"]].arch
        lines.append(f"| {s['kind']} | {s['cpus']} | {s['machine']} | "
                     f"{arch.scale_limit} | {s['commit']} | {s['date']} | "
                     f"{_count(s, 'pass')} | {_count(s, 'fail')} | "
                     f"{_count(s, 'skip') + _count(s, 'xfail')} | "
                     f"{s['minutes']} |")
    for s in states:
        lines += ["", f"## {s['kind']}", "",
                  f"Outcome: {s['outcome']}; host: {s['host']}.", ""]
        lines += [f"- {r[0]}: {r[1]}" + (f" ({r[2]})" if r[2] and
                                          r[1] != "pass" else "")
                  for r in s["results"]]
        lines += _cost_lines(s)
    REPORT.write_text("\n".join(lines) + "\n")
