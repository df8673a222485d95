// SPDX-License-Identifier: GPL-2.0
/*
 * pool_bench: make bench's per-CPU pool part (scripts/harness/poolbench.py).
 *
 * One update of a per-CPU object of tools/lib/pda/pda_pool.h, a struct of
 * 1, 16 or 256 32-bit counters, adding 1 to every counter, five ways, in
 * one thread pinned to CPU 0:
 *
 *	seg.N		the pool's raw add: one "addl $1, %fs:disp(%reg)"
 *			per counter (%gs in 64-bit programs), the thread's
 *			path tested once before the loop; x86 with the
 *			segment only
 *	tested.N	pda_pool_path() tested once per update, as
 *			pda_pool.h advises for many fields at once, then
 *			the raw add per counter (the segment) or, where the
 *			path is rseq (ARM, arm64), pda_rseq_add_u32() per
 *			counter on the struct rseq looked up once
 *	checked.N	pda_pool_inc_u32() per counter: the path tested each
 *			time, then the segment or an rseq section
 *	rseq.N		pda_rseq_add_u32() per counter on the same copies,
 *			the struct rseq known: rseq's own cost
 *	shared.N	an atomic add per counter of one struct for everybody
 *	thread.N	a plain (volatile) add per counter of a per-thread
 *			struct: the floor in cycles, though under -icount a
 *			load, add and store count 3 and a locked add 1
 *
 * Booted under "qemu -icount shift=0" ("pda.icount" on the kernel command
 * line) the clock counts instructions (pda_bench.c says how), so each
 * figure is instructions per update: (the loop with the adds - the same
 * loop of updates with nothing in them, 2 instructions each) / iterations,
 * REPS times after a warm-up, so an update's own loop over its lines and
 * their address arithmetic count as the update's.  Every row checks that
 * each counter holds exactly its adds, in CPU 0's copy (the thread is
 * pinned there), and that no other copy or counter moved.
 *
 * Output, parsed by the harness:
 *
 *	pool-bench: OP min=X median=Y reps=R iters=N unit=insns|tsc|ns
 *	pool-bench: OP n/a REASON
 *	pool-bench: OP FAILED WHY		(setup FAILED: before any row)
 *	pool-bench: info KEY=VALUE		(the last: done=1)
 *
 * The info lines: the pool's method, possible CPUs, and mem.N, the bytes
 * of pool memory one object takes over all CPUs (measured: the line space
 * 1000 objects of a fresh pool take, times the CPUs).  Exit 0, or 1 if a
 * row's counters came out wrong or a pool could not be made.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../guest/lib/clock.h"
#include "../guest/lib/cmdline.h"
#include "../../tools/lib/pda/pda_pool.h"

#define REPS		7
#define ITERS		2000
#define LINE_WORDS	(PDA_POOL_LINE / 4)
#define MAX_COUNTERS	256
#define MEM_OBJECTS	1000

enum kind {
	K_NONE, K_SEG, K_TESTED, K_CHECKED, K_RSEQ, K_SHARED, K_THREAD
};

static const char * const kind_name[] = {
	[K_SEG] = "seg", [K_TESTED] = "tested", [K_CHECKED] = "checked",
	[K_RSEQ] = "rseq", [K_SHARED] = "shared", [K_THREAD] = "thread",
};

/*
 * What the loops use, passed by value so that it stays in registers: the
 * adds' "memory" clobbers would make the compiler reload globals.
 */
struct ctx {
	struct pda_pool *pool;
	uint32_t *obj;
	size_t stride;
	struct rseq *rs;
};

static const char *unit = "insns";
static struct pda_pool *pool;
static uint32_t *obj;
static struct rseq *rs;
static uint32_t shared[MAX_COUNTERS] __attribute__((aligned(64)));
static __thread uint32_t mine[MAX_COUNTERS] __attribute__((aligned(64)));
static unsigned long aborts;
static int failed;

/*
 * Counter @w of line @l, each way; @p is CPU 0's copy of line @l.
 * K_TESTED, after its test, takes K_SEG's or K_RSEQ's.
 */
static inline __attribute__((always_inline)) void
inc_one(enum kind kind, struct ctx c, uint32_t *p, unsigned int l,
	unsigned int w)
{
	switch (kind) {
	case K_NONE:
		break;
#if PDA_HAVE_SEGMENT
	case K_SEG:
		pda_pool_add_u32_raw(p + w, 1);
		break;
#endif
	case K_CHECKED:
		pda_pool_inc_u32(c.pool, c.obj, (l * LINE_WORDS + w) * 4);
		break;
#if PDA_HAVE_RSEQ_SECTIONS
	case K_RSEQ:
		while (pda_rseq_add_u32(c.rs, p + w, 1))
			aborts++;
		break;
#endif
	case K_SHARED:
		__atomic_fetch_add(&shared[l * LINE_WORDS + w], 1,
				   __ATOMIC_RELAXED);
		break;
	case K_THREAD:
		/* volatile: a load, an add and a store each, never merged. */
		(*(volatile uint32_t *)&mine[l * LINE_WORDS + w])++;
		break;
	default:
		break;
	}
}

/* One update, @kind's way, of @counters counters. */
static inline __attribute__((always_inline)) void
update(enum kind kind, struct ctx c, unsigned int counters)
{
	unsigned int per_line = counters < LINE_WORDS ? counters : LINE_WORDS;
	unsigned int l, w;

	for (l = 0; l * LINE_WORDS < counters; l++) {
		uint32_t *p = (uint32_t *)((unsigned char *)c.obj +
					   l * c.stride);

		_Pragma("GCC unroll 16")
		for (w = 0; w < per_line; w++)
			inc_one(kind, c, p, l, w);
	}
}

/*
 * @n updates of @counters counters: always inlined with constants, so
 * each add is its own code, not a dispatch.
 */
static inline __attribute__((always_inline)) void
run(enum kind kind, struct ctx c, unsigned int counters, unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++) {
		/* Keeps the empty loop (K_NONE), as every loop has it. */
		__asm__ __volatile__ ("" : : : "memory");
		if (kind != K_TESTED) {
			update(kind, c, counters);
			continue;
		}
		/* The pool's own advice: test once, then the path's adds. */
		switch (pda_pool_path()) {
#if PDA_HAVE_SEGMENT
		case PDA_POOL_SEGMENT:
			update(K_SEG, c, counters);
			break;
#endif
#if PDA_HAVE_RSEQ_SECTIONS
		case PDA_POOL_RSEQ:
			c.rs = pda_rseq_area_raw();
			update(K_RSEQ, c, counters);
			break;
#endif
		default:
			failed = 1;
			return;
		}
	}
}

#define RUN_COUNTERS(k)							\
	case k:								\
		if (counters == 1)					\
			run(k, c, 1, n);				\
		else if (counters == 16)				\
			run(k, c, 16, n);				\
		else							\
			run(k, c, 256, n);				\
		break

static void __attribute__((noinline))
run_kind(enum kind kind, unsigned int counters, unsigned long n)
{
	struct ctx c = { pool, obj, pool->stride, rs };

	switch (kind) {
	RUN_COUNTERS(K_NONE);
#if PDA_HAVE_SEGMENT
	RUN_COUNTERS(K_SEG);
#endif
	RUN_COUNTERS(K_TESTED);
	RUN_COUNTERS(K_CHECKED);
	RUN_COUNTERS(K_RSEQ);
	RUN_COUNTERS(K_SHARED);
	RUN_COUNTERS(K_THREAD);
	default:
		break;
	}
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static void reset(void)
{
	memset(pool->base, 0, pool->map_size);
	memset(shared, 0, sizeof(shared));
	memset(mine, 0, sizeof(mine));
}

/* Each of the @counters counters sums to @want, each way. */
/*
 * Each of the @counters counters is @want, and the others 0: for the pool,
 * in CPU 0's copy, where the thread is pinned, and 0 in every other.
 */
static int exact(enum kind kind, unsigned int counters, uint32_t want)
{
	unsigned int i;
	int cpu;

	for (i = 0; i < MAX_COUNTERS; i++) {
		uint32_t v = i < counters ? want : 0;

		if (kind == K_SHARED || kind == K_THREAD) {
			if ((kind == K_SHARED ? shared[i] : mine[i]) != v)
				return 0;
			continue;
		}
		for (cpu = 0; cpu < pda_pool_cpus(pool); cpu++)
			if (*(uint32_t *)pda_pool_cpu_ptr(pool, obj, i * 4, cpu) !=
			    (cpu ? 0 : v))
				return 0;
	}
	return 1;
}

static void bench(enum kind kind, unsigned int counters)
{
	int64_t cost[REPS];
	uint64_t t0, t1, t2;
	char op[32];
	int r;

	snprintf(op, sizeof(op), "%s.%u", kind_name[kind], counters);
	reset();
	for (r = -1; r < REPS; r++) {
		t0 = bench_now();
		run_kind(kind, counters, ITERS);
		t1 = bench_now();
		run_kind(K_NONE, counters, ITERS);
		t2 = bench_now();
		if (r >= 0)
			cost[r] = (int64_t)(t1 - t0) - (int64_t)(t2 - t1);
	}
	if (!exact(kind, counters, ITERS * (REPS + 1))) {
		printf("pool-bench: %s FAILED the counters are not exact\n", op);
		failed = 1;
		return;
	}
	qsort(cost, REPS, sizeof(*cost), cmp_i64);
	printf("pool-bench: %s min=%.2f median=%.2f reps=%d iters=%d unit=%s\n",
	       op, (double)cost[0] / ITERS, (double)cost[REPS / 2] / ITERS,
	       REPS, ITERS, unit);
}

/* Bytes of pool memory, over all CPUs, one object of @size bytes takes. */
static long mem_per_object(size_t size)
{
	struct pda_pool *p = pda_pool_create(MEM_OBJECTS * size);
	size_t first_free;
	int i, cpus;

	if (!p)
		return -1;
	for (i = 0; i < MEM_OBJECTS; i++)
		if (!pda_pool_alloc(p, size, 4))
			break;
	/* The objects fill the line space from its start. */
	first_free = p->free.nr ? p->free.e[0].off : p->rows * PDA_POOL_LINE;
	cpus = p->cpus;
	pda_pool_destroy(p);
	if (i < MEM_OBJECTS)
		return -1;
	return (long)(first_free / MEM_OBJECTS * cpus);
}

static void pin0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		printf("pool-bench: setup FAILED pinning to CPU 0: %s\n",
		       strerror(errno));
		exit(1);
	}
}

int main(void)
{
	static const unsigned int sizes[] = { 1, 16, 256 };
	enum kind kind;
	unsigned int s;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!cmdline_has("pda.icount"))
		unit = BENCH_NATIVE_UNIT;
	pool = pda_pool_create(MAX_COUNTERS * 4);
	obj = pool ? pda_pool_alloc(pool, MAX_COUNTERS * 4, 64) : NULL;
	if (!obj) {
		printf("pool-bench: setup FAILED no pool: %s\n",
		       strerror(errno));
		return 1;
	}
	pin0();
	/* The raw adds need the selector in %fs: the checked calls load it. */
	if (pda_pool_method() == PDA_POOL_SEGMENT && pda_init_thread()) {
		printf("pool-bench: setup FAILED no segment in %%fs: %s\n",
		       strerror(errno));
		return 1;
	}
	rs = pda_rseq_area();
	printf("pool-bench: info method=%s\n",
	       pda_pool_method_name(pda_pool_method()));
	printf("pool-bench: info possible_cpus=%d\n", pda_pool_cpus(pool));
	for (s = 0; s < 3; s++)
		printf("pool-bench: info mem.%u=%ld\n", sizes[s],
		       mem_per_object(sizes[s] * 4));
	for (kind = K_SEG; kind <= K_THREAD; kind++)
		for (s = 0; s < 3; s++) {
			char op[32];

			snprintf(op, sizeof(op), "%s.%u", kind_name[kind],
				 sizes[s]);
			if (kind == K_SEG &&
			    pda_pool_method() != PDA_POOL_SEGMENT)
				printf("pool-bench: %s n/a no segment\n", op);
			else if (kind == K_TESTED &&
				 pda_pool_method() == PDA_POOL_ATOMIC)
				printf("pool-bench: %s n/a atomics: no path to test\n",
				       op);
			else if ((kind == K_RSEQ || kind == K_TESTED) &&
				 !PDA_HAVE_RSEQ_SECTIONS)
				printf("pool-bench: %s n/a no rseq sections here\n",
				       op);
			else if (kind == K_RSEQ && !rs)
				printf("pool-bench: %s n/a rseq not registered\n",
				       op);
			else
				bench(kind, sizes[s]);
		}
	printf("pool-bench: info rseq_aborts=%lu\n", aborts);
	printf("pool-bench: info done=%d\n", !failed);
	return failed;
}
