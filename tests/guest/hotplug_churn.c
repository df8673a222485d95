// SPDX-License-Identifier: GPL-2.0
/*
 * CPU hotplug churn (i386 and ARM): a controller takes random sets of
 * the highest-numbered hotpluggable CPUs (up to MAX_PLUG: all of them on
 * a small machine) offline and brings them back through
 * /sys/devices/system/cpu/cpuN/online, while reader threads (2 per CPU, 16 at most)
 * pin themselves to random online CPUs and read their CPU number through
 * every method there is.  What is checked, and why:
 *
 * - Inside a pinned window (from the moment sched_setaffinity() returns),
 *   every method names the CPU the thread pinned to: sched_getcpu(), the
 *   getcpu syscall, glibc's rseq cpu_id, the thread's getcpu_cache(2)
 *   cache, and on i386 the user segment read (%fs = 0xeb), the CPUNODE
 *   lsl and __vdso_getcpu.  A CPU going offline moves its threads and
 *   rewrites their affinity, so a disagreement is a failure unless
 *   sched_getaffinity() no longer says {cpu}: then hotplug broke the pin
 *   and the window ends (counted, not failed).  Pinning to a CPU that is
 *   just going offline fails with EINVAL; the reader picks again.
 * - Each CPU brought back, and at the end every CPU online at the start,
 *   pinned to by the controller, is named by every method (on i386 the
 *   descriptor also still looks right to lar and lsl): a CPU that comes
 *   back online got its GDT entry, CPUNODE limit and cache writes back.
 * - Nothing lost: the guard words on each side of every registered cache
 *   are never written (the kernel writes 4 bytes only); each reader still
 *   has its own cache registered at the end; the window count each reader
 *   returns to pthread_join() equals its own and the shared tally (no
 *   thread lost or stuck: each made windows); every CPU online at the
 *   start is online again; and the kernel log has no splat.
 *
 * The controller's choices (which CPUs, how many at once, in what order,
 * how long they stay offline) come from pda.seed=N, printed, so a run can
 * be replayed as far as the scheduler allows.  pda.scale=N multiplies the
 * rounds; Bochs runs a quarter of them.  getcpu_cache ENOSYS drops that
 * method (logged) and checks the rest; one online CPU, or none with a
 * writable online file (i386-up; cpu0 on x86 has none), skips (exit 4).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "lib/cpu_methods.h"
#include "lib/getcpu_cache_test.h"
#include "lib/pda_test.h"
#include "lib/stat.h"

#define DEFAULT_SEED		20241130
#define READERS_PER_CPU		2
/*
 * Readers, at most: each offline stops every CPU (stop_machine), which
 * waits for every busy vCPU of an emulated machine; 16 migrating readers
 * keep hotplug racing with pinned reads on hundreds of CPUs too.
 */
#define MAX_READERS		16
/*
 * CPUs the controller takes offline: the highest-numbered hotpluggable
 * ones, as many as this.  Each offline stops every CPU (stop_machine),
 * so on hundreds of emulated CPUs churning all of them would take hours.
 */
#define MAX_PLUG		8
/* CPUs offline at once, at most (and always one CPU left online). */
#define MAX_AT_ONCE		4
/*
 * Controller rounds at pda.scale=1: each takes 1..n-1 random CPUs offline
 * and brings them back, one offline/online cycle per CPU.
 */
#define ROUNDS			16
/* How long CPUs stay offline, and online between cycles: 0..DWELL_US. */
#define DWELL_US		30000
/* Reads of every method per pinned window; a sched_yield() every 8th. */
#define WINDOW_MIN		8
#define WINDOW_MAX		32
#define GUARD_WORDS		4
#define LOGGED			10

/* The methods: cpu_methods.h's table, then the two of the PDA series. */
#define M_CACHE			NR_CPU_METHODS
#if PDA_X86_32
#define M_SEGMENT		(NR_CPU_METHODS + 1)
#define NR_METHODS		(NR_CPU_METHODS + 2)
#else
#define NR_METHODS		(NR_CPU_METHODS + 1)
#endif
#define M_BIT(m)		(1u << (m))

static const char *method_name(size_t m)
{
	if (m < NR_CPU_METHODS)
		return cpu_methods[m].name;
	return m == M_CACHE ? "getcpu_cache" : "segment";
}

/* A getcpu_cache(2) cache with guard words the kernel must not touch. */
struct guarded_cache {
	uint32_t lo[GUARD_WORDS];
	volatile int32_t cpu;
	uint32_t hi[GUARD_WORDS];
};

#define GUARD_LO(j)		(0x6a09e667u + (j) * 0x01010101u)
#define GUARD_HI(j)		(0xbb67ae85u + (j) * 0x01010101u)

static void guard_init(struct guarded_cache *g)
{
	int j;

	for (j = 0; j < GUARD_WORDS; j++) {
		g->lo[j] = GUARD_LO(j);
		g->hi[j] = GUARD_HI(j);
	}
	g->cpu = -1;
}

/* 0 if every guard word is intact, else -1 with the first bad one in @why. */
static int guard_check(const struct guarded_cache *g, char *why, size_t len)
{
	int j;

	for (j = 0; j < GUARD_WORDS; j++) {
		uint32_t lo = __atomic_load_n(&g->lo[j], __ATOMIC_RELAXED);
		uint32_t hi = __atomic_load_n(&g->hi[j], __ATOMIC_RELAXED);

		if (lo != GUARD_LO(j)) {
			snprintf(why, len, "guard at cache-%d is %#x, not %#x",
				 4 * (GUARD_WORDS - j), lo, GUARD_LO(j));
			return -1;
		}
		if (hi != GUARD_HI(j)) {
			snprintf(why, len, "guard at cache+%d is %#x, not %#x",
				 4 * (j + 1), hi, GUARD_HI(j));
			return -1;
		}
	}
	return 0;
}

struct shared {
	const int *cpus;		/* CPUs to pin to: online at the start */
	int ncpus;
	char offline[CPU_SETSIZE];	/* set while the controller has it */
	struct pda_slot *table;		/* the segment's: a slot per possible */
	unsigned int methods;		/* M_BIT(m): method m is checked */
	int nmethods;
	int stop;
	unsigned long windows;		/* every reader adds its windows */
	unsigned long moved;		/* windows on another CPU than the last */
	char log[LOGGED][256];
	int logged;
};

struct reader {
	alignas(64) struct guarded_cache gc;	/* a cache line each */
	struct shared *sh;
	pthread_t tid;
	uint32_t seed;
	unsigned long windows, refused, broken, mismatches;
	uint64_t checks;
	const char *failed;		/* the call that failed, errno in err */
	int err;
};

/* The controller's (the test's main thread's) own cache. */
static struct guarded_cache main_gc;
#if PDA_X86_32
/* The segment's table (shared->table), for read_methods(). */
static struct pda_slot *sh_table;
#endif

/* Every enabled method, read once, into @v. */
static void read_methods(struct guarded_cache *gc, unsigned int methods,
			 int *v)
{
	size_t m;

	for (m = 0; m < NR_CPU_METHODS; m++)
		if (methods & M_BIT(m))
			v[m] = cpu_methods[m].read();
	if (methods & M_BIT(M_CACHE))
		v[M_CACHE] = gc_read(&gc->cpu);
#if PDA_X86_32
	if (methods & M_BIT(M_SEGMENT))
		v[M_SEGMENT] = pda_test_table_cpu(sh_table);
#endif
}

/* 1 if every enabled method in @v says @cpu. */
static int all_say(unsigned int methods, const int *v, int cpu)
{
	size_t m;

	for (m = 0; m < NR_METHODS; m++)
		if ((methods & M_BIT(m)) && v[m] != cpu)
			return 0;
	return 1;
}

static void describe(char *buf, size_t len, unsigned int methods,
		     const int *v, int cpu)
{
	size_t m;
	int n;

	n = snprintf(buf, len, "pinned to %d:", cpu);
	for (m = 0; m < NR_METHODS && n > 0 && (size_t)n < len; m++)
		if (methods & M_BIT(m))
			n += snprintf(buf + n, len - n, " %s %d",
				      method_name(m), v[m]);
}

static void log_once(struct shared *sh, unsigned int methods, const int *v,
		     int cpu)
{
	int n = __atomic_fetch_add(&sh->logged, 1, __ATOMIC_RELAXED);

	if (n < LOGGED)
		describe(sh->log[n], sizeof(sh->log[n]), methods, v, cpu);
}

/* A random CPU the controller has not taken, or -1 if none. */
static int pick_cpu(struct shared *sh, uint32_t r)
{
	int i, n = sh->ncpus;

	for (i = 0; i < n; i++) {
		int cpu = sh->cpus[(r + i) % n];

		if (!__atomic_load_n(&sh->offline[cpu], __ATOMIC_RELAXED))
			return cpu;
	}
	return -1;
}

static void *reader_thread(void *arg)
{
	struct reader *rd = arg;
	struct shared *sh = rd->sh;
	unsigned int methods = sh->methods;
	int v[NR_METHODS], err, prev = -1;

#if PDA_X86_32
	/* Inherited from the controller by clone(); load it anyway. */
	if ((methods & M_BIT(M_SEGMENT)) &&
	    pda_test_take_segment(pda_possible_cpus())) {
		rd->failed = "pda_init_thread";
		rd->err = errno;
		return NULL;
	}
#endif
	if (methods & M_BIT(M_CACHE)) {
		err = gc_set(&rd->gc.cpu);
		if (err) {
			rd->failed = "getcpu_cache SET";
			rd->err = err;
			return NULL;
		}
	}
	while (!__atomic_load_n(&sh->stop, __ATOMIC_RELAXED)) {
		uint32_t r = xorshift32(&rd->seed);
		int cpu = pick_cpu(sh, r);
		int i, n = WINDOW_MIN + (r >> 16) % (WINDOW_MAX - WINDOW_MIN + 1);

		err = cpu < 0 ? -EINVAL : pda_test_pin(cpu);
		if (err == -EINVAL) {
			/* Went offline since we looked: pick again. */
			rd->refused++;
			continue;
		}
		if (err) {
			rd->failed = "sched_setaffinity";
			rd->err = -err;
			break;
		}
		rd->windows++;
		__atomic_fetch_add(&sh->windows, 1, __ATOMIC_RELAXED);
		if (prev >= 0 && cpu != prev)
			__atomic_fetch_add(&sh->moved, 1, __ATOMIC_RELAXED);
		prev = cpu;
		for (i = 0; i < n; i++) {
			if (i % 8 == 7)
				sched_yield();
			read_methods(&rd->gc, methods, v);
			if (all_say(methods, v, cpu)) {
				rd->checks += sh->nmethods;
				continue;
			}
			if (!pda_test_pinned_to(cpu)) {
				/* The CPU went offline under us: window over. */
				rd->broken++;
				break;
			}
			/* Still pinned to @cpu: every method must say it. */
			rd->checks += sh->nmethods;
			if (!rd->mismatches++)
				log_once(sh, methods, v, cpu);
		}
	}
	/* The registration survived the churn, still at our cache. */
	if ((methods & M_BIT(M_CACHE)) && !rd->failed) {
		errno = 0;
		if (gc_get() != &rd->gc.cpu) {
			rd->failed = "getcpu_cache GET: not our cache";
			rd->err = errno ? errno : EINVAL;
		}
	}
	return (void *)(uintptr_t)rd->windows;
}

FIXTURE(churn) {
	struct shared sh;
	struct reader rd[MAX_READERS];
	int nreaders, started, joined;
	int cpus[CPU_SETSIZE], ncpus;	/* online at the start */
	int plug[MAX_PLUG], nplug;	/* the highest with an online file */
	int maxk;			/* CPUs offline at once, at most */
	cpu_set_t start;
	unsigned long seed;
	int klog;
};

/*
 * Pinned to @cpu (the controller), every method names it, and on i386 the
 * segment's descriptor is as the ABI says.  0 if so.
 */
static int check_on_cpu(struct __test_metadata *_metadata, struct shared *sh,
			int cpu)
{
	int v[NR_METHODS], err = pda_test_pin(cpu);
	char buf[256];

	if (err) {
		TH_LOG("cannot pin to cpu %d: %s", cpu, strerror(-err));
		return -1;
	}
	read_methods(&main_gc, sh->methods, v);
	if (!all_say(sh->methods, v, cpu)) {
		describe(buf, sizeof(buf), sh->methods, v, cpu);
		TH_LOG("controller %s", buf);
		return -1;
	}
#if PDA_X86_32
	if (sh->methods & M_BIT(M_SEGMENT)) {
		unsigned int ar = 0, limit = 0;

		if (pda_lar(PDA_USER_SELECTOR, &ar) ||
		    (ar & PDA_LAR_MASK) != PDA_LAR_EXPECT ||
		    pda_lsl(PDA_USER_SELECTOR, &limit) ||
		    limit != 0xffffffffU) {
			TH_LOG("cpu %d: segment descriptor lar %#x lsl %#x",
			       cpu, ar, limit);
			return -1;
		}
	}
#endif
	return 0;
}

FIXTURE_SETUP(churn)
{
	struct shared *sh = &self->sh;
	char why[256];
	size_t m;
	int i;

	memset(sh, 0, sizeof(*sh));
	self->ncpus = pda_test_online(self->cpus, CPU_SETSIZE);
	ASSERT_LT(0, self->ncpus);
	if (self->ncpus < 2)
		SKIP(return, "one online CPU: nothing to take offline");
	ASSERT_EQ(0, cpulist_read(PDA_TEST_ONLINE, &self->start));
	ASSERT_EQ(self->ncpus, CPU_COUNT(&self->start));
	sh->cpus = self->cpus;
	sh->ncpus = self->ncpus;
	for (i = self->ncpus - 1; i >= 0 && self->nplug < MAX_PLUG; i--)
		if (pda_test_hotpluggable(self->cpus[i]))
			self->plug[self->nplug++] = self->cpus[i];
	if (!self->nplug)
		SKIP(return, "no CPU has a writable cpuN/online (CONFIG_HOTPLUG_CPU=n?)");
	/* Always leave one CPU online. */
	self->maxk = self->nplug < self->ncpus ? self->nplug : self->ncpus - 1;
	if (self->maxk > MAX_AT_ONCE)
		self->maxk = MAX_AT_ONCE;

	self->seed = cmdline_seed(DEFAULT_SEED);
	TH_LOG("seed %lu (pda.seed=N replays the controller's choices); %d CPUs, %d hotpluggable%s",
	       self->seed, self->ncpus, self->nplug,
	       pda_test_bochs() ? ", Bochs" : "");

	/* Mainline's methods are never optional here (see cpu_agree.c). */
	for (m = 0; m < NR_CPU_METHODS; m++) {
		const char *err = cpu_method_probe(&cpu_methods[m], why,
						   sizeof(why));

		EXPECT_TRUE(!err) {
			TH_LOG("%s: %s", cpu_methods[m].name, err);
		}
		if (!err)
			sh->methods |= M_BIT(m);
	}
	if (gc_present()) {
		guard_init(&main_gc);
		ASSERT_EQ(0, gc_set(&main_gc.cpu));
		sh->methods |= M_BIT(M_CACHE);
	} else {
		TH_LOG("getcpu_cache (463) is ENOSYS: not checked, the rest are");
	}
#if PDA_X86_32
	sh->table = pda_test_table(pda_possible_cpus());
	ASSERT_TRUE(sh->table != NULL);
	sh_table = sh->table;
	if (!pda_test_take_segment(pda_possible_cpus()))
		sh->methods |= M_BIT(M_SEGMENT);
	else
		TH_LOG("no user per-CPU segment (%s): not checked, the rest are",
		       strerror(errno));
#endif
	sh->nmethods = __builtin_popcount(sh->methods);
	for (m = 0; m < NR_METHODS; m++)
		if (sh->methods & M_BIT(m))
			TH_LOG("checking %s", method_name(m));
	ASSERT_LT(0, sh->nmethods);

	self->klog = klog_open();
	ASSERT_LE(0, self->klog);
}

FIXTURE_TEARDOWN(churn)
{
	int i;

	/* After a failed ASSERT the readers may still run: stop them. */
	__atomic_store_n(&self->sh.stop, 1, __ATOMIC_RELAXED);
	if (!self->joined)
		for (i = 0; i < self->started; i++)
			pthread_join(self->rd[i].tid, NULL);
	/* Whatever happened, leave every CPU online for the next test. */
	for (i = 0; i < self->nplug; i++)
		if (pda_test_is_online(self->plug[i]) == 0)
			pda_test_set_online(self->plug[i], 1);
	if (self->klog >= 0)
		close(self->klog);
	free(self->sh.table);
}

/* @k distinct CPUs of @from (@n of them) into @to, in random order. */
static void pick_some(const int *from, int n, int *to, int k, uint32_t *rng)
{
	int tmp[MAX_PLUG], i, j, t;

	memcpy(tmp, from, n * sizeof(*tmp));
	for (i = 0; i < k; i++) {
		j = i + xorshift32(rng) % (n - i);
		t = tmp[i];
		tmp[i] = tmp[j];
		tmp[j] = t;
		to[i] = tmp[i];
	}
}

TEST_F_TIMEOUT(churn, offline_online, 2400)
{
	struct shared *sh = &self->sh;
	long rounds = ROUNDS * cmdline_scale(), round;
	uint32_t rng = self->seed ? self->seed : 1;
	unsigned long joined_windows = 0, sum = 0, refused = 0, broken = 0;
	unsigned long mismatches = 0, cycles = 0, bad_after = 0;
	uint64_t start_ns = pda_test_now_ns(), checks = 0;
	char why[256], splat[256];
	int i, j, err, nsplat;
	cpu_set_t set;

	if (pda_test_bochs())
		rounds = (rounds + 3) / 4;
	self->nreaders = READERS_PER_CPU * self->ncpus;
	if (self->nreaders > MAX_READERS)
		self->nreaders = MAX_READERS;
	for (i = 0; i < self->nreaders; i++) {
		struct reader *rd = &self->rd[i];

		guard_init(&rd->gc);
		rd->sh = sh;
		rd->seed = (uint32_t)self->seed ^ (0x9e3779b9u * (i + 1));
		if (!rd->seed)
			rd->seed = 1;
		ASSERT_EQ(0, pthread_create(&rd->tid, NULL, reader_thread, rd));
		self->started++;
	}

	for (round = 0; round < rounds; round++) {
		int k = 1 + xorshift32(&rng) % self->maxk, chosen[MAX_PLUG];
		cpu_set_t expect = self->start;
		uint64_t round_ns = pda_test_now_ns(), on_ns, end_ns;

		pick_some(self->plug, self->nplug, chosen, k, &rng);
		for (j = 0; j < k; j++) {
			__atomic_store_n(&sh->offline[chosen[j]], 1,
					 __ATOMIC_RELAXED);
			err = pda_test_set_online(chosen[j], 0);
			ASSERT_EQ(0, err) {
				TH_LOG("cycle %ld: offline cpu %d: %s", round,
				       chosen[j], strerror(-err));
			}
			ASSERT_EQ(0, pda_test_is_online(chosen[j]));
			CPU_CLR(chosen[j], &expect);
		}
		ASSERT_EQ(0, cpulist_read(PDA_TEST_ONLINE, &set));
		ASSERT_TRUE(CPU_EQUAL(&set, &expect)) {
			TH_LOG("cycle %ld: %d online, expected %d", round,
			       CPU_COUNT(&set), CPU_COUNT(&expect));
		}
		/* Offline CPUs are nobody's: pinning to one is refused. */
		ASSERT_EQ(-EINVAL, pda_test_pin(chosen[0]));
		usleep(xorshift32(&rng) % (DWELL_US + 1));

		pick_some(chosen, k, chosen, k, &rng);
		on_ns = pda_test_now_ns();
		for (j = 0; j < k; j++) {
			err = pda_test_set_online(chosen[j], 1);
			ASSERT_EQ(0, err) {
				TH_LOG("cycle %ld: online cpu %d: %s", round,
				       chosen[j], strerror(-err));
			}
			ASSERT_EQ(1, pda_test_is_online(chosen[j]));
			if (check_on_cpu(_metadata, sh, chosen[j]))
				bad_after++;
			__atomic_store_n(&sh->offline[chosen[j]], 0,
					 __ATOMIC_RELAXED);
			cycles++;
		}
		pda_test_unpin();
		/* Progress: on many emulated CPUs a round takes minutes. */
		end_ns = pda_test_now_ns();
		TH_LOG("round %ld/%ld: %d CPU(s), round %llu ms (bringing online %llu ms)",
		       round + 1, rounds, k,
		       (unsigned long long)(end_ns - round_ns) / 1000000,
		       (unsigned long long)(end_ns - on_ns) / 1000000);
		usleep(xorshift32(&rng) % (DWELL_US + 1));
	}

	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < self->started; i++) {
		struct reader *rd = &self->rd[i];
		void *ret = NULL;

		EXPECT_EQ(0, pthread_join(rd->tid, &ret));
		EXPECT_TRUE(!rd->failed) {
			TH_LOG("reader %d: %s: %s", i, rd->failed,
			       strerror(rd->err));
		}
		/* What the thread handed back is what it counted. */
		EXPECT_EQ(rd->windows, (unsigned long)(uintptr_t)ret);
		EXPECT_LT(0, rd->windows) {
			TH_LOG("reader %d never got a pinned window", i);
		}
		EXPECT_EQ(0, guard_check(&rd->gc, why, sizeof(why))) {
			TH_LOG("reader %d: %s", i, why);
		}
		joined_windows += (uintptr_t)ret;
		sum += rd->windows;
		checks += rd->checks;
		refused += rd->refused;
		broken += rd->broken;
		mismatches += rd->mismatches;
	}
	self->joined = 1;
	for (i = 0; i < sh->logged && i < LOGGED; i++)
		TH_LOG("mismatch: %s", sh->log[i]);
	TH_LOG("%ld rounds, %lu CPU offline/online cycles (%d CPUs hotpluggable) in %llu ms",
	       rounds, cycles, self->nplug,
	       (unsigned long long)(pda_test_now_ns() - start_ns) / 1000000);
	TH_LOG("%d readers: %llu checks in %lu windows, %lu pins refused, %lu broken by hotplug",
	       self->nreaders, (unsigned long long)checks, joined_windows,
	       refused, broken);
	TH_LOG("%lu mismatches in pinned windows, %lu after re-online",
	       mismatches, bad_after);
	EXPECT_EQ(sh->windows, joined_windows);
	EXPECT_EQ(sum, joined_windows);
	EXPECT_EQ(0, mismatches);
	EXPECT_EQ(0, bad_after);
	EXPECT_LT(0, checks);
	pda_stat("hotplug_cycles", cycles);
	pda_stat("checks", checks);
	pda_stat("migrations", sh->moved);

	/* All back, each named by every method, the main cache too. */
	ASSERT_EQ(0, cpulist_read(PDA_TEST_ONLINE, &set));
	EXPECT_TRUE(CPU_EQUAL(&set, &self->start));
	for (i = 0; i < self->nplug; i++)
		EXPECT_EQ(1, pda_test_is_online(self->plug[i]));
	for (i = 0; i < self->ncpus; i++)
		EXPECT_EQ(0, check_on_cpu(_metadata, sh, self->cpus[i]));
	pda_test_unpin();
	if (sh->methods & M_BIT(M_CACHE)) {
		EXPECT_EQ((uintptr_t)&main_gc.cpu, (uintptr_t)gc_get());
		EXPECT_EQ(0, guard_check(&main_gc, why, sizeof(why))) {
			TH_LOG("controller: %s", why);
		}
	}
	nsplat = klog_scan(self->klog, splat, sizeof(splat));
	EXPECT_EQ(0, nsplat) {
		TH_LOG("kernel log: %d splat(s), first: %s", nsplat, splat);
	}
}

/*
 * With nothing to take offline the whole program is a skip (exit 4,
 * KSFT_SKIP), which the harness's per-test SKIP() does not give.
 */
int main(int argc, char **argv)
{
	const char *why = pda_test_no_hotplug();

	if (why)
		ksft_exit_skip("%s\n", why);
	return test_harness_run(argc, argv);
}
