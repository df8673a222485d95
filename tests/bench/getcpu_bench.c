// SPDX-License-Identifier: GPL-2.0
/*
 * getcpu_bench: what one sched_getcpu() costs an unmodified, dynamically
 * linked program, with and without tools/preload's libpda-getcpu.so
 * (scripts/harness/preloadbench.py, part of make bench).
 *
 *	getcpu_bench LIB
 *
 * runs itself four times with different environments, each child
 * measuring the calls its dynamic linker bound:
 *
 *	real.rseq	the C library's sched_getcpu(), glibc's rseq on
 *	real.norseq	the same with GLIBC_TUNABLES=glibc.pthread.rseq=0
 *			(what an old glibc, or a program that registers
 *			rseq itself, gets)
 *	preload.rseq	LD_PRELOAD=LIB
 *	preload.norseq	LD_PRELOAD=LIB, rseq off
 *	syscall		syscall(SYS_getcpu), the system call itself
 *			(measured in the first child)
 *	floor		getcpu_floor() of libgetcpu-floor.so, which returns 0
 *			(the first child too): what a call into a shared
 *			library costs before the function does anything
 *
 * Each figure is (a loop of ITERS calls - the same loop without them) /
 * ITERS, REPS times after a warm-up, pinned to CPU 0; min and median.
 * The loops call as a program does, by name, through the dynamic
 * linker's tables (the PLT), so a figure includes the call: under
 * -icount no function in a shared library, preloaded or not, costs
 * less than the floor (make bench checks it).
 * The clock is the TSC on x86 (instructions under qemu -icount, which
 * "pda.icount" on the kernel command line says; TSC ticks natively) and
 * CLOCK_MONOTONIC elsewhere (instructions under -icount shift=0; ns
 * natively).  Output, one line per row:
 *
 *	getcpu-bench: CASE min=X median=Y reps=R iters=N unit=U method=M
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../guest/lib/cmdline.h"
#include "getcpu_floor.h"

#define REPS	15
#define ITERS	2000

#if defined(__i386__) || defined(__x86_64__)
static inline uint64_t now(void)
{
	uint32_t lo, hi;

	asm volatile("rdtsc" : "=a" (lo), "=d" (hi) : : "memory");
	return (uint64_t)hi << 32 | lo;
}
#define CLOCK_UNIT(icount)	((icount) ? "insns" : "tsc")
#else
static inline uint64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}
#define CLOCK_UNIT(icount)	((icount) ? "insns" : "ns")
#endif

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/*
 * One loop per callee, each calling it by name, as a program does: a call
 * through a function pointer would take the address from the GOT and skip
 * the PLT, which a program's call goes through.
 */
#define TIMED_LOOP(name, call)					\
static int64_t __attribute__((noinline)) name(void)		\
{								\
	volatile int sink;					\
	uint64_t t0 = now();					\
	int i;							\
								\
	for (i = 0; i < ITERS; i++)				\
		sink = (call);					\
	(void)sink;						\
	return now() - t0;					\
}

static unsigned int syscall_cpu;

TIMED_LOOP(loop_empty, 0)
TIMED_LOOP(loop_sched_getcpu, sched_getcpu())
TIMED_LOOP(loop_syscall, syscall(SYS_getcpu, &syscall_cpu, NULL, NULL))
TIMED_LOOP(loop_floor, getcpu_floor())

static const char *method(void)
{
	const char *(*m)(void) = (const char *(*)(void))
		dlsym(RTLD_DEFAULT, "pda_getcpu_method");

	return m ? m() : "libc";
}

/*
 * Each repetition runs the loop with the calls, then the one without;
 * a repetition's cost is its loop with the calls less the fastest loop
 * without them.  An interrupt (a timer tick, under -icount too) makes a
 * loop longer, never shorter: the fastest empty loop is an uninterrupted
 * one, and an interrupted loop with the calls lands in the tail.  Only
 * natively can a loop with the calls run faster than every empty one (the
 * core clock moves); those repetitions are dropped, and said so.
 */
static void measure(const char *name, int64_t (*loop)(void),
		    const char *how)
{
	int64_t with[REPS], cost[REPS], base = INT64_MAX;
	int r, n = 0, dropped = 0;

	loop();
	loop_empty();
	for (r = 0; r < REPS; r++) {
		int64_t without;

		with[r] = loop();
		without = loop_empty();
		if (without < base)
			base = without;
	}
	for (r = 0; r < REPS; r++) {
		if (with[r] < base)
			dropped++;
		else
			cost[n++] = with[r] - base;
	}
	if (!n) {
		printf("getcpu-bench: %s n/a every repetition faster than the empty loop\n",
		       name);
		return;
	}
	qsort(cost, n, sizeof(*cost), cmp_i64);
	printf("getcpu-bench: %s min=%.2f median=%.2f reps=%d iters=%d unit=%s method=%s\n",
	       name, (double)cost[0] / ITERS, (double)cost[n / 2] / ITERS,
	       n, ITERS, CLOCK_UNIT(cmdline_has("pda.icount")), how);
	if (dropped)
		printf("getcpu-bench: info %s_dropped=%d\n", name, dropped);
	fflush(stdout);
}

/* One environment: run this program again in it, measuring CASE. */
static int child(const char *self, const char *name, const char *lib,
		 int rseq_off)
{
	char preload[512], env_case[64];
	char *envp[4], **e = envp;
	int status;
	pid_t pid;

	snprintf(env_case, sizeof(env_case), "GETCPU_BENCH_CASE=%s", name);
	*e++ = env_case;
	if (lib) {
		snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", lib);
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
		perror("getcpu_bench: execve");
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	const char *name = getenv("GETCPU_BENCH_CASE");
	cpu_set_t set;
	int bad = 0;

	if (name) {
		CPU_ZERO(&set);
		CPU_SET(0, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			perror("getcpu_bench: pin to CPU 0");
			return 1;
		}
		if (sched_getcpu() != 0) {
			fprintf(stderr, "getcpu_bench: %s: sched_getcpu() is %d on CPU 0\n",
				name, sched_getcpu());
			return 1;
		}
		measure(name, loop_sched_getcpu, method());
		if (!strcmp(name, "real.rseq")) {
			measure("syscall", loop_syscall, "syscall");
			measure("floor", loop_floor, "none");
		}
		return 0;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: %s LIBPDA_GETCPU_SO\n", argv[0]);
		return 2;
	}
	bad |= child(argv[0], "real.rseq", NULL, 0);
	bad |= child(argv[0], "real.norseq", NULL, 1);
	bad |= child(argv[0], "preload.rseq", argv[1], 0);
	bad |= child(argv[0], "preload.norseq", argv[1], 1);
	if (bad)
		fprintf(stderr, "getcpu_bench: a case failed\n");
	return bad ? 1 : 0;
}
