// SPDX-License-Identifier: GPL-2.0
/*
 * A seeded fuzzer of %gs in a 64-bit program, the register the PDA
 * selector lives in there (patch 0008).  A random stream of operations on
 * %gs, each followed by a check of the selector, of ARCH_GET_GS and, where
 * the base points into pda_cpu_table, of a read through %gs, against a
 * model:
 *
 * - load the PDA selector (any RPL): the base is the CPU's, cpu << 6, and
 *   reads the CPU number (the thread is always pinned, so the CPU is
 *   known);
 * - load __USER_DS: base 0, kept across context switches;
 * - load the LDT's data segment (the test installs one, base slot 5's):
 *   that base, kept across context switches;
 * - load the null selector 0 (not 1-3: an IRET to user mode may null
 *   those, depending on the CPU): the base is then unknown (Intel clears
 *   it, AMD keeps it, and a kernel without FSGSBASE may put the saved one
 *   back at the next switch: save_base_legacy()), so only the selector is
 *   checked until the next operation that sets one;
 * - load a selector that must fault: __KERNEL_DS (DPL 0), an LDT index
 *   past the LDT's end, an index past the GDT's limit (#GP: SIGSEGV), the
 *   LDT's not-present entry (#NP: SIGBUS); %gs and its base stay as they
 *   were;
 * - ARCH_SET_GS of a slot's base: selector 0, that base;
 * - WRGSBASE (FSGSBASE only) of a slot's base: that base; with the PDA
 *   selector held, until the next context switch, which gives the CPU's
 *   base back (so until a migration, either base is right);
 * - a migration to a random CPU, sched_yield(), a signal whose handler
 *   sees what the model says.
 *
 * The seed is pda.seed=N on the kernel command line (SEED=N of make), else
 * a fixed one; the end prints a checksum of the operations and the model's
 * state after each, which a replay on the same kind of machine repeats
 * (the CPU count picks the migrations; without FSGSBASE, WRGSBASE is
 * ARCH_SET_GS).  The size is a base count times pda.scale.
 */
#define _GNU_SOURCE
#include <asm/ldt.h>
#include <asm/prctl.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "lib/cmdline.h"
#include "lib/pda_test.h"
#include "lib/stat.h"
#include "lib/xorshift.h"

#define DEFAULT_SEED		0x6a5f
#define BASE_OPS		20000
#define GS_HWCAP2_FSGSBASE	(1u << 1)	/* <asm/hwcap2.h> */
#define NOTES			4

/* The LDT: a data segment with slot 5's base, and a not-present one. */
#define LDT_BASE	(5UL << PDA_USER_SHIFT)
#define LDT_DATA	(0 << 3 | 4)		/* TI set, RPL 0 */
#define LDT_ABSENT	(1 << 3 | 4 | 3)

enum op {
	OP_LOAD_PDA, OP_LOAD_DS, OP_LOAD_LDT, OP_LOAD_NULL, OP_LOAD_BAD,
	OP_SET_BASE, OP_WRGSBASE, OP_MIGRATE, OP_YIELD, OP_SIGNAL, OP_NR
};

static const char *const op_name[OP_NR] = {
	"load PDA", "load __USER_DS", "load LDT data", "load null",
	"load bad", "ARCH_SET_GS", "WRGSBASE", "migrate", "sched_yield",
	"signal",
};

/* What the model knows of %gs. */
struct gs_model {
	unsigned int sel;
	int pda;		/* sel is the PDA selector, any RPL */
	int known;		/* base is known (else only sel is checked) */
	unsigned long base;	/* when known and !pda */
	int wr_pending;		/* pda, and a WRGSBASE of wr_base since */
	unsigned long wr_base;
};

struct gs_fuzz {
	int cpus[CPU_SETSIZE], ncpus, cpu;
	int fsgsbase, ldt;
	uint32_t rnd, checksum;
	long ops, mismatches, faults, by_op[OP_NR];
	char notes[NOTES][200];
};

static struct gs_fuzz fz;

static sigjmp_buf fault_env;
static volatile int fault_armed, fault_sig;
static volatile unsigned int sig_sel;
static volatile int sig_cpu_seg, sig_cpu;

static void note(long i, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void note(long i, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (fz.mismatches++ >= NOTES)
		return;
	n = snprintf(fz.notes[fz.mismatches - 1], sizeof(fz.notes[0]),
		     "op %ld: ", i);
	va_start(ap, fmt);
	vsnprintf(fz.notes[fz.mismatches - 1] + n, sizeof(fz.notes[0]) - n,
		  fmt, ap);
	va_end(ap);
}

static void mix(uint32_t v)
{
	int i;

	for (i = 0; i < 4; i++, v >>= 8)
		fz.checksum = (fz.checksum ^ (v & 0xff)) * 16777619u;
}

static unsigned int read_gs_sel(void)
{
	unsigned int sel;

	asm volatile("movl %%gs, %0" : "=r" (sel));
	return sel & 0xffff;
}

/* The slot a base within pda_cpu_table reads: its index. */
static int read_slot(void)
{
	return pda_cpu_raw();
}

static void fault_handler(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	(void)uc;
	if (!fault_armed)
		_exit(3);
	fault_armed = 0;
	fault_sig = sig;
	siglongjmp(fault_env, 1);
}

static void usr1_handler(int sig)
{
	(void)sig;
	sig_sel = read_gs_sel();
	sig_cpu = sched_getcpu();
	sig_cpu_seg = (sig_sel & ~3u) == (PDA_USER_SELECTOR & ~3u) ?
		      read_slot() : -1;
}

/* Loads @sel into %gs; 0, or the signal the load raised. */
static int load_gs(unsigned int sel)
{
	if (sigsetjmp(fault_env, 1))
		return fault_sig;
	fault_armed = 1;
	asm volatile("movl %0, %%gs" : : "r" (sel) : "memory");
	fault_armed = 0;
	return 0;
}

static void model_pda(struct gs_model *m, unsigned int sel)
{
	m->sel = sel;
	m->pda = 1;
	m->known = 1;
	m->wr_pending = 0;
}

static void model_base(struct gs_model *m, unsigned int sel,
		       unsigned long base)
{
	m->sel = sel;
	m->pda = 0;
	m->known = 1;
	m->base = base;
	m->wr_pending = 0;
}

/* Installs the LDT; 0, or -errno (no CONFIG_MODIFY_LDT_SYSCALL). */
static int ldt_install(void)
{
	struct user_desc d = {
		.entry_number = 0, .base_addr = LDT_BASE, .limit = 0xfffff,
		.seg_32bit = 1, .limit_in_pages = 1, .useable = 1,
	};

	if (syscall(SYS_modify_ldt, 1, &d, sizeof(d)))
		return -errno;
	d.entry_number = 1;
	d.seg_not_present = 1;
	if (syscall(SYS_modify_ldt, 1, &d, sizeof(d)))
		return -errno;
	return 0;
}

/* A selector the load must fault on, and the signal it raises. */
static unsigned int bad_selector(uint32_t r, int *sig)
{
	*sig = SIGSEGV;
	switch (r % 4) {
	case 0:
		return 0x18 | (r >> 2 & 3);		/* __KERNEL_DS, DPL 0 */
	case 1:						/* past the LDT */
		return (2 + (r >> 2 & 0x3ff)) << 3 | 4 | 3;
	case 2:
		return 0xfff8 | (r >> 2 & 3);		/* past the GDT */
	default:
		if (fz.ldt)
			*sig = SIGBUS;			/* #NP */
		return LDT_ABSENT;
	}
}

/* Checks %gs against the model after operation @i. */
static void check(long i, const struct gs_model *m)
{
	unsigned int sel = read_gs_sel();
	unsigned long base = pda_test_gs_base(), cpu_base;
	int cpu = sched_getcpu();

	if (cpu != fz.cpu) {
		note(i, "pinned to %d, sched_getcpu() %d", fz.cpu, cpu);
		return;
	}
	if (sel != m->sel)
		note(i, "selector %#x, model %#x", sel, m->sel);
	if (!m->known)
		return;
	cpu_base = (unsigned long)cpu << PDA_USER_SHIFT;
	if (m->pda) {
		if (base != cpu_base && !(m->wr_pending && base == m->wr_base))
			note(i, "PDA held on %d: base %#lx, model %#lx%s", cpu,
			     base, cpu_base, m->wr_pending ?
			     " or the WRGSBASE one" : "");
		if (!m->wr_pending && read_slot() != cpu)
			note(i, "PDA held on %d: %%gs read %d", cpu,
			     read_slot());
		return;
	}
	if (base != m->base)
		note(i, "selector %#x: base %#lx, model %#lx", sel, base,
		     m->base);
	else if (base && base < PDA_MAX_CPUS << PDA_USER_SHIFT &&
		 read_slot() != (int)(base >> PDA_USER_SHIFT))
		note(i, "base %#lx: %%gs read %d", base, read_slot());
}

static void step(long i, struct gs_model *m)
{
	uint32_t r = xorshift32(&fz.rnd);
	enum op op = r % OP_NR;
	unsigned int sel;
	unsigned long base = (unsigned long)(r >> 8 & (PDA_MAX_CPUS - 1))
			     << PDA_USER_SHIFT;
	int sig, want, cpu;

	if (op == OP_WRGSBASE && !fz.fsgsbase)
		op = OP_SET_BASE;
	if (op == OP_LOAD_LDT && !fz.ldt)
		op = OP_LOAD_BAD;
	/* Migrations cost a context switch each: fewer of them. */
	if (op == OP_MIGRATE && (r >> 16) % 4)
		op = OP_YIELD;
	fz.by_op[op]++;
	mix(op);
	switch (op) {
	case OP_LOAD_PDA:
		sel = (PDA_USER_SELECTOR & ~3u) | (r >> 8 & 3);
		mix(sel);
		sig = load_gs(sel);
		if (sig)
			note(i, "load of %#x: signal %d", sel, sig);
		model_pda(m, sel);
		break;
	case OP_LOAD_DS:
		sel = pda_test_user_ds();
		sig = load_gs(sel);
		if (sig)
			note(i, "load of %#x: signal %d", sel, sig);
		model_base(m, sel, 0);
		break;
	case OP_LOAD_LDT:
		sel = LDT_DATA | (r >> 8 & 3);
		mix(sel);
		sig = load_gs(sel);
		if (sig)
			note(i, "load of %#x: signal %d", sel, sig);
		model_base(m, sel, LDT_BASE);
		break;
	case OP_LOAD_NULL:
		sel = 0;
		sig = load_gs(sel);
		if (sig)
			note(i, "load of %#x: signal %d", sel, sig);
		m->sel = sel;
		m->pda = 0;
		m->known = 0;
		m->wr_pending = 0;
		break;
	case OP_LOAD_BAD:
		sel = bad_selector(r >> 8, &want);
		mix(sel);
		mix(want);
		sig = load_gs(sel);
		fz.faults++;
		if (sig != want)
			note(i, "load of %#x: signal %d, model %d", sel, sig,
			     want);
		break;
	case OP_SET_BASE:
		mix(base);
		if (syscall(SYS_arch_prctl, ARCH_SET_GS, base))
			note(i, "ARCH_SET_GS %#lx: errno %d", base, errno);
		model_base(m, 0, base);
		break;
	case OP_WRGSBASE:
		mix(base);
		asm volatile("wrgsbase %0" : : "r" (base) : "memory");
		if (m->pda) {
			m->wr_pending = 1;
			m->wr_base = base;
		} else {
			m->known = 1;
			m->base = base;
		}
		break;
	case OP_MIGRATE:
		cpu = fz.cpus[xorshift32(&fz.rnd) % fz.ncpus];
		mix(cpu);
		if (pda_test_pin(cpu)) {
			note(i, "cannot pin to %d", cpu);
			break;
		}
		if (cpu != fz.cpu)
			m->wr_pending = 0;	/* it ran a context switch */
		fz.cpu = cpu;
		break;
	case OP_YIELD:
		sched_yield();
		break;
	default:
		raise(SIGUSR1);
		if (sig_sel != m->sel || sig_cpu != fz.cpu ||
		    (m->pda && !m->wr_pending && sig_cpu_seg != fz.cpu))
			note(i, "in the handler: selector %#x (model %#x), cpu %d (%d), %%gs read %d",
			     sig_sel, m->sel, sig_cpu, fz.cpu, sig_cpu_seg);
	}
	mix(m->sel | m->pda << 16 | m->known << 17 | m->wr_pending << 18);
	mix(m->pda ? (uint32_t)fz.cpu : m->known ? (uint32_t)m->base : 0);
	check(i, m);
}

TEST(gs_fuzz)
{
	unsigned long seed = cmdline_seed(DEFAULT_SEED);
	long n = BASE_OPS * cmdline_scale(), i;
	struct sigaction sa;
	struct gs_model m = { 0 };
	int k;

	if (!(getauxval(AT_HWCAP2) & HWCAP2_PDA_USER_SEG))
		SKIP(return, "no user per-CPU segment (HWCAP2)");
	fz.ncpus = pda_test_online(fz.cpus, CPU_SETSIZE);
	ASSERT_LT(0, fz.ncpus);
	fz.fsgsbase = !!(getauxval(AT_HWCAP2) & GS_HWCAP2_FSGSBASE);
	fz.ldt = !ldt_install();
	ASSERT_EQ(0, pda_init_thread());
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fault_handler;
	sa.sa_flags = SA_SIGINFO;
	ASSERT_EQ(0, sigaction(SIGSEGV, &sa, NULL));
	ASSERT_EQ(0, sigaction(SIGBUS, &sa, NULL));
	ASSERT_NE(SIG_ERR, signal(SIGUSR1, usr1_handler));

	fz.rnd = (uint32_t)seed * 2654435761u + 1;
	fz.checksum = 2166136261u;
	fz.cpu = fz.cpus[0];
	ASSERT_EQ(0, pda_test_pin(fz.cpu));
	model_pda(&m, PDA_USER_SELECTOR);
	TH_LOG("seed %lu (SEED=%lu replays it), %ld operations, %d CPUs, %s, %s",
	       seed, seed, n, fz.ncpus,
	       fz.fsgsbase ? "FSGSBASE" : "no FSGSBASE",
	       fz.ldt ? "LDT" : "no LDT (modify_ldt failed)");
	for (i = 0; i < n; i++)
		step(i, &m);
	fz.ops = n;

	/* Leave %gs as pda.h expects it, for the harness's teardown. */
	load_gs(PDA_USER_SELECTOR);
	pda_test_unpin();
	for (k = 0; k < OP_NR; k++)
		TH_LOG("%s: %ld", op_name[k], fz.by_op[k]);
	for (k = 0; k < NOTES && k < fz.mismatches; k++)
		TH_LOG("%s", fz.notes[k]);
	TH_LOG("gs_fuzz: seed %lu, operation stream checksum %08x", seed,
	       fz.checksum);
	EXPECT_EQ(0, fz.mismatches);
	/* Every operation came up, and every bad load faulted. */
	for (k = 0; k < OP_NR; k++)
		if ((k != OP_WRGSBASE || fz.fsgsbase) &&
		    (k != OP_LOAD_LDT || fz.ldt))
			EXPECT_LT(0, fz.by_op[k]);
	pda_stat("fuzz_iterations", fz.ops > fz.mismatches ?
				    fz.ops - fz.mismatches : 0);
}

TEST_HARNESS_MAIN
