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
"""

import subprocess
from pathlib import Path

from .paths import REPO
from .progress import StepFailed, run

TEST = "preload_test"


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


def needed(path):
    return [line.split("[", 1)[1].rstrip("]")
            for line in readelf(path, "-d").splitlines()
            if "(NEEDED)" in line]


def runtime_files(arch, binaries):
    """[(guest path, host file)]: the loader and every library the
    binaries need, transitively, from the package's directory."""
    host_dir, guest_dir = arch.libc_dir, arch.guest_libc_dir
    interp = interpreter(binaries[0])
    files = {interp: Path(host_dir) / Path(interp).name}
    todo, seen = list(binaries), set()
    while todo:
        for soname in needed(todo.pop()):
            if soname in seen:
                continue
            seen.add(soname)
            host = Path(host_dir) / soname
            if not host.exists():
                raise StepFailed(f"{arch.name}: {soname} not in {host_dir} "
                                 "(is the distribution's libc package "
                                 "installed?)")
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


def build_program(arch, src, exe, tree, log):
    """A dynamically linked guest program, with the kselftest harness."""
    run([arch.cc, *arch.cflags, "-O2", "-g", "-Wall", "-Wextra", "-Wno-unused-parameter",
              "-Werror", "-pthread", f"-I{tree}/tools/testing/selftests",
              "-o", exe, src, "-ldl"],
        log, what=f"{Path(exe).name} ({arch.name}, dynamic)")
    return exe


def build(arch, tree, out, log):
    """(programs, files): the three test runs, and [(guest path, host
    file)] the initramfs needs for them."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    lib = build_library(arch, out, log)
    exe = build_program(arch, REPO / "tests/preload/preload_test.c",
                        out / TEST, tree, log)
    where = guest_lib(arch)
    args = ["--lib", where]
    programs = [
        ("preload_plain", exe, args + ["--expect", "none"]),
        ("preload_ld", exe, args + ["--preload", "--expect",
                                    arch.preload_method]),
        ("preload_ld_rseq_off", exe, args + ["--preload", "--rseq-off",
                                             "--expect", arch.preload_method]),
    ]
    files = runtime_files(arch, [exe, lib]) + [(where, lib)]
    return programs, files
