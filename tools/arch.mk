# SPDX-License-Identifier: GPL-2.0
#
# The C compiler of each architecture the guests run, for the Makefiles of
# guest and host programs (tests/guest, tools/segbench, tools/preload).
# Include it after `ARCH ?= ...`; it sets ARCH_CC and ARCH_CFLAGS, and
# takes x86 and i?86 for i386.  scripts/harness/arches.py has the same
# table for what the harness compiles itself; a host test holds the two
# to each other.
#
# Debian 12 has no gcc-multilib next to the ARM cross compilers (they
# conflict), so -m32 needs the i386 headers that libc6-dev-i386 ships,
# which live in the x86_64 multiarch directory.

ARCHES := i386 x86_64 arm arm64

ARCH_CC_i386 := gcc
ARCH_ABI_CFLAGS_i386 := -m32
ARCH_CFLAGS_i386 := -m32 -isystem /usr/include/x86_64-linux-gnu
ARCH_CC_x86_64 := gcc
ARCH_CC_arm := arm-linux-gnueabihf-gcc-12
ARCH_CC_arm64 := aarch64-linux-gnu-gcc-12

# Debian's multiarch directory of each (under /usr/lib, /lib, /usr/include).
ARCH_MULTIARCH_i386 := i386-linux-gnu
ARCH_MULTIARCH_x86_64 := x86_64-linux-gnu
ARCH_MULTIARCH_arm := arm-linux-gnueabihf
ARCH_MULTIARCH_arm64 := aarch64-linux-gnu

ifneq ($(filter x86 i686 i586 i486,$(ARCH)),)
override ARCH := i386
endif
ifeq ($(filter $(ARCHES),$(ARCH)),)
$(error ARCH must be one of $(ARCHES), not '$(ARCH)')
endif

ARCH_CC := $(ARCH_CC_$(ARCH))

# SYSROOT=DIR: against another C library, unpacked in DIR as a Debian root
# of the architecture (the preload runs' Debian 11 glibc 2.31), not the
# toolchain's.  Its headers only: -nostdinc, then the compiler's own and
# DIR's.  Its start files and libraries first: gcc looks for crt1.o in
# -B's multiarch subdirectory before its own directories (whose crt1.o
# would bind a newer glibc's __libc_start_main), and -L comes before
# them.  --sysroot makes the linker read libc.so's absolute paths inside
# DIR.
ifeq ($(SYSROOT),)
ARCH_CFLAGS := $(ARCH_CFLAGS_$(ARCH))
else
ARCH_SYSROOT_MULTIARCH := $(ARCH_MULTIARCH_$(ARCH))
ARCH_CFLAGS := $(ARCH_ABI_CFLAGS_$(ARCH)) --sysroot=$(SYSROOT) -nostdinc \
	-isystem $(shell $(ARCH_CC) $(ARCH_ABI_CFLAGS_$(ARCH)) -print-file-name=include) \
	-isystem $(SYSROOT)/usr/include/$(ARCH_SYSROOT_MULTIARCH) \
	-isystem $(SYSROOT)/usr/include -B$(SYSROOT)/usr/lib/ \
	-L$(SYSROOT)/lib/$(ARCH_SYSROOT_MULTIARCH) \
	-L$(SYSROOT)/usr/lib/$(ARCH_SYSROOT_MULTIARCH) \
	-Wl,-rpath-link,$(SYSROOT)/lib/$(ARCH_SYSROOT_MULTIARCH)
endif
