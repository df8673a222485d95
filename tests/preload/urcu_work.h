/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The liburcu workloads tests/preload/urcu_test checks and
 * tests/bench/urcu_bench measures, on Debian's liburcu 0.13 (its default
 * flavour, urcu-memb, and liburcu-cds), dynamically linked and called
 * through the shared libraries (no _LGPL_SOURCE), as a program that uses
 * the distribution's package does.  Each operation asks liburcu for the
 * CPU (sched_getcpu()) in a way the library itself chose:
 *
 *	UW_LFHT		cds_lfht_add() then cds_lfht_del() of one node, in a
 *			CDS_LFHT_ACCOUNTING table: each updates the
 *			split counter of the CPU it runs on (rculfhash.c's
 *			ht_count_add() and ht_count_del())
 *	UW_CALL_RCU	call_rcu() with a call_rcu worker per CPU
 *			(create_all_cpu_call_rcu_data()): it queues the
 *			callback on the worker of the CPU it runs on
 *			(get_call_rcu_data())
 *	UW_NOTHING	the same loop without the call, which urcu_bench
 *			subtracts
 *
 * A run has UW_THREADS threads or more: one per CPU the process may use,
 * thread i starting on the i-th (so at least two share a CPU when there
 * is one).  Every UW_PERIOD operations each thread checks that
 * sched_getcpu() says the CPU it pinned itself to; migrating, it first
 * moves itself to the next CPU of the list.  The threads time their own
 * operations with one clock (lib/clock.h: instructions under qemu
 * -icount), and the run's span is from the first thread's start to the
 * last one's end.  Header only.
 */
#ifndef PDA_URCU_WORK_H
#define PDA_URCU_WORK_H

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <urcu.h>
#include <urcu/rculfhash.h>

#include "../guest/lib/clock.h"

#define UW_THREADS	2
#define UW_PERIOD	64
#define UW_WHY		160

enum uw_kind { UW_NOTHING, UW_LFHT, UW_CALL_RCU };

struct uw_node {
	struct cds_lfht_node node;
	unsigned long key;
};

struct uw_cb {
	struct rcu_head head;
	struct call_rcu_data *want;	/* the worker of the caller's CPU */
	struct call_rcu_data *got;	/* the worker that ran it */
	int ran;
};

struct uw_run;

struct uw_thread {
	struct uw_run *run;
	pthread_t tid;
	int idx, cpu;
	struct uw_node *nodes;
	struct uw_cb *cbs;
	uint64_t start, end;		/* bench_now() around its operations */
	unsigned long calls;		/* sched_getcpu() calls they made */
	const char *method;		/* how the preloaded library answered */
	int failed;
	char why[UW_WHY];
};

struct uw_run {
	enum uw_kind kind;
	int nthreads, ops, migrate;
	/* UW_LFHT: node i stays in the table when i % keep_every == 0 */
	int keep_every;
	/* UW_CALL_RCU: record the worker each callback should run on */
	int verify;
	struct cds_lfht *ht;
	/* The counting interposer's per-thread count, when it is loaded */
	unsigned long (*count)(void);
	pthread_barrier_t start;
	struct uw_thread *t;
};

/* The CPUs the process may run on, in order. */
static int uw_cpus[CPU_SETSIZE], uw_ncpus;

static inline int uw_load_cpus(void)
{
	cpu_set_t set;
	int cpu;

	uw_ncpus = 0;
	if (sched_getaffinity(0, sizeof(set), &set))
		return -1;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &set))
			uw_cpus[uw_ncpus++] = cpu;
	return uw_ncpus ? 0 : -1;
}

static inline int uw_nthreads(void)
{
	return uw_ncpus > UW_THREADS ? uw_ncpus : UW_THREADS;
}

/* libpda-getcpu.so's answer for this thread, "none" without it. */
static inline const char *uw_method(void)
{
	const char *(*m)(void) = (const char *(*)(void))
		dlsym(RTLD_DEFAULT, "pda_getcpu_method");

	return m ? m() : "none";
}

static inline unsigned long uw_hash(unsigned long key)
{
	/* Fibonacci hashing: consecutive keys land in different buckets. */
	return key * 2654435761UL;
}

static inline int uw_match(struct cds_lfht_node *node, const void *key)
{
	return caa_container_of(node, struct uw_node, node)->key ==
		*(const unsigned long *)key;
}

static inline void uw_cb_done(struct rcu_head *head)
{
	struct uw_cb *c = caa_container_of(head, struct uw_cb, head);

	c->got = get_thread_call_rcu_data();
	__atomic_fetch_add(&c->ran, 1, __ATOMIC_RELAXED);
}

/* What UW_NOTHING calls: a call the compiler cannot remove. */
static void __attribute__((noinline)) uw_nothing(void)
{
	asm volatile("" : : : "memory");
}

/* Pin (the first time, or migrating) and check the CPU: move @n. */
static inline void uw_move(struct uw_thread *t, int n)
{
	int cpu = uw_cpus[(t->idx + n) % uw_ncpus], got;
	cpu_set_t set;

	if (!n || t->run->migrate) {
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			t->failed = 1;
			snprintf(t->why, UW_WHY, "sched_setaffinity(%d): %s",
				 cpu, strerror(errno));
			return;
		}
		t->cpu = cpu;
	}
	got = sched_getcpu();
	if (got != t->cpu && !t->failed) {
		t->failed = 1;
		snprintf(t->why, UW_WHY, "pinned to CPU %d, sched_getcpu() %d",
			 t->cpu, got);
	}
}

static inline void uw_op(struct uw_thread *t, int i)
{
	struct uw_run *r = t->run;
	struct uw_node *n;
	struct uw_cb *c;

	switch (r->kind) {
	case UW_LFHT:
		n = &t->nodes[i];
		rcu_read_lock();
		cds_lfht_add(r->ht, uw_hash(n->key), &n->node);
		if ((!r->keep_every || i % r->keep_every) &&
		    cds_lfht_del(r->ht, &n->node) && !t->failed) {
			t->failed = 1;
			snprintf(t->why, UW_WHY, "cds_lfht_del(key %#lx) failed",
				 n->key);
		}
		rcu_read_unlock();
		break;
	case UW_CALL_RCU:
		c = &t->cbs[i];
		if (r->verify) {
			rcu_read_lock();
			c->want = get_cpu_call_rcu_data(t->cpu);
			rcu_read_unlock();
		}
		call_rcu(&c->head, uw_cb_done);
		break;
	case UW_NOTHING:
		uw_nothing();
		break;
	}
}

static void *uw_thread_main(void *arg)
{
	struct uw_thread *t = arg;
	struct uw_run *r = t->run;
	unsigned long before = 0;
	int i, move = 0;

	rcu_register_thread();
	uw_move(t, move);
	t->method = uw_method();
	pthread_barrier_wait(&r->start);
	t->start = bench_now();
	for (i = 0; i < r->ops; i++) {
		if (i && !(i % UW_PERIOD))
			uw_move(t, ++move);
		if (r->count)
			before = r->count();
		uw_op(t, i);
		if (r->count)
			t->calls += r->count() - before;
	}
	t->end = bench_now();
	rcu_unregister_thread();
	return NULL;
}

/*
 * A run: r->nthreads threads of r->ops operations each, their nodes and
 * callbacks allocated here (uw_free() frees them).  Returns 0, or -1
 * with @why; the threads' own failures are in r->t[].
 */
static inline int uw_go(struct uw_run *r, char *why)
{
	int i, err, n = r->nthreads;

	r->t = calloc(n, sizeof(*r->t));
	if (!r->t || pthread_barrier_init(&r->start, NULL, n)) {
		snprintf(why, UW_WHY, "out of memory");
		return -1;
	}
	for (i = 0; i < n; i++) {
		struct uw_thread *t = &r->t[i];
		int k;

		t->run = r;
		t->idx = i;
		t->nodes = calloc(r->ops, sizeof(*t->nodes));
		t->cbs = calloc(r->ops, sizeof(*t->cbs));
		if (!t->nodes || !t->cbs) {
			snprintf(why, UW_WHY, "out of memory");
			return -1;
		}
		/* Written here: fresh heap pages that calloc() left alone
		 * would fault inside the timed operations.
		 */
		memset(t->cbs, 0, r->ops * sizeof(*t->cbs));
		for (k = 0; k < r->ops; k++) {
			cds_lfht_node_init(&t->nodes[k].node);
			t->nodes[k].key = (unsigned long)i << 20 | k;
		}
	}
	for (i = 0; i < n; i++) {
		err = pthread_create(&r->t[i].tid, NULL, uw_thread_main,
				     &r->t[i]);
		if (err) {
			snprintf(why, UW_WHY, "pthread_create: %s",
				 strerror(err));
			return -1;
		}
	}
	for (i = 0; i < n; i++)
		pthread_join(r->t[i].tid, NULL);
	pthread_barrier_destroy(&r->start);
	return 0;
}

/* From the first thread's start to the last one's end. */
static inline uint64_t uw_span(const struct uw_run *r)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	int i;

	for (i = 0; i < r->nthreads; i++) {
		if (r->t[i].start < lo)
			lo = r->t[i].start;
		if (r->t[i].end > hi)
			hi = r->t[i].end;
	}
	return hi - lo;
}

/* The nodes of a table emptied a grace period ago, and the callbacks
 * after rcu_barrier().
 */
static inline void uw_free(struct uw_run *r)
{
	int i;

	for (i = 0; r->t && i < r->nthreads; i++) {
		free(r->t[i].nodes);
		free(r->t[i].cbs);
	}
	free(r->t);
	r->t = NULL;
}

#endif /* PDA_URCU_WORK_H */
