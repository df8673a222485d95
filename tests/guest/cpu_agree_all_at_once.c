// SPDX-License-Identifier: GPL-2.0
/*
 * Every online CPU at once: one thread pinned to each, all started
 * together behind a barrier, each reading its CPU number READS times
 * through every method the kernel gives a program, while every other CPU
 * does the same (a start flag under a condition variable, not a pthread
 * barrier: a thread that could not be created must not leave the others
 * waiting forever; and not a spin: hundreds of spinning vCPUs would
 * starve the thread that creates the readers):
 *
 * - rseq's cpu_id and sched_getcpu() (every kernel);
 * - the getcpu_cache word the kernel writes for the thread (a PDA kernel;
 *   on a kernel without the system call the test skips, visibly, after
 *   checking the others);
 * - on x86, the user per-CPU segment: a read through the selector of the
 *   test's own table, which has a slot per possible CPU (pda.h's table
 *   stops at PDA_MAX_CPUS), so every CPU is checked however many there
 *   are, with the segment base checked by a second word.
 *
 * make check runs it on 4 CPUs, make scale on the most the kernel and
 * QEMU allow (hundreds on x86_64 and arm64).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "lib/cpu_methods.h"
#include "lib/pda_test.h"

/* Reads per thread, each of every method. */
#define READS		200
/* Small threads: hundreds of them in a guest with little memory. */
#define STACK_SIZE	(256 * 1024)

enum method { M_RSEQ, M_SCHED, M_GCC, M_SEGMENT, NR_METHODS };

static const char * const method_names[NR_METHODS] = {
	"rseq", "sched_getcpu", "getcpu_cache", "segment",
};

struct reader {
	pthread_t tid;
	int cpu;
	const char *failed;	/* a setup step that failed, or NULL */
	int err;
	unsigned long wrong[NR_METHODS];
	int first_wrong[NR_METHODS];
};

FIXTURE(all) {
	int cpus[CPU_SETSIZE];
	int n;
	long possible;
	struct reader *readers;
	struct pda_slot *table;		/* the segment's, on x86 */
	int use_gcc, use_segment;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int ready;			/* readers on their CPU */
	int go;				/* 1: read; -1: give up */
};

/* The fixture every reader reads, set once before they start. */
static FIXTURE_DATA(all) *shared;

FIXTURE_SETUP(all)
{
	int32_t *cache = NULL;

	self->n = pda_test_online(self->cpus, CPU_SETSIZE);
	ASSERT_LT(0, self->n);
#if PDA_HAVE_SEGMENT
	self->possible = pda_possible_cpus();
#else
	self->possible = sysconf(_SC_NPROCESSORS_CONF);
#endif
	ASSERT_LE(self->n, self->possible);
	self->readers = calloc(self->n, sizeof(*self->readers));
	ASSERT_TRUE(self->readers != NULL);
	/* ENOENT: nothing registered yet; else 463 is not getcpu_cache. */
	self->use_gcc = !pda_getcpu_cache(PDA_GETCPU_CACHE_GET, &cache, 0) ||
			errno == ENOENT;
#if PDA_HAVE_SEGMENT
	self->use_segment = !!(getauxval(AT_HWCAP2) & HWCAP2_PDA_USER_SEG);
	self->table = pda_test_table(self->possible);
	ASSERT_TRUE(self->table != NULL);
#endif
	ASSERT_EQ(0, pthread_mutex_init(&self->lock, NULL));
	ASSERT_EQ(0, pthread_cond_init(&self->cond, NULL));
	shared = self;
}

FIXTURE_TEARDOWN(all)
{
	pthread_cond_destroy(&self->cond);
	pthread_mutex_destroy(&self->lock);
	free(self->readers);
	free(self->table);
}

static int read_segment(void)
{
#if PDA_HAVE_SEGMENT
	return pda_test_table_cpu(shared->table);
#else
	return -1;
#endif
}

static void *reader(void *arg)
{
	struct reader *r = arg;
	int32_t *gcc = NULL;
	int i, m;

	r->err = pda_test_pin(r->cpu);
	if (r->err) {
		r->failed = "sched_setaffinity";
		goto wait;
	}
	if (shared->use_gcc) {
		gcc = pda_getcpu_cache_register();
		if (!gcc) {
			r->failed = "getcpu_cache SET";
			r->err = -errno;
		}
	}
#if PDA_HAVE_SEGMENT
	if (shared->use_segment)
		pda_test_load_seg(PDA_USER_SELECTOR);
#endif
wait:
	/* Every thread on its CPU before any reads: all CPUs at once. */
	pthread_mutex_lock(&shared->lock);
	shared->ready++;
	pthread_cond_broadcast(&shared->cond);
	while (!shared->go)
		pthread_cond_wait(&shared->cond, &shared->lock);
	pthread_mutex_unlock(&shared->lock);
	if (r->failed || shared->go < 0)
		return NULL;
	for (i = 0; i < READS; i++) {
		int got[NR_METHODS] = {
			[M_RSEQ] = rseq_cpu_id(),
			[M_SCHED] = sched_getcpu(),
			[M_GCC] = gcc ? __atomic_load_n(gcc, __ATOMIC_RELAXED)
				      : r->cpu,
			[M_SEGMENT] = shared->use_segment ? read_segment()
							  : r->cpu,
		};

		for (m = 0; m < NR_METHODS; m++) {
			if (got[m] == r->cpu)
				continue;
			if (!r->wrong[m]++)
				r->first_wrong[m] = got[m];
		}
	}
	return NULL;
}

TEST_F_TIMEOUT(all, every_cpu_every_method, 900)
{
	unsigned long wrong[NR_METHODS] = { 0 };
	int i, m, started = 0, failed = 0, logged[NR_METHODS] = { 0 };
	pthread_attr_t attr;

	ASSERT_EQ(0, pthread_attr_init(&attr));
	ASSERT_EQ(0, pthread_attr_setstacksize(&attr, STACK_SIZE));
	for (i = 0; i < self->n; i++) {
		self->readers[i].cpu = self->cpus[i];
		if (pthread_create(&self->readers[i].tid, &attr, reader,
				   &self->readers[i]))
			break;
		started++;
	}
	pthread_attr_destroy(&attr);
	pthread_mutex_lock(&self->lock);
	while (self->ready < started)
		pthread_cond_wait(&self->cond, &self->lock);
	self->go = started == self->n ? 1 : -1;
	pthread_cond_broadcast(&self->cond);
	pthread_mutex_unlock(&self->lock);
	for (i = 0; i < started; i++)
		pthread_join(self->readers[i].tid, NULL);
	ASSERT_EQ(self->n, started) {
		TH_LOG("pthread_create failed for the reader of cpu %d",
		       self->cpus[started]);
	}
	for (i = 0; i < self->n; i++) {
		struct reader *r = &self->readers[i];

		if (r->failed && failed++ < 10)
			TH_LOG("cpu %d: %s: %s", r->cpu, r->failed,
			       strerror(-r->err));
		for (m = 0; m < NR_METHODS; m++) {
			if (r->wrong[m] && logged[m]++ < 10)
				TH_LOG("cpu %d: %s read %d (%lu of %d wrong)",
				       r->cpu, method_names[m],
				       r->first_wrong[m], r->wrong[m], READS);
			wrong[m] += r->wrong[m];
		}
	}
	TH_LOG("%d CPUs (%ld possible) at once, %d reads each: rseq %lu, sched_getcpu %lu, getcpu_cache %lu%s, segment %lu%s wrong",
	       self->n, self->possible, READS, wrong[M_RSEQ], wrong[M_SCHED],
	       wrong[M_GCC], self->use_gcc ? "" : " (no system call)",
	       wrong[M_SEGMENT], self->use_segment ? "" : " (none)");
	ASSERT_EQ(0, failed);
	for (m = 0; m < NR_METHODS; m++)
		ASSERT_EQ(0UL, wrong[m]);
	/* Only a clean run gets here: a skip would hide a failure. */
	if (!self->use_gcc)
		SKIP(return, "no getcpu_cache(2): its word not checked");
#if PDA_HAVE_SEGMENT
	if (!self->use_segment)
		SKIP(return, "no HWCAP2_PDA_USER_SEG: the segment not checked");
#endif
}

TEST_HARNESS_MAIN
