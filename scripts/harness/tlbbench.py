# SPDX-License-Identifier: GPL-2.0
"""make bench, arm64: what CONFIG_ARM64_TLBI_LOCAL (patch 0011) changes.

Figures, not assertions.  Three kernels, all tinyconfig plus
the arm64 target's fragments plus configs/bench.config:

  mainline-arm64      the pristine 6.12 tree
  bench-arm64         the PDA tree, ARM64_TLBI_LOCAL=y (the arm64 target)
  bench-arm64-tlbi-n  the PDA tree, ARM64_TLBI_LOCAL=n, nothing else changed

and tests/bench/tlb_bench.c in the guest.  What is measured:

1. Flush counts: the /proc/vmstat tlbi_* deltas of each workload on
   bench-arm64 booted without tlbi_local=on ("off", the option's default)
   and with it ("on").
2. Wall time under multi-threaded TCG (-accel tcg,thread=multi, 4 vCPUs):
   mainline against the option on (and off), in one run, min and median of
   the repetitions inside the guest.  TCG implements an inner-shareable
   TLBI by stopping every vCPU (async_safe_run_on_cpu()), which makes a
   broadcast far dearer than on hardware: the ratio bounds the gain, it
   does not predict it.
3. Context-switch cost under -icount: two processes ping-ponging over
   pipes on CPU 0, instructions per switch, of bench-arm64-tlbi-n (the
   option n), bench-arm64 booted without tlbi_local=on (built, off),
   bench-arm64 booted with it (on) and mainline, booted as the other
   parts boot (benchlib's BENCH_ARGS, QEMU_ARGS, CPIO_MTIME), twice each;
   the two boots must agree.  Built and off should be within OFF_SLACK instructions of n: the
   report says whether it is, the run does not fail on it.
4. Size: `size vmlinux` of the three kernels.

No boot here takes the arm64 target's own kernel arguments (its
tlbi_local=on): each boot names the setting it measures.

The per-boot figures go into results/tlbi.json and a section of
results/REPORT.md.
"""

import copy
import dataclasses
import json
import time
from pathlib import Path

from . import benchlib, boot, guest
from .benchlib import BENCH_ARGS, QEMU_ARGS, RUNS, fmt, table
from .guestout import parse_bench_lines, PREFIX
from .ktap import test_blocks
from .paths import BUILD, LOGS
from .progress import Phase, fail, reset_log
from .targets import TARGETS

TARGET = next(n for n, t in TARGETS.items() if t.tlb_bench)
OPTION = "CONFIG_ARM64_TLBI_LOCAL"
TLB_PREFIX = "tlb-bench: "
PROGRAM = "tlb_bench"
BOOT_TIMEOUT = 1200
# The workloads whose counts and wall time are measured, with what they
# are (tests/bench/tlb_bench.c says more).
WORKLOADS = [
    ("mprotect", "one process per CPU, each pinned, mprotect RW→RO→RW on "
     "its own 4 pages; per mprotect pair"),
    ("madvise", "one thread per CPU in one process, each pinned, write 4 "
     "pages + MADV_DONTNEED (ITERS/8 per thread); per madvise"),
    ("madvise1", "the same, one thread only (the mm on one CPU), ITERS/8; "
     "per madvise"),
    ("cow", "touch 16 pages, fork, the child writes them and exits, wait; "
     "per fork"),
    ("twothr_sleep", "two threads: one on CPU 1 does mprotect RW→RO→RW on "
     "its own 4 pages, the other sleeps in a futex on CPU 0 meanwhile; "
     "per mprotect pair"),
    ("twothr_run", "two threads, on CPUs 0 and 1, both doing mprotect "
     "RW→RO→RW on their own 4 pages; per mprotect pair"),
    ("forkexec", "fork, the child execs tlb_bench again (static), which "
     "exits at once, wait; per fork + exec"),
]
COUNTERS = ("tlbi_broadcast", "tlbi_local", "tlbi_skipped", "tlbi_catchup")
# Repetitions inside the guest and the loop count of each (tlb_bench -r -n).
REPS = 7
ITERS = 200
WALL_ARGS = ["-r", str(REPS), "-n", str(ITERS)] + [w for w, _ in WORKLOADS]
# ctxsw: 400 round trips (800 switches) per repetition.
ICOUNT_ARGS = ["-r", str(REPS), "-n", "200", "ctxsw"]
# Multi-threaded TCG, QEMU's default for an ARM guest on an x86 host,
# spelled out.
MTTCG = "tcg,thread=multi"
WALL_CPUS = 4
# Under -icount QEMU 7.2 runs the vCPUs round-robin on one thread (see
# bench.BENCH_CPUS_WHY); the ping-pong is on CPU 0 only, and 2 CPUs keep a
# second CPU that holds other mms, as on a real SMP system.
ICOUNT_CPUS = 2
# Instructions per switch by which built-and-off may differ from n and
# still count as "no cost" in the report (a figure, not a failure).
OFF_SLACK = 5
# What is booted to measure what: (key, kernel, kernel arguments), the
# wall/counts boots and the -icount boots.
ON = "tlbi_local=on"
WALL_BOOTS = (("mainline", f"mainline-{TARGET}", ""),
              ("off", f"bench-{TARGET}", ""),
              ("on", f"bench-{TARGET}", ON))
# The "-jl" kernels are the same with CONFIG_JUMP_LABEL=y, as
# distributions build them: there a static-key test is one NOP.
ICOUNT_BOOTS = (("n", f"bench-{TARGET}-tlbi-n", ""),
                ("off", f"bench-{TARGET}", ""),
                ("on", f"bench-{TARGET}", ON),
                ("mainline", f"mainline-{TARGET}", ""),
                ("n-jl", f"bench-{TARGET}-tlbi-n-jl", ""),
                ("off-jl", f"bench-{TARGET}-jl", ""),
                ("on-jl", f"bench-{TARGET}-jl", ON))
ICOUNT_WHAT = {"n": "PDA, ARM64_TLBI_LOCAL=n",
               "off": "PDA, =y, booted without tlbi_local=on (off)",
               "on": "PDA, =y, booted with tlbi_local=on",
               "mainline": "mainline 6.12",
               "n-jl": "JUMP_LABEL=y: PDA, ARM64_TLBI_LOCAL=n",
               "off-jl": "JUMP_LABEL=y: PDA, =y, off",
               "on-jl": "JUMP_LABEL=y: PDA, =y, on"}
# Each row's Δ is against the n kernel of its own configuration.
ICOUNT_BASE = {"n-jl": "n-jl", "off-jl": "n-jl", "on-jl": "n-jl"}
STATE = BUILD / "tlbi-state.json"
SECTION_BEGIN = "<!-- tlbi:begin: written by `make bench` (tlbbench.py) -->"
SECTION_END = "<!-- tlbi:end -->"


# ------------------------------------------------------------ parsing

def parse_lines(lines):
    """tlb_bench's lines -> parse_bench_lines()'s dict (same format, its
    own prefix); a counter row's each=D1,D2,... (every repetition's delta,
    in the order they ran) becomes its "each" list."""
    mine = [line[len(TLB_PREFIX):] for line in lines
            if line.startswith(TLB_PREFIX)]
    res = parse_bench_lines([PREFIX + line for line in mine])
    for line in mine:
        words = line.split()
        each = [w[len("each="):] for w in words[1:]
                if w.startswith("each=")]
        if each and words[0] in res["ops"]:
            res["ops"][words[0]]["each"] = [int(v) for v in
                                            each[0].split(",")]
    return res


def parse_console(text, name=PROGRAM):
    """One boot's console -> {"ops", "info", "failed", "verdict"}."""
    blocks = test_blocks(text)
    res = parse_lines(blocks.get(name, []))
    res["ran"] = name in blocks
    return res


def differences(runs):
    """Rows whose min or median differ between boots, as messages."""
    diffs = []
    names = sorted(set().union(*(r["ops"] for r in runs)))
    for name in names:
        figs = [{k: r["ops"].get(name, {}).get(k)
                 for k in ("min", "median", "na")} for r in runs]
        if any(f != figs[0] for f in figs):
            diffs.append(f"{name}: " + "; ".join(
                f"run {i + 1}: {f}" for i, f in enumerate(figs)))
    return diffs


# ------------------------------------------------------- the kernels

def generated_fragment(name, line):
    """A one-line fragment: generated, so that configs/ keeps only the
    fragments a user builds with."""
    frag = BUILD / f"tlbbench-{name}.config"
    frag.parent.mkdir(parents=True, exist_ok=True)
    frag.write_text(line + "\n")
    return frag


def option_off_fragment():
    return generated_fragment("option-n", f"# {OPTION} is not set")


def kernels(pristine, tree, unverified, timings):
    """{label: build dir} of the five kernels."""
    target = TARGETS[TARGET]
    bench_config = benchlib.BENCH_CONFIG
    jump_label = generated_fragment("jump-label", "CONFIG_JUMP_LABEL=y")
    mainline, pda = benchlib.kernel_pair(TARGET, pristine, tree, unverified)
    out = {}
    for label, src, frags, unv in (
            (mainline.build_label, mainline.src, (bench_config,),
             mainline.unverified),
            (pda.build_label, pda.src, (bench_config,), pda.unverified),
            (f"bench-{TARGET}-tlbi-n", tree,
             (bench_config, option_off_fragment()), ()),
            (f"bench-{TARGET}-jl", tree, (bench_config, jump_label), ()),
            (f"bench-{TARGET}-tlbi-n-jl", tree,
             (bench_config, option_off_fragment(), jump_label), ())):
        out[label] = benchlib.build(target, src, label, unv, timings, frags)
    return out


def option_of(bdir, option=OPTION):
    return benchlib.read_config(Path(bdir) / ".config").get(option, "n")


# ------------------------------------------------------ user space

def user_space(tree):
    """/init and tlb_bench for the target's user space, stripped, in one
    initramfs per use: (wall, icount) cpio paths."""
    arch = TARGETS[TARGET].user_arch
    out = BUILD / f"bench-user-{arch.name}"
    log = reset_log(LOGS / f"bench-user-{arch.name}.log")
    with Phase(f"user-{arch.name}", "build init, tlb_bench", log):
        base = benchlib.initramfs(arch, tree, out, log)
        exe = guest.stripped(guest.build_bench_program(PROGRAM, arch, out,
                                                       log), arch, log)
    cpios = []
    for kind, argv in (("wall", WALL_ARGS), ("icount", ICOUNT_ARGS)):
        fs = copy.deepcopy(base)
        fs.add_test(PROGRAM, exe, argv)
        cpios.append(benchlib.write_initramfs(
            fs, tree, BUILD / f"bench-{TARGET}-{kind}.cpio", log))
    return cpios


# ------------------------------------------------------------ boots

def boot_one(label, bdir, cpio, name, cpus, append, icount, qemu_args=()):
    """One boot with @append as the only arguments beyond the harness's
    own: not the target's tlbi_local=on."""
    target = dataclasses.replace(TARGETS[TARGET], cpus=cpus, append="")
    console = LOGS / label / f"tlbbench-{name}.console.log"
    how = "qemu -icount shift=0" if icount else f"-accel {MTTCG}"
    with Phase(label, f"tlb_bench {name} ({how}, {cpus} CPUs)", console):
        outcome, rep = boot.qemu(
            target, Path(bdir) / target.arch.boot_image, cpio, console,
            BOOT_TIMEOUT, "tcg" if icount else MTTCG,
            boot.kernel_args(target, BOOT_TIMEOUT * 2 // 3, append),
            icount=icount, qemu_args=qemu_args)
    res = parse_console(console.read_text(errors="replace"))
    if outcome != boot.PASS or res["failed"] or not res["ops"]:
        fail(f"[{label}] tlb_bench {name}: {boot.describe(outcome, rep)}; " +
             ("; ".join(res["failed"]) or "figures: " + str(len(res["ops"]))),
             console)
    res["console"] = str(console)
    res["append"] = append
    return res


def measure(pristine, tree, unverified, timings, names=None):
    """Builds, boots, returns the state section() needs.  names: unused,
    this part boots its own kernels."""
    started = time.monotonic()
    target = TARGETS[TARGET]
    bdirs = kernels(pristine, tree, unverified, timings)
    wall_cpio, icount_cpio = user_space(tree)
    # Wall time and counts: one boot per kernel/setting, in one run.
    wall = {}
    for key, label, append in WALL_BOOTS:
        start = time.monotonic()
        wall[key] = boot_one(label, bdirs[label], wall_cpio, f"wall-{key}",
                             WALL_CPUS, append, False)
        timings.append((label, f"tlb_bench wall ({key})",
                        time.monotonic() - start))
    # Instructions per switch: two boots each, which must agree.
    icount = {}
    for key, label, append in ICOUNT_BOOTS:
        icount[key] = benchlib.boot_until_identical(
            label, f"tlb_bench icount {key}",
            lambda n: boot_one(label, bdirs[label], icount_cpio,
                               f"icount-{key}-{n}", ICOUNT_CPUS,
                               f"{BENCH_ARGS} {append}".strip(), True,
                               QEMU_ARGS),
            differences, timings,
            f"{LOGS / label}/tlbbench-icount-{key}-*.console.log")
    state = {
        "machine": benchlib.machine(),
        "qemu": benchlib.qemu_version(target.arch.qemu),
        "kernels": {label: {"option": option_of(b),
                            "jump_label": option_of(b, "CONFIG_JUMP_LABEL"),
                            "size": benchlib.size_of(target,
                                                     Path(b) / "vmlinux"),
                            "bdir": str(b)} for label, b in bdirs.items()},
        "object": benchlib.size_of(target, Path(bdirs[f"bench-{TARGET}"]) /
                                   "arch/arm64/mm/tlbi_local.o"),
        "wall": wall, "icount": icount,
        "wall_cpus": WALL_CPUS, "icount_cpus": ICOUNT_CPUS,
        "reps": REPS, "iters": ITERS, "bench_args": BENCH_ARGS,
        "qemu_args": list(QEMU_ARGS),
        "minutes": (time.monotonic() - started) / 60,
    }
    STATE.write_text(json.dumps(state, indent=1))
    return state


# ------------------------------------------------------------ report

def _mm(row):
    if row is None:
        return "—"
    if "na" in row:
        return "n/a"
    if row.get("unit") == "ns":     # wall time: a ns is fine enough
        return f"{row['min']:.0f} / {row['median']:.0f}"
    return f"{fmt(row['min'])} / {fmt(row['median'])}"


def _ratio(a, b, key):
    if not a or not b or "na" in a or "na" in b or not a[key]:
        return "n/a"
    return f"{b[key] / a[key]:.3f}"


def countstable(state):
    rows = []
    for w, what in WORKLOADS:
        t = state["wall"]["on"]["ops"].get(f"{w}.time") or {}
        for c in COUNTERS:
            off = state["wall"]["off"]["ops"].get(f"{w}.{c}")
            on = state["wall"]["on"]["ops"].get(f"{w}.{c}")
            rows.append([f"`{w}`" if c == COUNTERS[0] else "",
                         t.get("iters", "—") if c == COUNTERS[0] else "",
                         c, _mm(off), _mm(on)])
    return table(["workload", "ops per repetition", "counter",
                   "off (no `tlbi_local=on`): per repetition, "
                   "min / median",
                   "on (`tlbi_local=on`): per repetition, min / median"],
                  rows)


def varying(state):
    """Counts that were not the same in every repetition, in words."""
    out = []
    for w, _ in WORKLOADS:
        for key in ("off", "on"):
            for c in COUNTERS:
                each = state["wall"][key]["ops"].get(f"{w}.{c}", {}) \
                    .get("each")
                if each and len(set(each)) > 1:
                    out.append(f"`{w}` {key} {c}: "
                               + ", ".join(str(v) for v in each))
    if not out:
        return "Every count was the same in every repetition."
    return ("Counts that differed between repetitions (each repetition's, "
            "in the order they ran): " + "; ".join(out) + ". Every other "
            "count was the same in every repetition.")


def counts_words(state, w, key):
    """@w's median counts per repetition on boot @key, in words: "B
    broadcast, L local, ..." (the nonzero ones), or "not measured"."""
    ops = state["wall"][key]["ops"]
    words = []
    for c in COUNTERS:
        row = ops.get(f"{w}.{c}")
        if not row or "na" in row:
            return "not measured"
        if row["median"] or c == "tlbi_broadcast":
            words.append(f"{fmt(row['median'])} "
                         f"{c.replace('tlbi_', '').replace('catchup', 'catch-up')}")
    return ", ".join(words)


def per_op(state, w, key, counter):
    """@counter's median per operation of @w on boot @key, or None."""
    ops = state["wall"][key]["ops"]
    row, t = ops.get(f"{w}.{counter}"), ops.get(f"{w}.time")
    if not row or "na" in row or not t or not t.get("iters"):
        return None
    return row["median"] / t["iters"]


def workload_notes(state):
    """What the two-thread and fork + exec rows show, with their own
    figures (median per repetition)."""
    def both(w):
        return (f"off: {counts_words(state, w, 'off')}; on: "
                f"{counts_words(state, w, 'on')}")

    notes = [
        "`twothr_sleep` (the 2020 review's question: what happens to a "
        "program with two threads): one thread loops on CPU 1 while the "
        "other sleeps in a futex on CPU 0, whose idle task keeps the mm in "
        "TTBR0 and so still counts as a holder: its flushes broadcast, "
        "with the option on as off. Only when another process runs on "
        "CPU 0 meanwhile (the guest's only other one is `/init`, which "
        "polls every 100 ms) does CPU 0 stop holding the mm: that "
        "repetition's later flushes are then local, and the sleeper "
        "catches up (one `tlbi_catchup`) when it wakes. Median per "
        "repetition, " + both("twothr_sleep") + "; the repetitions "
        "that differ are listed above.",
        "`twothr_run`: both threads run the mm, each on its CPU, so the "
        "option cannot help: every flush broadcasts, except when one "
        "thread waits for the other's `mmap_lock` and another process "
        "takes its CPU meanwhile, as above. Median per repetition, " +
        both("twothr_run") + ".",
    ]
    fe = [(c, per_op(state, "forkexec", k, c))
          for k, c in (("off", "tlbi_broadcast"), ("on", "tlbi_broadcast"),
                       ("on", "tlbi_local"))]
    if all(v is not None for _, v in fe):
        notes.append(
            "`forkexec`: per fork + exec + exit, "
            f"{fmt(fe[0][1])} broadcast with the option off, "
            f"{fmt(fe[1][1])} broadcast and {fmt(fe[2][1])} local "
            "with it on. What stays broadcast is `flush_tlb_mm()`, which "
            "always broadcasts (the fork's, once it has write-protected "
            "the parent; each mm's teardown: the forked copy's at the "
            "exec, the new program's at its exit), and flushes that free "
            "page tables (exec moving the stack). The local ones are leaf "
            "flushes of an mm that CPU 0 alone holds: the copy-on-write "
            "faults of the parent after the fork and of the child before "
            "its exec, and the new program's own. Median per repetition, "
            + both("forkexec") + ".")
    return notes


def walltable(state):
    rows = []
    for w, what in WORKLOADS:
        m, off, on = (state["wall"].get(k, {}).get("ops", {})
                      .get(f"{w}.time") for k in ("mainline", "off", "on"))
        rows.append([f"`{w}`", what, _mm(m), _mm(off), _mm(on),
                     _ratio(m, on, "min"), _ratio(m, on, "median"),
                     _ratio(off, on, "median")])
    return table(["workload", "ns per", "mainline min / median",
                   "option off min / median", "option on min / median",
                   "TCG wall ratio on / mainline (min)",
                   "TCG wall ratio on / mainline (median)",
                   "on / off (median)"], rows)


def switch_row(state, key):
    """ctxsw.time of the first -icount boot of @key, or None."""
    row = (state["icount"].get(key) or [{"ops": {}}])[0]["ops"] \
        .get("ctxsw.time")
    return row if row and "na" not in row else None


def switch_delta(state, key):
    """(min, median) instructions per switch of @key minus its n's, or
    None."""
    row = switch_row(state, key)
    base = switch_row(state, ICOUNT_BASE.get(key, "n"))
    if not row or not base:
        return None
    return row["min"] - base["min"], row["median"] - base["median"]


def icounttable(state):
    rows = []
    for key, _, _ in ICOUNT_BOOTS:
        d = switch_delta(state, key)
        rows.append([ICOUNT_WHAT[key], _mm(switch_row(state, key)),
                     "" if key.startswith("n") or not d else
                     f"{d[0]:+.2f} / {d[1]:+.2f}"])
    return table(["kernel", "instructions per switch min / median",
                   "Δ against =n min / median"], rows)


def within(state, key):
    """Is @key within OFF_SLACK of its n?  None if not measured."""
    off = switch_delta(state, key)
    return None if off is None else all(abs(d) <= OFF_SLACK for d in off)


def off_verdict(state, key, what):
    """One sentence: is built-and-off (@key) within OFF_SLACK of its n?"""
    off = switch_delta(state, key)
    if off is None:
        return f"Built and off, {what}: not measured."
    ok = within(state, key)
    return (f"**Built and off, {what}, is {'' if ok else 'NOT '}within "
            f"{OFF_SLACK} instructions of `n`** ({off[0]:+.2f} min, "
            f"{off[1]:+.2f} median).")


def switch_verdict(state):
    """What built-and-off and on cost per switch, in words."""
    on = switch_delta(state, "on")
    base = switch_row(state, "n")
    out = [off_verdict(state, "off-jl", "with `CONFIG_JUMP_LABEL` as "
                       "distributions build it"),
           "There `tlbi_local_enabled()` in `check_and_switch_context()` "
           "is one NOP" + ("" if within(state, "off-jl") else
                           ", so a larger difference is not the test; "
                           "what it is has not been found (candidates: "
                           "`mm_context_t`'s layout with the count on its "
                           "own cache line, the four more vm events, timer "
                           "work that falls differently)") + ".",
           off_verdict(state, "off", "in the `tinyconfig` kernels without "
                       "jump labels"),
           "There the same test is a load, a compare and a branch at every "
           "switch."]
    if on is not None and base:
        out.append(
            f"**On costs {on[1]:+.2f} instructions per switch** (median, "
            f"{100 * on[1] / base['median']:+.1f} %; {on[0]:+.2f} min; "
            "without jump labels): "
            "the holder counts (an atomic increment of the new mm's, a "
            "decrement of the old one's), two `dsb(ish)` (the count "
            "visible before the new ASID is used; the old ASID's walks "
            "complete before it is uncounted) and the stale-mark test. "
            "These are instructions, not time: a DSB is one instruction "
            "here and can take many cycles on hardware.")
    return " ".join(out)


def sizetable(state):
    rows = []
    ks = state["kernels"]
    n = ks[f"bench-{TARGET}-tlbi-n"]["size"]
    for label in (f"mainline-{TARGET}", f"bench-{TARGET}-tlbi-n",
                  f"bench-{TARGET}"):
        if label not in ks:
            continue
        s = ks[label]["size"]
        rows.append([f"`{label}`", ks[label]["option"],
                     f"{s['text']} / {s['data']} / {s['bss']}",
                     f"{s['text'] - n['text']:+d} / "
                     f"{s['data'] - n['data']:+d} / "
                     f"{s['bss'] - n['bss']:+d}"])
    return table(["kernel", OPTION.replace("CONFIG_", ""),
                   "text / data / bss", "Δ against =n"], rows)


def size_note(state):
    o = state.get("object")
    return ("`vmlinux`'s sections are padded to alignment boundaries, so "
            "these deltas move in steps and can land in another column "
            "than the code that caused them" +
            (f"; `arch/arm64/mm/tlbi_local.o` itself is {o['text']} / "
             f"{o['data']} / {o['bss']} (text / data / bss)." if o else
             "."))


def section(state, repo=None):
    """The REPORT.md section, between its own markers."""
    m = state["machine"]
    info = state["wall"]["on"]["info"]
    return "\n".join([
        SECTION_BEGIN,
        "## arm64: local TLB invalidation (`ARM64_TLBI_LOCAL`, patch 0011)",
        "",
        "- **Machine.** Host: "
        f"{m['cpu_model']}, {m['host_cpus']} CPUs, load average "
        f"{m['loadavg']} when it started (other builds share these cores). "
        f"Guest: {state['qemu']}, `-M virt,virtualization=on -cpu "
        "cortex-a57` (the kernel is entered at EL2, as on a host), guest "
        f"kernel {info.get('kernel', '?')}.",
        "- **Kernels.** `mainline-arm64` (pristine 6.12), `bench-arm64` "
        "(PDA, `ARM64_TLBI_LOCAL=y`) and `bench-arm64-tlbi-n` (PDA, the "
        "option `n`, nothing else changed), all `tinyconfig` + "
        "`configs/base.config` + `configs/arm64.config` + "
        "`configs/bench.config`. Built in, the option is off unless the "
        "kernel is booted with `tlbi_local=on`: **off** below is "
        "`bench-arm64` booted without it, **on** booted with it.",
        "- **Program**: `tests/bench/tlb_bench.c`; every figure is "
        f"**min / median** over {state['reps']} repetitions inside the "
        "guest, after one warm-up. Counts are the `/proc/vmstat` deltas of "
        "one whole repetition, read once every worker finished its loop "
        "and before any exits.",
        "",
        "### Flush counts, option off against on (exact)", "",
        "`bench-arm64` booted without `tlbi_local=on` (off, the default) "
        f"and with it (on), {state['wall_cpus']} vCPUs, {state['iters']} loop iterations per "
        "process or thread per repetition. Each workload runs in a new "
        "process born on CPU 0: an idle CPU keeps the last user mm in TTBR0 "
        "and so still holds it.", "",
        countstable(state), "",
        varying(state), "",
        "`madvise` (a thread per CPU) has the mm live on every CPU, so it "
        "broadcasts with the option on too; its threads zap concurrently, "
        "and a zap that finds another in flight (`mm_tlb_flush_nested()`) "
        "flushes more widely, so it counts more flushes than calls, by a "
        "number that varies between repetitions.", "",
        *[n + "\n" for n in workload_notes(state)],
        "### Wall time under multi-threaded TCG (a bound, not a "
        "prediction)", "",
        f"`-accel {MTTCG}`, {state['wall_cpus']} vCPUs, guest "
        "`CLOCK_MONOTONIC`, ns per operation; mainline, then `bench-arm64` "
        "with the option off and on, one boot each in this run. **TCG "
        "makes a broadcast far dearer than hardware does**: QEMU implements "
        "an inner-shareable TLBI by stopping every vCPU "
        "(`async_safe_run_on_cpu()` on all of them), and a local TLBI "
        "flushes one vCPU's soft TLB. The ratio therefore bounds the gain "
        "of skipping broadcasts; it does not predict it on hardware. Wall "
        "figures on a shared host vary from run to run; the counts above "
        "do not.", "",
        walltable(state), "",
        "### Context switch under `-icount` (instructions)", "",
        "Two processes (two mms, so `switch_mm()` runs) ping-pong one byte "
        "over pipes, both pinned to CPU 0; instructions per switch (half a "
        f"round trip). `qemu -icount shift=0,sleep=off "
        f"{' '.join(state['qemu_args'])}`, kernel arguments "
        f"`{state['bench_args']}` (and `{ON}` for \"on\"), the "
        f"initramfs with fixed mtimes; {state['icount_cpus']} CPUs (QEMU "
        "7.2 runs `-icount` vCPUs round-robin on one thread). Four "
        "kernels or settings: the option `n`; built in and off (booted "
        "without `tlbi_local=on`: the switch takes mainline's path behind "
        "a static key, no atomic, no barrier); built in and on; mainline. "
        f"Each booted {RUNS} times; the figures were identical. "
        "That holds for identical boots only: a change elsewhere in the "
        "kernel image or in the guest program has moved these figures by "
        "a few instructions per switch between runs of this part, so a "
        "difference of a few instructions between two kernels is at the "
        "scale of that movement.",
        "",
        icounttable(state), "",
        switch_verdict(state), "",
        "### Size (`size vmlinux`, bytes)", "",
        sizetable(state), "",
        size_note(state), "",
        f"This part took {state['minutes']:.1f} min. Console logs: "
        "`~/.cache/pda/logs/<kernel>/tlbbench-*.console.log`; raw figures "
        "`results/tlbi.json`.",
        SECTION_END])


def results_json(state):
    """What results/tlbi.json keeps: every figure, no host paths."""
    def run(r):
        return {"append": r["append"], "info": r["info"], "ops": r["ops"]}
    return {"machine": state["machine"], "qemu": state["qemu"],
            "object": {"arch/arm64/mm/tlbi_local.o": state.get("object")},
            "kernels": {k: {"option": v["option"], "size": v["size"],
                            "jump_label": v.get("jump_label", "?")}
                        for k, v in state["kernels"].items()},
            "method": {"reps": state["reps"], "iters": state["iters"],
                       "wall": f"-accel {MTTCG}, {state['wall_cpus']} vCPUs",
                       "icount": f"-icount shift=0,sleep=off "
                       f"{' '.join(state['qemu_args'])}, "
                       f"{state['icount_cpus']} CPUs, {RUNS} boots",
                       "wall_ratio": "TCG only: a broadcast stops every "
                       "vCPU; bounds the gain, does not predict it",
                       "off": f"bench-{TARGET} booted without "
                       "tlbi_local=on",
                       "on": f"bench-{TARGET} booted with {ON}",
                       "off_slack": f"built and off within {OFF_SLACK} "
                       "instructions per switch of n: reported, not "
                       "enforced"},
            "wall": {k: run(v) for k, v in state["wall"].items()},
            "icount": {k: run(v[0]) for k, v in state["icount"].items()}}


def write(repo, state, readme=False):
    """results/tlbi.json; this part has no README headline."""
    return [benchlib.write_results_json(repo, "tlbi.json",
                                        results_json(state))]


PART = benchlib.BenchPart(
    name=TARGET, key="tlbi", targets=None, measure=measure, write=write,
    section=section, markers=(SECTION_BEGIN, SECTION_END))
