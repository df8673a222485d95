# SPDX-License-Identifier: GPL-2.0
"""Prove from the built vmlinux that a UP NOSEG kernel never uses %fs.

With CONFIG_X86_PDA_UP_NOSEG the user's %fs stays loaded while the
kernel runs, so a single %fs-relative access in kernel code would read
user memory.  The disassembly must show: no %fs memory operand at all,
%fs loads only in the places that manage the user's value, and, on the
entry paths, only the exit's compare-then-load.
"""

import re
import subprocess

from .ktap import Result

# Functions allowed to load %fs, and why.  Anything else fails the check.
LOADERS = {
    "startup_32": "boot, before any user task",
    "startup_32_smp": "boot, before any user task",
    "early_idt_handler_common": "boot, early exceptions",
    "switch_gdt_and_percpu_base": "boot, loads the null per-CPU selector",
    "restore_processor_state": "resume, the exit restores the user value",
    "wakeup_pmode_return": "resume from ACPI sleep",
    "__switch_to": "NOSEG: loads next task's %fs",
    "do_set_thread_area": "NOSEG: refreshes a changed TLS descriptor",
    "flush_ldt": "NOSEG: refreshes a changed LDT descriptor",
    "mm_release": "NOSEG: deactivate_mm() clears %fs on exec",
    "exec_mmap": "NOSEG: deactivate_mm() clears %fs on exec",
    "fixup_exception": "ex_handler_clear_fs(), the x86-64 fixup type",
    "apm_bios_call": "APM BIOS call saves and restores %fs",
    "pnp_bios_call": "PnP BIOS call saves and restores %fs",
}

# Entry code: its %fs loads must be the exit's conditional reload.
ENTRY = re.compile(r"^(asm_\w+|entry_\w+|handle_exception\w*|"
                   r"restore_all_switch_stack)$")

FUNC = re.compile(r"^[0-9a-f]+ <([^>]+)>:$")
INSN = re.compile(r"^\s*[0-9a-f]+:\s+(.*)$")
MEMORY = re.compile(r"%fs:|^fs\b")
LOAD = re.compile(r"^(mov\s+\S+,%fs$|pop\s+%fs$|lfs\s)")
COMPARE = re.compile(r"^cmp\s+%\w+,0x[0-9a-f]+\(%esp\)$")


def scan(disassembly):
    """[(function, instruction, [up to 3 previous instructions])] for
    every instruction naming %fs."""
    uses, func, recent = [], None, []
    for line in disassembly.splitlines():
        m = FUNC.match(line)
        if m:
            func, recent = m.group(1), []
            continue
        m = INSN.match(line)
        if not m:
            continue
        insn = " ".join(m.group(1).split())
        if "%fs" in insn or insn.startswith("fs "):
            uses.append((func, insn, recent[-3:]))
        recent.append(insn)
    return uses


def check(disassembly):
    uses = scan(disassembly)
    memory = [f"{f}: {i}" for f, i, _ in uses if MEMORY.search(i)]
    loads = [(f, i, prev) for f, i, prev in uses if LOAD.match(i)]
    unknown = sorted({f for f, _, _ in loads
                      if f not in LOADERS and not ENTRY.match(f)})
    unconditional = [f"{f}: {i}" for f, i, prev in loads if ENTRY.match(f)
                     and not (len(prev) == 3 and COMPARE.match(prev[0])
                              and prev[1].startswith("je "))]
    entry_loads = sum(1 for f, _, _ in loads if ENTRY.match(f))
    return [
        Result("static_no_fs_memory_operand",
               "fail" if memory else "pass",
               "; ".join(memory[:5]) or
               f"{len(uses)} instructions name %fs, none addresses memory"),
        Result("static_fs_loads_only_where_expected",
               "fail" if unknown else "pass",
               ("unexpected %fs loads in " + ", ".join(unknown)) if unknown
               else "loaders: " + ", ".join(sorted({f for f, _, _ in loads}))),
        Result("static_entry_fs_loads_conditional",
               "fail" if unconditional or not entry_loads else "pass",
               "; ".join(unconditional[:5]) or
               (f"{entry_loads} entry-path loads, each after "
                "cmp with pt_regs->fs and je" if entry_loads
                else "no exit reload found: is NOSEG built in?")),
    ]


def check_vmlinux(vmlinux, objdump="objdump"):
    text = subprocess.run([objdump, "-d", "--no-show-raw-insn",
                           str(vmlinux)], check=True, capture_output=True,
                          text=True).stdout
    return check(text)
