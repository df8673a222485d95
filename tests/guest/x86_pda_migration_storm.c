// SPDX-License-Identifier: GPL-2.0
/*
 * Migration storm: 4 threads per online CPU (16 at most) re-pin
 * themselves to random CPUs, as fast as they can.  Inside every pinned window, i.e.
 * from the moment sched_setaffinity() returns, every read of the CPU
 * number through the segment must equal sched_getcpu() and the CPU the
 * thread pinned itself to.  Every 16th window the getcpu syscall is asked
 * too.  At least 10^6 such checks in total, with zero mismatches.
 *
 * The expensive part under emulation is the migration, not the check (a
 * check is a few instructions), so each window makes many checks; the
 * first one of each window, the read right after the migration, is also
 * counted on its own.  The test stops at 10^6 checks; if a time budget
 * runs out first, it fails and says how far it got.
 *
 * The size is the same in Bochs.  Its guest clock counts instructions
 * (ips=200000000 in the harness's bochsrc), and there the whole storm is
 * some 0.1-0.2 s of guest time: 2 CPUs, 8 threads, ~8000 windows.  Only
 * the budget differs, because a guest second costs much more wall time.
 * The soak of make check-full (pda.scale=N) multiplies checks and budget.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "lib/cpu_methods.h"
#include "lib/pda_test.h"
#include "lib/stat.h"

#define THREADS_PER_CPU		4
#define TARGET_CHECKS		1000000ULL
/* Mean checks per pinned window, up to 8 CPUs. */
#define WINDOW			128
/* Give up (and fail) after this long, in guest seconds. */
#define BUDGET_QEMU_S		90
#define BUDGET_BOCHS_S		30
/*
 * Threads, at most: 4 per CPU up to 4 CPUs.  On more emulated CPUs every
 * migration waits for a busy vCPU to get the host's few cores: with 256
 * threads on 64 CPUs the budget ran out at 235,182 checks.  16 threads
 * still migrate across every CPU.
 */
#define MAX_THREADS		16
#define LOGGED			10

struct storm {
	int cpus[CPU_SETSIZE];
	int ncpus;
	struct pda_slot *table;		/* a slot per possible CPU */
	unsigned int window;
	uint64_t target;		/* checks to reach: TARGET_CHECKS x pda.scale */
	uint64_t deadline_ns;
	/* Shared counters, updated once per window. */
	uint64_t checks;
	uint64_t first_checks;
	uint64_t syscall_checks;
	uint64_t windows;
	uint64_t migrations;
	uint64_t mismatches;
	int errors;
	int stop;
	int timed_out;
	/* The first few mismatches, for the log. */
	char log[LOGGED][128];
	int logged;
};

struct worker {
	struct storm *s;
	uint32_t seed;
	pthread_t tid;
};

static void note_mismatch(struct storm *s, int cpu, int seg, int sched,
			  int sys, int nth)
{
	int i = __atomic_fetch_add(&s->logged, 1, __ATOMIC_RELAXED);

	if (i < LOGGED)
		snprintf(s->log[i], sizeof(s->log[i]),
			 "pinned to %d, read %d of its window: segment %d sched_getcpu %d getcpu %d",
			 cpu, nth, seg, sched, sys);
}

static void *storm_thread(void *arg)
{
	struct worker *w = arg;
	struct storm *s = w->s;
	int prev = -1;

	/* Inherited from the creator; load it anyway, as a library would. */
	if (pda_test_take_segment(pda_possible_cpus())) {
		__atomic_fetch_add(&s->errors, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	while (!__atomic_load_n(&s->stop, __ATOMIC_RELAXED)) {
		uint32_t r = xorshift32(&w->seed);
		int cpu = s->cpus[r % s->ncpus];
		unsigned int k = s->window / 2 + (r >> 16) % s->window;
		uint64_t bad = 0, sys_checks = 0;
		unsigned int i;
		int seg, sched;

		if (pda_test_pin(cpu)) {
			__atomic_fetch_add(&s->errors, 1, __ATOMIC_RELAXED);
			break;
		}
		/* The read right after the migration. */
		seg = pda_test_table_cpu(s->table);
		sched = sched_getcpu();
		if (seg != cpu || sched != cpu) {
			bad++;
			note_mismatch(s, cpu, seg, sched, -1, 0);
		}
		for (i = 1; i < k; i++) {
			seg = pda_test_table_cpu(s->table);
			sched = sched_getcpu();
			if (seg == cpu && sched == cpu)
				continue;
			bad++;
			note_mismatch(s, cpu, seg, sched, -1, i);
		}
		if (!(r & 0xf00)) {
			int sys = getcpu_syscall();

			seg = pda_test_table_cpu(s->table);
			sys_checks = 1;
			if (sys != cpu || seg != cpu) {
				bad++;
				note_mismatch(s, cpu, seg, -1, sys, k);
			}
		}
		__atomic_fetch_add(&s->first_checks, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&s->windows, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&s->syscall_checks, sys_checks,
				   __ATOMIC_RELAXED);
		if (prev >= 0 && prev != cpu)
			__atomic_fetch_add(&s->migrations, 1, __ATOMIC_RELAXED);
		prev = cpu;
		if (bad)
			__atomic_fetch_add(&s->mismatches, bad, __ATOMIC_RELAXED);
		if (__atomic_add_fetch(&s->checks, k + sys_checks,
				       __ATOMIC_RELAXED) >= s->target)
			__atomic_store_n(&s->stop, 1, __ATOMIC_RELAXED);
		if (pda_test_now_ns() > s->deadline_ns) {
			__atomic_store_n(&s->timed_out, 1, __ATOMIC_RELAXED);
			__atomic_store_n(&s->stop, 1, __ATOMIC_RELAXED);
		}
	}
	return NULL;
}

FIXTURE(storm) {
	struct storm s;
	struct worker w[MAX_THREADS];
	int nthreads;
};

FIXTURE_SETUP(storm)
{
	int bochs = pda_test_bochs();
	long scale = cmdline_scale();

	memset(&self->s, 0, sizeof(self->s));
	self->s.ncpus = pda_test_online(self->s.cpus, CPU_SETSIZE);
	ASSERT_LT(0, self->s.ncpus);
	/*
	 * Longer windows beyond 8 CPUs: there a migration of an emulated
	 * CPU costs far more than a check (64 CPUs: some 19 windows a second
	 * on 2 host cores), and the checks must still reach the target.
	 */
	self->s.window = WINDOW * (self->s.ncpus > 8 ? self->s.ncpus / 8 : 1);
	self->s.target = TARGET_CHECKS * scale;
	self->s.deadline_ns = pda_test_now_ns() +
		(bochs ? BUDGET_BOCHS_S : BUDGET_QEMU_S) * scale * 1000000000ULL;
	self->nthreads = THREADS_PER_CPU * self->s.ncpus;
	if (self->nthreads > MAX_THREADS)
		self->nthreads = MAX_THREADS;
	self->s.table = pda_test_table(pda_possible_cpus());
	ASSERT_TRUE(self->s.table != NULL);
	ASSERT_EQ(0, pda_test_take_segment(pda_possible_cpus())) {
		TH_LOG("no user per-CPU segment: %s", strerror(errno));
	}
}

FIXTURE_TEARDOWN(storm)
{
	free(self->s.table);
}

TEST_F_TIMEOUT(storm, pinned_windows, 2800)
{
	struct storm *s = &self->s;
	uint64_t start = pda_test_now_ns(), ms;
	int i;

	for (i = 0; i < self->nthreads; i++) {
		self->w[i].s = s;
		self->w[i].seed = 0x9e3779b9u * (i + 1);
		ASSERT_EQ(0, pthread_create(&self->w[i].tid, NULL,
					    storm_thread, &self->w[i]));
	}
	for (i = 0; i < self->nthreads; i++)
		pthread_join(self->w[i].tid, NULL);
	ms = (pda_test_now_ns() - start) / 1000000;

	for (i = 0; i < s->logged && i < LOGGED; i++)
		TH_LOG("%s", s->log[i]);
	TH_LOG("%d CPUs, %d threads, mean window %u: %llu checks (%llu right after a pin, %llu with getcpu), %llu windows, %llu migrations, %llu mismatches, %llu ms%s",
	       s->ncpus, self->nthreads, s->window,
	       (unsigned long long)s->checks,
	       (unsigned long long)s->first_checks,
	       (unsigned long long)s->syscall_checks,
	       (unsigned long long)s->windows,
	       (unsigned long long)s->migrations,
	       (unsigned long long)s->mismatches, (unsigned long long)ms,
	       s->timed_out ? " (time budget ran out)" : "");
	EXPECT_EQ(0, s->errors);
	EXPECT_EQ(0, s->mismatches);
	EXPECT_FALSE(s->timed_out);
	EXPECT_LE(s->target, s->checks);
	pda_stat("checks", s->checks);
	pda_stat("migrations", s->migrations);
	if (s->ncpus > 1)
		EXPECT_LT(0, s->migrations);
}

TEST_HARNESS_MAIN
