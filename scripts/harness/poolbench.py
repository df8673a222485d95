# SPDX-License-Identifier: GPL-2.0
"""make bench, the per-CPU pool (tools/lib/pda/pda_pool.h): what one
update of a per-CPU object of 1, 16 and 256 counters costs through the
segment, through the pool's checked call, in an rseq critical section
per counter, as an atomic add on one shared struct, and as a plain add
on a per-thread struct; and the pool memory one object takes.

Guest: tests/bench/pool_bench (static; on x86_64 its 64-bit and its
32-bit build) on make bench's PDA kernels, booted RUNS times under
-icount as bench.py boots; every row of every boot must agree.  Host:
segbench's pool.* rows natively (core cycles; on a kernel without the
segment through segbench's emulation of it), each x86 build that runs
here.  Writes results/pool.json, a section of results/REPORT.md and the
README's pool headline.
"""

import json
import time

from . import benchlib, guest, hostcaps
from .arches import HOST, HOST_32
from .benchlib import RUNS, fmt, table
from .guestout import PREFIX, parse_bench_lines
from .ktap import test_blocks
from .paths import BUILD, LOGS
from .progress import Phase, fail, reset_log, run
from .targets import TARGETS

ORDER = tuple(n for n, t in TARGETS.items() if t.pool_bench)
PROGRAM = "pool_bench"
COMPAT = "pool_bench_32"
BENCH_PREFIX = "pool-bench: "
DEPS = ("tools/lib/pda/pda.h", "tools/lib/pda/pda_pool.h",
        "tools/lib/pda/pda_rseq.h")
# Not position-independent, as a static program need not be: i386's rseq
# sections (pda_rseq.h) then arm with an absolute address, as rseq code
# in any non-PIE i386 program does; under -fPIE they take 3 instructions
# more, a call to the next instruction for the address.
CFLAGS = ("-fno-pie",)
COUNTERS = (1, 16, 256)
KINDS = [
    ("seg", "the pool's raw add, one `addl $1, %fs:disp(%reg)` per counter "
     "(`%gs` in 64-bit programs), the thread's path tested once before the "
     "loop"),
    ("tested", "`pda_pool_path()` tested once per update, as `pda_pool.h` "
     "advises for many fields at once, then the raw add per counter (the "
     "segment) or, where the path is rseq (ARM, arm64), "
     "`pda_rseq_add_u32()` per counter on the `struct rseq` looked up once"),
    ("checked", "`pda_pool_inc_u32()` per counter: the thread's path tested "
     "each time (six instructions on x86 with the segment), then the "
     "segment or an rseq critical section"),
    ("rseq", "`pda_rseq_add_u32()` per counter on the same copies "
     "(`tools/lib/pda/pda_rseq.h`: one critical section indexed by "
     "`cpu_id`), the `struct rseq` known: rseq's own cost"),
    ("shared", "an atomic add per counter of one struct for every thread"),
    ("thread", "a plain (volatile) add per counter of a per-thread struct, "
     "which only a sum over every thread can read: the floor in cycles, "
     "though under `-icount` its load, add and store count 3 and a locked "
     "add 1"),
]

def na_expected(kind, method):
    """Where a row must be n/a: the segment's own row without the
    segment, the tested row where the pool has no path to test."""
    return (kind == "seg" and method != "segment") or \
        (kind == "tested" and method == "atomic")
STATE = BUILD / "pool-state.json"
SECTION_BEGIN = "<!-- pool:begin: written by `make bench` (poolbench.py) -->"
SECTION_END = "<!-- pool:end -->"
README_BEGIN = "<!-- pool-headline:begin: written by `make bench` " \
    "from results/pool.json; do not edit by hand -->"
README_END = "<!-- pool-headline:end -->"


def parse(lines):
    """pool_bench's lines -> {"ops": {op: row}, "info": {...}}."""
    rows = parse_bench_lines([PREFIX + ln[len(BENCH_PREFIX):]
                              for ln in lines if ln.startswith(BENCH_PREFIX)])
    return {"ops": rows["ops"], "info": rows["info"],
            "failed": rows["failed"]}


def programs_of(target):
    if target.user_arch_64:
        return [(PROGRAM, target.user_arch_64), (COMPAT, target.user_arch)]
    return [(PROGRAM, target.user_arch)]


def initramfs(target, tree):
    arch0 = target.user_arch_64 or target.user_arch
    out = BUILD / f"poolbench-user-{arch0.name}"
    log = reset_log(LOGS / "poolbench" / f"user-{arch0.name}.log")
    with Phase("pool", f"initramfs ({arch0.name})", log):
        fs = benchlib.initramfs(arch0, tree, out, log)
        for name, arch in programs_of(target):
            exe = guest.build_bench_program(PROGRAM, arch, out / arch.name,
                                            log, deps=DEPS, cflags=CFLAGS)
            fs.add_test(name, guest.stripped(exe, arch, log))
        return benchlib.write_initramfs(
            fs, tree, BUILD / f"poolbench-{arch0.name}.cpio", log)


def check(res, arch):
    """What makes a program's parsed figures unusable: [] if nothing.
    They must be whole, instruction counts, and have taken the path the
    arch record says the pool takes on a PDA kernel."""
    bad = list(res["failed"])
    want = {f"{k}.{c}" for k, _ in KINDS for c in COUNTERS}
    bad += [f"{op}: missing" for op in sorted(want - set(res["ops"]))]
    method = res["info"].get("method")
    if method != arch.pool_method:
        bad.append(f"the pool's method is {method}, not {arch.pool_method}")
    if res["info"].get("done") != "1":
        bad.append("it did not finish (no info done=1)")
    for op, row in sorted(res["ops"].items()):
        na = na_expected(op.split(".")[0], method)
        if "na" in row and not na:
            bad.append(f"{op}: not measured: {row['na']}")
        elif "na" not in row and na:
            bad.append(f"{op}: measured, though the pool's method is "
                       f"{method}")
        elif "na" not in row and row.get("unit") != "insns":
            bad.append(f"{op}: not instruction counts ({row.get('unit')})")
        elif "na" not in row and not 0 < row["min"] <= row["median"]:
            bad.append(f"{op}: min {row['min']}, median {row['median']}: "
                       "not a cost")
    return bad


def boot_once(target, label, bdir, cpio, n):
    console = LOGS / label / f"poolbench-{n}.console.log"
    blocks = test_blocks(benchlib.icount_boot(
        target, label, bdir, cpio, console, f"pool bench boot {n}/{RUNS}"))
    res = {}
    for name, arch in programs_of(target):
        res[name] = parse(blocks.get(name, []))
        bad = check(res[name], arch)
        if bad:
            fail(f"[{label}] {name}: {'; '.join(bad)}", console)
    return res


def differences(runs):
    """(program, row) figures not the same in every boot, as messages."""
    keys = sorted({(prog, op) for r in runs for prog in r
                   for op in r[prog]["ops"]})
    keys += sorted({(prog, "info") for r in runs for prog in r})
    return [f"{prog} {op}" for prog, op in keys
            if any(_get(r, prog, op) != _get(runs[0], prog, op)
                   for r in runs)]


def _get(res, prog, op):
    p = res.get(prog, {})
    return p.get("info") if op == "info" else p.get("ops", {}).get(op)


def host(arches):
    """segbench's pool rows natively: {build: {op: row in cycles}}."""
    log = reset_log(LOGS / "poolbench" / "host.log")
    out, machine = {}, None
    with Phase("host", "segbench pool.* natively (cycles)", log):
        for arch in arches:
            seg = guest.build_segbench(arch, BUILD / "poolbench-host" /
                                       arch.name, log)
            res = BUILD / "poolbench-host" / f"{arch.name}.json"
            run([seg, "--filter", "pool.*", "--json", "-o", res], log,
                what=f"segbench pool.* ({arch.name})")
            data = json.loads(res.read_text())
            machine = machine or data["machine"]
            rows = {}
            for r in data["results"]:
                op = r["name"][len("pool."):]
                if r["status"] != "ok":
                    rows[op] = {"na": r.get("note", "")}
                    continue
                if r.get("exact") is not True:
                    fail(f"segbench {r['name']} ({arch.name}): the counters "
                         "are not exact", log)
                rows[op] = {"min": r["min_cycles"],
                            "median": r["median_cycles"],
                            "emulated": r.get("emulated", False),
                            "note": r.get("note", "")}
            out[arch.name] = rows
    return {"machine": machine, "builds": out}


def measure(pristine, tree, unverified, timings, names):
    """make bench's PDA kernels of @names, and segbench on the host."""
    started = time.monotonic()
    results = benchlib.pda_kernel_boots(
        names, pristine, tree, unverified, timings, "pool bench boot",
        initramfs, boot_once, differences, "poolbench-*.console.log")
    start = time.monotonic()
    native = host((HOST,) + ((HOST_32,) if hostcaps.i386()[0] else ()))
    timings.append(("host", "segbench pool", time.monotonic() - start))
    state = {"guests": results, "host": native, "runs": RUNS,
             "minutes": (time.monotonic() - started) / 60}
    STATE.write_text(json.dumps(state, indent=1))
    return state


# ------------------------------------------------------------ report

def label(target, prog):
    return target + (" (32-bit program)" if prog == COMPAT else
                     " (64-bit program)" if TARGETS[target].user_arch_64
                     else "")


def cell(row):
    return "n/a" if row is None or "na" in row else \
        f"{fmt(row['min'])} / {fmt(row['median'])}"


def speedup(rows, slow, fast):
    """slow / fast, medians, or None."""
    a, b = rows.get(slow), rows.get(fast)
    if not a or not b or "na" in a or "na" in b or b["median"] <= 0:
        return None
    return a["median"] / b["median"]


def times(x):
    return "n/a" if x is None else f"{x:.1f}×"


def best(rows, c):
    """The pool's own way at @c counters: the path tested once per update
    and the raw segment adds where there is a segment, else the checked
    call."""
    tested = rows.get(f"tested.{c}")
    return f"tested.{c}" if tested and "na" not in tested else f"checked.{c}"


def guest_table(state):
    out = []
    for target, progs in state["guests"].items():
        for prog, res in progs.items():
            rows = res["ops"]
            out.append([label(target, prog), res["info"].get("method")] +
                       [cell(rows.get(f"{k}.{c}")) for c in COUNTERS
                        for k, _ in KINDS] +
                       [times(speedup(rows, f"rseq.{c}", best(rows, c)))
                        for c in COUNTERS])
    head = ["target", "method"] + [f"`{k}.{c}`" for c in COUNTERS
                                   for k, _ in KINDS] + \
        [f"rseq / pool, {c}" for c in COUNTERS]
    return table(head, out)


def memory_table(state):
    out = []
    for target, progs in state["guests"].items():
        for prog, res in progs.items():
            info = res["info"]
            out.append([label(target, prog), info.get("possible_cpus")] +
                       [info.get(f"mem.{c}") for c in COUNTERS])
    return table(["target", "possible CPUs"] +
                 [f"bytes per object of {c} counters" for c in COUNTERS], out)


def host_table(state):
    out = []
    for arch, rows in state["host"]["builds"].items():
        out.append([arch] + [cell(rows.get(f"{k}.{c}")) for c in COUNTERS
                             for k, _ in KINDS])
    return table(["build"] + [f"`{k}.{c}`" for c in COUNTERS
                              for k, _ in KINDS], out)


def section(state, repo=None):
    m = state["host"]["machine"] or {}
    return "\n".join([
        SECTION_BEGIN,
        "## Per-CPU objects: the pool on the segment against rseq",
        "",
        "One update of a per-CPU object of `tools/lib/pda/pda_pool.h`, a "
        "struct of 1, 16 or 256 32-bit counters, adding 1 to every counter "
        "(the 256-counter struct spans 16 lines, a stride apart), one thread "
        "pinned to CPU 0, **min / median** of 7 repetitions after a "
        "warm-up. Ways: " + "; ".join(f"`{k}`: {w}" for k, w in KINDS) +
        ". Every row checks each counter's sum.",
        "",
        f"### In the guests (instructions per update, `qemu -icount "
        f"shift=0`, make bench's PDA kernels, {state['runs']} boots "
        "identical)", "",
        "Each figure is (the loop with the adds − the same loop of updates "
        "with nothing in them, 2 instructions each) / 2000 updates, so an "
        "update's loop over its lines and their address arithmetic count "
        "as the update's; each row checks that every counter holds exactly "
        "its adds in CPU 0's copy, where the thread is pinned, and that no "
        "other copy moved. ARM "
        "kernels boot one CPU here (`-icount` and ARM spin-waits).", "",
        guest_table(state), "",
        "Pool memory per object, over all CPUs (the line space 1000 objects "
        "of a fresh pool take, times the possible CPUs): a pool has a line "
        "per possible CPU in each row, and small objects share lines.", "",
        memory_table(state), "",
        "librseq's per-CPU allocator (`rseq_mempool`, as of librseq "
        "cbdabc4) rounds an item up to a power of two, at least a pointer, "
        "and by default (`RSEQ_MEMPOOL_POPULATE_COW_INIT`) keeps one more "
        "copy for initial values: an object of 1, 16 or 256 counters takes "
        "8 (4 in a 32-bit program), 64 or 1024 bytes in each of possible "
        "CPUs + 1 strides. Its strides give each CPU pages of its own, so "
        "the copies of a CPU that never writes stay unpopulated "
        "(copy-on-write); a 4 KiB page of a pool holds 64 lines side by "
        "side, every CPU's of its rows (64 CPUs' where there are more), so "
        "one CPU's first write to a row populates the other CPUs' lines "
        "in its page too: with many possible CPUs and few running, the "
        "pool holds more resident memory.", "",
        "### On the host (core cycles per update, native, segbench's "
        "`pool.*` rows)", "",
        f"{m.get('cpu_model', '?')} ({m.get('cpu_id', '?')}), kernel "
        f"{m.get('kernel', '?')}, {m.get('virt', '?')}. The host kernel has "
        "no segment: `seg` runs on segbench's emulation of it (a "
        "descriptor per CPU, chosen for the pinned thread: the same "
        "instruction and base), and `checked` takes the pool's rseq "
        "path (glibc registered rseq). segbench subtracts its empty loop, so an add that overlaps "
        "the loop's own work can show under a cycle (the `min` of `seg.1` "
        "and `thread.1`); the 16- and 256-counter rows show the adds' "
        "throughput. On AMD "
        "hosts a 32-bit program's access through a non-zero segment base "
        "costs more: segbench's record of an AMD EPYC (family 25, "
        "`results/host-amd-epyc-f25m17.md`) has `inc.fs_slot.1t`, the same "
        "instruction on a per-CPU slot, at 7.1 cycles (median) against 1.9 "
        "for `inc.rseq.1t`.", "",
        host_table(state), "",
        f"This part took {state['minutes']:.1f} min. Raw rows: "
        "`results/pool.json`.",
        SECTION_END])


def readme_section(state):
    rows = []
    for target, progs in state["guests"].items():
        for prog, res in progs.items():
            r = res["ops"]
            rows.append([label(target, prog), res["info"].get("method")] +
                        [f"{fmt(r[best(r, c)]['median'])} / "
                         f"{fmt(r[f'checked.{c}']['median'])} / "
                         f"{fmt(r[f'rseq.{c}']['median'])} "
                         f"({times(speedup(r, f'rseq.{c}', best(r, c)))})"
                         for c in COUNTERS])
    return "\n".join([
        README_BEGIN,
        "### Per-CPU objects: the pool against rseq (`make bench`)", "",
        "Guest instructions per update of a per-CPU struct of 1, 16 and 256 "
        "counters (every counter +1; median of 7, `qemu -icount`, make "
        "bench's PDA kernels, two boots identical), three ways: the pool "
        "as `pda_pool.h` advises for many fields (the thread's path tested "
        "once per update, then one raw add per counter where the segment "
        "is, one rseq critical section per counter elsewhere), the pool's "
        "checked call per counter (`pda_pool_inc_u32()`, which tests the "
        "path each time), and an rseq critical section per counter on the "
        "same copies, its `struct rseq` known. In parentheses, rseq's "
        "figure over the first: above 1 the pool is ahead. Without the "
        "segment (ARM, arm64) the pool's updates are rseq critical "
        "sections too (atomics only where glibc registered no rseq). Every "
        "way, the host's cycles and the memory per object: "
        "`results/REPORT.md`.", "",
        table(["target", "pool method"] +
              [f"{c} counter{'s' if c > 1 else ''}: pool / checked / rseq"
               for c in COUNTERS], rows),
        "", README_END])


def state_from_results(repo):
    return benchlib.read_results_json(repo, "pool.json", ORDER)


def write(repo, state, readme):
    written = [benchlib.write_results_json(
        repo, "pool.json", {k: v for k, v in state.items() if k != "minutes"})]
    if readme:
        written.append(benchlib.replace_readme(
            repo, (README_BEGIN, README_END), readme_section(state)))
    return written


PART = benchlib.BenchPart(
    name="pool", key="pool", targets=ORDER, measure=measure,
    write=write, section=section, markers=(SECTION_BEGIN, SECTION_END))
