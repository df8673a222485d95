// SPDX-License-Identifier: GPL-2.0
/*
 * Per-CPU counter (issue 4): T threads x M increments, each one
 * "addl $1, %fs:counters", while the threads migrate: a third re-pin
 * themselves to random CPUs every thousand increments or so, the others run
 * unpinned, oversubscribed 3:1, and half of those yield now and then.
 *
 * - The sum over the slots of all[] is exactly T x M: no increment lost
 *   or doubled, without a lock prefix, because one instruction is never
 *   split by preemption or migration.
 * - The re-pinning threads also bump pinned[] and count, per CPU, what
 *   they added while pinned there; slot c of pinned[] must equal that
 *   count exactly, so every increment landed in the right CPU's slot.
 * - Slots of CPUs that are not online stay 0, so do words 1-15 of every
 *   slot, and guard pages around and between the arrays keep their
 *   pattern: nothing is written outside the slot words.
 * - pda_slot_add() (checked) and pda_slot_add_raw() both count.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "lib/pda_test.h"

#define THREADS_PER_CPU		3
#define MAX_THREADS		192
/*
 * Increments per thread.  The same in Bochs, whose guest clock counts
 * instructions: 2 CPUs x 3 threads x M take ~0.1 s of guest time there.
 */
#define M			500000
#define GUARD_SIZE		4096
#define GUARD_BYTE		0xa5

/* Both arrays, and guards around and between them, in one object. */
static struct arena {
	unsigned char guard_lo[GUARD_SIZE];
	struct pda_slot all[PDA_MAX_CPUS];
	unsigned char guard_mid[GUARD_SIZE];
	struct pda_slot pinned[PDA_MAX_CPUS];
	unsigned char guard_hi[GUARD_SIZE];
} arena __attribute__((aligned(4096)));

enum kind { REPIN, FREE_RAW, FREE_YIELD, KINDS };

struct worker {
	pthread_t tid;
	enum kind kind;
	uint32_t seed;
	const int *cpus;
	int ncpus;
	unsigned int m;
	unsigned int done;
	unsigned int pins;
	int error;
	unsigned int per_cpu[CPU_SETSIZE];
};

static void *count_thread(void *arg)
{
	struct worker *w = arg;
	unsigned int i = 0, chunk, j;

	if (pda_init_thread()) {
		w->error = errno;
		return NULL;
	}
	while (i < w->m) {
		uint32_t r = pda_test_rand(&w->seed);

		chunk = 1 + r % 2048;
		if (chunk > w->m - i)
			chunk = w->m - i;
		switch (w->kind) {
		case REPIN: {
			int cpu = w->cpus[(r >> 12) % w->ncpus];

			if (pda_test_pin(cpu)) {
				w->error = errno;
				return NULL;
			}
			w->pins++;
			for (j = 0; j < chunk; j++) {
				pda_slot_add_raw(arena.all, 1);
				pda_slot_add_raw(arena.pinned, 1);
			}
			w->per_cpu[cpu] += chunk;
			break;
		}
		case FREE_RAW:
			for (j = 0; j < chunk; j++)
				pda_slot_add_raw(arena.all, 1);
			break;
		case FREE_YIELD:
			for (j = 0; j < chunk; j++)
				pda_slot_inc(arena.all);
			if (r & 1)
				sched_yield();
			break;
		default:
			break;
		}
		i += chunk;
	}
	w->done = i;
	return NULL;
}

static int guard_intact(const unsigned char *g, const char *name,
			struct __test_metadata *_metadata)
{
	int i;

	for (i = 0; i < GUARD_SIZE; i++)
		if (g[i] != GUARD_BYTE) {
			TH_LOG("%s[%d] = %#x, written", name, i, g[i]);
			return 0;
		}
	return 1;
}

FIXTURE(counter) {
	int cpus[CPU_SETSIZE];
	int ncpus;
	unsigned int m;
	int nthreads;
	struct worker *w;
};

FIXTURE_SETUP(counter)
{
	self->ncpus = pda_test_online(self->cpus, CPU_SETSIZE);
	ASSERT_LT(0, self->ncpus);
	self->m = M;
	self->nthreads = THREADS_PER_CPU * self->ncpus;
	if (self->nthreads > MAX_THREADS)
		self->nthreads = MAX_THREADS;
	self->w = calloc(self->nthreads, sizeof(*self->w));
	ASSERT_NE(0, (uintptr_t)self->w);
	memset(&arena, 0, sizeof(arena));
	memset(arena.guard_lo, GUARD_BYTE, GUARD_SIZE);
	memset(arena.guard_mid, GUARD_BYTE, GUARD_SIZE);
	memset(arena.guard_hi, GUARD_BYTE, GUARD_SIZE);
	ASSERT_EQ(0, pda_init_thread()) {
		TH_LOG("no user per-CPU segment: %s", strerror(errno));
	}
}

FIXTURE_TEARDOWN(counter)
{
	free(self->w);
}

TEST_F_TIMEOUT(counter, exact_sum, 280)
{
	uint64_t sum_all = 0, sum_pinned = 0, expect_pinned = 0, start, ms;
	uint64_t expected = (uint64_t)self->nthreads * self->m;
	unsigned int pins = 0;
	int i, c, w, online[CPU_SETSIZE] = { 0 }, stray = 0, errors = 0;

	for (i = 0; i < self->ncpus; i++)
		online[self->cpus[i]] = 1;
	start = pda_test_now_ns();
	for (i = 0; i < self->nthreads; i++) {
		struct worker *wk = &self->w[i];

		memset(wk, 0, sizeof(*wk));
		wk->kind = i % KINDS;
		wk->seed = 0x2545f491u * (i + 1);
		wk->cpus = self->cpus;
		wk->ncpus = self->ncpus;
		wk->m = self->m;
		ASSERT_EQ(0, pthread_create(&wk->tid, NULL, count_thread, wk));
	}
	for (i = 0; i < self->nthreads; i++)
		pthread_join(self->w[i].tid, NULL);
	ms = (pda_test_now_ns() - start) / 1000000;

	for (i = 0; i < self->nthreads; i++) {
		if (self->w[i].error || self->w[i].done != self->m) {
			TH_LOG("thread %d: %u of %u done, error %s", i,
			       self->w[i].done, self->m,
			       strerror(self->w[i].error));
			errors++;
		}
		pins += self->w[i].pins;
	}
	for (c = 0; c < PDA_MAX_CPUS; c++) {
		uint32_t a = arena.all[c].u32[0], p = arena.pinned[c].u32[0];
		uint64_t want = 0;

		for (w = 0; w < self->nthreads; w++)
			want += self->w[w].per_cpu[c];
		sum_all += a;
		sum_pinned += p;
		expect_pinned += want;
		if (online[c])
			TH_LOG("cpu %d: all %u, pinned %u (expected %llu)", c,
			       a, p, (unsigned long long)want);
		else if (a || p)
			TH_LOG("cpu %d is not online, but its slots are %u, %u",
			       c, a, p);
		EXPECT_EQ(want, p);
		if (!online[c]) {
			EXPECT_EQ(0, a);
		}
		for (w = 1; w < PDA_SLOT_WORDS; w++)
			if (arena.all[c].u32[w] || arena.pinned[c].u32[w])
				stray++;
	}
	TH_LOG("%d threads x %u = %llu increments in %llu ms (%u re-pins): all[] sums to %llu, pinned[] to %llu of %llu",
	       self->nthreads, self->m, (unsigned long long)expected,
	       (unsigned long long)ms, pins, (unsigned long long)sum_all,
	       (unsigned long long)sum_pinned,
	       (unsigned long long)expect_pinned);
	EXPECT_EQ(0, errors);
	EXPECT_EQ(expected, sum_all);
	EXPECT_EQ(expect_pinned, sum_pinned);
	EXPECT_EQ(0, stray);
	EXPECT_TRUE(guard_intact(arena.guard_lo, "guard_lo", _metadata));
	EXPECT_TRUE(guard_intact(arena.guard_mid, "guard_mid", _metadata));
	EXPECT_TRUE(guard_intact(arena.guard_hi, "guard_hi", _metadata));
}

TEST_HARNESS_MAIN
