// SPDX-License-Identifier: GPL-2.0
/*
 * Per-CPU pool objects count exactly under migration and signals
 * (tools/lib/pda/pda_pool.h): three threads per online CPU (more threads
 * than CPUs) each add to every counter of three objects, a struct of 1,
 * of 16 and of 256 counters (the last spans 16 lines, so 240 of its 256
 * counters are reached through the stride), round after round, while
 *
 * - a third of the threads re-pin themselves to a random CPU every few
 *   rounds, the rest run unpinned and half of those yield;
 * - a timer's SIGALRM, which the main thread blocks, lands on whichever
 *   worker runs, and its handler adds to a counter of its own object,
 *   interrupting the adds above;
 * - in a process that updates through the segment, where glibc
 *   registered rseq, every other group of three threads (one of each
 *   kind) holds __USER_DS in %fs and so updates the same copies through
 *   rseq critical sections: the two mix;
 *
 * and then:
 * - every counter summed over the possible CPUs is exactly the number of
 *   rounds of all threads (each round adds 1 to each);
 * - the signal counter's sum is exactly the number of handler runs;
 * - the re-pinning threads also add to a fourth object while pinned,
 *   and count per CPU what they added: CPU c's copy equals that count, so
 *   every add landed in the copy of the CPU the thread was on;
 * - every copy of the CPUs that are not online stays 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/time.h>

#include "kselftest_harness.h"

#include "lib/pool_test.h"

#define THREADS_PER_CPU		3
#define MAX_THREADS		192
/* Rounds of 273 adds per thread, up to 4 CPUs: ~0.5 M adds per CPU. */
#define ROUNDS			600

struct c1 {
	uint32_t n[1];
};

struct c16 {
	uint32_t n[16];
};

struct c256 {
	uint32_t n[256];
};

static struct pda_pool *pool;
static struct c1 *o1, *sig_obj, *pinned_obj;
static struct c16 *o16;
static struct c256 *o256;
static unsigned long handled;	/* signal handler runs, atomically */

enum kind { REPIN, FREE, FREE_YIELD, KINDS };

struct worker {
	pthread_t tid;
	enum kind kind;
	uint32_t seed;
	const int *cpus;
	int ncpus;
	unsigned int rounds;
	unsigned int done;
	int failed;	/* an accessor returned -1 */
	int busy_fs;	/* holds __USER_DS in %fs: updates through rseq */
	unsigned int per_cpu[CPU_SETSIZE];
};

static void on_alarm(int sig)
{
	(void)sig;
	/* Counted only once added, so the two sums must agree. */
	if (!pda_pool_inc_u32(pool, sig_obj, 0))
		__atomic_fetch_add(&handled, 1, __ATOMIC_RELAXED);
}

static int one_round(void)
{
	int bad = 0, i;

	bad |= pda_pool_inc_u32(pool, o1, 0);
	for (i = 0; i < 16; i++)
		bad |= pda_pool_inc_u32(pool, o16, i * 4);
	for (i = 0; i < 256; i++)
		bad |= pda_pool_inc_u32(pool, o256, i * 4);
	return bad;
}

static void *count_thread(void *arg)
{
	struct worker *w = arg;
	unsigned int chunk, j;
	int cpu = -1;

#if PDA_HAVE_SEGMENT
	if (w->busy_fs) {
		pda_test_load_seg(pda_test_user_ds());
		if (pda_pool_path() != PDA_POOL_RSEQ) {
			w->failed = 1;
			return NULL;
		}
	}
#endif
	while (w->done < w->rounds) {
		uint32_t r = xorshift32(&w->seed);

		chunk = 1 + r % 8;
		if (chunk > w->rounds - w->done)
			chunk = w->rounds - w->done;
		if (w->kind == REPIN) {
			cpu = w->cpus[(r >> 8) % w->ncpus];
			if (pda_test_pin(cpu)) {
				w->failed = 1;
				return NULL;
			}
		}
		for (j = 0; j < chunk; j++) {
			w->failed |= one_round();
			if (w->kind == REPIN)
				w->failed |= pda_pool_inc_u32(pool, pinned_obj, 0);
		}
		if (w->kind == REPIN)
			w->per_cpu[cpu] += chunk;
		if (w->kind == FREE_YIELD && (r & 1))
			sched_yield();
		w->done += chunk;
	}
	return NULL;
}

TEST(migrate_signal_exact)
{
	int cpus[CPU_SETSIZE], ncpus, nthreads, i, c, bad = 0;
	struct itimerval tick = { { 0, 1000 }, { 0, 1000 } };
	static struct worker w[MAX_THREADS];
	uint64_t expect = 0, pinned[CPU_SETSIZE] = { 0 };
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	cpu_set_t online;
	unsigned int rounds;
	sigset_t alrm;
	int mixed;

	ncpus = pda_test_online(cpus, CPU_SETSIZE);
	ASSERT_LT(0, ncpus);
	nthreads = THREADS_PER_CPU * ncpus;
	if (nthreads > MAX_THREADS)
		nthreads = MAX_THREADS;
	/* 4 CPUs' worth in all, spread over however many threads. */
	rounds = ROUNDS * THREADS_PER_CPU * 4 / nthreads;
	if (pda_test_bochs())
		rounds /= 10;
	if (!rounds)
		rounds = 1;
	pool = pda_pool_create(4 * 1024);
	ASSERT_TRUE(pool != NULL);
	o1 = pda_pool_alloc(pool, sizeof(*o1), alignof(struct c1));
	o16 = pda_pool_alloc(pool, sizeof(*o16), alignof(struct c16));
	o256 = pda_pool_alloc(pool, sizeof(*o256), alignof(struct c256));
	sig_obj = pda_pool_alloc(pool, sizeof(*sig_obj), 4);
	pinned_obj = pda_pool_alloc(pool, sizeof(*pinned_obj), 4);
	ASSERT_TRUE(o1 && o16 && o256 && sig_obj && pinned_obj);
	mixed = pda_pool_method() == PDA_POOL_SEGMENT && pool_test_have_rseq();
	TH_LOG("%d threads on %d CPUs, %u rounds each; method %s%s",
	       nthreads, ncpus, rounds,
	       pda_pool_method_name(pda_pool_method()),
	       mixed ? ", half the threads through rseq" : "");

	ASSERT_TRUE(signal(SIGALRM, on_alarm) != SIG_ERR);
	for (i = 0; i < nthreads; i++) {
		w[i] = (struct worker){ .kind = i % KINDS, .seed = 2 * i + 1,
					.cpus = cpus, .ncpus = ncpus,
					.rounds = rounds,
					.busy_fs = mixed && (i / KINDS) % 2 };
		ASSERT_EQ(0, pthread_create(&w[i].tid, NULL, count_thread,
					    &w[i]));
	}
	/* The workers have it unblocked; the main thread only waits. */
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	ASSERT_EQ(0, pthread_sigmask(SIG_BLOCK, &alrm, NULL));
	ASSERT_EQ(0, setitimer(ITIMER_REAL, &tick, NULL));
	for (i = 0; i < nthreads; i++) {
		ASSERT_EQ(0, pthread_join(w[i].tid, NULL));
		EXPECT_EQ(0, w[i].failed);
		EXPECT_EQ(rounds, w[i].done);
		expect += w[i].done;
		if (w[i].kind == REPIN)
			for (c = 0; c < ncpus; c++)
				pinned[cpus[c]] += w[i].per_cpu[cpus[c]];
	}
	ASSERT_EQ(0, setitimer(ITIMER_REAL, &off, NULL));
	signal(SIGALRM, SIG_IGN);

	EXPECT_EQ((uint32_t)expect, pda_pool_sum_u32(pool, o1, 0));
	for (i = 0; i < 16; i++)
		bad += pda_pool_sum_u32(pool, o16, i * 4) != (uint32_t)expect;
	for (i = 0; i < 256; i++)
		bad += pda_pool_sum_u32(pool, o256, i * 4) != (uint32_t)expect;
	EXPECT_EQ(0, bad) {
		TH_LOG("%d counters of 272 are not %llu", bad,
		       (unsigned long long)expect);
	}
	EXPECT_EQ(handled, pda_pool_sum_u32(pool, sig_obj, 0));
	TH_LOG("%llu rounds, %lu signal handler runs",
	       (unsigned long long)expect, handled);

	CPU_ZERO(&online);
	for (c = 0; c < ncpus; c++)
		CPU_SET(cpus[c], &online);
	bad = 0;
	for (c = 0; c < pda_pool_cpus(pool); c++) {
		uint32_t mine = *(uint32_t *)pda_pool_cpu_ptr(pool, pinned_obj,
							      0, c);

		if (mine != pinned[c]) {
			TH_LOG("CPU %d: pinned adds %u in its copy, %llu made",
			       c, mine, (unsigned long long)pinned[c]);
			bad++;
		}
		if (CPU_ISSET(c, &online))
			continue;
		bad += *(uint32_t *)pda_pool_cpu_ptr(pool, o1, 0, c) != 0;
		for (i = 0; i < 16; i++)
			bad += *(uint32_t *)pda_pool_cpu_ptr(pool, o16, i * 4,
							      c) != 0;
		for (i = 0; i < 256; i++)
			bad += *(uint32_t *)pda_pool_cpu_ptr(pool, o256, i * 4,
							      c) != 0;
	}
	EXPECT_EQ(0, bad);
	pda_pool_destroy(pool);
}

TEST_HARNESS_MAIN
