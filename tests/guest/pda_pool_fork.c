// SPDX-License-Identifier: GPL-2.0
/*
 * A pool across fork() (tools/lib/pda/pda_pool.h): the child gets a copy,
 * as of any private memory.
 *
 * - The child sees the parent's counts, on every CPU's copy, and updates
 *   through the same method as the parent (inherited with the process's
 *   mode and, with the segment, with the selector in %fs, which it
 *   checks).
 * - Both then add, pinned to each online CPU in turn, at the same time:
 *   each one's sums are exactly its own adds on top of what was there at
 *   fork, and each CPU's copy has what was added on that CPU.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <sys/wait.h>

#include "kselftest_harness.h"

#include "lib/pool_test.h"

#define ADDS		20000

/* ADDS * @mul adds on each online CPU in turn, pinned. */
static int add_on_each_cpu(struct pda_pool *pool, uint32_t *obj,
			   const int *cpus, int n, int mul)
{
	int i, j;

	for (i = 0; i < n; i++) {
		if (pda_test_pin(cpus[i]))
			return -1;
		for (j = 0; j < ADDS * mul; j++)
			if (pda_pool_inc_u32(pool, obj, 0))
				return -1;
		if (sched_getcpu() != cpus[i])
			return -1;
	}
	pda_test_unpin();
	return 0;
}

/* Does each online CPU's copy hold @per_cpu, and the sum n * @per_cpu? */
static int counts_are(struct pda_pool *pool, uint32_t *obj,
		      const int *cpus, int n, uint32_t per_cpu)
{
	int i;

	for (i = 0; i < n; i++)
		if (*(uint32_t *)pda_pool_cpu_ptr(pool, obj, 0, cpus[i]) !=
		    per_cpu)
			return 0;
	return pda_pool_sum_u32(pool, obj, 0) == (uint32_t)(n * per_cpu);
}

TEST(child_has_a_copy)
{
	int cpus[CPU_SETSIZE], n, status, method;
	struct pda_pool *pool;
	uint32_t *obj;
	pid_t pid;

	n = pda_test_online(cpus, CPU_SETSIZE);
	ASSERT_LT(0, n);
	pool = pda_pool_create(64);
	ASSERT_TRUE(pool != NULL);
	obj = pda_pool_alloc(pool, 4, 4);
	ASSERT_TRUE(obj != NULL);
	ASSERT_EQ(0, add_on_each_cpu(pool, obj, cpus, n, 1));
	ASSERT_TRUE(counts_are(pool, obj, cpus, n, ADDS));
	method = pda_pool_method();
	TH_LOG("%d CPUs, method %s", n, pda_pool_method_name(method));

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/* Exit codes: which check failed. */
		if (!counts_are(pool, obj, cpus, n, ADDS))
			_exit(10);
		if (pda_pool_method() != method)
			_exit(11);
#if PDA_HAVE_SEGMENT
		if (method == PDA_POOL_SEGMENT &&
		    pda_read_seg() != PDA_USER_SELECTOR)
			_exit(11);
#endif
		if (add_on_each_cpu(pool, obj, cpus, n, 2))
			_exit(12);
		if (!counts_are(pool, obj, cpus, n, 3 * ADDS))
			_exit(13);
		_exit(0);
	}
	EXPECT_EQ(0, add_on_each_cpu(pool, obj, cpus, n, 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) {
		TH_LOG("child failed check %d (10: counts at fork, 11: method or selector, 12: adds, 13: its counts)",
		       WEXITSTATUS(status));
	}
	EXPECT_TRUE(counts_are(pool, obj, cpus, n, 2 * ADDS));
	pda_pool_destroy(pool);
}

TEST_HARNESS_MAIN
