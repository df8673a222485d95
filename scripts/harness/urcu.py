# SPDX-License-Identifier: GPL-2.0
"""Debian's liburcu in the guests: liburcu8's shared libraries and
liburcu-dev's headers for each guest architecture, unmodified, from the
distribution's packages (debs.py), and how a program is built against
them.  liburcu asks sched_getcpu() on every add and delete of a
CDS_LFHT_ACCOUNTING hash table and on every call_rcu() with per-CPU
workers: a library users already run, whose calls libpda-getcpu.so
replaces (tests/preload/urcu_test in make check, preload.py;
tests/bench/urcu_bench in make bench, urcubench.py).
"""

from . import debs

# libjemalloc2: urcubench.py counts what jemalloc asks, beside liburcu
# (debs.unpacked() keeps one package set per architecture).
PACKAGES = ("liburcu8", "liburcu-dev", "libjemalloc2")
JEMALLOC = "libjemalloc.so.2"
# The default flavour (urcu-memb: liburcu.so) and the data structures.
LIBS = ("-lurcu-cds", "-lurcu")


def unpack(arch, log):
    """Fetch and unpack the packages for @arch, once; returns the
    directory of its shared libraries."""
    debs.unpacked(arch, PACKAGES, log)
    return debs.lib_dir(arch)


def build_flags(arch, log):
    """(cflags, libs): what a program linked against Debian's liburcu for
    @arch adds to the compiler's command line: its headers (-I, so before
    the i386 build's -isystem of the host's multiarch headers) and where
    the linker finds the libraries and their own dependencies; then the
    libraries, after the sources."""
    libs = unpack(arch, log)
    return [f"-I{debs.include_dir(arch)}", f"-L{libs}",
            f"-Wl,-rpath-link,{libs}"], list(LIBS)


def version(arch, package="liburcu8"):
    """@package's Debian version unpacked for @arch, or None."""
    return debs.versions(arch).get(package)
