# SPDX-License-Identifier: GPL-2.0
"""make debian-configs: the series in the kernel configs Debian ships.

Every other kernel the harness builds is tinyconfig plus fragments.
Users run their distribution's: modules, Xen, KVM, hundreds of drivers.
For each flavour of FLAVOURS (the arch records' deb_flavours), Debian's
own config (linux-config-6.12, and for i386, which Debian 12 builds no
6.12 for, linux-config-6.1's carried to 6.12 by olddefconfig) gets the
series' options turned on, then olddefconfig, and every option asked for
must have kept its value.
Then every object the series adds or changes that the config builds is
compiled with W=1: a warning fails unless the pristine tree prints it
too, for the same object and config (seriesobjs.py).  With --full, the
flavours marked full also build vmlinux and every module, modpost
included, and our out-of-tree modules against them (modules.py).

Not Debian's exactly: debug info is off (no BTF, so no pahole; it
changes no code, only the build's size and time), and KUNIT is a module
so that the series' KUnit suite builds as one.
"""

import json
import lzma
import time
from dataclasses import dataclass

from . import debs, kbuild, modules, seriesobjs
from .arches import ARCHES, HOST
from .check import patched_tree
from .paths import BUILD, CACHE, LOGS, REPO
from .progress import Phase, StepFailed, reset_log, run, say

ARCHIVE = debs.Archive(CACHE / "apt", CACHE / "debs-kconfig")
STATE = CACHE / "debian-configs"
RESULTS = "results/DEBIAN-CONFIGS.md"


@dataclass(frozen=True)
class Flavour:
    name: str           # Debian's: config.<arch>_none_<name>
    arch: object        # arches.Arch: make's ARCH= and compilers
    # The Debian kernel series whose config package has it (its arch
    # record's deb_kconfig).
    debian: str
    # vmlinux and every module too, with --full (a full build: long).
    full: bool = False

    @property
    def package(self):
        return f"linux-config-{self.debian}"

    def config_file(self, root):
        return (root / "usr/src" / self.package /
                f"config.{self.arch.deb_arch}_none_{self.name}.xz")


# Each arch record's deb_flavours, the host's first (Debian's default
# flavour, amd64, heads the report), then in ARCHES' order.
FLAVOURS = {name: Flavour(name, arch, debian=arch.deb_kconfig,
                          full=name == arch.deb_full_flavour)
            for arch in sorted(ARCHES.values(), key=lambda a: a is not HOST)
            for name in arch.deb_flavours}


def series_options(arch):
    """{NAME: value} of the series' options @arch's configs get
    (arches.py's deb_options)."""
    return dict(o.split("=", 1) for o in arch.deb_options)


# What the build changes besides: no debug info (see above).
BUILD_OPTIONS = {"DEBUG_INFO_NONE": "y",
                 "DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT": "n"}


def configure(flavour, tree, bdir, log, options):
    """Debian's config in @bdir, @options set, olddefconfig; every
    option must keep its value."""
    root = debs.unpacked(flavour.arch, [flavour.package], log, ARCHIVE)
    src = flavour.config_file(root)
    if not src.exists():
        raise StepFailed(f"{flavour.name}: {src} is not in "
                         f"{flavour.package} {debs.versions(flavour.arch, ARCHIVE)}")
    bdir.mkdir(parents=True, exist_ok=True)
    (bdir / ".config").write_bytes(lzma.decompress(src.read_bytes()))
    args = []
    for opt, val in options.items():
        args += {"y": ["--enable", opt], "m": ["--module", opt],
                 "n": ["--disable", opt]}[val]
    run([tree / "scripts/config", "--file", bdir / ".config", *args], log,
        what="scripts/config")
    run(kbuild.make_cmd(flavour, tree, bdir, "olddefconfig"), log,
        env=kbuild.make_env(), what="make olddefconfig")
    lost = kbuild.missing_options(
        {f"CONFIG_{k}": v for k, v in options.items()}, bdir / ".config")
    if lost:
        raise StepFailed(f"[{flavour.name}] options did not survive "
                         "olddefconfig:\n    " + "\n    ".join(lost) +
                         f"\n  log: {log}")
    return seriesobjs.config_values(bdir / ".config")


def build_flavour(flavour, tree, full):
    """Build one flavour; returns its state (figures, for report())."""
    log = reset_log(LOGS / "debian-configs" / f"{flavour.name}.log")
    bdir = BUILD / f"debian-{flavour.name}"
    state = {"flavour": flavour.name, "arch": flavour.arch.name,
             "package": flavour.package, "minutes": {}}
    start = time.monotonic()
    with Phase(flavour.name, "Debian's config + the series' options", log):
        options = {**series_options(flavour.arch), **BUILD_OPTIONS}
        values = configure(flavour, tree, bdir, log, options)
    state["version"] = debs.versions(flavour.arch, ARCHIVE)[flavour.package]
    state["options"] = options
    state["minutes"]["config"] = (time.monotonic() - start) / 60
    objects, left = seriesobjs.built_here(flavour.arch, values)
    state["objects"], state["left"] = objects, left
    start = time.monotonic()
    with Phase(flavour.name, f"W=1: {len(objects)} objects of the series",
               log):
        seriesobjs.require_no_new_warnings(
            flavour, tree, bdir, objects, log, f"debian-{flavour.name}",
            flavour.name)
    state["minutes"]["objects"] = (time.monotonic() - start) / 60
    if full and flavour.full:
        # A build directory that has linked before makes the minutes
        # those of an incremental build; the report says so.
        state["incremental"] = (bdir / "vmlinux").exists()
        start = time.monotonic()
        with Phase(flavour.name, "vmlinux and modules", log):
            run(kbuild.make_cmd(flavour, tree, bdir, "vmlinux", "modules"),
                log, env=kbuild.make_env(),
                what=f"[{flavour.name}] vmlinux modules")
        state["minutes"]["full"] = (time.monotonic() - start) / 60
        state["modules"] = sum(1 for _ in (bdir / "modules.order").open())
        with Phase(flavour.name, "out-of-tree modules (tests/modules)", log):
            state["ours"] = [ko.name for ko in
                             modules.build(flavour, tree, bdir, log)]
        state["ours_left"] = modules.left_out(
            flavour.arch, (bdir / ".config").read_text())
    return state


def full_cell(st):
    ours = "".join(f" + `{ko}`" for ko in st.get("ours", []))
    how = " (incremental)" if st.get("incremental") else ""
    left = "".join(f"; `{name}` not built ({why})"
                   for name, why in st.get("ours_left", {}).items())
    return (f"built, {st['modules']} modules{ours}, "
            f"{st['minutes']['full']:.1f} min{how}{left}")


def report(states):
    """results/DEBIAN-CONFIGS.md from @states (flavour order)."""
    rows = []
    for st in states:
        m = st["minutes"]
        rows.append(
            f"| {st['flavour']} | {st['arch']} | {st['package']} "
            f"{st['version']} | "
            + ", ".join(f"`{k}={v}`" for k, v in st["options"].items()
                        if k in series_options(ARCHES[st["arch"]])) +
            f" | {len(st['objects'])} | "
            + ("; ".join(f"`{s}` ({why})" for s, why in st["left"].items())
               or "none") +
            " | " + (full_cell(st) if "full" in m else "not built") +
            f" | {m['config']:.1f} + {m['objects']:.1f} | {st['commit']} |")
    return "\n".join([
        "# The series in Debian's kernel configs (`make debian-configs`)",
        "",
        "Written by `make debian-configs` (`scripts/harness/debconfig.py`); "
        "do not edit by hand. Each flavour is Debian's own config (Debian "
        "12's `linux-config-6.12`; for i386, which Debian 12 builds no 6.12 "
        "for, `linux-config-6.1`'s carried to 6.12 by `olddefconfig`) with "
        "the series' options turned on, debug info off (no BTF, so no "
        "pahole; no code changes) and `KUNIT=m`, then `olddefconfig`: "
        "every option asked for kept its value. Every object the series "
        "adds or changes that the config builds was compiled with `W=1` "
        "and printed no warning the pristine tree does not print for the "
        "same object and config. `FULL=1` also builds `vmlinux` and every "
        "module (modpost included) of the flavours that say so, and the "
        "out-of-tree modules of `tests/modules` that are for its ARCH "
        "against it; the minutes are that build's alone.",
        "",
        "| flavour | ARCH | config | the series' options | objects, W=1 "
        "| not in this config | vmlinux + modules | minutes (config + "
        "objects) | commit |",
        "|---|---|---|---|---|---|---|---|---|",
        *rows, ""])


def load_states(names):
    out = []
    for name in names:
        path = STATE / f"{name}.json"
        if path.exists():
            out.append(json.loads(path.read_text()))
    return out


def main(names=None, full=False):
    _, tree = patched_tree()
    names = names or list(FLAVOURS)
    failed = [name for name in names
              if not seriesobjs.record_build(
                  name, lambda: build_flavour(FLAVOURS[name], tree, full),
                  STATE)]
    (REPO / RESULTS).write_text(report(load_states(FLAVOURS)))
    say(f"debian-configs: wrote {RESULTS}")
    say(f"{len(names) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0
