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

#include "lib/tlb_test.h"

#define ROUNDS_OCCUPIED		24
#define ROUNDS_CONCURRENT	8
/* Accesses each worker makes in each phase of a concurrent round. */
#define ACCESSES		4
/* A concurrent worker moves to its next CPU after this many accesses. */
#define MOVE_EVERY		3

enum stage { TOUCH, CHECK_RO, CHECK_NONE };

/* Concurrent phases: odd ones are "mprotect() in progress". */
enum phase { PH_RW, PH_TO_RO, PH_RO, PH_TO_NONE, PH_NONE, PH_STOP, NR_PH };

struct job {
	struct tlb_env *env;
	volatile uint32_t *page;
	enum stage stage;
	int only_cpu;			/* -1: home, then the others */
	long round;
	/* concurrent */
	int phase;
	unsigned long (*count)[NR_PH];	/* per worker: accesses per phase */
};

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
static volatile uint32_t *slot(struct job *j, int i)
{
	size_t words = j->env->page / 4;
	size_t stride = words / (j->env->nworkers + 1);

	if (stride > 16)
		stride = 16;
	return j->page + i * stride;
}

static uint32_t value(long round, int i)
{
	return 0x6d700000u + ((uint32_t)(round & 0xfff) << 8) + (i & 0xff);
}

/* The checks of @stage for thread @i at its slot, on the CPU it is on. */
static void check(struct job *j, int i)
{
	volatile uint32_t *p = slot(j, i);
	uint32_t want = value(j->round, i), got = 0;
	char buf[96];
	int sig;

	switch (j->stage) {
	case TOUCH:
		sig = tlb_probe_write(p, want);
		if (sig)
			tlb_fail(j->env, "write to %p while PROT_READ|PROT_WRITE: %s",
				 p, tlb_sig_str(sig, buf, sizeof(buf)));
		break;
	case CHECK_RO:
		sig = tlb_probe_write(p, ~want);
		if (!sig)
			tlb_fail(j->env, "write to %p succeeded after mprotect(PROT_READ) returned (stale writable TLB entry)",
				 p);
		else if (sig != SIGSEGV || tlb_probe_addr() != (void *)p ||
			 tlb_probe_code() != SEGV_ACCERR)
			tlb_fail(j->env, "write to %p after mprotect(PROT_READ): %s, expected SIGSEGV (SEGV_ACCERR) at it",
				 p, tlb_sig_str(sig, buf, sizeof(buf)));
		sig = tlb_probe_read(p, &got);
		if (sig)
			tlb_fail(j->env, "read of %p after mprotect(PROT_READ): %s",
				 p, tlb_sig_str(sig, buf, sizeof(buf)));
		else if (got != want)
			tlb_fail(j->env, "read %#x from %p after mprotect(PROT_READ), expected %#x",
				 got, p, want);
		break;
	case CHECK_NONE:
		sig = tlb_probe_read(p, &got);
		if (!sig)
			tlb_fail(j->env, "read of %p (%#x) succeeded after mprotect(PROT_NONE) returned (stale TLB entry)",
				 p, got);
		else if (sig != SIGSEGV || tlb_probe_addr() != (void *)p ||
			 tlb_probe_code() != SEGV_ACCERR)
			tlb_fail(j->env, "read of %p after mprotect(PROT_NONE): %s, expected SIGSEGV (SEGV_ACCERR) at it",
				 p, tlb_sig_str(sig, buf, sizeof(buf)));
		break;
	}
}

/*
 * A worker's job in the occupied rounds: TOUCH on its home CPU; the
 * checks on its home CPU first, then on the others.
 */
static void occupied_job(struct tlb_worker *w, void *arg)
{
	struct job *j = arg;
	int k, n = j->stage == TOUCH ? 1 : tlb_nvisits(j->env);

	for (k = 0; k < n; k++) {
		int cpu = j->only_cpu >= 0 ? j->only_cpu :
			  tlb_visit(j->env, w->idx, k);

		if (tlb_move(j->env, cpu))
			return;
		check(j, w->idx);
		if (j->only_cpu >= 0)
			break;
	}
}

/* Main's checks on its own CPU, then the workers'. */
static void run_stage(struct job *j, enum stage stage, int nworkers)
{
	j->stage = stage;
	check(j, j->env->nworkers);
	tlb_run(j->env, nworkers, occupied_job, j);
}

/*
 * @only_cpu < 0: every CPU, the flusher rotating; else main and two
 * workers on that one CPU.
 */
static void occupied(struct __test_metadata *_metadata,
		     FIXTURE_DATA(mprot) *self, int only_cpu,
		     enum tlb_mode mode)
{
	struct tlb_env *e = &self->env;
	long rounds = tlb_rounds(ROUNDS_OCCUPIED), r;
	int nworkers = only_cpu < 0 ? e->nworkers : 2;
	struct job j = {
		.env = e, .page = self->page, .only_cpu = only_cpu,
	};
	struct tlb_paths paths;
	uint64_t t0 = pda_test_now_ns();
	size_t ps = e->page;
	void *page = (void *)self->page;

	tlb_paths_start(&paths, mode, only_cpu < 0);
	for (r = 0; r < rounds && !tlb_failures(e); r++) {
		int f = only_cpu >= 0 ? only_cpu : e->cpus[r % e->ncpus];

		j.round = e->round = r;
		if (tlb_move(e, f))
			break;
		ASSERT_EQ(0, mprotect(page, ps, PROT_READ | PROT_WRITE));
		run_stage(&j, TOUCH, nworkers);

		if (tlb_before_flush(e, mode, f))
			break;
		tlb_flush_begin(&paths);
		ASSERT_EQ(0, mprotect(page, ps, PROT_READ));
		tlb_flush_end(&paths);
		run_stage(&j, CHECK_RO, nworkers);

		if (tlb_before_flush(e, mode, f))
			break;
		tlb_flush_begin(&paths);
		ASSERT_EQ(0, mprotect(page, ps, PROT_NONE));
		tlb_flush_end(&paths);
		run_stage(&j, CHECK_NONE, nworkers);
	}
	TH_LOG("%ld rounds, %d workers, %s, in %llu ms", r, nworkers,
	       tlb_mode_name(mode),
	       (unsigned long long)(pda_test_now_ns() - t0) / 1000000);
	TLB_EXPECT_NO_FAILURES(e);
	TLB_PATHS_EXPECT(mode == TLB_OCCUPIED ? "occupied mprotect" :
			 "lazy mprotect", &paths);
	pda_stat("migrations", e->migrations);
}

TEST_F_TIMEOUT(mprot, occupied, TLB_TIMEOUT)
{
	if (self->env.ncpus < 2)
		SKIP(return, "one online CPU: no other CPU to hold a stale entry (one_cpu covers it)");
	occupied(_metadata, self, -1, TLB_OCCUPIED);
}

TEST_F_TIMEOUT(mprot, lazy, TLB_TIMEOUT)
{
	if (self->env.ncpus < 2)
		SKIP(return, "one online CPU: no other CPU to hold the mm");
	occupied(_metadata, self, -1, TLB_LAZY);
}

TEST_F_TIMEOUT(mprot, one_cpu, TLB_TIMEOUT)
{
	occupied(_metadata, self, self->env.cpus[0], TLB_OCCUPIED);
}

/*
 * A concurrent worker: accesses its slot while main changes the
 * protection, and moves to its next CPU every MOVE_EVERY accesses.  The
 * phase read before an access says what it must do at least; the one read
 * after it, what it may do at most.
 */
static void concurrent_job(struct tlb_worker *w, void *arg)
{
	struct job *j = arg;
	volatile uint32_t *p = slot(j, w->idx);
	uint32_t want = value(j->round, w->idx), got;
	unsigned long n = 0;
	char buf[96];
	int k = 0;

	for (;;) {
		int before = __atomic_load_n(&j->phase, __ATOMIC_ACQUIRE);
		int after, wsig = 0, rsig;

		if (before == PH_STOP)
			break;
		if (n++ % MOVE_EVERY == 0 &&
		    tlb_move(j->env, tlb_visit(j->env, w->idx, k++)))
			break;
		if (before < PH_TO_NONE)
			wsig = tlb_probe_write(p, want);
		rsig = tlb_probe_read(p, &got);
		after = __atomic_load_n(&j->phase, __ATOMIC_ACQUIRE);

		if (before >= PH_RO && before < PH_TO_NONE && !wsig)
			tlb_fail(j->env, "write to %p succeeded after mprotect(PROT_READ) returned, other threads running",
				 p);
		if (wsig && after == PH_RW)
			tlb_fail(j->env, "write to %p before mprotect(PROT_READ) began: %s",
				 p, tlb_sig_str(wsig, buf, sizeof(buf)));
		if (before >= PH_NONE && !rsig)
			tlb_fail(j->env, "read of %p (%#x) succeeded after mprotect(PROT_NONE) returned, other threads running",
				 p, got);
		if (rsig && after < PH_TO_NONE)
			tlb_fail(j->env, "read of %p before mprotect(PROT_NONE) began: %s",
				 p, tlb_sig_str(rsig, buf, sizeof(buf)));
		if ((wsig && wsig != SIGSEGV) || (rsig && rsig != SIGSEGV))
			tlb_fail(j->env, "access to %p: %s, expected SIGSEGV",
				 p, tlb_sig_str(wsig ? wsig : rsig, buf,
						sizeof(buf)));
		__atomic_fetch_add(&j->count[w->idx][before], 1,
				   __ATOMIC_RELAXED);
		if (tlb_failures(j->env))
			break;
	}
}

/* Waits until every worker made ACCESSES accesses in phase @ph. */
static int wait_accesses(struct job *j, int ph)
{
	return tlb_wait_counts(j->env, &j->count[0][ph], NR_PH, ACCESSES,
			       "accesses in that phase");
}

static void set_phase(struct job *j, int ph)
{
	__atomic_store_n(&j->phase, ph, __ATOMIC_RELEASE);
}

TEST_F_TIMEOUT(mprot, concurrent, TLB_TIMEOUT)
{
	struct tlb_env *e = &self->env;
	long rounds = tlb_rounds(ROUNDS_CONCURRENT), r;
	unsigned long count[TLB_MAX_CPUS][NR_PH];
	struct job j = { .env = e, .page = self->page, .only_cpu = -1 };
	struct tlb_vmstat before, after;
	uint64_t t0 = pda_test_now_ns();
	void *page = (void *)self->page;
	size_t ps = e->page;
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
		ASSERT_EQ(0, mprotect(page, ps, PROT_READ | PROT_WRITE));
		set_phase(&j, PH_RW);
		for (i = 0; i < e->nworkers; i++)
			tlb_worker_start(&e->w[i], concurrent_job, &j);

		/* No ASSERT while the workers run: they would never stop. */
		if (!wait_accesses(&j, PH_RW)) {
			set_phase(&j, PH_TO_RO);
			if (mprotect(page, ps, PROT_READ))
				tlb_fail(e, "mprotect(PROT_READ): %s",
					 strerror(errno));
			set_phase(&j, PH_RO);
		}
		if (!tlb_failures(e) && !wait_accesses(&j, PH_RO)) {
			set_phase(&j, PH_TO_NONE);
			if (mprotect(page, ps, PROT_NONE))
				tlb_fail(e, "mprotect(PROT_NONE): %s",
					 strerror(errno));
			set_phase(&j, PH_NONE);
			wait_accesses(&j, PH_NONE);
		}
		set_phase(&j, PH_STOP);
		for (i = 0; i < e->nworkers; i++)
			tlb_worker_wait(&e->w[i]);
	}
	tlb_vmstat_read(&after);
	TH_LOG("%ld rounds, %d workers running throughout, in %llu ms",
	       r, e->nworkers,
	       (unsigned long long)(pda_test_now_ns() - t0) / 1000000);
	TLB_EXPECT_NO_FAILURES(e);
	TLB_VMSTAT_PRINT("concurrent mprotect", &before, &after);
	pda_stat("migrations", e->migrations);
}

TEST_HARNESS_MAIN
