# SPDX-License-Identifier: GPL-2.0
"""Out-of-tree modules (tests/modules/NAME, each a Kbuild directory) for
the kernels built with CONFIG_MODULES: built against the kernel's build
directory as a distribution's module packages are (make M=, modpost
included), with W=1, and packed into the guest at /lib/modules/NAME.ko
for the guest tests that load them.  M= writes beside the sources, so
each is built from a copy in the kernel's build directory.
"""

import shutil
import subprocess
from pathlib import Path

from . import kbuild
from .arches import ARCHES
from .bisect import warnings
from .paths import REPO
from .progress import StepFailed, run

SRC = REPO / "tests/modules"
GUEST_DIR = "/lib/modules"
# Symbols a module must call when the kernel has an option: the series'
# functions that its inline helpers become.  Without the check a module
# could link against the upstream inline alone and prove nothing.
MUST_CALL = {
    "tlb_flush_mod": ("CONFIG_ARM64_TLBI_LOCAL=y",
                      ("tlbi_local_key",
                       "__tlbi_local_flush_page_nosync_thunk",
                       "__tlbi_local_flush_range_nosync_thunk")),
}
# A module that upstream's own rules keep out of a config, and why.
# arm64's flush_tlb_page() and flush_tlb_range() end in
# mmu_notifier_arch_invalidate_secondary_tlbs(), whose out-of-line half
# mm/mmu_notifier.c does not export: with MMU_NOTIFIER=y (KVM selects it,
# so Debian's arm64 configs have it) no module can call them, with or
# without the series.
NOT_WITH = {
    "tlb_flush_mod": ("CONFIG_MMU_NOTIFIER=y",
                      "arm64's flush_tlb_page() then calls "
                      "__mmu_notifier_arch_invalidate_secondary_tlbs(), "
                      "which upstream does not export"),
}


def out_dir(bdir):
    return Path(bdir) / "pda-modules"


def for_arch(arch):
    """The modules of SRC that are for @arch (an ARCHES entry): those
    its record names as for some architectures only, and those no
    record names (arches.py's only_modules)."""
    some = {m for a in ARCHES.values() for m in a.only_modules}
    return [kb.parent.name for kb in sorted(SRC.glob("*/Kbuild"))
            if kb.parent.name in arch.only_modules or
            kb.parent.name not in some]


def left_out(arch, config):
    """{module: why} of the modules for @arch that @config (the text of
    a .config) keeps out."""
    lines = config.splitlines()
    return {name: f"{NOT_WITH[name][0]}: {NOT_WITH[name][1]}"
            for name in for_arch(arch)
            if name in NOT_WITH and NOT_WITH[name][0] in lines}


def build(target, tree, bdir, log):
    """Every module of SRC against the kernel in @bdir, if its config has
    CONFIG_MODULES; returns the .ko files.  @target: anything with an
    arch (kbuild.make_cmd)."""
    # What an earlier configuration of this directory built goes first.
    shutil.rmtree(out_dir(bdir), ignore_errors=True)
    config = (Path(bdir) / ".config").read_text()
    if "CONFIG_MODULES=y" not in config.splitlines():
        return []
    # The kernel's own modules step writes Module.symvers, what modpost
    # checks an external module's symbols against.
    run(kbuild.make_cmd(target, tree, bdir, "modules"), log,
        env=kbuild.make_env(), what="make modules (Module.symvers)")
    kos = []
    kept_out = left_out(target.arch, config)
    for name in for_arch(target.arch):
        if name in kept_out:
            continue
        work = out_dir(bdir) / name
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(SRC / name, work)
        run(kbuild.make_cmd(target, tree, bdir, f"M={work}", "W=1",
                            "modules"), log, env=kbuild.make_env(),
            what=f"module {name}")
        own = sorted(f"{f}: {m}" for f, m in warnings(log)
                     if f.startswith(f"{work}/"))
        own += [ln for ln in Path(log).read_text().splitlines()
                if ln.startswith("WARNING: modpost:") and name in ln]
        if own:
            raise StepFailed(f"module {name}: warnings (W=1, modpost):\n    " +
                             "\n    ".join(own) + f"\n  log: {log}")
        ko = work / f"{name}.ko"
        if not ko.exists():
            raise StepFailed(f"module {name}: no {ko.name} built\n"
                             f"  log: {log}")
        option, calls = MUST_CALL.get(name, (None, ()))
        if option in config.splitlines():
            nm = subprocess.run([f"{target.arch.cross}nm", "-u", ko],
                                stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
            if nm.returncode:
                raise StepFailed(f"module {name}: nm -u {ko} failed:\n"
                                 f"{nm.stdout}")
            undefined = set(nm.stdout.split())
            lacking = [c for c in calls if c not in undefined]
            if lacking:
                raise StepFailed(f"module {name}: with {option} it should "
                                 f"call {', '.join(lacking)} (nm -u {ko})")
        kos.append(ko)
    return kos


def packed(bdir):
    """[(guest path, .ko)] of what build() made for the kernel in @bdir."""
    return [(f"{GUEST_DIR}/{ko.name}", ko)
            for ko in sorted(out_dir(bdir).glob("*/*.ko"))]
