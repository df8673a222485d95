// SPDX-License-Identifier: GPL-2.0
/*
 * mprotect() must take effect on every CPU before it returns: after
 * PROT_READ no thread may write the page, after PROT_NONE none may read
 * it, whichever CPU it ran on when the page was writable and whichever
 * it runs on now.  A CPU that kept a stale TLB entry lets the access
 * through; the tests catch the SIGSEGV the access must raise
 * (sigsetjmp/siglongjmp), and its absence is the failure.
 *
 * - occupied: one worker thread per CPU writes the page on its CPU (each
 *   CPU's TLB now maps it writable), then blocks; an occupier process
 *   runs on every CPU but the flusher's, so the flusher (the main thread,
 *   a different CPU each round) is the only CPU holding the mm when it
 *   calls mprotect(PROT_READ).  On arm64 with CONFIG_ARM64_TLBI_LOCAL
 *   that flush is local, and each other CPU must flush the ASID before
 *   the mm runs there again.  Each worker wakes on its own CPU (the first
 *   thread of the mm there since the flush) and must fault on a write,
 *   then moves to every other CPU and must fault there too; the same
 *   again with PROT_NONE and reads.  The /proc/vmstat tlbi_* counters,
 *   read around each mprotect(), must show every one local (or skipped)
 *   when the kernel was booted with tlbi_local=on, with catch-up flushes
 *   after them, and none local without it.  (QEMU's TCG flushes a vCPU's whole
 *   TLB when the ASID in a TTBR changes, so there a missed catch-up
 *   cannot show; the lazy and concurrent cases below are what TCG
 *   checks, hardware and KVM check all of them.)
 * - lazy: the same without the occupiers: the other CPUs idle, still
 *   holding the mm (lazily), so the flush must reach them; when a worker
 *   wakes there the mm never left, so a CPU the flush skipped still has
 *   its stale entry.
 * - concurrent: the same with every worker running (and moving between
 *   CPUs) during the mprotect() calls, so the flush must reach CPUs that
 *   are using the mm (the broadcast case).  An access that started after
 *   mprotect() returned must fault; one that faulted before mprotect()
 *   began is a failure too.
 * - one_cpu: the occupied case with the main thread and two workers on
 *   one CPU; it runs on a uniprocessor too.
 *
 * Each failure names the thread, its CPU (sched_getcpu()), the round and
 * the address.  pda.scale=N multiplies the rounds.
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

#define ROUNDS_OCCUPIED		24
#define ROUNDS_CONCURRENT	8

enum stage { TOUCH, CHECK_RO, CHECK_NONE };

/* Concurrent phases (lib/tlb_rounds.h): odd ones are "mprotect() in progress". */
enum phase { PH_RW, PH_TO_RO, PH_RO, PH_TO_NONE, PH_NONE };

FIXTURE(mprot) {
	struct tlb_env env;
	volatile uint32_t *page;
};

FIXTURE_SETUP(mprot)
{
	char why[256];

	ASSERT_EQ(0, tlb_env_init(&self->env, -1, why, sizeof(why))) {
		TH_LOG("%s", why);
	}
	self->page = mmap(NULL, self->env.page, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(self->page != MAP_FAILED) {
		TH_LOG("mmap: %s", strerror(errno));
	}
	TH_LOG("%d CPU(s), %d workers, page %p", self->env.ncpus,
	       self->env.nworkers, self->page);
}

FIXTURE_TEARDOWN(mprot)
{
	char why[256];

	EXPECT_EQ(0, tlb_env_fini(&self->env, why, sizeof(why))) {
		TH_LOG("%s", why);
	}
	if (self->page != MAP_FAILED)
		munmap((void *)self->page, self->env.page);
}

/* The word thread @i (a worker, or nworkers: main) owns in the page. */
static volatile uint32_t *slot(struct tlb_round *rd, int i)
{
	FIXTURE_DATA(mprot) *self = rd->arg;
	size_t words = rd->env->page / 4;
	size_t stride = words / (rd->env->nworkers + 1);

	if (stride > 16)
		stride = 16;
	return self->page + i * stride;
}

static uint32_t value(long round, int i)
{
	return 0x6d700000u + ((uint32_t)(round & 0xfff) << 8) + (i & 0xff);
}

/* The checks of @stage for thread @i at its slot, on the CPU it is on. */
static void check_stage(struct tlb_round *rd, int i, enum stage stage)
{
	volatile uint32_t *p = slot(rd, i);
	uint32_t want = value(rd->round, i), got = 0;
	char buf[96];
	int sig;

	switch (stage) {
	case TOUCH:
		sig = tlb_probe_write(p, want);
		if (sig)
			tlb_fail(rd->env, "write to %p while PROT_READ|PROT_WRITE: %s",
				 p, tlb_sig_str(sig, buf, sizeof(buf)));
		break;
	case CHECK_RO:
		sig = tlb_probe_write(p, ~want);
		if (!sig)
			tlb_fail(rd->env, "write to %p succeeded after mprotect(PROT_READ) returned (stale writable TLB entry)",
				 p);
		else if (sig != SIGSEGV || tlb_probe_addr() != (void *)p ||
			 tlb_probe_code() != SEGV_ACCERR)
			tlb_fail(rd->env, "write to %p after mprotect(PROT_READ): %s, expected SIGSEGV (SEGV_ACCERR) at it",
				 p, tlb_sig_str(sig, buf, sizeof(buf)));
		sig = tlb_probe_read(p, &got);
		if (sig)
			tlb_fail(rd->env, "read of %p after mprotect(PROT_READ): %s",
				 p, tlb_sig_str(sig, buf, sizeof(buf)));
		else if (got != want)
			tlb_fail(rd->env, "read %#x from %p after mprotect(PROT_READ), expected %#x",
				 got, p, want);
		break;
	case CHECK_NONE:
		sig = tlb_probe_read(p, &got);
		if (!sig)
			tlb_fail(rd->env, "read of %p (%#x) succeeded after mprotect(PROT_NONE) returned (stale TLB entry)",
				 p, got);
		else if (sig != SIGSEGV || tlb_probe_addr() != (void *)p ||
			 tlb_probe_code() != SEGV_ACCERR)
			tlb_fail(rd->env, "read of %p after mprotect(PROT_NONE): %s, expected SIGSEGV (SEGV_ACCERR) at it",
				 p, tlb_sig_str(sig, buf, sizeof(buf)));
		break;
	}
}

/* Every round starts from a writable page. */
static void begin(struct __test_metadata *_metadata, struct tlb_round *rd)
{
	FIXTURE_DATA(mprot) *self = rd->arg;

	ASSERT_EQ(0, mprotect((void *)self->page, rd->env->page,
			      PROT_READ | PROT_WRITE));
}

/* The write caches a writable entry on the thread's CPU. */
static void fill(struct tlb_round *rd, int i)
{
	check_stage(rd, i, TOUCH);
}

/* Flush 0 takes the write permission away, flush 1 the read one. */
static int flush(struct tlb_round *rd, int k, char *what, size_t len)
{
	FIXTURE_DATA(mprot) *self = rd->arg;
	int err;

	if (!mprotect((void *)self->page, rd->env->page,
		      k ? PROT_NONE : PROT_READ))
		return 0;
	err = -errno;
	snprintf(what, len, "mprotect(%s)", k ? "PROT_NONE" : "PROT_READ");
	return err;
}

static void check(struct tlb_round *rd, int i, int k)
{
	check_stage(rd, i, k ? CHECK_NONE : CHECK_RO);
}

/*
 * A concurrent worker's pass: it accesses its slot while main changes
 * the protection.  The phase read before an access says what it must do
 * at least; the one read after it, what it may do at most.
 */
static void pass(struct tlb_round *rd, int i, int before)
{
	volatile uint32_t *p = slot(rd, i);
	uint32_t want = value(rd->round, i), got;
	int after, wsig = 0, rsig;
	char buf[96];

	if (before < PH_TO_NONE)
		wsig = tlb_probe_write(p, want);
	rsig = tlb_probe_read(p, &got);
	after = tlb_round_phase(rd);

	if (before >= PH_RO && before < PH_TO_NONE && !wsig)
		tlb_fail(rd->env, "write to %p succeeded after mprotect(PROT_READ) returned, other threads running",
			 p);
	if (wsig && after == PH_RW)
		tlb_fail(rd->env, "write to %p before mprotect(PROT_READ) began: %s",
			 p, tlb_sig_str(wsig, buf, sizeof(buf)));
	if (before >= PH_NONE && !rsig)
		tlb_fail(rd->env, "read of %p (%#x) succeeded after mprotect(PROT_NONE) returned, other threads running",
			 p, got);
	if (rsig && after < PH_TO_NONE)
		tlb_fail(rd->env, "read of %p before mprotect(PROT_NONE) began: %s",
			 p, tlb_sig_str(rsig, buf, sizeof(buf)));
	if ((wsig && wsig != SIGSEGV) || (rsig && rsig != SIGSEGV))
		tlb_fail(rd->env, "access to %p: %s, expected SIGSEGV",
			 p, tlb_sig_str(wsig ? wsig : rsig, buf, sizeof(buf)));
}

static const struct tlb_round_ops mprot_ops = {
	.name = "mprotect",
	.nflushes = 2,
	.rounds = ROUNDS_OCCUPIED,
	.concurrent_rounds = ROUNDS_CONCURRENT,
	.passes = "accesses in that phase",
	.begin = begin,
	.fill = fill,
	.flush = flush,
	.check = check,
	.pass = pass,
};

TLB_ROUND_TESTS(mprot, &mprot_ops)

TEST_HARNESS_MAIN
