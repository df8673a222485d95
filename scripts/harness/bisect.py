# SPDX-License-Identifier: GPL-2.0
"""make patches CHECK=1: every patch of the export builds, warning-free.

The series make patches exported is applied one patch at a time (git apply, as git am
does) to a hard-link copy of the pristine tree, and i386-smp is built
with W=1 before the first patch and after each one.  A step fails if the
build fails or prints a warning the pristine build did not.  Warnings are
compared without their line and column numbers, which a patch above them
shifts.
"""

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

from . import kbuild, source
from .paths import BUILD, CACHE, LOGS
from .progress import Phase, StepFailed, reset_log, say
from .targets import TARGETS
from .tree import _link_copy

TARGET = "i386-smp"
WARNING = re.compile(r"^(\S+?):\d+(?::\d+)?: warning: (.*)$")


def warnings(log):
    """{(file, message)} of the compiler warnings in a build log."""
    found = set()
    for line in Path(log).read_text(errors="replace").splitlines():
        m = WARNING.match(line)
        if m:
            found.add((m.group(1), m.group(2)))
    return found


def build_step(target, tree, bdir, log, unverified):
    kbuild.configure(target, tree, bdir, log, unverified=unverified)
    kbuild.build(target, tree, bdir, log, ["W=1"] + list(target.arch.images))
    return warnings(log)


def main(export_dir):
    """Check the series make patches just wrote into @export_dir."""
    start = time.monotonic()
    pristine, _ = source.pristine()
    target = TARGETS[TARGET]
    work = CACHE / "bisect"
    tree, bdir = work / "tree", BUILD / f"bisect-{TARGET}"
    patches = [p for p in sorted(Path(export_dir).glob("*.patch"))
               if not p.name.startswith("0000-")]
    # A fresh tree's files carry the pristine mtimes, older than anything
    # a previous run built from its patched files, so make would keep
    # those objects and generated headers: start the build directory
    # empty too (ccache keeps the rebuild cheap).
    for path in (tree, bdir):
        shutil.rmtree(path, ignore_errors=True)
    _link_copy(pristine, tree)
    unverified = kbuild.series_options()
    steps = [("pristine", None)] + [(p.name, p) for p in patches]
    base = set()
    for n, (name, patch) in enumerate(steps):
        log = reset_log(LOGS / "bisect" / f"{n:02d}-{name}.log")
        with Phase(f"bisect {n}/{len(patches)}", f"{name}: W=1 build", log):
            if patch:
                # Outside any repository, so that git apply patches the
                # tree, not a repository around the cache.
                proc = subprocess.run(
                    ["git", "apply", "-p1", str(patch)], cwd=tree,
                    env=dict(os.environ, GIT_CEILING_DIRECTORIES=str(work)),
                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                    text=True)
                if proc.returncode:
                    raise StepFailed(f"{name} does not apply with git "
                                     f"apply:\n{proc.stdout}")
            found = build_step(target, tree, bdir, log, unverified)
        if patch is None:
            base = found
            say(f"  pristine: {len(found)} warnings with W=1 (the baseline)")
            continue
        new = sorted(found - base)
        if new:
            raise StepFailed(f"{name} adds {len(new)} W=1 warning(s):\n    " +
                             "\n    ".join(f"{f}: {m}" for f, m in new) +
                             f"\n  log: {log}")
        say(f"  {name}: builds, no new warnings")
    say(f"bisect: {len(patches)} patches each build for {TARGET} with W=1 "
        f"and no new warning, in {(time.monotonic() - start) / 60:.1f} min")
    return 0
