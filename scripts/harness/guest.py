# SPDX-License-Identifier: GPL-2.0
"""Guest user space: our tests, the upstream selftests, the initramfs."""

import os
import subprocess
from pathlib import Path

from .arches import MULTIARCH_HEADERS
from .paths import BUILD, CACHE, REPO
from .progress import StepFailed, run

# The upstream rseq selftests we run, with bounded parameters:
# (name in /tests, source, extra cflags, argv).
RSEQ_TESTS = [
    ("rseq_basic_test", "basic_test.c", [], []),
    ("rseq_basic_percpu_ops_test", "basic_percpu_ops_test.c", [], []),
] + [
    (f"rseq_param_test_{name}", "param_test.c", [],
     ["-T", flag, "-r", "200", "-t", "8"] + extra)
    for name, flag, extra in [
        ("spinlock", "s", []), ("list", "l", []), ("buffer", "b", []),
        ("buffer_barrier", "b", ["-M"]), ("memcpy", "m", []),
        ("increment", "i", []), ("membarrier", "r", []),
    ]
]


def static_cc(arch):
    """arches.Arch @arch's compiler of static programs (the initramfs has
    no loader), as a command."""
    return [arch.cc, *arch.cflags, "-static"]


def build_our_tests(arch, tree, out, log, only=None):
    """Build tests/guest for arch; return the programs its Makefile lists.
    The list, not the build dir: a dir shared with another checkout may
    hold programs this one does not have.  @only: build /init and these
    tests alone (with their NAME.args), and return these, for a boot that
    packs no others (make run); a name the list lacks fails."""
    make = ["make", "-C", REPO / "tests/guest", f"ARCH={arch.name}",
            f"O={out}", f"KSRC={tree}"]
    if only is None:
        run(make, log, what=f"guest tests ({arch.name})")
    names = subprocess.run(make + ["-s", "--no-print-directory", "list"],
                           check=True, text=True,
                           capture_output=True).stdout.split()
    if only is not None:
        unknown = sorted(set(only) - set(names))
        if unknown:
            raise StepFailed(f"tests/guest builds no {' '.join(unknown)} "
                             f"for {arch.name}")
        names = [name for name in names if name in only]
        run(make + our_goals(out, names), log,
            what=f"init, {' '.join(names)} ({arch.name})")
    return [Path(out) / "tests" / name for name in names]


def our_goals(out, names):
    """The tests/guest Makefile's goals for /init and tests @names: the
    files it makes, $(abspath $(O))/..., O taken from tests/guest."""
    top = Path(os.path.normpath(REPO / "tests/guest" / out))
    goals = [top / "init"]
    for name in names:
        goals.append(top / "tests" / name)
        if (REPO / "tests/guest" / f"{name}.args").exists():
            goals.append(top / "tests" / f"{name}.args")
    return goals


def build_init(arch, tree, out, log):
    """tests/guest's /init alone, for a boot that runs none of its tests."""
    init = Path(out) / "init"
    run(["make", "-C", REPO / "tests/guest", f"ARCH={arch.name}", f"O={out}",
         f"KSRC={tree}", init], log, what=f"init ({arch.name})")
    return init


def stripped(exe, arch, log):
    """A copy of exe without debug info or build ID: both record the paths
    of the checkout and the cache, so without stripping another clone would
    boot a different initramfs, and that alone moves the context-switch
    counts by a few instructions (kernel allocations land elsewhere)."""
    out = Path(exe).with_name(Path(exe).name + ".stripped")
    run([f"{arch.cross}strip", "--strip-all",
         "--remove-section=.note.gnu.build-id", "-o", out, exe], log,
        what=f"strip {Path(exe).name}")
    return out


def build_segbench(arch, out, log):
    run(["make", "-C", REPO / "tools/segbench", f"ARCH={arch.name}",
         f"O={out}"], log, what=f"segbench ({arch.name})")
    return Path(out) / "segbench"


def build_pda_bench(arch, out, log):
    """tests/bench/pda_bench.c, static, with the guest's compiler."""
    return build_bench_program("pda_bench", arch, out, log)


def build_bench_program(name, arch, out, log, deps=(), cflags=()):
    """tests/bench/NAME.c, static, with the guest's compiler; @deps: the
    headers it includes beyond tests/guest/lib, relative to the checkout;
    @cflags: its own, after the common ones."""
    src = REPO / f"tests/bench/{name}.c"
    exe = Path(out) / name
    Path(out).mkdir(parents=True, exist_ok=True)
    # Only when the source changed: the initramfs records each file's
    # mtime, and the same program should make the same initramfs.
    newest = max(p.stat().st_mtime for p in
                 [src] + [REPO / d for d in deps])
    if exe.exists() and exe.stat().st_mtime >= newest:
        return exe
    run(static_cc(arch) + ["-O2", "-Wall", "-Wextra", "-Werror", "-pthread",
                           *cflags, "-o", exe, src], log,
        what=f"{name} ({arch.name})")
    return exe


def build_x86_selftests(arch, tree, out, log):
    """The upstream x86 selftests of @arch's bits, static (no loader in
    the guest).  Their Makefile adds -m32 or -m64 itself."""
    bits = arch.bits
    sdir = Path(tree) / "tools/testing/selftests/x86"
    Path(out).mkdir(parents=True, exist_ok=True)
    run(["make", "-C", sdir, f"all_{bits}", f"OUTPUT={out}",
         " ".join(["CC=" + arch.cc, "-static", *MULTIARCH_HEADERS])], log,
        what=f"x86 selftests ({bits}-bit)")
    return sorted(p for p in Path(out).glob(f"*_{bits}") if p.is_file())


def install_headers(arch, tree, log):
    """The tree's uAPI headers, as the selftests' KHDR_INCLUDES wants:
    the cross toolchains ship older ones (no AT_RSEQ_* on armhf)."""
    out = BUILD / f"headers-{arch.name}"
    run(["make", "-C", tree, f"ARCH={arch.name}", f"O={out}",
         f"INSTALL_HDR_PATH={out}/usr", "headers_install"], log,
        what=f"headers_install ({arch.name})")
    return out / "usr/include"


def build_rseq_selftests(arch, tree, out, log):
    sdir = Path(tree) / "tools/testing/selftests/rseq"
    Path(out).mkdir(parents=True, exist_ok=True)
    headers = install_headers(arch, tree, log)
    built = []
    for name, src, cflags, argv in RSEQ_TESTS:
        exe = Path(out) / src.replace(".c", "")
        if not exe.exists() or exe.stat().st_mtime < (sdir / src).stat().st_mtime:
            run(static_cc(arch) +
                ["-O2", "-Wall", f"-I{sdir}", "-isystem", headers,
                 f"-I{Path(tree) / 'tools/include'}"] + cflags +
                [sdir / src, sdir / "rseq.c", "-lpthread", "-o", exe],
                log, what=f"rseq selftest {src} ({arch.name})")
        built.append((name, exe, argv))
    return built


def build_gen_init_cpio(tree):
    exe = CACHE / "tools/gen_init_cpio"
    src = Path(tree) / "usr/gen_init_cpio.c"
    if not exe.exists() or exe.stat().st_mtime < src.stat().st_mtime:
        exe.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["gcc", "-O2", "-o", exe, src], check=True)
    return exe


class Initramfs:
    """Collects /init and /tests/* and writes a cpio with gen_init_cpio."""

    def __init__(self, init):
        self.lines = ["dir /dev 755 0 0", "nod /dev/console 600 0 0 c 5 1",
                      "dir /proc 755 0 0", "dir /sys 755 0 0",
                      "dir /tmp 1777 0 0", "dir /tests 755 0 0",
                      f"file /init {init} 755 0 0"]
        self.names = set()

    def add_test(self, name, exe, argv=()):
        if name in self.names:
            raise StepFailed(f"initramfs: two tests named {name}")
        self.names.add(name)
        self.lines.append(f"file /tests/{name} {exe} 755 0 0")
        if argv:
            self.lines.append((name, " ".join(argv) + "\n"))

    def add_file(self, path, src, mode="755"):
        self.lines.append(f"file {path} {src} {mode} 0 0")

    def add_file_at(self, path, src, mode="755"):
        """add_file, with the directories above it made first."""
        for parent in reversed(Path(path).parents[:-1]):
            line = f"dir {parent} 755 0 0"
            if line not in self.lines:
                self.lines.append(line)
        self.add_file(path, src, mode)

    def write(self, tree, cpio, log, mtime=None):
        """mtime: one timestamp for every entry (a byte-identical cpio
        from the same files), instead of now and each file's own."""
        # Each cpio its own argument files: another run may give the same
        # program other arguments, or not own its directory.
        args_dir = Path(str(cpio) + ".args")
        args_dir.mkdir(parents=True, exist_ok=True)
        lines = []
        for line in self.lines:
            if isinstance(line, tuple):         # (test name, its argv)
                args = args_dir / line[0]
                args.write_text(line[1])
                line = f"file /tests/{line[0]}.args {args} 644 0 0"
            lines.append(line)
        listing = Path(str(cpio) + ".list")
        listing.write_text("\n".join(lines) + "\n")
        gen = build_gen_init_cpio(tree)
        stamp = ["-t", str(mtime)] if mtime is not None else []
        with open(cpio, "wb") as out, open(log, "a") as err:
            if subprocess.call([gen] + stamp + [listing], stdout=out,
                               stderr=err):
                raise StepFailed(f"gen_init_cpio failed\n  log: {log}")


def extra_tests(extra_dir, arch):
    """EXTRA_TESTS=DIR: every executable in DIR/<arch>/ is one more test."""
    d = Path(extra_dir) / arch.name
    if not d.is_dir():
        return []
    return sorted(p for p in d.iterdir()
                  if p.is_file() and p.stat().st_mode & 0o111)


def user_dir(arch):
    return BUILD / f"user-{arch.name}"
