# SPDX-License-Identifier: GPL-2.0
"""make check-full PART=mutants: each guest test that guards a rule of the
series fails on a kernel built to break that rule.

A mutant is a small patch (tests/mutants/NAME.patch) applied to a
hard-link copy of the patched tree; its target's kernel is built from
that copy and booted, with the target's usual arguments, with only the
programs that must catch it.  The mutant is caught when each of them
fails in the cases it names, those alone, and prints what it prints on
such a failure; the boot must otherwise pass, kernel_log_clean included.
A mutant whose cases pass survived: its tests do not test the rule."""

import shutil
from dataclasses import dataclass

from . import boot, ktap, reliability, targetrun
from .paths import BUILD, CACHE, REPO
from .progress import say
from .targets import TARGETS
from .tree import _link_copy, apply_patch

PATCHES = REPO / "tests/mutants"
# The kernel with CONFIG_ARM64_TLBI_LOCAL, booted with tlbi_local=on: the
# one arm64-tlbi-off boots without it.
TLBI_ON = TARGETS[reliability.TLBI_OFF_RUN].kernel


@dataclass
class Mutant:
    name: str       # PATCHES/NAME.patch; the run is mutant-NAME
    target: str     # whose kernel it mutates (its user_arch's programs)
    fails: dict     # {program: the cases of it that must fail}
    says: str       # what each of those programs prints when they do


MUTANTS = (
    # flush_tlb_mm(), exit_mmap()'s teardown flush among its callers,
    # taken locally or skipped like a leaf flush.
    Mutant("arm64-exit-teardown-local", TLBI_ON,
           {"tlb_exec_exit": ("teardown.exec_broadcasts",
                              "teardown.exit_broadcasts")},
           "a teardown was local or skipped"),
)


def patch_of(m):
    return PATCHES / f"{m.name}.patch"


def label_of(m):
    return f"mutant-{m.name}"


def mutant_tree(m, tree):
    """The patched @tree with @m's patch, made again each run.  patch
    writes a changed file anew, never through its link."""
    work = CACHE / "mutants" / m.name / "tree"
    shutil.rmtree(work, ignore_errors=True)
    _link_copy(tree, work)
    apply_patch(patch_of(m), work)
    return work


def build(m, tree):
    """@m's kernel; returns its build directory.  The files the patch
    changes are newer than their objects, the others as old as the
    patched tree's; but a file an earlier version of the patch changed
    would keep its mutated object, so a changed patch starts the build
    directory afresh (ccache keeps that cheap)."""
    bdir = BUILD / label_of(m)
    stamp = bdir / ".pda-mutant.patch"
    patch = patch_of(m).read_bytes()
    if not stamp.exists() or stamp.read_bytes() != patch:
        shutil.rmtree(bdir, ignore_errors=True)
    targetrun.kernel(TARGETS[m.target], mutant_tree(m, tree), bdir=bdir,
                     label=label_of(m))
    stamp.write_bytes(patch)
    return bdir


def judge(m, outcome, rep, text):
    """Caught: each program failed in the cases @m names, and in no other,
    saying m.says; its failure is then expected (xfail), and each case is
    a result of its own.  Returns the boot's outcome so judged."""
    label, blocks = label_of(m), ktap.test_blocks(text)
    for prog, cases in m.fails.items():
        lines = blocks.get(prog, [])
        said = {r.group(3).strip(): r.group(1) for line in lines
                if (r := ktap.RESULT.match(line))}
        for case in cases:
            if said.get(case) == "not ok":
                status, detail = "pass", "not ok, as it must"
            elif case in said:
                status = "fail"
                detail = f"the mutant survived: {prog} does not catch " \
                    f"{patch_of(m).relative_to(REPO)}: {case} passed"
            else:
                status, detail = "fail", f"not in {prog}'s output"
            rep.results.append(ktap.Result(f"{prog}: {case}", status,
                                           detail))
            say(f"[{label}] {prog}: {case}: {detail}")
        says = [line for line in lines if m.says in line]
        for line in says:
            say(f"[{label}]     {line}")
        wrong = [f"{c} failed too" for c, s in said.items()
                 if s == "not ok" and c not in cases]
        wrong += [] if says else [f"no '{m.says}'"]
        r = next((r for r in rep.results if r.name == prog), None)
        if not r or r.status != "fail":
            continue
        if wrong:
            r.detail += f"; not as {label} must fail: {', '.join(wrong)}"
        elif all(said.get(c) == "not ok" for c in cases):
            r.status = "xfail"
            r.detail = f"fails on {label}, as it must"
    if outcome in (boot.PASS, boot.FAIL):
        outcome = boot.FAIL if rep.count("fail") else boot.PASS
    return outcome


def boot_mutant(m, tree, args):
    """Build and boot @m with its programs alone.  One row."""
    target, label = TARGETS[m.target], label_of(m)
    bdir = build(m, tree)
    init, progs = targetrun.some_programs(target.user_arch, tree,
                                          list(m.fails))
    cpio = BUILD / label / "initramfs.cpio"
    left = targetrun.initramfs(target, tree, cpio, progs, label=label,
                               full=True, kernel_dir=bdir, init=init)
    outcome, rep, console, accel = targetrun.boot_qemu(
        target, bdir, cpio, targetrun.QEMU_TIMEOUT, label=label,
        extra_args=args, not_run=left)
    outcome = judge(m, outcome, rep, console.read_text(errors="replace"))
    say(f"[{label}] {'caught' if outcome == boot.PASS else 'NOT caught'}"
        f" ({boot.describe(outcome, rep)}); console log: {console}")
    return (label, outcome, rep, f"{accel}, {target.cpus} CPUs, {console}")


def runs(tree, args):
    """[(label, its run)] for checkfull.rows_of()."""
    return [(label_of(m), lambda m=m: boot_mutant(m, tree, args))
            for m in MUTANTS]
