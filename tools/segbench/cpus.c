// SPDX-License-Identifier: GPL-2.0
/*
 * CPU enumeration, pinning and the thread-per-CPU runner.
 *
 * "Online" here means the CPUs this process may run on, taken once at
 * start: on a guest with no cpuset that is every online CPU, and it
 * respects taskset on the host. sched_getaffinity() needs no /sys.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include "segbench.h"

static cpu_set_t start_set;
static int start_set_valid;

int sb_online_cpus(int *cpus, int max)
{
	int i, n = 0;

	if (!start_set_valid) {
		if (sched_getaffinity(0, sizeof(start_set), &start_set))
			return 0;
		start_set_valid = 1;
	}
	for (i = 0; i < CPU_SETSIZE && n < max && i < SB_MAX_CPUS; i++)
		if (CPU_ISSET(i, &start_set))
			cpus[n++] = i;
	return n;
}

int sb_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	/*
	 * The migration happens on the way out of this call, so every
	 * per-CPU value (rseq cpu_id, getcpu_cache, the %fs reload) is
	 * current when it returns.
	 */
	return sched_setaffinity(0, sizeof(set), &set);
}

int sb_unpin(void)
{
	int cpus[SB_MAX_CPUS];

	if (!start_set_valid)
		sb_online_cpus(cpus, SB_MAX_CPUS);
	return sched_setaffinity(0, sizeof(start_set), &start_set);
}

struct runner {
	pthread_barrier_t *start, *stop;
	void (*prep)(void *);
	void *(*fn)(void *);
	void *arg;
};

static void *runner(void *p)
{
	struct runner *r = p;
	void *ret;

	if (r->prep)
		r->prep(r->arg);
	pthread_barrier_wait(r->start);
	ret = r->fn(r->arg);
	pthread_barrier_wait(r->stop);
	return ret;
}

/*
 * Run fn(args[i]) on nthreads threads at once. Thread creation and
 * prep(args[i]) (pinning) stay out of the timed window: started() runs
 * when all threads are released, finished() when the last one is done.
 */
int sb_run_threads(int nthreads, void (*prep)(void *), void *(*fn)(void *),
		   void **args, void (*started)(void), void (*finished)(void))
{
	pthread_t tid[SB_MAX_CPUS];
	struct runner r[SB_MAX_CPUS];
	pthread_barrier_t start, stop;
	int i;

	if (nthreads > SB_MAX_CPUS)
		return -1;
	pthread_barrier_init(&start, NULL, nthreads + 1);
	pthread_barrier_init(&stop, NULL, nthreads + 1);
	for (i = 0; i < nthreads; i++) {
		r[i].start = &start;
		r[i].stop = &stop;
		r[i].prep = prep;
		r[i].fn = fn;
		r[i].arg = args[i];
		/* A barrier cannot shrink: without all threads, give up. */
		if (pthread_create(&tid[i], NULL, runner, &r[i])) {
			fprintf(stderr, "segbench: pthread_create failed\n");
			exit(2);
		}
	}
	pthread_barrier_wait(&start);
	if (started)
		started();
	pthread_barrier_wait(&stop);
	if (finished)
		finished();
	for (i = 0; i < nthreads; i++)
		pthread_join(tid[i], NULL);
	pthread_barrier_destroy(&start);
	pthread_barrier_destroy(&stop);
	return 0;
}
