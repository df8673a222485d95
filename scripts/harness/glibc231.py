# SPDX-License-Identifier: GPL-2.0
"""Debian 11's C library, glibc 2.31, for the preload runs (preload.py).

glibc 2.31 registers no rseq area, so there sched_getcpu() is the vDSO's
getcpu on x86 or the system call: the case libpda-getcpu.so is for,
unsimulated.  Debian 11 "bullseye"'s libc6, libc6-dev, linux-libc-dev
and libgcc-s1 are fetched for a guest architecture into an apt state and
roots of their own (debs.py, ARCHIVE), and a library or program built
against that root as its sysroot (arches.sysroot_cflags(), tools/arch.mk's
SYSROOT=) binds only symbol versions 2.31 has (too_new() checks).

In a guest the 2.31 loader and libraries sit beside the toolchain's
(glibc 2.36, which has the standard loader path) in a directory of their
own, guest_dir(): a program built here names the loader there as its
interpreter and the directory as its DT_RPATH (link_flags()).  The
library itself names neither: the same file loads on a Debian 11 system.
"""

from pathlib import Path

from . import debs
from .paths import CACHE

# linux-libc-dev: the kernel headers <sys/syscall.h> includes.  libgcc-s1:
# gcc links with --as-needed -lgcc_s, whose libgcc_s.so.1 is then this
# release's, found in the root first, not the host's newer one.
PACKAGES = ("libc6", "libc6-dev", "linux-libc-dev", "libgcc-s1")
ARCHIVE = debs.Archive(CACHE / "apt-bullseye", CACHE / "debs-bullseye",
                       "bullseye")
# The newest symbol version a 2.31 build may need.
VERSION = (2, 31)
GUEST = "/usr/lib/pda/glibc231"


def sysroot(arch, log):
    """Debian 11's C library for @arch, unpacked (fetched once)."""
    return debs.unpacked(arch, PACKAGES, log, ARCHIVE)


def guest_dir(arch):
    """Where a guest has the 2.31 loader, libraries and our library."""
    return f"{GUEST}/{arch.name}"


def guest_lib(arch):
    return f"{guest_dir(arch)}/libpda-getcpu.so"


def loader(arch):
    """The 2.31 loader's path in a guest: a program's interpreter."""
    return f"{guest_dir(arch)}/{Path(arch.loader).name}"


def link_flags(arch):
    """What a program links with to start on the 2.31 loader and find the
    2.31 libraries in a guest.  DT_RPATH, not RUNPATH: it applies to
    every library the program loads, the preloaded one's too."""
    return [f"-Wl,--dynamic-linker={loader(arch)}",
            f"-Wl,-rpath,{guest_dir(arch)}", "-Wl,--disable-new-dtags"]


def libc(arch, log):
    """(host directory, guest directory) of the loader and the C library,
    for preload.runtime_files()."""
    return sysroot(arch, log) / "lib" / arch.multiarch, guest_dir(arch)


def version(arch):
    """libc6's Debian version unpacked for @arch, or None."""
    return debs.versions(arch, ARCHIVE).get("libc6")


def too_new(versions):
    """The GLIBC_x.y of @versions (readelf -V's names) newer than 2.31."""
    out = []
    for name in versions:
        if name.startswith("GLIBC_") and name[6:7].isdigit():
            num = tuple(int(n) for n in name[6:].split("."))
            if num[:2] > VERSION:
                out.append(name)
    return sorted(out)
