// SPDX-License-Identifier: GPL-2.0
/*
 * Baseline: what mainline 6.12 already tells user space about the CPU it
 * runs on must be right, and must stay right once the PDA series lands.
 *
 * - The guest sees the CPUs the harness gave it (pda.cpus=N on the kernel
 *   command line).
 * - Pinned to each online CPU in turn, every CPU-number method of
 *   lib/cpu_methods.h (sched_getcpu, the getcpu syscall, rseq cpu_id and,
 *   on x86, lsl of the CPUNODE selector and __vdso_getcpu) returns that
 *   CPU.  The CPUs are visited forwards and backwards, so every method is
 *   also seen to follow a migration in both directions.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "lib/cmdline.h"
#include "lib/cpu_methods.h"
#include "lib/cpulist.h"

#define ONLINE_PATH	"/sys/devices/system/cpu/online"
/* Reads per method per visit: enough to catch a stale or flapping value. */
#define READS		50
/* Visits of each CPU, alternating forward and backward order. */
#define ROUNDS		4

TEST(cpu_count)
{
	long expected = cmdline_get_long("pda.cpus");
	cpu_set_t online, affinity;
	long nproc;

	if (expected < 0)
		SKIP(return, "no pda.cpus=N on the kernel command line");

	nproc = sysconf(_SC_NPROCESSORS_ONLN);
	EXPECT_EQ(expected, nproc);

	ASSERT_EQ(0, cpulist_read(ONLINE_PATH, &online)) {
		TH_LOG("cannot read %s: %s", ONLINE_PATH, strerror(errno));
	}
	EXPECT_EQ(expected, CPU_COUNT(&online));

	/* PID 1 runs with every CPU allowed; so do its tests. */
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(affinity), &affinity));
	EXPECT_EQ(expected, CPU_COUNT(&affinity));
}

/*
 * Every method must work.  None is optional on the kernels we test: rseq
 * is in every config fragment and glibc registers it for every thread;
 * the CPUNODE entry and the vDSO are unconditional on x86-32.  A missing
 * one is a regression, not a reason to skip.
 */
TEST(methods_available)
{
	char why[256];
	size_t i;

	for (i = 0; i < NR_CPU_METHODS; i++) {
		const char *err = cpu_method_probe(&cpu_methods[i], why,
						   sizeof(why));

		if (err)
			TH_LOG("%s: %s", cpu_methods[i].name, err);
		else
			TH_LOG("%s: cpu %d", cpu_methods[i].name,
			       cpu_methods[i].read());
		EXPECT_TRUE(!err);
	}
}

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

TEST(pinned_agree)
{
	int cpus[CPU_SETSIZE], ncpus = 0, round, i, r, mismatches = 0;
	int seen[NR_CPU_METHODS] = { 0 };
	cpu_set_t online, saved;
	size_t m;

	ASSERT_EQ(0, cpulist_read(ONLINE_PATH, &online)) {
		TH_LOG("cannot read %s: %s", ONLINE_PATH, strerror(errno));
	}
	for (i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &online))
			cpus[ncpus++] = i;
	ASSERT_LT(0, ncpus);
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(saved), &saved));

	for (round = 0; round < ROUNDS; round++) {
		for (i = 0; i < ncpus; i++) {
			int cpu = cpus[round & 1 ? ncpus - 1 - i : i];

			/*
			 * sched_setaffinity() on ourselves returns only once
			 * we run on an allowed CPU, so from here on every
			 * method must say @cpu.
			 */
			ASSERT_EQ(0, pin(cpu)) {
				TH_LOG("pin to cpu %d: %s", cpu, strerror(errno));
			}
			for (r = 0; r < READS; r++) {
				for (m = 0; m < NR_CPU_METHODS; m++) {
					int got = cpu_methods[m].read();

					if (got == cpu) {
						seen[m]++;
						continue;
					}
					if (mismatches++ < 20)
						TH_LOG("pinned to cpu %d, read %d: %s says %d",
						       cpu, r, cpu_methods[m].name,
						       got);
				}
			}
		}
	}
	sched_setaffinity(0, sizeof(saved), &saved);

	for (m = 0; m < NR_CPU_METHODS; m++)
		TH_LOG("%-12s %d/%d reads right", cpu_methods[m].name, seen[m],
		       ROUNDS * ncpus * READS);
	EXPECT_EQ(0, mismatches);
}

TEST_HARNESS_MAIN
