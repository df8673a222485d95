/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers of the pda_pool_* guest tests: what tools/lib/pda/
 * pda_pool.h's layout promises, checked from outside.  Header only; wants
 * _GNU_SOURCE before the first #include, like pda_test.h.
 */
#ifndef PDA_TESTS_POOL_TEST_H
#define PDA_TESTS_POOL_TEST_H

#include "pda_test.h"
#include "../../../tools/lib/pda/pda_pool.h"

/*
 * glibc registered rseq for this process: its own word, not the pool's
 * test of it.  0 under GLIBC_TUNABLES=glibc.pthread.rseq=0.
 */
static inline int pool_test_have_rseq(void)
{
	return __rseq_size != 0;
}

/*
 * The method the pool must take here: the segment wherever pda.h takes
 * it (the kernel has the descriptor and at most PDA_MAX_CPUS possible
 * CPUs; the process's first thread has a free %fs, as every test's does),
 * else rseq where glibc registered it, else atomics.
 */
static inline int pool_test_expected_method(void)
{
	if (pda_available())
		return PDA_POOL_SEGMENT;
	return pool_test_have_rseq() ? PDA_POOL_RSEQ : PDA_POOL_ATOMIC;
}

/* Whose line the pool byte at @addr is in: a CPU, or -1 if outside. */
static inline int pool_test_line_owner(const struct pda_pool *pool,
				       const void *addr)
{
	uintptr_t p = (uintptr_t)addr, base = (uintptr_t)pool->base;

	if (p < base || p - base >= pool->map_size)
		return -1;
	return (p - base) % pool->stride / PDA_POOL_LINE;
}

/*
 * Does every byte of CPU @cpu's copy of the @size-byte object @obj lie in
 * CPU @cpu's lines, and does each next byte follow the one before in the
 * line space (contiguous within a line, the next row's line after it)?
 */
static inline int pool_test_copy_in_lines(struct pda_pool *pool, void *obj,
					  size_t size, int cpu)
{
	unsigned char *prev = NULL, *b;
	size_t k;

	for (k = 0; k < size; k++) {
		b = pda_pool_cpu_ptr(pool, obj, k, cpu);
		if (pool_test_line_owner(pool, b) != cpu)
			return 0;
		if (prev && b != prev + 1 &&
		    b != prev + 1 - PDA_POOL_LINE + pool->stride)
			return 0;
		prev = b;
	}
	return 1;
}

#endif /* PDA_TESTS_POOL_TEST_H */
