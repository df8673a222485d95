#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Do two segbench --json runs agree?

usage: compare.py [--tolerance 0.2] [--markdown] A.json B.json

For every benchmark that ran in both, compares the medians (or, with
--key min, the minima; cycles when both have them, else ns): they agree when |a - b| <= tolerance * min(a, b).
Prints every row and the verdict; exit status 1 if any row disagrees.
"""
import argparse
import json
import sys


def fig(r, key):
    v = r.get(key + "_cycles")
    return v if v is not None else r.get(key + "_ns")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tolerance", type=float, default=0.2)
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--key", choices=("median", "min"), default="median",
                    help="figure to compare (default: median)")
    ap.add_argument("a")
    ap.add_argument("b")
    args = ap.parse_args()
    da = {r["name"]: r for r in json.load(open(args.a))["results"]}
    db = {r["name"]: r for r in json.load(open(args.b))["results"]}

    bad = []
    rows = []
    for name, ra in da.items():
        rb = db.get(name)
        if not rb or ra["status"] != "ok" or rb["status"] != "ok":
            continue
        a, b = fig(ra, args.key), fig(rb, args.key)
        lo = min(a, b)
        diff = (abs(a - b) / lo) if lo > 0 else (0.0 if a == b else float("inf"))
        ok = diff <= args.tolerance
        rows.append((name, a, b, diff, ok))
        if not ok:
            bad.append(name)

    if args.markdown:
        print("| benchmark | run 1 %s | run 2 %s | difference | agree |"
              % (args.key, args.key))
        print("|---|---:|---:|---:|---|")
        for name, a, b, d, ok in rows:
            print("| %s | %.2f | %.2f | %.0f %% | %s |" % (name, a, b, 100 * d,
                                                        "yes" if ok else "**no**"))
    else:
        for name, a, b, d, ok in rows:
            print("%-30s %10.2f %10.2f %6.0f%%  %s" % (name, a, b, 100 * d,
                                                     "ok" if ok else "DIFFER"))
    print("%d of %d %ss agree within %.0f %%%s" % (
        len(rows) - len(bad), len(rows), args.key, 100 * args.tolerance,
        (": differ: " + ", ".join(bad)) if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
