// SPDX-License-Identifier: GPL-2.0
/*
 * --check: pinned to each CPU in turn, every CPU-number method must read
 * that CPU. Output is kselftest TAP, so the harness parses it like any
 * other guest test.
 *
 * A method this kernel or CPU lacks is a SKIP with the reason. So is the
 * PDA emulation on kernels without the PDA entry: its reading is checked
 * (a wrong value is "not ok") but it proves nothing about the kernel, so
 * it is never counted as a pass.
 *
 * Then the per-CPU increments that claim to survive migration (rseq, the
 * real PDA segment, getcpu + xadd, the shared atomic) run with two
 * unpinned threads per CPU and must count exactly.
 *
 * First of all, the fault-catching probes every row's setup relies on
 * (trap.c) are tested: they must catch a fault that must happen, and
 * leave the segment registers and TLS as they were. In the guests too.
 */
#include <stdio.h>
#include <string.h>
#include "cpuread.h"

#define KSFT_PASS 0
#define KSFT_FAIL 1
#define KSFT_SKIP 4

/*
 * The per-CPU increments that claim to survive migration, run with two
 * unpinned threads per CPU: the final count must be exact.
 */
static void check_free_incs(int *t, int *pass, int *fail, int *skip)
{
	const struct bench *b;

	for (b = sb_inc_benches; b->name; b++) {
		char why[SB_REASON_LEN] = "";
		int ret;

		if (!strstr(b->name, ".free"))
			continue;
		++*t;
		ret = b->setup(b, why);
		if (ret < 0) {
			printf("ok %d %s exact under migration # SKIP %s\n",
			       *t, b->name, why);
			++*skip;
			continue;
		}
		b->run(b, sb_opts.quick ? 1000 : 5000);
		why[0] = '\0';
		if (b->verify(b, why)) {
			printf("not ok %d %s exact under migration: %s\n",
			       *t, b->name, why);
			++*fail;
		} else if (ret > 0) {
			printf("ok %d %s exact under migration # SKIP emulated\n",
			       *t, b->name);
			++*skip;
		} else {
			printf("ok %d %s exact under migration\n", *t, b->name);
			++*pass;
		}
	}
}

static int trap_t, trap_pass, trap_fail, trap_skip;

static void trap_report(int res, const char *what, const char *note)
{
	++trap_t;
	if (res < 0) {
		printf("ok %d trap: %s # SKIP %s\n", trap_t, what, note);
		trap_skip++;
	} else if (res) {
		printf("ok %d trap: %s\n", trap_t, what);
		trap_pass++;
	} else {
		printf("not ok %d trap: %s: %s\n", trap_t, what, note);
		trap_fail++;
	}
}

static int count_free_incs(void)
{
	const struct bench *b;
	int n = 0;

	for (b = sb_inc_benches; b->name; b++)
		n += strstr(b->name, ".free") != NULL;
	return n;
}

int sb_check(void)
{
	int cpus[SB_MAX_CPUS], ncpus, i, m, t = 0;
	int pass = 0, fail = 0, skip = 0;
	char why[M_NR][SB_REASON_LEN];
	int state[M_NR];

	ncpus = sb_online_cpus(cpus, SB_MAX_CPUS);
	printf("TAP version 13\n");
	printf("1..%d\n", sb_trap_selftest_count() + ncpus * M_NR +
	       count_free_incs());
	/* Set up on a known CPU: the PDA emulation takes its base from it. */
	if (ncpus > 0)
		sb_pin(cpus[0]);
	sb_methods_init();
	/* After the set-up: the PDA register must survive a probe as well. */
	sb_trap_selftest(trap_report);
	t = trap_t;
	pass = trap_pass;
	fail = trap_fail;
	skip = trap_skip;
	for (m = 0; m < M_NR; m++) {
		why[m][0] = '\0';
		state[m] = sb_method_probe(m, why[m]);
		printf("# %-13s %s%s%s\n", sb_methods[m].name,
		       state[m] < 0 ? "unavailable: " :
		       state[m] > 0 ? "emulated: " : "available",
		       state[m] == 0 && why[m][0] ? ", " : "",
		       state[m] == 0 && !why[m][0] ? "" : why[m]);
	}
	for (i = 0; i < ncpus; i++) {
		int cpu = cpus[i];
		int pinned = sb_pin(cpu) == 0 && sb_methods_pinned(cpu) == 0;

		for (m = 0; m < M_NR; m++) {
			const char *name = sb_methods[m].name;
			int v;

			t++;
			if (state[m] < 0) {
				printf("ok %d cpu%d %s # SKIP %s\n", t, cpu,
				       name, why[m]);
				skip++;
				continue;
			}
			if (!pinned) {
				printf("not ok %d cpu%d %s: cannot pin\n", t,
				       cpu, name);
				fail++;
				continue;
			}
			v = sb_method_read(m);
			if (v != cpu) {
				printf("not ok %d cpu%d %s: read %d%s\n", t,
				       cpu, name, v,
				       state[m] > 0 ? " (emulated)" : "");
				fail++;
			} else if (state[m] > 0) {
				printf("ok %d cpu%d %s # SKIP %s (emulation reads %d)\n",
				       t, cpu, name, why[m], v);
				skip++;
			} else {
				printf("ok %d cpu%d %s\n", t, cpu, name);
				pass++;
			}
		}
	}
	sb_unpin();
	check_free_incs(&t, &pass, &fail, &skip);
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:%d error:0\n",
	       pass, fail, skip);
	if (fail)
		return KSFT_FAIL;
	return pass ? KSFT_PASS : KSFT_SKIP;
}
