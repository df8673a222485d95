# SPDX-License-Identifier: GPL-2.0
"""The kernels we build and boot, in one table."""

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Target:
    name: str
    arch: str               # Kbuild ARCH
    fragments: tuple        # configs/<name>.config merged onto tinyconfig
    cpus: int
    cross: str = ""         # CROSS_COMPILE
    cc: str = "gcc"
    images: tuple = ("vmlinux", "bzImage")
    boot_image: str = "vmlinux"
    console: str = "ttyS0"
    user_arch: str = "i386"     # which user-space build the guest runs
    user_arch_64: str = ""      # and a 64-bit one on top, named NAME_64
    qemu_cpu: str = "max,vendor=GenuineIntel"   # QEMU -cpu under TCG
    machine: str = "virt"       # QEMU -M of the ARM targets
    append: str = ""            # kernel arguments of every boot
    kernel: str = ""            # boots the kernel built for this target


TARGETS = {
    "i386-smp": Target("i386-smp", "i386", ("base", "x86", "i386", "i386-smp"),
                       4),
    "i386-up": Target("i386-up", "i386", ("base", "x86", "i386", "i386-up"), 1),
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
    "x86_64": Target("x86_64", "x86_64", ("base", "x86", "x86_64"), 4,
                     user_arch_64="x86_64", qemu_cpu="max,-smap",
                     append="pda.fsgsbase=1 pda.smap=0"),
    "x86_64-nofsgsbase": Target("x86_64-nofsgsbase", "x86_64",
                                ("base", "x86", "x86_64"), 4,
                                user_arch_64="x86_64", qemu_cpu="qemu64",
                                kernel="x86_64",
                                append="pda.fsgsbase=0 pda.smap=0"),
    "arm": Target("arm", "arm", ("base", "arm"), 4,
                  cross="arm-linux-gnueabihf-",
                  cc="arm-linux-gnueabihf-gcc-12",
                  images=("zImage",), boot_image="arch/arm/boot/zImage",
                  console="ttyAMA0", user_arch="arm", qemu_cpu="cortex-a15"),
    # CONFIG_ARM64_TLBI_LOCAL is off unless asked for: tlbi_local=on.
    # Under TCG a local TLBI flushes only the issuing vCPU's TLB and an
    # inner-shareable one every vCPU's, so a local flush while another
    # vCPU runs the mm shows as a stale translation.  A missed catch-up
    # flush cannot show: QEMU's TLB has no ASID tags, so a vCPU empties
    # it whenever TTBR's ASID changes (QEMU's vmsa_ttbr_write()).
    "arm64": Target("arm64", "arm64", ("base", "arm64"), 4,
                    cross="aarch64-linux-gnu-",
                    cc="aarch64-linux-gnu-gcc-12",
                    images=("Image",), boot_image="arch/arm64/boot/Image",
                    console="ttyAMA0", user_arch="arm64",
                    qemu_cpu="cortex-a57", machine="virt,virtualization=on",
                    append="tlbi_local=on"),
}
# make check-full's debug variants: the same kernels plus configs/debug.config
# (lockdep, UBSAN, KFENCE, DEBUG_VM...).
for _base in ("i386-smp", "arm", "x86_64", "arm64"):
    _t = TARGETS[_base]
    TARGETS[f"{_base}-debug"] = replace(_t, name=f"{_base}-debug",
                                        fragments=_t.fragments + ("debug",))
DEBUG_ORDER = ("i386-smp-debug", "arm-debug", "x86_64-debug", "arm64-debug")
# The arm64 kernel again with CONFIG_ARM64_TLBI_LOCAL left off, its default:
# its TLB tests must pass when every flush broadcasts, too.
TARGETS["arm64-tlbi-off"] = replace(TARGETS["arm64"], name="arm64-tlbi-off",
                                    kernel="arm64", append="")
# The x86_64 kernel on "max" with SMAP: every access the series makes to
# user memory (getcpu_cache's word, the %gs base reads) under SMAP.
TARGETS["x86_64-smap"] = replace(TARGETS["x86_64"], name="x86_64-smap",
                                 kernel="x86_64", qemu_cpu="max",
                                 append="pda.fsgsbase=1 pda.smap=1")

CHECK_ORDER = ("i386-smp", "i386-up", "arm", "x86_64", "x86_64-nofsgsbase",
               "arm64")
