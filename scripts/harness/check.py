# SPDX-License-Identifier: GPL-2.0
"""make check: host tests, every target in QEMU, i386-smp in Bochs."""

import os
import shutil
import subprocess
import time
from pathlib import Path

from . import boot, fsuse, hostcaps, kbuild, ktap, source, targetrun, \
    tree as tree_mod
from .paths import BUILD, CACHE, LOGS, REPO
from .progress import Phase, StepFailed, reset_log, say, tail
from .targets import CHECK_ORDER, TARGETS

BOCHS_TIMEOUT = 1500


def patched_tree():
    """Pristine + our series.  PDA_OVERLAY and PDA_TREE_DIR let the host
    tests point this at a fixture series and a scratch tree."""
    pristine, _ = source.pristine()
    overlay = Path(os.environ.get("PDA_OVERLAY") or REPO)
    tree = Path(os.environ.get("PDA_TREE_DIR") or CACHE / "tree")
    with Phase("tree", f"overlay + {overlay / 'patches/series'}"):
        tree_mod.prepare(pristine, tree, overlay, overlay / "patches")
    return pristine, tree


def host_tests(pristine, tree):
    """tests/host/*/run: each prints TAP; every TAP line is one test."""
    rows = []
    can, how = hostcaps.i386()
    say(f"[host] executes 32-bit x86 programs: {how}" + (
        "" if can else "; the checks that need it are skipped here and "
        "run in the i386 guests"))
    for run in sorted((REPO / "tests/host").glob("*/run")):
        name = run.parent.name
        log = reset_log(LOGS / "host" / f"{name}.log")
        env = dict(os.environ, PDA_PRISTINE=str(pristine),
                   PDA_TREE=str(tree), PDA_REPO=str(REPO))
        with Phase("host", f"{name} tests", log):
            with open(log, "w") as out:
                rc = subprocess.call([run], cwd=REPO, env=env, stdout=out,
                                     stderr=subprocess.STDOUT)
        rep = ktap.read(log)
        if rc != 0 and not rep.count("fail"):
            rep.results.append(ktap.Result(f"{name} exit status", "fail",
                                           f"exit {rc}"))
        outcome = boot.FAIL if rep.count("fail") else boot.PASS
        if outcome != boot.PASS:
            say(f"[host] {name} failed, log: {log}\n{tail(log)}")
        rows.append((f"host:{name}", outcome, rep, str(log)))
    return rows


def qemu_target(name, tree, extra, args="", full=False):
    """args: extra kernel arguments (pda.seed=N); full: make check-full."""
    target = TARGETS[name]
    bdir = targetrun.kernel(target, tree)
    cpio = BUILD / name / "initramfs.cpio"
    cpio.parent.mkdir(parents=True, exist_ok=True)
    skipped = targetrun.initramfs(target, tree, cpio, None, extra,
                                  full=full, kernel_dir=bdir)
    outcome, rep, console, accel = targetrun.boot_qemu(
        target, bdir, cpio, targetrun.QEMU_TIMEOUT, extra_args=args, not_run=skipped)
    if "CONFIG_X86_PDA_UP_NOSEG=y" in (bdir / ".config").read_text():
        for r in fsuse.check_vmlinux(bdir / "vmlinux"):
            say(f"[{name}] vmlinux {r.name}: {r.status}: {r.detail}")
            rep.results.append(r)
            if r.status == "fail" and outcome == boot.PASS:
                outcome = boot.FAIL
    if outcome != boot.PASS:
        say(f"[{name}] {outcome}; console log: {console}\n{tail(console)}")
    return (name, outcome, rep, f"{accel}, {target.cpus} CPUs, {console}")


def bochs_target(name, tree, extra, args="", full=False, programs=None,
                 label=None):
    """A QEMU target's bzImage on an isolinux ISO, in Bochs.  programs:
    the names to run (default: the target's, else all); label: the run's,
    for its logs."""
    kernel, cpus = TARGETS[name].kernel, TARGETS[name].cpus
    target = TARGETS[kernel]
    programs = programs or TARGETS[name].programs or None
    # Configured and built once per run, by its QEMU target's boot or here.
    bdir = targetrun.kernel(target, tree)
    label = label or name
    cpio = BUILD / label / "initramfs.cpio"
    cpio.parent.mkdir(parents=True, exist_ok=True)
    chosen = None
    if programs is not None:
        chosen = [p for p in targetrun.target_programs(target, tree)[1]
                  if p[0] in programs]
    skipped = targetrun.initramfs(target, tree, cpio, chosen, extra,
                                  label=name, full=full)
    log = reset_log(LOGS / label / "isoimage.log")
    # genimage.sh copies FDINITRD into the ISO but leaves initrd= out of
    # isolinux.cfg, so name it in the command line ourselves.  Bochs's
    # UART sends at the programmed baud rate in guest time: at the default
    # 9600 a boot took 91 s instead of 48, and cpu_agree 8 s instead of 1.
    args = (f"initrd={cpio.name} console=ttyS0,115200 panic=-1 "
            f"pda.cpus={cpus} "
            f"pda.timeout={BOCHS_TIMEOUT // 3} pda.bochs pda.emul "
            f"{TARGETS[name].append} {args}").strip()
    with Phase(label, "make isoimage", log), \
            targetrun.build_lock(target.name):
        kbuild.build(target, tree, bdir, log,
                     ["isoimage", f"FDINITRD={cpio}", f"FDARGS={args}"])
        iso = BUILD / label / "image.iso"
        shutil.copyfile(bdir / "arch/x86/boot/image.iso", iso)
    console = LOGS / label / "console.log"
    with Phase(label, f"boot + tests in Bochs ({kernel}, {cpus} CPUs)",
               console):
        outcome, rep = boot.bochs(iso, BUILD / label, console, BOCHS_TIMEOUT,
                                  TARGETS[name].bochs_count or cpus,
                                  TARGETS[name].bochs_cpu, name,
                                  ktap.packed_tests(cpio))
    rep.results += skipped
    say(f"[{label}] {boot.describe(outcome, rep)}")
    boot.report_lines(rep, console)
    if outcome != boot.PASS:
        say(f"[{label}] {outcome}; console log: {console}\n{tail(console)}")
    return (label, outcome, rep, f"{kernel}, {cpus} CPUs, {console}")


def summary(rows, started):
    say("")
    say("== summary ==")
    totals = {"pass": 0, "fail": 0, "skip": 0, "xfail": 0}
    worst = 0
    for name, outcome, rep, where in rows:
        for k in totals:
            totals[k] += rep.count(k) if rep else 0
        if rep is None:
            totals["fail"] += 1
        worst = max(worst, boot.EXIT.get(outcome, 5))
        counts = boot.describe(outcome, rep) if rep else outcome
        say(f"{name:<16} {counts}  ({where})")
        for r in rep.results if rep else []:
            # Skips of a host check say where the check runs instead.
            if r.status == "xfail" or r.detail.startswith("not run") or \
                    (r.status == "skip" and name.startswith("host:")):
                say(f"{'':<16} {r.name}: {r.detail}")
    say(f"time: {(time.monotonic() - started) / 60:.1f} min")
    skipped = totals["skip"] + totals["xfail"]
    named = sum(1 for row in rows if row[2] for r in row[2].results
                if r.detail.startswith("expected skip"))
    say(f"skips the tests reported themselves, each allowed by "
        f"tests/expected-skips: {named} (counted as skipped)")
    say(f"{totals['pass']} passed, {totals['fail']} failed, "
        f"{skipped} skipped")
    return worst


def guest_targets(names, tree, extra=None, args="", full=False):
    """Boot each target with every guest test; one summary row each."""
    rows = []
    for name in names:
        try:
            if TARGETS[name].bochs:
                rows.append(bochs_target(name, tree, extra, args, full))
            else:
                rows.append(qemu_target(name, tree, extra, args, full))
        except StepFailed as e:
            say(f"ERROR [{name}]: {e}")
            rows.append((name, "build-failed", None, str(e).splitlines()[0]))
    return rows


def seed_args(seed):
    """The fuzzers' seed, on every guest's command line."""
    if seed is None:
        return ""
    say(f"seed {seed} (SEED={seed} replays it)")
    return f"pda.seed={seed}"


def main(extra=None, only=None, seed=None):
    started = time.monotonic()
    try:
        pristine, tree = patched_tree()
    except StepFailed as e:
        say(f"ERROR: {e}")
        return summary([("tree", "patch-failed", None, str(e))], started) or 5
    rows = host_tests(pristine, tree)
    rows += guest_targets(only or CHECK_ORDER, tree, extra, seed_args(seed))
    return summary(rows, started)
