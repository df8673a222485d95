# SPDX-License-Identifier: GPL-2.0
"""make run: build i386-smp, boot it, show the CPU-number methods.

The guest runs segbench's CPU-number table under `qemu -icount shift=0`,
where guest time counts instructions, so the costs shown are exact
instruction counts rather than emulator wall-clock noise.
"""

import re

from . import boot, check, targetrun
from .paths import BUILD
from .progress import say, tail
from .targets import TARGETS

TARGET = "i386-smp"


def main():
    _, tree = check.patched_tree()
    target = TARGETS[TARGET]
    bdir = targetrun.kernel(target, tree)
    _, progs = targetrun.user_space(target.user_arch, tree)
    segbench = [exe for name, exe, _ in progs if name == "segbench_check"]
    show = [("segbench", segbench[0], ["--filter", "cpu.", "--quick"])]
    show += [p for p in progs if p[0] == "cpu_agree"]
    cpio = BUILD / target.name / "run-initramfs.cpio"
    targetrun.initramfs(target, tree, cpio, show)
    outcome, rep, console, _ = targetrun.boot_qemu(
        target, bdir, cpio, 900, label="run", icount=True,
        extra_args="pda.icount")
    say("")
    say("== guest output (i386-smp, 4 CPUs, qemu -icount shift=0) ==")
    for line in console.read_text(errors="replace").splitlines():
        if re.match(r"^ {4}\S", line) or re.match(r"^(not )?ok ", line):
            say(line)
    if outcome != boot.PASS:
        say(f"run: {outcome}; console log: {console}\n{tail(console)}")
    return boot.EXIT[outcome]
