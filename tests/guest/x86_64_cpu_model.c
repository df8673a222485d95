// SPDX-License-Identifier: GPL-2.0
/*
 * The CPU features a target is booted for are the ones the kernel found.
 * The x86_64 targets run one kernel on QEMU CPU models chosen for what
 * they have: "x86_64" with FSGSBASE, "x86_64-nofsgsbase" without it (the
 * other context-switch path of patch 0008), "x86_64-smap" with SMAP.  If
 * QEMU's models changed, two targets would quietly test one path, so the
 * harness declares each feature on the command line (pda.fsgsbase=0|1,
 * pda.smap=0|1) and this test holds the kernel to it.
 *
 * - fsgsbase: AT_HWCAP2's HWCAP2_FSGSBASE, which the kernel sets only
 *   when it enabled FSGSBASE for user space, is what pda.fsgsbase says.
 * - smap: the "smap" flag of /proc/cpuinfo is what pda.smap says.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>

#include "kselftest_harness.h"
#include "lib/cmdline.h"
#include "lib/cpuinfo.h"

#ifndef HWCAP2_FSGSBASE
#define HWCAP2_FSGSBASE		(1 << 1)
#endif

/* pda.@key=0|1 from the command line: 0 or 1, or -1 if absent. */
static int declared(const char *key)
{
	char val[8];

	if (cmdline_get(key, val, sizeof(val)) ||
	    (strcmp(val, "0") && strcmp(val, "1")))
		return -1;
	return val[0] == '1';
}

TEST(fsgsbase)
{
	int want = declared("pda.fsgsbase");
	int have = !!(getauxval(AT_HWCAP2) & HWCAP2_FSGSBASE);

	TH_LOG("pda.fsgsbase=%d, AT_HWCAP2 FSGSBASE %d", want, have);
	ASSERT_LE(0, want) {
		TH_LOG("the target declares no pda.fsgsbase=0|1");
	}
	EXPECT_EQ(want, have);
}

TEST(smap)
{
	int want = declared("pda.smap");
	int have = cpuinfo_flag("smap");

	TH_LOG("pda.smap=%d, /proc/cpuinfo smap %d", want, have);
	ASSERT_LE(0, want) {
		TH_LOG("the target declares no pda.smap=0|1");
	}
	ASSERT_LE(0, have) {
		TH_LOG("no flags line in /proc/cpuinfo");
	}
	EXPECT_EQ(want, have);
}

TEST_HARNESS_MAIN
