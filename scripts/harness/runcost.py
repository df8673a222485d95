# SPDX-License-Identifier: GPL-2.0
"""make run's closing table: what the CPU-number methods cost.

The guest's figures are instruction counts (qemu -icount shift=0): exact
and the same on every run, but not cycles: `lsl` is one instruction and
tens of cycles, rseq's `cpu_id` load one instruction and under one
cycle.  So beside the guest's counts of each cpu.* row it printed go
host cycles, from one of two places, each labelled:

  this run      segbench run natively on this host now, as make bench
                runs it (bench.host_segbench): the i386 build; the x86-64
                build on a host that cannot run 32-bit programs
                (hostcaps.py), whose rows that need 32-bit mode are then
                skipped
  results/      the records tools/segbench/record.sh wrote,
                results/host-<cpu>.json, one column per machine, each
                named with its file, machine and date: instead of this
                run's (not an x86 host, an emulated CPU, a failure), or
                after it for a method the guest measured that this host
                could not and a record did (cpu.pda on the x86-64 build)
"""

import json
import platform
import re
from dataclasses import dataclass, field
from pathlib import Path

from . import bench, ktap
from .arches import ARCHES, HOST
from .paths import REPO
from .progress import StepFailed

PREFIX = "cpu."
RESULTS = REPO / "results"
GUEST_HEAD = ("guest instructions", "(-icount, exact)")
HOST_HEAD = "host cycles, min / median"
THIS_RUN = "this run"

# One row of segbench's text table (output.c): name, min cyc, med cyc,
# min ns or insn, med ns or insn, x ref, then the note.
TEXT_ROW = re.compile(r"^(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)"
                      r"(?:\s+(.*))?$")


@dataclass
class Host:
    """One host column: its header's last lines (machine, date or "this
    run"), where its figures come from (below the table), and its segbench
    JSON results by name."""
    label: tuple
    source: str
    rows: dict = field(default_factory=dict)


# ------------------------------------------------------------ the guest

def guest_rows(console_text, test="segbench"):
    """[(name, figure, note)]: the cpu.* rows segbench's text table
    printed in the guest's @test, in its order.  figure: the median
    instruction count as printed, "min / median" if they differ, None for
    a skipped row; note: the row's note ("skipped: " removed)."""
    rows = []
    for line in ktap.test_blocks(console_text).get(test, []):
        m = TEXT_ROW.match(line.strip())
        if not m or not m.group(1).startswith(PREFIX):
            continue
        name, _, _, lo, med, _, note = m.groups()
        note = (note or "").strip()
        if note.startswith("skipped:"):
            rows.append((name, None, note.removeprefix("skipped:").strip()))
            continue
        rows.append((name, med if lo == med else f"{lo} / {med}",
                     note.replace("[emulated]", "emulated:").strip()))
    return rows


# ------------------------------------------------------------ the host

def record_files(paths):
    """The records of @paths (results/host-*.json) to show, by name: each
    machine's main record, host-<cpu>.json (the i386 build, what the guest
    runs), or host-<cpu>-x86_64.json where record.sh could not run the
    i386 build; never a second run (-run2)."""
    best = {}
    for path in map(Path, paths):
        stem = path.name.removesuffix(".json")
        if not stem.startswith("host-") or stem.endswith("-run2"):
            continue
        cpu = stem.removesuffix("-x86_64")
        if cpu not in best or stem == cpu:
            best[cpu] = path
    return [best[cpu] for cpu in sorted(best)]


def short_machine(machine):
    """"Intel Xeon f6m207" from segbench's machine record: two words of
    the model, family and model numbers (the whole name goes below the
    table)."""
    model = re.sub(r"\((R|r|TM|tm)\)|\bProcessor\b|\bCPU\b|@.*", "",
                   machine.get("cpu_model", "?"))
    ids = re.match(r"family (\d+) model (\d+)", machine.get("cpu_id", ""))
    return " ".join(model.split()[:2] +
                    ([f"f{ids[1]}m{ids[2]}"] if ids else []))


def build_name(machine):
    arch = ARCHES.get(machine.get("arch"))
    return f"{arch.bits}-bit program" if arch else machine.get("arch", "?")


def host_from(data, where, when=None):
    """A Host of segbench JSON @data; @where: the file or what ran it;
    @when: THIS_RUN, or None for the record's own date."""
    m = data.get("machine", {})
    date = m.get("date", "no date")
    label = (short_machine(m), when or date[:10])
    virt = " ".join(m.get("virt", "?").split())
    source = (f"{where}; {m.get('cpu_model', '?')} ({m.get('cpu_id', '?')}),"
              f" {build_name(m)}, {virt}, load {m.get('loadavg', '?')}, "
              f"{date}")
    rows = {r["name"]: r for r in data.get("results", [])
            if r.get("name", "").startswith(PREFIX)}
    return Host(label, source, rows)


def measured(host, name):
    r = host.rows.get(name)
    return bool(r) and r.get("status") == "ok" and \
        r.get("min_cycles") is not None


def recorded(results=RESULTS):
    """A Host per machine recorded in @results."""
    hosts = []
    for path in record_files(sorted(Path(results).glob("host-*.json"))):
        shown = path.relative_to(REPO) if path.is_relative_to(REPO) else path
        hosts.append(host_from(json.loads(path.read_text()), shown))
    return hosts


def native():
    """segbench's cpu.* rows, measured on this host now as make bench
    measures it (bench.host_segbench).  StepFailed when it cannot."""
    if platform.machine() != HOST.name:
        raise StepFailed(f"not an x86 host ({platform.machine()})")
    data = bench.host_segbench(("--filter", PREFIX), "run-host")
    if not data.get("meaningful", True):
        raise StepFailed("segbench finds an emulated CPU here: its cycles "
                         "mean nothing")
    return host_from(data, f"this host now, segbench --filter {PREFIX}, "
                     f"the {data['build']} build (log {data['log']})",
                     THIS_RUN)


def hosts(wanted, measure=native, results=RESULTS):
    """([Host], why): this host's cycles of the methods @wanted, and the
    records in @results when it could not measure them all, or at all;
    why: why the records are shown ("" when they are not)."""
    try:
        mine = measure()
    except (StepFailed, OSError, ValueError) as e:
        lines = str(e).strip().splitlines()
        return recorded(results), ("this run measured no host cycles: " +
                                   (lines[0] if lines else type(e).__name__))
    missing = [name for name in wanted if not measured(mine, name)]
    records = recorded(results)
    filled = [name for name in missing
              if any(measured(h, name) for h in records)]
    if not filled:
        return [mine], ""
    return [mine] + records, \
        f"this host could not measure {', '.join(filled)}"


# ------------------------------------------------------------ the table

def cycles(low, mid):
    """"min / median", both to 2 decimals below 10 cycles, else 1."""
    digits = 2 if low < 10 else 1
    return f"{low:.{digits}f} / {mid:.{digits}f}"


def table(guest_rows, hosts, why_recorded=""):
    """The closing table's lines: a row per cpu.* method the guest
    printed, its instruction count beside each host's cycles; notes and
    sources below, so no figure goes unlabelled."""
    notes = []

    def mark(text):
        if text not in notes:
            notes.append(text)
        return f"[{notes.index(text) + 1}]"

    def host_cell(host, name):
        r = host.rows.get(name)
        if r is None:
            return "n/a " + mark("host: segbench had no such row")
        if not measured(host, name):
            return "n/a " + mark(f"host: {r.get('note') or 'skipped'}")
        cell = cycles(r["min_cycles"], r["median_cycles"])
        if r.get("emulated"):
            cell += " " + mark("host: emulated, the host kernel has no "
                               "PDA: a descriptor of the same shape "
                               f"({r.get('note', '')})")
        return cell

    def guest_cell(figure, note):
        if figure is None:
            return "n/a " + mark(f"guest: {note or 'skipped'}")
        return figure + (" " + mark(f"guest: {note}") if note else "")

    head = [("method", "", "")] + [GUEST_HEAD + ("",)] + \
        [(HOST_HEAD,) + h.label for h in hosts]
    body = [[name, guest_cell(fig, note)] +
            [host_cell(h, name) for h in hosts]
            for name, fig, note in guest_rows]
    heads = [[col[k] for col in head] for k in range(3)]
    widths = [max(len(cells[i]) for cells in heads + body)
              for i in range(len(head))]

    def line(cells):
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))
                         ).rstrip()

    out = ["== what each method costs: guest instructions are not "
           "cycles =="]
    out += [line(cells) for cells in heads if any(cells)]
    out += [line(cells) for cells in body]
    out += [f"[{i}] {text}" for i, text in enumerate(notes, 1)]
    out.append("guest instructions: per read, in the i386-smp guest above, "
               "exact under -icount; one instruction is not one cycle")
    for h in hosts:
        out.append(f"host cycles, {', '.join(h.label)}: {h.source}")
    if not hosts:
        out.append(f"no host cycles: {why_recorded or 'none measured'}; "
                   "results/ holds no host-*.json either")
    elif why_recorded:
        out.append(f"recorded cycles (tools/segbench/record.sh) shown: "
                   f"{why_recorded}")
    return out
