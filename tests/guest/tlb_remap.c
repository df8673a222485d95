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

#include "lib/tlb_rounds.h"

#define NFILEPAGES		3
#define ROUNDS_OCCUPIED		24
#define ROUNDS_CONCURRENT	8

/* Concurrent phases (lib/tlb_rounds.h). */
enum phase { PH_MAPPED, PH_REMAPPING, PH_REMAPPED };

FIXTURE(remap) {
	struct tlb_env env;
	int fd;
	volatile uint32_t *addr;
	const char *kind;
	/* The setup's variant and the round's page, for the ops. */
	const FIXTURE_VARIANT(remap) *variant;
	int page;			/* the file page a round maps */
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
static int remap(FIXTURE_DATA(remap) *self, int pg)
{
	if (self->variant->use_munmap) {
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
	self->variant = variant;
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

/* The fixture data of the round's test. */
static FIXTURE_DATA(remap) *self_of(struct tlb_round *rd)
{
	return rd->arg;
}

/* Reads the whole page: 0 and *@bad == words if it is file page @pg. */
static int scan_page(struct tlb_round *rd, int pg, size_t *bad,
		     uint32_t *got)
{
	return tlb_probe_scan(self_of(rd)->addr, words(rd->env),
			      tlb_file_pattern(pg), 1, bad, got);
}

/* Logs what scan_page() found wrong; @when: when the page was read. */
static void report_page(struct tlb_round *rd, int pg, const char *when,
			int sig, size_t bad, uint32_t got)
{
	volatile uint32_t *p = self_of(rd)->addr;
	uint32_t want = tlb_file_pattern(pg) + (uint32_t)bad;
	char buf[96];
	int old;

	if (sig) {
		tlb_fail(rd->env, "read of %p %s: %s", p, when,
			 tlb_sig_str(sig, buf, sizeof(buf)));
		return;
	}
	old = (got - tlb_file_pattern(0)) >> 24;
	if (old >= 0 && old < NFILEPAGES && old != pg &&
	    got - tlb_file_pattern(old) == bad)
		tlb_fail(rd->env, "read %#x from %p %s: file page %d's, not page %d's %#x (stale TLB entry)",
			 got, p + bad, when, old, pg, want);
	else
		tlb_fail(rd->env, "read %#x from %p %s, expected file page %d's %#x",
			 got, p + bad, when, pg, want);
}

/* The whole page reads as file page @pg: 0, else -1 (logged). */
static int check_page(struct tlb_round *rd, int pg, const char *when)
{
	size_t bad;
	uint32_t got = 0;
	int sig = scan_page(rd, pg, &bad, &got);

	if (!sig && bad == words(rd->env))
		return 0;
	report_page(rd, pg, when, sig, bad, got);
	return -1;
}

/* The page mapped before the round's remap (the setup mapped page 0). */
static int old_page(struct tlb_round *rd)
{
	return (self_of(rd)->page + NFILEPAGES - 1) % NFILEPAGES;
}

/* Round r replaces file page r % 3 with (r + 1) % 3. */
static void begin(struct __test_metadata *_metadata, struct tlb_round *rd)
{
	self_of(rd)->page = (rd->round + 1) % NFILEPAGES;
}

/* Reading the whole page caches its translation on the thread's CPU. */
static void fill(struct tlb_round *rd, int i)
{
	check_page(rd, old_page(rd), "before the remap");
}

static int flush(struct tlb_round *rd, int k, char *what, size_t len)
{
	FIXTURE_DATA(remap) *self = self_of(rd);
	int err = remap(self, self->page);

	if (err)
		snprintf(what, len, "%s of file page %d at %p",
			 self->variant->how, self->page, self->addr);
	return err;
}

static void check(struct tlb_round *rd, int i, int k)
{
	check_page(rd, self_of(rd)->page, "after the remap returned");
}

/*
 * A concurrent worker's pass: it reads the page.  Before the remap it
 * must read the old page and not fault; during it anything goes
 * (munmap_map has a hole); once the phase read before the pass says the
 * remap returned, the new page.
 */
static void pass(struct tlb_round *rd, int i, int before)
{
	int old = old_page(rd), sig;
	uint32_t got = 0;
	size_t bad;

	if (before == PH_MAPPED) {
		/* Only if the remap had not begun when it ended. */
		sig = scan_page(rd, old, &bad, &got);
		if ((sig || bad < words(rd->env)) &&
		    tlb_round_phase(rd) == PH_MAPPED)
			report_page(rd, old, "before the remap began", sig,
				    bad, got);
	} else if (before == PH_REMAPPED) {
		check_page(rd, self_of(rd)->page,
			   "after the remap returned, other threads running");
	}
}

static const struct tlb_round_ops remap_ops = {
	.name = "remap",
	.nflushes = 1,
	.rounds = ROUNDS_OCCUPIED,
	.concurrent_rounds = ROUNDS_CONCURRENT,
	.passes = "reads in that phase",
	.begin = begin,
	.fill = fill,
	.flush = flush,
	.check = check,
	.pass = pass,
};

TLB_ROUND_TESTS(remap, &remap_ops)

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
