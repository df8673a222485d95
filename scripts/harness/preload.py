# SPDX-License-Identifier: GPL-2.0
"""The preload library in the guests: libpda-getcpu.so and
tests/preload/preload_test, a dynamically linked program, with the
dynamic loader and the libraries they link, taken from the distribution's
packages (libc6-i386, libc6 and the -cross ones), at the paths their
loader searches.

preload_test runs three ways, each a test of its own:

  preload_plain         the C library's own sched_getcpu() and getcpu()
  preload_ld            LD_PRELOAD=libpda-getcpu.so: the PDA kernel's way
                        (the segment on x86, getcpu_cache on ARM)
  preload_ld_rseq_off   the same with glibc.pthread.rseq=0: the case the
                        library is for (an old glibc makes the system call)

and so does tests/preload/urcu_test, a program on Debian's liburcu
(urcu.py), whose libraries go next to the C library:
preload_urcu_plain, preload_urcu_ld, preload_urcu_ld_rseq_off.

On the architectures whose arch record says glibc231, preload_test and
the library are built once more against Debian 11's glibc 2.31, which
has no rseq (glibc231.py), and run on its loader and libraries, two
ways: preload_glibc231_plain and preload_glibc231_ld.
"""

import subprocess
from pathlib import Path

from . import glibc231, urcu
from .arches import ARCHES, sysroot_cflags
from .paths import REPO
from .progress import StepFailed, run

TEST = "preload_test"
URCU_TEST = "urcu_test"


def guest_lib(arch):
    return f"/usr/lib/pda/{arch.name}/libpda-getcpu.so"


def readelf(path, what):
    out = subprocess.run(["readelf", what, "-W", str(path)],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    if out.returncode:
        raise StepFailed(f"readelf {what} {path}:\n{out.stdout}")
    return out.stdout


def interpreter(exe):
    for line in readelf(exe, "-l").splitlines():
        if "Requesting program interpreter:" in line:
            return line.split(":", 1)[1].strip(" []")
    raise StepFailed(f"{exe} has no program interpreter: not dynamic?")


def dynamic_arch(exe):
    """The arches.Arch of a dynamically linked program, or None for a
    static one."""
    if "Requesting program interpreter:" not in readelf(exe, "-l"):
        return None
    head = readelf(exe, "-h")
    machine = next(line.split(":", 1)[1].strip() for line in head.splitlines()
                   if line.strip().startswith("Machine:"))
    for arch in ARCHES.values():
        if arch.elf_machine == machine:
            return arch
    raise StepFailed(f"{exe}: a program for {machine}, which no guest runs")


def needed(path):
    return [line.split("[", 1)[1].rstrip("]")
            for line in readelf(path, "-d").splitlines()
            if "(NEEDED)" in line]


def runtime_files(arch, binaries, lib_dirs=(), libc=None):
    """[(guest path, host file)]: the loader and every library the
    binaries need, transitively, from the C library package's directory
    or @lib_dirs (a distribution library's, urcu.py), each into the
    directory the guest's loader searches.  @libc: (host directory,
    guest directory) of another C library and its loader (glibc231.py)."""
    host_dir, guest_dir = libc or (arch.libc_dir, arch.guest_libc_dir)
    dirs = [Path(host_dir)] + [Path(d) for d in lib_dirs]
    interp = interpreter(binaries[0])
    files = {interp: Path(host_dir) / Path(interp).name}
    todo, seen = list(binaries), set()
    while todo:
        for soname in needed(todo.pop()):
            if soname in seen:
                continue
            seen.add(soname)
            host = next((d / soname for d in dirs if (d / soname).exists()),
                        None)
            if host is None:
                raise StepFailed(f"{arch.name}: {soname} not in "
                                 f"{', '.join(map(str, dirs))} (is the "
                                 "distribution's libc package installed?)")
            files[f"{guest_dir}/{soname}"] = host
            todo.append(host)
    for guest, host in files.items():
        if not host.exists():
            raise StepFailed(f"{arch.name}: {host} missing, for {guest}")
    return [(g, h.resolve()) for g, h in sorted(files.items())]


def build_library(arch, out, log, sysroot=None):
    """@sysroot: against the C library of that Debian root, not the
    toolchain's (tools/arch.mk's SYSROOT)."""
    run(["make", "-C", REPO / "tools/preload", f"ARCH={arch.name}",
         f"O={out}", *([f"SYSROOT={sysroot}"] if sysroot else [])], log,
        what=f"libpda-getcpu.so ({arch.name})")
    return Path(out) / "libpda-getcpu.so"


def build_program(arch, src, exe, tree, log, link=(), cflags=(),
                  sysroot=None):
    """A dynamically linked guest program, with the kselftest harness;
    @link: more libraries (and their -rpath) to link it with, @cflags:
    what their headers need (urcu.py); @sysroot: as build_library()'s."""
    abi = sysroot_cflags(arch, sysroot) if sysroot else arch.cflags
    run([arch.cc, *abi, *cflags, "-O2", "-g", "-Wall", "-Wextra",
         "-Wno-unused-parameter", "-Werror", "-pthread",
         f"-I{tree}/tools/testing/selftests", "-o", exe, src, *link, "-ldl"],
        log, what=f"{Path(exe).name} ({arch.name}, dynamic)")
    return exe


def build_shared(arch, src, lib, log, sysroot=None):
    """A shared library of ours for a guest program (urcubench.py's
    counting interposer); @sysroot: as build_library()'s."""
    abi = sysroot_cflags(arch, sysroot) if sysroot else arch.cflags
    run([arch.cc, *abi, "-O2", "-g", "-Wall", "-Wextra", "-Werror",
         "-shared", "-fPIC", f"-Wl,-soname,{Path(lib).name}", "-o", lib,
         src], log, what=f"{Path(lib).name} ({arch.name})")
    return lib


def quick_files(exe, out, log):
    """[(guest path, host file)] a `pda quick` boot needs for @exe: for a
    dynamically linked program what make check packs for its preload
    runs (the loader, its libraries, Debian's liburcu, libpda-getcpu.so
    at guest_lib()); for one built on the glibc 2.31 loader
    (build_glibc231()), that loader and libraries and the library built
    against them, at glibc231.guest_lib(); nothing for a static one."""
    arch = dynamic_arch(exe)
    if arch is None:
        return []
    if interpreter(exe) == glibc231.loader(arch):
        return glibc231_files(arch, [exe], Path(out) / f"glibc231-{arch.name}",
                              log)
    lib = build_library(arch, Path(out) / arch.name, log)
    return runtime_files(arch, [exe, lib],
                         lib_dirs=[urcu.unpack(arch, log)]) + \
        [(guest_lib(arch), lib)]


def ways(name, exe, arch, lib, rseq_off=True):
    """A preload test's runs: plain, preloaded, and preloaded with glibc's
    rseq off if @rseq_off (a glibc that registers rseq)."""
    args = ["--lib", lib]
    runs = [
        (f"{name}_plain", exe, args + ["--expect", "none"]),
        (f"{name}_ld", exe, args + ["--preload", "--expect",
                                    arch.preload_method]),
    ]
    if rseq_off:
        runs.append((f"{name}_ld_rseq_off", exe,
                     args + ["--preload", "--rseq-off", "--expect",
                             arch.preload_method]))
    return runs


def three_ways(name, exe, arch):
    """plain, preloaded, preloaded with glibc's rseq off."""
    return ways(name, exe, arch, guest_lib(arch))


def build_glibc231(arch, tree, out, log):
    """The library and preload_test against glibc 2.31: (library,
    program), each checked to need no newer symbol version."""
    root = glibc231.sysroot(arch, log)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    lib = build_library(arch, out, log, sysroot=root)
    exe = build_program(arch, REPO / "tests/preload/preload_test.c",
                        out / TEST, tree, log,
                        link=glibc231.link_flags(arch), sysroot=root)
    require_glibc231(lib, exe)
    return lib, exe


def require_glibc231(*paths):
    """Fails unless each of @paths, built against glibc 2.31, needs no
    newer symbol version."""
    for path in paths:
        newer = glibc231.too_new(symbol_versions(path))
        if newer:
            raise StepFailed(f"{path}: built against glibc 2.31, needs "
                             f"{', '.join(newer)}")


def symbol_versions(path):
    """The version names @path needs (readelf -V's version needs)."""
    out, need = set(), False
    for line in readelf(path, "-V").splitlines():
        if line.startswith("Version needs section"):
            need = True
        elif line.startswith("Version") and "section" in line:
            need = False
        elif need and "Name:" in line and "File:" not in line:
            out.add(line.split("Name:", 1)[1].split()[0])
    return out


def glibc231_files(arch, binaries, out, log):
    """[(guest path, host file)]: the library against glibc 2.31 (made
    if need be) and what it and @binaries, programs on the 2.31 loader,
    need in the guest."""
    lib = build_library(arch, out, log, sysroot=glibc231.sysroot(arch, log))
    return runtime_files(arch, [*binaries, lib],
                         libc=glibc231.libc(arch, log)) + \
        [(glibc231.guest_lib(arch), lib)]


def build(arch, tree, out, log):
    """(programs, files): the test runs, and [(guest path, host file)]
    the initramfs needs for them."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    lib = build_library(arch, out, log)
    exe = build_program(arch, REPO / "tests/preload/preload_test.c",
                        out / TEST, tree, log)
    cflags, libs = urcu.build_flags(arch, log)
    urcu_exe = build_program(arch, REPO / "tests/preload/urcu_test.c",
                             out / URCU_TEST, tree, log, libs, cflags)
    programs = three_ways("preload", exe, arch) + \
        three_ways("preload_urcu", urcu_exe, arch)
    files = runtime_files(arch, [exe, urcu_exe, lib],
                          lib_dirs=[urcu.unpack(arch, log)]) + \
        [(guest_lib(arch), lib)]
    if arch.glibc231:
        _, exe231 = build_glibc231(arch, tree, out / "glibc231", log)
        programs += ways("preload_glibc231", exe231, arch,
                         glibc231.guest_lib(arch), rseq_off=False)
        files += glibc231_files(arch, [exe231], out / "glibc231", log)
    return programs, files
