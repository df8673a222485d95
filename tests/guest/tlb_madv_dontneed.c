// SPDX-License-Identifier: GPL-2.0
/*
 * madvise(MADV_DONTNEED) on private anonymous memory must make every
 * thread, on every CPU, read zeros once it returns: the pages are freed,
 * and a CPU that kept a stale TLB entry would still read (or write) the
 * old page.  The zap frees no page table, so on arm64 with
 * CONFIG_ARM64_TLBI_LOCAL its flush is leaf-only, the kind that may be
 * local.
 *
 * - occupied: one worker per CPU writes a nonzero pattern into its word
 *   of each of several pages on its CPU (main filled them all first), and
 *   blocks; an occupier process runs on every CPU but the flusher's (the
 *   main thread, on a different CPU each round), which then calls
 *   madvise(MADV_DONTNEED) alone in its mm.  Each worker wakes on its own
 *   CPU and must read all of every page as zero, then again on every
 *   other CPU.  The /proc/vmstat tlbi_* counters, read around each
 *   madvise(), must show every one local (or skipped) when the kernel
 *   was booted with tlbi_local=on, with catch-up flushes after them, and
 *   none local without it.
 * - lazy: the same without the occupiers: the other CPUs idle, still
 *   holding the mm, and must get the flush: every one broadcast.
 * - concurrent: the same with every worker reading (and moving between
 *   CPUs) during the madvise(); a read that started after it returned
 *   must see zeros.
 * - one_cpu: the occupied case with main and two workers on one CPU; it
 *   runs on a uniprocessor too.
 *
 * madvise() failing with ENOSYS (CONFIG_ADVISE_SYSCALLS=n) skips the
 * whole program.  Each failure names the thread, its CPU (sched_getcpu()),
 * the round, the address and the value.  pda.scale=N multiplies the
 * rounds.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "lib/tlb_test.h"

#define NPAGES			4
#define ROUNDS_OCCUPIED		24
#define ROUNDS_CONCURRENT	8
#define ACCESSES		4
#define MOVE_EVERY		3

enum stage { FILL, CHECK_ZERO };
enum phase { PH_FILLED, PH_TO_ZERO, PH_ZERO, PH_STOP, NR_PH };

struct job {
	struct tlb_env *env;
	volatile uint32_t *mem;		/* NPAGES pages */
	enum stage stage;
	int only_cpu;			/* -1: home, then the others */
	long round;
	int phase;
	unsigned long (*count)[NR_PH];
};

FIXTURE(dontneed) {
	struct tlb_env env;
	volatile uint32_t *mem;
};

FIXTURE_SETUP(dontneed)
{
	char why[256];

	ASSERT_EQ(0, tlb_env_init(&self->env, -1, why, sizeof(why))) {
		TH_LOG("%s", why);
	}
	self->mem = mmap(NULL, NPAGES * self->env.page,
			 PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	ASSERT_TRUE(self->mem != MAP_FAILED) {
		TH_LOG("mmap: %s", strerror(errno));
	}
	TH_LOG("%d CPU(s), %d workers, %d pages at %p", self->env.ncpus,
	       self->env.nworkers, NPAGES, self->mem);
}

FIXTURE_TEARDOWN(dontneed)
{
	char why[256];

	EXPECT_EQ(0, tlb_env_fini(&self->env, why, sizeof(why))) {
		TH_LOG("%s", why);
	}
	if (self->mem != MAP_FAILED)
		munmap((void *)self->mem, NPAGES * self->env.page);
}

static size_t words(struct job *j)
{
	return j->env->page / 4;
}

/* Thread @i's word (main: nworkers) in page @pg. */
static volatile uint32_t *slot(struct job *j, int pg, int i)
{
	size_t stride = words(j) / (j->env->nworkers + 1);

	if (stride > 16)
		stride = 16;
	return j->mem + pg * words(j) + i * stride;
}

/* What thread @i writes into page @pg in round @r: never 0. */
static uint32_t value(long r, int pg, int i)
{
	return 0xd0000000u + ((uint32_t)(r & 0xfff) << 16) + (pg << 8) +
	       (i & 0xff);
}

/* Every word of every page is 0; logs the first that is not. */
static void check_zero(struct job *j, const char *when)
{
	size_t bad;
	uint32_t got = 0;
	char buf[96];
	int pg, sig;

	for (pg = 0; pg < NPAGES; pg++) {
		volatile uint32_t *p = j->mem + pg * words(j);

		sig = tlb_probe_scan(p, words(j), 0, 0, &bad, &got);
		if (sig) {
			tlb_fail(j->env, "reading page %p %s: %s", p, when,
				 tlb_sig_str(sig, buf, sizeof(buf)));
			return;
		}
		if (bad < words(j)) {
			tlb_fail(j->env, "read %#x from %p %s, expected 0 (stale TLB entry: the freed page)",
				 got, p + bad, when);
			return;
		}
	}
}

/* Thread @i writes its word of every page; each must read back. */
static void fill(struct job *j, int i)
{
	uint32_t got = 0;
	char buf[96];
	int pg, sig;

	for (pg = 0; pg < NPAGES; pg++) {
		volatile uint32_t *p = slot(j, pg, i);
		uint32_t want = value(j->round, pg, i);

		sig = tlb_probe_write(p, want);
		if (!sig)
			sig = tlb_probe_read(p, &got);
		if (sig)
			tlb_fail(j->env, "write/read of %p: %s", p,
				 tlb_sig_str(sig, buf, sizeof(buf)));
		else if (got != want)
			tlb_fail(j->env, "wrote %#x to %p, read back %#x",
				 want, p, got);
	}
}

static void occupied_job(struct tlb_worker *w, void *arg)
{
	struct job *j = arg;
	int k, n = j->stage == FILL ? 1 : tlb_nvisits(j->env);

	for (k = 0; k < n; k++) {
		int cpu = j->only_cpu >= 0 ? j->only_cpu :
			  tlb_visit(j->env, w->idx, k);

		if (tlb_move(j->env, cpu))
			return;
		if (j->stage == FILL)
			fill(j, w->idx);
		else
			check_zero(j, "after MADV_DONTNEED returned");
		if (j->only_cpu >= 0)
			break;
	}
}

/* Main fills every word of every page (nonzero), then its own slots. */
static void main_fill(struct job *j)
{
	size_t i, n = NPAGES * words(j);

	for (i = 0; i < n; i++)
		j->mem[i] = value(j->round, i / words(j), 0xff) ^ (i << 12);
	fill(j, j->env->nworkers);
}

static void occupied(struct __test_metadata *_metadata,
		     FIXTURE_DATA(dontneed) *self, int only_cpu,
		     enum tlb_mode mode)
{
	struct tlb_env *e = &self->env;
	long rounds = tlb_rounds(ROUNDS_OCCUPIED), r;
	int nworkers = only_cpu < 0 ? e->nworkers : 2;
	struct job j = {
		.env = e, .mem = self->mem, .only_cpu = only_cpu,
	};
	struct tlb_paths paths;
	uint64_t t0 = pda_test_now_ns();

	tlb_paths_start(&paths, mode, only_cpu < 0);
	for (r = 0; r < rounds && !tlb_failures(e); r++) {
		int f = only_cpu >= 0 ? only_cpu : e->cpus[r % e->ncpus];

		j.round = e->round = r;
		if (tlb_move(e, f))
			break;
		j.stage = FILL;
		main_fill(&j);
		tlb_run(e, nworkers, occupied_job, &j);

		if (tlb_before_flush(e, mode, f))
			break;
		tlb_flush_begin(&paths);
		ASSERT_EQ(0, madvise((void *)self->mem, NPAGES * e->page,
				     MADV_DONTNEED)) {
			TH_LOG("round %ld: madvise: %s", r, strerror(errno));
		}
		tlb_flush_end(&paths);
		j.stage = CHECK_ZERO;
		check_zero(&j, "after MADV_DONTNEED returned");
		tlb_run(e, nworkers, occupied_job, &j);
	}
	TH_LOG("%ld rounds, %d workers, %s, in %llu ms", r, nworkers,
	       tlb_mode_name(mode),
	       (unsigned long long)(pda_test_now_ns() - t0) / 1000000);
	TLB_EXPECT_NO_FAILURES(e);
	TLB_PATHS_EXPECT(mode == TLB_OCCUPIED ? "occupied MADV_DONTNEED" :
			 "lazy MADV_DONTNEED", &paths);
	pda_stat("migrations", e->migrations);
}

TEST_F_TIMEOUT(dontneed, occupied, TLB_TIMEOUT)
{
	if (self->env.ncpus < 2)
		SKIP(return, "one online CPU: no other CPU to hold a stale entry (one_cpu covers it)");
	occupied(_metadata, self, -1, TLB_OCCUPIED);
}

TEST_F_TIMEOUT(dontneed, lazy, TLB_TIMEOUT)
{
	if (self->env.ncpus < 2)
		SKIP(return, "one online CPU: no other CPU to hold the mm");
	occupied(_metadata, self, -1, TLB_LAZY);
}

TEST_F_TIMEOUT(dontneed, one_cpu, TLB_TIMEOUT)
{
	occupied(_metadata, self, self->env.cpus[0], TLB_OCCUPIED);
}

/*
 * A concurrent worker reads its word of every page, moving to its next
 * CPU every MOVE_EVERY passes; once the phase read before a pass says
 * madvise() returned, the whole of every page must be zero.
 */
static void concurrent_job(struct tlb_worker *w, void *arg)
{
	struct job *j = arg;
	unsigned long n = 0;
	uint32_t got = 0;
	char buf[96];
	int k = 0, pg;

	for (;;) {
		int before = __atomic_load_n(&j->phase, __ATOMIC_ACQUIRE);
		int after, sig = 0;

		if (before == PH_STOP)
			break;
		if (n++ % MOVE_EVERY == 0 &&
		    tlb_move(j->env, tlb_visit(j->env, w->idx, k++)))
			break;
		if (before >= PH_ZERO) {
			check_zero(j, "after MADV_DONTNEED returned, other threads running");
		} else {
			for (pg = 0; pg < NPAGES && !sig; pg++) {
				volatile uint32_t *p = slot(j, pg, w->idx);
				uint32_t want = value(j->round, pg, w->idx);

				sig = tlb_probe_read(p, &got);
				after = __atomic_load_n(&j->phase,
							__ATOMIC_ACQUIRE);
				if (sig)
					tlb_fail(j->env, "read of %p: %s", p,
						 tlb_sig_str(sig, buf,
							     sizeof(buf)));
				else if (got != want &&
					 !(got == 0 && after >= PH_TO_ZERO))
					tlb_fail(j->env, "read %#x from %p before MADV_DONTNEED returned, expected %#x%s",
						 got, p, want,
						 after >= PH_TO_ZERO ?
						 " or 0" : "");
			}
		}
		__atomic_fetch_add(&j->count[w->idx][before], 1,
				   __ATOMIC_RELAXED);
		if (tlb_failures(j->env))
			break;
	}
}

/* Waits until every worker made ACCESSES passes in phase @ph. */
static int wait_accesses(struct job *j, int ph)
{
	return tlb_wait_counts(j->env, &j->count[0][ph], NR_PH, ACCESSES,
			       "passes in that phase");
}

TEST_F_TIMEOUT(dontneed, concurrent, TLB_TIMEOUT)
{
	struct tlb_env *e = &self->env;
	long rounds = tlb_rounds(ROUNDS_CONCURRENT), r;
	unsigned long count[TLB_MAX_CPUS][NR_PH];
	struct job j = { .env = e, .mem = self->mem, .only_cpu = -1 };
	struct tlb_vmstat before, after;
	uint64_t t0 = pda_test_now_ns();
	int i;

	if (e->ncpus < 2)
		SKIP(return, "one online CPU: nothing runs concurrently");
	j.count = count;
	tlb_vmstat_read(&before);
	for (r = 0; r < rounds && !tlb_failures(e); r++) {
		j.round = e->round = r;
		if (tlb_move(e, e->cpus[r % e->ncpus]))
			break;
		memset(count, 0, sizeof(count));
		/* Every worker's CPU maps every page writable. */
		j.stage = FILL;
		main_fill(&j);
		tlb_run(e, e->nworkers, occupied_job, &j);

		__atomic_store_n(&j.phase, PH_FILLED, __ATOMIC_RELEASE);
		for (i = 0; i < e->nworkers; i++)
			tlb_worker_start(&e->w[i], concurrent_job, &j);
		/* No ASSERT while the workers run: they would never stop. */
		if (!wait_accesses(&j, PH_FILLED)) {
			__atomic_store_n(&j.phase, PH_TO_ZERO,
					 __ATOMIC_RELEASE);
			if (madvise((void *)self->mem, NPAGES * e->page,
				    MADV_DONTNEED))
				tlb_fail(e, "madvise: %s", strerror(errno));
			__atomic_store_n(&j.phase, PH_ZERO, __ATOMIC_RELEASE);
			wait_accesses(&j, PH_ZERO);
		}
		__atomic_store_n(&j.phase, PH_STOP, __ATOMIC_RELEASE);
		for (i = 0; i < e->nworkers; i++)
			tlb_worker_wait(&e->w[i]);
	}
	tlb_vmstat_read(&after);
	TH_LOG("%ld rounds, %d workers running throughout, in %llu ms",
	       r, e->nworkers,
	       (unsigned long long)(pda_test_now_ns() - t0) / 1000000);
	TLB_EXPECT_NO_FAILURES(e);
	TLB_VMSTAT_PRINT("concurrent MADV_DONTNEED", &before, &after);
	pda_stat("migrations", e->migrations);
}

/*
 * Without madvise() there is nothing to test: the whole program skips.
 * madvise() failing any other way is a failure.
 */
int main(int argc, char **argv)
{
	char why[128];
	int missing = tlb_dontneed_missing(why, sizeof(why));

	if (missing > 0)
		ksft_exit_skip("%s\n", why);
	if (missing < 0)
		ksft_exit_fail_msg("%s\n", why);
	return test_harness_run(argc, argv);
}
