# SPDX-License-Identifier: GPL-2.0
"""make run: build i386-smp, boot it, show the CPU-number methods.

The guest runs segbench's CPU-number table under `qemu -icount shift=0`,
where guest time counts instructions, so the guest's figures are exact
instruction counts rather than emulator wall-clock noise.  Instructions
are not cycles, so the run ends with the same methods' host cycles beside
them (runcost.py): segbench native on this host, or the records in
results/.  Only what the initramfs holds is built: the kernel, /init,
segbench's guest build and cpu_agree.
"""

import re

from . import boot, check, runcost, targetrun
from .paths import BUILD
from .progress import say, tail
from .targets import TARGETS

TARGET = "i386-smp"
# The initramfs beside /init: (name in /tests, the program
# targetrun.some_programs builds, its arguments; None: its NAME.args).
PACKED = [("segbench", "segbench_check", ["--filter", "cpu.", "--quick"]),
          ("cpu_agree", "cpu_agree", None)]


def user_space(target, tree, cpio):
    """Build /init and the PACKED programs alone and pack them into
    @cpio; returns {name in /tests: the program}."""
    init, built = targetrun.some_programs(
        target.user_arch, tree, [prog for _, prog, _ in PACKED])
    show = [(name, exe, own if argv is None else argv)
            for (name, _, argv), (_, exe, own) in zip(PACKED, built)]
    targetrun.initramfs(target, tree, cpio, show, init=init)
    return {name: exe for name, exe, _ in show}


def main():
    _, tree = check.patched_tree()
    target = TARGETS[TARGET]
    bdir = targetrun.kernel(target, tree)
    cpio = BUILD / target.name / "run-initramfs.cpio"
    user_space(target, tree, cpio)
    outcome, rep, console, _ = targetrun.boot_qemu(
        target, bdir, cpio, 900, label="run", icount=True,
        extra_args="pda.icount")
    text = console.read_text(errors="replace")
    say("")
    say("== guest output (i386-smp, 4 CPUs, qemu -icount shift=0) ==")
    for line in text.splitlines():
        if re.match(r"^ {4}\S", line) or re.match(r"^(not )?ok ", line):
            say(line)
    rows = runcost.guest_rows(text, "segbench")
    if rows:
        hosts, why = runcost.hosts([name for name, fig, _ in rows if fig])
        say("")
        for line in runcost.table(rows, hosts, why):
            say(line)
    if outcome != boot.PASS:
        say(f"run: {outcome}; console log: {console}\n{tail(console)}")
    return boot.EXIT[outcome]
