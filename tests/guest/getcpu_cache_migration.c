// SPDX-License-Identifier: GPL-2.0
/*
 * getcpu_cache(2) under migration:
 *
 * - pinned to each CPU in turn, the cache holds that CPU as soon as
 *   sched_setaffinity() returns;
 * - a storm of more threads than CPUs, each re-pinning itself to random
 *   CPUs and reading its cache inside each pinned window: zero stale
 *   reads, with glibc's rseq registered in every thread alongside;
 * - a cache whose page was unmapped: the migration that must rewrite it
 *   sends SIGSEGV to the thread that registered it and to no other, and
 *   the kernel log stays clean; the same for a fork() child, whose first
 *   return to user space rewrites the cache (this one also runs on UP).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "lib/getcpu_cache_test.h"
#include "lib/stat.h"

static __thread volatile int32_t tls_cache = -1;

FIXTURE(mig) {
	struct gc_cpus cpus;
	int klog;
};

FIXTURE_SETUP(mig)
{
	if (!gc_present())
		SKIP(return, "getcpu_cache (463) is ENOSYS: no CONFIG_GETCPU_CACHE");
	ASSERT_EQ(0, gc_cpus_online(&self->cpus));
	self->klog = klog_open();
	TH_LOG("%d CPU(s)%s", self->cpus.n, gc_bochs() ? ", Bochs" : "");
}

FIXTURE_TEARDOWN(mig)
{
	GC_EXPECT_KLOG_CLEAN(self->klog);
}

/* ------------------------------------------------------ each CPU */

TEST_F_TIMEOUT(mig, pinned_to_each_cpu, 120)
{
	long rounds = gc_scale(50), r;
	int k, bad = 0, first_cpu = -1, first_seen = -1;

	ASSERT_EQ(0, gc_set(&tls_cache));
	for (r = 0; r < rounds; r++) {
		for (k = 0; k < self->cpus.n; k++) {
			int cpu = self->cpus.id[k], seen;

			ASSERT_EQ(0, gc_pin(cpu));
			seen = gc_read(&tls_cache);
			if (seen != cpu || sched_getcpu() != cpu) {
				if (!bad++) {
					first_cpu = cpu;
					first_seen = seen;
				}
			}
		}
	}
	EXPECT_EQ(0, bad) {
		TH_LOG("%d stale: first pinned to %d, cache %d", bad,
		       first_cpu, first_seen);
	}
	TH_LOG("%ld rounds over %d CPU(s)", rounds, self->cpus.n);
}

/*
 * The kernel stores only after a migration: pinned, preempted by a
 * sibling, sleeping and yielding, a value user space wrote stays.
 * (rseq, registered by glibc, raises TIF_NOTIFY_RESUME on each of these
 * preemptions; the cache must not be written on its account.)
 */
static volatile int sib_stop;

static void *sibling(void *arg)
{
	gc_pin(*(int *)arg);
	while (!sib_stop)
		sched_yield();
	return NULL;
}

TEST_F_TIMEOUT(mig, no_store_without_migration, 60)
{
	int cpu = self->cpus.id[self->cpus.n - 1], i, n;
	struct timespec ts = { 0, 200000 };
	pthread_t t;

	ASSERT_EQ(0, gc_pin(cpu));
	ASSERT_EQ(0, gc_set(&tls_cache));
	ASSERT_EQ(cpu, gc_read(&tls_cache));
	tls_cache = 777;
	sib_stop = 0;
	ASSERT_EQ(0, pthread_create(&t, NULL, sibling, &cpu));
	for (i = 0, n = gc_scale(200); i < n; i++) {
		sched_yield();
		if (i % 10 == 0)
			nanosleep(&ts, NULL);
	}
	sib_stop = 1;
	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_EQ(777, gc_read(&tls_cache));
	EXPECT_EQ(cpu, sched_getcpu());
}

/* ------------------------------------------------------------ storm */

struct storm {
	const struct gc_cpus *cpus;
	double end;
	uint32_t seed;
	long windows, reads, stale, moved, rseq_disagree;
	int err;
	int32_t first_cpu, first_seen;
};

static void *storm_thread(void *arg)
{
	struct storm *s = arg;
	uint32_t rnd = s->seed;
	int32_t last = -1;

	if (gc_set(&tls_cache)) {
		s->err = errno;
		return NULL;
	}
	while (gc_now() < s->end) {
		int cpu = s->cpus->id[xorshift32(&rnd) % s->cpus->n];
		int i, n = 50 + xorshift32(&rnd) % 200;

		if (gc_pin(cpu)) {
			s->err = errno;
			return NULL;
		}
		s->windows++;
		for (i = 0; i < n; i++) {
			int32_t seen = gc_read(&tls_cache);

			s->reads++;
			if (seen != cpu && !s->stale++) {
				s->first_cpu = cpu;
				s->first_seen = seen;
			}
			if (i % 16 == 0 && sched_getcpu() != seen)
				s->rseq_disagree++;
			if (i % 32 == 31)
				sched_yield();
		}
		if (gc_read(&tls_cache) != last)
			s->moved++;
		last = gc_read(&tls_cache);
	}
	return NULL;
}

/*
 * Threads of a storm: twice the CPUs plus one, but no more than this,
 * which still outnumbers the CPUs of a 64-CPU machine; on a larger one
 * each thread's random pins still reach every CPU.
 */
#define STORM_MAX_THREADS	129

TEST_F_TIMEOUT(mig, storm, 1200)
{
	int nthreads = self->cpus.n * 2 + 1, i;
	double secs = (gc_bochs() ? 2.0 : 4.0) * cmdline_scale();
	long windows = 0, reads = 0, stale = 0, moved = 0, disagree = 0;
	struct storm *s;
	pthread_t *t;

	if (self->cpus.n < 2)
		SKIP(return, "one CPU: nothing migrates");
	if (nthreads > STORM_MAX_THREADS)
		nthreads = STORM_MAX_THREADS;
	s = calloc(nthreads, sizeof(*s));
	t = calloc(nthreads, sizeof(*t));
	ASSERT_TRUE(s && t);
	for (i = 0; i < nthreads; i++) {
		s[i].cpus = &self->cpus;
		s[i].end = gc_now() + secs;
		s[i].seed = 0x9e3779b9u * (i + 1);
		ASSERT_EQ(0, pthread_create(&t[i], NULL, storm_thread, &s[i]));
	}
	for (i = 0; i < nthreads; i++) {
		ASSERT_EQ(0, pthread_join(t[i], NULL));
		EXPECT_EQ(0, s[i].err);
		if (s[i].stale)
			TH_LOG("thread %d: %ld stale, first pinned to %d, cache %d",
			       i, s[i].stale, s[i].first_cpu, s[i].first_seen);
		windows += s[i].windows;
		reads += s[i].reads;
		stale += s[i].stale;
		moved += s[i].moved;
		disagree += s[i].rseq_disagree;
	}
	free(s);
	free(t);
	TH_LOG("%d threads on %d CPUs, %ld pinned windows, %ld migrations seen, %ld reads",
	       nthreads, self->cpus.n, windows, moved, reads);
	EXPECT_EQ(0, stale);
	EXPECT_EQ(0, disagree);
	/* It was a storm: most windows moved the thread. */
	EXPECT_LT(windows / 4, moved);
	pda_stat("checks", reads);
	pda_stat("migrations", moved);
}

/* ---------------------------------------------------------- SIGSEGV */

static volatile pid_t segv_tid;
static volatile int segv_count, segv_code;
static void *segv_page;
static long segv_size;

static void segv_handler(int sig, siginfo_t *si, void *uc)
{
	segv_tid = syscall(SYS_gettid);
	segv_count++;
	segv_code = si->si_code;
	/* Give the cache its memory back, so the thread can go on. */
	mmap(segv_page, segv_size, PROT_READ | PROT_WRITE,
	     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
}

struct victim {
	int from, to;
	pid_t tid;
	int step;		/* how far it got: 5 is all the way */
	int32_t after;		/* the cache after moving back */
};

static void *victim_thread(void *arg)
{
	struct victim *v = arg;
	volatile int32_t *cache = segv_page;

	v->tid = syscall(SYS_gettid);
	if (gc_pin(v->from))
		return NULL;
	v->step = 1;
	if (gc_set(cache) || *cache != v->from)
		return NULL;
	v->step = 2;
	if (munmap(segv_page, segv_size))
		return NULL;
	v->step = 3;
	/* The kernel's store on the way back from this one faults. */
	if (gc_pin(v->to))
		return NULL;
	v->step = 4;
	/* Still registered, in the page the handler mapped again. */
	if (gc_pin(v->from))
		return NULL;
	v->after = *cache;
	v->step = 5;
	return NULL;
}

TEST_F_TIMEOUT(mig, sigsegv_on_migration, 60)
{
	struct victim v = { 0 };
	pthread_t t;

	if (self->cpus.n < 2)
		SKIP(return, "one CPU: nothing migrates");
	segv_size = sysconf(_SC_PAGESIZE);
	segv_page = mmap(NULL, segv_size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE((uintptr_t)MAP_FAILED, (uintptr_t)segv_page);
	gc_catch_segv(segv_handler);
	/* A non-zero CPU to come back to: the new page reads 0. */
	v.from = self->cpus.id[self->cpus.n - 1];
	v.to = self->cpus.id[0];
	ASSERT_EQ(0, pthread_create(&t, NULL, victim_thread, &v));
	ASSERT_EQ(0, pthread_join(t, NULL));
	TH_LOG("victim %d reached step %d; SIGSEGV x%d in %d, si_code %d; cache after %d",
	       v.tid, v.step, segv_count, segv_tid, segv_code, v.after);
	EXPECT_EQ(5, v.step);
	EXPECT_EQ(1, segv_count);
	EXPECT_EQ(v.tid, segv_tid);
	EXPECT_NE(getpid(), segv_tid);
	EXPECT_EQ(v.from, v.after);
}

/*
 * A fork() child refreshes its copy of the cache on its first return to
 * user space: with the page gone it dies of SIGSEGV, and the parent,
 * pinned so that it never migrates, is left alone.
 */
TEST_F_TIMEOUT(mig, sigsegv_fork_child, 60)
{
	volatile int32_t *cache;

	ASSERT_EQ(0, gc_pin(self->cpus.id[0]));
	segv_size = sysconf(_SC_PAGESIZE);
	segv_page = mmap(NULL, segv_size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE((uintptr_t)MAP_FAILED, (uintptr_t)segv_page);
	cache = segv_page;
	ASSERT_EQ(0, gc_set(cache));
	ASSERT_EQ(self->cpus.id[0], *cache);
	ASSERT_EQ(0, munmap(segv_page, segv_size));
	GC_EXPECT_FORK_CHILD_SEGV();
	/* Ours stays registered; give it memory before anything moves us. */
	ASSERT_EQ((uintptr_t)segv_page,
		  (uintptr_t)mmap(segv_page, segv_size, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
	EXPECT_EQ((uintptr_t)segv_page, (uintptr_t)gc_get());
}

TEST_HARNESS_MAIN
