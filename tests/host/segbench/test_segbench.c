// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests for segbench's statistics (stats.c), output (output.c)
 * and fault-catching probes (trap.c). Plain C, TAP on stdout, no
 * dependency beyond libc.
 */
#define _GNU_SOURCE
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "segbench.h"

struct sb_opts sb_opts = { .pin_cpu = -1 };

static int tests, failed;

static void ok(int cond, const char *name)
{
	tests++;
	if (!cond)
		failed++;
	printf("%sok %d %s\n", cond ? "" : "not ", tests, name);
}

static int near(double a, double b)
{
	return fabs(a - b) < 1e-9;
}

/* Run @fn's output into a string. */
static char *capture(void (*fn)(FILE *, void *), void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	fn(f, arg);
	fclose(f);
	return buf;
}

static void put_json(FILE *f, void *s)
{
	sb_json_string(f, s);
}

static void put_csv(FILE *f, void *s)
{
	sb_csv_string(f, s);
}

static void test_stats(void)
{
	double odd[] = { 5, 1, 3 }, even[] = { 4, 1, 3, 2 }, one[] = { 7 };
	double dup[] = { 2, 2, 2, 1 }, neg[] = { 3, -0.5, 9 }, v[4];
	uint64_t ticks[4] = { 1000, 1200, 800, 100 };

	ok(near(sb_median(odd, 3), 3), "median of odd count is the middle");
	ok(odd[0] == 1 && odd[2] == 5, "median sorts in place");
	ok(near(sb_median(even, 4), 2.5), "median of even count is mid mean");
	ok(near(sb_median(one, 1), 7), "median of one value");
	ok(sb_median(one, 0) < 0, "median of nothing is 'not available'");
	ok(near(sb_median(dup, 4), 2), "median with duplicates");
	ok(near(sb_min(neg, 3), -0.5), "min finds a negative");
	ok(sb_min(one, 0) < 0, "min of nothing is 'not available'");

	/* 100 iterations of 8 ops, overhead 2 ticks per iteration. */
	sb_per_op(v, 4, ticks, 100, 8, 2.0);
	ok(near(v[0], (1000 - 200) / 800.0), "per-op subtracts empty loop");
	ok(near(v[2], (800 - 200) / 800.0), "per-op divides by iters * ops");
	ok(near(v[3], 0), "per-op clamps below-overhead trials to 0");
	sb_per_op(v, 1, ticks, 10, 0, 0);
	ok(near(v[0], 100), "per-op treats ops 0 as 1");

	ok(near(sb_ratio(6, 2), 3), "ratio");
	ok(sb_ratio(6, 0) < 0, "ratio without reference is n/a");
	ok(sb_ratio(-1, 2) < 0, "ratio of a missing value is n/a");
}

static void test_strings(void)
{
	char *s, buf[32];

	s = capture(put_json, "a\"b\\c\nd\te\x01");
	ok(!strcmp(s, "\"a\\\"b\\\\c\\nd\\te\\u0001\""), "json escapes");
	free(s);
	s = capture(put_json, "%fs:table");
	ok(!strcmp(s, "\"%fs:table\""), "json keeps plain text");
	free(s);
	s = capture(put_csv, "plain");
	ok(!strcmp(s, "plain"), "csv leaves plain fields");
	free(s);
	s = capture(put_csv, "a,b \"c\"");
	ok(!strcmp(s, "\"a,b \"\"c\"\"\""), "csv quotes and doubles quotes");
	free(s);

	sb_fmt_num(buf, sizeof(buf), 1.23456, 2);
	ok(!strcmp(buf, "1.23"), "number format");
	sb_fmt_num(buf, sizeof(buf), -1, 2);
	ok(!buf[0], "negative number is empty (n/a)");
	sb_fmt_num(buf, sizeof(buf), NAN, 2);
	ok(!buf[0], "NaN is empty (n/a)");
}

static struct sb_machine mach = {
	.arch = "i386", .cpu_model = "Test \"CPU\"", .cpu_id = "family 6",
	.kernel = "6.12.0 test", .libc = "glibc 2.36", .virt = "none seen",
	.compiler = "gcc", .date = "2026-01-01 00:00 UTC", .ncpus = 2,
	.mode = MODE_NATIVE, .unit = "cycles", .tsc_mhz = 2000,
	.core_mhz = 3000,
};

static struct result rows[] = {
	{ .name = "cpu.rseq", .group = "cpu-number", .desc = "rseq",
	  .exact = -1, .threads = 1, .trials = 21, .iters = 1000,
	  .min_cyc = 2, .med_cyc = 2.5, .min_ns = 0.7, .med_ns = 0.8,
	  .ratio = 1 },
	{ .name = "cpu.pda", .group = "cpu-number", .desc = "pda, emulated",
	  .emulated = 1, .exact = -1, .threads = 1, .reason = "note, with comma",
	  .min_cyc = 2, .med_cyc = 5, .min_ns = 1, .med_ns = 2, .ratio = 2 },
	{ .name = "cpu.getcpu_cache", .group = "cpu-number", .desc = "gcc",
	  .skipped = 1, .exact = -1, .reason = "ENOSYS",
	  .min_cyc = -1, .med_cyc = -1, .min_ns = -1, .med_ns = -1,
	  .ratio = -1 },
	{ .name = "inc.rseq.Nt", .group = "percpu-increment", .desc = "inc",
	  .exact = 1, .threads = 2, .min_cyc = 7, .med_cyc = 8,
	  .min_ns = 3, .med_ns = 4, .ratio = 3.2 },
};

static enum sb_format cur_fmt;

static void put_all(FILE *f, void *m)
{
	sb_output(f, cur_fmt, m, rows, 4);
}

static int count(const char *s, const char *needle)
{
	int n = 0;

	for (; (s = strstr(s, needle)); s++)
		n++;
	return n;
}

static void test_output(void)
{
	char *s;

	cur_fmt = FMT_JSON;
	s = capture(put_all, &mach);
	ok(strstr(s, "\"cpu_model\": \"Test \\\"CPU\\\"\"") != NULL,
	   "json machine string escaped");
	ok(count(s, "\"name\":") == 4, "json has one object per row");
	ok(strstr(s, "\"status\": \"skip\"") != NULL, "json marks skips");
	ok(strstr(s, "\"median_cycles\": null") != NULL,
	   "json skipped figures are null");
	ok(strstr(s, "\"median_cycles\": 2.50") != NULL, "json figures");
	ok(strstr(s, "\"exact\": true") != NULL, "json exact count");
	ok(strstr(s, "\"emulated\": true") != NULL, "json emulated flag");
	ok(strstr(s, "\"meaningful\": true") != NULL, "json native meaningful");
	ok(s[strlen(s) - 2] == '}', "json closes the document");
	free(s);

	mach.mode = MODE_EMULATED;
	s = capture(put_all, &mach);
	ok(strstr(s, "\"meaningful\": false") != NULL,
	   "json emulated is not meaningful");
	free(s);
	cur_fmt = FMT_TEXT;
	s = capture(put_all, &mach);
	ok(strstr(s, "NOT MEANINGFUL") != NULL, "text warns under emulation");
	ok(strstr(s, "skipped: ENOSYS") != NULL, "text shows skip reason");
	ok(strstr(s, "[emulated]") != NULL, "text labels emulated rows");
	ok(strstr(s, "[count exact]") != NULL, "text shows exact counts");
	free(s);

	mach.mode = MODE_ICOUNT;
	s = capture(put_all, &mach);
	ok(strstr(s, "med insn") != NULL, "text icount reports instructions");
	free(s);
	mach.mode = MODE_NATIVE;

	cur_fmt = FMT_CSV;
	s = capture(put_all, &mach);
	ok(count(s, "\n") == 5, "csv header plus one line per row");
	ok(!strncmp(s, "name,group,status,", 18), "csv header");
	ok(strstr(s, "\"note, with comma\"") != NULL, "csv quotes notes");
	ok(strstr(s, "cpu.getcpu_cache,cpu-number,skip,0,0,,,,,,,cycles,ENOSYS")
	   != NULL, "csv skipped row has empty figures");
	free(s);
}

static void trap_report(int res, const char *what, const char *note)
{
	char name[256];

	if (res < 0) {
		printf("ok %d trap: %s # SKIP %s\n", ++tests, what, note);
		return;
	}
	snprintf(name, sizeof(name), "trap: %s", what);
	ok(res, name);
	if (!res)
		printf("# %s\n", note);
}

/*
 * The probe helper on this host: a selector that must fault is reported
 * as a fault, a valid one is not. Then the self-test --check runs too.
 */
static void test_trap(void)
{
#ifdef SB_X86
	static struct sb_slot word;
	unsigned int ss;

	ok(sb_trap_seg(SB_GS, 0xfff8 | 3, 0, SB_PROBE_LOAD) == SIGSEGV,
	   "trap: GDT selector past the GDT limit in %gs reports SIGSEGV");
	ok(sb_trap_seg(SB_GS, 8191 << 3 | 7, 0, SB_PROBE_LOAD) > 0,
	   "trap: LDT selector of an entry never written reports a fault");
	asm volatile("mov %%ss, %0" : "=r" (ss));
	ok(sb_trap_seg(SB_GS, ss & 0xffff, (unsigned long)&word,
		       SB_PROBE_WRITE) == 0,
	   "trap: __USER_DS in %gs, written through, reports no fault");
#ifdef __x86_64__
	ok(sb_trap_seg(SB_FS, ss & 0xffff, 0, SB_PROBE_LOAD) == -1,
	   "trap: %fs is refused in 64-bit mode (glibc's thread pointer)");
#endif
#endif
	ok(!strcmp(sb_sig_name(SIGBUS), "SIGBUS"), "trap: signal names");
	sb_trap_selftest(trap_report);
}

int main(void)
{
	printf("TAP version 13\n");
	test_stats();
	test_strings();
	test_output();
	test_trap();
	printf("1..%d\n", tests);
	printf("# %d of %d failed\n", failed, tests);
	return failed ? 1 : 0;
}
