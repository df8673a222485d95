# SPDX-License-Identifier: GPL-2.0
"""Configure (tinyconfig + fragments, verified) and build with Kbuild."""

import os
import re
from pathlib import Path

from .paths import CCACHE, REPO
from .progress import StepFailed, run

CONFIGS = REPO / "configs"


def make_cmd(target, src, bdir, *goals):
    arch = target.arch
    cmd = ["make", "-C", src, f"O={bdir}", f"ARCH={arch.name}",
           f"CC=ccache {arch.cc}", "HOSTCC=ccache gcc",
           f"-j{os.cpu_count() or 2}"]
    if arch.cross:
        cmd.append(f"CROSS_COMPILE={arch.cross}")
    return cmd + list(goals)


def make_env():
    """Reproducible builds: the same sources make the same vmlinux.  The
    version string says "#1 ... pda" however often this build directory
    was linked (the banner seeds the kernel's RNG, and on SMP that alone
    moves make bench's migration counts); the built-in initramfs needs a
    real date for its mtimes (with an invalid one it takes the time of
    the build)."""
    return {"CCACHE_DIR": str(CCACHE), "KBUILD_BUILD_VERSION": "1",
            "KBUILD_BUILD_VERSION_TIMESTAMP": "pda",
            "KBUILD_BUILD_TIMESTAMP": "2026-01-01 00:00:00 UTC",
            "KBUILD_BUILD_USER": "pda", "KBUILD_BUILD_HOST": "pda"}


def requested(fragments):
    """{CONFIG_X: value} from fragments; 'n' for '# CONFIG_X is not set'."""
    want = {}
    for frag in fragments:
        for line in Path(frag).read_text().splitlines():
            m = re.match(r"^(CONFIG_\w+)=(.*)$", line)
            if m:
                want[m.group(1)] = m.group(2)
                continue
            m = re.match(r"^# (CONFIG_\w+) is not set", line)
            if m:
                want[m.group(1)] = "n"
    return want


def missing_options(want, dotconfig):
    """Options whose value olddefconfig did not keep, as messages."""
    have = {}
    for line in Path(dotconfig).read_text().splitlines():
        m = re.match(r"^(CONFIG_\w+)=(.*)$", line)
        if m:
            have[m.group(1)] = m.group(2)
    lost = []
    for opt, val in want.items():
        got = have.get(opt, "n")
        if got != val:
            lost.append(f"{opt}={val} (got {got})")
    return lost


def series_options(root=REPO):
    """The CONFIG_ names the series itself defines: every `config X` a
    patch adds.  A mainline build from the same fragments cannot have
    them, so it does not verify them."""
    sym = r"^\+[ \t]*(?:menu)?config[ \t]+(\w+)[ \t]*$"
    names = set()
    for patch in sorted((Path(root) / "patches").glob("*.patch")):
        names.update(re.findall(sym, patch.read_text(errors="replace"),
                                re.M))
    return {f"CONFIG_{n}" for n in names}


def configure(target, src, bdir, log, extra_fragments=(), unverified=()):
    """tinyconfig + fragments; every requested option must survive, except
    those in `unverified` (a mainline build: the series' own options)."""
    frags = [CONFIGS / f"{f}.config" for f in target.fragments]
    frags += [Path(f) for f in extra_fragments]
    Path(bdir).mkdir(parents=True, exist_ok=True)
    env = make_env()
    run(make_cmd(target, src, bdir, "tinyconfig"), log, env=env,
        what="make tinyconfig")
    run([Path(src) / "scripts/kconfig/merge_config.sh", "-m", "-O", bdir,
         Path(bdir) / ".config"] + frags, log, env=env, cwd=src,
        what="merge_config.sh")
    run(make_cmd(target, src, bdir, "olddefconfig"), log, env=env,
        what="make olddefconfig")
    want = requested(frags)
    skip = sorted(set(want) & set(unverified))
    if skip:
        with open(log, "a") as out:
            out.write("not verified (defined by the PDA series): " +
                      " ".join(skip) + "\n")
    lost = missing_options({k: v for k, v in want.items() if k not in skip},
                           Path(bdir) / ".config")
    if lost:
        raise StepFailed(f"[{target.name}] options did not survive "
                         "olddefconfig (missing dependency?):\n    " +
                         "\n    ".join(lost) + f"\n  log: {log}")


def build(target, src, bdir, log, goals=None):
    run(make_cmd(target, src, bdir, *(goals or target.arch.images)), log,
        env=make_env(), what=f"[{target.name}] kernel build")
