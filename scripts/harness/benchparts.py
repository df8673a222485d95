# SPDX-License-Identifier: GPL-2.0
"""The parts of make bench after the mainline/PDA comparison, in the
order they run and their sections stand in results/REPORT.md.  Each is
its module's BenchPart (benchlib.py); adding one is its module and its
line here (Documentation/harness/adding-a-bench-part.md)."""

from . import census, poolbench, preloadbench, tlbbench, urcubench

PARTS = (
    tlbbench.PART,
    census.PART,
    preloadbench.PART,
    urcubench.PART,
    poolbench.PART,
)
