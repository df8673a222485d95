// SPDX-License-Identifier: GPL-2.0
/*
 * pool.*: one update of a per-CPU object of tools/lib/pda/pda_pool.h, a
 * struct of 1, 16 or 256 32-bit counters, adding 1 to every counter,
 * five ways, one thread pinned to the --cpu CPU.  The 256-counter
 * struct spans 16 lines, whose copies lie a stride apart: its update is
 * 16 pieces of 16 adds.  Reported per update (all N counters).
 *
 *  pool.seg.N      the pool's raw add, one "addl $1, %fs:disp(%reg)"
 *                  per counter (x86-64: %gs)
 *  pool.checked.N  pda_pool_inc_u32(), which tests the process's mode
 *                  first: the segment where the kernel has it, else a
 *                  locked add on the copy of the CPU pda_cpu() names (the
 *                  note says which)
 *  pool.rseq.N     an rseq critical section per counter on the same
 *                  copies (incr.h's): read cpu_id, add to that CPU's
 *                  copy, commit with the store
 *  pool.shared.N   a lock xadd per counter of one struct for everybody
 *  pool.thread.N   a plain add per counter of a per-thread struct: the
 *                  floor, which only a sum over every thread can read
 *
 * Every row keeps count and checks the sum of every counter at the end.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include "incr.h"
#include "../lib/pda/pda_pool.h"

enum { K_SEG, K_CHECKED, K_RSEQ, K_SHARED, K_THREAD };

#define LINE_WORDS	(PDA_POOL_LINE / 4)
#define MAX_COUNTERS	256

static struct pda_pool *pool;
static uint32_t *obj;			/* CPU 0's copy: the handle */
static struct sb_slot shared[MAX_COUNTERS / LINE_WORDS];
static __thread struct sb_slot mine[MAX_COUNTERS / LINE_WORDS];
static unsigned long expected;
static unsigned long aborts;

/* The counters of line @l of object @o: CPU 0's copy. */
static inline uint32_t *line_of(uint32_t *o, size_t stride, unsigned int l)
{
	return (uint32_t *)((unsigned char *)o + l * stride);
}

static int setup_pool(const struct bench *b, char *why)
{
	int state = 0;

	switch (b->arg) {
	case K_SEG:
		state = sb_method_probe(M_PDA, why);
		if (state < 0)
			return -1;
		break;
	case K_RSEQ:
		if (sb_method_probe(M_RSEQ, why))
			return -1;
		break;
	}
	if (!pool) {
		pool = pda_pool_create(MAX_COUNTERS * 4);
		obj = pool ? pda_pool_alloc(pool, MAX_COUNTERS * 4, 64) : NULL;
		if (!obj) {
			snprintf(why, SB_REASON_LEN, "no pool: %s",
				 strerror(errno));
			return -1;
		}
	}
	memset(pool->base, 0, pool->map_size);
	memset(shared, 0, sizeof(shared));
	memset(mine, 0, sizeof(mine));
	expected = 0;
	aborts = 0;
	if (b->arg == K_SEG && state > 0)
		snprintf(why, SB_REASON_LEN, "%s", sb_pda_emulation());
	if (b->arg == K_CHECKED)
		snprintf(why, SB_REASON_LEN, "pool method: %s",
			 pda_pool_method_name(pda_pool_method()));
	return state;
}

static inline void thread_inc(volatile int32_t *p)
{
	__asm__ __volatile__ ("" : : : "memory");
	(*p)++;
}

/* Word @w of line @l, each way; p is CPU 0's copy of the line. */
static inline __attribute__((always_inline)) void
inc_one(int kind, uint32_t *o, uint32_t *p, unsigned int l, unsigned int w)
{
	switch (kind) {
#if PDA_HAVE_SEGMENT
	case K_SEG:
		pda_pool_add_u32_raw(p + w, 1);
		break;
#endif
	case K_CHECKED:
		pda_pool_inc_u32(pool, o, (l * LINE_WORDS + w) * 4);
		break;
	case K_RSEQ:
		/* An abort (preempted inside the section) retries. */
		while (inc_rseq((struct sb_slot *)(p + w)))
			aborts++;
		break;
	case K_SHARED:
		inc_atomic(&shared[l].v[w]);
		break;
	case K_THREAD:
		thread_inc(&mine[l].v[w]);
		break;
	}
}

/* The 16 counters of line @l: constant offsets from one register. */
#define LINE_INCS(kind, o, l)						\
	do {								\
		uint32_t *p = line_of(o, stride, l);			\
		unsigned int w;						\
									\
		_Pragma("GCC unroll 16")				\
		for (w = 0; w < LINE_WORDS; w++)			\
			inc_one(kind, o, p, l, w);			\
	} while (0)

/*
 * @n updates of @counters counters, one way: always inlined into the
 * switch below, so that @kind and @counters are constants and each
 * counter's add is its own instruction(s), not a dispatch.
 */
static inline __attribute__((always_inline)) void
run_kind(int kind, unsigned int counters, unsigned long n)
{
	/* In registers: the adds' "memory" clobbers would reload them. */
	uint32_t *o = obj;
	size_t stride = pool->stride;
	unsigned int l;

	if (counters == 1)
		SB_LOOP(n, inc_one(kind, o, o, 0, 0));
	else
		SB_LOOP(n, for (l = 0; l < counters / LINE_WORDS; l++)
				   LINE_INCS(kind, o, l));
}

#define RUN_KIND(k)							\
	case k:								\
		if (counters == 1)					\
			run_kind(k, 1, n);				\
		else if (counters == 16)				\
			run_kind(k, 16, n);				\
		else							\
			run_kind(k, 256, n);				\
		break

static void run_pool(const struct bench *b, unsigned long n)
{
	unsigned int counters = b->arg2;

	switch (b->arg) {
#if PDA_HAVE_SEGMENT
	RUN_KIND(K_SEG);
#endif
	RUN_KIND(K_CHECKED);
	RUN_KIND(K_RSEQ);
	RUN_KIND(K_SHARED);
	RUN_KIND(K_THREAD);
	}
	expected += n;
}

static int verify_pool(const struct bench *b, char *why)
{
	unsigned int counters = b->arg2, i, bad = 0;
	unsigned long sum;

	for (i = 0; i < counters; i++) {
		if (b->arg == K_SHARED)
			sum = (uint32_t)shared[i / LINE_WORDS].v[i % LINE_WORDS];
		else if (b->arg == K_THREAD)
			sum = (uint32_t)mine[i / LINE_WORDS].v[i % LINE_WORDS];
		else
			sum = pda_pool_sum_u32(pool, obj, i * 4);
		bad += (uint32_t)sum != (uint32_t)expected;
	}
	if (bad) {
		snprintf(why, SB_REASON_LEN, "%u of %u counters not %lu",
			 bad, counters, expected);
		return -1;
	}
	if (b->arg == K_RSEQ)
		snprintf(why, SB_REASON_LEN, "%lu rseq aborts", aborts);
	return 0;
}

#define POOL(kn, k, c, d)						\
	{ .name = "pool." kn "." #c, .group = "percpu-pool",		\
	  .desc = d ", struct of " #c " counters", .ops = 1,		\
	  .flags = BF_COUNTED, .arg = k, .arg2 = c,			\
	  .setup = setup_pool, .run = run_pool, .verify = verify_pool }

#define POOL3(kn, k, d)							\
	POOL(kn, k, 1, d), POOL(kn, k, 16, d), POOL(kn, k, 256, d)

const struct bench sb_pool_benches[] = {
#if PDA_HAVE_SEGMENT
	POOL3("seg", K_SEG, "pool raw add through the segment"),
#endif
	POOL3("checked", K_CHECKED, "pda_pool_inc_u32()"),
	POOL3("rseq", K_RSEQ, "rseq critical section add per counter"),
	POOL3("shared", K_SHARED, "lock xadd on one shared struct"),
	POOL3("thread", K_THREAD, "plain add on a per-thread struct"),
	{ }
};
