# SPDX-License-Identifier: GPL-2.0
"""The architectures, in one table: every fact the harness knows of one.

A target (targets.py) names the arch record of its kernel and of its
user space; the other modules read these fields and never branch on an
architecture's name.  tools/arch.mk holds the same compilers for the
Makefiles (a host test holds the two to each other).
"""

import subprocess
from dataclasses import dataclass

# Debian 12 has no gcc-multilib next to the ARM cross compilers (they
# conflict), so -m32 needs the i386 headers libc6-dev-i386 ships, which
# live in the x86_64 multiarch directory.
MULTIARCH_HEADERS = ("-isystem", "/usr/include/x86_64-linux-gnu")


@dataclass(frozen=True)
class Arch:
    name: str           # Kbuild's ARCH, and ARCH= of tests/guest and tools/
    family: str         # make check-full's debug-FAMILY and soak-FAMILY parts
    bits: int
    cc: str             # the C compiler, of the kernel and of user space
    cflags: tuple       # what user space adds to it (arch.mk's ARCH_CFLAGS)
    cross: str          # CROSS_COMPILE: binutils' prefix (strip, size)
    qemu: str           # QEMU's system emulator
    machine: str        # its -M
    console: str
    images: tuple       # what Kbuild builds
    boot_image: str     # which of them QEMU boots
    # Why its guests never run under KVM on this (x86) host; "": they may.
    no_kvm: str
    # Kernel arguments of its make bench boots under -icount, beyond
    # bench.BENCH_ARGS.
    icount_args: str
    # The distribution's directory of the C library and dynamic loader,
    # and where the guest's loader looks for them (preload.py).
    libc_dir: str
    guest_libc_dir: str
    # Debian's name of the architecture, and its multiarch directory under
    # /usr/lib and /usr/include: where another package's libraries and
    # headers for it are (debs.py unpacks them).
    deb_arch: str
    multiarch: str
    # readelf -h's "Machine:" of its programs (a program's arch, quick.py).
    elf_machine: str
    # What libpda-getcpu.so must answer with on a PDA kernel.
    preload_method: str
    # How tools/lib/pda/pda_pool.h updates per-CPU objects on a PDA
    # kernel (pda_pool_method_name(): make bench's pool part checks it).
    pool_method: str
    # The compiler flags that choose its ABI (cflags without the host's
    # header workaround: sysroot_cflags()), and its ABI's dynamic loader,
    # as programs name it (PT_INTERP).
    abi_cflags: tuple
    loader: str
    # Whether its guests also run the preload tests built against Debian
    # 11's glibc 2.31, which has no rseq (glibc231.py, preload.py).
    glibc231: bool
    # Which programs its guests get beyond tests/guest and the upstream
    # rseq selftests: tools/segbench (the port exists); pda_bench's null
    # system call rows by entry path (none: no port); the output checks
    # the host tests make of both natively (guestout.py), which a host
    # that cannot run 32-bit programs leaves to these guests; the
    # upstream x86 selftests, built for this arch's bits.
    segbench: bool
    pda_bench_syscalls: tuple
    bench_checks: bool
    x86_selftests: bool
    # Kbuild's SRCARCH: its directory under arch/, whose series sources
    # it builds (seriesobjs.py).
    srcarch: str
    # make randconfigs (randconfig.py): the options that vary beyond the
    # common ones (randconfig._COMMON), the KCONFIG_SEEDs it builds, and
    # the make check target whose config they start from.
    randconfig_vary: tuple
    randconfig_seeds: tuple
    randconfig_base: str
    # make debian-configs (debconfig.py): Debian's kernel flavours of it
    # (config.<deb_arch>_none_<flavour>), the Debian kernel series whose
    # linux-config package has them, the one --full also links with every
    # module ("": none), and the series' options, NAME=value, turned on.
    deb_flavours: tuple
    deb_kconfig: str
    deb_full_flavour: str
    deb_options: tuple
    # What a Debian system needs in its kernel on this architecture beyond
    # configs/distro.config (deb.py's kernel packages), NAME=value.
    distro_options: tuple = ()
    # QEMU's -M of its make distro boots ("": machine's), which reach the
    # disk through virtio's PCI device.
    distro_machine: str = ""
    # The Debian architecture make distro adds to its root beside deb_arch
    # (dpkg --add-architecture), so Debian's programs of it run too.
    distro_foreign: str = ""
    # The modules of tests/modules that are for some architectures only,
    # this one among them (modules.py); the others are for every one.
    only_modules: tuple = ()
    # make scale (scale.py): the most CPUs its kernel (with
    # configs/scale-NAME.config) and QEMU 7.2's TCG boot together, on
    # which -M, and which of the two limits binds.
    scale_cpus: int = 0
    scale_machine: str = ""
    scale_limit: str = ""
    # Kernel arguments of its make scale boots, beyond scale.ARGS.
    scale_args: str = ""


_X86 = dict(family="x86", cc="gcc", cross="", machine="pc",
            console="ttyS0", images=("vmlinux", "bzImage"),
            boot_image="vmlinux", no_kvm="",
            # Skip the IO-APIC timer check, ~10 s of TCG time spinning on
            # RDTSC (an I/O instruction under -icount) at every boot;
            # QEMU's timer works.
            icount_args="no_timer_check",
            preload_method="segment", pool_method="segment", segbench=True,
            x86_selftests=True,
            srcarch="x86",
            # Each AP calibrates its delay loop, and on a host's few
            # threads shared by 255 vCPUs it fails ("Consider using lpj=")
            # after seconds per CPU.  A preset skips it, but also sets
            # udelay()'s scale: 4000000 at HZ=250 is a 1 GHz TSC, so on a
            # 2.3 GHz host a delay is 2.3 times shorter than asked.
            scale_args="lpj=4000000",
            distro_options=("RTC_DRV_CMOS=y",),
            deb_options=("X86_PDA_USER_SEG=y", "GETCPU_CACHE=y", "KUNIT=m",
                         "X86_PDA_USER_SEG_KUNIT_TEST=m"))
# QEMU's virt machine: its PCIe host, and its PL031 RTC.
_ARM = dict(family="arm", console="ttyAMA0",
            distro_options=("PCI_HOST_GENERIC=y", "RTC_DRV_PL031=y"),
            no_kvm="host is x86; no KVM for ARM guests", icount_args="",
            preload_method="getcpu_cache", pool_method="rseq",
            x86_selftests=False)
# make randconfigs' options of both x86 builds.
_X86_RANDCONFIG = ("HYPERVISOR_GUEST", "PARAVIRT", "XEN", "VIRTUALIZATION",
                   "KVM", "KVM_INTEL", "MODIFY_LDT_SYSCALL", "X86_16BIT",
                   "X86_PDA_USER_SEG", "X86_PDA_USER_SEG_KUNIT_TEST")

ARCHES = {a.name: a for a in (
    Arch("i386", bits=32, cflags=("-m32",) + MULTIARCH_HEADERS,
         abi_cflags=("-m32",), loader="/lib/ld-linux.so.2", glibc231=True,
         qemu="qemu-system-i386", libc_dir="/lib32", guest_libc_dir="/lib32",
         deb_arch="i386", multiarch="i386-linux-gnu",
         elf_machine="Intel 80386",
         pda_bench_syscalls=("sys.int80", "sys.vsyscall"), bench_checks=True,
         randconfig_vary=_X86_RANDCONFIG + ("NOHIGHMEM", "HIGHMEM4G",
                                            "HIGHMEM64G", "X86_PAE",
                                            "X86_PDA_UP_NOSEG"),
         # UP with the UP entry path and PAE (HIGHMEM64G); SMP with the
         # segment, its KUnit suite and KVM_INTEL.
         randconfig_seeds=(0x1001, 0x1002), randconfig_base="i386-smp",
         # Debian 12 builds no 6.12 for i386: 6.1's configs, carried to
         # 6.12 by olddefconfig.
         deb_flavours=("686", "686-pae"), deb_kconfig="6.1",
         deb_full_flavour="",
         scale_cpus=64, scale_machine="pc",
         scale_limit="the kernel: a 32-bit x86 kernel takes at most 64 "
         "CPUs (NR_CPUS_RANGE_END, with X86_BIGSMP)",
         **_X86),
    Arch("x86_64", bits=64, cflags=(), qemu="qemu-system-x86_64",
         abi_cflags=(), loader="/lib64/ld-linux-x86-64.so.2",
         # The x86_64 targets run the i386 build's glibc231 tests, as
         # 32-bit programs.
         glibc231=False,
         libc_dir="/lib/x86_64-linux-gnu",
         guest_libc_dir="/lib/x86_64-linux-gnu",
         deb_arch="amd64", multiarch="x86_64-linux-gnu",
         distro_foreign="i386",
         elf_machine="Advanced Micro Devices X86-64",
         pda_bench_syscalls=("sys.syscall",), bench_checks=False,
         randconfig_vary=_X86_RANDCONFIG + ("IA32_EMULATION", "X86_X32_ABI",
                                            "X86_USER_SHADOW_STACK"),
         # Xen, KVM_INTEL, the segment, IA32_EMULATION; PREEMPT_RT with
         # getcpu_cache only.
         randconfig_seeds=(0x2011, 0x2019), randconfig_base="x86_64",
         deb_flavours=("amd64", "cloud-amd64"), deb_kconfig="6.12",
         deb_full_flavour="cloud-amd64",
         scale_cpus=128, scale_machine="q35",
         scale_limit="the emulation: QEMU takes 255 (its TCG emulates no "
         "x2APIC, so APIC IDs end at 254), and the kernel boots there, "
         "but with a thread on every CPU QEMU 7.2 serves each vCPU's "
         "interrupts under its one global lock: on a 2-core host 242 of "
         "257 QEMU threads were waiting for it, one vCPU took 1 timer "
         "tick in 300 s and RCU reported stalls; 128 run the tests (the "
         "kernel takes up to 512 without MAXSMP)",
         **_X86),
    Arch("arm", bits=32, cc="arm-linux-gnueabihf-gcc-12", cflags=(),
         abi_cflags=(), loader="/lib/ld-linux-armhf.so.3", glibc231=True,
         cross="arm-linux-gnueabihf-", qemu="qemu-system-arm",
         machine="virt", images=("zImage",),
         boot_image="arch/arm/boot/zImage",
         libc_dir="/usr/arm-linux-gnueabihf/lib",
         guest_libc_dir="/lib/arm-linux-gnueabihf",
         deb_arch="armhf", multiarch="arm-linux-gnueabihf",
         elf_machine="ARM", segbench=True,
         pda_bench_syscalls=("sys.svc",), bench_checks=True, srcarch="arm",
         randconfig_vary=("HIGHMEM", "ARM_LPAE", "XEN"),
         # UP, LPAE, Xen, modules; SMP, HIGHMEM, Xen.
         randconfig_seeds=(0x3005, 0x300b), randconfig_base="arm",
         deb_flavours=("armmp", "armmp-lpae"), deb_kconfig="6.12",
         deb_full_flavour="", deb_options=("GETCPU_CACHE=y",),
         # The PCIe host's config space below 4 GiB: the kernel has no
         # LPAE, so it cannot reach the one above (pci-host-generic:
         # "missing reg property", and no /dev/vda).
         distro_machine="virt,highmem=off",
         # GICv3: QEMU's GICv2 ends at 8 CPUs.
         scale_cpus=32, scale_machine="virt,gic-version=3",
         scale_limit="the kernel: 32-bit ARM takes at most 32 CPUs "
         "(NR_CPUS in arch/arm/Kconfig)",
         **_ARM),
    # Entered at EL2, as on a host (virtualization=on).  segbench and
    # pda_bench have no arm64 port yet: arm64 runs the TLB tests instead.
    Arch("arm64", bits=64, cc="aarch64-linux-gnu-gcc-12", cflags=(),
         abi_cflags=(), loader="/lib/ld-linux-aarch64.so.1", glibc231=False,
         cross="aarch64-linux-gnu-", qemu="qemu-system-aarch64",
         machine="virt,virtualization=on", images=("Image",),
         boot_image="arch/arm64/boot/Image",
         libc_dir="/usr/aarch64-linux-gnu/lib",
         guest_libc_dir="/lib/aarch64-linux-gnu",
         deb_arch="arm64", multiarch="aarch64-linux-gnu",
         elf_machine="AArch64", segbench=False,
         pda_bench_syscalls=(), bench_checks=False, srcarch="arm64",
         randconfig_vary=("ARM64_TLBI_LOCAL", "ARM64_CNP",
                          "ARM64_SW_TTBR0_PAN", "XEN", "VIRTUALIZATION",
                          "KVM", "ARM64_4K_PAGES", "ARM64_16K_PAGES",
                          "ARM64_64K_PAGES"),
         # TLBI_LOCAL with CnP, 16K pages, KVM, Xen; TLBI_LOCAL without
         # CnP, 64K pages.
         randconfig_seeds=(0x400d, 0x4027), randconfig_base="arm64",
         deb_flavours=("arm64", "arm64-16k", "cloud-arm64"),
         deb_kconfig="6.12", deb_full_flavour="cloud-arm64",
         deb_options=("GETCPU_CACHE=y", "ARM64_TLBI_LOCAL=y"),
         # tlb_flush_mod would not even link elsewhere: x86 does not
         # export flush_tlb_mm_range(), which its flush_tlb_page() becomes.
         # tlb_kthread_mm would, but only the arm64 guests load it (its
         # test, tlb_kthread_mm, is a tlb_ one).
         only_modules=("tlb_flush_mod", "tlb_kthread_mm"),
         scale_cpus=32, scale_machine="virt,virtualization=on,gic-version=3",
         scale_limit="the emulation on a 2-core host: QEMU's virt machine "
         "with GICv3 takes 512 CPUs (the kernel up to 4096), but at 128 a "
         "thread on every CPU at once (cpu_agree_all_at_once) ran out of "
         "900 s (RCU reported a stall at 300 s; 115 of QEMU's 130 threads "
         "were running guest code, 1 waiting for its global lock), and at "
         "64 every test that ended passed, but tlb_mprotect's first case "
         "alone took 27 min (each flush's check faults on every worker, "
         "from 8 CPUs each): 69 min into the kind's 90, its second case "
         "was still running",
         **_ARM),
)}


def sysroot_cflags(arch, sysroot):
    """What @arch's compiler takes to build against the C library of
    @sysroot, a Debian root of @arch, instead of its own: tools/arch.mk's
    ARCH_CFLAGS with SYSROOT=@sysroot (the reasons are there)."""
    include = subprocess.run(
        [arch.cc, *arch.abi_cflags, "-print-file-name=include"],
        stdout=subprocess.PIPE, text=True, check=True).stdout.strip()
    lib, usr_lib = (f"{sysroot}/lib/{arch.multiarch}",
                    f"{sysroot}/usr/lib/{arch.multiarch}")
    return [*arch.abi_cflags, f"--sysroot={sysroot}", "-nostdinc",
            "-isystem", include,
            "-isystem", f"{sysroot}/usr/include/{arch.multiarch}",
            "-isystem", f"{sysroot}/usr/include", f"-B{sysroot}/usr/lib/",
            f"-L{lib}", f"-L{usr_lib}", f"-Wl,-rpath-link,{lib}"]


# The machine the harness runs on: x86-64, which may also run 32-bit
# programs (hostcaps.i386() finds out).
HOST = ARCHES["x86_64"]
HOST_32 = ARCHES["i386"]
