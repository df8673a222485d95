// SPDX-License-Identifier: GPL-2.0
/*
 * Bad input to the pool (tools/lib/pda/pda_pool.h) gets a clear error and
 * changes nothing:
 *
 * - a pool of 0 bytes: EINVAL; one whose rows take more than half the
 *   address space: ENOMEM; on 64-bit, one of half of it, which mmap()
 *   refuses: ENOMEM; no mapping is left behind;
 * - an object of 0 bytes, an alignment that is not a power of two, or
 *   above 64 (a line: a copy is not contiguous beyond it): EINVAL;
 * - an object larger than the pool: ENOMEM;
 * - freeing a pointer that is no object of this pool (another pool's, a
 *   stack address, another CPU's copy): EINVAL;
 * - after all of it the pool still allocates, and an object made before
 *   keeps its value.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>

#include "kselftest_harness.h"

#include "lib/pool_test.h"

/* Lines of /proc/self/maps: a failed create must not add one. */
static int nr_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0, ch;

	if (!f)
		return -1;
	while ((ch = fgetc(f)) != EOF)
		n += ch == '\n';
	fclose(f);
	return n;
}

#define EXPECT_FAIL(call, err)						\
	do {								\
		errno = 0;						\
		EXPECT_TRUE(!(call)) {					\
			TH_LOG("%s succeeded", #call);			\
		}							\
		EXPECT_EQ(err, errno) {					\
			TH_LOG("%s: %s", #call, strerror(errno));	\
		}							\
	} while (0)

TEST(bad_pools)
{
	long cpus = pda_possible_cpus();
	int maps = nr_maps();
	size_t half;

	ASSERT_LT(0, maps);
	ASSERT_LT(0, cpus);
	/* The line space whose rows take half the address space. */
	half = SIZE_MAX / 2 / ((size_t)cpus * PDA_POOL_LINE) * PDA_POOL_LINE;
	EXPECT_FAIL(pda_pool_create(0), EINVAL);
	EXPECT_FAIL(pda_pool_create(SIZE_MAX), ENOMEM);
	EXPECT_FAIL(pda_pool_create(half + 1), ENOMEM);
	/*
	 * Half of a 64-bit address space is more than any user space has,
	 * so mmap() refuses it.  (Half of a 32-bit one may be there.)
	 */
	if (sizeof(size_t) == 8)
		EXPECT_FAIL(pda_pool_create(half), ENOMEM);
	EXPECT_EQ(maps, nr_maps());
}

TEST(bad_objects)
{
	struct pda_pool *pool = pda_pool_create(1024), *other;
	void *other_obj;
	uint32_t *keep;
	int on_stack;

	ASSERT_TRUE(pool != NULL);
	other = pda_pool_create(1024);
	ASSERT_TRUE(other != NULL);
	keep = pda_pool_alloc(pool, 4, 4);
	ASSERT_TRUE(keep != NULL);
	ASSERT_EQ(0, pda_pool_store_u32(pool, keep, 0, 0x600d));

	EXPECT_FAIL(pda_pool_alloc(pool, 0, 1), EINVAL);
	EXPECT_FAIL(pda_pool_alloc(pool, 8, 3), EINVAL);
	EXPECT_FAIL(pda_pool_alloc(pool, 8, 12), EINVAL);
	EXPECT_FAIL(pda_pool_alloc(pool, 8, 128), EINVAL);
	EXPECT_FAIL(pda_pool_alloc(pool, 8, SIZE_MAX), EINVAL);
	EXPECT_FAIL(pda_pool_alloc(pool, 1025, 1), ENOMEM);
	EXPECT_FAIL(pda_pool_alloc(pool, SIZE_MAX, 1), ENOMEM);

	other_obj = pda_pool_alloc(other, 4, 4);
	ASSERT_TRUE(other_obj != NULL);
	EXPECT_FAIL(!pda_pool_free(pool, other_obj), EINVAL);
	EXPECT_FAIL(!pda_pool_free(pool, &on_stack), EINVAL);
	if (pda_pool_cpus(pool) > 1)
		EXPECT_FAIL(!pda_pool_free(pool, pda_pool_cpu_ptr(pool, keep,
								  0, 1)),
			    EINVAL);

	/* Nothing above changed the pool: the rest of it is free. */
	EXPECT_TRUE(pda_pool_alloc(pool, 60, 4) != NULL);
	EXPECT_TRUE(pda_pool_alloc(pool, 1024 - 64, 64) != NULL);
	EXPECT_TRUE(pda_pool_alloc(pool, 1, 1) == NULL);
	EXPECT_EQ(0x600d, pda_pool_load_u32(pool, keep, 0));
	pda_pool_destroy(other);
	pda_pool_destroy(pool);
}

TEST_HARNESS_MAIN
