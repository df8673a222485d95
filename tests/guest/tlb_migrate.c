// SPDX-License-Identifier: GPL-2.0
/*
 * A single-threaded process that flushes on one CPU and makes its next
 * access on another must see the post-flush state there: the CPU it
 * migrated to may still cache the old translation from an earlier visit.
 * On arm64 with CONFIG_ARM64_TLBI_LOCAL the flush is local when the
 * process is alone on its CPU, and the CPU it moves to must flush the
 * ASID before running it ("catch-up").
 *
 * Each round picks a flush, in turn:
 *   mprotect_ro	mprotect(PROT_READ): the next write must fault;
 *   mprotect_none	mprotect(PROT_NONE): the next read must fault;
 *   dontneed		madvise(MADV_DONTNEED): the page must read as zeros;
 *   remap		mmap(MAP_FIXED) of another page of a shared file over
 *			the mapping: its contents must be the new page's.
 * (A kernel without madvise(), CONFIG_ADVISE_SYSCALLS=n, runs no dontneed
 * rounds, logged; madvise() failing otherwise fails the setup, and so does
 * finding no memfd and no writable /dev/shm or /tmp for remap.)
 *
 * - migrate: the process touches the page on CPU b and on CPU a, an
 *   occupier process runs on every CPU but a, the process flushes on a,
 *   pins itself to b (sched_setaffinity(), checked with sched_getcpu())
 *   and accesses the page, then on every other CPU.
 * - lazy: the same without the occupiers: b idles, still holding the
 *   mm, and must get the flush (the process comes back to b without the
 *   mm ever leaving it).
 * - same_cpu: flush and access on one CPU; it runs on a uniprocessor too.
 * - hotplug: the same as migrate, but between the flush and the access
 *   the process takes CPU a, the one it runs on, offline through
 *   /sys/devices/system/cpu/cpuN/online: the kernel moves it, and its
 *   access on the CPU it lands on must see the new state; then it brings
 *   a back online, migrates back to it, and checks again.  Skipped when
 *   no CPU can be taken offline.
 *
 * The /proc/vmstat tlbi_* counters, read around each flush, must show it
 * local (or skipped) when the kernel was booted with tlbi_local=on and
 * the occupiers ran (migrate, same_cpu, hotplug), with catch-up flushes
 * after (but on one CPU), broadcast in lazy, and never local without
 * tlbi_local=on.  Each failure names the
 * CPU (sched_getcpu()), the round, the flush, the address and the value.
 * pda.scale=N multiplies the rounds.
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

#define NFILEPAGES		2
#define ROUNDS_MIGRATE		24
#define ROUNDS_SAME_CPU		16
#define ROUNDS_HOTPLUG		4

enum flush { MPROTECT_RO, MPROTECT_NONE, DONTNEED, REMAP, NR_FLUSH };

static const char *const flush_name[NR_FLUSH] = {
	"mprotect_ro", "mprotect_none", "dontneed", "remap",
};

FIXTURE(mig) {
	struct tlb_env env;
	volatile uint32_t *mem;		/* anonymous, private */
	volatile uint32_t *fmap;	/* a file page, or NULL */
	int fd, fpage;			/* the file page mapped at fmap */
	enum flush flush[NR_FLUSH];
	int nflush;
	int plug[TLB_MAX_CPUS], nplug;	/* hotpluggable CPUs */
};

static int map_file_page(FIXTURE_DATA(mig) *self, int pg)
{
	void *want = (void *)self->fmap, *got;

	got = mmap(want, self->env.page, PROT_READ, MAP_SHARED | MAP_FIXED,
		   self->fd, (off_t)pg * self->env.page);
	if (got == MAP_FAILED)
		return -errno;
	if (got != want)
		return -EADDRINUSE;
	self->fpage = pg;
	return 0;
}

FIXTURE_SETUP(mig)
{
	const char *kind;
	char why[256];
	size_t i;
	int no_dontneed;

	self->fd = -1;
	self->fmap = NULL;
	ASSERT_EQ(0, tlb_env_init(&self->env, 0, why, sizeof(why))) {
		TH_LOG("%s", why);
	}
	self->mem = mmap(NULL, self->env.page, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(self->mem != MAP_FAILED) {
		TH_LOG("mmap: %s", strerror(errno));
	}

	self->flush[self->nflush++] = MPROTECT_RO;
	self->flush[self->nflush++] = MPROTECT_NONE;
	/* Only a kernel without madvise() drops the dontneed rounds. */
	no_dontneed = tlb_dontneed_missing(why, sizeof(why));
	ASSERT_LE(0, no_dontneed) {
		TH_LOG("%s", why);
	}
	if (!no_dontneed)
		self->flush[self->nflush++] = DONTNEED;
	else
		TH_LOG("no dontneed rounds: %s", why);
	self->fd = tlb_file_open(NFILEPAGES * self->env.page, why,
				 sizeof(why), &kind);
	ASSERT_LE(0, self->fd) {
		TH_LOG("%s", why);
	}
	ASSERT_EQ(0, tlb_file_fill(self->fd, NFILEPAGES, self->env.page, why,
				   sizeof(why))) {
		TH_LOG("%s", why);
	}
	self->fmap = tlb_map_guarded(self->env.page);
	ASSERT_TRUE(self->fmap != NULL) {
		TH_LOG("mmap: %s", strerror(errno));
	}
	ASSERT_EQ(0, map_file_page(self, 0));
	self->flush[self->nflush++] = REMAP;
	for (i = 0; i < (size_t)self->env.ncpus; i++)
		if (pda_test_hotpluggable(self->env.cpus[i]))
			self->plug[self->nplug++] = self->env.cpus[i];
	TH_LOG("%d CPU(s), %d hotpluggable, %d flush kinds", self->env.ncpus,
	       self->nplug, self->nflush);
}

FIXTURE_TEARDOWN(mig)
{
	char why[256];
	int i;

	/* Whatever happened, every CPU online again for the next test. */
	for (i = 0; i < self->nplug; i++)
		if (pda_test_is_online(self->plug[i]) == 0)
			pda_test_set_online(self->plug[i], 1);
	EXPECT_EQ(0, tlb_env_fini(&self->env, why, sizeof(why))) {
		TH_LOG("%s", why);
	}
	if (self->mem != MAP_FAILED)
		munmap((void *)self->mem, self->env.page);
	tlb_unmap_guarded((void *)self->fmap, self->env.page);
	if (self->fd >= 0)
		close(self->fd);
}

static uint32_t value(long r)
{
	return 0x3c000000u + (uint32_t)(r & 0xffffff);
}

/* Makes the page accessible again before a round. */
static int prepare(FIXTURE_DATA(mig) *self, enum flush fl)
{
	if (fl == REMAP)
		return 0;
	return mprotect((void *)self->mem, self->env.page,
			PROT_READ | PROT_WRITE) ? -errno : 0;
}

/* The access before the flush: the CPU caches the translation. */
static void touch(FIXTURE_DATA(mig) *self, enum flush fl, long r)
{
	struct tlb_env *e = &self->env;
	size_t n = e->page / 4, bad;
	uint32_t got = 0;
	char buf[96];
	int sig;

	if (fl == REMAP) {
		sig = tlb_probe_scan(self->fmap, n, tlb_file_pattern(self->fpage), 1,
				     &bad, &got);
		if (sig || bad < n)
			tlb_fail(e, "%s: before the flush, file page %d at %p: %s %#x",
				 flush_name[fl], self->fpage, self->fmap,
				 sig ? tlb_sig_str(sig, buf, sizeof(buf)) :
				 "read", got);
		return;
	}
	sig = tlb_probe_write(self->mem, value(r));
	if (!sig)
		sig = tlb_probe_write(self->mem + n - 1, value(r));
	if (sig)
		tlb_fail(e, "%s: before the flush, write to %p: %s",
			 flush_name[fl], self->mem,
			 tlb_sig_str(sig, buf, sizeof(buf)));
}

/* The flush, on the CPU the process is on. */
static int flush(FIXTURE_DATA(mig) *self, enum flush fl)
{
	void *mem = (void *)self->mem;
	size_t ps = self->env.page;

	switch (fl) {
	case MPROTECT_RO:
		return mprotect(mem, ps, PROT_READ) ? -errno : 0;
	case MPROTECT_NONE:
		return mprotect(mem, ps, PROT_NONE) ? -errno : 0;
	case DONTNEED:
		return madvise(mem, ps, MADV_DONTNEED) ? -errno : 0;
	case REMAP:
		return map_file_page(self, (self->fpage + 1) % NFILEPAGES);
	default:
		return -EINVAL;
	}
}

/* The access after the flush must see its result; @when for messages. */
static void check(FIXTURE_DATA(mig) *self, enum flush fl, long r,
		  const char *when)
{
	struct tlb_env *e = &self->env;
	volatile uint32_t *p = self->mem;
	size_t n = e->page / 4, bad;
	uint32_t got = 0;
	char buf[96];
	int sig;

	switch (fl) {
	case MPROTECT_RO:
		sig = tlb_probe_write(p, ~value(r));
		if (!sig)
			tlb_fail(e, "%s: write to %p succeeded %s (stale writable TLB entry)",
				 flush_name[fl], p, when);
		else if (sig != SIGSEGV || tlb_probe_addr() != (void *)p)
			tlb_fail(e, "%s: write to %p %s: %s, expected SIGSEGV at it",
				 flush_name[fl], p, when,
				 tlb_sig_str(sig, buf, sizeof(buf)));
		sig = tlb_probe_read(p, &got);
		if (sig || got != value(r))
			tlb_fail(e, "%s: read of %p %s: %s %#x, expected %#x",
				 flush_name[fl], p, when,
				 sig ? tlb_sig_str(sig, buf, sizeof(buf)) :
				 "read", got, value(r));
		break;
	case MPROTECT_NONE:
		sig = tlb_probe_read(p, &got);
		if (!sig)
			tlb_fail(e, "%s: read of %p (%#x) succeeded %s (stale TLB entry)",
				 flush_name[fl], p, got, when);
		else if (sig != SIGSEGV || tlb_probe_addr() != (void *)p)
			tlb_fail(e, "%s: read of %p %s: %s, expected SIGSEGV at it",
				 flush_name[fl], p, when,
				 tlb_sig_str(sig, buf, sizeof(buf)));
		break;
	case DONTNEED:
		sig = tlb_probe_scan(p, n, 0, 0, &bad, &got);
		if (sig)
			tlb_fail(e, "%s: read of %p %s: %s", flush_name[fl], p,
				 when, tlb_sig_str(sig, buf, sizeof(buf)));
		else if (bad < n)
			tlb_fail(e, "%s: read %#x from %p %s, expected 0 (stale TLB entry: the freed page)",
				 flush_name[fl], got, p + bad, when);
		break;
	case REMAP:
		p = self->fmap;
		sig = tlb_probe_scan(p, n, tlb_file_pattern(self->fpage), 1, &bad,
				     &got);
		if (sig)
			tlb_fail(e, "%s: read of %p %s: %s", flush_name[fl], p,
				 when, tlb_sig_str(sig, buf, sizeof(buf)));
		else if (bad < n)
			tlb_fail(e, "%s: read %#x from %p %s, expected file page %d's %#x%s",
				 flush_name[fl], got, p + bad, when,
				 self->fpage, tlb_file_pattern(self->fpage) + (uint32_t)bad,
				 got == tlb_file_pattern(!self->fpage) + bad ?
				 " (the old page's: stale TLB entry)" : "");
		break;
	default:
		break;
	}
}

/*
 * Touches the page on @b and on @a, sets the other CPUs up as @mode says
 * (TLB_OCCUPIED: the occupiers run everywhere but @a), flushes on @a.
 * 0, or -1 (logged).
 */
static int touch_and_flush(FIXTURE_DATA(mig) *self, enum flush fl, long r,
			   int a, int b, enum tlb_mode mode,
			   struct tlb_paths *paths)
{
	struct tlb_env *e = &self->env;
	int err = prepare(self, fl);

	if (err) {
		tlb_fail(e, "mprotect(PROT_READ|PROT_WRITE): %s",
			 strerror(-err));
		return -1;
	}
	if (b >= 0) {
		if (tlb_move(e, b))
			return -1;
		touch(self, fl, r);
	}
	if (tlb_move(e, a))
		return -1;
	touch(self, fl, r);
	if (tlb_before_flush(e, mode, a))
		return -1;
	tlb_flush_begin(paths);
	err = flush(self, fl);
	tlb_flush_end(paths);
	if (err) {
		tlb_fail(e, "%s: %s", flush_name[fl], strerror(-err));
		return -1;
	}
	return 0;
}

static void migrate(struct __test_metadata *_metadata,
		    FIXTURE_DATA(mig) *self, enum tlb_mode mode)
{
	struct tlb_env *e = &self->env;
	long rounds = tlb_rounds(ROUNDS_MIGRATE), r;
	struct tlb_paths paths;
	uint64_t t0 = pda_test_now_ns();
	int n = e->ncpus, k;
	char when[96];

	tlb_paths_start(&paths, mode, 1);
	for (r = 0; r < rounds && !tlb_failures(e); r++) {
		enum flush fl = self->flush[r % self->nflush];
		int a = e->cpus[r % n];
		int b = e->cpus[(r + 1 + (r / n) % (n - 1)) % n];

		e->round = r;
		if (touch_and_flush(self, fl, r, a, b, mode, &paths))
			break;
		if (tlb_move(e, b))
			break;
		snprintf(when, sizeof(when),
			 "after migrating from cpu %d, where it flushed", a);
		check(self, fl, r, when);
		for (k = 1; k <= n; k++) {
			int c = e->cpus[(r + 1 + k) % n];

			if (c == b || tlb_move(e, c))
				continue;
			check(self, fl, r, c == a ? "back on the flushing cpu" :
			      "on another cpu after the flush");
		}
	}
	TH_LOG("%ld rounds, flush on cpu a then access on cpu b, %s, in %llu ms",
	       r, tlb_mode_name(mode),
	       (unsigned long long)(pda_test_now_ns() - t0) / 1000000);
	TLB_EXPECT_NO_FAILURES(e);
	TLB_PATHS_EXPECT(mode == TLB_OCCUPIED ? "migrate" : "migrate, lazy",
			 &paths);
	pda_stat("migrations", e->migrations);
}

TEST_F_TIMEOUT(mig, migrate, TLB_TIMEOUT)
{
	if (self->env.ncpus < 2)
		SKIP(return, "one online CPU: nowhere to migrate to (same_cpu covers the rest)");
	migrate(_metadata, self, TLB_OCCUPIED);
}

/* Without occupiers: cpu b idles holding the mm, and must get the flush. */
TEST_F_TIMEOUT(mig, lazy, TLB_TIMEOUT)
{
	if (self->env.ncpus < 2)
		SKIP(return, "one online CPU: nowhere to migrate to");
	migrate(_metadata, self, TLB_LAZY);
}

TEST_F_TIMEOUT(mig, same_cpu, TLB_TIMEOUT)
{
	struct tlb_env *e = &self->env;
	long rounds = tlb_rounds(ROUNDS_SAME_CPU), r;
	struct tlb_paths paths;
	uint64_t t0 = pda_test_now_ns();
	int a = e->cpus[0];

	/* The mm runs on cpu a alone: nothing to catch up elsewhere. */
	tlb_paths_start(&paths, TLB_OCCUPIED, 0);
	for (r = 0; r < rounds && !tlb_failures(e); r++) {
		enum flush fl = self->flush[r % self->nflush];

		e->round = r;
		if (touch_and_flush(self, fl, r, a, -1, TLB_OCCUPIED, &paths))
			break;
		check(self, fl, r, "on the cpu that flushed");
	}
	TH_LOG("%ld rounds, flush and access on cpu %d, in %llu ms", r, a,
	       (unsigned long long)(pda_test_now_ns() - t0) / 1000000);
	TLB_EXPECT_NO_FAILURES(e);
	TLB_PATHS_EXPECT("same_cpu", &paths);
}

TEST_F_TIMEOUT(mig, hotplug, TLB_TIMEOUT)
{
	struct tlb_env *e = &self->env;
	long rounds = tlb_rounds(ROUNDS_HOTPLUG), r;
	const char *no = pda_test_no_hotplug();
	struct tlb_paths paths;
	uint64_t t0 = pda_test_now_ns();
	unsigned long cycles = 0;
	int err, now, i;
	char when[128];

	if (no)
		SKIP(return, "%s", no);
	tlb_paths_start(&paths, TLB_OCCUPIED, 1);
	for (r = 0; r < rounds && !tlb_failures(e); r++) {
		enum flush fl = self->flush[r % self->nflush];
		int a = self->plug[r % self->nplug], b = -1;

		for (i = 0; i < e->ncpus; i++)
			if (e->cpus[(r + i) % e->ncpus] != a) {
				b = e->cpus[(r + i) % e->ncpus];
				break;
			}
		e->round = r;
		if (touch_and_flush(self, fl, r, a, b, TLB_OCCUPIED, &paths))
			break;

		/* Offline the CPU we are on: the kernel moves us. */
		err = pda_test_set_online(a, 0);
		if (err) {
			tlb_fail(e, "offline cpu %d: %s", a, strerror(-err));
			break;
		}
		tlb_occupier_online(e, a, 0);
		cycles++;
		now = sched_getcpu();
		if (now == a)
			tlb_fail(e, "still on cpu %d after it went offline",
				 a);
		snprintf(when, sizeof(when),
			 "after cpu %d, where it flushed, went offline under it",
			 a);
		check(self, fl, r, when);

		err = pda_test_set_online(a, 1);
		if (err) {
			tlb_fail(e, "online cpu %d: %s", a, strerror(-err));
			break;
		}
		tlb_occupier_online(e, a, 1);
		if (tlb_move(e, a))
			break;
		snprintf(when, sizeof(when),
			 "back on cpu %d after it came online again", a);
		check(self, fl, r, when);
		if (tlb_move(e, b))
			break;
		check(self, fl, r, "on another cpu after the hotplug cycle");
	}
	TH_LOG("%ld rounds, %lu offline/online cycles of the flushing cpu, in %llu ms",
	       r, cycles,
	       (unsigned long long)(pda_test_now_ns() - t0) / 1000000);
	TLB_EXPECT_NO_FAILURES(e);
	TLB_PATHS_EXPECT("hotplug", &paths);
	pda_stat("hotplug_cycles", cycles);
}

TEST_HARNESS_MAIN
