/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The benchmarks' clock (tests/bench): the TSC on x86, CLOCK_MONOTONIC
 * elsewhere.  Under qemu -icount shift=0, which "pda.icount" on the
 * kernel command line says, both count guest instructions (virtual time
 * advances one nanosecond per instruction, and the TSC follows it); one
 * clock for every vCPU, so a span read on two CPUs is the instructions
 * all of them ran meanwhile.  Natively: TSC ticks, or nanoseconds.
 * Header only.
 */
#ifndef PDA_TESTS_CLOCK_H
#define PDA_TESTS_CLOCK_H

#include <stdint.h>
#include <time.h>

#if defined(__i386__) || defined(__x86_64__)
static inline uint64_t bench_now(void)
{
	uint32_t lo, hi;

	asm volatile("rdtsc" : "=a" (lo), "=d" (hi) : : "memory");
	return (uint64_t)hi << 32 | lo;
}
#define BENCH_NATIVE_UNIT	"tsc"
#else
static inline uint64_t bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}
#define BENCH_NATIVE_UNIT	"ns"
#endif

#endif /* PDA_TESTS_CLOCK_H */
