# SPDX-License-Identifier: GPL-2.0
"""make check-full: everything make check runs, with the tests it leaves
to make check-full (tests/check-full-only); then the debug kernels and the
soak, then the reliability table (reliability.py)."""

import secrets
import time

from . import boot, check, ktap, reliability, targetrun
from .paths import BUILD, LOGS
from .progress import StepFailed, say, tail
from .targets import CHECK_ORDER, DEBUG_ORDER, FULL_ONLY_ORDER, TARGETS

SOAK_SCALE = 10
SOAK_BUDGET_S = 20 * 60
SOAK_TARGETS = ("i386-smp", "i386-up", "arm", "x86_64", "arm64")
# The stress tests: they read pda.scale; the upstream rseq ones take their
# repetitions on argv instead (-r).
SOAK_TESTS = ("x86_pda_migration_storm", "x86_pda_counter",
              "x86_pda_hotplug", "getcpu_cache_migration",
              "getcpu_cache_fuzz", "hotplug_churn", "x86_seg_fuzz",
              "x86_user_fs", "tlb_mprotect", "tlb_madv_dontneed",
              "tlb_remap", "tlb_fork_cow", "tlb_migrate", "tlb_exec_exit")
SOAK_RSEQ = "upstream_rseq_param_test_"

# What a debug kernel prints when its checkers are live, and what lockdep
# prints when it switches itself off for the rest of the run.
DEBUG_BANNERS = {"lockdep": "Lock dependency validator",
                 "kfence": "kfence: initialized"}
LOCKDEP_OFF = "turning off the locking correctness validator"


def debug_active(console):
    """Results proving the debug kernel's checkers ran the whole boot: a
    clean log from a kernel whose lockdep had turned itself off would prove
    nothing."""
    text = console.read_text(errors="replace")
    results = []
    for name, banner in DEBUG_BANNERS.items():
        ok = banner in text
        results.append(ktap.Result(f"debug:{name}_active",
                                   "pass" if ok else "fail",
                                   "" if ok else f"no '{banner}' at boot"))
    off = LOCKDEP_OFF in text
    results.append(ktap.Result("debug:lockdep_stayed_on",
                               "fail" if off else "pass",
                               f"'{LOCKDEP_OFF}'" if off else ""))
    return results


def debug_targets(tree, args):
    rows = check.guest_targets(DEBUG_ORDER, tree, None, args, full=True)
    for i, (name, outcome, rep, where) in enumerate(rows):
        if rep is None:
            continue
        for r in debug_active(LOGS / name / "console.log"):
            say(f"[{name}] {r.name}: {r.status} {r.detail}".rstrip())
            rep.results.append(r)
            if r.status == "fail" and outcome == boot.PASS:
                outcome = boot.FAIL
        rows[i] = (name, outcome, rep, where)
    return rows


def soak_argv(name, argv):
    """Ten times the repetitions of an upstream rseq param_test."""
    if not name.startswith(SOAK_RSEQ) or "-r" not in argv:
        return argv
    argv = list(argv)
    i = argv.index("-r") + 1
    argv[i] = str(int(argv[i]) * SOAK_SCALE)
    return argv


def soak_missing(target, names):
    """SOAK_TESTS this target should run but whose program is not there
    (a renamed test would otherwise just shrink the soak)."""
    want = [t for t in SOAK_TESTS
            if (target.user_arch == "i386" or not t.startswith("x86_")) and
            (target.user_arch == "arm64" or not t.startswith("tlb_"))]
    return [t for t in want if t not in names]


def soak(tree, args):
    """Each stress test at SOAK_SCALE times its make check size, on each
    SOAK_TARGETS kernel, all inside SOAK_BUDGET_S: a boot gets what is left
    of the budget as its hard timeout, each test make check's timeout."""
    started = time.monotonic()
    rows = []
    for name in SOAK_TARGETS:
        label = f"{name}-soak"
        target = TARGETS[name]
        try:
            bdir = targetrun.kernel(target, tree)
            _, progs = targetrun.target_programs(target, tree)
            # x86_64 soaks the 32-bit programs and their NAME_64 builds.
            chosen = [(n, exe, soak_argv(n, argv)) for n, exe, argv in progs
                      if n.removesuffix("_64") in SOAK_TESTS or
                      n.startswith(SOAK_RSEQ)]
            missing = soak_missing(target, [n for n, _, _ in chosen])
            if missing:
                raise StepFailed(f"soak tests not built: {missing}")
            cpio = BUILD / label / "initramfs.cpio"
            cpio.parent.mkdir(parents=True, exist_ok=True)
            skipped = targetrun.initramfs(target, tree, cpio, chosen,
                                          label=label)
        except StepFailed as e:
            say(f"ERROR [{label}]: {e}")
            rows.append((label, "build-failed", None,
                         str(e).splitlines()[0]))
            continue
        left = int(SOAK_BUDGET_S - (time.monotonic() - started))
        if left < 60:
            say(f"[{label}] soak budget of {SOAK_BUDGET_S // 60} min spent")
            rows.append((label, boot.TIMEOUT, None, "soak budget spent"))
            continue
        outcome, rep, console, accel = targetrun.boot_qemu(
            target, bdir, cpio, left, label=label,
            extra_args=f"{args} pda.scale={SOAK_SCALE}", not_run=skipped,
            test_timeout=check.QEMU_TIMEOUT // 3)
        if outcome != boot.PASS:
            say(f"[{label}] {outcome}; console log: {console}\n"
                f"{tail(console)}")
        rows.append((label, outcome, rep,
                     f"{accel}, {target.cpus} CPUs, x{SOAK_SCALE}, {console}"))
    say(f"[soak] {(time.monotonic() - started) / 60:.1f} min of the "
        f"{SOAK_BUDGET_S // 60} min budget")
    return rows


def main(seed=None):
    started = time.monotonic()
    if seed is None:
        seed = secrets.randbelow(2**31 - 1) + 1
    args = check.seed_args(seed)
    try:
        pristine, tree = check.patched_tree()
    except StepFailed as e:
        say(f"ERROR: {e}")
        return check.summary([("tree", "patch-failed", None, str(e))],
                             started) or 5
    rows = check.host_tests(pristine, tree)
    rows += check.guest_targets(CHECK_ORDER + tuple(check.BOCHS) +
                                FULL_ONLY_ORDER, tree, None, args, full=True)
    rows += debug_targets(tree, args)
    rows += soak(tree, args)
    worst = check.summary(rows, started)
    try:
        reliability.write(rows, seed, (time.monotonic() - started) / 60)
    except (OSError, ValueError) as e:
        say(f"WARNING: reliability table not written: {e}")
    return worst
