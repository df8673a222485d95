# SPDX-License-Identifier: GPL-2.0
"""make check-full: named parts, each runnable alone (PART=name), each
recording its rows in a state file (fullstate.py); with no PART, the parts
that are missing, failed or stale for the current code.  RELIABILITY.md is
written from the latest run of every part (reliability.py)."""

import secrets
import time

from . import boot, check, distro, fullstate, ktap, mutants, reliability, \
    scale, targetrun
from .paths import LOGS
from .progress import StepFailed, say
from .targets import CHECK_ORDER, TARGETS

# The soak: one boot per kernel kind, every test that counts a figure
# (tests/guest/lib/stat.h), at the scales of its target's soak record:
# pda.scale for the stress tests, pda.scale.PROGRAM for the fuzzers, which
# are cheap per iteration.  Sized, from what make check's run of each test
# counts and takes, so that the union of the parts reaches the coverage
# reliability.goals() states; the tests that count none (x86_user_fs,
# x86_pda_counter, the upstream rseq tests) run in the other parts only.
STRESS = ("x86_pda_migration_storm", "getcpu_cache_migration",
          "hotplug_churn", "x86_pda_hotplug")
# The segment selector fuzzers, one program each (lib/seg_fuzz.h).
SEG_FUZZ = ("x86_seg_fuzz_mov", "x86_seg_fuzz_sigreturn",
            "x86_seg_fuzz_ptrace", "x86_seg_fuzz_ldt_tls")
TLB = ("tlb_mprotect", "tlb_madv_dontneed", "tlb_remap", "tlb_fork_cow",
       "tlb_migrate", "tlb_exec_exit")


# kind: its targets.Soak
SOAK = {n: t.soak for n, t in TARGETS.items() if t.soak}
SOAK_TIMEOUT = 2400


def fuzz_scales(soak):
    """{program: its scale} of the fuzzers a soak runs: the SEG_FUZZ
    programs at soak.seg_fuzz (each reads its own pda.scale.PROGRAM, and
    the four together run every segment fuzzer at that many times its make
    check size), then the others."""
    seg = dict.fromkeys(SEG_FUZZ, soak.seg_fuzz) if soak.seg_fuzz else {}
    return {**seg, **dict(soak.fuzz)}

# What a debug kernel runs: the programs that go through kernel code of
# ours or next to it.  Left out, and listed as skipped: the benchmarks and
# the preload library's runs (the same syscalls and segment loads as our
# own tests, already run there), and the upstream x86 selftests of FPU,
# xstate, vDSO, paging and syscall-table code this series does not touch.
DEBUG_SKIP_PREFIX = ("segbench_", "pda_bench", "preload_")
DEBUG_SKIP_UPSTREAM = ("amx", "corrupt_xstate_header", "lam", "nx_stack",
                       "syscall_numbering", "test_FCMOV", "test_FCOMI",
                       "test_FISTTP", "test_mremap_vdso", "test_shadow_stack",
                       "test_vsyscall", "unwind_vdso", "vdso_restorer")

# What a debug kernel prints when its checkers are live, and what lockdep
# prints when it switches itself off for the rest of the run; the checkers
# that print nothing at boot are shown by the kernel's .config.
DEBUG_BANNERS = {"lockdep": "Lock dependency validator",
                 "kfence": "kfence: initialized"}
DEBUG_CONFIG = {"ubsan": "CONFIG_UBSAN=y", "debug_vm": "CONFIG_DEBUG_VM=y"}
LOCKDEP_OFF = "turning off the locking correctness validator"


def debug_active(console, config):
    """Results proving the debug kernel's checkers ran the whole boot: a
    clean log from a kernel whose lockdep had turned itself off would prove
    nothing."""
    text = console.read_text(errors="replace") if console.exists() else ""
    results = []
    for name, banner in DEBUG_BANNERS.items():
        ok = banner in text
        results.append(ktap.Result(f"debug:{name}_active",
                                   "pass" if ok else "fail",
                                   "" if ok else f"no '{banner}' at boot"))
    conf = config.read_text(errors="replace").splitlines()
    for name, line in DEBUG_CONFIG.items():
        ok = line in conf
        results.append(ktap.Result(f"debug:{name}_built",
                                   "pass" if ok else "fail",
                                   "" if ok else f"no {line} in {config}"))
    off = LOCKDEP_OFF in text
    results.append(ktap.Result("debug:lockdep_stayed_on",
                               "fail" if off else "pass",
                               f"'{LOCKDEP_OFF}'" if off else ""))
    return results


def debug_leaves_out(name):
    base = name.removeprefix("upstream_x86_").removesuffix("_32") \
        .removesuffix("_64")
    if name.startswith(DEBUG_SKIP_PREFIX):
        return "a benchmark or preload run: the syscalls and segment " \
            "loads of our own tests, which run here"
    if name.startswith("upstream_x86_") and base in DEBUG_SKIP_UPSTREAM:
        return "an upstream x86 selftest of code this series does not touch"
    return ""


def rows_of(kind_of, fn):
    """Runs fn() -> [(label, outcome, rep, where)], turning a build failure
    into a failed row; adds each row's kernel kind."""
    out = []
    for label, run in fn:
        try:
            row = run()
        except (StepFailed, OSError) as e:
            say(f"ERROR [{label}]: {e}")
            row = (label, "build-failed", None,
                   (str(e).splitlines() or ["?"])[0])
        out.append((kind_of(label),) + row)
    return out


def kind(label):
    """The kernel kind a run's label is of."""
    for suffix in ("-debug", "-soak", "-slow", "-cost", "-tlbi-off",
                   "-scale", "-smap"):
        label = label.removesuffix(suffix)
    target = TARGETS.get(label)
    return target.kernel if target and target.bochs else label


def part_check(tree, args):
    """Host tests and every make check boot, as make check runs them."""
    rows = [("host",) + r for r in check.host_tests(*tree)]
    rows += rows_of(kind, [
        (n, lambda n=n: check.guest_targets((n,), tree[1], None, args)[0])
        for n in CHECK_ORDER])
    return rows


def part_slow(tree, args):
    """The tests make check leaves to make check-full (tests/check-full-only),
    each on its target, in one boot per target with those alone."""
    runs = []
    for name in CHECK_ORDER:
        tests = ktap.full_only(name)
        label = f"{name}-slow"
        if not tests:
            continue
        if TARGETS[name].bochs:
            runs.append((label, lambda n=name, t=tests, lb=label:
                         check.bochs_target(n, tree[1], None, args, True,
                                            programs=t, label=lb)))
        else:
            runs.append((label, lambda n=name, t=tests, lb=label:
                         targetrun.boot_chosen(n, lb, tree[1], args, t.__contains__,
                                     timeout=SOAK_TIMEOUT,
                                     test_timeout=SOAK_TIMEOUT // 2)))
    return rows_of(kind, runs)


def debug_boot(name, tree, args):
    row = targetrun.boot_chosen(name, name, tree, args,
                      lambda p: not debug_leaves_out(p), debug_leaves_out)
    label, outcome, rep, where = row
    bdir = targetrun.kernel(TARGETS[name], tree)
    for r in debug_active(LOGS / label / "console.log", bdir / ".config"):
        say(f"[{label}] {r.name}: {r.status} {r.detail}".rstrip())
        rep.results.append(r)
        if r.status == "fail" and outcome == boot.PASS:
            outcome = boot.FAIL
    return (label, outcome, rep, where)


def part_debug(names):
    def run(tree, args):
        return rows_of(kind, [(n, lambda n=n: debug_boot(n, tree[1], args))
                              for n in names])
    return run


def soak_args(name):
    soak = SOAK[name]
    words = [f"pda.scale={soak.stress}"]
    words += [f"pda.scale.{p}={s}" for p, s in fuzz_scales(soak).items()]
    words += [f"pda.scale.{p}={soak.tlb}" for p in TLB if soak.tlb]
    return " ".join(words)


def soak_keeps(name):
    """Which programs the soak of kind @name runs: the stress tests, the
    fuzzers it scales, and the TLB tests if it scales them; a kind with a
    64-bit user space runs the 32-bit build and the NAME_64 one."""
    soak = SOAK[name]
    want = set(STRESS) | set(fuzz_scales(soak)) | \
        (set(TLB) if soak.tlb else set())
    return lambda p: p in want or (p.endswith("_64") and
                                   p.removesuffix("_64") in STRESS)


def soak_needs(name):
    """The programs the soak of kind @name must find built: tests/guest
    builds x86_*.c for x86 user space only."""
    soak = SOAK[name]
    x86 = TARGETS[name].user_arch.family == "x86"
    stress = [t for t in STRESS if x86 or not t.startswith("x86_")]
    return tuple(stress) + tuple(fuzz_scales(soak)) + \
        (TLB if soak.tlb else ())


def part_soak(names):
    def run(tree, args):
        return rows_of(kind, [
            (f"{n}-soak", lambda n=n: targetrun.boot_chosen(
                n, f"{n}-soak", tree[1], f"{args} {soak_args(n)}",
                soak_keeps(n), timeout=SOAK_TIMEOUT,
                test_timeout=SOAK_TIMEOUT // 2, need=soak_needs(n)))
            for n in names])
    return run


def part_tlbi_off(tree, args):
    """The arm64 kernel with CONFIG_ARM64_TLBI_LOCAL left off (booted
    without tlbi_local=on): every test, the TLB tests at its soak's scale,
    but any that part slow runs on arm64 (tests/check-full-only lists
    none today: basic_percpu_ops_test is left out here by tests/not-run),
    which do not depend on it."""
    name = reliability.TLBI_OFF_RUN
    kernel = TARGETS[name].kernel
    scale = " ".join(f"pda.scale.{p}={SOAK[kernel].tlb}" for p in TLB)
    slow = ktap.full_only(kernel)

    def why(p):
        return f"in part slow, on {kernel}; nothing in it depends on " \
            f"tlbi_local: {slow[p]}" if p in slow else ""
    return rows_of(kind, [(name, lambda: targetrun.boot_chosen(
        name, name, tree[1], f"{args} {scale}",
        lambda p: p not in slow, why, timeout=SOAK_TIMEOUT))])


def part_smap(tree, args):
    """The x86_64 kernel on a CPU model with SMAP: what a debug kernel
    runs, but the far transfers tests/not-run names (TCG gets them wrong
    under SMAP, on mainline too)."""
    return rows_of(kind, [("x86_64-smap", lambda: targetrun.boot_chosen(
        "x86_64-smap", "x86_64-smap", tree[1], args,
        lambda p: not debug_leaves_out(p), debug_leaves_out,
        need=("x86_64_cpu_model_64",)))])


def part_mutants(tree, args):
    """The kernels of mutants.py, each broken on purpose: the tests that
    guard the rule it breaks must fail on it, and nothing else."""
    return rows_of(kind, mutants.runs(tree[1], args))


def part_distro(tree, args):
    """make distro: Debian 12 with systemd on every PDA kernel kind."""
    return distro.rows()


def part_scale(tree, args):
    """make scale: every SMP kind with the most CPUs it and QEMU take."""
    rows = rows_of(kind, scale.runs(tree[0], tree[1], args))
    scale.write_report()
    return rows


def family_parts():
    """debug-FAMILY and soak-FAMILY for each architecture family, the
    kernels of its debug variants and its soak kinds."""
    families = dict.fromkeys(t.arch.family for t in TARGETS.values())
    debug, soak = {}, {}
    for family in families:
        of = {n: t for n, t in TARGETS.items() if t.arch.family == family}
        bases = [n for n, t in of.items() if t.debug]
        debug[f"debug-{family}"] = (
            part_debug(tuple(f"{n}-debug" for n in bases)),
            f"{' and '.join(bases)} with configs/debug.config")
        soak[f"soak-{family}"] = (
            part_soak(tuple(n for n, t in of.items() if t.soak)),
            f"the counting tests at scale on the {family} kernels")
    return {**debug, **soak}


# In the order a whole run takes them: the quick, broad part first.
PARTS = {
    "check": (part_check, "host tests and every make check boot"),
    "slow": (part_slow, "the tests make check leaves out "
             "(tests/check-full-only), on their targets"),
    **family_parts(),
    "tlbi-off": (part_tlbi_off, "arm64 with tlbi_local off, the TLB "
                 "tests at scale"),
    "smap": (part_smap, "x86_64 on a CPU model with SMAP"),
    "mutants": (part_mutants, "kernels broken on purpose "
                "(tests/mutants), each failing the tests that guard it"),
    "distro": (part_distro, "Debian 12 booted with systemd on every PDA "
               "kernel kind, the packages installed in the guest "
               "(make distro)"),
    "scale": (part_scale, "every SMP kernel kind with the most CPUs it and "
              "QEMU take (make scale)"),
}


def failures(part, seed, rows):
    """A failed part names the test, the kernel, the seed and the log."""
    for kind_, name, outcome, rep, where in rows:
        if outcome == boot.PASS:
            continue
        if rep is None:
            say(f"FAILED [{part}] {name} (kernel {kind_}, seed {seed}): "
                f"{outcome}: {where}; logs: {LOGS / name}")
            continue
        bad = [r.name for r in rep.results if r.status == "fail"]
        if not bad:
            ran = [r.name for r in rep.results if r.status != "skip"]
            bad = [f"none failed; the boot ended ({outcome}) after "
                   f"{ran[-1] if ran else 'no test'}"]
        say(f"FAILED [{part}] {name} (kernel {kind_}, seed {seed}): "
            f"{outcome}; failing: {', '.join(bad)}; "
            f"log: {where.split(', ')[-1]}")


def report():
    reliability.write(fullstate.load_all(PARTS), PARTS, fullstate.code_key())
    return 0


def main(part=None, seed=None):
    started = time.monotonic()
    if part and part not in PARTS:
        say(f"ERROR: no part {part}; the parts: {' '.join(PARTS)}")
        return 5
    key = fullstate.code_key()
    todo = [part] if part else \
        [p for p in PARTS if fullstate.stale(p, key, seed)]
    for p in PARTS if not part else ():
        if p not in todo:
            say(f"[check-full] {p}: up to date "
                f"({fullstate.describe(fullstate.load(p))})")
    say(f"[check-full] parts to run: {' '.join(todo) or 'none'}")
    if seed is None:
        seed = secrets.randbelow(2**31 - 1) + 1
    args = check.seed_args(seed)
    try:
        tree = check.patched_tree()
    except StepFailed as e:
        say(f"ERROR: {e}")
        return check.summary([("tree", "patch-failed", None, str(e))],
                             started) or 5
    all_rows, worst = [], 0
    for p in todo:
        part_started = time.monotonic()
        say(f"[check-full] part {p}: {PARTS[p][1]} ...")
        rows = PARTS[p][0](tree, args)
        minutes = (time.monotonic() - part_started) / 60
        failures(p, seed, rows)
        state = fullstate.record(p, key, seed, minutes, rows)
        say(f"[check-full] part {p} {state['result']} in {minutes:.1f} min; "
            f"state: {fullstate.path(p)}")
        all_rows += [r[1:] for r in rows]
        try:
            report()
        except (OSError, ValueError, KeyError) as e:
            say(f"WARNING: reliability table not written: {e!r}")
    worst = check.summary(all_rows, started) if todo else 0
    return worst
