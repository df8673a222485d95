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
ARCH_CFLAGS_i386 := -m32 -isystem /usr/include/x86_64-linux-gnu
ARCH_CC_x86_64 := gcc
ARCH_CC_arm := arm-linux-gnueabihf-gcc-12
ARCH_CC_arm64 := aarch64-linux-gnu-gcc-12

ifneq ($(filter x86 i686 i586 i486,$(ARCH)),)
override ARCH := i386
endif
ifeq ($(filter $(ARCHES),$(ARCH)),)
$(error ARCH must be one of $(ARCHES), not '$(ARCH)')
endif

ARCH_CC := $(ARCH_CC_$(ARCH))
ARCH_CFLAGS := $(ARCH_CFLAGS_$(ARCH))
