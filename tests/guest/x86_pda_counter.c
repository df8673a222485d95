// SPDX-License-Identifier: GPL-2.0
/*
 * Per-CPU counter: T threads x M increments, each one
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
 * - pda_slot_add() (checked) and pda_slot_add_raw() both count (the
 *   checked one where pda.h takes the segment: up to PDA_MAX_CPUS
 *   possible CPUs; above, the arrays still have a slot per possible CPU
 *   and every thread adds through the segment unchecked).
 *
 * And the library's rules around it (tools/lib/pda/pda.h); where it
 * takes no segment (more possible CPUs than PDA_MAX_CPUS) the first two
 * check that it falls back, and mode.segment.mixed skips:
 * - unfilled_table: with 0xeb in %fs but the shared CPU table never
 *   filled (%fs loaded by someone else, or inherited by a thread),
 *   pda_cpu() still returns the right CPU, pinned to each in turn.
 * - mode.locked.mixed: the process mode was decided PDA_MODE_LOCKED (first
 *   use from a thread whose %fs is busy); threads with the segment and
 *   threads with %fs busy then all add with locked atomics, migrating
 *   freely, and the sum is exactly T x M.
 * - mode.segment.mixed: in PDA_MODE_SEGMENT a thread whose %fs is busy gets
 *   EBUSY from pda_slot_add() and adds nothing, the others add through
 *   %fs, and the sum is exactly theirs.
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
 * Increments per thread, up to 4 CPUs (fewer per thread beyond, the same
 * in all).  The same in Bochs, whose guest clock counts instructions:
 * 2 CPUs x 3 threads x M take ~0.1 s of guest time there.
 */
#define M			500000
#define GUARD_SIZE		4096
#define GUARD_BYTE		0xa5

/*
 * Both arrays, a slot per possible CPU, and guards around and between
 * them, in one allocation (arena_alloc()).
 */
static struct arena {
	unsigned char *guard_lo;
	struct pda_slot *all;
	unsigned char *guard_mid;
	struct pda_slot *pinned;
	unsigned char *guard_hi;
	size_t size;
	long possible;
	/* pda.h's checked helpers: only where it takes the segment. */
	int checked;
} arena;

static int arena_alloc(void)
{
	size_t slots = arena.possible * sizeof(struct pda_slot);
	unsigned char *p;

	arena.size = 3 * GUARD_SIZE + 2 * slots;
	p = aligned_alloc(GUARD_SIZE, arena.size);
	if (!p)
		return -1;
	memset(p, 0, arena.size);
	arena.guard_lo = p;
	arena.all = (struct pda_slot *)(p + GUARD_SIZE);
	arena.guard_mid = p + GUARD_SIZE + slots;
	arena.pinned = (struct pda_slot *)(arena.guard_mid + GUARD_SIZE);
	arena.guard_hi = arena.guard_mid + GUARD_SIZE + slots;
	memset(arena.guard_lo, GUARD_BYTE, GUARD_SIZE);
	memset(arena.guard_mid, GUARD_BYTE, GUARD_SIZE);
	memset(arena.guard_hi, GUARD_BYTE, GUARD_SIZE);
	return 0;
}

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

	if (pda_test_take_segment(arena.possible)) {
		w->error = errno;
		return NULL;
	}
	while (i < w->m) {
		uint32_t r = xorshift32(&w->seed);

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
			/*
			 * The checked helper; where pda.h takes no segment it
			 * would add with a lock on slot cpu % PDA_MAX_CPUS,
			 * which the unlocked adds of another CPU share.
			 */
			for (j = 0; j < chunk; j++)
				if (arena.checked)
					pda_slot_inc(arena.all);
				else
					pda_slot_add_raw(arena.all, 1);
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
	self->nthreads = THREADS_PER_CPU * self->ncpus;
	if (self->nthreads > MAX_THREADS)
		self->nthreads = MAX_THREADS;
	/*
	 * The increments of 4 CPUs' threads in all, however many threads:
	 * on hundreds of emulated CPUs the host still has its few cores.
	 */
	self->m = M * cmdline_scale();
	if (self->nthreads > THREADS_PER_CPU * 4)
		self->m = self->m * THREADS_PER_CPU * 4 / self->nthreads;
	self->w = calloc(self->nthreads, sizeof(*self->w));
	ASSERT_NE(0, (uintptr_t)self->w);
	arena.possible = pda_possible_cpus();
	ASSERT_LE(arena.possible, CPU_SETSIZE);
	arena.checked = arena.possible <= PDA_MAX_CPUS;
	ASSERT_EQ(0, arena_alloc());
	ASSERT_EQ(0, pda_test_take_segment(arena.possible)) {
		TH_LOG("no user per-CPU segment: %s", strerror(errno));
	}
}

FIXTURE_TEARDOWN(counter)
{
	free(self->w);
	free(arena.guard_lo);
}

/*
 * Under a second on 4 CPUs.  On 128 emulated CPUs on a 2-core host the
 * same work took from 0.8 s to over 280 s, from boot to boot and between
 * the 32-bit and 64-bit builds; why is not known yet.
 */
TEST_F_TIMEOUT(counter, exact_sum, 2400)
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
	for (c = 0; c < arena.possible; c++) {
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

#define USER_DS		pda_test_user_ds()
#define MIXED_M		100000
/* Why PDA_MODE_SEGMENT is not checked on a larger machine. */
#define PDA_NO_LIBRARY_SEGMENT \
	"more possible CPUs than PDA_MAX_CPUS: pda.h takes no segment, " \
	"so there is no PDA_MODE_SEGMENT (pda_set_mode() refuses it)"

struct unfilled {
	const int *cpus;
	int ncpus;
	int bad;
	int first;
};

/* A thread that inherited 0xeb and never called pda_init_thread(). */
static void *unfilled_thread(void *arg)
{
	struct unfilled *u = arg;
	int i, r;

	for (i = 0; i < u->ncpus; i++) {
		if (pda_test_pin(u->cpus[i])) {
			u->bad++;
			continue;
		}
		for (r = 0; r < 20; r++) {
			int got = pda_cpu();

			if (i == 0 && r == 0)
				u->first = got;
			if (got != u->cpus[i])
				u->bad++;
		}
	}
	return NULL;
}

TEST(unfilled_table)
{
	/* Above PDA_MAX_CPUS pda.h must not fill the table, and fall back. */
	int lib = pda_possible_cpus() <= PDA_MAX_CPUS;
	int cpus[CPU_SETSIZE], n, i, bad = 0;
	struct unfilled u = { 0 };
	pthread_t t;

	n = pda_test_online(cpus, CPU_SETSIZE);
	ASSERT_LT(0, n);
	ASSERT_EQ(lib, pda_available());
	/* A fresh test process: nothing filled the table yet. */
	ASSERT_NE(PDA_TABLE_READY, pda_cpu_table_ready);
	ASSERT_EQ(0, pda_cpu_table[n > 1 ? 1 : 0].s32[0]);
	/* %fs as another library (or a parent thread) would leave it. */
	pda_test_load_seg(PDA_USER_SELECTOR);
	u.cpus = cpus;
	u.ncpus = n;
	ASSERT_EQ(0, pthread_create(&t, NULL, unfilled_thread, &u));
	ASSERT_EQ(0, pthread_join(t, NULL));
	TH_LOG("inherited %%fs, unfilled table: first pda_cpu() %d on cpu %d, %d mismatches",
	       u.first, cpus[0], u.bad);
	EXPECT_EQ(0, u.bad);
	EXPECT_EQ(lib, PDA_TABLE_READY == pda_cpu_table_ready);
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, pda_test_pin(cpus[i]));
		if (pda_cpu() != cpus[i] || (lib && pda_cpu_raw() != cpus[i]))
			bad++;
	}
	EXPECT_EQ(0, bad);
	EXPECT_EQ(lib, PDA_METHOD_SEGMENT == pda_cpu_method());
	pda_test_unpin();
}

struct mixed {
	pthread_t tid;
	int busy;		/* load USER_DS into %fs first */
	uint32_t seed;
	const int *cpus;
	int ncpus;
	unsigned int added, refused, other_err, method;
	int init_ret, init_errno, errno_kept;
};

static PDA_DEFINE_SLOTS(mixed_slots) __attribute__((aligned(4096)));

static void *mixed_thread(void *arg)
{
	struct mixed *m = arg;
	unsigned int i;

	if (m->busy)
		pda_test_load_seg(USER_DS);
	errno = 0;
	m->init_ret = pda_init_thread();
	m->init_errno = errno;
	m->errno_kept = 1;
	for (i = 0; i < MIXED_M; i++) {
		uint32_t r = xorshift32(&m->seed);

		if ((r & 1023) == 0)
			pda_test_pin(m->cpus[(r >> 10) % m->ncpus]);
		else if ((r & 1023) == 1)
			pda_test_unpin();
		else if ((r & 1023) == 2)
			sched_yield();
		errno = 1234;
		if (!pda_slot_inc(mixed_slots)) {
			m->added++;
			if (errno != 1234)
				m->errno_kept = 0;
		} else if (errno == EBUSY) {
			m->refused++;
		} else {
			m->other_err++;
		}
	}
	m->method = pda_cpu_method();
	return NULL;
}

/* Runs 2 threads per CPU, even ones with the segment, odd ones busy. */
static int run_mixed(struct mixed *w, int nthreads, const int *cpus, int n)
{
	int i;

	memset(mixed_slots, 0, sizeof(mixed_slots));
	for (i = 0; i < nthreads; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].busy = i & 1;
		w[i].seed = 0x9e3779b9u * (i + 1);
		w[i].cpus = cpus;
		w[i].ncpus = n;
		if (pthread_create(&w[i].tid, NULL, mixed_thread, &w[i]))
			return -1;
	}
	for (i = 0; i < nthreads; i++)
		pthread_join(w[i].tid, NULL);
	return 0;
}

/* No state: a fixture for its two variants and TEST_F_TIMEOUT. */
FIXTURE(mode) {
	int unused;
};

/* The mode the process decides on before the mixed threads start. */
FIXTURE_VARIANT(mode) {
	int mode;
	const char *name;
};

FIXTURE_VARIANT_ADD(mode, locked) {
	.mode = PDA_MODE_LOCKED,
	.name = "PDA_MODE_LOCKED",
};

FIXTURE_VARIANT_ADD(mode, segment) {
	.mode = PDA_MODE_SEGMENT,
	.name = "PDA_MODE_SEGMENT",
};

FIXTURE_SETUP(mode)
{
}

FIXTURE_TEARDOWN(mode)
{
}

TEST_F_TIMEOUT(mode, mixed, 280)
{
	int segment = variant->mode == PDA_MODE_SEGMENT;
	int cpus[CPU_SETSIZE], n, i, nthreads, refused;
	int lib = pda_possible_cpus() <= PDA_MAX_CPUS;
	struct mixed w[16];
	uint64_t sum, added = 0;

	if (segment && !lib) {
		/* pda.h takes no segment: no thread may ask for the mode. */
		errno = 0;
		ASSERT_EQ(-1, pda_set_mode(PDA_MODE_SEGMENT));
		ASSERT_EQ(EINVAL, errno);
		SKIP(return, PDA_NO_LIBRARY_SEGMENT);
	}
	n = pda_test_online(cpus, CPU_SETSIZE);
	ASSERT_LT(0, n);
	nthreads = 2 * n > 16 ? 16 : 2 * n;
	if (segment) {
		ASSERT_EQ(0, pda_init_thread());
	} else {
		/* The first use comes from a thread whose %fs is someone else's. */
		pda_test_load_seg(USER_DS);
	}
	ASSERT_EQ(variant->mode, pda_mode());
	if (!segment)
		pda_test_load_seg(0);
	errno = 0;
	ASSERT_EQ(-1, pda_set_mode(segment ? PDA_MODE_LOCKED :
				   PDA_MODE_SEGMENT));
	/* Decided already; or, where pda.h takes no segment, never valid. */
	ASSERT_EQ(lib ? EBUSY : EINVAL, errno);
	ASSERT_EQ(0, run_mixed(w, nthreads, cpus, n));
	for (i = 0; i < nthreads; i++) {
		/* In PDA_MODE_SEGMENT a thread whose %fs is busy adds nothing. */
		refused = segment && w[i].busy;
		TH_LOG("thread %d (%s): init %d (%s), %u added, %u refused, %u errors, via %s",
		       i, w[i].busy ? "fs busy" : "segment", w[i].init_ret,
		       w[i].init_ret ? strerror(w[i].init_errno) : "ok",
		       w[i].added, w[i].refused, w[i].other_err,
		       pda_cpu_method_name(w[i].method));
		EXPECT_EQ(w[i].busy || !lib ? -1 : 0, w[i].init_ret);
		if (!lib && !w[i].busy)
			EXPECT_EQ(ENOTSUP, w[i].init_errno);
		EXPECT_EQ(refused ? 0 : MIXED_M, w[i].added);
		if (segment) {
			EXPECT_EQ(refused ? MIXED_M : 0, w[i].refused);
			EXPECT_EQ(0, w[i].other_err);
		}
		EXPECT_TRUE(w[i].errno_kept);
		if (!segment && !w[i].busy)
			EXPECT_EQ(lib, PDA_METHOD_SEGMENT == w[i].method);
		added += w[i].added;
	}
	sum = pda_slots_sum32(mixed_slots, PDA_MAX_CPUS, 0);
	TH_LOG("%s, %d threads (half with %%fs busy%s) x %u: sum %llu",
	       variant->name, nthreads, segment ? ", refused" : "", MIXED_M,
	       (unsigned long long)sum);
	EXPECT_EQ((uint64_t)(segment ? nthreads / 2 : nthreads) * MIXED_M,
		  sum);
	EXPECT_EQ(added, sum);
}

TEST_HARNESS_MAIN
