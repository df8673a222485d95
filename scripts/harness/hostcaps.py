# SPDX-License-Identifier: GPL-2.0
"""Can this host execute 32-bit x86 programs?  Probed once per run.

Some hosts cannot: a 64-bit kernel built or booted without IA32 emulation
(`ia32_emulation=0`, CONFIG_IA32_EMULATION_DEFAULT_DISABLED since 6.7), or
a paravirtualised guest that never offers it.  Reading the kernel config
cannot tell, so the probe builds a tiny static i386 program and runs it.

The answer travels in PDA_HOST_I386 ("yes", or "no: why") to every host
test the run starts, so they neither probe again nor disagree.  Set it
before a run to force the answer ("no" on a host that could run them
shows what a host that cannot would do).

Each host check that needs it has a place in the i386 guests of
`make check` that checks the same thing; RELOCATED names it, so a skipped
host check says where it still runs, and a host test holds the two
lists to each other.
"""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from .arches import HOST_32
from .guest import static_cc

ENV = "PDA_HOST_I386"

# host check (its TAP description) -> the guest test that checks the same
# thing in the i386 guests of make check (guestout.py validates output).
RELOCATED = {
    "segbench --check (i386, native)": "segbench_check",
    "segbench --json is valid and complete": "segbench_json",
    "segbench --csv has a header and a row per benchmark": "segbench_csv",
    "segbench --list names unique": "segbench_list",
    "per-CPU increments count exactly": "segbench_inc_exact",
    "incform rows (i386) list, run and count exactly": "segbench_incform",
    "real_pda_bench_output_parses": "pda_bench",
}

_PROBE_C = "int main(void) { return 42; }\n"


def _probe():
    """(True, how) or (False, why), by running a static i386 program."""
    with tempfile.TemporaryDirectory(prefix="pda-i386-probe.") as tmp:
        src, exe = Path(tmp) / "probe.c", Path(tmp) / "probe"
        src.write_text(_PROBE_C)
        cc = subprocess.run(static_cc(HOST_32) + ["-o", str(exe), str(src)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
        if cc.returncode:
            return False, ("cannot build a static i386 program: " +
                           (cc.stdout.strip().splitlines() or ["?"])[-1])
        try:
            rc = subprocess.call([str(exe)], timeout=30)
        except OSError as e:
            return False, f"a static i386 program fails: {e.strerror}"
        except subprocess.TimeoutExpired:
            return False, "a static i386 program did not finish in 30 s"
    if rc != 42:
        return False, f"a static i386 program exited {rc}, not 42"
    return True, "ran a static i386 program"


def i386():
    """(can, text): text is what the run prints about it."""
    value = os.environ.get(ENV)
    if value is None:
        can, how = _probe()
        os.environ[ENV] = "yes" if can else f"no: {how}"
        return can, f"{'yes' if can else 'no'} (probed: {how})"
    can = value.strip().lower() == "yes"
    if not can and not value.startswith("no"):
        raise ValueError(f"{ENV}={value!r}: say yes or no")
    return can, f"{value} (from {ENV})"


def why_not():
    """Why this host runs no 32-bit x86 programs: the probe's finding, or
    that PDA_HOST_I386 said so."""
    why = os.environ.get(ENV, "no")
    return why.partition(":")[2].strip() or f"{ENV}=no"


def skip_reason(check):
    """The SKIP text of a host check on a host without i386 execution."""
    return (f"host cannot run 32-bit x86 programs ({why_not()}); checked in "
            f"the i386 guests by {RELOCATED[check]}")


if __name__ == "__main__":
    # For the shell host tests (python3 -m harness.hostcaps [CHECK]):
    # prints "yes" or the SKIP reason of CHECK; exit 0 or 1.
    can, _ = i386()
    if can:
        print("yes")
    else:
        print(skip_reason(sys.argv[1]) if len(sys.argv) > 1 else
              os.environ[ENV])
    sys.exit(0 if can else 1)
