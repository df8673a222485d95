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

#include "lib/tlb_rounds.h"

#define NPAGES			4
#define ROUNDS_OCCUPIED		24
#define ROUNDS_CONCURRENT	8

/* Concurrent phases (lib/tlb_rounds.h). */
enum phase { PH_FILLED, PH_TO_ZERO, PH_ZERO };

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

static volatile uint32_t *mem(struct tlb_round *rd)
{
	FIXTURE_DATA(dontneed) *self = rd->arg;

	return self->mem;
}

static size_t words(struct tlb_round *rd)
{
	return rd->env->page / 4;
}

/* Thread @i's word (main: nworkers) in page @pg. */
static volatile uint32_t *slot(struct tlb_round *rd, int pg, int i)
{
	size_t stride = words(rd) / (rd->env->nworkers + 1);

	if (stride > 16)
		stride = 16;
	return mem(rd) + pg * words(rd) + i * stride;
}

/* What thread @i writes into page @pg in round @r: never 0. */
static uint32_t value(long r, int pg, int i)
{
	return 0xd0000000u + ((uint32_t)(r & 0xfff) << 16) + (pg << 8) +
	       (i & 0xff);
}

/* Every word of every page is 0; logs the first that is not. */
static void check_zero(struct tlb_round *rd, const char *when)
{
	size_t bad;
	uint32_t got = 0;
	char buf[96];
	int pg, sig;

	for (pg = 0; pg < NPAGES; pg++) {
		volatile uint32_t *p = mem(rd) + pg * words(rd);

		sig = tlb_probe_scan(p, words(rd), 0, 0, &bad, &got);
		if (sig) {
			tlb_fail(rd->env, "reading page %p %s: %s", p, when,
				 tlb_sig_str(sig, buf, sizeof(buf)));
			return;
		}
		if (bad < words(rd)) {
			tlb_fail(rd->env, "read %#x from %p %s, expected 0 (stale TLB entry: the freed page)",
				 got, p + bad, when);
			return;
		}
	}
}

/* Main fills every word of every page (nonzero) before the threads' slots. */
static void begin(struct __test_metadata *_metadata, struct tlb_round *rd)
{
	size_t i, n = NPAGES * words(rd);

	for (i = 0; i < n; i++)
		mem(rd)[i] = value(rd->round, i / words(rd), 0xff) ^ (i << 12);
}

/* Thread @i writes its word of every page; each must read back. */
static void fill(struct tlb_round *rd, int i)
{
	uint32_t got = 0;
	char buf[96];
	int pg, sig;

	for (pg = 0; pg < NPAGES; pg++) {
		volatile uint32_t *p = slot(rd, pg, i);
		uint32_t want = value(rd->round, pg, i);

		sig = tlb_probe_write(p, want);
		if (!sig)
			sig = tlb_probe_read(p, &got);
		if (sig)
			tlb_fail(rd->env, "write/read of %p: %s", p,
				 tlb_sig_str(sig, buf, sizeof(buf)));
		else if (got != want)
			tlb_fail(rd->env, "wrote %#x to %p, read back %#x",
				 want, p, got);
	}
}

static int flush(struct tlb_round *rd, int k, char *what, size_t len)
{
	int err;

	if (!madvise((void *)mem(rd), NPAGES * rd->env->page, MADV_DONTNEED))
		return 0;
	err = -errno;
	snprintf(what, len, "madvise");
	return err;
}

static void check(struct tlb_round *rd, int i, int k)
{
	check_zero(rd, "after MADV_DONTNEED returned");
}

/*
 * A concurrent worker's pass: it reads its word of every page; once the
 * phase read before the pass says madvise() returned, the whole of every
 * page must be zero.
 */
static void pass(struct tlb_round *rd, int i, int before)
{
	uint32_t got = 0;
	char buf[96];
	int after, pg, sig = 0;

	if (before >= PH_ZERO) {
		check_zero(rd, "after MADV_DONTNEED returned, other threads running");
		return;
	}
	for (pg = 0; pg < NPAGES && !sig; pg++) {
		volatile uint32_t *p = slot(rd, pg, i);
		uint32_t want = value(rd->round, pg, i);

		sig = tlb_probe_read(p, &got);
		after = tlb_round_phase(rd);
		if (sig)
			tlb_fail(rd->env, "read of %p: %s", p,
				 tlb_sig_str(sig, buf, sizeof(buf)));
		else if (got != want && !(got == 0 && after >= PH_TO_ZERO))
			tlb_fail(rd->env, "read %#x from %p before MADV_DONTNEED returned, expected %#x%s",
				 got, p, want,
				 after >= PH_TO_ZERO ? " or 0" : "");
	}
}

static const struct tlb_round_ops dontneed_ops = {
	.name = "MADV_DONTNEED",
	.nflushes = 1,
	.rounds = ROUNDS_OCCUPIED,
	.concurrent_rounds = ROUNDS_CONCURRENT,
	/* Every worker's CPU maps every page writable. */
	.concurrent_fill = 1,
	.passes = "passes in that phase",
	.begin = begin,
	.fill = fill,
	.flush = flush,
	.check = check,
	.pass = pass,
};

TLB_ROUND_TESTS(dontneed, &dontneed_ops)

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
