# SPDX-License-Identifier: GPL-2.0
"""pda quick: boot an already-built kernel with just the given programs.

For iterating on a guest test without a full `make check`: no configure,
no kernel build, its own scratch directory, so several can run at once.
A dynamically linked program gets what make check's preload runs pack:
its loader and libraries, and libpda-getcpu.so (preload.quick_files()),
or, for a program built on the glibc 2.31 loader (preload.build_glibc231()),
that glibc's loader and libraries and the library built against them.
The kernel's out-of-tree modules (modules.py) go in too.
"""

import tempfile
from pathlib import Path

from . import boot, guest, ktap, modules, preload
from .paths import BUILD, CACHE
from .progress import StepFailed, say
from .targets import TARGETS


def main(target_name, programs, timeout=600, args=""):
    target = TARGETS[target_name]
    bdir = BUILD / (target.kernel or target_name)
    image = bdir / target.arch.boot_image
    init = guest.user_dir(target.user_arch) / "init"
    for need in (image, init):
        if not Path(need).exists():
            raise StepFailed(f"quick: {need} missing; run `make check` "
                             "(or scripts/pda check --only TARGET) once")
    work = Path(tempfile.mkdtemp(prefix=f"quick-{target_name}-",
                                 dir=CACHE))
    fs = guest.Initramfs(init)
    files = {}
    for prog in programs:
        exe, _, argv = prog.partition(":")
        fs.add_test(Path(exe).name, Path(exe).resolve(),
                    argv.split() if argv else ())
        files.update(preload.quick_files(exe, work, work / "build.log"))
    files.update(modules.packed(bdir))
    for path, src in sorted(files.items()):
        fs.add_file_at(path, src)
    cpio = work / "initramfs.cpio"
    fs.write(CACHE / "tree", cpio, work / "initramfs.log")
    console = work / "console.log"
    say(f"quick: booting {image} ({target.cpus} CPUs), console: {console}")
    outcome, rep = boot.qemu(target, image, cpio, console, timeout, "tcg",
                             boot.kernel_args(target, timeout // 2, args))
    text = console.read_text(errors="replace")
    _, _, user = text.partition(ktap.INIT_STARTS)
    print(user)
    say(f"quick: {boot.describe(outcome, rep)}; console: {console}")
    return boot.EXIT[outcome]
