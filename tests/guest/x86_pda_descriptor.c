// SPDX-License-Identifier: GPL-2.0
/*
 * The user per-CPU segment as user space sees it:
 *
 * - AT_HWCAP2 has HWCAP2_PDA_USER_SEG;
 * - verr, verw, lar and lsl of selector 0xeb show a present, DPL-3,
 *   read/write, expand-up, 32-bit data segment with a 4 GiB limit;
 * - pinned to each online CPU in turn (forwards, then backwards), the
 *   segment read equals that CPU and sched_getcpu(), the CPUNODE lsl, the
 *   getcpu syscall, rseq's cpu_id, __vdso_getcpu and pda_cpu(), and the
 *   segment base is cpu * 64 (the second word of the slot comes out too),
 *   however many CPUs there are: the test's own table has a slot per
 *   possible CPU;
 * - tools/lib/pda/pda.h: pda_cpu() takes the segment path where every
 *   possible CPU has a slot in its table (PDA_MAX_CPUS) and a fallback
 *   beyond, even with 0xeb already loaded; a thread created afterwards
 *   inherits %fs, and with %fs held by another selector pda_cpu() falls
 *   back and is still right.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "lib/cpu_methods.h"
#include "lib/pda_test.h"
#include "lib/vdso.h"

/* Reads per CPU visit, and rounds (forwards, backwards, ...). */
#define READS		200
#define ROUNDS		4
#define USER_DS		pda_test_user_ds()

/* lar's access-rights bits (bits 8-23 of the result). */
#define AR_ACCESSED	(1U << 8)
#define AR_WRITABLE	(1U << 9)
#define AR_EXPDOWN	(1U << 10)
#define AR_CODE		(1U << 11)
#define AR_S		(1U << 12)
#define AR_DPL_SHIFT	13
#define AR_PRESENT	(1U << 15)
#define AR_AVL		(1U << 20)
#define AR_L		(1U << 21)
#define AR_DB		(1U << 22)
#define AR_G		(1U << 23)

_Static_assert(sizeof(struct pda_slot) == PDA_USER_SLOT_SIZE, "slot size");
_Static_assert(_Alignof(struct pda_slot) == PDA_USER_SLOT_SIZE, "slot align");
_Static_assert(PDA_USER_SELECTOR == 0xeb, "selector");


TEST(hwcap2)
{
	unsigned long hwcap2 = getauxval(AT_HWCAP2);

	TH_LOG("AT_HWCAP2 = %#lx", hwcap2);
	ASSERT_TRUE(hwcap2 & HWCAP2_PDA_USER_SEG);
	/*
	 * pda.h's tables have PDA_MAX_CPUS slots: it uses them if all fit.
	 * Its count of the possible CPUs is glibc's (both read sysfs).
	 */
	ASSERT_EQ(sysconf(_SC_NPROCESSORS_CONF), pda_possible_cpus());
	ASSERT_EQ(pda_possible_cpus() <= PDA_MAX_CPUS, pda_available());
}

TEST(descriptor)
{
	unsigned int ar, limit, type;

	ASSERT_TRUE(pda_verr(PDA_USER_SELECTOR));
	ASSERT_TRUE(pda_verw(PDA_USER_SELECTOR));
	ASSERT_EQ(0, pda_lar(PDA_USER_SELECTOR, &ar));
	TH_LOG("lar %#x = %#x", PDA_USER_SELECTOR, ar);
	type = ar & 0x00f0ff00;
	EXPECT_TRUE(type & AR_PRESENT);
	EXPECT_EQ(3, (type >> AR_DPL_SHIFT) & 3);
	EXPECT_TRUE(type & AR_S);		/* code/data, not system */
	EXPECT_FALSE(type & AR_CODE);		/* data */
	EXPECT_FALSE(type & AR_EXPDOWN);	/* expand-up */
	EXPECT_TRUE(type & AR_WRITABLE);
	EXPECT_TRUE(type & AR_DB);		/* 32-bit */
	EXPECT_FALSE(type & AR_L);
	EXPECT_TRUE(type & AR_G);		/* page-granular limit */
	EXPECT_FALSE(type & AR_AVL);
	EXPECT_EQ(PDA_LAR_EXPECT, type & PDA_LAR_MASK);
	ASSERT_EQ(0, pda_lsl(PDA_USER_SELECTOR, &limit));
	EXPECT_EQ(0xffffffffU, limit);
	/*
	 * The neighbours: CPUNODE (28 on an i386 kernel, 15 on an x86-64
	 * one) is still there, 30 is not ours.
	 */
	EXPECT_LE(0, pda_test_cpunode());
	EXPECT_FALSE(pda_verr(0xf3));
}

TEST(pinned_each_cpu)
{
	int cpus[CPU_SETSIZE], n, round, i, r, bad = 0, checks = 0;
	long possible = pda_possible_cpus();
	struct pda_slot *table;
	int vdso_ok;
	cpu_set_t saved;

	n = pda_test_online(cpus, CPU_SETSIZE);
	ASSERT_LT(0, n);
	ASSERT_LE(n, possible);
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(saved), &saved));
	vdso_ok = vdso_getcpu() >= 0;
	EXPECT_TRUE(vdso_ok);

	/* pda_cpu() below uses the library's table, or a fallback. */
	table = pda_test_table(possible);
	ASSERT_TRUE(table != NULL);
	ASSERT_EQ(0, pda_test_take_segment(possible));
	ASSERT_EQ(PDA_USER_SELECTOR, pda_read_seg());

	for (round = 0; round < ROUNDS; round++) {
		for (i = 0; i < n; i++) {
			int cpu = cpus[round & 1 ? n - 1 - i : i];

			ASSERT_EQ(0, pda_test_pin(cpu));
			for (r = 0; r < READS; r++) {
				int seg = pda_test_table_cpu(table);
				int sched = sched_getcpu();
				int lsl = pda_test_cpunode();
				int sys = getcpu_syscall();
				int rs = rseq_cpu_id();
				int vd = vdso_ok ? vdso_getcpu() : cpu;
				int lib = pda_cpu();

				checks++;
				if (seg == cpu && sched == cpu && lsl == cpu &&
				    sys == cpu && rs == cpu && vd == cpu &&
				    lib == cpu)
					continue;
				if (bad++ < 10)
					TH_LOG("pinned to %d: segment %d (-2: wrong base) sched_getcpu %d lsl %d getcpu %d rseq %d vdso %d pda_cpu %d",
					       cpu, seg, sched, lsl, sys, rs, vd,
					       lib);
			}
			/* The selector survived the migration and syscalls. */
			EXPECT_EQ(PDA_USER_SELECTOR, pda_read_seg());
		}
	}
	sched_setaffinity(0, sizeof(saved), &saved);
	free(table);
	TH_LOG("%d CPUs (%ld possible) x %d rounds: %d checks, %d mismatches, pda_cpu() by %s",
	       n, possible, ROUNDS, checks, bad,
	       pda_cpu_method_name(pda_cpu_method()));
	EXPECT_EQ(0, bad);
	if (possible <= PDA_MAX_CPUS) {
		EXPECT_EQ(PDA_METHOD_SEGMENT, pda_cpu_method());
	} else {
		EXPECT_NE(PDA_METHOD_SEGMENT, pda_cpu_method());
	}
}

static struct pda_slot *child_table;

static void *child_fs(void *arg)
{
	int *out = arg;

	out[0] = pda_read_seg();
	out[1] = out[0] == PDA_USER_SELECTOR ?
		 pda_test_table_cpu(child_table) : -1;
	out[2] = sched_getcpu();
	return NULL;
}

/*
 * clone() copies the registers: a thread started afterwards has %fs, and
 * reads the CPU it is pinned to (it inherits the affinity).
 */
TEST(thread_inherits_fs)
{
	long possible = pda_possible_cpus();
	int cpus[CPU_SETSIZE], n, cpu;
	pthread_t t;
	int out[3];

	n = pda_test_online(cpus, CPU_SETSIZE);
	ASSERT_LT(0, n);
	cpu = cpus[n - 1];
	child_table = pda_test_table(possible);
	ASSERT_TRUE(child_table != NULL);
	ASSERT_EQ(0, pda_test_take_segment(possible));
	ASSERT_EQ(0, pda_test_pin(cpu));
	ASSERT_EQ(0, pthread_create(&t, NULL, child_fs, out));
	ASSERT_EQ(0, pthread_join(t, NULL));
	pda_test_unpin();
	TH_LOG("pinned to %d: the thread's %%fs %#x read %d, sched_getcpu %d",
	       cpu, out[0], out[1], out[2]);
	EXPECT_EQ(PDA_USER_SELECTOR, out[0]);
	EXPECT_EQ(cpu, out[2]);
	EXPECT_EQ(cpu, out[1]);
	free(child_table);
}

/*
 * %fs held by another selector (someone else's): pda_init_thread()
 * refuses with EBUSY (ENOTSUP where the library takes no segment at all),
 * and pda_cpu() falls back, still right when pinned.
 */
TEST(fallback_when_fs_busy)
{
	int cpus[CPU_SETSIZE], n, i, r, bad = 0, method, gcc, gcc_errno;
	long possible = pda_possible_cpus();
	int32_t *cache = NULL;

	n = pda_test_online(cpus, CPU_SETSIZE);
	ASSERT_LT(0, n);
	pda_test_load_seg(USER_DS);
	ASSERT_EQ(USER_DS, pda_read_seg());
	errno = 0;
	ASSERT_EQ(-1, pda_init_thread());
	ASSERT_EQ(possible <= PDA_MAX_CPUS ? EBUSY : ENOTSUP, errno);
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, pda_test_pin(cpus[i]));
		for (r = 0; r < 20; r++) {
			int got = pda_cpu();

			if (got != cpus[i] && bad++ < 10)
				TH_LOG("pinned to %d: pda_cpu %d (%s)", cpus[i],
				       got, pda_cpu_method_name(pda_cpu_method()));
		}
	}
	method = pda_cpu_method();
	/*
	 * getcpu_cache(2) first where the kernel has it; only a kernel
	 * without it (ENOSYS) leaves rseq next.
	 */
	gcc = pda_getcpu_cache(PDA_GETCPU_CACHE_GET, &cache, 0);
	gcc_errno = errno;
	TH_LOG("fallback method: %s (getcpu_cache GET: %s)",
	       pda_cpu_method_name(method), gcc ? strerror(gcc_errno) : "ok");
	if (gcc) {
		EXPECT_EQ(ENOSYS, gcc_errno);
		EXPECT_EQ(PDA_METHOD_RSEQ, method);
	} else {
		EXPECT_EQ(PDA_METHOD_GETCPU_CACHE, method);
	}
	EXPECT_EQ(USER_DS, pda_read_seg());	/* the library left it alone */
	EXPECT_EQ(0, bad);
	pda_test_unpin();
}

/*
 * Each fallback of pda.h after getcpu_cache on its own, pinned to each
 * CPU: rseq's cpu_id and the last one, sched_getcpu(), against the getcpu
 * system call.
 */
TEST(fallbacks_each)
{
	int cpus[CPU_SETSIZE], n, i, bad = 0;

	n = pda_test_online(cpus, CPU_SETSIZE);
	ASSERT_LT(0, n);
	for (i = 0; i < n; i++) {
		int c = cpus[i], rs, sg, sys;

		ASSERT_EQ(0, pda_test_pin(c));
		rs = pda_rseq_cpu();
		sg = pda_sched_getcpu();
		sys = getcpu_syscall();
		if ((rs != c || sg != c || sys != c) && bad++ < 10)
			TH_LOG("pinned to %d: rseq %d sched_getcpu %d getcpu %d",
			       c, rs, sg, sys);
	}
	EXPECT_EQ(0, bad);
	pda_test_unpin();
}

TEST_HARNESS_MAIN
