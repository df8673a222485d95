/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rounds of the tlb_* tests that check one flush operation with a
 * worker per CPU (tlb_mprotect, tlb_madv_dontneed, tlb_remap): the same
 * cases, the same CPUs and the same reports for each, so that a test
 * holds only what its flush is about.
 *
 * A test describes its flush in a struct tlb_round_ops (what a round
 * does first, how each thread fills the memory, the flushes, what each
 * thread must see after each, and one pass of a concurrent worker) and
 * TLB_ROUND_TESTS() makes its four cases of it:
 *
 * - occupied, lazy, one_cpu (tlb_occupied_rounds()): main fills on the
 *   flusher's CPU, each worker at home, all block; the other CPUs are set
 *   up as the mode says (lib/tlb_test.h), main flushes, checks on its CPU,
 *   and each worker checks at home first (the first thread of the mm
 *   there since the flush), then on the other CPUs;
 * - concurrent (tlb_concurrent_rounds()): every worker makes passes over
 *   the memory, moving between CPUs, while main flushes.
 *
 * TLB_OCCUPIED_TESTS() alone makes the first three around a test's own
 * rounds (tlb_fork_cow).
 *
 * Header only, after lib/tlb_test.h (and what it wants).
 */
#ifndef PDA_TESTS_TLB_ROUNDS_H
#define PDA_TESTS_TLB_ROUNDS_H

#include "tlb_test.h"

/* A round's flushes at the most, and so the phases of a concurrent one. */
#define TLB_MAX_FLUSHES		2
#define TLB_MAX_PHASES		(2 * TLB_MAX_FLUSHES + 2)
/* Passes each worker makes in each phase of a concurrent round. */
#define TLB_PASSES		4
/* A concurrent worker moves to its next CPU after this many passes. */
#define TLB_MOVE_EVERY		3

struct tlb_round;

/*
 * A test's flush operation.  Thread @i is worker @i, or main when @i is
 * nworkers; each op runs on the CPU its thread is on.  @arg of the
 * struct tlb_round is the test's own (its fixture data).
 */
struct tlb_round_ops {
	const char *name;	/* the flush, as the reports name it */
	int nflushes;		/* in each round, up to TLB_MAX_FLUSHES */
	long rounds;		/* occupied, lazy, one_cpu at pda.scale=1 */
	long concurrent_rounds;
	/*
	 * Fill before a concurrent round's workers start too, for a flush
	 * that must meet every worker's CPU caching the memory.
	 */
	int concurrent_fill;
	/* What a concurrent worker counts, for a timeout's message. */
	const char *passes;
	/* The start of every round, before the fills; may ASSERT. */
	void (*begin)(struct __test_metadata *_metadata, struct tlb_round *rd);
	/* Thread @i's accesses before the flushes. */
	void (*fill)(struct tlb_round *rd, int i);
	/* Flush @k: 0, or -errno and what failed in @what. */
	int (*flush)(struct tlb_round *rd, int k, char *what, size_t len);
	/* Thread @i's checks after flush @k. */
	void (*check)(struct tlb_round *rd, int i, int k);
	/* One pass of a concurrent worker @i that read @phase before it. */
	void (*pass)(struct tlb_round *rd, int i, int phase);
};

/*
 * One case's rounds.  The phases of a concurrent round: 2k once k
 * flushes have returned, 2k + 1 while flush k + 1 is in progress, and
 * 2 * nflushes + 1 to stop.  A worker counts its passes per phase.
 */
struct tlb_round {
	struct tlb_env *env;
	const struct tlb_round_ops *ops;
	void *arg;
	long round;
	int only_cpu;		/* -1: home, then the other CPUs */
	int flush;		/* the flush the checks are for; -1: filling */
	int phase;
	unsigned long count[TLB_MAX_CPUS][TLB_MAX_PHASES];
};

/*
 * The phase, for a concurrent worker; read again after an access, it says
 * whether a flush had begun meanwhile.
 */
static inline int tlb_round_phase(struct tlb_round *rd)
{
	return __atomic_load_n(&rd->phase, __ATOMIC_ACQUIRE);
}

static inline void tlb_round_set_phase(struct tlb_round *rd, int ph)
{
	__atomic_store_n(&rd->phase, ph, __ATOMIC_RELEASE);
}

/* A worker's fill at home, or its checks at home and then elsewhere. */
static void tlb_round_job(struct tlb_worker *w, void *arg)
{
	struct tlb_round *rd = arg;
	int k, n = rd->flush < 0 ? 1 : tlb_nvisits(rd->env);

	for (k = 0; k < n; k++) {
		int cpu = rd->only_cpu >= 0 ? rd->only_cpu :
			  tlb_visit(rd->env, w->idx, k);

		if (tlb_move(rd->env, cpu))
			return;
		if (rd->flush < 0)
			rd->ops->fill(rd, w->idx);
		else
			rd->ops->check(rd, w->idx, rd->flush);
		if (rd->only_cpu >= 0)
			break;
	}
}

/* Main fills, then workers 0..@nworkers-1, each at home. */
static inline void tlb_round_fill(struct tlb_round *rd, int nworkers)
{
	rd->flush = -1;
	rd->ops->fill(rd, rd->env->nworkers);
	tlb_run(rd->env, nworkers, tlb_round_job, rd);
}

/*
 * Flush @k of a round on CPU @f, the other CPUs set up as @mode says,
 * then the checks of main and of workers 0..@nworkers-1.  0, or -1 if
 * the setup failed (logged).
 */
static inline int tlb_round_flush(struct __test_metadata *_metadata,
				  struct tlb_round *rd, struct tlb_paths *paths,
				  int f, int nworkers, int k)
{
	char what[160];
	int err;

	if (tlb_before_flush(rd->env, paths->mode, f))
		return -1;
	tlb_flush_begin(paths);
	err = rd->ops->flush(rd, k, what, sizeof(what));
	tlb_flush_end(paths);
	ASSERT_EQ(0, err) {
		TH_LOG("round %ld: %s: %s", rd->round, what, strerror(-err));
	}
	rd->flush = k;
	rd->ops->check(rd, rd->env->nworkers, k);
	tlb_run(rd->env, nworkers, tlb_round_job, rd);
	return 0;
}

/*
 * The occupied (@mode TLB_OCCUPIED, @only_cpu < 0), lazy (TLB_LAZY) and
 * one_cpu (TLB_OCCUPIED, main and two workers on @only_cpu) cases.  The
 * flusher is main, on a different CPU each round.
 */
static inline void tlb_occupied_rounds(struct __test_metadata *_metadata,
				       struct tlb_round *rd, int only_cpu,
				       enum tlb_mode mode)
{
	const struct tlb_round_ops *ops = rd->ops;
	struct tlb_env *e = rd->env;
	long rounds = tlb_rounds(ops->rounds), r;
	int nworkers = only_cpu < 0 ? e->nworkers : 2, k = 0;
	struct tlb_paths paths;
	uint64_t t0 = pda_test_now_ns();
	char what[64];

	rd->only_cpu = only_cpu;
	tlb_paths_start(&paths, mode, only_cpu < 0);
	for (r = 0; r < rounds && !tlb_failures(e); r++) {
		int f = only_cpu >= 0 ? only_cpu : e->cpus[r % e->ncpus];

		rd->round = e->round = r;
		if (tlb_move(e, f))
			break;
		ops->begin(_metadata, rd);
		tlb_round_fill(rd, nworkers);
		for (k = 0; k < ops->nflushes; k++)
			if (tlb_round_flush(_metadata, rd, &paths, f, nworkers,
					    k))
				break;
		if (k < ops->nflushes)
			break;
	}
	TH_LOG("%ld rounds, %d workers, %s, in %llu ms", r, nworkers,
	       tlb_mode_name(mode),
	       (unsigned long long)(pda_test_now_ns() - t0) / 1000000);
	TLB_EXPECT_NO_FAILURES(e);
	snprintf(what, sizeof(what), "%s %s",
		 mode == TLB_OCCUPIED ? "occupied" : "lazy", ops->name);
	TLB_PATHS_EXPECT(what, &paths);
	pda_stat("migrations", e->migrations);
}

/*
 * A concurrent worker: a pass over the memory at a time, moving to its
 * next CPU every TLB_MOVE_EVERY passes, until main says stop.
 */
static void tlb_concurrent_job(struct tlb_worker *w, void *arg)
{
	struct tlb_round *rd = arg;
	int stop = 2 * rd->ops->nflushes + 1, k = 0;
	unsigned long n = 0;

	for (;;) {
		int before = tlb_round_phase(rd);

		if (before == stop)
			break;
		if (n++ % TLB_MOVE_EVERY == 0 &&
		    tlb_move(rd->env, tlb_visit(rd->env, w->idx, k++)))
			break;
		rd->ops->pass(rd, w->idx, before);
		__atomic_fetch_add(&rd->count[w->idx][before], 1,
				   __ATOMIC_RELAXED);
		if (tlb_failures(rd->env))
			break;
	}
}

/* Waits until every worker made TLB_PASSES passes in phase @ph. */
static inline int tlb_round_wait(struct tlb_round *rd, int ph)
{
	return tlb_wait_counts(rd->env, &rd->count[0][ph], TLB_MAX_PHASES,
			       TLB_PASSES, rd->ops->passes);
}

/*
 * The flushes of a concurrent round, the workers running: each once
 * every worker has made its passes in the phase before it.  No ASSERT
 * in here: the workers would never stop.
 */
static inline void tlb_concurrent_flushes(struct tlb_round *rd)
{
	int n = rd->ops->nflushes, k, err;
	char what[160];

	for (k = 0; k < n; k++) {
		if (tlb_failures(rd->env) || tlb_round_wait(rd, 2 * k))
			return;
		tlb_round_set_phase(rd, 2 * k + 1);
		err = rd->ops->flush(rd, k, what, sizeof(what));
		if (err)
			tlb_fail(rd->env, "%s: %s", what, strerror(-err));
		tlb_round_set_phase(rd, 2 * k + 2);
	}
	tlb_round_wait(rd, 2 * n);
}

/*
 * The concurrent case: the workers keep accessing the memory, and moving
 * between CPUs, while main flushes, so each flush must reach CPUs that
 * are using the mm (the broadcast case).
 */
static inline void tlb_concurrent_rounds(struct __test_metadata *_metadata,
					 struct tlb_round *rd)
{
	const struct tlb_round_ops *ops = rd->ops;
	struct tlb_env *e = rd->env;
	long rounds = tlb_rounds(ops->concurrent_rounds), r;
	struct tlb_vmstat before, after;
	uint64_t t0 = pda_test_now_ns();
	char what[64];
	int i;

	rd->only_cpu = -1;
	tlb_vmstat_read(&before);
	for (r = 0; r < rounds && !tlb_failures(e); r++) {
		rd->round = e->round = r;
		if (tlb_move(e, e->cpus[r % e->ncpus]))
			break;
		memset(rd->count, 0, sizeof(rd->count));
		ops->begin(_metadata, rd);
		if (ops->concurrent_fill)
			tlb_round_fill(rd, e->nworkers);
		tlb_round_set_phase(rd, 0);
		for (i = 0; i < e->nworkers; i++)
			tlb_worker_start(&e->w[i], tlb_concurrent_job, rd);
		tlb_concurrent_flushes(rd);
		tlb_round_set_phase(rd, 2 * ops->nflushes + 1);
		for (i = 0; i < e->nworkers; i++)
			tlb_worker_wait(&e->w[i]);
	}
	tlb_vmstat_read(&after);
	TH_LOG("%ld rounds, %d workers running throughout, in %llu ms",
	       r, e->nworkers,
	       (unsigned long long)(pda_test_now_ns() - t0) / 1000000);
	TLB_EXPECT_NO_FAILURES(e);
	snprintf(what, sizeof(what), "concurrent %s", ops->name);
	TLB_VMSTAT_PRINT(what, &before, &after);
	TLB_EXPECT_OFF_UNCOUNTED(what, &before, &after);
	pda_stat("migrations", e->migrations);
}

/*
 * The occupied, lazy and one_cpu cases of @fixture, each a call of @fn,
 * declared here so that the compiler holds it to this signature.  The
 * fixture data has its struct tlb_env as env.
 */
#define TLB_OCCUPIED_TESTS(fixture, fn)					\
static void fn(struct __test_metadata *_metadata,			\
	       FIXTURE_DATA(fixture) *self, int only_cpu,		\
	       enum tlb_mode mode);					\
									\
TEST_F_TIMEOUT(fixture, occupied, TLB_TIMEOUT)				\
{									\
	if (self->env.ncpus < 2)					\
		SKIP(return, "one online CPU: no other CPU to hold a stale entry (one_cpu covers it)"); \
	fn(_metadata, self, -1, TLB_OCCUPIED);				\
}									\
									\
TEST_F_TIMEOUT(fixture, lazy, TLB_TIMEOUT)				\
{									\
	if (self->env.ncpus < 2)					\
		SKIP(return, "one online CPU: no other CPU to hold the mm"); \
	fn(_metadata, self, -1, TLB_LAZY);				\
}									\
									\
TEST_F_TIMEOUT(fixture, one_cpu, TLB_TIMEOUT)				\
{									\
	fn(_metadata, self, self->env.cpus[0], TLB_OCCUPIED);		\
}

/*
 * All four cases of @fixture from @round_ops, which get the fixture data as
 * the round's arg.
 */
#define TLB_ROUND_TESTS(fixture, round_ops)				\
static void fixture##_occupied_rounds(struct __test_metadata *_metadata, \
				      FIXTURE_DATA(fixture) *self,	\
				      int only_cpu, enum tlb_mode mode)	\
{									\
	struct tlb_round rd = {						\
		.env = &self->env, .ops = (round_ops), .arg = self,	\
	};								\
									\
	tlb_occupied_rounds(_metadata, &rd, only_cpu, mode);		\
}									\
									\
TLB_OCCUPIED_TESTS(fixture, fixture##_occupied_rounds)			\
									\
TEST_F_TIMEOUT(fixture, concurrent, TLB_TIMEOUT)			\
{									\
	struct tlb_round rd = {						\
		.env = &self->env, .ops = (round_ops), .arg = self,	\
	};								\
									\
	if (self->env.ncpus < 2)					\
		SKIP(return, "one online CPU: nothing runs concurrently"); \
	tlb_concurrent_rounds(_metadata, &rd);				\
}

#endif /* PDA_TESTS_TLB_ROUNDS_H */
