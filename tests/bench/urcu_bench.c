// SPDX-License-Identifier: GPL-2.0
/*
 * urcu_bench: what libpda-getcpu.so does to Debian's liburcu (liburcu8
 * 0.13, unmodified, dynamically linked), which asks sched_getcpu() on
 * every hash-table add and delete of a CDS_LFHT_ACCOUNTING table and on
 * every call_rcu() with per-CPU workers (scripts/harness/urcubench.py,
 * part of make bench).
 *
 *	urcu_bench LIBPDA_GETCPU_SO LIBGETCPU_COUNT_SO
 *
 * runs itself once per way, each child measuring the workloads of
 * tests/preload/urcu_work.h with the calls its dynamic linker bound:
 *
 *	real.rseq	the C library's sched_getcpu(), glibc's rseq on
 *	real.norseq	the same with GLIBC_TUNABLES=glibc.pthread.rseq=0
 *	preload.rseq	LD_PRELOAD=LIBPDA_GETCPU_SO
 *	preload.norseq	LD_PRELOAD=LIBPDA_GETCPU_SO, rseq off
 *
 * and once more per way with LIBGETCPU_COUNT_SO preloaded first, which
 * counts each thread's sched_getcpu() calls (it costs instructions, so
 * those runs are not timed).  Workloads, each in a thread per CPU (two
 * at least), OPS operations per thread:
 *
 *	lfht.pinned		an add and a delete of one node: one op
 *	lfht.migrating		the same, each thread moving to the next
 *				CPU every UW_PERIOD operations
 *	call_rcu.pinned		one call_rcu()
 *	call_rcu.migrating
 *
 * A figure is (the run's span - the same run of UW_NOTHING) / (threads
 * * OPS): REPS pairs after a warm-up, min and median.  The span runs
 * from the first thread's start to the last one's end on one clock
 * (../guest/lib/clock.h), so under qemu -icount it counts what every
 * CPU ran meanwhile: the operations, and whatever the kernel and
 * liburcu's own threads did for them then (a call_rcu worker sleeps
 * 10 ms after it is woken, so the callbacks run after the span, in the
 * rcu_barrier() between repetitions).  Output, one line per row:
 *
 *	urcu-bench: WAY WORKLOAD min=X median=Y reps=R ops=N threads=T unit=U method=M
 *	urcu-bench: WAY WORKLOAD calls=C	(sched_getcpu() per operation)
 *	urcu-bench: WAY WORKLOAD n/a REASON
 *	urcu-bench: WAY WORKLOAD FAILED WHY
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../guest/lib/cmdline.h"
#include "../preload/urcu_work.h"

#define REPS	5
#define OPS	1000	/* per thread */

static const struct workload {
	const char *name;
	enum uw_kind kind;
	int migrate;
} workloads[] = {
	{ "lfht.pinned", UW_LFHT, 0 },
	{ "lfht.migrating", UW_LFHT, 1 },
	{ "call_rcu.pinned", UW_CALL_RCU, 0 },
	{ "call_rcu.migrating", UW_CALL_RCU, 1 },
};

static const char *way;

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* One run of @kind; its span, or -1 after printing why it failed. */
static int64_t one_run(const struct workload *w, enum uw_kind kind,
		       struct cds_lfht *ht, unsigned long (*count)(void),
		       unsigned long *calls, const char **method)
{
	struct uw_run r = { .kind = kind, .ops = OPS, .migrate = w->migrate,
			    .ht = ht, .count = count,
			    .nthreads = uw_nthreads() };
	char why[UW_WHY];
	int64_t span;
	int i;

	if (uw_go(&r, why)) {
		printf("urcu-bench: %s %s FAILED %s\n", way, w->name, why);
		return -1;
	}
	span = uw_span(&r);
	for (i = 0; i < r.nthreads; i++) {
		if (r.t[i].failed) {
			printf("urcu-bench: %s %s FAILED thread %d: %s\n", way,
			       w->name, i, r.t[i].why);
			span = -1;
		}
		if (calls)
			*calls += r.t[i].calls;
		if (method && (!i || strcmp(*method, r.t[i].method)))
			*method = i ? "mixed" : r.t[i].method;
	}
	/* Nothing may still see the nodes, and every callback ran. */
	if (kind == UW_LFHT)
		synchronize_rcu();
	if (kind == UW_CALL_RCU)
		rcu_barrier();
	uw_free(&r);
	return span;
}

static int measure(const struct workload *w, struct cds_lfht *ht)
{
	int64_t cost[REPS];
	const char *method = "none";
	int rep;

	for (rep = -1; rep < REPS; rep++) {
		int64_t with = one_run(w, w->kind, ht, NULL, NULL, &method);
		int64_t without = one_run(w, UW_NOTHING, ht, NULL, NULL, NULL);

		if (with < 0 || without < 0)
			return -1;
		if (rep >= 0)
			cost[rep] = with - without;
	}
	qsort(cost, REPS, sizeof(*cost), cmp_i64);
	printf("urcu-bench: %s %s min=%.2f median=%.2f reps=%d ops=%d threads=%d unit=%s method=%s\n",
	       way, w->name, (double)cost[0] / (uw_nthreads() * OPS),
	       (double)cost[REPS / 2] / (uw_nthreads() * OPS), REPS, OPS,
	       uw_nthreads(),
	       cmdline_has("pda.icount") ? "insns" : BENCH_NATIVE_UNIT, method);
	return 0;
}

static int count(const struct workload *w, struct cds_lfht *ht,
		 unsigned long (*count_fn)(void))
{
	unsigned long calls = 0;

	if (one_run(w, w->kind, ht, count_fn, &calls, NULL) < 0)
		return -1;
	printf("urcu-bench: %s %s calls=%.4f\n", way, w->name,
	       (double)calls / (uw_nthreads() * OPS));
	return 0;
}

/* A child: every workload, timed, or counted with @count_fn. */
static int run_way(unsigned long (*count_fn)(void))
{
	struct cds_lfht *ht;
	int bad = 0;
	size_t i;

	if (uw_load_cpus())
		return 1;
	ht = cds_lfht_new(1024, 1024, 0, CDS_LFHT_ACCOUNTING, NULL);
	if (!ht || create_all_cpu_call_rcu_data(0)) {
		printf("urcu-bench: %s FAILED no table or call_rcu workers\n",
		       way);
		return 1;
	}
	for (i = 0; i < sizeof(workloads) / sizeof(workloads[0]); i++) {
		const struct workload *w = &workloads[i];

		if (w->migrate && uw_ncpus < 2) {
			if (!count_fn)
				printf("urcu-bench: %s %s n/a one CPU: nothing migrates\n",
				       way, w->name);
			continue;
		}
		bad |= count_fn ? count(w, ht, count_fn) : measure(w, ht);
		fflush(stdout);
	}
	free_all_cpu_call_rcu_data();
	if (cds_lfht_destroy(ht, NULL))
		bad = 1;
	return bad ? 1 : 0;
}

/* Run this program again in one way, timed or counted. */
static int child(const char *self, const char *name, const char *lib,
		 const char *counter, int rseq_off)
{
	static char libpath[1024];
	const char *where = getenv("LD_LIBRARY_PATH");
	char preload[1024], env_way[64];
	char *envp[6], **e = envp;
	int status;
	pid_t pid;

	snprintf(env_way, sizeof(env_way), "URCU_BENCH_WAY=%s", name);
	*e++ = env_way;
	/* Natively liburcu may be outside the loader's directories. */
	if (where) {
		snprintf(libpath, sizeof(libpath), "LD_LIBRARY_PATH=%s", where);
		*e++ = libpath;
	}
	if (lib || counter) {
		/* The counter first: it passes each call on to the next. */
		snprintf(preload, sizeof(preload), "LD_PRELOAD=%s%s%s",
			 counter ? counter : "", counter && lib ? ":" : "",
			 lib ? lib : "");
		*e++ = preload;
	}
	if (rseq_off)
		*e++ = "GLIBC_TUNABLES=glibc.pthread.rseq=0";
	*e = NULL;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		execve(self, (char *[]){ (char *)self, NULL }, envp);
		perror("urcu_bench: execve");
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int preload, rseq_off;
	} ways[] = {
		{ "real.rseq", 0, 0 }, { "real.norseq", 0, 1 },
		{ "preload.rseq", 1, 0 }, { "preload.norseq", 1, 1 },
	};
	unsigned long (*count_fn)(void);
	size_t i;
	int bad = 0;

	way = getenv("URCU_BENCH_WAY");
	if (way) {
		count_fn = (unsigned long (*)(void))
			dlsym(RTLD_DEFAULT, "getcpu_count_thread");
		return run_way(count_fn);
	}
	if (argc != 3) {
		fprintf(stderr, "usage: %s LIBPDA_GETCPU_SO LIBGETCPU_COUNT_SO\n",
			argv[0]);
		return 2;
	}
	for (i = 0; i < sizeof(ways) / sizeof(ways[0]); i++) {
		const char *lib = ways[i].preload ? argv[1] : NULL;

		bad |= child(argv[0], ways[i].name, lib, NULL,
			     ways[i].rseq_off);
		bad |= child(argv[0], ways[i].name, lib, argv[2],
			     ways[i].rseq_off);
	}
	if (bad)
		fprintf(stderr, "urcu_bench: a way failed\n");
	return bad ? 1 : 0;
}
