# SPDX-License-Identifier: GPL-2.0
"""make randconfigs: the series in random configs, from fixed seeds.

For each architecture, the .config of its make check target (tinyconfig
and fragments; its arch record's randconfig_base), less the options in
VARY, is the KCONFIG_ALLCONFIG of `make randconfig`: every option it
lists keeps that value, and the ones VARY names (the series' own and
those they depend on or interact with), with whatever they make visible,
are what KCONFIG_SEED chooses.  So each seed is a small kernel whose
series-relevant choices are random.  Each builds the series' objects
with W=1 (no warning the pristine tree does not print,
seriesobjs.py) and links vmlinux.  A seed that found a failure stays in
its arch record's randconfig_seeds once the patch that caused it is
fixed.

x86-32 against x86-64 is a choice of ARCH, not of the seed: i386 seeds
build with ARCH=i386 (64BIT off), x86_64 ones with ARCH=x86_64.  Linux
6.12 has no Kconfig option for FSGSBASE (the nofsgsbase boot parameter
is the x86_64-nofsgsbase target's); ARM64_CNP is the option that
interacts with ARM64_TLBI_LOCAL.
"""

import json
import time

from . import kbuild, seriesobjs
from .arches import ARCHES
from .check import patched_tree
from .paths import BUILD, CACHE, LOGS, REPO
from .progress import Phase, reset_log, run, say
from .targets import TARGETS

STATE = CACHE / "randconfigs"
RESULTS = "results/RANDCONFIGS.md"

_PREEMPT = ("PREEMPT_NONE", "PREEMPT_VOLUNTARY", "PREEMPT", "PREEMPT_RT",
            "PREEMPT_DYNAMIC")
_COMMON = ("SMP", "HOTPLUG_CPU", "GETCPU_CACHE", "RSEQ", "EXPERT",
           "MODULES", "KUNIT", "VM_EVENT_COUNTERS") + _PREEMPT
# Each architecture's: the common options and its own (arches.py's
# randconfig_vary).
VARY = {a.name: _COMMON + a.randconfig_vary for a in ARCHES.values()}
# Each record's randconfig_seeds were chosen from the first few dozen
# seeds of its architecture for the mix its comment names
# (results/RANDCONFIGS.md lists, per seed, what its config turned on);
# two each, as a seed's first build takes 5-10 min on 2 cores.  None has
# failed yet.
SEEDS = {a.name: a.randconfig_seeds for a in ARCHES.values()
         if a.randconfig_seeds}


class _Builder:
    """What kbuild.make_cmd() needs: an arch."""

    def __init__(self, arch):
        self.arch = arch


def allconfig(arch, tree, log):
    """The .config of @arch's make check target (tinyconfig and its
    fragments) less VARY's lines: the file KCONFIG_ALLCONFIG names."""
    base = BUILD / f"randconfig-{arch.name}-base"
    kbuild.configure(TARGETS[arch.randconfig_base], tree, base, log)
    out = base / "allconfig"
    out.write_text("\n".join(without(
        (base / ".config").read_text().splitlines(), VARY[arch.name])) + "\n")
    return out


def without(lines, names):
    """The .config @lines but those setting an option of @names (CONFIG_
    dropped), "# CONFIG_X is not set" included."""
    drop = {f"CONFIG_{n}" for n in names}
    keep = []
    for line in lines:
        words = line.replace("=", " ").split()
        name = words[1] if line.startswith("# CONFIG_") else \
            words[0] if words else ""
        if name not in drop:
            keep.append(line)
    return keep


def seed_name(arch, seed):
    return f"{arch.name}-{seed:#x}"


def build_seed(arch, seed, tree, allconfig_file):
    name = seed_name(arch, seed)
    log = reset_log(LOGS / "randconfigs" / f"{name}.log")
    bdir = BUILD / f"randconfig-{name}"
    who = _Builder(arch)
    state = {"arch": arch.name, "seed": seed, "minutes": {}}
    start = time.monotonic()
    with Phase(name, "make randconfig", log):
        bdir.mkdir(parents=True, exist_ok=True)
        run(kbuild.make_cmd(who, tree, bdir, f"KCONFIG_SEED={seed:#x}",
                            f"KCONFIG_ALLCONFIG={allconfig_file}",
                            "randconfig"), log, env=kbuild.make_env(),
            what=f"make randconfig (seed {seed:#x})")
    values = seriesobjs.config_values(bdir / ".config")
    state["config"] = {o: values.get(o, "n") for o in VARY[arch.name]}
    objects, left = seriesobjs.built_here(arch, values)
    state["objects"], state["left"] = objects, left
    with Phase(name, f"W=1: {len(objects)} objects of the series", log):
        seriesobjs.require_no_new_warnings(who, tree, bdir, objects, log,
                                           f"randconfig-{name}", name)
    with Phase(name, "vmlinux", log):
        run(kbuild.make_cmd(who, tree, bdir, "vmlinux"), log,
            env=kbuild.make_env(), what=f"[{name}] vmlinux")
    state["minutes"]["all"] = (time.monotonic() - start) / 60
    return state


def report(states):
    shown = ("SMP", "PREEMPT", "PREEMPT_RT", "HIGHMEM64G", "X86_PAE",
             "HIGHMEM", "ARM_LPAE", "IA32_EMULATION", "XEN", "KVM",
             "X86_PDA_USER_SEG", "X86_PDA_UP_NOSEG", "ARM64_TLBI_LOCAL",
             "ARM64_CNP", "GETCPU_CACHE", "RSEQ", "MODULES")
    rows = []
    for name, st in states:
        if st is None:
            arch, seed = name.rsplit("-", 1)
            rows.append(f"| {arch} | `{seed}` | not run yet | | | |")
            continue
        on = [o for o in shown if st["config"].get(o, "n") in ("y", "m")]
        rows.append(f"| {st['arch']} | `{st['seed']:#x}` | "
                    f"{', '.join(on) or '(none)'} | {len(st['objects'])} | "
                    f"{st['minutes']['all']:.1f} | {st['commit']} |")
    return "\n".join([
        "# The series in random configs (`make randconfigs`)", "",
        "Written by `make randconfigs` (`scripts/harness/randconfig.py`); "
        "do not edit by hand. Each row is `make randconfig` with a fixed "
        "`KCONFIG_SEED` and, as `KCONFIG_ALLCONFIG`, the config of the "
        "architecture's `make check` target (tinyconfig and fragments) "
        "less the options that vary (the series' own, SMP, the preemption "
        "models, HIGHMEM and PAE, Xen, KVM, IA32_EMULATION, ARM64_CNP, RSEQ, "
        "modules and the like: `VARY` in the script). Each seed that ran "
        "built the series' objects that its config builds with `W=1`, with "
        "no warning the pristine tree does not print, and linked "
        "`vmlinux`; a seed of the list not run yet says so. Minutes: that "
        "run's, configure to `vmlinux`, on the cores and ccache it had.",
        "",
        "| ARCH | seed | of those shown, on | objects, W=1 | minutes | "
        "commit |",
        "|---|---|---|---|---|---|",
        *rows, ""])


def main(arches=None):
    _, tree = patched_tree()
    ran, failed = [], []
    for arch_name in arches or list(SEEDS):
        arch = ARCHES[arch_name]
        log = reset_log(LOGS / "randconfigs" / f"{arch_name}-base.log")
        with Phase(arch_name, f"{arch.randconfig_base}'s config less the "
                   "varying options", log):
            allconfig_file = allconfig(arch, tree, log)
        for seed in SEEDS[arch_name]:
            name = seed_name(arch, seed)
            ran.append(name)
            if not seriesobjs.record_build(
                    name, lambda: build_seed(arch, seed, tree, allconfig_file),
                    STATE):
                failed.append(name)
    write_report()
    say(f"{len(ran) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


def write_report():
    """RESULTS from the saved state of every seed of SEEDS, the ones
    that never passed said so."""
    states = []
    for arch_name, seeds in SEEDS.items():
        for seed in seeds:
            path = STATE / f"{seed_name(ARCHES[arch_name], seed)}.json"
            states.append((path.stem, json.loads(path.read_text())
                           if path.exists() else None))
    (REPO / RESULTS).write_text(report(states))
    say(f"randconfigs: wrote {RESULTS}")
