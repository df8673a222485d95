// SPDX-License-Identifier: GPL-2.0
/*
 * An out-of-tree module that flushes user TLB entries loads, and its
 * flushes go through the series' code.  tests/modules/tlb_flush_mod's
 * init calls the inline flush_tlb_page() and flush_tlb_range() "flushes"
 * times each on this process's stack; with CONFIG_ARM64_TLBI_LOCAL those
 * are calls to the exported __tlbi_local_flush_page_nosync_thunk and
 * __tlbi_local_flush_range_nosync_thunk (the harness checks the module's
 * undefined symbols when it builds it).  With tlbi_local=on each counts
 * one tlbi_broadcast, tlbi_local or tlbi_skipped event: a page flush may
 * be local or skipped; a range flush is not leaf-only and must broadcast.
 * Off, the inlines take mainline's path and nothing is counted.  So
 * loading must succeed; on, the three counters must grow by at least
 * 2 * flushes, broadcast by at least flushes; off, none of the four may
 * grow; and the module must unload again.  The harness packs it at
 * /lib/modules/tlb_flush_mod.ko on every kernel with CONFIG_MODULES
 * (arm64's).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "lib/module.h"
#include "lib/tlb_vmstat.h"

#define MODULE_PATH	"/lib/modules/tlb_flush_mod.ko"
#define MODULE_NAME	"tlb_flush_mod"
#define FLUSHES		1024

TEST(module_flushes_through_the_series)
{
	struct tlb_vmstat before, after;
	unsigned long long all, bcast, lo;
	char args[32];
	int fd;

	fd = open(MODULE_PATH, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd) {
		TH_LOG("%s: %s (the harness packs it for a kernel with CONFIG_MODULES)",
		       MODULE_PATH, strerror(errno));
	}
	snprintf(args, sizeof(args), "flushes=%d", FLUSHES);
	tlb_vmstat_read(&before);
	ASSERT_EQ(0, syscall(SYS_finit_module, fd, args, 0)) {
		TH_LOG("finit_module(%s): %s", MODULE_PATH, strerror(errno));
	}
	tlb_vmstat_read(&after);
	close(fd);
	EXPECT_EQ(1, module_listed(MODULE_NAME));
	TLB_VMSTAT_PRINT("loading " MODULE_NAME, &before, &after);
	if (before.present != TLB_VM_NR || after.present != TLB_VM_NR) {
		TLB_EXPECT_COUNTERS("loading " MODULE_NAME);
	} else {
		lo = tlb_vm_delta(&before, &after, TLB_VM_LOCAL) +
		     tlb_vm_delta(&before, &after, TLB_VM_SKIPPED);
		bcast = tlb_vm_delta(&before, &after, TLB_VM_BCAST);
		all = lo + bcast;
		if (tlb_local_on()) {
			EXPECT_LE(2ULL * FLUSHES, all) {
				TH_LOG("not every one of the module's %d + %d flushes was counted",
				       FLUSHES, FLUSHES);
			}
			EXPECT_LE((unsigned long long)FLUSHES, bcast) {
				TH_LOG("the module's %d range flushes did not all broadcast",
				       FLUSHES);
			}
		} else {
			EXPECT_EQ(0ULL, all + tlb_vm_delta(&before, &after,
							   TLB_VM_CATCHUP)) {
				TH_LOG("tlbi_local off, yet flushes were counted: the off path is not mainline's");
			}
		}
	}
	EXPECT_EQ(0, syscall(SYS_delete_module, MODULE_NAME, O_NONBLOCK)) {
		TH_LOG("delete_module(%s): %s", MODULE_NAME, strerror(errno));
	}
	EXPECT_EQ(0, module_listed(MODULE_NAME));
}

TEST_HARNESS_MAIN
