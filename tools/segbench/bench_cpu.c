// SPDX-License-Identifier: GPL-2.0
/*
 * cpu.*: every way to read the current CPU number, one row each, so they
 * can be compared in one table. The cheap ones are unrolled eight times
 * per loop iteration; the reads are independent, so the figure is the
 * issue cost of a read, what a tight loop pays for it.
 */
#define _GNU_SOURCE
#include <sched.h>
#include "cpuread.h"

static int setup_method(const struct bench *b, char *why)
{
	return sb_method_probe((int)b->arg, why);
}

static void run_syscall(const struct bench *b, unsigned long n)
{
	(void)b;
	SB_LOOP(n, rd_syscall());
}

static void run_glibc(const struct bench *b, unsigned long n)
{
	(void)b;
	/* A library call, so the compiler cannot drop it. */
	SB_LOOP(n, sched_getcpu());
}

static void run_vdso(const struct bench *b, unsigned long n)
{
	unsigned int cpu;

	(void)b;
	SB_LOOP(n, sb_vdso_getcpu(&cpu, NULL, NULL));
}

#define RUN8(fn)							\
static void run_##fn(const struct bench *b, unsigned long n)		\
{									\
	(void)b;							\
	SB_LOOP(n, SB_REP8(rd_##fn();));				\
}
#define RUN32(fn)							\
static void run_##fn(const struct bench *b, unsigned long n)		\
{									\
	(void)b;							\
	SB_LOOP(n, SB_REP32(rd_##fn();));				\
}
RUN32(rseq)
RUN8(lsl)
RUN8(rdpid)
RUN32(pda)
RUN32(gcc)

const struct bench sb_cpu_benches[] = {
	{ .name = "cpu.syscall", .group = "cpu-number",
	  .desc = "getcpu(2) system call (i386: via __kernel_vsyscall)",
	  .ops = 1, .flags = BF_SLOW, .arg = M_SYSCALL,
	  .setup = setup_method, .run = run_syscall },
	{ .name = "cpu.glibc", .group = "cpu-number",
	  .desc = "glibc sched_getcpu() (uses rseq cpu_id when registered)",
	  .ops = 1, .arg = M_GLIBC, .setup = setup_method, .run = run_glibc },
	{ .name = "cpu.vdso", .group = "cpu-number",
	  .desc = "__vdso_getcpu() called through a pointer",
	  .ops = 1, .arg = M_VDSO, .setup = setup_method, .run = run_vdso },
	{ .name = "cpu.rseq", .group = "cpu-number",
	  .desc = "rseq cpu_id: one load at thread pointer + __rseq_offset",
	  .ops = SB_UNROLL_CHEAP, .arg = M_RSEQ, .setup = setup_method,
	  .run = run_rseq },
	{ .name = "cpu.lsl", .group = "cpu-number",
	  .desc = "lsl of the CPUNODE GDT entry (what __vdso_getcpu does)",
	  .ops = SB_UNROLL, .arg = M_LSL, .setup = setup_method,
	  .run = run_lsl },
	{ .name = "cpu.rdpid", .group = "cpu-number",
	  .desc = "RDPID (TSC_AUX = node << 12 | cpu)",
	  .ops = SB_UNROLL, .arg = M_RDPID, .setup = setup_method,
	  .run = run_rdpid },
	{ .name = "cpu.pda", .group = "cpu-number",
	  .desc = "PDA segment: movl %" SB_PDA_REG ":table (base = cpu << 6)",
	  .ops = SB_UNROLL_CHEAP, .arg = M_PDA, .setup = setup_method,
	  .run = run_pda },
	{ .name = "cpu.getcpu_cache", .group = "cpu-number",
	  .desc = "load of the getcpu_cache(2) registered word",
	  .ops = SB_UNROLL_CHEAP, .arg = M_GCC, .setup = setup_method,
	  .run = run_gcc },
	{ }
};
