#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn segbench --json output into an SVG bar chart, drawn by gnuplot.

usage: plot.py RESULT.json [OUT.svg]

One bar pair (min, median) per benchmark that ran, grouped as segbench
groups them, on a log scale: a syscall and a register load differ by three
orders of magnitude. Emulated rows are marked with '*'. Skipped rows are
left out; the JSON and the README table list them with the reason.
"""
import json
import os
import subprocess
import sys
import tempfile


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    src = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) == 3 else os.path.splitext(src)[0] + ".svg"
    with open(src) as f:
        doc = json.load(f)

    cyc = doc["unit"] == "cycles"
    lo, hi = ("min_cycles", "median_cycles") if cyc else ("min_ns", "median_ns")
    unit = {"cycles": "core cycles", "ns": "ns", "insns": "instructions"}[doc["unit"]]
    rows = [r for r in doc["results"] if r["status"] == "ok" and r[hi] is not None]
    if not rows:
        sys.exit("plot.py: no results to plot")

    m = doc["machine"]
    title = "segbench %s: %s, %s" % (m["arch"], m["cpu_model"], m["kernel"].split()[0])
    if not doc.get("meaningful", True):
        title += " (EMULATED: not meaningful)"
    sub = "per op, min and median of trials, empty loop subtracted; * = emulated mechanism; %s" % m["virt"]

    with tempfile.NamedTemporaryFile("w", suffix=".dat", delete=False) as dat:
        for r in rows:
            # gnuplot's log scale cannot show 0: floor at 0.01
            label = r["name"] + ("*" if r["emulated"] else "")
            dat.write('"%s" %g %g\n' % (label, max(r[lo], 0.01), max(r[hi], 0.01)))
        datname = dat.name

    width = max(900, 22 * len(rows) + 200)
    script = """
set terminal svg size %d,720 dynamic enhanced font "sans,10" background "white"
set output "%s"
set title "%s\\n%s" noenhanced
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set logscale y
set yrange [0.01:*]
set ylabel "%s per op (log scale)"
set grid ytics
set xtics rotate by -60 left noenhanced font ",8"
set key top left
set bmargin 14
set rmargin 8
plot "%s" using 2:xtic(1) title "min" lc rgb "#4477aa", \\
     "" using 3 title "median" lc rgb "#ee6677"
""" % (width, out, title.replace('"', "'"), sub.replace('"', "'"), unit, datname)
    try:
        subprocess.run(["gnuplot"], input=script, text=True, check=True)
    finally:
        os.unlink(datname)
    print(out)


if __name__ == "__main__":
    main()
