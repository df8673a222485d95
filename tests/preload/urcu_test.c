// SPDX-License-Identifier: GPL-2.0
/*
 * Debian's liburcu (liburcu8 0.13, unmodified, dynamically linked) gives
 * the right answers with libpda-getcpu.so preloaded, and without it.
 * liburcu asks sched_getcpu() on every hash-table add and delete of a
 * CDS_LFHT_ACCOUNTING table (its per-CPU split counters) and on every
 * call_rcu() once there is a call_rcu worker per CPU (which CPU's worker
 * takes the callback); a preloaded sched_getcpu() that answered wrong
 * would put the counts on another CPU's counter, or the callback on
 * another CPU's worker.  The workloads are urcu_work.h's, in a thread
 * per CPU (two at least):
 *
 * - method: prints "# method: M", how libpda-getcpu.so answers ("none"
 *   without it); fails if PDA_EXPECT_METHOD says otherwise.  Each case
 *   below checks the same in every thread.
 * - lfht_pinned: each thread pinned to one CPU adds LFHT_OPS nodes and
 *   deletes all but every LFHT_KEEP-th; then cds_lfht_count_nodes()
 *   finds exactly the nodes kept, walking the table and in both sums of
 *   the split counters, cds_lfht_lookup() finds each kept node and none
 *   deleted, and the table empties and is destroyed.
 * - lfht_migrating: the same, each thread moving itself to the next CPU
 *   every UW_PERIOD operations (skipped on one CPU).
 * - call_rcu_pinned: with create_all_cpu_call_rcu_data(), each thread
 *   pinned to one CPU makes CB_OPS call_rcu() calls; after rcu_barrier()
 *   every callback ran exactly once, on the worker of the CPU its caller
 *   was pinned to.
 * - call_rcu_migrating: the same, moving (skipped on one CPU).
 *
 * Every UW_PERIOD operations each thread checks that sched_getcpu() says
 * the CPU it is pinned to.  Runs three ways (scripts/harness/preload.py):
 * plain, preloaded, and preloaded with glibc's rseq off, with the
 * arguments of relaunch.h:
 *
 *	urcu_test --lib PATH [--preload] [--rseq-off] [--expect METHOD]
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "relaunch.h"
#include "urcu_work.h"

#define LFHT_OPS	2000	/* per thread */
#define LFHT_KEEP	7
#define CB_OPS		2000	/* per thread */

/* Each thread's failure, and its method against PDA_EXPECT_METHOD. */
static int thread_failed(struct __test_metadata *_metadata,
			 const struct uw_run *r)
{
	const char *want = getenv("PDA_EXPECT_METHOD");
	int i, bad = 0;

	for (i = 0; i < r->nthreads; i++) {
		const struct uw_thread *t = &r->t[i];

		if (t->failed) {
			TH_LOG("thread %d: %s", i, t->why);
			bad = 1;
		}
		if (want && strcmp(want, t->method)) {
			TH_LOG("thread %d: sched_getcpu() through %s, not %s",
			       i, t->method, want);
			bad = 1;
		}
	}
	return bad;
}

/* @r's threads: one per CPU, two at least.  1: the case does not apply. */
static int threads_for(struct __test_metadata *_metadata, struct uw_run *r)
{
	ASSERT_EQ(0, uw_load_cpus());
	if (r->migrate && uw_ncpus < 2)
		SKIP(return 1, "one CPU: nothing migrates");
	r->nthreads = uw_nthreads();
	return 0;
}

static void lfht_case(struct __test_metadata *_metadata, int migrate)
{
	struct uw_run r = { .kind = UW_LFHT, .ops = LFHT_OPS,
			    .migrate = migrate, .keep_every = LFHT_KEEP };
	unsigned long count, kept = 0, found = 0, wrong = 0;
	long before, after;
	char why[UW_WHY];
	int i, k;

	if (threads_for(_metadata, &r))
		return;
	r.ht = cds_lfht_new(1024, 1024, 0, CDS_LFHT_ACCOUNTING, NULL);
	ASSERT_TRUE(r.ht != NULL);
	ASSERT_EQ(0, uw_go(&r, why)) TH_LOG("%s", why);
	EXPECT_EQ(0, thread_failed(_metadata, &r));

	rcu_register_thread();
	rcu_read_lock();
	cds_lfht_count_nodes(r.ht, &before, &count, &after);
	for (i = 0; i < r.nthreads; i++) {
		for (k = 0; k < r.ops; k++) {
			struct uw_node *n = &r.t[i].nodes[k];
			struct cds_lfht_iter iter;
			int keep = !(k % LFHT_KEEP);

			kept += keep;
			cds_lfht_lookup(r.ht, uw_hash(n->key), uw_match,
					&n->key, &iter);
			if (cds_lfht_iter_get_node(&iter) == &n->node)
				found++;
			else if (keep || cds_lfht_iter_get_node(&iter))
				wrong++;
		}
	}
	rcu_read_unlock();
	EXPECT_EQ(kept, count);
	EXPECT_EQ((long)kept, before);
	EXPECT_EQ((long)kept, after);
	EXPECT_EQ(kept, found);
	EXPECT_EQ(0UL, wrong);

	/* Empty it from here, and the counts follow. */
	rcu_read_lock();
	for (i = 0; i < r.nthreads; i++)
		for (k = 0; k < r.ops; k += LFHT_KEEP)
			EXPECT_EQ(0, cds_lfht_del(r.ht, &r.t[i].nodes[k].node));
	cds_lfht_count_nodes(r.ht, &before, &count, &after);
	rcu_read_unlock();
	EXPECT_EQ(0UL, count);
	EXPECT_EQ(0, before);
	EXPECT_EQ(0, after);
	rcu_unregister_thread();
	synchronize_rcu();
	EXPECT_EQ(0, cds_lfht_destroy(r.ht, NULL));
	uw_free(&r);
}

static void call_rcu_case(struct __test_metadata *_metadata, int migrate)
{
	struct uw_run r = { .kind = UW_CALL_RCU, .ops = CB_OPS,
			    .migrate = migrate, .verify = 1 };
	unsigned long ran = 0, twice = 0, elsewhere = 0;
	char why[UW_WHY];
	int i, k;

	if (threads_for(_metadata, &r))
		return;
	ASSERT_EQ(0, create_all_cpu_call_rcu_data(0));
	ASSERT_EQ(0, uw_go(&r, why)) TH_LOG("%s", why);
	rcu_barrier();
	EXPECT_EQ(0, thread_failed(_metadata, &r));
	for (i = 0; i < r.nthreads; i++) {
		for (k = 0; k < r.ops; k++) {
			struct uw_cb *c = &r.t[i].cbs[k];
			int n = __atomic_load_n(&c->ran, __ATOMIC_RELAXED);

			ran += n == 1;
			twice += n > 1;
			elsewhere += n && (!c->want || c->got != c->want);
		}
	}
	EXPECT_EQ((unsigned long)r.nthreads * r.ops, ran);
	EXPECT_EQ(0UL, twice);
	EXPECT_EQ(0UL, elsewhere)
		TH_LOG("callbacks not on their caller's CPU's worker");
	free_all_cpu_call_rcu_data();
	uw_free(&r);
}

TEST(method)
{
	const char *want = getenv("PDA_EXPECT_METHOD");
	const char *got;

	/* The library settles on a method at a thread's first call. */
	sched_getcpu();
	got = uw_method();
	ksft_print_msg("method: %s\n", got);
	fflush(stdout);
	if (want)
		ASSERT_STREQ(want, got);
}

TEST(lfht_pinned)
{
	lfht_case(_metadata, 0);
}

TEST(lfht_migrating)
{
	lfht_case(_metadata, 1);
}

TEST(call_rcu_pinned)
{
	call_rcu_case(_metadata, 0);
}

TEST(call_rcu_migrating)
{
	call_rcu_case(_metadata, 1);
}

int main(int argc, char **argv)
{
	if (preload_relaunch_asked(argc, argv))
		return preload_relaunch(argc, argv);
	return test_harness_run(argc, argv);
}
