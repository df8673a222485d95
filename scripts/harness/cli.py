# SPDX-License-Identifier: GPL-2.0
"""Command line: pda check | check-full | run | bench | patches | deb |
distro | scale | memcached."""

import argparse
import sys

from . import bench, benchparts, bisect, check, checkfull, deb, distro, \
    debconfig, export, memcached, quick, randconfig, run, scale
from .arches import ARCHES
from .progress import StepFailed, say
from .targets import CHECK_ORDER, TARGETS


def seed_arg(text):
    """1 .. 2^31-1: what the 32-bit guests read back as a positive long."""
    seed = int(text)
    if not 1 <= seed <= 2**31 - 1:
        raise argparse.ArgumentTypeError(f"{seed}: a seed is 1 .. 2147483647")
    return seed


def main(argv):
    # Target names are checked here, before any work: an unknown one is
    # an error that lists the known ones.
    qemu = [n for n, t in TARGETS.items() if not t.bochs]
    parts = [p.name for p in benchparts.PARTS]
    ap = argparse.ArgumentParser(prog="pda")
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check", help="the whole test suite")
    c.add_argument("--extra-tests", metavar="DIR",
                   help=f"also run DIR/{{{','.join(ARCHES)}}}/* in the "
                   "guests")
    c.add_argument("--only", nargs="+", metavar="TARGET", choices=TARGETS,
                   help=f"{' '.join(CHECK_ORDER)} (default: all)")
    c.add_argument("--seed", type=seed_arg,
                   help="the fuzzers' seed (default: their fixed one)")
    f = sub.add_parser("check-full", help="make check, the debug kernels, "
                       "a soak, in parts; writes results/RELIABILITY.md")
    f.add_argument("--part", choices=list(checkfull.PARTS),
                   help="run this part (again) alone (default: every "
                   "part not yet run on this code)")
    f.add_argument("--report-only", action="store_true",
                   help="write results/RELIABILITY.md again from the "
                   "parts' state")
    f.add_argument("--seed", type=seed_arg,
                   help="the fuzzers' seed (default: a random one)")
    sub.add_parser("run", help=f"build {run.TARGET}, boot it, show the "
                   "CPU-number methods: guest instructions beside host "
                   "cycles")
    b = sub.add_parser("bench", help="mainline 6.12 against PDA, per "
                       "target; writes results/REPORT.md and the README "
                       "headline")
    b.add_argument("--only", nargs="+", metavar="TARGET",
                   choices=bench.ONLY_CHOICES,
                   help=f"{' '.join(bench.ONLY_CHOICES)} (default: all; a "
                   "subset leaves the README's bench table alone; "
                   f"{' or '.join(parts)} alone: that part only)")
    b.add_argument("--report-only", action="store_true",
                   help="write results/ again from the last run's figures")
    d = sub.add_parser("debian-configs", help="the series' objects with "
                       "W=1 in Debian's own kernel configs; writes "
                       f"{debconfig.RESULTS}")
    d.add_argument("--flavour", nargs="+", choices=debconfig.FLAVOURS,
                   metavar="FLAVOUR",
                   help=f"{' '.join(debconfig.FLAVOURS)} (default: all)")
    d.add_argument("--full", action="store_true",
                   help="also vmlinux and every module of " + ", ".join(
                       n for n, f in debconfig.FLAVOURS.items() if f.full))
    r = sub.add_parser("randconfigs", help="the series' objects with W=1 "
                       "and vmlinux in random configs of fixed seeds; "
                       f"writes {randconfig.RESULTS}")
    r.add_argument("--arch", nargs="+", choices=randconfig.SEEDS,
                   metavar="ARCH",
                   help=f"{' '.join(randconfig.SEEDS)} (default: all)")
    sub.add_parser("tree", help="only make the patched tree")
    q = sub.add_parser("quick", help="boot a built kernel with just PROGs")
    q.add_argument("target", choices=qemu, metavar="target",
                   help=" ".join(qemu))
    q.add_argument("progs", nargs="+", metavar="PROG[:ARGS]")
    q.add_argument("--timeout", type=int, default=600)
    q.add_argument("--append", default="", help="extra kernel arguments")
    p = sub.add_parser("patches", help="export the series for git am")
    p.add_argument("--out", help="output directory")
    p.add_argument("--refresh", action="store_true",
                   help="write the stored patches/*.patch again from their "
                   "commits (into --out if given): right index lines and "
                   "offsets after a hand edit")
    p.add_argument("--check", action="store_true",
                   help="also apply the export patch by patch to a pristine "
                   f"tree and build {bisect.TARGET} with W=1 after each: "
                   "no build failure, no new warning")
    debian = ", ".join(a.deb_arch for a in ARCHES.values())
    sub.add_parser("deb", help="Debian packages of the preload library and "
                   f"pda.h for {debian}, checked with lintian, into "
                   f"{deb.OUT}")
    d = sub.add_parser("distro", help="Debian 12 with systemd booted on "
                       "each PDA kernel kind, make deb's packages installed "
                       "in the guest; writes results/DISTRO.md")
    d.add_argument("--target", nargs="*", choices=[t.name for t in
                                                   distro.kinds()],
                   help="these kinds only (default: every one)")
    s = sub.add_parser("scale", help="every SMP kernel kind with the most "
                       "CPUs it and QEMU take; writes results/SCALE.md")
    s.add_argument("--target", nargs="*", choices=scale.KINDS,
                   help="these kinds only (default: every one)")
    s.add_argument("--seed", type=seed_arg, default=None)
    m = sub.add_parser("memcached", help="memcached 1.6.18 unmodified and "
                       "with its stats on a pda_pool: its make test, an "
                       "exact-stats check, server CPU per request; writes "
                       f"{memcached.RESULTS.relative_to(memcached.REPO)}")
    m.add_argument("--report-only", action="store_true",
                   help="write the results again from the last run's state")
    args = ap.parse_args(argv)
    try:
        if args.cmd == "check":
            return check.main(args.extra_tests, args.only, args.seed)
        if args.cmd == "check-full":
            if args.report_only:
                return checkfull.report()
            return checkfull.main(args.part, args.seed)
        if args.cmd == "run":
            return run.main()
        if args.cmd == "bench":
            return bench.report() if args.report_only else \
                bench.main(args.only)
        if args.cmd == "quick":
            return quick.main(args.target, args.progs, args.timeout,
                              args.append)
        if args.cmd == "debian-configs":
            return debconfig.main(args.flavour, args.full)
        if args.cmd == "randconfigs":
            return randconfig.main(args.arch)
        if args.cmd == "deb":
            return deb.main()
        if args.cmd == "distro":
            return distro.main(args.target)
        if args.cmd == "scale":
            return scale.main(args.target, args.seed)
        if args.cmd == "memcached":
            return memcached.report_only() if args.report_only else \
                memcached.main()
        if args.cmd == "tree":
            check.patched_tree()
            return 0
        if args.cmd == "patches":
            if args.check and not args.refresh:
                export.main(args.out)
                return bisect.main(args.out or export.DEFAULT_OUT)
            return export.main(args.out, args.refresh)
    except StepFailed as e:
        say(f"ERROR: {e}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
