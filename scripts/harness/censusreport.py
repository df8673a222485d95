# SPDX-License-Identifier: GPL-2.0
"""results/ from the segment census (census.py): results/census.json, a
section of results/REPORT.md, results/census-loads.svg and the README's
census headline.  Nothing here measures; every number comes from the
state census.py recorded.

The cycle figures are an ESTIMATE, labelled so everywhere:

    cycles = (I - S) * c  +  sum over costed kinds k of  n_k * cost_k

I: the path's instructions (user + kernel, the empty window's taken off;
kernel only for the interrupt path); n_k: segment operations of kind k;
S: their sum; cost_k: segbench's cycles for k on a host; c: cycles per
other instruction, assumed 1 (0.5 to 2 is the range given).  The point
figure takes c = 1 and the median costs; the range takes c = 0.5 with
the min costs and c = 2 with the median costs.  Kinds segbench cannot
time from user mode (int, sysenter, sysexit, syscall, sysret, swapgs,
wr*base, far transfers, lldt) are not costed: they count as ordinary
instructions, so the estimate is low by what they cost above that.
"""

import json
from pathlib import Path

from .benchlib import bar_plot, fmt, replace_readme, table, \
    write_results_json
from .targets import TARGETS

SECTION_BEGIN = "<!-- census:begin: written by `make bench` (census.py) -->"
SECTION_END = "<!-- census:end -->"
README_BEGIN = "<!-- census-headline:begin: written by `make bench` from " \
    "results/census.json; do not edit by hand -->"
README_END = "<!-- census-headline:end -->"
PLOT = "census-loads.svg"
C_POINT, C_LOW, C_HIGH = 1.0, 0.5, 2.0
# Paths in table order, with what a window is.
PATHS = [
    ("sys.int80", "null syscall, `int $0x80`"),
    ("sys.vsyscall", "null syscall, `__kernel_vsyscall`"),
    ("sys.syscall", "null syscall, `syscall` (64-bit)"),
    ("sys.int80.pda", "the same, PDA selector in `%fs`"),
    ("sys.vsyscall.pda", "the same, PDA selector in `%fs`"),
    ("sys.syscall.pda", "the same, PDA selector in `%gs`"),
    ("fault.anon", "anonymous write fault"),
    ("ctxsw.same", "context switch, both threads on CPU 0 (per switch)"),
    ("ctxsw.same.pda", "the same, both threads holding the PDA selector"),
    ("migrate", "`sched_setaffinity()` from CPU 0 to CPU 1 (every CPU counted)"),
    ("signal", "`kill()` of itself + delivery + handler + `sigreturn`"),
    ("irq", "the interrupt that lands in a user loop (kernel only)"),
]
EMPTY = "empty"
IRQ = "irq"
LOAD_SUFFIXES = (".null", ".sel")
PROBE = "probe."


# ------------------------------------------------------------ counts

def summarise(path, name=None):
    """{counter: per op} of one real window: the median one by kernel
    instructions (the lower middle of an even count), or for the
    interrupt path the cheapest one, the bare tick (others also hold
    softirq work or a context switch)."""
    ws = sorted(path["windows"], key=lambda w: (w.get("k.insns", 0),
                                                w.get("u.insns", 0)))
    w = ws[0] if name == IRQ else ws[(len(ws) - 1) // 2]
    return {k: v / path["ops"] for k, v in w.items()}


def is_load(key):
    return key.endswith(LOAD_SUFFIXES)


def seg_keys(s):
    return sorted(k for k in s if k[:2] in ("u.", "k.") and
                  k not in ("u.insns", "k.insns"))


def loads(s, reg=None, null=None):
    """Selector loads in a summary, optionally one register's (a pop or
    mov of it, or its l*s), optionally only null or non-null ones."""
    total = 0
    for k in seg_keys(s):
        if not is_load(k):
            continue
        kind = k.split(".")[1:]
        r = kind[1] if kind[0] in ("mov", "pop") else kind[0][1:]
        if reg and r != reg:
            continue
        if null is not None and (kind[-1] == "null") != null:
            continue
        total += s[k]
    return total


def spread(path, empty, name):
    """(min, max) instructions per operation over a path's windows, all
    boots alike (they must be identical)."""
    got = [instructions({k: v / path["ops"] for k, v in w.items()}, empty,
                        name) for w in path["windows"]]
    return min(got), max(got)


def seg_ops(s, name):
    return sum(s[k] for k in seg_keys(s) if name != IRQ or k.startswith("k."))


def instructions(s, empty, name):
    if name == IRQ:
        return s.get("k.insns", 0)
    return s.get("u.insns", 0) + s.get("k.insns", 0) - \
        empty.get("u.insns", 0) - empty.get("k.insns", 0)


# ------------------------------------------------------------ cycles

def cost_row(key, rows):
    """The segbench row that times a counter's kind, or None."""
    kind = key.split(".")[1:]
    if is_load(key):
        reg = kind[1] if kind[0] in ("mov", "pop") else kind[0][1:]
        fam = reg if reg in ("fs", "gs") else "fs"
        if f"sel.mov.{fam}.null" not in rows:
            fam = "gs" if fam == "fs" else "fs"
        # A pop, an l*s: the same selector load as a mov, after an
        # ordinary memory read.
        return f"sel.mov.{fam}.{'null' if kind[-1] == 'null' else 'user_ds'}"
    if kind[0] in ("iret", "lsl", "lar", "verr"):
        return PROBE + kind[0]
    if kind[0] == "verw":
        return PROBE + "verr"
    return None


def seg_cycles(s, name, rows, which="median"):
    """The costed segment operations' cycles alone."""
    return sum(s[k] * rows[cost_row(k, rows)][which]
               for k in seg_keys(s) if (name != IRQ or k.startswith("k."))
               and cost_row(k, rows) in rows)


def estimate(s, empty, name, rows):
    """(point, low, high) cycles, and the counters left uncosted."""
    insns = instructions(s, empty, name)
    keys = [k for k in seg_keys(s) if name != IRQ or k.startswith("k.")]
    costed = [(k, s[k], rows[cost_row(k, rows)]) for k in keys
              if cost_row(k, rows) in rows]
    other = insns - sum(n for _, n, _ in costed)

    def est(c, which):
        return other * c + sum(n * r[which] for _, n, r in costed)
    uncosted = sorted({k.split(".", 1)[1] for k in keys
                       if cost_row(k, rows) not in rows})
    return (est(C_POINT, "median"), est(C_LOW, "min"),
            est(C_HIGH, "median")), uncosted


def host_label(m):
    """Short: the model, CPUID, clock and day segbench ran."""
    model = m.get("cpu_model", "?").replace("(R)", "")
    cpuid = m.get("cpu_id", "?").replace("family ", "f").replace(
        " model ", "m").replace(" stepping ", "s")
    mhz = m.get("core_mhz")
    return (f"{model} {cpuid}" + (f" @ {mhz:.0f} MHz" if mhz else "") +
            f", {m.get('virt', '?').split(' ')[0]}, "
            f"{m.get('date', '?')[:10]}")


def recorded_hosts(state, repo):
    """[(label, short name, {row: {min, median}})]: this run's host and
    every segbench record in results/, each with all its rows.  A
    record's second run (-run2) only checks its first: not a column."""
    out = [("this run", host_label(state["host"]["machine"]),
            state["host"]["rows"])]
    for path in sorted(Path(repo, "results").glob("host-*.json")):
        if path.stem.endswith("-run2"):
            continue
        data = json.loads(path.read_text())
        if data.get("unit") != "cycles" or data.get("mode") != "native":
            continue
        rows = {r["name"]: {"min": r["min_cycles"],
                            "median": r["median_cycles"]}
                for r in data["results"] if r.get("status") == "ok"}
        out.append((f"`results/{path.name}`", host_label(data["machine"]),
                    rows))
    return out


def uncommon_probes(recorded):
    """The probe rows some host lacks: costing them on the others would
    make one column dearer than the next for want of a row, not a cost."""
    probes = [{r for r in rows if r.startswith(PROBE)}
              for _, _, rows in recorded]
    return sorted(set.union(*probes) - set.intersection(*probes))


def costed_alike(recorded):
    """@recorded (recorded_hosts()), each costed from the same rows: a
    probe row any host lacks is left out of all (uncommon_probes())."""
    drop = set(uncommon_probes(recorded))
    return [(label, machine, {r: v for r, v in rows.items()
                              if r not in drop})
            for label, machine, rows in recorded]


def hosts(state, repo):
    return costed_alike(recorded_hosts(state, repo))


# ------------------------------------------------------------ tables

def pairs(state):
    out = []
    for v in state["variants"]:
        if v["kind"] == "mainline":
            pda = next(p for p in state["variants"]
                       if p["kind"] == "pda" and p["target"] == v["target"])
            out.append((v["target"], v, pda))
    return out


def programs(v):
    return list(v["census"])


def path_summary(v, prog, name):
    p = v["census"][prog].get(name)
    if p is None or "na" in p:
        return None
    return summarise(p, name)


def empty_of(v, prog):
    return summarise(v["census"][prog][EMPTY])


def prog_label(target, prog):
    return f"{target}" + (" (32-bit program)" if prog.endswith("_32") else
                          " (64-bit program)"
                          if TARGETS[target].user_arch_64 else "")


def compared(state):
    """(target, program, path, (mainline, PDA) variants, their summaries)
    for each path either kernel measured, in table order."""
    for target, main, pda in pairs(state):
        for prog in programs(pda):
            for name, _ in PATHS:
                sums = tuple(path_summary(v, prog, name) for v in (main, pda))
                if sums != (None, None):
                    yield target, prog, name, (main, pda), sums


def summary_table(state, rows_host):
    out = []
    for target, prog, name, kernels, sums in compared(state):
        cells = [prog_label(target, prog), f"`{name}`"]
        for v, s in zip(kernels, sums):
            if s is None:
                cells += ["n/a"] * 5
                continue
            e = empty_of(v, prog)
            (pt, lo, hi), _ = estimate(s, e, name, rows_host)
            cells += [f"{fmt(loads(s))} ({fmt(loads(s, null=True))})",
                      fmt(loads(s, "fs")), fmt(instructions(s, e, name)),
                      f"{seg_cycles(s, name, rows_host):.0f}",
                      f"{pt:.0f} ({lo:.0f}–{hi:.0f})"]
        out.append(cells)
    return table(["target", "path",
                  "mainline: loads (null)", "`%fs` loads", "insns",
                  "seg. cycles", "est. cycles",
                  "PDA: loads (null)", "`%fs` loads", "insns",
                  "seg. cycles", "est. cycles"], out)


def difference(kernels, sums, prog, name):
    """Mainline → PDA on one path: the instruction difference, split
    into the segment operations' (exact counts) and the rest, against the
    spread of the windows.  None unless both kernels ran the path."""
    if None in sums:
        return None
    (main, pda), (a, b) = kernels, sums
    ea, eb = empty_of(main, prog), empty_of(pda, prog)
    ra = spread(main["census"][prog][name], ea, name)
    rb = spread(pda["census"][prog][name], eb, name)
    d = instructions(b, eb, name) - instructions(a, ea, name)
    dseg = seg_ops(b, name) - seg_ops(a, name)
    width = max(ra[1] - ra[0], rb[1] - rb[0])
    if d == dseg:
        verdict = "none" if d == 0 else "segment ops only"
    elif width == 0:
        verdict = "deterministic"
    elif abs(d - dseg) <= width:
        verdict = "inside the spread"
    else:
        verdict = "beyond the spread"
    return {"spreads": (ra, rb), "width": width, "insns": d, "seg": dseg,
            "rest": d - dseg, "verdict": verdict}


def span(r):
    return fmt(r[0]) if r[0] == r[1] else f"{fmt(r[0])}–{fmt(r[1])}"


def split_table(state, all_hosts):
    """Each difference, its segment part costed on every host, the rest
    beside the windows' spread."""
    out = []
    for target, prog, name, kernels, sums in compared(state):
        d = difference(kernels, sums, prog, name)
        if d is None:
            continue
        (ma, pa) = sums
        cells = [prog_label(target, prog), f"`{name}`",
                 span(d["spreads"][0]), span(d["spreads"][1]),
                 f"{d['insns']:+g}", f"{d['seg']:+g}", f"{d['rest']:+g}",
                 d["verdict"]]
        for _, _, rows in all_hosts:
            cells.append(f"{seg_cycles(pa, name, rows) - seg_cycles(ma, name, rows):+.0f}")
        out.append(cells)
    return table(["target", "path", "mainline insns, min–max of windows",
                  "PDA", "Δ insns (medians)", "of which segment ops",
                  "the rest", "the rest against the spread"] +
                 [f"Δ segment cycles, {m} ({lab})" for lab, m, _ in all_hosts],
                 out)


def host_estimates(state, all_hosts):
    """Each path's estimate, mainline → PDA, on every host; a difference
    the windows' spread holds is marked, not shown as a change."""
    out = []
    for target, prog, name, kernels, sums in compared(state):
        cells = [prog_label(target, prog), f"`{name}`"]
        d = difference(kernels, sums, prog, name)
        mark = f" (the rest {d['verdict']})" if d and d["verdict"] in (
            "inside the spread", "beyond the spread") else ""
        for _, _, rows in all_hosts:
            est = [f"{estimate(s, empty_of(v, prog), name, rows)[0][0]:.0f}"
                   if s else "n/a" for v, s in zip(kernels, sums)]
            cells.append(" → ".join(est) + mark)
        out.append(cells)
    return table(["target", "path"] + [f"{m} ({lab})"
                                       for lab, m, _ in all_hosts], out)


def census_table(state):
    """Every counter that is not 0 on either kernel, per path."""
    out = []
    for target, prog, name, _, (a, b) in compared(state):
        for k in sorted(set(seg_keys(a or {})) | set(seg_keys(b or {}))):
            out.append([prog_label(target, prog), f"`{name}`", f"`{k}`"] +
                       ["n/a" if s is None else fmt(s.get(k, 0))
                        for s in (a, b)])
    return table(["target", "path", "operation (u/k: mode; .null/.sel: "
                  "selector)", "mainline", "PDA"], out)


def cost_table(all_hosts):
    names = ["sel.mov.fs.null", "sel.mov.fs.user_ds", "sel.mov.gs.null",
             "sel.mov.gs.user_ds", "sel.pushpop.fs.user_ds",
             "sel.pushpop.gs.user_ds", "probe.iret", "probe.lsl",
             "probe.lar", "probe.verr"]
    out = []
    for label, machine, rows in all_hosts:
        for n in names:
            r = rows.get(n)
            out.append([label, f"`{n}`",
                        "not measured" if r is None else
                        f"{r['min']:.1f} / {r['median']:.1f}"])
    return table(["host", "segbench row", "cycles min / median"], out)


def null_vs_sel(all_hosts):
    out = []
    for label, machine, rows in all_hosts:
        for reg in ("fs", "gs"):
            a, b = rows.get(f"sel.mov.{reg}.null"), \
                rows.get(f"sel.mov.{reg}.user_ds")
            if a and b:
                out.append([f"{label}: {machine}", f"`%{reg}`",
                            f"{a['min']:.1f} / {a['median']:.1f}",
                            f"{b['min']:.1f} / {b['median']:.1f}",
                            f"{b['median'] / a['median']:.2f}"])
    return table(["host", "register", "null load, cycles min / median",
                  "non-null (`__USER_DS`)", "non-null / null (median)"],
                 out)


# ------------------------------------------------------------ answers

def up_saving(state, rows, name="sys.int80"):
    """What UP NOSEG saves on a null syscall: (loads, fs loads, insns,
    (point, low, high) cycles) mainline - PDA, or None."""
    for target, main, pda in pairs(state):
        if main["smp"] or not pda["up_noseg"]:
            continue
        prog = programs(pda)[0]
        a, b = path_summary(main, prog, name), path_summary(pda, prog, name)
        ea, eb = empty_of(main, prog), empty_of(pda, prog)
        if a is None or b is None:
            return None
        est_a, _ = estimate(a, ea, name, rows)
        est_b, _ = estimate(b, eb, name, rows)
        return {"target": target, "loads": (loads(a), loads(b)),
                "fs": (loads(a, "fs"), loads(b, "fs")),
                "insns": (instructions(a, ea, name),
                          instructions(b, eb, name)),
                "cycles": tuple(x - y for x, y in zip(est_a, est_b))}
    return None


def mixed_use(state, rows):
    """PDA kernels: a path with the PDA selector held against without."""
    out = []
    for target, _, pda in pairs(state):
        for prog in programs(pda):
            for base in ("sys.int80", "sys.vsyscall", "sys.syscall",
                         "ctxsw.same"):
                a = path_summary(pda, prog, base)
                b = path_summary(pda, prog, base + ".pda")
                if a is None or b is None:
                    continue
                e = empty_of(pda, prog)
                (pa, _, _), _ = estimate(a, e, base, rows)
                (pb, lo, hi), _ = estimate(b, e, base, rows)
                out.append([prog_label(target, prog), f"`{base}`",
                            f"{fmt(loads(a))} ({fmt(loads(a, null=False))})",
                            f"{fmt(loads(b))} ({fmt(loads(b, null=False))})",
                            f"{pb - pa:+.0f}"])
    return table(["PDA kernel", "path", "loads (non-null), register 0",
                  "loads (non-null), PDA selector held",
                  "Δ est. cycles"], out)


def saving_table(state, all_hosts):
    """UP NOSEG's saving on each null syscall path, per host."""
    out = []
    for label, machine, rows in all_hosts:
        for name in ("sys.int80", "sys.vsyscall"):
            sv = up_saving(state, rows, name)
            if not sv:
                continue
            p, lo, hi = sv["cycles"]
            out.append([f"{machine} ({label})", f"`{name}`",
                        f"{fmt(sv['fs'][0])} → {fmt(sv['fs'][1])}",
                        f"{fmt(sv['loads'][0])} → {fmt(sv['loads'][1])}",
                        f"{fmt(sv['insns'][0])} → {fmt(sv['insns'][1])}",
                        f"**{p:.0f}** ({min(lo, hi):.0f}–{max(lo, hi):.0f})",
                        kentry_saving(rows)])
    return table(["host", "null syscall", "`%fs` loads mainline → PDA",
                  "all selector loads", "instructions",
                  "cycles saved, ESTIMATE (range)",
                  "segbench's replay of the entry's `%fs` work, "
                  "mainline − UP_NOSEG (median)"], out)


def kentry_saving(rows):
    """segbench's sel.kentry rows: the %fs work of one UP kernel entry
    and exit, replayed in user mode, where a record has them."""
    a, b = rows.get("sel.kentry.fs.mainline"), \
        rows.get("sel.kentry.fs.noseg")
    if not (a and b):
        return "not recorded"
    return f"{a['median'] - b['median']:.0f} ({a['median']:.1f} − " \
        f"{b['median']:.1f})"


# ------------------------------------------------------------ section

def section(state, repo):
    recorded = recorded_hosts(state, repo)
    all_hosts = costed_alike(recorded)
    dropped = uncommon_probes(recorded)
    rows = all_hosts[0][2]
    m = state["host"]["machine"]
    out = [SECTION_BEGIN,
           "## The segment census: segment-register operations per kernel "
           "path", "",
           "**Method.** `tests/bench/seg_census.c` runs each path inside a "
           "window it opens and closes with a marker instruction; "
           "`tools/segcensus/segcensus.so`, a QEMU 7.2 TCG plugin, counts "
           "every executed instruction that writes a segment register (or "
           "probes a descriptor) inside the window, user and kernel mode apart "
           "(by address), on CPU 0 where the program runs (on every CPU for "
           "`migrate`), and tells a null selector load "
           "from a non-null one by whether the CPU read a descriptor. "
           f"Kernels: `make bench`'s, booted {state['runs']} times each "
           "under `-icount shift=0` as the rest of `make bench`; every window "
           "of every path was identical in every boot (checked, or the run "
           "fails). Each row is one real window, per operation: the median "
           "of 9 after a warm-up, by kernel instructions (context switch: a "
           "window is a pipe round trip, two switches, halved here, though "
           "a wakeup can straddle two windows; `migrate`: CPU 0 → 1 in the "
           "window, back outside it; `irq`: the cheapest window with a "
           "kernel entry, the bare tick, since others also hold softirq "
           "work or a switch, and with several vCPUs the TSC also jumps "
           "when another vCPU takes its turn). An instruction that faults "
           "counts once per attempt (QEMU runs it again after the fault). "
           "Not seen: base writes through `wrmsr` (kernels without "
           "FSGSBASE), `int1`.", "",
           "**Cycles are an estimate**, not a measurement: "
           "`cycles ≈ (I − S) × c + Σ n_k × cost_k`, with I the path's "
           "instructions, n_k its operations of kind k (S their sum), cost_k "
           "segbench's cycles for kind k on the host "
           f"({host_label(m)}; table below), c = {C_POINT:g} cycle per "
           f"other instruction (assumed; the range is c = {C_LOW:g} with the "
           f"min costs to c = {C_HIGH:g} with the medians). `int`, "
           "`sysenter`, `sysexit`, `syscall`, `sysret`, `swapgs`, far "
           "transfers and `lldt` cannot be timed from user mode: they count "
           "as ordinary instructions, so the estimate is low by what they "
           "cost beyond that; on x86-64, where the paths load no selector, "
           "the estimate is little more than the instruction count. `iret`, "
           "where every host record has `probe.iret`, is costed at a "
           "same-privilege `iret`, a lower bound of the kernel's return to "
           "user mode; a `pop` or `l*s` of "
           "a segment register at a `mov` of the same kind of selector. "
           "**Uncertainty:** the range only spans c and segbench's min and "
           "median; in a difference between two kernels whose other "
           "instructions match, c cancels and only the load costs remain. "
           "What it does not cover is larger: segbench times loads back "
           "to back in a loop on a virtualised host, while in the entry "
           "path a load overlaps with, or waits for, what is around it; "
           "read the figures as ± 50 %.", "",
           "Paths (`tests/bench/seg_census.c`; a window holds one "
           "operation unless said):", ""] + [
               f"- `{name}`: {what}" for name, what in PATHS] + [
           "",
           "### Per path (median per operation)", "",
           "Loads: selector loads of any register (`mov`, `pop`, `l*s`), the "
           "null ones in brackets; insns: user + kernel instructions of the "
           "path, the empty window's taken off.", "",
           summary_table(state, rows), "",
           f"![segment loads per path]({PLOT})", "",
           "### The estimate on each host with segbench figures in "
           "`results/` (cycles, mainline → PDA)", "",
           "Every column is costed from the same segbench rows: "
           + (", ".join(f"`{r}`" for r in dropped) + " (not in every "
              "record) is left out of all, as an ordinary instruction. "
              if dropped else "every record has every row used. ") +
           "A path marked *the rest inside the spread* differs between the "
           "kernels, beyond its segment operations, by less than its own "
           "windows vary: that is the path's noise, not something the "
           "series saves or costs; *beyond the spread*: see the next "
           "table.", "",
           host_estimates(state, all_hosts), "",
           "### What the segment operations account for", "",
           "Some paths are not deterministic: a wake-up, the stopper "
           "thread, an IPI or a softirq falls in some windows and not in "
           "others, so the windows of one kernel differ (identically in "
           "every boot). Each mainline → PDA difference of the medians is "
           "split into the segment operations' part (exact counts; their "
           "cycles below, per host) and the rest of the instructions, "
           "which is set against the wider of the two kernels' spreads "
           "(min–max over the windows): *deterministic* when every window "
           "of both kernels is the same (the difference is exact), *inside "
           "the spread* when the rest is no larger than the spread (noise), "
           "*beyond the spread* otherwise. The spread is one kernel's "
           "windows; it does not show how the interleaving of a "
           "non-deterministic path moves when the kernel image changes, "
           "which any change to the code does. So a rest beyond the spread "
           "is a difference this census cannot attribute: on `migrate` the "
           "series' own code is a test in `set_task_cpu()`, one on the "
           "way back to user space (`getcpu_cache_migrate()`, "
           "`getcpu_cache_handle_notify_resume()`; nothing registers a "
           "getcpu_cache here) and what `ctxsw.same` shows per context "
           "switch: a few instructions, not hundreds. "
           "`irq`'s figure is its cheapest window; its spread spans every "
           "window.", "",
           split_table(state, all_hosts), "",
           "### The 2006 questions", ""]
    sv = up_saving(state, rows)
    if sv:
        out += ["**What does a UP null syscall save under UP_NOSEG?** "
                f"On `{sv['target']}`, mainline loads "
                f"{fmt(sv['fs'][0])} `%fs` selector(s) per `int $0x80` "
                f"null syscall ({fmt(sv['loads'][0])} loads in all), the "
                f"PDA kernel {fmt(sv['fs'][1])} ({fmt(sv['loads'][1])}). "
                "The cycles saved, per host whose segbench figures are in "
                "`results/` (same counts, each host's costs):", ""]
        out += [saving_table(state, all_hosts), ""]
    out += ["**What does mixed use cost?** (Ingo's critique: user space "
            "with glibc's `%gs` TLS *and* the PDA selector, the kernel with "
            "its own `%fs`.) The PDA kernels, each path with the user's PDA "
            "register at 0 and holding the PDA selector:", "",
            mixed_use(state, rows), "",
            "**How does a null load compare with a non-null one?** "
            "segbench, `mov` to the register in a loop:", "",
            null_vs_sel(all_hosts), "",
            "### Every operation counted", "",
            census_table(state), "",
            "### Cost inputs (segbench, native, cycles)", "",
            "A `%ds`, `%es` or `%ss` load is costed as a `%fs` load; a "
            "host record made with segbench's x86-64 build has `%gs` rows "
            "only, which then stand in for `%fs`. A probe row that one "
            "record lacks is shown here but costed in no column (above).",
            "",
            cost_table(recorded), "",
            f"This part took {state['minutes']:.1f} min. Plugin output: "
            "`~/.cache/pda/logs/<kernel>/census-N.windows.txt`; raw windows "
            "in `results/census.json`.",
            SECTION_END]
    return "\n".join(out)


def readme_section(state, repo):
    all_hosts = hosts(state, repo)
    lines = [README_BEGIN,
             "### Segment loads per kernel path (`make bench`, the census)",
             "", "What UP_NOSEG saves on a null syscall of the UP kernel, "
             "counted exactly by a QEMU plugin in the guest (two boots "
             "agree); the cycles are an **estimate** from segbench's "
             "per-operation costs on each host, not a measurement, good to "
             "± 50 % (formula, uncertainty and every path in "
             "`results/REPORT.md`, \"The segment census\"):", ""]
    lines += [saving_table(state, all_hosts), "",
              f"![segment loads per path](results/{PLOT})", "",
              README_END]
    return "\n".join(lines)


# ------------------------------------------------------------ writing

def plot(state, results):
    labels, m, p = [], [], []
    for target, main, pda in pairs(state):
        prog = programs(pda)[0]
        for name in ("sys.int80", "sys.vsyscall", "sys.syscall",
                     "fault.anon", "ctxsw.same", "signal", IRQ):
            a, b = path_summary(main, prog, name), \
                path_summary(pda, prog, name)
            if a is None and b is None:
                continue
            labels.append(f"{target} {name}")
            m.append(None if a is None else loads(a))
            p.append(None if b is None else loads(b))
    out = results / PLOT
    bar_plot(out, "Segment-register loads per operation (median, counted "
             "by the segcensus QEMU plugin)", "selector loads", labels,
             [("mainline 6.12", m), ("PDA", p)])
    return out


def results_json(state):
    return {"method": {"runs": state["runs"], "qemu_args": state["qemu_args"],
                       "kernel_args": state["bench_args"],
                       "estimate": __doc__.split("\n\n")[1].strip()},
            "host": state["host"],
            "kernels": {v["label"]: {"target": v["target"],
                                     "kernel": v["kind"], "cpus": v["cpus"],
                                     "census": v["census"]}
                        for v in state["variants"]}}


def write(repo, state, readme):
    """results/census.json and the plot; readme: the README headline
    (not after a subset of the targets)."""
    written = [write_results_json(repo, "census.json", results_json(state)),
               plot(state, Path(repo) / "results")]
    if readme:
        written.append(replace_readme(repo, (README_BEGIN, README_END),
                                      readme_section(state, repo)))
    return written
