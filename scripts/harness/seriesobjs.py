# SPDX-License-Identifier: GPL-2.0
"""The series' objects in a kernel config that is not ours (Debian's,
debconfig.py; a random one, randconfig.py): which of them the config
builds, compiled with W=1, and the warnings among them that the pristine
tree does not print for the same objects in the same config (compared
without line numbers, as bisect.py does).
"""

import json
import re
import shutil

from . import kbuild, series, source
from .bisect import warnings
from .fullstate import commit
from .paths import BUILD, LOGS, REPO
from .progress import StepFailed, reset_log, run, say

# The series' sources a config may leave out, and the option that builds
# each.  Every other .c or .S the series adds or changes is built by every
# config of its architecture.
BUILT_BY = {
    "arch/x86/kernel/process_32.c": "X86_32",
    "arch/x86/kernel/process_64.c": "X86_64",
    "arch/x86/entry/entry_32.S": "X86_32",
    "arch/x86/entry/pda_up_noseg.S": "X86_PDA_UP_NOSEG",
    "arch/x86/kernel/pda.c": "X86_PDA_USER_SEG",
    "arch/x86/kernel/pda_kunit.c": "X86_PDA_USER_SEG_KUNIT_TEST",
    "arch/x86/kernel/ldt.c": "MODIFY_LDT_SYSCALL",
    "arch/x86/kvm/vmx/vmx.c": "KVM_INTEL",
    "arch/arm64/mm/tlbi_local.c": "ARM64_TLBI_LOCAL",
    "arch/arm64/mm/tlbi_local_thunk.S": "ARM64_TLBI_LOCAL",
    "kernel/getcpu_cache.c": "GETCPU_CACHE",
}


def sources(arch, root=REPO):
    """The .c and .S files the series adds or changes that @arch builds
    from: its own arch/ directory's and the generic ones."""
    files = series.touched(series.read(root / "patches", root))
    mine = f"arch/{arch.srcarch}/"
    return sorted(f for f in files if f.endswith((".c", ".S")) and
                  not f.startswith("tools/") and
                  (f.startswith(mine) or not f.startswith("arch/")))


def config_values(dotconfig):
    """{NAME: value} of a .config's set options (CONFIG_ dropped)."""
    values = {}
    for line in dotconfig.read_text().splitlines():
        m = re.match(r"^CONFIG_(\w+)=(.*)$", line)
        if m:
            values[m.group(1)] = m.group(2)
    return values


def built_here(arch, values):
    """(objects the config of @values builds, {source: why not} for the
    series' others)."""
    objects, left = [], {}
    for src in sources(arch):
        opt = BUILT_BY.get(src)
        if opt and values.get(opt, "n") not in ("y", "m"):
            left[src] = f"CONFIG_{opt} is off"
        else:
            objects.append(src.rsplit(".", 1)[0] + ".o")
    return objects, left


def _compile(who, tree, bdir, objects, log):
    # Up-to-date objects would not be compiled, and print no warning: a
    # rerun would pass unseen.  (ccache replays a hit's warnings.)
    for obj in objects:
        (bdir / obj).unlink(missing_ok=True)
    run(kbuild.make_cmd(who, tree, bdir, "W=1", *objects), log,
        env=kbuild.make_env(), what=f"W=1 objects ({len(objects)})")
    return warnings(log)


def new_warnings(who, tree, bdir, objects, log, name):
    """Compiles @objects with W=1 in @bdir (configured); returns the
    warnings the pristine tree does not print for the same objects, in
    the same config less the series' options (olddefconfig drops them),
    built in a directory of @name's.  @who: anything with an arch
    (kbuild.make_cmd)."""
    found = _compile(who, tree, bdir, objects, log)
    own = {f"{tree}/{f}" for f in series.overlay_files(REPO)}
    if all(f in own for f, _ in found):
        # Only files the pristine tree does not have: every one is new.
        return sorted(found)
    pristine, _ = source.pristine()
    upstream = [o for o in objects if any(
        (pristine / o).with_suffix(s).exists() for s in (".c", ".S"))]
    plog = reset_log(LOGS / "series-objects" / f"{name}-pristine.log")
    pdir = BUILD / f"{name}-pristine"
    pdir.mkdir(parents=True, exist_ok=True)
    shutil.copy(bdir / ".config", pdir / ".config")
    run(kbuild.make_cmd(who, pristine, pdir, "olddefconfig"), plog,
        env=kbuild.make_env(), what="make olddefconfig (pristine)")
    base = {(f.replace(str(pristine), str(tree), 1), m)
            for f, m in _compile(who, pristine, pdir, upstream, plog)}
    return sorted(found - base)


def require_no_new_warnings(who, tree, bdir, objects, log, name, label):
    """new_warnings(), failing as [@label] if there is any."""
    bad = new_warnings(who, tree, bdir, objects, log, name)
    if bad:
        raise StepFailed(f"[{label}] W=1 warnings the pristine tree does "
                         "not print:\n    " +
                         "\n    ".join(f"{f}: {m}" for f, m in bad) +
                         f"\n  log: {log}")


def record_build(name, build, state_dir):
    """Run @build, which returns the state of a build that passed, and
    keep that state with the commit it ran on as @state_dir/@name.json.
    A failure drops @name's saved state, so that its last passing run does
    not stand in the report.  True when it passed."""
    path = state_dir / f"{name}.json"
    try:
        state = build()
    except StepFailed as e:
        say(f"[{name}] FAILED\n{e}")
        path.unlink(missing_ok=True)
        return False
    state["commit"] = commit()
    state_dir.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(state, indent=1))
    return True
