// SPDX-License-Identifier: GPL-2.0
/*
 * Freeing and reusing pool objects (tools/lib/pda/pda_pool.h):
 *
 * - a pool filled to the last byte refuses one more object (ENOMEM);
 * - after every other object is freed, objects of the same sizes fit
 *   again, each in a range freed before, zero on every CPU although the
 *   old objects' copies were written, and with every CPU's copy still in
 *   that CPU's own lines: reuse never hands one CPU's line to another;
 * - the objects left alone keep their contents through it all;
 * - freeing twice, or a pointer inside an object, is refused (EINVAL)
 *   and changes nothing;
 * - once all are freed, the free ranges merge: one object the size of
 *   the whole pool fits.
 */
#define _GNU_SOURCE
#include <errno.h>

#include "kselftest_harness.h"

#include "lib/pool_test.h"

#define POOL_SIZE	(16 * 1024)
#define MAX_OBJS	(POOL_SIZE / 8)

struct obj {
	unsigned char *h;
	size_t size;
};

static void fill(struct pda_pool *pool, struct obj *o, unsigned char v)
{
	size_t k;
	int c;

	for (c = 0; c < pda_pool_cpus(pool); c++)
		for (k = 0; k < o->size; k++)
			*(unsigned char *)pda_pool_cpu_ptr(pool, o->h, k, c) =
				(unsigned char)(v + c);
}

/* Bytes of @o not as fill(@v) left them (@v 0: not zero). */
static size_t differ(struct pda_pool *pool, struct obj *o, unsigned char v)
{
	size_t k, bad = 0;
	int c;

	for (c = 0; c < pda_pool_cpus(pool); c++)
		for (k = 0; k < o->size; k++)
			bad += *(unsigned char *)pda_pool_cpu_ptr(pool, o->h,
								  k, c) !=
			       (v ? (unsigned char)(v + c) : 0);
	return bad;
}

TEST(free_reuse_merge)
{
	static struct obj objs[MAX_OBJS];
	size_t bad = 0, used = 0;
	struct pda_pool *pool;
	int i, n = 0, c;
	void *again;

	pool = pda_pool_create(POOL_SIZE);
	ASSERT_TRUE(pool != NULL);
	/*
	 * 8, 24 and 40 bytes, 8-aligned, the last of each line cut to what
	 * the line has left: they fill the pool exactly.
	 */
	while (used + 8 <= POOL_SIZE && n < MAX_OBJS) {
		objs[n].size = 8 + 16 * (n % 3);
		if (used / 64 != (used + objs[n].size - 1) / 64)
			objs[n].size = 64 - used % 64;
		objs[n].h = pda_pool_alloc(pool, objs[n].size, 8);
		ASSERT_TRUE(objs[n].h != NULL) {
			TH_LOG("object %d at %zu of %d: %s", n, used,
			       POOL_SIZE, strerror(errno));
		}
		fill(pool, &objs[n], (unsigned char)(n | 1));
		used += objs[n].size;
		n++;
	}
	ASSERT_EQ((size_t)POOL_SIZE, used);
	errno = 0;
	ASSERT_TRUE(pda_pool_alloc(pool, 1, 1) == NULL);
	ASSERT_EQ(ENOMEM, errno);
	TH_LOG("%d objects fill %d bytes on each of %d CPUs", n, POOL_SIZE,
	       pda_pool_cpus(pool));

	for (i = 0; i < n; i += 2)
		ASSERT_EQ(0, pda_pool_free(pool, objs[i].h));
	errno = 0;
	EXPECT_EQ(-1, pda_pool_free(pool, objs[0].h));	/* twice */
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(-1, pda_pool_free(pool, objs[1].h + 1));	/* inside */
	EXPECT_EQ(EINVAL, errno);

	for (i = 0; i < n; i += 2) {
		void *old = objs[i].h;

		objs[i].h = pda_pool_alloc(pool, objs[i].size, 8);
		ASSERT_TRUE(objs[i].h != NULL);
		/* First fit in a pool that was full: the same range. */
		EXPECT_TRUE(objs[i].h == old);
		bad += differ(pool, &objs[i], 0);
		for (c = 0; c < pda_pool_cpus(pool); c++)
			bad += !pool_test_copy_in_lines(pool, objs[i].h,
							objs[i].size, c);
	}
	EXPECT_EQ(0, bad);
	for (i = 1; i < n; i += 2)
		bad += differ(pool, &objs[i], (unsigned char)(i | 1));
	EXPECT_EQ(0, bad) {
		TH_LOG("%zu bytes of objects never freed changed", bad);
	}

	for (i = 0; i < n; i++)
		ASSERT_EQ(0, pda_pool_free(pool, objs[i].h));
	again = pda_pool_alloc(pool, POOL_SIZE, 64);
	ASSERT_TRUE(again != NULL);
	EXPECT_TRUE(again == objs[0].h);
	objs[0] = (struct obj){ again, POOL_SIZE };
	EXPECT_EQ(0, differ(pool, &objs[0], 0));
	EXPECT_EQ(0, pda_pool_free(pool, again));
	EXPECT_EQ(0, pda_pool_free(pool, NULL));
	pda_pool_destroy(pool);
}

TEST_HARNESS_MAIN
