# SPDX-License-Identifier: GPL-2.0
"""make bench, arm64: what CONFIG_ARM64_TLBI_LOCAL (patch 0011) changes.

Figures, not assertions.  Five kernels, all tinyconfig plus
the arm64 target's fragments plus configs/bench.config:

  mainline-arm64         the pristine 6.12 tree
  bench-arm64            the PDA tree, ARM64_TLBI_LOCAL=y (the arm64 target)
  bench-arm64-tlbi-n     the PDA tree, ARM64_TLBI_LOCAL=n, nothing else
                         changed
  bench-arm64-jl         bench-arm64 with CONFIG_JUMP_LABEL=y
  bench-arm64-tlbi-n-jl  bench-arm64-tlbi-n with CONFIG_JUMP_LABEL=y

and tests/bench/tlb_bench.c in the guest.  What is measured:

1. Flush counts: the /proc/vmstat tlbi_* deltas of each workload on
   bench-arm64 booted without tlbi_local=on ("off", the option's default)
   and with it ("on").
2. Wall time under multi-threaded TCG (-accel tcg,thread=multi, 4 vCPUs):
   mainline against the option on (and off), in one run, min and median of
   the repetitions inside the guest.  TCG implements an inner-shareable
   TLBI by stopping every vCPU (async_safe_run_on_cpu()), which makes a
   broadcast far dearer than on hardware: the ratio bounds the gain, it
   does not predict it.
3. Context-switch cost under -icount: two processes ping-ponging over
   pipes on CPU 0, instructions per switch, of bench-arm64-tlbi-n (the
   option n), bench-arm64 booted without tlbi_local=on (built, off),
   bench-arm64 booted with it (on), mainline, and the three PDA ones
   again with jump labels, booted as the other parts boot (benchlib's
   BENCH_ARGS, QEMU_ARGS, CPIO_MTIME), twice each; the two boots must
   agree.  Built and off should be within OFF_SLACK instructions per
   switch of n: the report says whether it is, the run does not fail on
   it.
4. The flush workloads in the same -icount boots: instructions per
   operation, and per flush against n (FLUSH_SLACK).
5. The code: scripts/bloat-o-meter of each n kernel against its built-in
   one (CODE_PAIRS), and every function that switches or flushes a user
   address space, disassembled in both and diffed, normalised, counting
   the instructions that differ on the path the option off runs
   (code_pairs(); the diffs in results/tlbi-off-diff.txt).
6. Size: `size vmlinux` of the kernels.

No boot here takes the arm64 target's own kernel arguments (its
tlbi_local=on): each boot names the setting it measures.

The per-boot figures go into results/tlbi.json and a section of
results/REPORT.md.
"""

import bisect
import copy
import dataclasses
import difflib
import json
import re
import subprocess
import time
from pathlib import Path

from . import benchlib, boot, fullstate, guest
from .benchlib import BENCH_ARGS, QEMU_ARGS, RUNS, fmt, table
from .guestout import parse_bench_lines, PREFIX
from .ktap import test_blocks
from .paths import BUILD, LOGS
from .progress import Phase, StepFailed, fail, reset_log
from .targets import TARGETS

TARGET = next(n for n, t in TARGETS.items() if t.tlb_bench)
OPTION = "CONFIG_ARM64_TLBI_LOCAL"
TLB_PREFIX = "tlb-bench: "
PROGRAM = "tlb_bench"
BOOT_TIMEOUT = 1200
# The workloads whose counts and wall time are measured, with what they
# are (tests/bench/tlb_bench.c says more).
WORKLOADS = [
    ("mprotect", "one process per CPU, each pinned, mprotect RW→RO→RW on "
     "its own 4 pages; per mprotect pair"),
    ("madvise", "one thread per CPU in one process, each pinned, write 4 "
     "pages + MADV_DONTNEED (ITERS/8 per thread); per madvise"),
    ("madvise1", "the same, one thread only (the mm on one CPU), ITERS/8; "
     "per madvise"),
    ("cow", "touch 16 pages, fork, the child writes them and exits, wait; "
     "per fork"),
    ("twothr_sleep", "two threads: one on CPU 1 does mprotect RW→RO→RW on "
     "its own 4 pages, the other sleeps in a futex on CPU 0 meanwhile; "
     "per mprotect pair"),
    ("twothr_run", "two threads, on CPUs 0 and 1, both doing mprotect "
     "RW→RO→RW on their own 4 pages; per mprotect pair"),
    ("forkexec", "fork, the child execs tlb_bench again (static), which "
     "exits at once, wait; per fork + exec"),
    ("tlbshoot", "stress-ng's tlb-shootdown stressor, rewritten with a fixed "
     "amount of work: one instance per CPU, each with 2 MiB of shared "
     "anonymous memory, a 4-page shared file and max(2, min(8, CPUs)) "
     "child processes; each child mprotects a page and the whole 2 MiB "
     "(5 calls), touches them, MADV_DONTNEEDs a page of each mapping and "
     "msyncs, each instance MADV_DONTNEEDs and msyncs; all children on "
     "CPU 0, then CPU 1; per op of a child or an instance"),
]
COUNTERS = ("tlbi_broadcast", "tlbi_local", "tlbi_skipped", "tlbi_catchup")
# Repetitions inside the guest and the loop count of each (tlb_bench -r -n).
REPS = 7
ITERS = 200
WALL_ARGS = ["-r", str(REPS), "-n", str(ITERS)] + [w for w, _ in WORKLOADS]
# ctxsw makes 4 * its loop count switches per repetition (2 * n round
# trips): each of the REPS figures whose min the report takes is the mean
# of at least CTXSW_SWITCHES switches.
CTXSW_SWITCHES = 20000
CTXSW_ITERS = -(-CTXSW_SWITCHES // 4)
# The flush workloads also measured under -icount, with what one of their
# operations is.
FLUSH_WORKLOADS = (("mprotect", "mprotect pair"), ("madvise", "madvise"),
                   ("madvise1", "madvise"), ("cow", "fork"),
                   ("tlbshoot", "op"))
ICOUNT_ARGS = (["-r", str(REPS), "-n", str(ITERS),
                f"ctxsw={CTXSW_ITERS}"] + [w for w, _ in FLUSH_WORKLOADS])
# Multi-threaded TCG, QEMU's default for an ARM guest on an x86 host,
# spelled out.
MTTCG = "tcg,thread=multi"
WALL_CPUS = 4
# Under -icount QEMU 7.2 runs the vCPUs round-robin on one thread (see
# bench.BENCH_CPUS_WHY); the ping-pong is on CPU 0 only, and 2 CPUs keep a
# second CPU that holds other mms, as on a real SMP system.
ICOUNT_CPUS = 2
# Instructions per switch by which built-and-off may differ from n and
# still count as "no cost" in the report (a figure, not a failure).
OFF_SLACK = 2
# The same per flush, for the flush workloads: their instructions per
# operation, less n's, over the flushes per operation.
FLUSH_SLACK = 2
# What is booted to measure what: (key, kernel, kernel arguments), the
# wall/counts boots and the -icount boots.
ON = "tlbi_local=on"
WALL_BOOTS = (("mainline", f"mainline-{TARGET}", ""),
              ("off", f"bench-{TARGET}", ""),
              ("on", f"bench-{TARGET}", ON))
# The "-jl" kernels are the same with CONFIG_JUMP_LABEL=y, as
# distributions build them: there a static-key test is one instruction,
# the branch to mainline's code, patched to a NOP when the key is on.
ICOUNT_BOOTS = (("n", f"bench-{TARGET}-tlbi-n", ""),
                ("off", f"bench-{TARGET}", ""),
                ("on", f"bench-{TARGET}", ON),
                ("mainline", f"mainline-{TARGET}", ""),
                ("n-jl", f"bench-{TARGET}-tlbi-n-jl", ""),
                ("off-jl", f"bench-{TARGET}-jl", ""),
                ("on-jl", f"bench-{TARGET}-jl", ON))
ICOUNT_WHAT = {"n": "PDA, ARM64_TLBI_LOCAL=n",
               "off": "PDA, =y, booted without tlbi_local=on (off)",
               "on": "PDA, =y, booted with tlbi_local=on",
               "mainline": "mainline 6.12",
               "n-jl": "JUMP_LABEL=y: PDA, ARM64_TLBI_LOCAL=n",
               "off-jl": "JUMP_LABEL=y: PDA, =y, off",
               "on-jl": "JUMP_LABEL=y: PDA, =y, on"}
# Each row's Δ is against the n kernel of its own configuration.
ICOUNT_BASE = {"n-jl": "n-jl", "off-jl": "n-jl", "on-jl": "n-jl"}
# The code compared: (n key, its kernel, off key, its kernel), without and
# with jump labels.
CODE_PAIRS = (("n", f"bench-{TARGET}-tlbi-n", "off", f"bench-{TARGET}"),
              ("n-jl", f"bench-{TARGET}-tlbi-n-jl", "off-jl",
               f"bench-{TARGET}-jl"))
# Diffed whatever else is found: the switch, and the scheduler function
# that inlines switch_mm().
CODE_FUNCTIONS = ("check_and_switch_context", "__schedule")
# A function that calls one of these switches address spaces; one that
# calls a tlbi_local_* or __tlbi_local_*_thunk function is a path the
# option changed.
SWITCH_CALLEES = ("check_and_switch_context", "cpu_do_switch_mm")
CODE_NEW = re.compile(r"_*tlbi_local_")
DIFF_FILE = "tlbi-off-diff.txt"
STATE = BUILD / "tlbi-state.json"
SECTION_BEGIN = "<!-- tlbi:begin: written by `make bench` (tlbbench.py) -->"
SECTION_END = "<!-- tlbi:end -->"


# ------------------------------------------------------------ parsing

def parse_lines(lines):
    """tlb_bench's lines -> parse_bench_lines()'s dict (same format, its
    own prefix); a counter row's each=D1,D2,... (every repetition's delta,
    in the order they ran) becomes its "each" list."""
    mine = [line[len(TLB_PREFIX):] for line in lines
            if line.startswith(TLB_PREFIX)]
    res = parse_bench_lines([PREFIX + line for line in mine])
    for line in mine:
        words = line.split()
        each = [w[len("each="):] for w in words[1:]
                if w.startswith("each=")]
        if each and words[0] in res["ops"]:
            res["ops"][words[0]]["each"] = [int(v) for v in
                                            each[0].split(",")]
    return res


def parse_console(text, name=PROGRAM):
    """One boot's console -> {"ops", "info", "failed", "verdict"}."""
    blocks = test_blocks(text)
    res = parse_lines(blocks.get(name, []))
    res["ran"] = name in blocks
    return res


def differences(runs):
    """Rows whose min or median differ between boots, as messages."""
    diffs = []
    names = sorted(set().union(*(r["ops"] for r in runs)))
    for name in names:
        figs = [{k: r["ops"].get(name, {}).get(k)
                 for k in ("min", "median", "na")} for r in runs]
        if any(f != figs[0] for f in figs):
            diffs.append(f"{name}: " + "; ".join(
                f"run {i + 1}: {f}" for i, f in enumerate(figs)))
    return diffs


# ------------------------------------------------------- the kernels

def generated_fragment(name, line):
    """A one-line fragment: generated, so that configs/ keeps only the
    fragments a user builds with."""
    frag = BUILD / f"tlbbench-{name}.config"
    frag.parent.mkdir(parents=True, exist_ok=True)
    frag.write_text(line + "\n")
    return frag


def option_off_fragment():
    return generated_fragment("option-n", f"# {OPTION} is not set")


def kernels(pristine, tree, unverified, timings):
    """{label: build dir} of the five kernels."""
    target = TARGETS[TARGET]
    bench_config = (benchlib.BENCH_CONFIG,)
    jump_label = generated_fragment("jump-label", "CONFIG_JUMP_LABEL=y")
    mainline, pda = benchlib.kernel_pair(TARGET, pristine, tree, unverified)
    out = {}
    for label, src, frags, unv in (
            (mainline.build_label, mainline.src, bench_config,
             mainline.unverified),
            (pda.build_label, pda.src, bench_config, pda.unverified),
            (f"bench-{TARGET}-tlbi-n", tree,
             bench_config + (option_off_fragment(),), ()),
            (f"bench-{TARGET}-jl", tree, bench_config + (jump_label,), ()),
            (f"bench-{TARGET}-tlbi-n-jl", tree,
             bench_config + (option_off_fragment(), jump_label), ())):
        out[label] = benchlib.build(target, src, label, unv, timings, frags)
    return out


def option_of(bdir, option=OPTION):
    return benchlib.read_config(Path(bdir) / ".config").get(option, "n")


# ----------------------------------------- the code, n against off

# What a line of `objdump -d --no-show-raw-insn` is: a symbol's header,
# or one instruction.
FN_HEAD = re.compile(r"^([0-9a-f]+) <(.+)>:$")
INSN = re.compile(r"^\s*([0-9a-f]+):\t(\S+)(?:\t(.*))?$")
# An address objdump names: "ffff80008001fc5c <fn+0xdc>".
ADDR_SYM = re.compile(r"\b([0-9a-f]{8,16}) <([^>]+)>")
REG = re.compile(r"\b[xw](\d+)\b")
MEM = re.compile(r"\[x(\d+)(?:, #(-?(?:0x[0-9a-f]+|\d+)))?\](!?)")
ADD_IMM = re.compile(r"^x(\d+), x(\d+), #(0x[0-9a-f]+|\d+)$")
# User TLB maintenance: the ASID-tagged operations (vaae1/vaale1 and
# vmalle1 are kernel or whole-TLB ones).
USER_TLBI = re.compile(r"^(r?vae1|r?vale1|aside1)(is|os)?\b")
KEY = "tlbi_local_key"
# How a diff line marks a key test's instruction.
KEY_NOTE = " ; key test"
# Instructions whose first operand is not a register they write.
NO_DEST = {"str", "strb", "strh", "stp", "stur", "sturb", "sturh", "stlr",
           "stlrb", "stlrh", "cmp", "cmn", "tst", "ccmp", "ccmn", "b", "bl",
           "br", "blr", "ret", "cbz", "cbnz", "tbz", "tbnz", "prfm", "dmb",
           "dsb", "isb", "msr", "tlbi", "dc", "ic", "at", "nop", "hint",
           "brk", "udf", "sev", "sevl", "wfe", "wfi", "yield", "bti",
           "paciasp", "autiasp", "eret", "hvc", "smc", "svc", "stadd",
           "staddl", "stset", "stsetl", "stclr", "stclrl", "csdb", "esb",
           "sb", "dgh", "clrex"}
FLAG_SETTERS = {"cmp", "cmn", "tst", "ccmp", "ccmn", "adds", "subs", "ands",
                "bics", "negs", "adcs", "sbcs", "fcmp", "fcmpe", "msr"}
CONDBR = {"cbz", "cbnz", "tbz", "tbnz"}
NO_FALLTHROUGH = {"b", "ret", "br", "eret", "brk", "udf"}


def disassemble(objdump, vmlinux):
    """{function: [copy, ...]}, each copy a list of (address, mnemonic,
    operands) in address order: `objdump -d --no-show-raw-insn` once for
    the whole file, the same text --disassemble=FN prints per function.
    Static functions of one name in several objects are several copies,
    in link order."""
    out = subprocess.run([objdump, "-d", "--no-show-raw-insn", str(vmlinux)],
                         stdout=subprocess.PIPE, text=True, check=True)
    fns, cur = {}, None
    for line in out.stdout.splitlines():
        m = FN_HEAD.match(line)
        if m:
            cur = []
            fns.setdefault(m.group(2), []).append(cur)
            continue
        m = INSN.match(line)
        if m and cur is not None:
            # objdump's comments ("// #1", "// b.any") say nothing new.
            ops = (m.group(3) or "").split("//")[0].strip()
            cur.append((int(m.group(1), 16), m.group(2), ops))
    return fns


def sections(vmlinux):
    """(the ELF64 file's bytes, [(address, file offset, size, name)] of
    its sections that hold bytes): enough to read a string literal or the
    jump table at an address."""
    data = Path(vmlinux).read_bytes()

    def num(at, width):
        return int.from_bytes(data[at:at + width], "little")
    shoff, size, count, names = (num(0x28, 8), num(0x3a, 2), num(0x3c, 2),
                                 num(0x3e, 2))
    heads = [data[shoff + k * size:shoff + (k + 1) * size]
             for k in range(count)]
    strtab = int.from_bytes(heads[names][0x18:0x20], "little")
    out = []
    for h in heads:
        kind = int.from_bytes(h[4:8], "little")
        addr, off, length = (int.from_bytes(h[o:o + 8], "little")
                             for o in (0x10, 0x18, 0x20))
        at = strtab + int.from_bytes(h[0:4], "little")
        name = data[at:data.index(b"\0", at)].decode()
        if addr and kind != 8:          # SHT_NOBITS: .bss, no bytes
            out.append((addr, off, length, name))
    return data, out


def read(image, addr, length):
    """@length bytes of the file's image at @addr, or b"" outside it."""
    data, secs = image
    for start, off, size, _ in secs:
        if start <= addr and addr + length <= start + size:
            return data[off + addr - start:off + addr - start + length]
    return b""


def jump_sites(image, addrs, names):
    """{address of the NOP or branch: (its target, is the key
    tlbi_local_key?)} of every jump label.  The table lies between __start___jump_table and
    __stop___jump_table (in .rodata); arm64's entries are relative: a
    32-bit code offset, a 32-bit target offset and a 64-bit key offset
    whose low two bits are flags."""
    where = dict(zip(names, addrs))
    if "__start___jump_table" not in where:
        return {}
    start = where["__start___jump_table"]
    table = read(image, start, where["__stop___jump_table"] - start)
    sites = {}
    for at in range(0, len(table) - 15, 16):
        e = table[at:at + 16]
        code, target = (int.from_bytes(e[o:o + 4], "little", signed=True)
                        for o in (0, 4))
        key = int.from_bytes(e[8:16], "little", signed=True)
        sites[start + at + code] = (start + at + 4 + target,
                                    (start + at + 8 + key) & ~3 ==
                                    where.get(KEY))
    return sites


def symbols(nm, vmlinux):
    """What names an address that an adrp and its low 12 bits make:
    (addresses, names, sizes) of vmlinux's symbols, sorted, and its
    sections' bytes for the string literals, which have no symbol."""
    out = subprocess.run([nm, "-n", "-S", str(vmlinux)],
                         stdout=subprocess.PIPE, text=True, check=True)
    addrs, names, sizes = [], [], []
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) not in (3, 4) or parts[-2] in "aAUw" or \
                parts[-1].startswith("$"):
            continue
        addrs.append(int(parts[0], 16))
        sizes.append(int(parts[1], 16) if len(parts) == 4 else None)
        names.append(parts[-1])
    image = sections(vmlinux)
    return addrs, names, sizes, image, jump_sites(image, addrs, names)


def literal(image, addr):
    """The printable NUL-terminated string at @addr, quoted, or None."""
    data, secs = image
    for start, off, length, _ in secs:
        if start <= addr < start + length:
            raw = data[off + addr - start:off + length]
            text = raw[:raw.find(b"\0")] if b"\0" in raw[:256] else None
            if text is not None and all(32 <= c < 127 or c in (1, 9, 10)
                                        for c in text):
                return '"' + text.decode().encode("unicode_escape") \
                    .decode() + '"'
            return None
    return None


def name_of(syms, addr):
    """@addr as SYMBOL+OFFSET if a symbol covers it, else the string
    literal there (which moves with the layout of everything before it),
    else the nearest symbol before it."""
    addrs, names, sizes, image, _ = syms
    i = bisect.bisect_right(addrs, addr) - 1
    if i < 0:
        return f"{addr:#x}"
    off = addr - addrs[i]
    if sizes[i] is None or off >= max(sizes[i], 1):
        text = literal(image, addr)
        if text is not None:
            return text
    return names[i] + (f"+{off:#x}" if off else "")


def cond_holds(cond, a, b):
    """b.@cond after `cmp a, b` (small non-negative integers)."""
    return {"eq": a == b, "ne": a != b, "gt": a > b, "ge": a >= b,
            "lt": a < b, "le": a <= b, "hi": a > b, "hs": a >= b,
            "cs": a >= b, "lo": a < b, "cc": a < b, "ls": a <= b,
            "mi": a < b, "pl": a >= b}.get(cond)


def written(mnem, ops):
    """Register numbers @mnem writes (its first operand, write-back bases)."""
    regs = set()
    first = ops.split(",")[0].strip()
    if mnem not in NO_DEST and not mnem.startswith("b.") and \
            REG.fullmatch(first):
        regs.add(int(first[1:]))
    if mnem in ("ldp", "ldaxp", "ldxp"):
        second = ops.split(",")[1].strip() if "," in ops else ""
        if REG.fullmatch(second):
            regs.add(int(second[1:]))
    for m in MEM.finditer(ops):
        if m.group(3) or re.search(r"\], #", ops):
            regs.add(int(m.group(1)))
    return regs


def decode(name, insns):
    """A copy's instructions as dicts, before any data flow: "mnem",
    "ops" (other functions and addresses objdump names by name, this
    function's own targets "<.>"), "target" (the index branched to here,
    or None), "offset" (bytes from the start), "writes" (registers),
    "page" (an adrp's), "mem" (a load or store's base and immediate),
    "addimm" (add xD, xN, #imm: D, N, imm)."""
    start = insns[0][0] if insns else 0
    index = {a: i for i, (a, _, _) in enumerate(insns)}
    out = []
    for addr, mnem, ops in insns:
        d = {"mnem": mnem, "ops": ops, "target": None, "key": False,
             "off": None, "offset": addr - start, "addr": addr,
             "writes": written(mnem, ops), "page": None, "mem": None,
             "addimm": None}
        m = ADDR_SYM.search(ops)
        if mnem == "adrp":
            d["page"] = int(m.group(1), 16) if m else 0
            d["ops"] = ops.split(",")[0] + ", <page>"
        elif m:
            to, sym = int(m.group(1), 16), m.group(2)
            if (sym == name or sym.startswith(name + "+")) and to in index:
                d["target"] = index[to]
                d["ops"] = ops[:m.start()] + "<.>" + ops[m.end():]
            else:
                d["ops"] = ops[:m.start()] + f"<{sym}>" + ops[m.end():]
        am = ADD_IMM.match(ops) if mnem == "add" else None
        if am:
            d["addimm"] = (int(am.group(1)), int(am.group(2)),
                           int(am.group(3), 0))
        mm = MEM.search(ops) if mnem != "adrp" else None
        if mm:
            d["mem"] = (int(mm.group(1)),
                        int(mm.group(2), 0) if mm.group(2) else 0, mm)
        out.append(d)
    return out


def successors(d, i, key_off=False):
    """Every edge out of instruction @i: the jump label's other state too
    (its target when a NOP, the next instruction when a branch), except,
    with @key_off, tlbi_local_key's."""
    nxt = []
    if d.get("label") is not None and not (key_off and d.get("ours")):
        nxt.append(d["label"])
    if d["mnem"] == "b":
        return nxt + ([d["target"]] if d["target"] is not None else [])
    if d["mnem"] in NO_FALLTHROUGH:
        return nxt
    nxt.append(i + 1)
    if (d["mnem"].startswith("b.") or d["mnem"] in CONDBR) and \
            d["target"] is not None:
        nxt.append(d["target"])
    return nxt


def step(d, state, syms):
    """One instruction on an in-state (regs: register -> (address, the
    adrp's index or None for a whole address); key: registers holding the
    key's count; flags: do the flags compare it with 0?) -> (out-state,
    the symbol it completes or None, is it a key test, taken with the key
    off?)."""
    regs, key, flags = dict(state[0]), set(state[1]), state[2]
    mnem, ops = d["mnem"], d["ops"]
    sym, is_key, taken = None, False, None
    first = ops.split(",")[0].strip()
    first_reg = int(first[1:]) if REG.fullmatch(first) else None
    if d["page"] is not None:
        sym = None
    elif d["addimm"] and d["addimm"][1] in regs:
        base = regs[d["addimm"][1]][0]
        sym = name_of(syms, base + d["addimm"][2])
    elif d["mem"] and d["mem"][0] in regs:
        sym = name_of(syms, regs[d["mem"][0]][0] + d["mem"][1])
    if sym == KEY and mnem.startswith("ldr"):
        is_key = True
    elif mnem == "cmp" and first_reg in key and ops.endswith("#0x0"):
        is_key, flags = True, True
    elif mnem.startswith("b.") and flags:
        is_key, taken = True, cond_holds(mnem[2:], 0, 0)
    elif mnem in CONDBR and first_reg in key:
        is_key, taken = True, mnem in ("cbz", "tbz")
    if mnem in FLAG_SETTERS and not is_key:
        flags = False
    for r in d["writes"]:
        regs.pop(r, None)
        key.discard(r)
    if mnem in ("bl", "blr"):
        # The AAPCS64 caller-saved registers do not survive a call.
        regs = {r: v for r, v in regs.items() if r >= 19}
        key = {r for r in key if r >= 19}
        flags = False
    if d["page"] is not None and first_reg is not None:
        regs[first_reg] = (d["page"], d["index"])
    elif d["addimm"] and sym is not None:
        dst, src, imm = d["addimm"]
        regs[dst] = (state[0][src][0] + imm, None)
    if sym == KEY and mnem.startswith("ldr"):
        key.update(d["writes"])
    return (regs, frozenset(key), flags), sym, is_key, taken


def meet(a, b):
    """What two in-states agree on."""
    regs = {}
    for r, (addr, src) in a[0].items():
        if r in b[0] and b[0][r][0] == addr:
            regs[r] = (addr, src if b[0][r][1] == src else None)
    return regs, a[1] & b[1], a[2] and b[2]


def label_targets(out, sites):
    """Each jump label's site gets "label" (the index its other state goes
    to, or None) and "ours" (is it tlbi_local_key's?)."""
    index = {d["addr"]: i for i, d in enumerate(out)}
    for d in out:
        site = sites.get(d["addr"])
        d["label"] = index.get(site[0]) if site else None
        d["ours"] = bool(site and site[1])


def analyse(name, insns, syms):
    """One copy of a function -> decode()'s dicts, addresses symbolic: an
    adrp and the low 12 bits that complete it (add, load, store) by the
    symbol they make, found along every path to the use; "key": a test
    of tlbi_local_key (a jump-label site in __jump_table, or the load,
    compare and branch without jump labels); "off": for a key test's
    branch, is it taken with the key off?"""
    out = decode(name, insns)
    label_targets(out, syms[4])
    for i, d in enumerate(out):
        d["index"] = i
    states = [None] * len(out)
    work = [0] if out else []
    if out:
        states[0] = ({}, frozenset(), False)
    while work:
        i = work.pop()
        nxt_state = step(out[i], states[i], syms)[0]
        for j in successors(out[i], i):
            if j >= len(out):
                continue
            merged = nxt_state if states[j] is None else \
                meet(states[j], nxt_state)
            if merged != states[j]:
                states[j] = merged
                work.append(j)
    for i, d in enumerate(out):
        if states[i] is None:       # reached by no branch seen here
            states[i] = ({}, frozenset(), False)
        _, sym, d["key"], d["off"] = step(d, states[i], syms)
        d["key"] = d["key"] or d["ours"]
        if sym is None:
            continue
        src = None
        if d["addimm"]:
            dst, base, _ = d["addimm"]
            src = states[i][0][base][1]
            d["ops"] = f"x{dst}, x{base}, #:lo12:{sym}" if src is not None \
                else f"x{dst}, x{base}, #<{sym}>"
        else:
            reg, _, mm = d["mem"]
            src = states[i][0][reg][1]
            kind = f":lo12:{sym}" if src is not None else f"<{sym}>"
            d["ops"] = (d["ops"][:mm.start()] + f"[x{reg}, #{kind}]"
                        f"{mm.group(3)}" + d["ops"][mm.end():])
        if src is not None and out[src].get("sym") is None:
            out[src]["sym"] = sym
    for d in out:
        if d["page"] is not None and d.get("sym"):
            d["ops"] = d["ops"].replace("<page>", f":pg:{d['sym']}")
            d["key"] = d["sym"] == KEY
    return out


def reachable(insns):
    """Indexes reached from the entry with tlbi_local_key off: its jump
    labels run as built (the branch to mainline's code, made a NOP only
    when on), a key test's branch goes the off way, any
    other jump label goes either way.  With an indirect branch (a jump
    table) all of them."""
    if any(d["mnem"] == "br" for d in insns):
        return set(range(len(insns)))
    seen, todo = set(), [0] if insns else []
    while todo:
        i = todo.pop()
        if i in seen or i >= len(insns):
            continue
        seen.add(i)
        d = insns[i]
        if d["off"] is not None:
            if d["target"] is not None or not d["off"]:
                todo.append(d["target"] if d["off"] else i + 1)
        else:
            todo += successors(d, i, key_off=True)
    return seen


def past_key(b, t):
    """The index the option off reaches from @t through the key test that
    starts there (@t itself if none does)."""
    seen = set()
    while t < len(b) and b[t]["key"] and t not in seen:
        seen.add(t)
        d = b[t]
        taken = d["mnem"] == "b" or bool(d["off"])
        t = d["target"] if taken and d["target"] is not None else t + 1
    return min(t, len(b) - 1)


def align(a, b, fn):
    """Both copies' instructions as text, this function's branch targets
    written <fn+OFFSET> in @a's offsets: a target in @b that is an
    instruction the two share takes that instruction's offset in @a, so
    that an instruction inserted before it does not change every branch
    across it; a target in code @b alone keeps its own (<fn+new:OFF>).
    A key test's text says so, so that it never pairs with an instruction
    of @a (with jump labels a branch, like one of n's to the same place),
    and a branch to a key test is written to where the test goes with
    the option off: n's branch, with the test inserted before its
    target."""
    def key(d):
        return f"{d['mnem']}\t{d['ops']}" + (KEY_NOTE if d["key"] else "")
    sm = difflib.SequenceMatcher(None, [key(d) for d in a],
                                 [key(d) for d in b], autojunk=False)
    to_a = {}
    for blk in sm.get_matching_blocks():
        for k in range(blk.size):
            to_a[blk.b + k] = blk.a + k

    def text(d, where):
        ops = d["ops"]
        if d["target"] is not None:
            ops = ops.replace("<.>", f"<{fn}+{where(d['target'])}>")
        return f"{d['mnem']}\t{ops}".rstrip() + \
            (KEY_NOTE if d["key"] else "")
    ta = [text(d, lambda t: f"{a[t]['offset']:#x}") for d in a]
    def where_b(t):
        t = past_key(b, t)
        return f"{a[to_a[t]]['offset']:#x}" if t in to_a \
            else f"new:{b[t]['offset']:#x}"
    tb = [text(d, where_b) for d in b]
    return ta, tb



IMMEDIATE = re.compile(r"#-?(?:0x[0-9a-f]+|\d+)\b")


def touches_mm(insns):
    """Does this copy of a function flush user TLB entries itself, switch
    address spaces, or call what the option added?"""
    for _, mnem, ops in insns:
        if mnem == "tlbi" and USER_TLBI.match(ops):
            return True
        if mnem in ("bl", "b"):
            m = ADDR_SYM.search(ops)
            if m and (m.group(2) in SWITCH_CALLEES or
                      CODE_NEW.match(m.group(2))):
                return True
    return False


def bloat_o_meter(target, tree, old, new):
    """scripts/bloat-o-meter of the kernel tree, @old vmlinux against @new,
    with the target's nm."""
    out = subprocess.run(["python3", str(Path(tree) / "scripts/bloat-o-meter"),
                          "-p", target.arch.cross, str(old), str(new)],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    if out.returncode:
        raise StepFailed(f"bloat-o-meter {old} {new} failed:\n{out.stdout}")
    return out.stdout


def bloat_rows(text):
    """bloat-o-meter's table -> {name: (old, new)}, None for "-"."""
    rows = {}
    for line in text.splitlines():
        w = line.split()
        if len(w) == 4 and re.fullmatch(r"[+-]\d+", w[3]):
            rows[w[0]] = tuple(None if v == "-" else int(v) for v in w[1:3])
    return rows


def bloat_totals(text):
    """Its first line (counts) and its Total line."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    total = next((ln for ln in lines if ln.startswith("Total:")), "")
    return (lines[0] if lines else ""), total


def code_functions(fns_n, fns_off, bloat):
    """The functions to diff: CODE_FUNCTIONS, every one that flushes,
    switches or calls the option's code in either kernel, and every
    function bloat-o-meter lists as changed (its names lose GCC's .N
    suffixes, as it does).  The option's own functions are not diffed:
    n has none."""
    changed = {k for k, (old, new) in bloat.items()
               if old is not None and new is not None}
    names = set(CODE_FUNCTIONS)
    for fns in (fns_n, fns_off):
        for name, copies in fns.items():
            if CODE_NEW.match(name):
                continue
            if any(touches_mm(c) for c in copies) or \
                    re.sub(r"\.[0-9]+", "", name) in changed:
                names.add(name)
    return sorted(n for n in names if n in fns_n or n in fns_off)


def without_immediates(text):
    return IMMEDIATE.sub("#imm", text)


def tally(ta, tb, ops, b=None, picked=None):
    """(added, removed, immediates, key tests, moved) of the opcodes @ops
    from @ta to @tb.  An instruction that differs from its counterpart
    in an immediate only (a structure field's offset, mostly) counts
    once, as "immediates", not as one added and one removed; one removed
    here and added the same elsewhere (a block GCC placed elsewhere)
    counts once, as "moved".  @b (the off copy's instructions, @picked
    the indexes @tb holds) names the key tests among the added ones."""
    imm = 0
    gone, new = [], []
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            continue
        sm = difflib.SequenceMatcher(
            None, [without_immediates(t) for t in ta[i1:i2]],
            [without_immediates(t) for t in tb[j1:j2]], autojunk=False)
        same_a, same_b = set(), set()
        for blk in sm.get_matching_blocks():
            same_a.update(range(i1 + blk.a, i1 + blk.a + blk.size))
            same_b.update(range(j1 + blk.b, j1 + blk.b + blk.size))
        imm += len(same_b)
        gone += [ta[i] for i in range(i1, i2) if i not in same_a]
        new += [j for j in range(j1, j2) if j not in same_b]
    left = {}
    for t in gone:
        left[t] = left.get(t, 0) + 1
    moved = key = added = 0
    for j in new:
        if left.get(tb[j]):
            left[tb[j]] -= 1
            moved += 1
            continue
        added += 1
        if b is not None and b[picked[j]]["key"]:
            key += 1
    return added, len(gone) - moved, imm, key, moved


def verdict(full, path):
    """In words: how the off copy's code differs from n's."""
    if not any(full[:3]) and not full[4]:
        return "identical"
    added, removed, imm, key, moved = path
    if not (added or removed or imm or moved):
        return "off path identical"
    if removed or added != key:
        if added - removed == key:
            return (f"off path: as long as n's + {key} key test"
                    f"{'s' if key != 1 else ''}, laid out or allocated "
                    "differently")
        return "off path differs"
    words = [f"off path: n's + {key} key test" + ("s" if key != 1 else "")]
    if moved:
        words.append(f"{moved} moved")
    if imm:
        words.append(f"{imm} immediates")
    return ", ".join(words)


def hunks(a, b, ta, tb, reach_b):
    """The full diff as text: unified hunks, each line with its offset in
    its own copy; an off line that the option off does not reach says
    so, and so does a key test."""
    sm = difflib.SequenceMatcher(None, ta, tb, autojunk=False)
    out = []
    for group in sm.get_grouped_opcodes(2):
        i1, j1 = group[0][1], group[0][3]
        out.append(f"@@ n +{a[i1]['offset']:#x}, off "
                   f"+{b[j1]['offset'] if j1 < len(b) else 0:#x} @@")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [f"  {a[i]['offset']:5x}  {ta[i]}"
                        for i in range(i1, i2)]
                continue
            out += [f"- {a[i]['offset']:5x}  {ta[i]}" for i in range(i1, i2)]
            for j in range(j1, j2):
                note = "" if j in reach_b else \
                    " ; not reached with the option off"
                out.append(f"+ {b[j]['offset']:5x}  {tb[j]}{note}")
    return out


def compare(name, a, b):
    """One function's two copies -> (summary, diff lines)."""
    ta, tb = align(a, b, name)
    ra, rb = sorted(reachable(a)), sorted(reachable(b))
    full = tally(ta, tb, difflib.SequenceMatcher(
        None, ta, tb, autojunk=False).get_opcodes(), b, range(len(b)))
    pa, pb = [ta[i] for i in ra], [tb[j] for j in rb]
    path = tally(pa, pb, difflib.SequenceMatcher(
        None, pa, pb, autojunk=False).get_opcodes(), b, rb)
    summary = {"function": name, "n": len(a), "off": len(b),
               "added": full[0], "removed": full[1], "immediates": full[2],
               "moved": full[4], "path_n": len(ra), "path_off": len(rb),
               "path_added": path[0], "path_removed": path[1],
               "path_immediates": path[2], "path_key": path[3],
               "path_moved": path[4], "verdict": verdict(full, path)}
    head = (f"== {name}: n {len(a)} instructions, off {len(b)}: "
            f"+{full[0]} -{full[1]} ~{full[2]} moved {full[4]}; on the path "
            f"the option off runs (n {len(ra)}, off {len(rb)}): +{path[0]} "
            f"({path[3]} key test) -{path[1]} ~{path[2]} moved {path[4]}: "
            f"{summary['verdict']}")
    if summary["verdict"] == "identical":
        return summary, [head]
    return summary, [head] + hunks(a, b, ta, tb, set(rb)) + [""]


def unmatched_copies(name, cn, co, sy_n, sy_off):
    """Copies of a static function that GCC emitted out of line more often
    in one kernel than in the other (one more copy in the option's own
    object, or an inline no longer inlined): pairing them by order would
    compare unrelated callers' copies.  Copies the same in both, in order,
    pair up; the rest are counted by size and listed ("lines")."""
    def text(copy, syms):
        a = analyse(name, copy, syms)
        return tuple(align(a, a, name)[0])
    tn, to = [text(c, sy_n) for c in cn], [text(c, sy_off) for c in co]
    sm = difflib.SequenceMatcher(None, tn, to, autojunk=False)
    same_n, same_off = set(), set()
    for blk in sm.get_matching_blocks():
        same_n.update(range(blk.a, blk.a + blk.size))
        same_off.update(range(blk.b, blk.b + blk.size))
    lines = [f"{'-' if k == 'n' else '+'} {t}"
             for k, texts, same in (("n", tn, same_n), ("off", to, same_off))
             for i, text in enumerate(texts) if i not in same
             for t in (f"{k} copy {i + 1}:",) + text]
    return {"function": name, "identical": len(same_n),
            "n": [len(c) for i, c in enumerate(cn) if i not in same_n],
            "off": [len(c) for i, c in enumerate(co) if i not in same_off],
            "lines": lines}


def code_pair(target, tree, n_dir, off_dir):
    """bloat-o-meter and the function diffs of one n/off pair of build
    directories -> its state: "bloat" (the output), "functions" (one
    summary per function copy), "unpaired" (copies one kernel lacks) and
    "diff" (the text of results/DIFF_FILE for it)."""
    objdump, nm = f"{target.arch.cross}objdump", f"{target.arch.cross}nm"
    vm_n, vm_off = Path(n_dir) / "vmlinux", Path(off_dir) / "vmlinux"
    bloat = bloat_o_meter(target, tree, vm_n, vm_off)
    fns_n, fns_off = disassemble(objdump, vm_n), disassemble(objdump, vm_off)
    sy_n, sy_off = symbols(nm, vm_n), symbols(nm, vm_off)
    rows, unpaired, diff = [], [], []
    for name in code_functions(fns_n, fns_off, bloat_rows(bloat)):
        cn, co = fns_n.get(name, []), fns_off.get(name, [])
        if len(cn) != len(co):
            entry = unmatched_copies(name, cn, co, sy_n, sy_off)
            diff += [f"== {name}: {len(cn)} copies in n, {len(co)} in off; "
                     f"{entry['identical']} the same in both; the others "
                     f"(instructions each): n {entry['n'] or '-'}, off "
                     f"{entry['off'] or '-'}; not paired, listed"] + \
                entry.pop("lines") + [""]
            unpaired.append(entry)
            continue
        for k, (c_n, c_off) in enumerate(zip(cn, co)):
            label = name if len(cn) == 1 else f"{name} (copy {k + 1} of " \
                f"{len(cn)})"
            summary, lines = compare(name, analyse(name, c_n, sy_n),
                                     analyse(name, c_off, sy_off))
            summary["function"] = label
            rows.append(summary)
            lines[0] = lines[0].replace(f"== {name}:", f"== {label}:", 1)
            diff += lines
    return {"bloat": bloat, "functions": rows, "unpaired": unpaired,
            "diff": "\n".join(diff)}


def code_pairs(target, tree, bdirs):
    """code_pair() of each CODE_PAIRS pair, by its off key."""
    out = {}
    for n_key, n_label, off_key, off_label in CODE_PAIRS:
        with Phase(off_label, f"bloat-o-meter and function diffs against "
                   f"{n_label}"):
            out[off_key] = {"n": n_label, "off": off_label,
                            **code_pair(target, tree, bdirs[n_label],
                                        bdirs[off_label])}
    return out


# ------------------------------------------------------ user space

def user_space(tree):
    """/init and tlb_bench for the target's user space, stripped, in one
    initramfs per use: (wall, icount) cpio paths."""
    arch = TARGETS[TARGET].user_arch
    out = BUILD / f"bench-user-{arch.name}"
    log = reset_log(LOGS / f"bench-user-{arch.name}.log")
    with Phase(f"user-{arch.name}", "build init, tlb_bench", log):
        base = benchlib.initramfs(arch, tree, out, log)
        exe = guest.stripped(guest.build_bench_program(PROGRAM, arch, out,
                                                       log), arch, log)
    cpios = []
    for kind, argv in (("wall", WALL_ARGS), ("icount", ICOUNT_ARGS)):
        fs = copy.deepcopy(base)
        fs.add_test(PROGRAM, exe, argv)
        cpios.append(benchlib.write_initramfs(
            fs, tree, BUILD / f"bench-{TARGET}-{kind}.cpio", log))
    return cpios


# ------------------------------------------------------------ boots

def boot_one(label, bdir, cpio, name, cpus, append, icount, qemu_args=()):
    """One boot with @append as the only arguments beyond the harness's
    own: not the target's tlbi_local=on."""
    target = dataclasses.replace(TARGETS[TARGET], cpus=cpus, append="")
    console = LOGS / label / f"tlbbench-{name}.console.log"
    how = "qemu -icount shift=0" if icount else f"-accel {MTTCG}"
    with Phase(label, f"tlb_bench {name} ({how}, {cpus} CPUs)", console):
        outcome, rep = boot.qemu(
            target, Path(bdir) / target.arch.boot_image, cpio, console,
            BOOT_TIMEOUT, "tcg" if icount else MTTCG,
            boot.kernel_args(target, BOOT_TIMEOUT * 2 // 3, append),
            icount=icount, qemu_args=qemu_args)
    res = parse_console(console.read_text(errors="replace"))
    if outcome != boot.PASS or res["failed"] or not res["ops"]:
        fail(f"[{label}] tlb_bench {name}: {boot.describe(outcome, rep)}; " +
             ("; ".join(res["failed"]) or "figures: " + str(len(res["ops"]))),
             console)
    res["console"] = str(console)
    res["append"] = append
    return res


def measure(pristine, tree, unverified, timings, names=None):
    """Builds, boots, returns the state section() needs.  names: unused,
    this part boots its own kernels."""
    started = time.monotonic()
    target = TARGETS[TARGET]
    bdirs = kernels(pristine, tree, unverified, timings)
    start = time.monotonic()
    code = code_pairs(target, tree, bdirs)
    timings.append((f"bench-{TARGET}", "bloat-o-meter, function diffs",
                    time.monotonic() - start))
    wall_cpio, icount_cpio = user_space(tree)
    # Wall time and counts: one boot per kernel/setting, in one run.
    wall = {}
    for key, label, append in WALL_BOOTS:
        start = time.monotonic()
        wall[key] = boot_one(label, bdirs[label], wall_cpio, f"wall-{key}",
                             WALL_CPUS, append, False)
        timings.append((label, f"tlb_bench wall ({key})",
                        time.monotonic() - start))
    # Instructions per switch: two boots each, which must agree.
    icount = {}
    for key, label, append in ICOUNT_BOOTS:
        icount[key] = benchlib.boot_until_identical(
            label, f"tlb_bench icount {key}",
            lambda n: boot_one(label, bdirs[label], icount_cpio,
                               f"icount-{key}-{n}", ICOUNT_CPUS,
                               f"{BENCH_ARGS} {append}".strip(), True,
                               QEMU_ARGS),
            differences, timings,
            f"{LOGS / label}/tlbbench-icount-{key}-*.console.log")
    state = {
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "commit": fullstate.commit(),
        "machine": benchlib.machine(),
        "qemu": benchlib.qemu_version(target.arch.qemu),
        "kernels": {label: {"option": option_of(b),
                            "jump_label": option_of(b, "CONFIG_JUMP_LABEL"),
                            "size": benchlib.size_of(target,
                                                     Path(b) / "vmlinux"),
                            "bdir": str(b)} for label, b in bdirs.items()},
        "object": benchlib.size_of(target, Path(bdirs[f"bench-{TARGET}"]) /
                                   "arch/arm64/mm/tlbi_local.o"),
        "wall": wall, "icount": icount, "code": code,
        "wall_cpus": WALL_CPUS, "icount_cpus": ICOUNT_CPUS,
        "reps": REPS, "iters": ITERS, "bench_args": BENCH_ARGS,
        "qemu_args": list(QEMU_ARGS),
        "minutes": (time.monotonic() - started) / 60,
    }
    STATE.write_text(json.dumps(state, indent=1))
    return state


# ------------------------------------------------------------ report

def _mm(row):
    if row is None:
        return "—"
    if "na" in row:
        return "n/a"
    if row.get("unit") == "ns":     # wall time: a ns is fine enough
        return f"{row['min']:.0f} / {row['median']:.0f}"
    return f"{fmt(row['min'])} / {fmt(row['median'])}"


def _ratio(a, b, key):
    if not a or not b or "na" in a or "na" in b or not a[key]:
        return "n/a"
    return f"{b[key] / a[key]:.3f}"


def countstable(state):
    rows = []
    for w, what in WORKLOADS:
        t = state["wall"]["on"]["ops"].get(f"{w}.time") or {}
        for c in COUNTERS:
            off = state["wall"]["off"]["ops"].get(f"{w}.{c}")
            on = state["wall"]["on"]["ops"].get(f"{w}.{c}")
            rows.append([f"`{w}`" if c == COUNTERS[0] else "",
                         t.get("iters", "—") if c == COUNTERS[0] else "",
                         c, _mm(off), _mm(on),
                         fmt(per_op(state, w, "off", c)),
                         fmt(per_op(state, w, "on", c))])
    return table(["workload", "ops per repetition", "counter",
                   "off (no `tlbi_local=on`): per repetition, "
                   "min / median",
                   "on (`tlbi_local=on`): per repetition, min / median",
                   "off: per op, median", "on: per op, median"],
                  rows)


def varying(state):
    """Counts that were not the same in every repetition, in words."""
    out = []
    for w, _ in WORKLOADS:
        for key in ("off", "on"):
            for c in COUNTERS:
                each = state["wall"][key]["ops"].get(f"{w}.{c}", {}) \
                    .get("each")
                if each and len(set(each)) > 1:
                    out.append(f"`{w}` {key} {c}: "
                               + ", ".join(str(v) for v in each))
    if not out:
        return "Every count was the same in every repetition."
    return ("Counts that differed between repetitions (each repetition's, "
            "in the order they ran): " + "; ".join(out) + ". Every other "
            "count was the same in every repetition.")


def counts_words(state, w, key):
    """@w's median counts per repetition on boot @key, in words: "B
    broadcast, L local, ..." (the nonzero ones), or "not measured"."""
    ops = state["wall"][key]["ops"]
    words = []
    for c in COUNTERS:
        row = ops.get(f"{w}.{c}")
        if not row or "na" in row:
            return "not measured"
        if row["median"] or c == "tlbi_broadcast":
            words.append(f"{fmt(row['median'])} "
                         f"{c.replace('tlbi_', '').replace('catchup', 'catch-up')}")
    return ", ".join(words)


def per_op(state, w, key, counter):
    """@counter's median per operation of @w on boot @key, or None."""
    ops = state["wall"][key]["ops"]
    row, t = ops.get(f"{w}.{counter}"), ops.get(f"{w}.time")
    if not row or "na" in row or not t or not t.get("iters"):
        return None
    return row["median"] / t["iters"]


def workload_notes(state):
    """What the two-thread and fork + exec rows show, with their own
    figures (median per repetition)."""
    def both(w):
        return (f"off: {counts_words(state, w, 'off')}; on: "
                f"{counts_words(state, w, 'on')}")

    notes = [
        "`twothr_sleep` (the 2020 review's question: what happens to a "
        "program with two threads): one thread loops on CPU 1 while the "
        "other sleeps in a futex on CPU 0, whose idle task keeps the mm in "
        "TTBR0 and so still counts as a holder: its flushes broadcast, "
        "with the option on as off. Only when another process runs on "
        "CPU 0 meanwhile (the guest's only other one is `/init`, which "
        "polls every 100 ms) does CPU 0 stop holding the mm: that "
        "repetition's later flushes are then local, and the sleeper "
        "catches up (one `tlbi_catchup`) when it wakes. Median per "
        "repetition, " + both("twothr_sleep") + "; the repetitions "
        "that differ are listed above.",
        "`twothr_run`: both threads run the mm, each on its CPU, so the "
        "option cannot help: every flush broadcasts, except when one "
        "thread waits for the other's `mmap_lock` and another process "
        "takes its CPU meanwhile, as above. Median per repetition, " +
        both("twothr_run") + ".",
    ]
    fe = [(c, per_op(state, "forkexec", k, c))
          for k, c in (("off", "tlbi_broadcast"), ("on", "tlbi_broadcast"),
                       ("on", "tlbi_local"))]
    if all(v is not None for _, v in fe):
        notes.append(
            "`forkexec`: per fork + exec + exit, "
            f"{fmt(fe[0][1])} broadcast with the option off, "
            f"{fmt(fe[1][1])} broadcast and {fmt(fe[2][1])} local "
            "with it on. What stays broadcast is `flush_tlb_mm()`, which "
            "always broadcasts (the fork's, once it has write-protected "
            "the parent; each mm's teardown: the forked copy's at the "
            "exec, the new program's at its exit), and flushes that free "
            "page tables (exec moving the stack). The local ones are leaf "
            "flushes of an mm that CPU 0 alone holds: the copy-on-write "
            "faults of the parent after the fork and of the child before "
            "its exec, and the new program's own. Median per repetition, "
            + both("forkexec") + ".")
    return notes


def walltable(state):
    """Ratios only: TCG's ns are not a figure to quote (results/tlbi.json
    keeps them)."""
    rows = []
    for w, what in WORKLOADS:
        m, on = (state["wall"].get(k, {}).get("ops", {}).get(f"{w}.time")
                 for k in ("mainline", "on"))
        rows.append([f"`{w}`", what, _ratio(m, on, "min"),
                     _ratio(m, on, "median")])
    return table(["workload", "operation",
                   "TCG wall time, on / mainline, of the min",
                   "TCG wall time, on / mainline, of the median"], rows)


def icount_row(state, key, name):
    """Row @name of the first -icount boot of @key, or None."""
    row = (state["icount"].get(key) or [{"ops": {}}])[0]["ops"].get(name)
    return row if row and "na" not in row else None


def switch_row(state, key):
    """ctxsw.time of the first -icount boot of @key, or None."""
    return icount_row(state, key, "ctxsw.time")


def delta(state, key, name):
    """(min, median) of row @name of @key minus its n's, or None."""
    row = icount_row(state, key, name)
    base = icount_row(state, ICOUNT_BASE.get(key, "n"), name)
    if not row or not base:
        return None
    return row["min"] - base["min"], row["median"] - base["median"]


def switch_delta(state, key):
    """(min, median) instructions per switch of @key minus its n's, or
    None."""
    return delta(state, key, "ctxsw.time")


def icounttable(state):
    rows = []
    for key, _, _ in ICOUNT_BOOTS:
        d = switch_delta(state, key)
        rows.append([ICOUNT_WHAT[key], _mm(switch_row(state, key)),
                     "" if key.startswith("n") or not d else
                     f"{d[0]:+.2f} / {d[1]:+.2f}"])
    return table(["kernel", "instructions per switch min / median",
                   "Δ against =n min / median"], rows)


def switches_words(state):
    """How many switches each figure and the min stand for, from the
    figures themselves."""
    row = switch_row(state, "n")
    if not row:
        return "not measured"
    return (f"each repetition {row['iters']:,} switches, its figure their "
            f"mean; min and median over {row['reps']} repetitions, "
            f"{row['iters'] * row['reps']:,} switches in all")


def within(state, key):
    """Is @key within OFF_SLACK of its n?  None if not measured."""
    off = switch_delta(state, key)
    return None if off is None else all(abs(d) <= OFF_SLACK for d in off)


def off_verdict(state, key, what):
    """One sentence: is built-and-off (@key) within OFF_SLACK of its n?"""
    off = switch_delta(state, key)
    if off is None:
        return f"Built and off, {what}: not measured."
    ok = within(state, key)
    out = (f"**Built and off, {what}, is {'' if ok else 'NOT '}within "
           f"{OFF_SLACK} instructions per switch of `n`** ({off[0]:+.2f} "
           f"min, {off[1]:+.2f} median).")
    f = code_row(state, key, "check_and_switch_context")
    extra = f["path_key"] - 1 if f else 0
    if extra > 0:
        rest = [d - extra for d in off]
        ok = all(abs(d) <= OFF_SLACK for d in rest)
        out += (f" Counting the switch's {f['path_key']}-instruction key "
                "test as one instruction, as a jump label's is: "
                f"{rest[0]:+.2f} min, {rest[1]:+.2f} median, "
                f"{'' if ok else 'NOT '}within {OFF_SLACK}.")
    return out


def code_row(state, off_key, function):
    """The code comparison's summary of @function (its only copy) in the
    pair whose off kernel is @off_key's, or None."""
    pair = (state.get("code") or {}).get(off_key) or {}
    return next((f for f in pair.get("functions", [])
                 if f["function"] == function), None)


def path_words(f):
    """A function's off-path difference, in words."""
    if f is None:
        return "not compared"
    if f["verdict"] == "identical":
        return "nothing"
    return (f"{f['path_added']} instructions added ({f['path_key']} of them "
            f"key test), {f['path_removed']} removed, "
            f"{f['path_immediates']} with another immediate and "
            f"{f['path_moved']} moved")


def switch_code_words(state, off_key):
    """What the code comparison says of the switch, for @off_key's pair."""
    return (f"On the path the option off runs, `check_and_switch_context` "
            f"differs from `n`'s by "
            f"{path_words(code_row(state, off_key, 'check_and_switch_context'))}"
            f"; `__schedule` (where `switch_mm()` is inlined) by "
            f"{path_words(code_row(state, off_key, '__schedule'))} (the code "
            "section below has every function, the diffs are in "
            f"`results/{DIFF_FILE}`)")


def switch_verdict(state):
    """What built-and-off and on cost per switch, in words."""
    on = switch_delta(state, "on")
    base = switch_row(state, "n")
    out = [off_verdict(state, "off-jl", "with `CONFIG_JUMP_LABEL` as "
                       "distributions build it"),
           switch_code_words(state, "off-jl") + ".",
           off_verdict(state, "off", "in the `tinyconfig` kernels without "
                       "jump labels"),
           switch_code_words(state, "off") + "."]
    if on is not None and base:
        out.append(
            f"**On costs {on[1]:+.2f} instructions per switch** (median, "
            f"{100 * on[1] / base['median']:+.1f} %; {on[0]:+.2f} min; "
            "without jump labels): "
            "the holder counts (an atomic increment of the new mm's, a "
            "decrement of the old one's), two `dsb(ish)` (the count "
            "visible before the new ASID is used; the old ASID's walks "
            "complete before it is uncounted) and the stale-mark test. "
            "These are instructions, not time: a DSB is one instruction "
            "here and can take many cycles on hardware.")
    return " ".join(out)


# ------------------------------------------- flush workloads, -icount

def flushes_per_op(state, w, key):
    """Flushes per operation of @w as the -icount boot @key (the option
    on) counted them: broadcast + local + skipped, medians; or None."""
    t = icount_row(state, key, f"{w}.time")
    rows = [icount_row(state, key, f"{w}.{c}") for c in COUNTERS[:3]]
    if not t or not t["iters"] or not all(rows):
        return None
    return sum(r["median"] for r in rows) / t["iters"]


def per_flush(state, w, key, on_key):
    """(min, median) of @w on @key less its n's, per flush, or None."""
    d, f = delta(state, key, f"{w}.time"), flushes_per_op(state, w, on_key)
    if d is None or not f:
        return None
    return d[0] / f, d[1] / f


def flush_within(state, w, key, on_key):
    pf = per_flush(state, w, key, on_key)
    return None if pf is None else all(abs(v) <= FLUSH_SLACK for v in pf)


def flushtable(state, keys, on_key):
    """Instructions per operation of each flush workload on the -icount
    boots @keys, and built-and-off against n per flush."""
    off_key = keys[1]
    rows = []
    for w, unit in FLUSH_WORKLOADS:
        d = delta(state, off_key, f"{w}.time")
        pf = per_flush(state, w, off_key, on_key)
        ok = flush_within(state, w, off_key, on_key)
        rows.append([f"`{w}`", unit] +
                    [_mm(icount_row(state, k, f"{w}.time")) for k in keys] +
                    [fmt(flushes_per_op(state, w, on_key)),
                     "n/a" if d is None else f"{d[0]:+.2f} / {d[1]:+.2f}",
                     "n/a" if pf is None else f"{pf[0]:+.2f} / {pf[1]:+.2f}",
                     "n/a" if ok is None else ("yes" if ok else "**no**")])
    return table(["workload", "per"] +
                 [f"{k}: min / median" for k in keys] +
                 ["flushes per op (on)", "off − n per op, min / median",
                  "off − n per flush, min / median",
                  f"within {FLUSH_SLACK} per flush"], rows)


def flush_verdict(state, keys, on_key, what):
    """One sentence: in which flush workloads is built-and-off within
    FLUSH_SLACK instructions per flush of n?"""
    off_key = keys[1]
    res = {w: flush_within(state, w, off_key, on_key)
           for w, _ in FLUSH_WORKLOADS}
    measured = [w for w, ok in res.items() if ok is not None]
    if not measured:
        return f"Flushes, built and off, {what}: not measured."
    bad = [w for w in measured if not res[w]]
    head = (f"**Built and off, {what}, is within {FLUSH_SLACK} instructions "
            f"per flush of `n` in {len(measured) - len(bad)} of "
            f"{len(measured)} flush workloads**")
    return head + (f" (not in: {', '.join(f'`{w}`' for w in bad)})."
                   if bad else ".")


# ------------------------------------------------- the code, in words

def code_table(pair):
    rows = []
    for f in pair["functions"]:
        rows.append([f"`{f['function']}`", f"{f['n']} / {f['off']}",
                     f"+{f['added']} −{f['removed']} ~{f['immediates']} "
                     f"↕{f['moved']}",
                     f"{f['path_n']} / {f['path_off']}",
                     f"+{f['path_added']} ({f['path_key']}) "
                     f"−{f['path_removed']} ~{f['path_immediates']} "
                     f"↕{f['path_moved']}",
                     f["verdict"]])
    return table(["function", "instructions n / off",
                   "all: +added −removed ~other immediate ↕moved",
                   "on the path the option off runs: n / off",
                   "that path: +added (of them key test) − ~ ↕", "verdict"],
                 rows, align=["---", "---:", "---:", "---:", "---:", "---"])


def unpaired_words(pair):
    """The functions not diffed, in words."""
    out = []
    for u in pair["unpaired"]:
        more = [f"only in {k}: "
                f"{'a copy' if len(u[k]) == 1 else f'{len(u[k])} copies'} "
                f"of {', '.join(map(str, u[k]))} instructions"
                for k in ("n", "off") if u[k]]
        out.append(f"`{u['function']}` ({u['identical']} the same in both; "
                   + "; ".join(more) + ")")
    if not out:
        return "Every function compared has as many copies in both."
    return ("Out-of-line copies of static functions that one kernel has "
            "more of, not diffed (pairing them would compare unrelated "
            "callers' copies): " + "; ".join(out) + ".")


def clean_functions(pair):
    """The functions of a code pair whose path the option off runs is n's
    but for key tests and the immediates of moved fields."""
    return [f for f in pair["functions"]
            if f["verdict"] in ("identical", "off path identical")
            or (f["verdict"].startswith("off path: n's +") and
                not f["path_moved"])]


def code_verdict(pair, what):
    """One sentence: on how many of the functions is the path the option
    off runs n's, save key tests and the immediates of moved fields; on
    how many more is it as long, laid out otherwise?"""
    fns = pair["functions"]
    clean = clean_functions(pair)
    laid = [f["function"] for f in fns
            if f["verdict"].startswith("off path: as long")]
    bad = [f["function"] for f in fns
           if f not in clean and f["function"] not in laid]
    keys = sum(f["path_key"] for f in clean)
    imms = sum(f["path_immediates"] for f in clean)
    return (f"**{what}: in {len(clean)} of {len(fns)} functions compared the "
            "path the option off runs is `n`'s instruction for instruction "
            "but for key tests and field offsets** "
            f"({keys} key-test instructions and {imms} with another "
            "immediate on those paths: the option's fields in "
            "`mm_context_t` move the `mm_struct` fields after it)" +
            (f"; in {len(laid)} more it is as long as `n`'s plus its key "
             "tests, laid out or allocated otherwise" if laid else "") +
            (f"; it is neither in {', '.join(f'`{b}`' for b in bad)}."
             if bad else "."))


def code_section(state):
    """The code subsection: each pair's bloat-o-meter and function table."""
    code = state.get("code")
    if not code:
        return ["The code was not compared in this run.", ""]
    out = [
        "Each `n` kernel against its built-in one, both `vmlinux`, by "
        "`scripts/bloat-o-meter` of the 6.12 tree (run with `python3`, the "
        "arm64 `nm`) and by `aarch64-linux-gnu-objdump -d "
        "--no-show-raw-insn`, one function at a time: "
        f"{', '.join(f'`{f}`' for f in CODE_FUNCTIONS)}, every function "
        "that issues a user TLBI (`vae1`, `vale1`, `aside1`, any "
        "shareability), calls `check_and_switch_context` or "
        "`cpu_do_switch_mm`, or calls one of the option's `tlbi_local_*` "
        "functions, in either kernel, and every function bloat-o-meter "
        "lists as changed. Normalised before the diff: no addresses; a "
        "call or a branch out by symbol; an `adrp` and the low 12 bits "
        "that complete it by the symbol they make (a string literal by its "
        "text), found along every path; a branch within the function as "
        "`<fn+OFFSET>` in `n`'s offsets wherever its target is an "
        "instruction both share, so that one inserted instruction does "
        "not change every branch across it. An instruction that differs "
        "only in an immediate (a field offset in `mm_struct` after "
        "`mm_context_t` grew) counts as `~`, not as one added and one "
        "removed, and one removed here and added the same elsewhere "
        "counts as moved (`↕`). **The path the option off runs**: the "
        "instructions reached from the entry with `tlbi_local_key` off (its "
        "jump-label sites run as built: a branch to mainline's code, made "
        "a NOP only when the key is on; other jump labels go both ways; "
        "without jump labels the key's load, compare and branch go the off "
        "way; a function with an indirect branch counts whole); its "
        "key-test instructions are counted apart. These kernels are "
        "`tinyconfig`'s, built for size (`CC_OPTIMIZE_FOR_SIZE`): GCC "
        "inlines and lays out the flush helpers by their size, which the "
        "key test and its call change; a build for speed was not compared. "
        "The "
        "diffs themselves, written by the run: "
        f"[`results/{DIFF_FILE}`]({DIFF_FILE}).", ""]
    for n_key, n_label, off_key, off_label in CODE_PAIRS:
        pair = code.get(off_key)
        if not pair:
            continue
        first, total = bloat_totals(pair["bloat"])
        what = ("with jump labels" if off_key.endswith("-jl") else
                "without jump labels")
        out += [f"#### `{n_label}` against `{off_label}` ({what})", "",
                f"bloat-o-meter: `{first}`; `{total}`.", "",
                "```", pair["bloat"].rstrip("\n"), "```", "",
                code_table(pair), "",
                unpaired_words(pair), "",
                code_verdict(pair, f"Built and off, {what}"), ""]
    return out


# ------------------------------------------------------------ tlbshoot

STRESS_NG = ("stress-ng's `stress-tlb-shootdown.c` (ColinIanKing/stress-ng, "
             "read at ca618d2 of July 2025 and at 291fc43 of August 2026)")


def tlbshoot_note(state):
    """What tlbshoot is against stress-ng's stressor, and its figures."""
    ops = state["wall"]["on"]["ops"].get("tlbshoot.time") or {}
    words = {k: counts_words(state, "tlbshoot", k) for k in ("off", "on")}
    per = {k: {c: per_op(state, "tlbshoot", k, c) for c in COUNTERS[:3]}
           for k in ("off", "on")}
    ratio = _ratio(state["wall"].get("mainline", {}).get("ops", {})
                   .get("tlbshoot.time"), ops, "median")

    def per_words(k):
        if any(v is None for v in per[k].values()):
            return "not measured"
        return ", ".join(f"{fmt(v)} {c.replace('tlbi_', '')}"
                         for c, v in per[k].items())
    return (
        "`tlbshoot` is the load of Ryan Roberts' 2025 arm64 RFC (stress-ng "
        "`--tlb-shootdown`, 32 instances: 1,593 ops/s before, 15,328 after, "
        "the RFC's figures, not checked here), written again in "
        "`tlb_bench.c` from what " + STRESS_NG + " does. There each "
        "instance maps 512 shared anonymous pages and a 4-page temporary "
        "file (`MAP_SHARED`) and forks max(2, min(8, CPUs)) children. Each "
        "child loops: `mprotect` a random page read-only and read it, "
        "write-only and write it; `mprotect` all 512 pages read-only and "
        "make 32,768 one-byte reads at a fixed stride through them, "
        "write-only and as many writes, then read-write; "
        "`MADV_DONTNEED` a page of the anonymous mapping and read it, a "
        "page of the file and write it; `msync(MS_ASYNC)`. The instance "
        "loops `MADV_DONTNEED` + write + `msync(MS_SYNC)` and the same "
        "with a read on the file, the same twice on the anonymous mapping, "
        "`MADV_COLLAPSE` and `MADV_NOHUGEPAGE` on both and `msync`. Every "
        "op of both counts. All children start on the first allowed CPU and "
        "move to the next every second; the instances are not pinned. "
        "Here: the reads and writes cover every cache line once, in a "
        "scattered order; one instance per CPU "
        f"({state['wall_cpus']} with {state['wall_cpus']} children each in "
        f"the wall boots, {state['icount_cpus']} with 2 under `-icount`), "
        "a fixed number of ops per process instead of a time, the move "
        "once, halfway, from CPU 0 to CPU 1; stress-ng's user-space "
        "cache flush after each write, its random generator and its x86 "
        "`tlb_single_page_flush_ceiling` file are left out (the kernels "
        "have no THP, so `MADV_COLLAPSE` and `MADV_NOHUGEPAGE` fail with "
        "`EINVAL` as they can in stress-ng). "
        f"Per op ({ops.get('iters', '?')} ops per repetition), median: "
        f"off {per_words('off')}; on {per_words('on')}. Per repetition, off: "
        f"{words['off']}; on: {words['on']}. TCG wall time, this run only: "
        f"on / mainline = {ratio} (median; a ratio under TCG, which makes "
        "a broadcast far dearer than hardware does).")


def sizetable(state):
    rows = []
    ks = state["kernels"]
    n = ks[f"bench-{TARGET}-tlbi-n"]["size"]
    for label in (f"mainline-{TARGET}", f"bench-{TARGET}-tlbi-n",
                  f"bench-{TARGET}"):
        if label not in ks:
            continue
        s = ks[label]["size"]
        rows.append([f"`{label}`", ks[label]["option"],
                     f"{s['text']} / {s['data']} / {s['bss']}",
                     f"{s['text'] - n['text']:+d} / "
                     f"{s['data'] - n['data']:+d} / "
                     f"{s['bss'] - n['bss']:+d}"])
    return table(["kernel", OPTION.replace("CONFIG_", ""),
                   "text / data / bss", "Δ against =n"], rows)


def size_note(state):
    o = state.get("object")
    return ("`vmlinux`'s sections are padded to alignment boundaries, so "
            "these deltas move in steps and can land in another column "
            "than the code that caused them" +
            (f"; `arch/arm64/mm/tlbi_local.o` itself is {o['text']} / "
             f"{o['data']} / {o['bss']} (text / data / bss)." if o else
             "."))


def section(state, repo=None):
    """The REPORT.md section, between its own markers."""
    m = state["machine"]
    info = state["wall"]["on"]["info"]
    return "\n".join([
        SECTION_BEGIN,
        "## arm64: local TLB invalidation (`ARM64_TLBI_LOCAL`, patch 0011)",
        "",
        "- **Machine.** Host: "
        f"{m['cpu_model']}, {m['host_cpus']} CPUs, load average "
        f"{m['loadavg']} when it started (other builds share these cores). "
        f"Guest: {state['qemu']}, `-M virt,virtualization=on -cpu "
        "cortex-a57` (the kernel is entered at EL2, as on a host), guest "
        f"kernel {info.get('kernel', '?')}.",
        "- **Kernels.** `mainline-arm64` (pristine 6.12), `bench-arm64` "
        "(PDA, `ARM64_TLBI_LOCAL=y`) and `bench-arm64-tlbi-n` (PDA, the "
        "option `n`, nothing else changed), all `tinyconfig` + "
        "`configs/base.config` + `configs/arm64.config` + "
        "`configs/bench.config` (modules off, `MODULE_UNLOAD` with them); "
        "`bench-arm64-jl` and `bench-arm64-tlbi-n-jl` are the two PDA ones "
        "with `CONFIG_JUMP_LABEL=y`. Built in, the option is off unless "
        "the kernel is booted with `tlbi_local=on`: **off** below is "
        "`bench-arm64` booted without it, **on** booted with it.",
        "- **Program**: `tests/bench/tlb_bench.c`; every figure is "
        f"**min / median** over {state['reps']} repetitions inside the "
        "guest, after one warm-up. Counts are the `/proc/vmstat` deltas of "
        "one whole repetition, read once every worker finished its loop "
        "and before any exits.",
        "",
        "### Flush counts, option off against on (exact)", "",
        "`bench-arm64` booted without `tlbi_local=on` (off, the default) "
        f"and with it (on), {state['wall_cpus']} vCPUs, {state['iters']} "
        "loop iterations per process or thread per repetition (the "
        "workloads scale it as the table of workloads says). Each workload "
        "runs in a new process born on CPU 0: an idle CPU keeps the last "
        "user mm in TTBR0 and so still holds it.", "",
        countstable(state), "",
        varying(state), "",
        "`madvise` (a thread per CPU) has the mm live on every CPU, so it "
        "broadcasts with the option on too; its threads zap concurrently, "
        "and a zap that finds another in flight (`mm_tlb_flush_nested()`) "
        "flushes more widely, so it counts more flushes than calls, by a "
        "number that varies between repetitions.", "",
        *[n + "\n" for n in workload_notes(state)],
        "### stress-ng's tlb-shootdown load (`tlbshoot`)", "",
        tlbshoot_note(state), "",
        "### Wall time under multi-threaded TCG (a bound, not a "
        "prediction)", "",
        f"`-accel {MTTCG}`, {state['wall_cpus']} vCPUs, guest "
        "`CLOCK_MONOTONIC` per operation, min and median of the "
        "repetitions; mainline and `bench-arm64` with the option on, one "
        "boot each in this run, shown only as their ratio (below 1: on is "
        "faster; the ns are in `results/tlbi.json`). **TCG "
        "makes a broadcast far dearer than hardware does**: QEMU implements "
        "an inner-shareable TLBI by stopping every vCPU "
        "(`async_safe_run_on_cpu()` on all of them), and a local TLBI "
        "flushes one vCPU's soft TLB. The ratio therefore bounds the gain "
        "of skipping broadcasts; it does not predict it on hardware. Wall "
        "figures on a shared host vary from run to run; the counts above "
        "do not.", "",
        walltable(state), "",
        "### Context switch under `-icount` (instructions)", "",
        "Two processes (two mms, so `switch_mm()` runs) ping-pong one byte "
        "over pipes, both pinned to CPU 0; instructions per switch (half a "
        f"round trip): {switches_words(state)}. `qemu -icount "
        f"shift=0,sleep=off {' '.join(state['qemu_args'])}`, kernel "
        f"arguments `{state['bench_args']}` (and `{ON}` for \"on\"), the "
        f"initramfs with fixed mtimes; {state['icount_cpus']} CPUs (QEMU "
        "7.2 runs `-icount` vCPUs round-robin on one thread). The kernels "
        "or settings: the option `n`; built in and off (booted without "
        "`tlbi_local=on`); built in and on; mainline; and the three PDA "
        "ones again with `CONFIG_JUMP_LABEL=y`, each against its own `n`. "
        f"Each booted {RUNS} times; the figures were identical. "
        "That holds for identical boots only: a change elsewhere in the "
        "kernel image or in the guest program has moved these figures by "
        "a few instructions per switch between runs of this part, so a "
        "difference of a few instructions between two kernels is at the "
        "scale of that movement.",
        "",
        icounttable(state), "",
        switch_verdict(state), "",
        "### Flushes under `-icount` (instructions per operation)", "",
        "The flush workloads above in the same `-icount` boots, "
        f"{state['icount_cpus']} CPUs (one process or thread per CPU is "
        "two here): guest instructions on all CPUs per operation, min and "
        f"median of {state['reps']} repetitions. Flushes per op are what "
        "the option on counted (broadcast + local + skipped, median); "
        "off − n over them is the difference per flush, judged against "
        f"{FLUSH_SLACK} instructions (a figure, not a failure). Like the "
        "switch, these are exact for identical boots, but any difference "
        "between two kernels' images moves them a little; the figures "
        "include page faults, and `tlbshoot`'s the program's own loops.",
        "",
        flushtable(state, ("n", "off", "on", "mainline"), "on"), "",
        flush_verdict(state, ("n", "off", "on"), "on",
                      "without jump labels"), "",
        flushtable(state, ("n-jl", "off-jl", "on-jl"), "on-jl"), "",
        flush_verdict(state, ("n-jl", "off-jl", "on-jl"), "on-jl",
                      "with jump labels"), "",
        "### The code, `n` against built in and off", "",
        *code_section(state),
        "### Size (`size vmlinux`, bytes)", "",
        sizetable(state), "",
        size_note(state), "",
        f"This part took {state['minutes']:.1f} min. Console logs: "
        "`~/.cache/pda/logs/<kernel>/tlbbench-*.console.log`; raw figures "
        "`results/tlbi.json`.",
        SECTION_END])


def results_json(state):
    """What results/tlbi.json keeps: every figure, no host paths."""
    def run(r):
        return {"append": r["append"], "info": r["info"], "ops": r["ops"]}
    return {"date": state.get("date", "?"),
            "commit": state.get("commit", "?"),
            "machine": state["machine"], "qemu": state["qemu"],
            "object": {"arch/arm64/mm/tlbi_local.o": state.get("object")},
            "kernels": {k: {"option": v["option"], "size": v["size"],
                            "jump_label": v.get("jump_label", "?")}
                        for k, v in state["kernels"].items()},
            "method": {"reps": state["reps"], "iters": state["iters"],
                       "wall": f"-accel {MTTCG}, {state['wall_cpus']} vCPUs",
                       "icount": f"-icount shift=0,sleep=off "
                       f"{' '.join(state['qemu_args'])}, "
                       f"{state['icount_cpus']} CPUs, {RUNS} boots",
                       "wall_ratio": "TCG only: a broadcast stops every "
                       "vCPU; bounds the gain, does not predict it",
                       "off": f"bench-{TARGET} booted without "
                       "tlbi_local=on",
                       "on": f"bench-{TARGET} booted with {ON}",
                       "off_slack": f"built and off within {OFF_SLACK} "
                       "instructions per switch of n: reported, not "
                       "enforced",
                       "flush_slack": f"built and off within {FLUSH_SLACK} "
                       "instructions per flush of n: reported, not "
                       "enforced",
                       "code": f"bloat-o-meter and objdump function diffs, "
                       f"n against off; the diffs in results/{DIFF_FILE}"},
            "wall": {k: run(v) for k, v in state["wall"].items()},
            "icount": {k: run(v[0]) for k, v in state["icount"].items()},
            "code": {k: {"n": v["n"], "off": v["off"], "bloat": v["bloat"],
                         "functions": v["functions"],
                         "unpaired": v["unpaired"]}
                     for k, v in (state.get("code") or {}).items()}}


def diff_text(state):
    """results/DIFF_FILE: for each pair, bloat-o-meter's output and every
    function's normalised diff, n against off."""
    out = [f"# Written by `make bench` (scripts/harness/tlbbench.py): "
           f"{OPTION} built and off against =n, per function; normalised "
           "as results/REPORT.md says.",
           "# Each function: '-' n only, '+' off only, ' ' both, with its "
           "offset in its own copy; '~' in a header counts instructions "
           "that differ in an immediate only.", ""]
    for _, _, off_key, _ in CODE_PAIRS:
        pair = (state.get("code") or {}).get(off_key)
        if not pair:
            continue
        out += [f"#### {pair['n']} (n) against {pair['off']} (built in, "
                "off)", "", f"$ python3 scripts/bloat-o-meter -p "
                f"{TARGETS[TARGET].arch.cross} {pair['n']}/vmlinux "
                f"{pair['off']}/vmlinux", pair["bloat"].rstrip("\n"), "",
                pair["diff"].rstrip("\n"), ""]
    return "\n".join(out)


def write(repo, state, readme=False):
    """results/tlbi.json and results/DIFF_FILE; this part has no README
    headline."""
    written = [benchlib.write_results_json(repo, "tlbi.json",
                                           results_json(state))]
    if state.get("code"):
        path = Path(repo) / "results" / DIFF_FILE
        path.write_text(diff_text(state))
        written.append(path)
    return written


PART = benchlib.BenchPart(
    name=TARGET, key="tlbi", targets=None, measure=measure, write=write,
    section=section, markers=(SECTION_BEGIN, SECTION_END))
