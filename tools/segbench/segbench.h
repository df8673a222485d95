/* SPDX-License-Identifier: GPL-2.0 */
/*
 * segbench - segment register and CPU-number cost study.
 *
 * Shared declarations. Every benchmark is a struct bench: a setup hook that
 * says whether the benchmark can run here (and why not), and a run hook that
 * executes the measured operation a given number of times. The driver in
 * main.c times run() with the clock from timer.c, repeats it, subtracts the
 * empty-loop overhead and reduces the trials with stats.c.
 */
#ifndef SEGBENCH_H
#define SEGBENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SB_MAX_CPUS	256	/* slots in the per-CPU arrays */
#define SB_SLOT_SHIFT	6	/* 64-byte slot per CPU, as the PDA ABI */
#define SB_SLOT_INTS	(1 << (SB_SLOT_SHIFT - 2))
#define SB_REASON_LEN	256	/* room for two reasons: "no PDA entry; A; B" */

#if defined(__i386__)
#define SB_ARCH "i386"
#elif defined(__x86_64__)
#define SB_ARCH "x86_64"
#elif defined(__arm__)
#define SB_ARCH "arm"
#else
#error "segbench supports i386, x86_64 and arm"
#endif

#if defined(__i386__) || defined(__x86_64__)
#define SB_X86 1
#endif

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Unroll: the measured op is repeated this often per loop iteration. Ops
 * that cost under a cycle (a load) are repeated SB_UNROLL_CHEAP times, so
 * that the uncertainty of the subtracted loop overhead (a fraction of a
 * cycle per iteration) stays well under the figure itself.
 */
#define SB_UNROLL 8
#define SB_UNROLL_CHEAP 32
#define SB_REP8(x) x x x x x x x x
#define SB_REP32(x) SB_REP8(x) SB_REP8(x) SB_REP8(x) SB_REP8(x)

/* One per-CPU slot: a 64-byte line so CPUs never share a cache line. */
struct sb_slot {
	volatile int32_t v[SB_SLOT_INTS];
} __attribute__((aligned(64)));

/* struct bench.flags */
#define BF_EMULATED	0x1	/* runs on an emulation of the real mechanism */
#define BF_THREADS	0x2	/* one thread per online CPU */
#define BF_COUNTED	0x4	/* keeps a count that must come out exact */
#define BF_SLOW		0x8	/* system call or worse: fewer iterations */

struct bench {
	const char *name;	/* group.item.variant, used by --filter */
	const char *group;
	const char *desc;
	unsigned int ops;	/* measured ops per run() iteration */
	unsigned int flags;
	/*
	 * 0: runnable; 1: runnable on an emulation of the mechanism;
	 * -1: skip. A reason or note goes to @why.
	 */
	int (*setup)(const struct bench *b, char *why);
	void (*run)(const struct bench *b, unsigned long iters);
	/* BF_COUNTED: check the final count, 0 if exact */
	int (*verify)(const struct bench *b, char *why);
	long arg;		/* private to the benchmark */
	long arg2;
};

/*
 * Every benchmark loops the same way as the empty loop whose cost is
 * subtracted, so that what is left is the cost of the asm body alone.
 */
#define SB_LOOP(n, ...)						\
	do {								\
		unsigned long __i;					\
		for (__i = 0; __i < (n); __i++) {			\
			__VA_ARGS__;					\
		}							\
	} while (0)

/*
 * A run() that must leave set-up out of the timed window (threads) gives
 * the window itself; otherwise the driver times the whole call.
 */
void sb_mark(uint64_t t0, uint64_t t1);

/* One row of output. */
struct result {
	const char *name;
	const char *group;
	const char *desc;
	int skipped;
	char reason[SB_REASON_LEN];	/* skip reason or a note */
	int emulated;
	int threads;
	int exact;		/* -1: not counted, 0: wrong, 1: exact */
	unsigned int trials;
	unsigned long iters;
	double core_mhz;	/* core clock measured just before, 0 if none */
	double min_cyc, med_cyc;	/* < 0: not available */
	double min_ns, med_ns;
	double ratio;		/* median / median of the reference, < 0 if none */
};

/* Benchmark tables, one per file. Each ends with a zeroed entry. */
extern const struct bench sb_cpu_benches[];
extern const struct bench sb_inc_benches[];
extern const struct bench sb_pool_benches[];
#ifdef SB_X86
extern const struct bench sb_seg_benches[];
extern const struct bench sb_mem_benches[];
extern const struct bench sb_probe_benches[];
extern const struct bench sb_incform_benches[];
#endif
#ifdef __i386__
extern const struct bench sb_sys_benches[];
#endif

/* The row every other one is compared with. */
#define SB_REF_NAME "cpu.rseq"

/* Global options the benchmarks look at. */
struct sb_opts {
	int quick;
	int verbose;
	int pin_cpu;		/* -1: not pinned */
};
extern struct sb_opts sb_opts;

/* cpus.c */
int sb_online_cpus(int *cpus, int max);
int sb_pin(int cpu);
int sb_unpin(void);
int sb_run_threads(int nthreads, void (*prep)(void *), void *(*fn)(void *),
		   void **args, void (*started)(void), void (*finished)(void));

/* stats.c */
void sb_sort(double *v, size_t n);
double sb_min(const double *v, size_t n);
double sb_median(double *v, size_t n);
void sb_per_op(double *v, size_t n, const uint64_t *ticks,
	       unsigned long iters, unsigned int ops, double overhead);
double sb_ratio(double value, double ref);

/* output.c */
struct sb_machine;
enum sb_format { FMT_TEXT, FMT_JSON, FMT_CSV };
void sb_json_string(FILE *f, const char *s);
void sb_csv_string(FILE *f, const char *s);
void sb_fmt_num(char *buf, size_t len, double v, int prec);
void sb_output(FILE *f, enum sb_format fmt, const struct sb_machine *m,
	       const struct result *r, size_t n);

/* sysinfo.c */
enum sb_mode { MODE_NATIVE, MODE_EMULATED, MODE_ICOUNT };
struct sb_machine {
	char arch[16];
	char cpu_model[96];
	char cpu_id[48];	/* family/model/stepping or ARM part */
	char kernel[224];
	char libc[32];
	char virt[64];		/* hypervisor, "none", or emulator */
	char compiler[64];
	char date[32];
	char loadavg[32];	/* /proc/loadavg at start: was the host quiet? */
	int ncpus;
	enum sb_mode mode;
	const char *unit;	/* "cycles", "ns" or "insns" */
	double tsc_mhz;		/* 0: no TSC */
	double core_mhz;	/* 0: not calibrated */
};
void sb_sysinfo(struct sb_machine *m);
int sb_kernel_version(int *major, int *minor);
int sb_cmdline_has(const char *word);

/* timer.c */
uint64_t sb_ticks_start(void);
uint64_t sb_ticks_end(void);
void sb_timer_init(struct sb_machine *m);
void sb_timer_core(struct sb_machine *m);
double sb_ticks_to_ns(double ticks);
double sb_ticks_to_cycles(double ticks);	/* < 0 if unknown */

/* vdso.c */
void *sb_vdso_sym(const char *name);

/* check.c */
int sb_check(void);

/*
 * trap.c: run a probe with SIGSEGV, SIGBUS and SIGILL caught, so that a
 * feature the CPU or kernel claims but does not deliver (an LDT selector a
 * paravirtualised guest refuses to load, RDPID that CPUID reports and a
 * hypervisor traps) skips a row instead of killing the run. Segment
 * registers are put back as they were, fault or not; the previous signal
 * handlers too. One probe at a time: the state is global, not per thread,
 * because on i386 the thread pointer is %gs, which a probe may have broken.
 */
int sb_trap(void (*fn)(void *), void *arg);	/* 0, or the signal caught */
const char *sb_sig_name(int sig);

#ifdef SB_X86
enum sb_reg { SB_NOREG = -1, SB_FS, SB_GS };
enum sb_probe { SB_PROBE_LOAD, SB_PROBE_READ, SB_PROBE_WRITE };
extern const char *const sb_reg_name[2];	/* "fs", "gs" */
/*
 * Load @sel into @reg; with SB_PROBE_READ also read through it at offset
 * @off, with SB_PROBE_WRITE also add 0 to the word there. Returns 0, the
 * signal it raised, or -1 if the probe cannot be made (%fs in the 64-bit
 * build: x86-64 glibc keeps its thread pointer there).
 */
int sb_trap_seg(int reg, unsigned int sel, unsigned long off, int mode);
#endif

/*
 * LDT entries segbench writes with modify_ldt(), kept apart: the segment
 * benchmarks' descriptor, the trap self-test's one-byte segment, the
 * incform rows' two PDA-shaped descriptors (base 0 and base 64, entries 2
 * and 3) and one PDA-shaped descriptor per CPU where the PDA is emulated
 * on the LDT.
 */
#define SB_LDT_SEGS	0
#define SB_LDT_SELFTEST	1
#define SB_LDT_INCFORM	2
#define SB_LDT_PDA	16

/* Self-test of sb_trap() for --check and the unit tests. */
int sb_trap_selftest_count(void);
/* Calls @report once per case: @res 1 pass, 0 fail, -1 skip (@note why). */
void sb_trap_selftest(void (*report)(int res, const char *what,
				     const char *note));

#endif /* SEGBENCH_H */
