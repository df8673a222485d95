// SPDX-License-Identifier: GPL-2.0
/*
 * The pool's layout holds for objects of every size
 * (tools/lib/pda/pda_pool.h): 3000 objects from 1 byte to 4097 bytes, at
 * every alignment from 1 to 64, in one pool, and one of 64 KiB in a pool
 * of its own (which it fills), and
 *
 * - every byte of CPU c's copy of every object lies in CPU c's lines,
 *   one after the other in its line space;
 * - the handle has the alignment asked for, and so has each CPU's copy;
 * - no two objects share a byte: each CPU's copy of each object is
 *   filled with a pattern of its own, and every pattern reads back;
 * - a new object is zero on every CPU;
 * - through the accessors, pinned to each online CPU, a store to each
 *   word of a 64 KiB object lands in that CPU's copy of that word.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>

#include "kselftest_harness.h"

#include "lib/pool_test.h"

#define NR_OBJS		3000
#define BIG		(64 * 1024)

/* Sizes the objects cycle through; the first three once only. */
static const size_t sizes[] = {
	4097, 4096, 1000,
	1, 2, 3, 4, 7, 8, 12, 15, 16, 24, 31, 32, 33, 48, 63, 64, 65, 100,
	127, 128, 200, 255, 256,
};

#define NR_SIZES	(sizeof(sizes) / sizeof(sizes[0]))

struct obj {
	unsigned char *h;
	size_t size;
	size_t align;
};

static unsigned char pattern(int i, int cpu, size_t k)
{
	return (unsigned char)(i * 31 + cpu * 7 + k + 1);
}

TEST(sizes_alignments_patterns)
{
	static struct obj objs[NR_OBJS];
	struct pda_pool *pool;
	size_t k, total = 0;
	int i, c, bad = 0, zero_bad = 0, nr = NR_OBJS;

	if (pda_test_bochs())
		nr /= 10;
	pool = pda_pool_create(512 * 1024);
	ASSERT_TRUE(pool != NULL);
	for (i = 0; i < nr; i++) {
		objs[i].size = sizes[i < 3 ? i : 3 + (i - 3) % (NR_SIZES - 3)];
		objs[i].align = (size_t)1 << (i / 7 % 7);	/* 1 .. 64 */
		objs[i].h = pda_pool_alloc(pool, objs[i].size, objs[i].align);
		ASSERT_TRUE(objs[i].h != NULL) {
			TH_LOG("object %d (%zu bytes, align %zu): %s", i,
			       objs[i].size, objs[i].align, strerror(errno));
		}
		total += objs[i].size;
	}
	TH_LOG("%d objects, %zu bytes each CPU, %d possible CPUs", nr,
	       total, pda_pool_cpus(pool));

	for (i = 0; i < nr; i++) {
		for (c = 0; c < pda_pool_cpus(pool); c++) {
			unsigned char *copy = pda_pool_cpu_ptr(pool, objs[i].h,
								0, c);

			bad += !pool_test_copy_in_lines(pool, objs[i].h,
							objs[i].size, c);
			bad += (uintptr_t)copy % objs[i].align != 0;
			for (k = 0; k < objs[i].size; k++) {
				unsigned char *b = pda_pool_cpu_ptr(pool,
						objs[i].h, k, c);

				zero_bad += *b != 0;
				*b = pattern(i, c, k);
			}
		}
		bad += (uintptr_t)objs[i].h % objs[i].align != 0;
	}
	EXPECT_EQ(0, bad);
	EXPECT_EQ(0, zero_bad);

	bad = 0;
	for (i = 0; i < nr; i++)
		for (c = 0; c < pda_pool_cpus(pool); c++)
			for (k = 0; k < objs[i].size; k++)
				bad += *(unsigned char *)pda_pool_cpu_ptr(pool,
					objs[i].h, k, c) != pattern(i, c, k);
	EXPECT_EQ(0, bad) {
		TH_LOG("%d bytes overwritten by another object", bad);
	}
	pda_pool_destroy(pool);
}

TEST(big_object_each_word_each_cpu)
{
	int cpus[CPU_SETSIZE], n, i, c, bad = 0;
	struct pda_pool *pool;
	uint32_t *big;
	size_t k;

	n = pda_test_online(cpus, CPU_SETSIZE);
	ASSERT_LT(0, n);
	pool = pda_pool_create(BIG);
	ASSERT_TRUE(pool != NULL);
	big = pda_pool_alloc(pool, BIG, 64);
	ASSERT_TRUE(big != NULL);
	EXPECT_TRUE(pda_pool_alloc(pool, 1, 1) == NULL);  /* it is full */
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, pda_test_pin(cpus[i]));
		ASSERT_EQ(cpus[i], sched_getcpu());
		for (k = 0; k < BIG; k += 4)
			ASSERT_EQ(0, pda_pool_store_u32(pool, big, k,
					(uint32_t)(cpus[i] << 16 | k / 4)));
		ASSERT_EQ(cpus[i], sched_getcpu());
	}
	pda_test_unpin();
	for (i = 0; i < n; i++)
		for (k = 0; k < BIG; k += 4)
			bad += *(uint32_t *)pda_pool_cpu_ptr(pool, big, k,
							     cpus[i]) !=
			       (uint32_t)(cpus[i] << 16 | k / 4);
	EXPECT_EQ(0, bad);
	/* CPUs not online: none of those stores reached them. */
	for (c = 0; c < pda_pool_cpus(pool); c++) {
		for (i = 0; i < n && cpus[i] != c; i++)
			;
		if (i < n)
			continue;
		for (k = 0; k < BIG; k += 4)
			bad += *(uint32_t *)pda_pool_cpu_ptr(pool, big, k, c)
			       != 0;
	}
	EXPECT_EQ(0, bad);
	pda_pool_destroy(pool);
}

TEST_HARNESS_MAIN
