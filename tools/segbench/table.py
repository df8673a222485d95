#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Render segbench --json output as a Markdown table (README, results/).

usage: table.py RESULT.json
"""
import json
import sys


def num(v, prec):
    return "-" if v is None else "%.*f" % (prec, v)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    d = json.load(open(sys.argv[1]))
    m = d["machine"]
    print("Machine: %s (%s), %d CPUs, %s; kernel %s; %s; %s; TSC %s MHz, "
          "core %s MHz; load %s; %s; mode %s%s."
          % (m["cpu_model"], m["cpu_id"], m["ncpus"], m["arch"], m["kernel"],
             m["libc"], m["virt"], num(m["tsc_mhz"], 0), num(m["core_mhz"], 0),
             m.get("loadavg", "?"), m["date"], d["mode"],
             "" if d["meaningful"] else " (NOT MEANINGFUL)"))
    print()
    u = "insn" if d["unit"] == "insns" else "ns"
    print("| benchmark | min cyc | median cyc | min %s | median %s | x %s | note |"
          % (u, u, d["reference"]))
    print("|---|---:|---:|---:|---:|---:|---|")
    for r in d["results"]:
        if r["status"] != "ok":
            print("| %s | | | | | | skipped: %s |" % (r["name"], r["note"]))
            continue
        note = []
        if r["emulated"]:
            note.append("emulated")
        if r["exact"] is True:
            note.append("count exact")
        elif r["exact"] is False:
            note.append("**COUNT WRONG**")
        if r["note"]:
            note.append(r["note"])
        print("| %s | %s | %s | %s | %s | %s | %s |" % (
            r["name"], num(r["min_cycles"], 1), num(r["median_cycles"], 1),
            num(r["min_ns"], 2), num(r["median_ns"], 2),
            num(r["ratio_ref"], 2), "; ".join(note).replace("|", "\\|")))


if __name__ == "__main__":
    main()
