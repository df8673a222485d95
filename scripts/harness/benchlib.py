# SPDX-License-Identifier: GPL-2.0
"""What every part of make bench shares: how its kernels are built and
booted, its initramfs, the host it ran on, and the Markdown and results/
files it writes.  A part is a module with a BenchPart record, listed in
benchparts.py; Documentation/harness/adding-a-bench-part.md says how.
"""

import dataclasses
import json
import os
import re
import subprocess
import time
from pathlib import Path
from typing import Callable, NamedTuple, Optional

from . import boot, guest, targetrun
from .markers import replace_marked
from .paths import LOGS, REPO
from .progress import Phase, StepFailed, fail, say
from .targets import TARGETS

# Every kernel is booted this many times and its figures must agree.
RUNS = 2
BOOT_TIMEOUT = 900
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
# The bench kernels, mainline and PDA: test-only options off.
BENCH_CONFIG = REPO / "configs/bench.config"


@dataclasses.dataclass(frozen=True)
class BenchPart:
    """One part of make bench after the mainline/PDA comparison.

    name: its `--only` name.  key: where bench-state.json keeps its state.
    targets: the targets it boots, which target names given to `--only`
    narrow; None: its own kernels, whatever targets run.
    measure(pristine, tree, unverified, timings, targets) -> state, JSON.
    write(repo, state, readme) -> paths written: its results/ files, and
    with readme its README headline (not after a subset of the targets).
    section(state, repo) -> its REPORT.md section, between markers.
    """
    name: str
    key: str
    targets: Optional[tuple]
    measure: Callable
    write: Callable
    section: Callable
    markers: tuple


# ------------------------------------------------------- the kernels

class Kernel(NamedTuple):
    """One of a target's two bench kernels."""
    kind: str           # "mainline" or "pda"
    src: Path
    label: str          # the boot's, its logs' and its results' name
    build_label: str    # its build directory under the cache
    unverified: tuple   # requested options not to check (kbuild.configure)


def kernel_pair(name, pristine, tree, unverified):
    """Mainline straight from the pristine tree (the series' options do
    not exist there, so they are not checked), then PDA."""
    return (Kernel("mainline", pristine, f"mainline-{name}",
                   f"mainline-{name}", tuple(unverified)),
            Kernel("pda", tree, name, f"bench-{name}", ()))


def build(target, src, label, unverified, timings,
          fragments=(BENCH_CONFIG,)):
    """label: the build directory and log directory under the cache."""
    start = time.monotonic()
    bdir = targetrun.kernel(target, src, label=label, unverified=unverified,
                            extra_fragments=fragments)
    timings.append((label, "configure + build", time.monotonic() - start))
    return bdir


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


# ------------------------------------------------------ user space

def initramfs(arch, tree, out, log):
    """A guest.Initramfs whose /init is tests/guest's for @arch, built in
    @out and stripped (guest.stripped() says why)."""
    init = guest.build_init(arch, tree, out, log)
    return guest.Initramfs(guest.stripped(init, arch, log))


def write_initramfs(fs, tree, cpio, log):
    fs.write(tree, cpio, log, mtime=CPIO_MTIME)
    return cpio


# ------------------------------------------------------------ boots

def bench_args(target):
    """The kernel arguments of a target's bench boots."""
    return " ".join(filter(None, (BENCH_ARGS, target.arch.icount_args)))


def icount_boot(target, label, bdir, cpio, console, what,
                qemu_args=QEMU_ARGS):
    """One boot under -icount as every part boots: on the target's
    icount_cpus (bench.BENCH_CPUS_WHY), bench_args(); returns the console
    text, or fails the run naming @what."""
    target = dataclasses.replace(target,
                                 cpus=target.icount_cpus or target.cpus)
    with Phase(label, f"{what} (qemu -icount shift=0, {target.cpus} CPUs)",
               console):
        outcome, rep = boot.icount(target, bdir, cpio, console, BOOT_TIMEOUT,
                                   bench_args(target), qemu_args)
    if outcome != boot.PASS:
        fail(f"[{label}] {what}: {boot.describe(outcome, rep)}", console)
    return Path(console).read_text(errors="replace")


def boot_until_identical(label, what, boot_once, differences, timings,
                         logs):
    """boot_once(n) RUNS times; differences(runs) names what is not the
    same in every run, and anything it names fails the run.  @what names
    the boots in the timings, @logs where to look."""
    runs = []
    for n in range(1, RUNS + 1):
        start = time.monotonic()
        runs.append(boot_once(n))
        timings.append((label, f"{what} {n}", time.monotonic() - start))
    diffs = differences(runs)
    if diffs:
        raise StepFailed(f"[{label}] {what}: the figures differ between the "
                         f"{RUNS} boots:\n    " + "\n    ".join(diffs) +
                         f"\n  logs: {logs}")
    say(f"[{label}] {what}: identical in {RUNS} boots")
    return runs


def pda_kernel_boots(names, pristine, tree, unverified, timings, what,
                     initramfs, boot_once, differences, console):
    """For each target of @names, make bench's PDA kernel (built once per
    run, kbuild's cache) booted RUNS times, whose figures must agree:
    initramfs(target, tree), once per user-space architecture, and
    boot_once(target, label, bdir, cpio, n) -> figures.  @what names the
    boots, @console their consoles under the kernel's log folder (a glob,
    for the message).  Returns {name: the first boot's figures}."""
    results, cpios = {}, {}
    for name in names:
        target = TARGETS[name]
        arch = target.user_arch_64 or target.user_arch
        if arch not in cpios:
            cpios[arch] = initramfs(target, tree)
        pda = kernel_pair(name, pristine, tree, unverified)[1]
        bdir = build(target, pda.src, pda.build_label, pda.unverified,
                     timings)
        results[name] = boot_until_identical(
            pda.label, what,
            lambda n: boot_once(target, pda.label, bdir, cpios[arch], n),
            differences, timings, f"{LOGS / pda.label}/{console}")[0]
    return results


# ------------------------------------------------------------ host

def machine():
    """The host a part measured on, for its report."""
    model = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu_model": model, "host_cpus": os.cpu_count(),
            "loadavg": " ".join(Path("/proc/loadavg").read_text()
                                .split()[:3])}


def qemu_version(qemu):
    out = subprocess.run([qemu, "--version"], stdout=subprocess.PIPE,
                         text=True).stdout
    return out.splitlines()[0] if out else "QEMU"


# --------------------------------------------------------- Markdown

def fmt(v, prec=2):
    """Numbers as the tables show them: integers without decimals."""
    if v is None:
        return "n/a"
    if abs(v - round(v)) < 0.005:
        return str(int(round(v)))
    return f"{v:.{prec}f}"


def table(head, rows, align=None):
    """align: a column's Markdown rule; by default the first column is
    left-aligned and the others, figures, right-aligned."""
    align = align or ["---"] + ["---:"] * (len(head) - 1)
    out = ["| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def gnuplot(script):
    proc = subprocess.run(["gnuplot"], input=script, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if proc.returncode:
        raise RuntimeError(f"gnuplot failed:\n{proc.stdout}")


def bar_plot(out, title, ylabel, labels, series):
    """Clustered bars: labels along x, one bar per (name, values)."""
    series = [(n, vs) for n, vs in series if any(v is not None for v in vs)]
    data = out.with_suffix(".dat")
    lines = ["label " + " ".join(f'"{n}"' for n, _ in series)]
    for i, lab in enumerate(labels):
        vals = ["NaN" if vs[i] is None else f"{vs[i]:.2f}"
                for _, vs in series]
        lines.append(f'"{lab}" ' + " ".join(vals))
    data.write_text("\n".join(lines) + "\n")
    plots = ", ".join(f"'{data}' using {k + 2}:xtic(1) title columnhead"
                      for k in range(len(series)))
    script = f"""
set terminal svg size 960,480 dynamic font "sans,11" background "white"
set output '{out}'
set title "{title}"
set ylabel "{ylabel}"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set xtics rotate by -25 scale 0
set key top left
set grid ytics
set yrange [0:*]
plot {plots}
"""
    gnuplot(script)
    data.unlink()


# ------------------------------------------------- results/, README

def write_results_json(repo, name, data, sort_keys=True):
    """results/NAME as make bench writes it: sorted keys, so that a run's
    files can be compared with the committed ones."""
    results = Path(repo) / "results"
    results.mkdir(exist_ok=True)
    path = results / name
    path.write_text(json.dumps(data, indent=1, sort_keys=sort_keys) + "\n")
    return path


def read_results_json(repo, name, order):
    """The state a part wrote as results/@name (write_results_json), read
    back: its "guests" in @order, the order the part runs them (the file
    sorts them by name); None without the file."""
    path = Path(repo, "results", name)
    if not path.exists():
        return None
    state = json.loads(path.read_text())
    rank = {t: i for i, t in enumerate(order)}
    state["guests"] = dict(sorted(
        state["guests"].items(),
        key=lambda kv: (rank.get(kv[0], len(rank)), kv[0])))
    return state


def replace_readme(repo, markers, section):
    """README.md's region between @markers, which must be there, once."""
    path = Path(repo) / "README.md"
    path.write_text(replace_marked(path.read_text(), *markers, section))
    return path


def replace_section(repo, markers, section):
    """A part's section of results/REPORT.md in place, after a run of that
    part alone (a full run writes the whole report); appended if the
    report does not have it yet."""
    report = Path(repo) / "results/REPORT.md"
    text = report.read_text() if report.exists() else ""
    if all(m in text for m in markers):
        text = replace_marked(text, *markers, section)
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    report.write_text(text)
    return report
