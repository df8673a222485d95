// SPDX-License-Identifier: GPL-2.0
/*
 * The clock behind every figure.
 *
 * x86: the TSC, read with "lfence; rdtsc" at the start (lfence keeps the
 * measured code from starting before the read) and "rdtscp; lfence" at
 * the end (rdtscp waits for the measured code to retire, the lfence keeps
 * later code from starting before it). The TSC ticks at a constant rate,
 * not at the core clock, so we calibrate twice: TSC against
 * CLOCK_MONOTONIC for ns, and core cycles against the TSC with a chain of
 * dependent adds (one cycle each on every x86 since the P6), for cycles.
 * Under a hypervisor and with turbo, the core clock is only as right as
 * that calibration: the ns figures are the ones to trust first.
 *
 * Elsewhere, and under "qemu -icount shift=0" where one ns of guest time
 * is one instruction, CLOCK_MONOTONIC is the clock: it is the one that
 * counts instructions deterministically (the guest TSC does too, but at a
 * rate the guest kernel must first calibrate, which differs from boot to
 * boot).
 */
#include <time.h>
#include "segbench.h"

static int use_tsc;
static double ns_per_tick = 1.0, cyc_per_tick = -1.0;

static uint64_t clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

#ifdef SB_X86
static int have_rdtscp;

static inline uint64_t rdtsc_start(void)
{
	uint32_t lo, hi;

	asm volatile("lfence\n\trdtsc" : "=a" (lo), "=d" (hi) : : "memory");
	return (uint64_t)hi << 32 | lo;
}

static inline uint64_t rdtsc_end(void)
{
	uint32_t lo, hi, aux;

	if (have_rdtscp)
		asm volatile("rdtscp\n\tlfence"
			     : "=a" (lo), "=d" (hi), "=c" (aux) : : "memory");
	else
		asm volatile("lfence\n\trdtsc\n\tlfence"
			     : "=a" (lo), "=d" (hi) : : "memory");
	return (uint64_t)hi << 32 | lo;
}

static void exec_rdtsc(void *p)
{
	(void)p;
	asm volatile("rdtsc" : : : "eax", "edx");
}

static void exec_rdtscp(void *p)
{
	(void)p;
	asm volatile("rdtscp" : : : "eax", "ecx", "edx");
}

/*
 * What CPUID offers, and executes: CR4.TSD (prctl PR_SET_TSC) makes rdtsc
 * and rdtscp fault, and a hypervisor may trap what CPUID admits. Without a
 * TSC the clock is CLOCK_MONOTONIC.
 */
static int cpu_has_tsc(void)
{
	uint32_t a, b, c, d;

	asm volatile("cpuid" : "=a" (a), "=b" (b), "=c" (c), "=d" (d)
		     : "0" (0x80000000u), "2" (0));
	if (a >= 0x80000001u) {
		asm volatile("cpuid" : "=a" (a), "=b" (b), "=c" (c), "=d" (d)
			     : "0" (0x80000001u), "2" (0));
		have_rdtscp = (d & (1u << 27)) && !sb_trap(exec_rdtscp, NULL);
	}
	asm volatile("cpuid" : "=a" (a), "=b" (b), "=c" (c), "=d" (d)
		     : "0" (1u), "2" (0));
	return (d & (1u << 4)) && !sb_trap(exec_rdtsc, NULL);
}

/*
 * 100 dependent register-register adds per iteration: 100 core cycles.
 * Not "add $1": Golden Cove and later fold chains of immediate adds at
 * rename and run them several per cycle.
 */
#define REP10(x) x x x x x x x x x x
static void add_chain(unsigned long n)
{
	unsigned long x = 0, one = 1;

	while (n--)
		asm volatile(REP10(REP10("add %1, %0\n\t"))
			     : "+r" (x) : "r" (one));
}
#define CHAIN_LEN 100
#else
static inline uint64_t rdtsc_start(void)
{
	return 0;
}

static inline uint64_t rdtsc_end(void)
{
	return 0;
}

static int cpu_has_tsc(void)
{
	return 0;
}
#endif

/*
 * Core cycles per TSC tick. Many short trials, keep the fastest: time
 * stolen by an interrupt or a hypervisor only makes a trial slower. The
 * core clock moves with load (turbo), so the driver calls this again
 * before every benchmark.
 */
void sb_timer_core(struct sb_machine *m)
{
#ifdef SB_X86
	unsigned long n = 4000;
	double best = 0;
	int i;

	if (!use_tsc)
		return;
	add_chain(20 * n);	/* warm up: let the clock ramp */
	for (i = 0; i < 51; i++) {
		uint64_t a = rdtsc_start(), b;

		add_chain(n);
		b = rdtsc_end();
		if (!best || b - a < best)
			best = b - a;
	}
	cyc_per_tick = (double)n * CHAIN_LEN / best;
	m->core_mhz = m->tsc_mhz * cyc_per_tick;
#else
	(void)m;
#endif
}

uint64_t sb_ticks_start(void)
{
	return use_tsc ? rdtsc_start() : clock_ns();
}

uint64_t sb_ticks_end(void)
{
	return use_tsc ? rdtsc_end() : clock_ns();
}

void sb_timer_init(struct sb_machine *m)
{
	uint64_t t0, c0, t1, c1;
	double span = sb_opts.quick ? 5e6 : 50e6;	/* ns */

	m->tsc_mhz = 0;
	m->core_mhz = 0;
	use_tsc = m->mode != MODE_ICOUNT && cpu_has_tsc();
	if (!use_tsc) {
		ns_per_tick = 1.0;
		cyc_per_tick = -1.0;
		m->unit = m->mode == MODE_ICOUNT ? "insns" : "ns";
		return;
	}
	m->unit = "cycles";
	t0 = clock_ns();
	c0 = rdtsc_start();
	do {
		t1 = clock_ns();
		c1 = rdtsc_end();
	} while (t1 - t0 < span);
	ns_per_tick = (double)(t1 - t0) / (double)(c1 - c0);
	m->tsc_mhz = 1e3 / ns_per_tick;

	sb_timer_core(m);
}

double sb_ticks_to_ns(double ticks)
{
	return ticks * ns_per_tick;
}

double sb_ticks_to_cycles(double ticks)
{
	return cyc_per_tick < 0 ? -1.0 : ticks * cyc_per_tick;
}
