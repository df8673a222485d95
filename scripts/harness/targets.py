# SPDX-License-Identifier: GPL-2.0
"""The kernels we build and boot, in one table: each target's record
names its architectures (arches.py) and carries every fact of its own,
down to which runs boot it; the other modules derive their lists from
these fields."""

from dataclasses import dataclass, replace

from .arches import ARCHES, Arch


@dataclass(frozen=True)
class Soak:
    """make check-full's soak of a kernel kind (checkfull.py): pda.scale
    of the stress tests, of each segment selector fuzzer (0: none), of the
    other fuzzers it runs, and of the TLB tests (0: none)."""
    stress: int
    seg_fuzz: int = 0
    fuzz: tuple = ()        # (program, scale) pairs
    tlb: int = 0


@dataclass(frozen=True)
class Target:
    name: str
    arch: Arch              # the kernel's
    fragments: tuple        # configs/<name>.config merged onto tinyconfig
    cpus: int
    qemu_cpu: str           # QEMU -cpu under TCG
    user_arch: Arch         # which user-space build the guest runs
    user_arch_64: Arch = None   # and a 64-bit one on top, named NAME_64
    append: str = ""            # kernel arguments of every boot
    kernel: str = ""            # boots the kernel built for this target
    # TCG even where KVM works: its tests hold the kernel to qemu_cpu.
    tcg: bool = False
    # Who boots it, beyond `pda check --only` and `pda quick`.
    check: bool = False         # make check
    bochs: bool = False         # make check, in Bochs: kernel's on an ISO
    bochs_cpu: str = ""         # Bochs's CPU model, for a bochs target
    # and its count= (processors:cores:threads); default: cpus processors
    bochs_count: str = ""
    programs: tuple = ()        # the guest programs it runs (default: all)
    debug: bool = False         # make check-full, as NAME-debug too
    soak: Soak = None           # make check-full's soak, at these scales
    bench: bool = False         # make bench: pda_bench and segbench
    census: bool = False        # make bench: the segment census
    preload_bench: bool = False     # make bench: the preload library
    pool_bench: bool = False        # make bench: the per-CPU pool
    tlb_bench: bool = False     # make bench: CONFIG_ARM64_TLBI_LOCAL
    # make check-full's goals that name it (reliability.py): CPU hotplug
    # cycles on it, and its fuzzers' operations ("getcpu_cache on NAME"),
    # must count on their own.
    hotplug_goal: bool = False
    fuzz_goal: bool = False
    # CPUs of its pda_bench and preload library boots under -icount, if
    # not cpus.  QEMU 7.2 runs -icount vCPUs round-robin on one thread,
    # and a vCPU that busy-waits keeps its whole slice
    # (bench.BENCH_CPUS_WHY).
    icount_cpus: int = 0
    # make deb packages its kernel, Kbuild's LOCALVERSION this ("": not).
    deb_kernel: str = ""
    machine: str = ""           # QEMU -M, if not its arch's machine
    memory: str = "512M"        # QEMU -m


def variant(base, name, **changes):
    """Another boot of base's: its fields but the name and @changes, and
    in none of base's runs (make check, bench...) unless @changes says."""
    return replace(base, **{**dict(
        name=name, check=False, bochs=False, bochs_cpu="", bochs_count="",
        programs=(), debug=False, soak=None,
        bench=False, census=False, preload_bench=False, pool_bench=False,
        tlb_bench=False,
        hotplug_goal=False, fuzz_goal=False, icount_cpus=0, deb_kernel=""),
        **changes})


I386, X86_64, ARM, ARM64 = (ARCHES[a] for a in ("i386", "x86_64", "arm",
                                                  "arm64"))

TARGETS = {
    "i386-smp": Target("i386-smp", I386, ("base", "x86", "i386", "i386-smp"),
                       4, "max,vendor=GenuineIntel", I386, check=True,
                       debug=True, soak=Soak(6, 10, (("getcpu_cache_fuzz",
                                                      50),)),
                       bench=True, census=True, preload_bench=True,
                       pool_bench=True,
                       deb_kernel="-pda"),
    "i386-up": Target("i386-up", I386, ("base", "x86", "i386", "i386-up"), 1,
                      "max,vendor=GenuineIntel", I386, check=True,
                      soak=Soak(8, 5, (("getcpu_cache_fuzz", 50),)),
                      bench=True, census=True, preload_bench=True,
                      pool_bench=True,
                      deb_kernel="-pda-up"),
    # ARM spins slowly under -icount with several vCPUs: ARMv7's
    # cpu_relax() does not end a vCPU's slice (x86's PAUSE does).
    "arm": Target("arm", ARM, ("base", "arm"), 4, "cortex-a15", ARM,
                  check=True, debug=True,
                  soak=Soak(25, fuzz=(("getcpu_cache_fuzz", 20),)),
                  bench=True, preload_bench=True, pool_bench=True,
                  icount_cpus=1,
                  deb_kernel="-pda"),
    # user_arch i386: the same static 32-bit programs as the i386 targets;
    # the 64-bit builds come on top.  TCG's
    # "max" has FSGSBASE, so the kernel enables it; "qemu64" has not, so
    # the same kernel takes the other context-switch path
    # (x86_fsgsbase_load()).  Two QEMU 7.2 TCG bugs, which crash
    # mainline 6.12 the same way, shape "max": with vendor=GenuineIntel a
    # 32-bit program's SYSENTER enters the kernel at RIP 0 and
    # double-faults (upstream_x86_syscall_arg_fault_32), so it keeps
    # TCG's AMD vendor; with SMAP a user-mode far return reads its stack
    # as a supervisor access, faults, and the kernel oopses
    # (upstream_x86_sysret_ss_attrs_64), so SMAP is off here and on in
    # x86_64-smap below.  pda.fsgsbase and pda.smap declare what each
    # model has; x86_64_cpu_model holds the kernel to it.
    "x86_64": Target("x86_64", X86_64, ("base", "x86", "x86_64"), 4,
                     "max,-smap", I386, X86_64,
                     append="pda.fsgsbase=1 pda.smap=0 pda.kvm=svm", tcg=True,
                     check=True, debug=True,
                     soak=Soak(5, 10, (("getcpu_cache_fuzz", 50),
                                       ("getcpu_cache_fuzz_64", 50),
                                       ("x86_64_gs_fuzz_64", 20))),
                     bench=True, census=True, preload_bench=True,
                     pool_bench=True,
                     hotplug_goal=True, deb_kernel="-pda"),
    "x86_64-nofsgsbase": Target("x86_64-nofsgsbase", X86_64,
                                ("base", "x86", "x86_64"), 4, "qemu64", I386,
                                X86_64, kernel="x86_64",
                                append="pda.fsgsbase=0 pda.smap=0 pda.kvm=svm",
                                tcg=True,
                                check=True,
                                soak=Soak(2, fuzz=(("x86_64_gs_fuzz_64",
                                                    20),))),
    # CONFIG_ARM64_TLBI_LOCAL is off unless asked for: tlbi_local=on.
    # Under TCG a local TLBI flushes only the issuing vCPU's TLB and an
    # inner-shareable one every vCPU's, so a local flush while another
    # vCPU runs the mm shows as a stale translation.  A missed catch-up
    # flush cannot show: QEMU's TLB has no ASID tags, so a vCPU empties
    # it whenever TTBR's ASID changes (QEMU's vmsa_ttbr_write()).
    # Its make bench boots of the preload library run every case pinned
    # to CPU 0 anyway: one CPU, as arm's.
    "arm64": Target("arm64", ARM64, ("base", "arm64"), 4, "cortex-a57", ARM64,
                    append="tlbi_local=on", check=True, debug=True,
                    soak=Soak(8, fuzz=(("getcpu_cache_fuzz", 100),), tlb=2),
                    preload_bench=True, pool_bench=True, tlb_bench=True,
                    icount_cpus=1,
                    hotplug_goal=True, fuzz_goal=True, deb_kernel="-pda"),
}
# make check-full's debug variants: the same kernels plus configs/debug.config
# (lockdep, UBSAN, KFENCE, DEBUG_VM...).
for _t in [t for t in TARGETS.values() if t.debug]:
    TARGETS[f"{_t.name}-debug"] = variant(_t, f"{_t.name}-debug",
                                          fragments=_t.fragments + ("debug",))
# The arm64 kernel again with CONFIG_ARM64_TLBI_LOCAL left off, its default:
# its TLB tests must pass when every flush broadcasts, too.
TARGETS["arm64-tlbi-off"] = variant(TARGETS["arm64"], "arm64-tlbi-off",
                                    kernel="arm64", append="")
# The x86_64 kernel on "max" with SMAP: every access the series makes to
# user memory (getcpu_cache's word, the %gs base reads) under SMAP.
TARGETS["x86_64-smap"] = variant(TARGETS["x86_64"], "x86_64-smap",
                                 kernel="x86_64", qemu_cpu="max",
                                 append="pda.fsgsbase=1 pda.smap=1 pda.kvm=svm")
# make scale's kinds (scale.py): each SMP kind's kernel with
# configs/scale-ARCH.config, booted with the most CPUs it and QEMU take
# (the arch record's scale_cpus, and why no more), and memory for a
# process and a thread per CPU of the tests; arm64 also with tlbi_local
# off.
SCALE_BASES = ("i386-smp", "x86_64", "arm", "arm64")
for _n in SCALE_BASES:
    _t = TARGETS[_n]
    TARGETS[f"{_n}-scale"] = variant(
        _t, f"{_n}-scale", cpus=_t.arch.scale_cpus,
        machine=_t.arch.scale_machine, memory="2G",
        fragments=_t.fragments + (f"scale-{_t.arch.name}",),
        # Its cost boots take -icount only where the base kind's SMP
        # guests run under it (scale.cost_boot()).
        icount_cpus=_t.icount_cpus)
TARGETS["arm64-scale-tlbi-off"] = variant(TARGETS["arm64-scale"],
                                          "arm64-scale-tlbi-off",
                                          kernel="arm64-scale", append="")
# The i386 kernels' bzImage on an isolinux ISO, in Bochs: bochs-up is the
# legacy single-core machine with CONFIG_X86_PDA_UP_NOSEG.  An Atom N270:
# a real 32-bit-only CPU, and one Linux accepts for SMP (Bochs's default
# AMD model makes init_amd() WARN on SMP).
TARGETS["bochs"] = variant(TARGETS["i386-smp"], "bochs", cpus=2,
                           kernel="i386-smp", check=True, bochs=True,
                           bochs_cpu="atom_n270")
TARGETS["bochs-up"] = variant(TARGETS["i386-up"], "bochs-up", cpus=1,
                              kernel="i386-up", check=True, bochs=True,
                              bochs_cpu="atom_n270")
# The x86_64 kernel in Bochs on a Sandy Bridge: Intel's VMX, which QEMU's
# TCG does not emulate, and no FSGSBASE, so KVM's VMX exit restores a
# VMM thread's %gs the way the non-FSGSBASE context switch saved it.  Its
# CPUs are cores of one package: as two packages, Bochs's CPUID sets HT
# with fewer logical CPUs than cores, and parse_legacy() WARNs.
TARGETS["bochs-vmx"] = variant(TARGETS["x86_64-nofsgsbase"], "bochs-vmx",
                               cpus=2, kernel="x86_64", check=True,
                               bochs=True,
                               append="pda.fsgsbase=0 pda.smap=0 pda.kvm=vmx",
                               bochs_cpu="corei7_sandy_bridge_2600k",
                               bochs_count="1:2:1",
                               programs=("x86_64_cpu_model_64",
                                         "x86_64_kvm_gs_64"))

# make check's boots, in order.
CHECK_ORDER = tuple(n for n, t in TARGETS.items() if t.check)
