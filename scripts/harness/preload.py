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
"""

import subprocess
from pathlib import Path

from . import urcu
from .arches import ARCHES
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


def runtime_files(arch, binaries, lib_dirs=()):
    """[(guest path, host file)]: the loader and every library the
    binaries need, transitively, from the C library package's directory
    or @lib_dirs (a distribution library's, urcu.py), each into the
    directory the guest's loader searches."""
    host_dir, guest_dir = arch.libc_dir, arch.guest_libc_dir
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


def build_library(arch, out, log):
    run(["make", "-C", REPO / "tools/preload", f"ARCH={arch.name}",
         f"O={out}"], log, what=f"libpda-getcpu.so ({arch.name})")
    return Path(out) / "libpda-getcpu.so"


def build_program(arch, src, exe, tree, log, link=(), cflags=()):
    """A dynamically linked guest program, with the kselftest harness;
    @link: more libraries (and their -rpath) to link it with, @cflags:
    what their headers need (urcu.py)."""
    run([arch.cc, *arch.cflags, *cflags, "-O2", "-g", "-Wall", "-Wextra",
         "-Wno-unused-parameter", "-Werror", "-pthread",
         f"-I{tree}/tools/testing/selftests", "-o", exe, src, *link, "-ldl"],
        log, what=f"{Path(exe).name} ({arch.name}, dynamic)")
    return exe


def build_shared(arch, src, lib, log):
    """A shared library of ours for a guest program (urcubench.py's
    counting interposer)."""
    run([arch.cc, *arch.cflags, "-O2", "-g", "-Wall", "-Wextra", "-Werror",
         "-shared", "-fPIC", f"-Wl,-soname,{Path(lib).name}", "-o", lib,
         src], log, what=f"{Path(lib).name} ({arch.name})")
    return lib


def quick_files(exe, out, log):
    """[(guest path, host file)] a `pda quick` boot needs for @exe: for a
    dynamically linked program what make check packs for its preload
    runs (the loader, its libraries, Debian's liburcu, libpda-getcpu.so
    at guest_lib()); nothing for a static one."""
    arch = dynamic_arch(exe)
    if arch is None:
        return []
    lib = build_library(arch, Path(out) / arch.name, log)
    return runtime_files(arch, [exe, lib],
                         lib_dirs=[urcu.unpack(arch, log)]) + \
        [(guest_lib(arch), lib)]


def three_ways(name, exe, arch):
    """A preload test's three runs: plain, preloaded, preloaded with
    glibc's rseq off."""
    args = ["--lib", guest_lib(arch)]
    return [
        (f"{name}_plain", exe, args + ["--expect", "none"]),
        (f"{name}_ld", exe, args + ["--preload", "--expect",
                                    arch.preload_method]),
        (f"{name}_ld_rseq_off", exe, args + ["--preload", "--rseq-off",
                                             "--expect", arch.preload_method]),
    ]


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
    return programs, files
