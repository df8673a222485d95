// SPDX-License-Identifier: GPL-2.0
/*
 * Replacing a MAP_SHARED file mapping must switch every thread, on every
 * CPU, to the new page: once munmap()+mmap(MAP_FIXED), or mmap(MAP_FIXED)
 * over the live mapping, has returned, reading the address must give the
 * new file page's contents and never the old one's.  The old page stays
 * in the page cache, so a CPU that kept a stale TLB entry still reads it,
 * which the test sees: each file page has its own pattern.
 *
 * The mapping is one page between two PROT_NONE neighbours, so its page
 * table is never freed and the flush is leaf-only: on arm64 with
 * CONFIG_ARM64_TLBI_LOCAL, the kind that may be local.  Three file pages
 * are mapped in turn (round r replaces page r % 3 with (r + 1) % 3).
 *
 * - occupied: one worker per CPU reads the whole page on its CPU, then
 *   blocks; an occupier process runs on every CPU but the flusher's (the
 *   main thread, a different CPU each round), which then remaps alone in
 *   its mm.  Each worker wakes on its CPU and must read the new page,
 *   then on every other CPU.
 * - lazy: the same without the occupiers: the other CPUs idle, still
 *   holding the mm, and must get the flush.
 * - concurrent: the workers read (and move between CPUs) during the
 *   remap; a read that starts after it returned must see the new page.
 * - one_cpu: the occupied case with main and two workers on one CPU.
 *
 * Each runs twice: munmap_map (munmap, then mmap(MAP_FIXED_NOREPLACE))
 * and map_fixed (mmap(MAP_FIXED) over the live mapping).  The file is a
 * memfd, else a file in /dev/shm or /tmp; with none of them the program
 * skips.  The /proc/vmstat tlbi_* counters, read around each remap of
 * the occupied and lazy cases, must show it local (or skipped) when the
 * kernel was booted with tlbi_local=on and the remapping thread ran
 * alone in its mm, with catch-up flushes after, broadcast when the other
 * CPUs held the mm, and never local without tlbi_local=on.  pda.scale=N
 * multiplies the rounds.
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

#define NFILEPAGES		3
#define ROUNDS_OCCUPIED		24
#define ROUNDS_CONCURRENT	8
#define ACCESSES		4
#define MOVE_EVERY		3

enum phase { PH_MAPPED, PH_REMAPPING, PH_REMAPPED, PH_STOP, NR_PH };

struct job {
	struct tlb_env *env;
	volatile uint32_t *addr;	/* the mapping's address */
	int page;			/* the file page mapped there now */
	int only_cpu;			/* -1: home, then the others */
	int home_only;
	int phase;
	unsigned long (*count)[NR_PH];
};

FIXTURE(remap) {
	struct tlb_env env;
	int fd;
	volatile uint32_t *addr;
	const char *kind;
};

FIXTURE_VARIANT(remap) {
	int use_munmap;
	const char *how;
};

FIXTURE_VARIANT_ADD(remap, munmap_map) {
	.use_munmap = 1,
	.how = "munmap+mmap(MAP_FIXED_NOREPLACE)",
};

FIXTURE_VARIANT_ADD(remap, map_fixed) {
	.use_munmap = 0,
	.how = "mmap(MAP_FIXED) over the live mapping",
};

static size_t words(struct tlb_env *e)
{
	return e->page / 4;
}

/* Maps file page @pg at @addr; 0, or -errno. */
static int map_page(FIXTURE_DATA(remap) *self, int pg, int noreplace)
{
	void *want = (void *)self->addr, *got;

	got = mmap(want, self->env.page, PROT_READ,
		   MAP_SHARED | (noreplace ? MAP_FIXED_NOREPLACE : MAP_FIXED),
		   self->fd, (off_t)pg * self->env.page);
	if (got == MAP_FAILED)
		return -errno;
	if (got != want) {
		munmap(got, self->env.page);
		return -EADDRINUSE;
	}
	return 0;
}

/* Replaces what is mapped at the address with file page @pg. */
static int remap(FIXTURE_DATA(remap) *self,
		 const FIXTURE_VARIANT(remap) *variant, int pg)
{
	if (variant->use_munmap) {
		if (munmap((void *)self->addr, self->env.page))
			return -errno;
		return map_page(self, pg, 1);
	}
	return map_page(self, pg, 0);
}

FIXTURE_SETUP(remap)
{
	char why[256];

	self->fd = -1;
	ASSERT_EQ(0, tlb_env_init(&self->env, -1, why, sizeof(why))) {
		TH_LOG("%s", why);
	}
	self->fd = tlb_file_open(NFILEPAGES * self->env.page, why,
				 sizeof(why), &self->kind);
	ASSERT_LE(0, self->fd) {
		TH_LOG("%s", why);
	}
	ASSERT_EQ(0, tlb_file_fill(self->fd, NFILEPAGES, self->env.page, why,
				   sizeof(why))) {
		TH_LOG("%s", why);
	}
	self->addr = tlb_map_guarded(self->env.page);
	ASSERT_TRUE(self->addr != NULL) {
		TH_LOG("mmap: %s", strerror(errno));
	}
	ASSERT_EQ(0, map_page(self, 0, 0));
	TH_LOG("%d CPU(s), %d workers, %s file, mapping at %p, %s",
	       self->env.ncpus, self->env.nworkers, self->kind, self->addr,
	       variant->how);
}

FIXTURE_TEARDOWN(remap)
{
	char why[256];

	EXPECT_EQ(0, tlb_env_fini(&self->env, why, sizeof(why))) {
		TH_LOG("%s", why);
	}
	tlb_unmap_guarded((void *)self->addr, self->env.page);
	if (self->fd >= 0)
		close(self->fd);
}

/* Reads the whole page: 0 and *@bad == words if it is file page @pg. */
static int scan_page(struct job *j, int pg, size_t *bad, uint32_t *got)
{
	return tlb_probe_scan(j->addr, words(j->env), tlb_file_pattern(pg), 1, bad,
			      got);
}

/* Logs what scan_page() found wrong; @when: when the page was read. */
static void report_page(struct job *j, int pg, const char *when, int sig,
			size_t bad, uint32_t got)
{
	volatile uint32_t *p = j->addr;
	uint32_t want = tlb_file_pattern(pg) + (uint32_t)bad;
	char buf[96];
	int old;

	if (sig) {
		tlb_fail(j->env, "read of %p %s: %s", p, when,
			 tlb_sig_str(sig, buf, sizeof(buf)));
		return;
	}
	old = (got - tlb_file_pattern(0)) >> 24;
	if (old >= 0 && old < NFILEPAGES && old != pg &&
	    got - tlb_file_pattern(old) == bad)
		tlb_fail(j->env, "read %#x from %p %s: file page %d's, not page %d's %#x (stale TLB entry)",
			 got, p + bad, when, old, pg, want);
	else
		tlb_fail(j->env, "read %#x from %p %s, expected file page %d's %#x",
			 got, p + bad, when, pg, want);
}

/* The whole page reads as file page @pg: 0, else -1 (logged). */
static int check_page(struct job *j, int pg, const char *when)
{
	size_t bad;
	uint32_t got = 0;
	int sig = scan_page(j, pg, &bad, &got);

	if (!sig && bad == words(j->env))
		return 0;
	report_page(j, pg, when, sig, bad, got);
	return -1;
}

static void occupied_job(struct tlb_worker *w, void *arg)
{
	struct job *j = arg;
	int k, n = j->home_only ? 1 : tlb_nvisits(j->env);

	for (k = 0; k < n; k++) {
		int cpu = j->only_cpu >= 0 ? j->only_cpu :
			  tlb_visit(j->env, w->idx, k);

		if (tlb_move(j->env, cpu))
			return;
		check_page(j, j->page, j->home_only ? "before the remap" :
			   "after the remap returned");
		if (j->only_cpu >= 0)
			break;
	}
}

static void occupied(struct __test_metadata *_metadata,
		     FIXTURE_DATA(remap) *self,
		     const FIXTURE_VARIANT(remap) *variant, int only_cpu,
		     enum tlb_mode mode)
{
	struct tlb_env *e = &self->env;
	long rounds = tlb_rounds(ROUNDS_OCCUPIED), r;
	int nworkers = only_cpu < 0 ? e->nworkers : 2;
	struct job j = {
		.env = e, .addr = self->addr, .only_cpu = only_cpu,
	};
	struct tlb_paths paths;
	uint64_t t0 = pda_test_now_ns();
	int err;

	tlb_paths_start(&paths, mode, only_cpu < 0);
	for (r = 0; r < rounds && !tlb_failures(e); r++) {
		int f = only_cpu >= 0 ? only_cpu : e->cpus[r % e->ncpus];

		e->round = r;
		if (tlb_move(e, f))
			break;
		j.page = r % NFILEPAGES;
		j.home_only = 1;
		check_page(&j, j.page, "before the remap");
		tlb_run(e, nworkers, occupied_job, &j);

		if (tlb_before_flush(e, mode, f))
			break;
		j.page = (r + 1) % NFILEPAGES;
		tlb_flush_begin(&paths);
		err = remap(self, variant, j.page);
		tlb_flush_end(&paths);
		ASSERT_EQ(0, err) {
			TH_LOG("round %ld: %s of file page %d at %p: %s", r,
			       variant->how, j.page, self->addr,
			       strerror(-err));
		}
		j.home_only = 0;
		check_page(&j, j.page, "after the remap returned");
		tlb_run(e, nworkers, occupied_job, &j);
	}
	TH_LOG("%ld rounds, %d workers, %s, in %llu ms", r, nworkers,
	       tlb_mode_name(mode),
	       (unsigned long long)(pda_test_now_ns() - t0) / 1000000);
	TLB_EXPECT_NO_FAILURES(e);
	TLB_PATHS_EXPECT(mode == TLB_OCCUPIED ? "occupied remap" :
			 "lazy remap", &paths);
	pda_stat("migrations", e->migrations);
}

TEST_F_TIMEOUT(remap, occupied, TLB_TIMEOUT)
{
	if (self->env.ncpus < 2)
		SKIP(return, "one online CPU: no other CPU to hold a stale entry (one_cpu covers it)");
	occupied(_metadata, self, variant, -1, TLB_OCCUPIED);
}

TEST_F_TIMEOUT(remap, lazy, TLB_TIMEOUT)
{
	if (self->env.ncpus < 2)
		SKIP(return, "one online CPU: no other CPU to hold the mm");
	occupied(_metadata, self, variant, -1, TLB_LAZY);
}

TEST_F_TIMEOUT(remap, one_cpu, TLB_TIMEOUT)
{
	occupied(_metadata, self, variant, self->env.cpus[0], TLB_OCCUPIED);
}

/*
 * A concurrent worker reads the page over and over, moving to its next
 * CPU every MOVE_EVERY reads.  Before the remap it must read the old page
 * and not fault; during it anything goes (munmap_map has a hole); once
 * the phase read before a pass says the remap returned, the new page.
 */
static void concurrent_job(struct tlb_worker *w, void *arg)
{
	struct job *j = arg;
	unsigned long n = 0;
	int k = 0;

	for (;;) {
		int before = __atomic_load_n(&j->phase, __ATOMIC_ACQUIRE);
		int pg = j->page;

		if (before == PH_STOP)
			break;
		if (n++ % MOVE_EVERY == 0 &&
		    tlb_move(j->env, tlb_visit(j->env, w->idx, k++)))
			break;
		if (before == PH_MAPPED) {
			int old = (pg + NFILEPAGES - 1) % NFILEPAGES, sig;
			size_t bad;
			uint32_t got = 0;

			/* Only if the remap had not begun when it ended. */
			sig = scan_page(j, old, &bad, &got);
			if ((sig || bad < words(j->env)) &&
			    __atomic_load_n(&j->phase, __ATOMIC_ACQUIRE) ==
			    PH_MAPPED)
				report_page(j, old, "before the remap began",
					    sig, bad, got);
		} else if (before == PH_REMAPPED) {
			check_page(j, pg,
				   "after the remap returned, other threads running");
		}
		__atomic_fetch_add(&j->count[w->idx][before], 1,
				   __ATOMIC_RELAXED);
		if (tlb_failures(j->env))
			break;
	}
}

/* Waits until every worker made ACCESSES reads in phase @ph. */
static int wait_accesses(struct job *j, int ph)
{
	return tlb_wait_counts(j->env, &j->count[0][ph], NR_PH, ACCESSES,
			       "reads in that phase");
}

TEST_F_TIMEOUT(remap, concurrent, TLB_TIMEOUT)
{
	struct tlb_env *e = &self->env;
	long rounds = tlb_rounds(ROUNDS_CONCURRENT), r;
	unsigned long count[TLB_MAX_CPUS][NR_PH];
	struct job j = { .env = e, .addr = self->addr, .only_cpu = -1 };
	struct tlb_vmstat before, after;
	uint64_t t0 = pda_test_now_ns();
	int i, err;

	if (e->ncpus < 2)
		SKIP(return, "one online CPU: nothing runs concurrently");
	j.count = count;
	tlb_vmstat_read(&before);
	for (r = 0; r < rounds && !tlb_failures(e); r++) {
		e->round = r;
		if (tlb_move(e, e->cpus[r % e->ncpus]))
			break;
		memset(count, 0, sizeof(count));
		/* The page mapped now is r % 3 (the setup mapped page 0). */
		j.page = (r + 1) % NFILEPAGES;
		__atomic_store_n(&j.phase, PH_MAPPED, __ATOMIC_RELEASE);
		for (i = 0; i < e->nworkers; i++)
			tlb_worker_start(&e->w[i], concurrent_job, &j);
		/* No ASSERT while the workers run: they would never stop. */
		if (!wait_accesses(&j, PH_MAPPED)) {
			__atomic_store_n(&j.phase, PH_REMAPPING,
					 __ATOMIC_RELEASE);
			err = remap(self, variant, j.page);
			if (err)
				tlb_fail(e, "%s of file page %d at %p: %s",
					 variant->how, j.page, self->addr,
					 strerror(-err));
			__atomic_store_n(&j.phase, PH_REMAPPED,
					 __ATOMIC_RELEASE);
			wait_accesses(&j, PH_REMAPPED);
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
	TLB_VMSTAT_PRINT("concurrent remap", &before, &after);
	pda_stat("migrations", e->migrations);
}

/* With no file to map there is nothing to test: the program skips. */
int main(int argc, char **argv)
{
	const char *kind;
	char why[256];
	int fd = tlb_file_open(sysconf(_SC_PAGESIZE), why, sizeof(why), &kind);

	if (fd < 0)
		ksft_exit_skip("%s\n", why);
	close(fd);
	return test_harness_run(argc, argv);
}
