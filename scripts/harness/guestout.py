# SPDX-License-Identifier: GPL-2.0
"""What segbench and pda_bench print, checked the same way on the host and
in the guests.

On a host that runs 32-bit x86 programs, tests/host/segbench and
tests/host/bench run the i386 builds natively and check their output with
these functions.  `make check` also runs the same programs in every guest
(PROGRAMS) and checks what they printed on the console with the same
functions after the boot, so a host that cannot run them (hostcaps.py)
loses none of these checks.
"""

import fnmatch
import json

from . import ktap
from .arches import ARCHES

# Guest tests of segbench's output: name -> arguments.  Exit status is the
# first check (segbench_inc_exact fails on any inexact count); the output
# of the others is checked by OUTPUT_CHECKS after the boot.
JSON_FILTER = "cpu.*"
CSV_FILTER = "probe.*"
SEGBENCH = {
    "segbench_list": ["--list"],
    "segbench_json": ["--quick", "--filter", JSON_FILTER, "--json"],
    "segbench_csv": ["--quick", "--filter", CSV_FILTER, "--csv"],
    "segbench_inc_exact": ["--quick", "--filter", "inc.*"],
}
# The increment-form rows (tools/segbench/bench_incform.c) are x86 only:
# guest test -> arguments, for the x86 builds of SEGBENCH's guests.
INCFORM_FILTER = "incform."
INCFORM_MIN_ROWS = 21
SEGBENCH_X86 = {
    "segbench_incform": ["--quick", "--filter", INCFORM_FILTER, "--json"],
}
PDA_BENCH = "pda_bench"
PREFIX = "pda-bench: "


def parse_bench_lines(lines):
    """pda_bench's lines -> {"ops": {op: row}, "info": {}, "failed": []}.
    A row is {"min": float, "median": float, "reps": int, "iters": int,
    "unit": str} or {"na": reason}."""
    out = {"ops": {}, "info": {}, "failed": []}
    for line in lines:
        if not line.startswith(PREFIX):
            continue
        words = line[len(PREFIX):].split(None, 1)
        if len(words) < 2:
            continue
        op, rest = words
        if op == "info":
            for kv in rest.split():
                k, _, v = kv.partition("=")
                out["info"][k] = v
        elif rest.startswith("n/a"):
            out["ops"][op] = {"na": rest[3:].strip()}
        elif rest.startswith("FAILED"):
            out["failed"].append(f"{op}: {rest}")
        else:
            kv = dict(w.partition("=")[::2] for w in rest.split())
            out["ops"][op] = {"min": float(kv["min"]),
                              "median": float(kv["median"]),
                              "reps": int(kv["reps"]),
                              "iters": int(kv["iters"]),
                              "unit": kv.get("unit", "")}
    return out


def listed(list_text, pattern=None):
    """Benchmark names in `segbench --list` output, matching a --filter
    pattern the way segbench does (a glob if it has *?[, else a part)."""
    names = [line.split()[0] for line in list_text.splitlines()
             if line.strip()]
    if pattern is None:
        return names
    if any(c in pattern for c in "*?["):
        return [n for n in names if fnmatch.fnmatchcase(n, pattern)]
    return [n for n in names if pattern in n]


def list_problems(list_text):
    names = listed(list_text)
    if not names:
        return ["--list printed no benchmark"]
    dups = sorted({n for n in names if names.count(n) > 1})
    return [f"--list names twice: {', '.join(dups)}"] if dups else []


def json_problems(json_text, list_text, pattern=JSON_FILTER):
    """--json: valid, from segbench, one result per listed benchmark, and
    the reference row (rseq) measured."""
    try:
        d = json.loads(json_text)
    except ValueError as e:
        return [f"--json is not JSON: {e}"]
    if d.get("tool") != "segbench":
        return [f"--json: tool is {d.get('tool')!r}, not 'segbench'"]
    got = [r.get("name") for r in d.get("results", [])]
    want = listed(list_text, pattern)
    problems = []
    if got != want:
        problems.append(f"--json rows {got} are not the listed {want}")
    if not any(r.get("name") == "cpu.rseq" and r.get("status") == "ok"
               for r in d.get("results", [])):
        problems.append("--json: cpu.rseq was not measured")
    return problems


def csv_problems(csv_text, list_text, pattern=CSV_FILTER):
    """--csv: the header, then one row per listed benchmark."""
    lines = [line for line in csv_text.splitlines() if line.strip()]
    if not lines or not lines[0].startswith("name,group,status"):
        return ["--csv does not start with the name,group,status header"]
    want = len(listed(list_text, pattern))
    if len(lines) - 1 != want:
        return [f"--csv has {len(lines) - 1} rows, --list has {want}"]
    return []


def incform_problems(json_text, list_text, skips_allowed=True):
    """The incform rows: every listed one in --json, each run and counting
    exactly (it checks its words, in the slot its base selects) or, where
    @skips_allowed (a host whose kernel may refuse modify_ldt()), skipped
    with a reason, and the no-prefix baselines never skipped.  make
    check's guests run our kernels, whose LDT works: no skip there."""
    want = listed(list_text, INCFORM_FILTER)
    if len(want) < INCFORM_MIN_ROWS:
        return [f"--list --filter {INCFORM_FILTER} lists {len(want)} rows, "
                f"not at least {INCFORM_MIN_ROWS}: {want}"]
    try:
        rows = json.loads(json_text).get("results", [])
    except ValueError as e:
        return [f"--json is not JSON: {e}"]
    got = [r.get("name") for r in rows]
    problems = [] if got == want else [f"--json rows {got} are not {want}"]
    for r in rows:
        if r.get("status") == "skip":
            if not skips_allowed or ".plain." in r["name"] or \
                    not r.get("note"):
                problems.append(f"{r['name']} skipped: {r.get('note')!r}")
        elif r.get("exact") is not True:
            problems.append(f"{r['name']} count wrong: {r.get('note')}")
    return problems


PDA_BENCH_OPS = ("fault.anon", "ctxsw.same.none", "ctxsw.same.rseq",
                 "ctxsw.same.getcpu_cache")
# The null system call, by each entry path the build has.
PDA_BENCH_SYSCALLS = {a.name: a.pda_bench_syscalls for a in ARCHES.values()
                      if a.pda_bench_syscalls}


def pda_bench_problems(lines, unit):
    """The C program and make bench's parser agree: every op is there,
    in @unit ("ticks" without -icount), min <= median."""
    r = parse_bench_lines(lines)
    problems = list(r["failed"])
    build = r["info"].get("build", "")
    if build not in PDA_BENCH_SYSCALLS:
        problems.append(f"info build={build!r}: not one of "
                        f"{sorted(PDA_BENCH_SYSCALLS)}")
        return problems
    for op in PDA_BENCH_SYSCALLS[build] + PDA_BENCH_OPS:
        row = r["ops"].get(op)
        if row is None:
            problems.append(f"{op}: missing")
        elif "na" not in row and (row["unit"] != unit or
                                  row["min"] > row["median"]):
            problems.append(f"{op}: {row}")
    return problems


def pda_bench_unit(blocks):
    """Instructions under -icount (its info line says), else ticks."""
    info = parse_bench_lines(blocks.get(PDA_BENCH, []))["info"]
    return "insns" if info.get("clock", "").startswith("icount") else \
        "ticks"


def _block_text(blocks, name):
    return "\n".join(blocks.get(name, []))


def _json_part(text):
    """The JSON document in a console block: kernel messages cannot land
    inside it (the console is quiet), but be strict about what is around."""
    start, end = text.find("{"), text.rfind("}")
    return text[start:end + 1] if start >= 0 else text


def _csv_part(text):
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines)
                  if line.startswith("name,group,status")), len(lines))
    return "\n".join(lines[start:])


def console_checks(console_text, report):
    """Results for the output of the guest programs above that passed in
    this boot's @report, from its console."""
    passed = {r.name for r in report.results if r.status == "pass"}
    blocks = ktap.test_blocks(console_text)
    lst = _block_text(blocks, "segbench_list")
    checks = {
        "segbench_list": lambda: list_problems(lst),
        "segbench_json": lambda: json_problems(
            _json_part(_block_text(blocks, "segbench_json")), lst),
        "segbench_csv": lambda: csv_problems(
            _csv_part(_block_text(blocks, "segbench_csv")), lst),
        "segbench_incform": lambda: incform_problems(
            _json_part(_block_text(blocks, "segbench_incform")), lst,
            skips_allowed=False),
        PDA_BENCH: lambda: pda_bench_problems(
            blocks.get(PDA_BENCH, []), pda_bench_unit(blocks)),
    }
    results = []
    for name, check in checks.items():
        if name not in passed:
            continue
        problems = check()
        results.append(ktap.Result(f"{name}:output",
                                   "fail" if problems else "pass",
                                   "; ".join(problems)))
    return results
