// SPDX-License-Identifier: GPL-2.0
/*
 * segbench - what segment registers, and every way of finding the current
 * CPU, cost on this machine.
 *
 * The driver: option parsing, the list of benchmarks, and the measuring
 * loop (size the iteration count, warm up, repeat, subtract the empty
 * loop, reduce to min and median).
 */
#define _GNU_SOURCE
#include <fnmatch.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "segbench.h"
#include "cpuread.h"

#define MAX_TRIALS	101
#define MAX_RESULTS	256

struct sb_opts sb_opts = { .pin_cpu = -1 };

static const struct bench *const tables[] = {
	sb_cpu_benches,
#ifdef SB_X86
	sb_seg_benches,
	sb_mem_benches,
	sb_probe_benches,
#endif
#ifdef __i386__
	sb_sys_benches,
#endif
	sb_inc_benches,
#ifdef SB_X86
	sb_incform_benches,
#endif
	sb_pool_benches,
};

static uint64_t mark_t0, mark_t1;
static int marked;

void sb_mark(uint64_t t0, uint64_t t1)
{
	mark_t0 = t0;
	mark_t1 = t1;
	marked = 1;
}

static void run_empty(const struct bench *b, unsigned long n)
{
	(void)b;
	SB_LOOP(n, asm volatile("" : : : "memory"));
}

static const struct bench empty_bench = {
	.name = "empty", .group = "overhead", .ops = 1, .run = run_empty,
};

static uint64_t time_run(const struct bench *b, unsigned long iters)
{
	uint64_t t0, t1;

	marked = 0;
	t0 = sb_ticks_start();
	b->run(b, iters);
	t1 = sb_ticks_end();
	if (marked)
		return mark_t1 - mark_t0;
	return t1 - t0;
}

/* Enough iterations that one trial takes @target_ns. */
static unsigned long size_iters(const struct bench *b, double target_ns)
{
	unsigned long iters = (b->flags & (BF_SLOW | BF_THREADS)) ? 16 : 256;

	for (;;) {
		double ns = sb_ticks_to_ns((double)time_run(b, iters));

		if (ns >= target_ns || iters >= (1ul << 28))
			return iters;
		if (ns * 8 < target_ns)
			iters *= 8;
		else
			iters *= 2;
	}
}

static double overhead_ticks;	/* empty loop, ticks per iteration */

static unsigned int ntrials(void)
{
	return sb_opts.quick ? 7 : 31;
}

static double target_ns(const struct bench *b)
{
	/*
	 * Short trials: one that a time slice of another task lands in is
	 * thrown out by the median only if most trials escape one.
	 */
	double t = sb_opts.quick ? 2e5 : 5e5;

	/* Threads need time to be released together. */
	return (b->flags & BF_THREADS) ? t * 5 : t;
}

static void measure(const struct bench *b, struct result *r)
{
	uint64_t ticks[MAX_TRIALS];
	double v[MAX_TRIALS], mn, md;
	unsigned int i, n = ntrials();

	r->iters = size_iters(b, target_ns(b));
	time_run(b, r->iters);		/* warm-up, discarded */
	for (i = 0; i < n; i++)
		ticks[i] = time_run(b, r->iters);
	sb_per_op(v, n, ticks, r->iters, b->ops, overhead_ticks);
	mn = sb_min(v, n);
	md = sb_median(v, n);
	r->trials = n;
	r->min_cyc = sb_ticks_to_cycles(mn);
	r->med_cyc = sb_ticks_to_cycles(md);
	r->min_ns = sb_ticks_to_ns(mn);
	r->med_ns = sb_ticks_to_ns(md);
}

static void measure_overhead(void)
{
	uint64_t ticks[MAX_TRIALS];
	double v[MAX_TRIALS];
	unsigned int i, n = ntrials();
	unsigned long iters = size_iters(&empty_bench, target_ns(&empty_bench));

	time_run(&empty_bench, iters);
	for (i = 0; i < n; i++)
		ticks[i] = time_run(&empty_bench, iters);
	sb_per_op(v, n, ticks, iters, 1, 0);
	overhead_ticks = sb_median(v, n);
}

static int selected(const struct bench *b, const char *pattern)
{
	if (!pattern)
		return 1;
	if (strpbrk(pattern, "*?["))
		return !fnmatch(pattern, b->name, 0);
	return strstr(b->name, pattern) != NULL;
}

static void list(const char *pattern)
{
	const struct bench *b;
	size_t t;

	for (t = 0; t < ARRAY_SIZE(tables); t++)
		for (b = tables[t]; b->name; b++)
			if (selected(b, pattern))
				printf("%-30s %s\n", b->name, b->desc);
}

static void usage(FILE *f)
{
	fputs("usage: segbench [--list] [--filter PATTERN] [--cpu N] [--json|--csv]\n"
	      "                [--quick] [--output FILE] [--check]\n"
	      "  --list           list the benchmarks (matching PATTERN)\n"
	      "  --filter PATTERN run benchmarks whose name contains PATTERN\n"
	      "                   (a glob if it has * ? or [)\n"
	      "  --cpu N          pin single-thread benchmarks to CPU N\n"
	      "                   (default: the CPU segbench starts on)\n"
	      "  --json, --csv    machine-readable output\n"
	      "  --quick          fewer, shorter trials (CI, emulators)\n"
	      "  --output FILE    write results to FILE instead of stdout\n"
	      "  --check          TAP: every CPU-number method agrees on every CPU\n",
	      f);
}

static void set_ratios(struct result *r, size_t n)
{
	double ref = -1;
	size_t i;
	int cyc;

	for (i = 0; i < n; i++)
		if (!strcmp(r[i].name, SB_REF_NAME) && !r[i].skipped)
			ref = r[i].med_cyc >= 0 ? r[i].med_cyc : r[i].med_ns;
	for (i = 0; i < n; i++) {
		cyc = r[i].med_cyc >= 0;
		r[i].ratio = sb_ratio(cyc ? r[i].med_cyc : r[i].med_ns, ref);
	}
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "list", no_argument, NULL, 'l' },
		{ "filter", required_argument, NULL, 'f' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "csv", no_argument, NULL, 'v' },
		{ "quick", no_argument, NULL, 'q' },
		{ "output", required_argument, NULL, 'o' },
		{ "check", no_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	static struct result res[MAX_RESULTS];
	enum sb_format fmt = FMT_TEXT;
	const char *pattern = NULL, *outfile = NULL;
	struct sb_machine m;
	const struct bench *b;
	size_t t, n = 0;
	int c, do_list = 0, do_check = 0, bad = 0;
	FILE *out = stdout;

	while ((c = getopt_long(argc, argv, "lf:c:jvqo:kh", lopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			do_list = 1;
			break;
		case 'f':
			pattern = optarg;
			break;
		case 'c':
			sb_opts.pin_cpu = atoi(optarg);
			break;
		case 'j':
			fmt = FMT_JSON;
			break;
		case 'v':
			fmt = FMT_CSV;
			break;
		case 'q':
			sb_opts.quick = 1;
			break;
		case 'o':
			outfile = optarg;
			break;
		case 'k':
			do_check = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	if (do_list) {
		list(pattern);
		return 0;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (do_check)
		return sb_check();

	sb_sysinfo(&m);
	sb_timer_init(&m);
	sb_methods_init();
	if (sb_opts.pin_cpu < 0)
		sb_opts.pin_cpu = sched_getcpu() < 0 ? 0 : sched_getcpu();
	if (sb_pin(sb_opts.pin_cpu)) {
		fprintf(stderr, "segbench: cannot pin to CPU %d\n",
			sb_opts.pin_cpu);
		return 2;
	}
	sb_methods_pinned(sb_opts.pin_cpu);
	if (outfile) {
		out = fopen(outfile, "w");
		if (!out) {
			perror(outfile);
			return 2;
		}
	}

	measure_overhead();
	for (t = 0; t < ARRAY_SIZE(tables); t++) {
		for (b = tables[t]; b->name && n < MAX_RESULTS; b++) {
			struct result *r = &res[n];

			if (!selected(b, pattern))
				continue;
			n++;
			memset(r, 0, sizeof(*r));
			r->name = b->name;
			r->group = b->group;
			r->desc = b->desc;
			r->exact = -1;
			r->emulated = !!(b->flags & BF_EMULATED);
			r->threads = (b->flags & BF_THREADS) ? m.ncpus : 1;
			r->min_cyc = r->med_cyc = r->min_ns = r->med_ns = -1;
			if (b->setup) {
				int ret = b->setup(b, r->reason);

				if (ret < 0) {
					r->skipped = 1;
					continue;
				}
				if (ret > 0)
					r->emulated = 1;
			}
			/* The core clock drifts with load: re-measure it. */
			if (m.mode == MODE_NATIVE)
				sb_timer_core(&m);
			r->core_mhz = m.core_mhz;
			measure(b, r);
			if (b->verify) {
				char why[SB_REASON_LEN] = "";

				r->exact = !b->verify(b, why);
				if (!r->exact) {
					snprintf(r->reason, sizeof(r->reason),
						 "%s", why);
					bad = 1;
				}
			}
			/* Benchmarks may move us; come back. */
			sb_pin(sb_opts.pin_cpu);
			sb_methods_pinned(sb_opts.pin_cpu);
		}
	}
	set_ratios(res, n);
	sb_output(out, fmt, &m, res, n);
	if (out != stdout)
		fclose(out);
	return bad;
}
