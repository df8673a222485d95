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


TARGETS = {
    "i386-smp": Target("i386-smp", "i386", ("base", "i386", "i386-smp"), 4),
    "i386-up": Target("i386-up", "i386", ("base", "i386", "i386-up"), 1),
    "arm": Target("arm", "arm", ("base", "arm"), 4,
                  cross="arm-linux-gnueabihf-",
                  cc="arm-linux-gnueabihf-gcc-12",
                  images=("zImage",), boot_image="arch/arm/boot/zImage",
                  console="ttyAMA0", user_arch="arm"),
}
# make check-full's debug variants: the same kernels plus configs/debug.config
# (lockdep, UBSAN, KFENCE, DEBUG_VM...).
for _base in ("i386-smp", "arm"):
    _t = TARGETS[_base]
    TARGETS[f"{_base}-debug"] = replace(_t, name=f"{_base}-debug",
                                        fragments=_t.fragments + ("debug",))
DEBUG_ORDER = ("i386-smp-debug", "arm-debug")

CHECK_ORDER = ("i386-smp", "i386-up", "arm")
