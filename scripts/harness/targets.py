# SPDX-License-Identifier: GPL-2.0
"""The kernels we build and boot, in one table."""

from dataclasses import dataclass


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

CHECK_ORDER = ("i386-smp", "i386-up", "arm")
