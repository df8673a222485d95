# SPDX-License-Identifier: GPL-2.0
"""One target, end to end: configure, build, guest user space, boot."""

import contextlib
import fcntl
from pathlib import Path

from . import boot, guest, guestout, kbuild, ktap, modules, preload
from .paths import BUILD, LOGS
from .progress import Phase, StepFailed, reset_log, say, tail
from .targets import TARGETS

_user_built = {}
# Per arch: [(guest path, host file)] the dynamic programs need.
_guest_files = {}
_kernels_built = set()
# A whole boot's time limit, tests included, unless a run sets its own.
QEMU_TIMEOUT = 1200


def kernel(target, src, bdir=None, extra_fragments=(), label=None,
           unverified=()):
    """Configure and build, once per harness run; returns the build
    directory.  `unverified`: requested options not to check
    (kbuild.configure)."""
    if target.kernel:       # another target's kernel, on another CPU model
        target = TARGETS[target.kernel]
    label = label or target.name
    bdir = Path(bdir or BUILD / label)
    key = (label, str(src), bdir, tuple(extra_fragments), tuple(unverified))
    if key in _kernels_built:
        return bdir
    logs = LOGS / label
    with build_lock(label):
        _kernel(target, src, bdir, logs, label, extra_fragments, unverified)
    _kernels_built.add(key)
    return bdir


@contextlib.contextmanager
def build_lock(label):
    """Two builds in one O= directory corrupt each other; wait our turn."""
    BUILD.mkdir(parents=True, exist_ok=True)
    with open(BUILD / f".{label}.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say(f"[{label}] waiting for another build of {label}")
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _kernel(target, src, bdir, logs, label, extra_fragments, unverified):
    log = reset_log(logs / "configure.log")
    with Phase(label, "configure", log):
        kbuild.configure(target, src, bdir, log, extra_fragments, unverified)
    log = reset_log(logs / "build.log")
    with Phase(label, "build " + " ".join(target.arch.images), log):
        kbuild.build(target, src, bdir, log)
    log = reset_log(logs / "modules.log")
    with Phase(label, "out-of-tree modules (if CONFIG_MODULES)", log):
        modules.build(target, src, bdir, log)


def user_space(arch, tree):
    """Build every guest program for arch once per harness run."""
    if arch in _user_built:
        return _user_built[arch]
    out = guest.user_dir(arch)
    log = reset_log(LOGS / f"user-{arch.name}.log")
    with Phase(f"user-{arch.name}", "build guest programs", log):
        progs = _our_tests(arch, tree, out, log)
        if arch.segbench:
            segbench = guest.build_segbench(arch, out / "segbench", log)
            progs.append(("segbench_check", segbench, ["--check"]))
        if arch.bench_checks:
            progs += [(name, segbench, argv)
                      for name, argv in guestout.SEGBENCH.items()]
            if arch.family == "x86":
                progs += [(name, segbench, argv) for name, argv
                          in guestout.SEGBENCH_X86.items()]
            progs.append((guestout.PDA_BENCH,
                          guest.build_pda_bench(arch, out / "bench", log),
                          []))
        # Peer suites from the upstream tree, named so nobody mistakes
        # them for ours.
        if arch.x86_selftests:
            for exe in guest.build_x86_selftests(arch, tree,
                                                 out / "selftests-x86", log):
                progs.append((f"upstream_x86_{exe.name}", exe, []))
        progs += [(f"upstream_{name}", exe, argv) for name, exe, argv in
                  guest.build_rseq_selftests(arch, tree, out / "rseq", log)]
        dynamic, files = preload.build(arch, tree, out / "preload", log)
        progs += dynamic
        _guest_files[arch] = files
    _user_built[arch] = (out / "init", progs)
    return _user_built[arch]


def _our_tests(arch, tree, out, log, only=None):
    """[(name, exe, argv)] of tests/guest (guest.build_our_tests), each
    with the arguments of its NAME.args."""
    progs = []
    for exe in guest.build_our_tests(arch, tree, out, log, only):
        args = exe.with_name(exe.name + ".args")
        argv = args.read_text().split() if args.exists() else []
        progs.append((exe.name, exe, argv))
    return progs


def some_programs(arch, tree, names):
    """user_space for a boot that packs a few programs (make run): /init
    and the programs @names alone, tests/guest tests by name and
    "segbench_check" (segbench's guest build), built where user_space
    builds them.  Returns (init, [(name, exe, argv)]) in @names' order,
    for initramfs(..., init=init)."""
    out = guest.user_dir(arch)
    log = reset_log(LOGS / f"user-{arch.name}.log")
    ours = [name for name in names if name != "segbench_check"]
    with Phase(f"user-{arch.name}", "build /init, " + ", ".join(names),
               log):
        progs = _our_tests(arch, tree, out, log, ours)
        if "segbench_check" in names:
            if not arch.segbench:
                raise StepFailed(f"segbench has no {arch.name} build")
            progs.append(("segbench_check", guest.build_segbench(
                arch, out / "segbench", log), ["--check"]))
    by_name = {name: (name, exe, argv) for name, exe, argv in progs}
    return out / "init", [by_name[name] for name in names]


def target_programs(target, tree):
    """(init, programs) a target boots with: its user_arch build, then its
    user_arch_64 build named NAME_64 unless the name says _64 already (the
    upstream x86 selftests)."""
    init, progs = user_space(target.user_arch, tree)
    if target.user_arch_64:
        _, progs64 = user_space(target.user_arch_64, tree)
        progs = progs + [(n if n.endswith("_64") else f"{n}_64", exe, argv)
                         for n, exe, argv in progs64]
    return init, progs


def extra_archs(target):
    """EXTRA_TESTS=DIR: the subdirectories of DIR a target runs."""
    return (target.user_arch,) + ((target.user_arch_64,)
                                  if target.user_arch_64 else ())


def initramfs(target, tree, cpio, programs, extra_dir=None, label=None,
              full=False, kernel_dir=None, init=None):
    """Returns the tests left out (ktap.not_run), as skip results.
    @kernel_dir: the kernel's build directory, whose out-of-tree modules
    (modules.py) go in too.  @init: /init, built already with @programs
    (some_programs), all static: then nothing else is built or packed (no
    loader, no libraries: preload.py's files)."""
    whole = init is None
    if whole:
        init, progs = target_programs(target, tree)
    else:
        progs = []
    fs = guest.Initramfs(init)
    left_out = ktap.not_run(label or target.name, full)
    skipped = []
    for name, exe, argv in progs if programs is None else programs:
        if name in left_out:
            skipped.append(ktap.Result(name, "skip",
                                       f"not run here: {left_out[name]}"))
            continue
        fs.add_test(name, exe, argv)
    for arch in extra_archs(target) if whole else ():
        for path, src in _guest_files.get(arch, ()):
            fs.add_file_at(path, src)
    for path, ko in modules.packed(kernel_dir) if kernel_dir else ():
        fs.add_file_at(path, ko)
    if extra_dir:
        for arch in extra_archs(target):
            for exe in guest.extra_tests(extra_dir, arch):
                fs.add_test(f"extra_{arch.name}_{exe.name}"
                            if arch == target.user_arch_64
                            else f"extra_{exe.name}", exe)
    log = LOGS / target.name / "initramfs.log"
    reset_log(log)
    fs.write(tree, cpio, log)
    return skipped


def boot_qemu(target, bdir, cpio, timeout, label=None, icount=False,
              extra_args="", not_run=(), test_timeout=None):
    """timeout: the whole boot's; test_timeout: each test's, by default a
    third of it."""
    label = label or target.name
    console = LOGS / label / "console.log"
    image = Path(bdir) / target.arch.boot_image
    accel, why = ("tcg", "-icount needs TCG") if icount else \
        boot.accel_for(target, image, cpio)
    with Phase(label, f"boot + tests in QEMU ({accel}: {why}; "
               f"{target.cpus} CPUs)", console):
        outcome, rep = boot.qemu(
            target, image, cpio, console, timeout, accel,
            boot.kernel_args(target, test_timeout or timeout // 3,
                             extra_args), icount)
    rep.results += not_run
    say(f"[{label}] {boot.describe(outcome, rep)}")
    boot.report_lines(rep, console)
    return outcome, rep, console, accel


def boot_chosen(name, label, tree, args, keep, listed_skip=None,
                timeout=QEMU_TIMEOUT, test_timeout=None, need=()):
    """Boots target @name with the programs @keep(name) accepts, as run
    @label.  @listed_skip(name): why a program left out is listed as
    skipped ("" for not listed); @need: programs that must be among them
    (a renamed test would otherwise just shrink the run).  One row."""
    target = TARGETS[name]
    bdir = kernel(target, tree)
    _, progs = target_programs(target, tree)
    chosen, left = [], []
    for prog in progs:
        if keep(prog[0]):
            chosen.append(prog)
        elif listed_skip and listed_skip(prog[0]):
            left.append(ktap.Result(prog[0], "skip",
                                    f"not run here: {listed_skip(prog[0])}"))
    missing = sorted(set(need) - {p[0] for p in chosen})
    if missing or not chosen:
        raise StepFailed(f"programs for {label} not built: "
                         f"{', '.join(missing) or 'all'}")
    cpio = BUILD / label / "initramfs.cpio"
    cpio.parent.mkdir(parents=True, exist_ok=True)
    left += initramfs(target, tree, cpio, chosen, label=label,
                                full=True, kernel_dir=bdir)
    outcome, rep, console, accel = boot_qemu(
        target, bdir, cpio, timeout, label=label, extra_args=args,
        not_run=left, test_timeout=test_timeout)
    if outcome != boot.PASS:
        say(f"[{label}] {outcome}; console log: {console}\n{tail(console)}")
    return (label, outcome, rep, f"{accel}, {target.cpus} CPUs, {console}")
