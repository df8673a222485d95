// SPDX-License-Identifier: GPL-2.0
/*
 * CPU hotplug: the highest-numbered hotpluggable CPUs (up to MAX_PLUG of
 * them: all on a small machine) are taken offline and brought back,
 * several times, through /sys/devices/system/cpu/cpuN/online, while
 * reader threads (2 per CPU, 16 at most) pin themselves to random CPUs
 * and check the segment read against sched_getcpu() and the CPU they
 * pinned to.
 *
 * - Reads stay right: a disagreement inside a pinned window counts as a
 *   mismatch unless the kernel broke the pin (the CPU went offline under
 *   the thread, which then no longer has the affinity it set).
 * - After each re-online, pinned to that CPU, the segment read, word 1 of
 *   the slot, sched_getcpu(), the getcpu syscall and the CPUNODE lsl all
 *   name it, and the descriptor still looks the same to lar and lsl: the
 *   CPU got its GDT entry when it came back.
 *
 * One online CPU, or none that can go offline: the program skips (exit
 * 4).  cpu0 has no "online" file on x86 and is left alone.
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

#include "lib/cpu_methods.h"
#include "lib/pda_test.h"
#include "lib/stat.h"

#define READERS_PER_CPU		2
/* As in hotplug_churn.c: each offline waits for every busy vCPU. */
#define MAX_READERS		16
#define WINDOW			32
/* Offline/online cycles of each hotpluggable CPU (also in Bochs). */
#define ROUNDS			5
/* How long a CPU stays offline (and online), readers running. */
#define DWELL_US		100000
#define LOGGED			10
/*
 * CPUs cycled: the highest-numbered ones, as many as this.  Each offline
 * stops every CPU (stop_machine), so on hundreds of emulated CPUs a
 * cycle of every one would take hours.
 */
#define MAX_PLUG		8

struct shared {
	int cpus[CPU_SETSIZE];		/* online at the start */
	int ncpus;
	long possible;
	struct pda_slot *table;		/* a slot per possible CPU */
	int stop;
	uint64_t checks;
	uint64_t windows;
	uint64_t moved;			/* windows on another CPU than the last */
	uint64_t refused;		/* pin to an offline CPU: EINVAL */
	uint64_t broken;		/* the kernel moved a pinned thread */
	uint64_t mismatches;
	int errors;
	char log[LOGGED][128];
	int logged;
};

struct reader {
	struct shared *sh;
	pthread_t tid;
	uint32_t seed;
};

static void *reader_thread(void *arg)
{
	struct reader *rd = arg;
	struct shared *sh = rd->sh;
	int prev = -1;

	if (pda_test_take_segment(sh->possible)) {
		__atomic_fetch_add(&sh->errors, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	while (!__atomic_load_n(&sh->stop, __ATOMIC_RELAXED)) {
		uint32_t r = xorshift32(&rd->seed);
		int cpu = sh->cpus[r % sh->ncpus], err, i, seg, sched;
		uint64_t bad = 0, broken = 0;

		err = pda_test_pin(cpu);
		if (err == -EINVAL) {
			/* That CPU is offline right now. */
			__atomic_fetch_add(&sh->refused, 1, __ATOMIC_RELAXED);
			continue;
		}
		if (err) {
			__atomic_fetch_add(&sh->errors, 1, __ATOMIC_RELAXED);
			break;
		}
		for (i = 0; i < WINDOW; i++) {
			seg = pda_test_table_cpu(sh->table);
			sched = sched_getcpu();
			if (seg == cpu && sched == cpu)
				continue;
			if (!pda_test_pinned_to(cpu)) {
				/* Hotplug took the CPU away; window over. */
				broken = 1;
				break;
			}
			/* Still pinned to @cpu, so both reads must say it. */
			if (bad++ == 0) {
				int n = __atomic_fetch_add(&sh->logged, 1,
							   __ATOMIC_RELAXED);

				if (n < LOGGED)
					snprintf(sh->log[n], sizeof(sh->log[n]),
						 "pinned to %d: segment %d (-2: wrong base) sched_getcpu %d",
						 cpu, seg, sched);
			}
		}
		__atomic_fetch_add(&sh->checks, i, __ATOMIC_RELAXED);
		__atomic_fetch_add(&sh->windows, 1, __ATOMIC_RELAXED);
		if (prev >= 0 && cpu != prev)
			__atomic_fetch_add(&sh->moved, 1, __ATOMIC_RELAXED);
		prev = cpu;
		if (broken)
			__atomic_fetch_add(&sh->broken, 1, __ATOMIC_RELAXED);
		if (bad)
			__atomic_fetch_add(&sh->mismatches, bad,
					   __ATOMIC_RELAXED);
	}
	return NULL;
}

/* Pinned to @cpu: every way of naming the CPU names it.  0 if so. */
static int check_on_cpu(struct shared *sh, int cpu,
			struct __test_metadata *_metadata)
{
	unsigned int ar = 0, limit = 0;
	int seg, w1, sched, sys, lsl;

	if (pda_test_pin(cpu)) {
		TH_LOG("cannot pin to cpu %d after re-online: %s", cpu,
		       strerror(errno));
		return -1;
	}
	seg = pda_read32_raw(&sh->table[0].u32[0]);
	w1 = pda_read32_raw(&sh->table[0].u32[1]);
	sched = sched_getcpu();
	sys = getcpu_syscall();
	lsl = pda_test_cpunode();
	if (pda_lar(PDA_USER_SELECTOR, &ar) ||
	    (ar & PDA_LAR_MASK) != PDA_LAR_EXPECT ||
	    pda_lsl(PDA_USER_SELECTOR, &limit) || limit != 0xffffffffU) {
		TH_LOG("cpu %d: descriptor lar %#x lsl %#x", cpu, ar, limit);
		return -1;
	}
	if (seg != cpu || w1 != PDA_TEST_WORD1(cpu) || sched != cpu ||
	    sys != cpu || lsl != cpu) {
		TH_LOG("cpu %d after re-online: segment %d word1 %#x sched_getcpu %d getcpu %d lsl %d",
		       cpu, seg, w1, sched, sys, lsl);
		return -1;
	}
	return 0;
}

FIXTURE(hotplug) {
	struct shared sh;
	struct reader rd[MAX_READERS];
	int nreaders;
	int plug[CPU_SETSIZE];
	int nplug;
};

FIXTURE_SETUP(hotplug)
{
	int i;

	memset(&self->sh, 0, sizeof(self->sh));
	self->sh.ncpus = pda_test_online(self->sh.cpus, CPU_SETSIZE);
	ASSERT_LT(0, self->sh.ncpus);
	if (self->sh.ncpus < 2)
		SKIP(return, "one online CPU: nothing to take offline");
	self->nplug = 0;
	for (i = self->sh.ncpus - 1; i >= 0 && self->nplug < MAX_PLUG; i--)
		if (pda_test_hotpluggable(self->sh.cpus[i]))
			self->plug[self->nplug++] = self->sh.cpus[i];
	if (!self->nplug)
		SKIP(return, "no CPU has a writable cpuN/online (CONFIG_HOTPLUG_CPU=n?)");
	self->sh.possible = pda_possible_cpus();
	self->sh.table = pda_test_table(self->sh.possible);
	ASSERT_TRUE(self->sh.table != NULL);
	ASSERT_EQ(0, pda_test_take_segment(self->sh.possible)) {
		TH_LOG("no user per-CPU segment: %s", strerror(errno));
	}
}

FIXTURE_TEARDOWN(hotplug)
{
	int i;

	/* Whatever happened, leave every CPU online for the next test. */
	for (i = 0; i < self->sh.ncpus; i++)
		if (pda_test_is_online(self->sh.cpus[i]) == 0)
			pda_test_set_online(self->sh.cpus[i], 1);
	free(self->sh.table);
}

TEST_F_TIMEOUT(hotplug, offline_online, 2800)
{
	int rounds = ROUNDS * cmdline_scale(), dwell = DWELL_US;
	struct shared *sh = &self->sh;
	int round, i, cycles = 0, bad_after = 0, err;
	uint64_t start = pda_test_now_ns();
	cpu_set_t set;

	self->nreaders = READERS_PER_CPU * sh->ncpus;
	if (self->nreaders > MAX_READERS)
		self->nreaders = MAX_READERS;
	for (i = 0; i < self->nreaders; i++) {
		self->rd[i].sh = sh;
		self->rd[i].seed = 0x6c078965u * (i + 1);
		ASSERT_EQ(0, pthread_create(&self->rd[i].tid, NULL,
					    reader_thread, &self->rd[i]));
	}

	for (round = 0; round < rounds; round++) {
		uint64_t round_ns = pda_test_now_ns();

		for (i = 0; i < self->nplug; i++) {
			int cpu = self->plug[i];

			usleep(dwell);
			err = pda_test_set_online(cpu, 0);
			ASSERT_EQ(0, err) {
				TH_LOG("offline cpu %d: %s", cpu,
				       strerror(-err));
			}
			ASSERT_EQ(0, pda_test_is_online(cpu));
			ASSERT_EQ(0, cpulist_read(PDA_TEST_ONLINE, &set));
			ASSERT_FALSE(CPU_ISSET(cpu, &set));
			/* Not ours any more: pinning to it is refused. */
			ASSERT_EQ(-EINVAL, pda_test_pin(cpu));
			usleep(dwell);
			err = pda_test_set_online(cpu, 1);
			ASSERT_EQ(0, err) {
				TH_LOG("online cpu %d: %s", cpu,
				       strerror(-err));
			}
			ASSERT_EQ(1, pda_test_is_online(cpu));
			if (check_on_cpu(sh, cpu, _metadata))
				bad_after++;
			pda_test_unpin();
			cycles++;
		}
		/* Progress: on many emulated CPUs a round takes minutes. */
		TH_LOG("round %d/%d: %d CPU(s), round %llu ms",
		       round + 1, rounds, self->nplug,
		       (unsigned long long)(pda_test_now_ns() - round_ns) /
		       1000000);
	}
	usleep(dwell);
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < self->nreaders; i++)
		pthread_join(self->rd[i].tid, NULL);

	for (i = 0; i < sh->logged && i < LOGGED; i++)
		TH_LOG("%s", sh->log[i]);
	TH_LOG("%d offline/online cycles of %d CPUs in %llu ms; %d readers: %llu checks in %llu windows, %llu pins refused, %llu broken by hotplug, %llu mismatches; %d bad after re-online",
	       cycles, self->nplug,
	       (unsigned long long)(pda_test_now_ns() - start) / 1000000,
	       self->nreaders, (unsigned long long)sh->checks,
	       (unsigned long long)sh->windows,
	       (unsigned long long)sh->refused,
	       (unsigned long long)sh->broken,
	       (unsigned long long)sh->mismatches, bad_after);
	EXPECT_EQ(0, sh->errors);
	EXPECT_EQ(0, sh->mismatches);
	EXPECT_EQ(0, bad_after);
	EXPECT_LT(0, sh->checks);
	pda_stat("hotplug_cycles", cycles);
	pda_stat("checks", sh->checks);
	pda_stat("migrations", sh->moved);
	/* All back: every CPU pinned once more. */
	for (i = 0; i < sh->ncpus; i++)
		EXPECT_EQ(0, check_on_cpu(sh, sh->cpus[i], _metadata));
	pda_test_unpin();
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
