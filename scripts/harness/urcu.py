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

PACKAGES = ("liburcu8", "liburcu-dev")
# urcubench.py counts what jemalloc asks, beside liburcu, on x86-64 only.
JEMALLOC_PACKAGE = "libjemalloc2"
JEMALLOC = "libjemalloc.so.2"
# The default flavour (urcu-memb: liburcu.so) and the data structures.
LIBS = ("-lurcu-cds", "-lurcu")


def counts_jemalloc(arch):
    return arch.family == "x86" and arch.bits == 64


def unpack(arch, log):
    """Fetch and unpack the packages for @arch, once; returns the
    directory of its shared libraries.  debs.unpacked() keeps one package
    set per architecture, so jemalloc is in x86-64's set for every
    caller."""
    jemalloc = (JEMALLOC_PACKAGE,) if counts_jemalloc(arch) else ()
    debs.unpacked(arch, PACKAGES + jemalloc, log)
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
