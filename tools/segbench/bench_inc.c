// SPDX-License-Identifier: GPL-2.0
/*
 * inc.*: a per-CPU counter increment, the job the PDA segment is for,
 * against the other ways to do it (see incr.h).
 *
 *  .1t    one thread, pinned to the --cpu CPU
 *  .Nt    one thread per CPU, each pinned to its own CPU
 *  .free  two threads per CPU, not pinned: the scheduler migrates them at
 *         will, which only a mechanism that follows the thread survives
 *
 * Every row keeps count of what it added and checks the counters at the
 * end: a per-CPU increment that loses updates is not one.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <string.h>
#include "incr.h"

enum { K_PDA, K_RSEQ, K_XADD, K_SHARED };
enum { T_ONE, T_PERCPU, T_FREE };

static struct sb_slot counters[SB_MAX_CPUS];
static struct sb_slot shared;
static volatile unsigned long expected;
static volatile unsigned long aborts;
static int cpus[SB_MAX_CPUS], ncpus;

/* The getcpu half of getcpu + xadd: the fastest real getcpu there is. */
static inline int getcpu_best(void)
{
	unsigned int cpu;

	if (sb_vdso_getcpu) {
		sb_vdso_getcpu(&cpu, NULL, NULL);
		return cpu;
	}
	return rd_syscall();
}

static int setup_inc(const struct bench *b, char *why)
{
	int kind = b->arg, mode = b->arg2, state = 0;

	ncpus = sb_online_cpus(cpus, SB_MAX_CPUS);
	switch (kind) {
	case K_PDA:
		state = sb_method_probe(M_PDA, why);
		if (state < 0)
			return -1;
		if (state > 0 && mode == T_FREE) {
			snprintf(why, SB_REASON_LEN,
				 "PDA emulated: the descriptor follows the "
				 "thread's pin, not its CPU: wrong under "
				 "migration");
			return -1;
		}
		break;
	case K_RSEQ:
		if (sb_method_probe(M_RSEQ, why))
			return -1;
		break;
	case K_XADD:
		if (!sb_vdso_getcpu && sb_method_probe(M_SYSCALL, why))
			return -1;
		break;
	}
	memset(counters, 0, sizeof(counters));
	memset(&shared, 0, sizeof(shared));
	expected = 0;
	aborts = 0;
	if (kind == K_PDA && state > 0)
		snprintf(why, SB_REASON_LEN, "%s", sb_pda_emulation());
	return state;
}

/* Eight increments per iteration, so the loop's own cost stays small. */
static unsigned long do_incs(int kind, unsigned long n)
{
	unsigned long ab = 0;

	switch (kind) {
	case K_PDA:
		SB_LOOP(n, SB_REP8(inc_pda_slot(counters);));
		break;
	case K_RSEQ:
		/* An abort (preempted inside the section) retries. */
		SB_LOOP(n, SB_REP8(while (inc_rseq(counters))
					   ab++;));
		break;
	case K_XADD:
		SB_LOOP(n, SB_REP8(inc_atomic(&counters[getcpu_best()].v[0]);));
		break;
	case K_SHARED:
		SB_LOOP(n, SB_REP8(inc_atomic(&shared.v[0]);));
		break;
	}
	return ab;
}

struct worker {
	int kind, cpu, pin;
	unsigned long n, aborts;
	uint64_t t0, t1;
};

static void worker_prep(void *p)
{
	struct worker *w = p;

	if (w->pin) {
		sb_pin(w->cpu);
		sb_methods_pinned(w->cpu);
	} else if (w->kind == K_PDA) {
		/*
		 * Unpinned: only the real PDA runs here (the emulation is
		 * skipped), and the thread inherited its selector.
		 */
		sb_methods_pinned(-1);
	}
}

static void *worker_run(void *p)
{
	struct worker *w = p;

	/*
	 * Each thread times itself: the main thread may share a CPU with a
	 * worker and not run until that worker is done. The TSC is the same
	 * on every CPU (constant_tsc), as is CLOCK_MONOTONIC.
	 */
	w->t0 = sb_ticks_start();
	w->aborts = do_incs(w->kind, w->n);
	w->t1 = sb_ticks_end();
	return NULL;
}

static void run_inc(const struct bench *b, unsigned long n)
{
	struct worker w[SB_MAX_CPUS];
	void *args[SB_MAX_CPUS];
	uint64_t t0, t1;
	int i, nt;

	if (b->arg2 == T_ONE) {
		aborts += do_incs(b->arg, n);
		expected += n * SB_UNROLL;
		return;
	}
	nt = b->arg2 == T_FREE ? 2 * ncpus : ncpus;
	if (nt > SB_MAX_CPUS)
		nt = SB_MAX_CPUS;
	for (i = 0; i < nt; i++) {
		w[i].kind = b->arg;
		w[i].cpu = cpus[i % ncpus];
		w[i].pin = b->arg2 == T_PERCPU;
		w[i].n = n;
		w[i].aborts = 0;
		args[i] = &w[i];
	}
	sb_run_threads(nt, worker_prep, worker_run, args, NULL, NULL);
	t0 = w[0].t0;
	t1 = w[0].t1;
	for (i = 0; i < nt; i++) {
		aborts += w[i].aborts;
		if (w[i].t0 < t0)
			t0 = w[i].t0;
		if (w[i].t1 > t1)
			t1 = w[i].t1;
	}
	/*
	 * .free runs two threads per CPU: report the cost per op per CPU,
	 * not the wall time of a thread that had half a CPU.
	 */
	sb_mark(0, (t1 - t0) * ncpus / nt);
	expected += n * SB_UNROLL * nt;
}

static int verify_inc(const struct bench *b, char *why)
{
	unsigned long sum = 0;
	int i;

	if (b->arg == K_SHARED) {
		sum = (uint32_t)shared.v[0];
	} else {
		for (i = 0; i < SB_MAX_CPUS; i++)
			sum += (uint32_t)counters[i].v[0];
	}
	/* The counters are 32 bits wide; compare modulo 2^32. */
	if ((uint32_t)sum != (uint32_t)expected) {
		snprintf(why, SB_REASON_LEN, "count %lu, expected %lu",
			 sum, expected);
		return -1;
	}
	if (b->arg == K_RSEQ)
		snprintf(why, SB_REASON_LEN, "%lu rseq aborts", aborts);
	return 0;
}

#define INC(kn, k, tn, t, d)						\
	{ .name = "inc." kn "." tn, .group = "percpu-increment",	\
	  .desc = d, .ops = SB_UNROLL,					\
	  .flags = BF_COUNTED | (t != T_ONE ? BF_THREADS : 0),		\
	  .arg = k, .arg2 = t, .setup = setup_inc, .run = run_inc,	\
	  .verify = verify_inc }

#define INC3(kn, k, d)							\
	INC(kn, k, "1t", T_ONE, d ", 1 thread"),			\
	INC(kn, k, "Nt", T_PERCPU, d ", 1 pinned thread per CPU"),	\
	INC(kn, k, "free", T_FREE, d ", 2 unpinned threads per CPU")

const struct bench sb_inc_benches[] = {
	/* The i386 name is the original one; x86-64 says its register. */
#ifdef __i386__
	INC3("fs_slot", K_PDA, "addl $1, %fs:slot"),
#elif defined(__x86_64__)
	INC3("gs_slot", K_PDA, "addl $1, %gs:slot"),
#endif
	INC3("rseq", K_RSEQ, "rseq critical section add"),
	INC3("getcpu_xadd", K_XADD, "getcpu + lock xadd on own slot"),
	INC3("shared_atomic", K_SHARED, "lock xadd on one shared word"),
	{ }
};
