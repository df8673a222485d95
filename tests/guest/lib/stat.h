/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The figures of the README's reliability table.  A test prints each one
 * as "# pda-stat: KEY=N"; the harness sums them per target and run.
 * The keys it knows:
 *
 *   checks           CPU-number reads checked against the pinned CPU
 *   migrations       re-pins that moved the thread to another CPU than
 *                    its previous pinned window's
 *   fuzz_iterations  fuzzer calls whose outcome was checked
 *   hotplug_cycles   CPUs taken offline and brought back
 *   tlb_checks       TLB test probes (reads, writes, page scans) of a
 *                    translation, whose outcome was checked
 */
#ifndef PDA_TESTS_STAT_H
#define PDA_TESTS_STAT_H

#include <stdio.h>

static inline void pda_stat(const char *key, unsigned long long n)
{
	printf("# pda-stat: %s=%llu\n", key, n);
	fflush(stdout);
}

#endif /* PDA_TESTS_STAT_H */
