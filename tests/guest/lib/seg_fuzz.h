/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The model the x86_seg_fuzz_* programs share: seeded, reproducible
 * fuzzers of segment selectors, one way of setting them each (mov,
 * sigreturn, ptrace, modify_ldt() and set_thread_area()).  Every operation
 * has its outcome predicted by a model and the observed outcome must be
 * that prediction, exactly; the same seed replays the same operations.
 *
 * The seed is pda.seed=N on the kernel command line (SEED=N of make), else
 * a fixed one; each test prints it and, at its end, a checksum of the
 * operations it made (their parameters and predicted outcomes), so that two
 * runs can be shown to have done the same thing.  A test draws from its
 * own stream, made of the seed and the test's name (sub_seed()).  The size
 * is a base count times pda.scale (pda.scale.PROGRAM for one program),
 * divided by 20 in Bochs.
 *
 * The model of a data segment load ("loadable"): a null selector (0-3)
 * always loads; otherwise the load succeeds if VERR says the segment is
 * readable at CPL 3 with the selector's RPL and LAR shows it present; it
 * raises #NP if VERR agrees but the segment is not present, and #GP in
 * every other case.  %ss wants RPL 3, VERW (a writable data segment) and
 * present, else #GP, or #SS if only the present bit is missing.  The
 * instructions are the CPU's own view of the descriptor tables; a fixed
 * table of the GDT's well-known entries checks that view first.  The kernel
 * loads the same way at CPL 0 (an RPL 3 selector needs DPL 3 there too),
 * and every load the entry code makes for user space has a fixup that
 * turns a failing selector into 0.
 *
 * The same binaries run on an i386 kernel and, as 32-bit (compat) tasks,
 * on an x86-64 one, and the GDT differs: __USER_CS and __USER_DS are 0x23
 * and 0x2b there (0x73 and 0x7b on i386), 0x33 is the 64-bit __USER_CS
 * (L set: not runnable here, but readable code, so a data register takes
 * it), the TLS entries are 12-14 (6-8) and CPUNODE is 15 (28); only the
 * PDA is entry 29 on both.  The fixture learns the layout (gdt_learn()):
 * %cs and %ss, glibc's %gs and get_thread_area() for the TLS entries, LAR
 * over the whole GDT for the rest, every entry it can see accounted for.
 * uname() says which kernel it is, for the kernel's own entries (DPL 0,
 * invisible to LAR) and for what the two kernels do differently, which
 * the model says where it applies (gdt.kernel64).
 *
 * One rule depends on the CPU: IRET to CPL 3 nulls a data segment register
 * whose cached descriptor has a DPL below 3, which can include a non-zero
 * null selector (1-3) loaded at CPL 0 (see fixup_rpl() in signal_32.c).
 * QEMU 7.2 nulls %ds and %es there but keeps %fs and %gs; other CPUs
 * differ.  Each test process measures it once (load 1, 2, 3 at CPL 3,
 * int $0x80, read back) and the model uses that, per register.
 *
 * "Nothing lost": after each test a bystander process (lib/pda_hostile.h)
 * must still hold its own %fs (a TLS selector), %gs, flat %ss/%ds/%es and
 * read what it expects through them (its second thread reads its CPU
 * through 0xeb), and the kernel log must have no splat; within a test, the
 * registers an operation is not about must come back unchanged.
 *
 * Header only, for one program each.  Wants _GNU_SOURCE before the first
 * #include, and kselftest_harness.h included before it (the fixture).
 */
#ifndef PDA_TESTS_SEG_FUZZ_H
#define PDA_TESTS_SEG_FUZZ_H

#ifndef TH_LOG
#error "include kselftest_harness.h before lib/seg_fuzz.h"
#endif

#include <asm/ldt.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <ucontext.h>
#include <unistd.h>

#include "pda_hostile.h"
#include "stat.h"
#include "xorshift.h"

#define DEFAULT_SEED	0x5e6f0221u

/* Code that may run with a foreign %gs: no canary read through it. */
#define NOSP		__attribute__((no_stack_protector))

#define TRAP_UD		6
#define TRAP_NP		11
#define TRAP_SS		12
#define TRAP_GP		13
#define TRAP_IRET	32	/* X86_TRAP_IRET: the kernel's IRET faulted */
#define SI_KERNEL_CODE	0x80

/* LAR access rights: the second descriptor word & 0x00f0ff00. */
#define AR_MASK		0x00f0ff00u
#define AR_W		(1u << 9)	/* data: writable */
#define AR_CODE		(1u << 11)
#define AR_S		(1u << 12)
#define AR_P		(1u << 15)
#define AR_L		(1u << 21)	/* 64-bit code */

/* The layout of this kernel's GDT, learnt by gdt_learn(). */
#define USER_CS		(gdt.user_cs)
#define USER_DS		(gdt.user_ds)
#define GLIBC_GS	(gdt.glibc_gs)
#define CPUNODE		(gdt.cpunode)
#define TLS_MIN		(gdt.tls_min)	/* glibc's entry, the first */
#define TLS_SEL(e)	((e) * 8 + 3)
#define LDT_SEL(e)	((e) * 8 + 7)
/* The same entries with another RPL: every one names the same descriptor. */
#define WITH_RPL(sel, rpl)	(((sel) & ~3u) | ((rpl) & 3))

/* ------------------------------------------------------------ results */

#define MAX_KINDS	32
#define MAX_NOTES	8
#define NOTE_LEN	300

/*
 * What a test's child reports, in shared memory.  kinds[] counts outcome
 * kinds; their names are per test.
 */
struct fz_out {
	uint32_t iters;			/* operations checked */
	uint32_t mismatches;
	uint32_t checksum;		/* of the operation stream */
	volatile uint32_t progress;	/* the operation in flight */
	uint32_t kinds[MAX_KINDS];
	uint32_t sib_checks, sib_stale, sib_follow, sib_zeroed, sib_reloads;
	uint32_t sib_rpl_checks[4], sib_rpl_follow[4];	/* by %fs's RPL */
	uint32_t main_switched, main_again;	/* x86-64: see check_main_fs() */
	volatile int spin_flag;		/* the ptrace tracee is spinning */
	volatile int lock;
	int nnotes;
	char notes[MAX_NOTES][NOTE_LEN];
};

static struct fz_out *out;
static unsigned long fz_seed;

/* Records a mismatch: the seed, the operation and what differed. */
static void note(uint32_t op, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void note(uint32_t op, const char *fmt, ...)
{
	va_list ap;
	int k, n;

	while (__sync_lock_test_and_set(&out->lock, 1))
		;
	out->mismatches++;
	k = out->nnotes;
	if (k < MAX_NOTES) {
		out->nnotes++;
		n = snprintf(out->notes[k], NOTE_LEN, "seed %lu op %u: ",
			     fz_seed, op);
		va_start(ap, fmt);
		vsnprintf(out->notes[k] + n, NOTE_LEN - n, fmt, ap);
		va_end(ap);
	}
	__sync_lock_release(&out->lock);
}

/* FNV-1a over the operation stream. */
static void mix(uint32_t *h, uint32_t v)
{
	int i;

	for (i = 0; i < 4; i++) {
		*h ^= (v >> (8 * i)) & 0xff;
		*h *= 16777619u;
	}
}

/* Each test's own stream, from the seed and the test's name. */
static uint32_t sub_seed(const char *name)
{
	uint32_t h = 2166136261u;

	mix(&h, (uint32_t)fz_seed);
	mix(&h, (uint32_t)((uint64_t)fz_seed >> 32));
	while (*name)
		mix(&h, (unsigned char)*name++);
	return h ? h : 1;
}

static long fz_iterations(long base)
{
	return ph_scale(base * cmdline_scale());
}

/* ------------------------------------------------------------ the GDT */

/*
 * What a 32-bit process cannot learn with LAR: the kernel's own entries
 * (DPL 0, from segment.h), and answers of the two kernels that differ.
 */
struct kernel_gdt {
	const char *name;
	unsigned int user_cs, user_ds;	/* what %cs and %ss must hold */
	unsigned int tls_min;		/* GDT_ENTRY_TLS_MIN */
	uint16_t kernel[12];		/* the kernel's entries, RPL 0 */
	int nkernel;
	uint16_t kernel_cs, kernel_ss[2];	/* for draw_cs(), draw_ss() */
	unsigned long default_ldt;	/* bytes read_default_ldt() gives */
};

static const struct kernel_gdt kernel_i386 = {
	.name = "i386", .user_cs = 0x73, .user_ds = 0x7b, .tls_min = 6,
	/* kernel CS/DS, TSS, LDT, PNPBIOS, APM, ESPFIX, per-CPU, #DF TSS */
	.kernel = { 0x60, 0x68, 0x80, 0x88, 0x90, 0x98, 0xa0, 0xb8, 0xd0,
		    0xd8, 0xf8 },
	.nkernel = 11,
	.kernel_cs = 0x60, .kernel_ss = { 0x68, 0xd8 },
	.default_ldt = 5 * 8,
};

static const struct kernel_gdt kernel_x86_64 = {
	.name = "x86_64", .user_cs = 0x23, .user_ds = 0x2b, .tls_min = 12,
	/* KERNEL32_CS, KERNEL_CS, KERNEL_DS, TSS and LDT (16 bytes each) */
	.kernel = { 0x08, 0x10, 0x18, 0x40, 0x48, 0x50, 0x58 },
	.nkernel = 7,
	.kernel_cs = 0x10, .kernel_ss = { 0x18, 0x40 },
	.default_ldt = 128,
};

static struct {
	const struct kernel_gdt *k;
	int kernel64;			/* an x86-64 kernel, we are compat */
	int fsgsbase;			/* ... and it uses FSGSBASE */
	unsigned int user_cs, user_ds, glibc_gs;
	unsigned int tls_min;
	unsigned int cpunode;		/* the read-only data segment */
	unsigned int code64;		/* x86-64: the 64-bit __USER_CS */
	uint16_t user[8];		/* draw_sel()'s user GDT entries */
	int nuser;
} gdt;

/* ------------------------------------------------- the CPU's own view */

static inline int seg_verr(unsigned int sel)
{
	unsigned char ok;

	asm volatile("verr %w1\n\tsetz %0" : "=q" (ok) : "r" (sel) : "cc");
	return ok;
}

static inline int seg_verw(unsigned int sel)
{
	unsigned char ok;

	asm volatile("verw %w1\n\tsetz %0" : "=q" (ok) : "r" (sel) : "cc");
	return ok;
}

/* LAR: 1 and the access rights, or 0. */
static inline int seg_lar(unsigned int sel, uint32_t *ar)
{
	uint32_t a = 0;
	unsigned char ok;

	asm volatile("lar %2, %1\n\tsetz %0"
		     : "=q" (ok), "+r" (a) : "r" (sel) : "cc");
	*ar = ok ? a & AR_MASK : 0;
	return ok;
}

/* LSL: 1 and the byte-granular limit, or 0. */
static inline int seg_lsl(unsigned int sel, uint32_t *limit)
{
	uint32_t l = 0;
	unsigned char ok;

	asm volatile("lsl %2, %1\n\tsetz %0"
		     : "=q" (ok), "+r" (l) : "r" (sel) : "cc");
	*limit = ok ? l : 0;
	return ok;
}

static inline int is_null(unsigned int sel)
{
	return (sel & 0xfffc) == 0;
}

enum mv { MV_OK, MV_GP, MV_NP, MV_SS };

/* mov to %ds/%es/%fs/%gs; also the kernel's loads of an RPL 3 selector. */
static enum mv model_data_load(unsigned int sel)
{
	uint32_t ar;

	if (is_null(sel))
		return MV_OK;
	if (!seg_verr(sel) || !seg_lar(sel, &ar))
		return MV_GP;
	return ar & AR_P ? MV_OK : MV_NP;
}

/* mov to %ss at CPL 3. */
static enum mv model_ss_load(unsigned int sel)
{
	uint32_t ar;

	if (is_null(sel) || (sel & 3) != 3 || !seg_verw(sel) ||
	    !seg_lar(sel, &ar))
		return MV_GP;
	return ar & AR_P ? MV_OK : MV_SS;
}

/* The error code of a failing load: the selector, or 0 for a null one. */
static inline uint32_t mv_err(unsigned int sel)
{
	return is_null(sel) ? 0 : sel & 0xfffc;
}

/* What a load by the kernel leaves: the selector, or 0 by the fixup. */
static inline unsigned int kernel_load(unsigned int sel)
{
	return model_data_load(sel) == MV_OK ? sel : 0;
}

/* IRET to CPL 3 takes CS: a present code segment LAR can see. */
static int model_iret_cs(unsigned int cs)
{
	uint32_t ar;

	return seg_lar(cs, &ar) && (ar & AR_S) && (ar & AR_CODE) &&
	       (ar & AR_P);
}

/* ... and SS: a present writable data segment of DPL 3. */
static int model_iret_ss(unsigned int ss)
{
	uint32_t ar;

	return !is_null(ss) && seg_verw(ss) && seg_lar(ss, &ar) && (ar & AR_P);
}

/* ------------------------------------- IRET and non-zero null selectors */

enum { R_DS, R_ES, R_FS, R_GS, R_SS };

/* 1 if a null selector 1-3 in this register survives a return to user. */
static int null_kept[4];

#define NULL_PROBE(SEG, v, o)						\
	asm volatile("movw %%" SEG ", %%si\n\t"				\
		     "movw %%dx, %%" SEG "\n\t"				\
		     "movl $20, %%eax\n\t"				\
		     "int $0x80\n\t"					\
		     "movw %%" SEG ", %%cx\n\t"				\
		     "movzwl %%cx, %%ecx\n\t"				\
		     "movw %%si, %%" SEG					\
		     : "=c" (o) : "d" (v) : "eax", "esi", "memory", "cc")

/* Returns -1 if a register keeps some null selectors and not others. */
static int calibrate_nulls(void)
{
	unsigned int v, o, seen[4];
	int r;

	for (r = 0; r < 4; r++) {
		seen[r] = 0;
		for (v = 1; v <= 3; v++) {
			switch (r) {
			case R_DS:
				NULL_PROBE("ds", v, o);
				break;
			case R_ES:
				NULL_PROBE("es", v, o);
				break;
			case R_FS:
				NULL_PROBE("fs", v, o);
				break;
			default:
				NULL_PROBE("gs", v, o);
				break;
			}
			seen[r] += o == v;
		}
		if (seen[r] != 0 && seen[r] != 3)
			return -1;
		null_kept[r] = seen[r] == 3;
	}
	return 0;
}

/* What a register holds after an IRET to user that loaded @sel. */
static inline unsigned int after_iret(int reg, unsigned int sel)
{
	return sel >= 1 && sel <= 3 && !null_kept[reg] ? 0 : sel;
}

/* ------------------------------------------------------- descriptors */

/* The descriptors the tests install, by kind. */
enum dkind {
	DK_RW, DK_RO, DK_EXPDOWN, DK_CODE_R, DK_CODE_X, DK_NP_DATA,
	DK_NP_CODE, DK_CONF_NP, DK_RW16, DK_CLEAR, DK_NR
};

/* Only these pass tls_desc_okay(). */
static const enum dkind tls_kinds[] = { DK_RW, DK_RO, DK_EXPDOWN, DK_CLEAR };

static struct user_desc dk_info(enum dkind k, unsigned int entry,
				uint32_t base)
{
	struct user_desc d = {
		.entry_number	= entry,
		.base_addr	= base,
		.limit		= 0xfffff,
		.seg_32bit	= 1,
		.limit_in_pages	= 1,
		.useable	= 1,
	};

	switch (k) {
	case DK_RO:
		d.read_exec_only = 1;
		break;
	case DK_EXPDOWN:
		d.contents = MODIFY_LDT_CONTENTS_STACK;
		d.limit = 0xff;
		break;
	case DK_CODE_R:
		d.contents = MODIFY_LDT_CONTENTS_CODE;
		break;
	case DK_CODE_X:
		d.contents = MODIFY_LDT_CONTENTS_CODE;
		d.read_exec_only = 1;
		break;
	case DK_NP_DATA:
		d.seg_not_present = 1;
		break;
	case DK_NP_CODE:
		d.contents = MODIFY_LDT_CONTENTS_CODE;
		d.seg_not_present = 1;
		break;
	case DK_CONF_NP:
		d.contents = 3;
		d.seg_not_present = 1;
		break;
	case DK_RW16:
		d.seg_32bit = 0;
		d.limit = 0xffff;
		d.limit_in_pages = 0;
		break;
	case DK_CLEAR:
		/* the LDT_empty() form */
		memset(&d, 0, sizeof(d));
		d.entry_number = entry;
		d.read_exec_only = 1;
		d.seg_not_present = 1;
		break;
	default:
		break;
	}
	return d;
}

static uintptr_t vsys_entry;	/* __kernel_vsyscall, or 0 */

/* A system call through int $0x80 or, if @vsys, the vDSO (SYSENTER). */
static inline long sys3(long nr, long a, long b, long c, int vsys)
{
	long ret;

	if (vsys && vsys_entry)
		asm volatile("call *%%esi" : "=a" (ret)
			     : "0" (nr), "b" (a), "c" (b), "d" (c),
			       "S" (vsys_entry)
			     : "memory");
	else
		asm volatile("int $0x80" : "=a" (ret)
			     : "0" (nr), "b" (a), "c" (b), "d" (c)
			     : "memory");
	return ret;
}

static long ldt_write(struct user_desc *d)
{
	return sys3(SYS_modify_ldt, 0x11, (long)d, sizeof(*d), 0);
}

static long tls_write(struct user_desc *d)
{
	return sys3(SYS_set_thread_area, (long)d, 0, 0, 0);
}

/* Installs @kinds[i] in LDT entry i; 0 or the first error. */
static long ldt_install(const enum dkind *kinds, int n, uint32_t base)
{
	struct user_desc d;
	long ret;
	int i;

	for (i = 0; i < n; i++) {
		d = dk_info(kinds[i], i, base);
		ret = ldt_write(&d);
		if (ret)
			return ret;
	}
	return 0;
}

/* ------------------------------------------------------ selector draws */

#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * A selector, drawn to hit the interesting ones often: nulls, the GDT's
 * user, TLS, PDA, CPUNODE and kernel entries, the end of the GDT, LDT
 * entries that exist (0 .. @ldt_n - 1) and ones that do not, every RPL,
 * and fully random values.
 */
static inline unsigned int draw_sel(uint32_t *rnd, int ldt_n)
{
	uint32_t r = xorshift32(rnd), s = r >> 16;
	unsigned int rpl = (r >> 4) & 1 ? 3 : (r >> 5) & 3;

	switch (r % 13) {
	case 0:
		return s & 3;
	case 1:
	case 2:
		return (gdt.user[s % gdt.nuser] & ~3u) | rpl;
	case 3:
		return ((s & 1 ? PH_SEL : CPUNODE) & ~3u) | rpl;
	case 4:
		return gdt.k->kernel[s % gdt.k->nkernel] | rpl;
	case 5:
	case 6:
	case 7:
		return (s % ldt_n) * 8 + 4 + rpl;
	case 8:
		/* past the LDT: near its end, or anywhere */
		if (s & 1)
			return (ldt_n + (s >> 1) % 16) * 8 + 4 + rpl;
		return (s & ~7u) | 4 | rpl;
	case 9:
		/* the last GDT entries and just past the GDT (32 entries) */
		return (28 + s % 8) * 8 + rpl;
	default:
		return s;
	}
}

/* ------------------------------------------------ the fault-skip probe */

/*
 * A probe loads a selector with %edi = the address of the instruction
 * that may fault, %esi = where to resume and %ebx = its record; the
 * handler fills the record and resumes there.  A fault anywhere else is a
 * real one: ph_fatal() records it and the child exits.
 */
struct skip_rec {
	volatile int sig, code, n;
	volatile uint32_t trapno, err;
};

static struct skip_rec skip_recs[2];	/* main thread, sibling */

static void NOSP skip_handler(int sig, siginfo_t *si, void *ctx)
{
	greg_t *g = ((ucontext_t *)ctx)->uc_mcontext.gregs;
	struct skip_rec *r = (struct skip_rec *)(uintptr_t)g[REG_EBX];

	if (g[REG_EIP] != g[REG_EDI] ||
	    (r != &skip_recs[0] && r != &skip_recs[1])) {
		ph_fatal(sig, si, ctx);
		return;
	}
	r->sig = sig;
	r->code = si->si_code;
	r->trapno = g[REG_TRAPNO];
	r->err = g[REG_ERR];
	r->n++;
	g[REG_EIP] = g[REG_ESI];
}

static inline void skip_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = skip_handler;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
}

/*
 * mov @sel into SEG, read SEG back into @val, put the old selector back;
 * @val stays -1 if the mov faulted.  No memory is touched while SEG holds
 * @sel (the handler runs with the kernel's flat %ds/%es and the old SEG).
 */
#define PROBE_MOV(SEG, sel, rec, val)					\
	asm volatile("movl $1f, %%edi\n\t"				\
		     "movl $2f, %%esi\n\t"				\
		     "movl $-1, %%eax\n\t"				\
		     "movw %%" SEG ", %%cx\n"				\
		     "1:\tmovw %%dx, %%" SEG "\n\t"			\
		     "movw %%" SEG ", %%ax\n\t"				\
		     "movzwl %%ax, %%eax\n\t"				\
		     "movw %%cx, %%" SEG "\n"				\
		     "2:"						\
		     : "=&a" (val) : "d" (sel), "b" (rec)		\
		     : "ecx", "esi", "edi", "memory", "cc")

/* The same with a getpid through int $0x80 between the mov and the read. */
#define PROBE_MOV_SYS(SEG, sel, rec, val)				\
	asm volatile("movl $1f, %%edi\n\t"				\
		     "movl $2f, %%esi\n\t"				\
		     "movl $-1, %%eax\n\t"				\
		     "movw %%" SEG ", %%cx\n"				\
		     "1:\tmovw %%dx, %%" SEG "\n\t"			\
		     "movl $20, %%eax\n\t"				\
		     "int $0x80\n\t"					\
		     "movw %%" SEG ", %%ax\n\t"				\
		     "movzwl %%ax, %%eax\n\t"				\
		     "movw %%cx, %%" SEG "\n"				\
		     "2:"						\
		     : "=&a" (val) : "d" (sel), "b" (rec)		\
		     : "ecx", "esi", "edi", "memory", "cc")

static inline uint32_t NOSP probe_mov(int reg, unsigned int sel, int sys,
				      struct skip_rec *rec)
{
	uint32_t v;

	rec->sig = 0;
	switch (reg * 2 + !!sys) {
	case R_DS * 2:
		PROBE_MOV("ds", sel, rec, v);
		break;
	case R_DS * 2 + 1:
		PROBE_MOV_SYS("ds", sel, rec, v);
		break;
	case R_ES * 2:
		PROBE_MOV("es", sel, rec, v);
		break;
	case R_ES * 2 + 1:
		PROBE_MOV_SYS("es", sel, rec, v);
		break;
	case R_FS * 2:
		PROBE_MOV("fs", sel, rec, v);
		break;
	case R_FS * 2 + 1:
		PROBE_MOV_SYS("fs", sel, rec, v);
		break;
	case R_GS * 2:
		PROBE_MOV("gs", sel, rec, v);
		break;
	case R_GS * 2 + 1:
		PROBE_MOV_SYS("gs", sel, rec, v);
		break;
	case R_SS * 2:
		PROBE_MOV("ss", sel, rec, v);
		break;
	default:
		PROBE_MOV_SYS("ss", sel, rec, v);
		break;
	}
	return v;
}

/* Loads @sel into SEG for good (no restore). */
#define LOAD_SEG(SEG, sel, rec)						\
	asm volatile("movl $1f, %%edi\n\t"				\
		     "movl $2f, %%esi\n"					\
		     "1:\tmovw %%dx, %%" SEG "\n"				\
		     "2:"						\
		     : : "d" (sel), "b" (rec) : "esi", "edi", "memory")

/* Loads @sel into %fs for good (no restore); 0 if it loaded. */
static inline int NOSP load_fs(unsigned int sel, struct skip_rec *rec)
{
	rec->sig = 0;
	LOAD_SEG("fs", sel, rec);
	return rec->sig ? -1 : 0;
}

/* The same for %es (the sibling's on an x86-64 kernel). */
static inline int NOSP load_es(unsigned int sel, struct skip_rec *rec)
{
	rec->sig = 0;
	LOAD_SEG("es", sel, rec);
	return rec->sig ? -1 : 0;
}

/* SEG into @s and a read of SEG:0 into @v, which stays 0 if it faults. */
#define READ_SEG0(SEG, s, v, rec)					\
	asm volatile("movl $1f, %%edi\n\t"				\
		     "movl $2f, %%esi\n\t"				\
		     "xorl %%eax, %%eax\n\t"				\
		     "movw %%" SEG ", %%cx\n\t"				\
		     "movzwl %%cx, %%ecx\n"				\
		     "1:\tmovl %%" SEG ":0, %%eax\n"			\
		     "2:"						\
		     : "=&a" (v), "=&c" (s) : "b" (rec)		\
		     : "esi", "edi", "memory", "cc")

/*
 * %fs and a read of %fs:0 through it; 0 if the read worked.  Another
 * thread may change the descriptor and the kernel then null %fs under us:
 * the read faults and is skipped.
 */
static inline int NOSP read_fs0(unsigned int *sel, uint32_t *val,
				struct skip_rec *rec)
{
	uint32_t s, v;

	rec->sig = 0;
	READ_SEG0("fs", s, v, rec);
	*sel = s;
	*val = v;
	return rec->sig ? -1 : 0;
}

/* The same with %es. */
static inline int NOSP read_es0(unsigned int *sel, uint32_t *val,
				struct skip_rec *rec)
{
	uint32_t s, v;

	rec->sig = 0;
	READ_SEG0("es", s, v, rec);
	*sel = s;
	*val = v;
	return rec->sig ? -1 : 0;
}

/* ------------------------------------------------------ learning the GDT */

/* get_thread_area(@e): 0 or -errno. */
static long tls_get(unsigned int e, struct user_desc *u)
{
	memset(u, 0, sizeof(*u));
	u->entry_number = e;
	return sys3(SYS_get_thread_area, (long)u, 0, 0, 0);
}

/* CPUNODE's LSL gives the CPU we are on (bits 0-11), or -1. */
static int cpunode_cpu(void)
{
	uint32_t lim;
	int k, a, b;

	for (k = 0; k < 100; k++) {
		a = sched_getcpu();
		if (!seg_lsl(CPUNODE, &lim))
			return -1;
		b = sched_getcpu();
		if (a == b)
			return (lim & 0xfff) == (uint32_t)a ? a : -1;
	}
	return -1;
}

/*
 * Learns the GDT the process runs on and checks it is the one this kernel
 * defines: %cs and %ss are its user segments, glibc's %gs its first TLS
 * entry, and every other entry LAR can see (a DPL 3 one) is the PDA,
 * CPUNODE (the one read-only data segment: its LSL is the CPU) or, on an
 * x86-64 kernel, its 64-bit user code segment.
 */
static void gdt_learn(struct __test_metadata *_metadata)
{
	struct user_desc u;
	struct utsname un;
	unsigned int e, sel;
	uint32_t ar;

	ASSERT_EQ(0, uname(&un));
	gdt.kernel64 = !strcmp(un.machine, "x86_64");
	gdt.k = gdt.kernel64 ? &kernel_x86_64 : &kernel_i386;
	gdt.fsgsbase = ph_fsgsbase;
	gdt.user_cs = ph_get_seg(cs);
	gdt.user_ds = ph_get_seg(ss);
	gdt.glibc_gs = ph_get_seg(gs);
	ASSERT_EQ(gdt.k->user_cs, USER_CS);
	ASSERT_EQ(gdt.k->user_ds, USER_DS);
	ASSERT_EQ(USER_DS, ph_get_seg(ds));

	/* The TLS entries: three that get_thread_area() knows, glibc's first. */
	for (e = 0; e < 64 && tls_get(e, &u) == -EINVAL; e++)
		;
	gdt.tls_min = e;
	ASSERT_EQ(gdt.k->tls_min, TLS_MIN);
	ASSERT_EQ(0, tls_get(TLS_MIN + 1, &u));
	ASSERT_EQ(0, tls_get(TLS_MIN + 2, &u));
	ASSERT_EQ(-EINVAL, tls_get(TLS_MIN + 3, &u));
	ASSERT_EQ(TLS_SEL(TLS_MIN), GLIBC_GS);

	gdt.cpunode = gdt.code64 = 0;
	for (e = 0; e < 32; e++) {
		sel = e * 8 + 3;
		if (!seg_lar(sel, &ar) || sel == USER_CS || sel == USER_DS ||
		    sel == PH_SEL || (e >= TLS_MIN && e < TLS_MIN + 3))
			continue;
		if (!gdt.cpunode && (ar & AR_S) && !(ar & (AR_CODE | AR_W))) {
			gdt.cpunode = sel;
			continue;
		}
		if (!gdt.code64 && gdt.kernel64 && (ar & AR_S) &&
		    (ar & AR_CODE) && (ar & AR_L)) {
			gdt.code64 = sel;
			continue;
		}
		TH_LOG("GDT entry %u (%#x) has LAR %#x: not in the %s layout",
		       e, sel, ar, gdt.k->name);
		ASSERT_TRUE(0);
	}
	ASSERT_NE(0, CPUNODE);
	ASSERT_LE(0, cpunode_cpu());
	ASSERT_EQ(gdt.kernel64, gdt.code64 != 0);

	/* draw_sel()'s: on i386 in the order of the table they replace */
	gdt.nuser = 0;
	gdt.user[gdt.nuser++] = USER_CS;
	gdt.user[gdt.nuser++] = USER_DS;
	for (e = TLS_MIN; e < TLS_MIN + 3; e++)
		gdt.user[gdt.nuser++] = TLS_SEL(e);
	if (gdt.code64)
		gdt.user[gdt.nuser++] = gdt.code64;
	TH_LOG("%s kernel%s: user CS %#x DS %#x, TLS %#x-%#x, CPUNODE %#x, 64-bit CS %#x",
	       gdt.k->name, gdt.kernel64 ? (gdt.fsgsbase ? " with FSGSBASE" :
					   " without FSGSBASE") : "",
	       USER_CS, USER_DS, TLS_SEL(TLS_MIN), TLS_SEL(TLS_MIN + 2),
	       CPUNODE, gdt.code64);
}

/* ------------------------------------------------------------ fixture */

FIXTURE(fz) {
	struct ph_bystander by;
	int klog;
};

FIXTURE_SETUP(fz)
{
	uint32_t ar;
	int r;

	fz_seed = cmdline_seed(DEFAULT_SEED);
	vsys_entry = getauxval(AT_SYSINFO);
	ASSERT_EQ(0, ph_init());
	gdt_learn(_metadata);
	out = mmap(NULL, sizeof(*out), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE((uintptr_t)MAP_FAILED, (uintptr_t)out);
	memset(out, 0, sizeof(*out));
	ASSERT_EQ(0, calibrate_nulls());

	/*
	 * The model asks the CPU (VERR/VERW/LAR); first check that the CPU
	 * sees the GDT 6.12 and this series define.
	 */
	ASSERT_EQ(MV_OK, model_data_load(USER_DS));
	ASSERT_EQ(MV_OK, model_data_load(USER_CS));	/* readable code */
	ASSERT_EQ(MV_OK, model_data_load(GLIBC_GS));
	ASSERT_EQ(MV_OK, model_data_load(CPUNODE));	/* RO data */
	ASSERT_EQ(MV_GP, model_ss_load(CPUNODE));
	ASSERT_EQ(MV_GP, model_ss_load(USER_CS));
	ASSERT_EQ(MV_OK, model_ss_load(USER_DS));
	ASSERT_EQ(MV_GP, model_ss_load(USER_DS & ~3));	/* RPL 0 */
	for (r = 0; r < gdt.k->nkernel; r++)
		ASSERT_EQ(MV_GP, model_data_load(gdt.k->kernel[r] | 3));
	ASSERT_EQ(MV_GP, model_data_load(32 * 8 + 3));	/* past the GDT */
	ASSERT_TRUE(model_iret_cs(USER_CS));
	ASSERT_FALSE(model_iret_cs(USER_DS));
	ASSERT_TRUE(model_iret_ss(USER_DS));
	ASSERT_TRUE(seg_lar(USER_CS, &ar));
	/* Flat 4 GiB 32-bit code, DPL 3, readable (type 0xb). */
	ASSERT_EQ(0x00c0fb00u, ar & 0x00f0ff00u);
	ASSERT_TRUE(seg_lar(USER_DS, &ar));
	/* Flat 4 GiB RW data, DPL 3; bits 16-19 are undefined (pda.7). */
	ASSERT_EQ(0x00c0f300u, ar & 0x00f0ff00u);
	if (gdt.code64) {
		/*
		 * The 64-bit __USER_CS: L set, D clear, readable.  A data
		 * register takes readable code whatever its L bit, so it
		 * loads like ours; %ss does not take code.
		 */
		ASSERT_TRUE(seg_lar(gdt.code64, &ar));
		ASSERT_EQ(0x00a0fb00u, ar & 0x00f0ff00u);
		ASSERT_EQ(MV_OK, model_data_load(gdt.code64));
		ASSERT_EQ(MV_GP, model_ss_load(gdt.code64));
		ASSERT_TRUE(model_iret_cs(gdt.code64));
	}
	if (ph_have_pda()) {
		ASSERT_EQ(MV_OK, model_data_load(PH_SEL));
		ASSERT_EQ(MV_OK, model_ss_load(PH_SEL));
	} else {
		ASSERT_EQ(MV_GP, model_data_load(PH_SEL));
	}

	signal(SIGPIPE, SIG_IGN);	/* a dead bystander is reported */
	self->klog = klog_open();
	if (self->klog < 0)
		TH_LOG("cannot open /dev/kmsg (%s): kernel log not checked",
		       strerror(errno));
	ASSERT_EQ(0, ph_bystander_start(&self->by));
}

FIXTURE_TEARDOWN(fz)
{
	ph_bystander_stop(&self->by);
	if (self->klog >= 0)
		close(self->klog);
}

/* The bystander is unharmed and the kernel log is clean. */
#define CHECK_WORLD(what) \
	EXPECT_TRUE(ph_world_intact(self->klog, &self->by, (what)))

/*
 * The end of a test: the notes, one line of outcome counts, the checksum,
 * the stat, and every kind in @required came up.
 */
static void report(struct __test_metadata *_metadata, const char *test,
		   const char *const *names, int nkinds, uint32_t required,
		   double secs)
{
	char line[1024];
	int k, n = 0;

	for (k = 0; k < out->nnotes; k++)
		TH_LOG("mismatch: %s", out->notes[k]);
	for (k = 0; k < nkinds && n < (int)sizeof(line) - 1; k++)
		n += snprintf(line + n, sizeof(line) - n, "%s%s %u",
			      k ? ", " : "", names[k], out->kinds[k]);
	TH_LOG("%s: %u operations in %.1f s: %s", test, out->iters, secs,
	       line);
	TH_LOG("%s: seed %lu, operation stream checksum %08x", test, fz_seed,
	       out->checksum);
	pda_stat("fuzz_iterations", out->iters > out->mismatches ?
				    out->iters - out->mismatches : 0);
	EXPECT_EQ(0, out->mismatches);
	for (k = 0; k < nkinds; k++) {
		if (!(required & (1u << k)) || out->kinds[k])
			continue;
		TH_LOG("%s: outcome \"%s\" never came up", test, names[k]);
		EXPECT_LT(0, out->kinds[k]);
	}
}

/* A ph_run() child must have run to its end. */
#define EXPECT_CHILD_DONE(res) do {					\
	char __d[256];							\
									\
	if ((res).status != 0 || !(res).done)				\
		TH_LOG("child: %s, at operation %u",			\
		       ph_describe(&(res), __d, sizeof(__d)),		\
		       out->progress);					\
	EXPECT_EQ(0, (res).status);					\
	EXPECT_EQ(1, (res).done);					\
} while (0)

/* A fuzzer child's seed and size. */
struct fz_arg {
	uint32_t seed;
	long n;
};

/* ----------------------------------------------------- the fixed LDT */

/*
 * The LDT of sigreturn_selectors and ptrace_setregs: every kind once.
 * Code segments are flat (base 0, 4 GiB, 32-bit): a CS that IRET takes
 * must run the ud2 at the same address.
 */
static const enum dkind fixed_ldt[] = {
	DK_RW, DK_RO, DK_CODE_R, DK_CODE_X, DK_NP_DATA, DK_NP_CODE, DK_RW16,
	DK_EXPDOWN, DK_CONF_NP, DK_CLEAR, DK_RW,
};

#define FIXED_LDT_N	((int)ARRAY_LEN(fixed_ldt))
#define FIXED_LDT_BASED	10	/* the last one: RW with a non-zero base */

static uint32_t fixed_buf[64] __attribute__((aligned(64)));

/*
 * The fixed LDT, and the TLS entries after glibc's: the first RW data at
 * fixed_buf, the second RO flat.
 */
static inline long fixed_install(void)
{
	struct user_desc d;
	long ret;

	ret = ldt_install(fixed_ldt, FIXED_LDT_N - 1, 0);
	if (ret)
		return ret;
	d = dk_info(DK_RW, FIXED_LDT_BASED, (uint32_t)(uintptr_t)fixed_buf);
	ret = ldt_write(&d);
	if (ret)
		return ret;
	d = dk_info(DK_RW, TLS_MIN + 1, (uint32_t)(uintptr_t)fixed_buf);
	ret = tls_write(&d);
	if (ret)
		return ret;
	d = dk_info(DK_RO, TLS_MIN + 2, 0);
	return tls_write(&d);
}

/* ----------------------------- descriptors as the kernel stores them */

/* A descriptor as the kernel stores it. */
struct desc {
	uint32_t lo, hi;
};

static inline int ldt_empty(const struct user_desc *u)
{
	return !u->base_addr && !u->limit && !u->contents &&
	       u->read_exec_only && !u->seg_32bit && !u->limit_in_pages &&
	       u->seg_not_present && !u->useable;
}

static inline int ldt_zero(const struct user_desc *u)
{
	return !u->base_addr && !u->limit && !u->contents &&
	       !u->read_exec_only && !u->seg_32bit && !u->limit_in_pages &&
	       !u->seg_not_present && !u->useable;
}

/* asm/desc.h: fill_ldt(); write_ldt() clears AVL in the old mode. */
static inline struct desc fill_ldt(const struct user_desc *u, int oldmode)
{
	uint32_t type = (u->read_exec_only ^ 1) << 1 | u->contents << 2 | 1;
	struct desc d;

	d.lo = (u->limit & 0xffff) | u->base_addr << 16;
	d.hi = ((u->base_addr >> 16) & 0xff) | type << 8 | 1u << 12 |
	       3u << 13 | (u->seg_not_present ^ 1u) << 15 |
	       (u->limit & 0xf0000) | (oldmode ? 0 : u->useable) << 20 |
	       u->seg_32bit << 22 | u->limit_in_pages << 23 |
	       (u->base_addr & 0xff000000);
	return d;
}

/* tls.c: fill_user_desc(), what get_thread_area() gives back. */
static inline struct user_desc decode(struct desc d, unsigned int idx)
{
	struct user_desc u;

	memset(&u, 0, sizeof(u));
	u.entry_number = idx;
	u.base_addr = d.lo >> 16 | (d.hi & 0xff) << 16 | (d.hi & 0xff000000);
	u.limit = (d.lo & 0xffff) | (d.hi & 0xf0000);
	u.seg_32bit = d.hi >> 22 & 1;
	u.contents = d.hi >> 10 & 3;
	u.read_exec_only = !(d.hi >> 9 & 1);
	u.limit_in_pages = d.hi >> 23 & 1;
	u.seg_not_present = !(d.hi >> 15 & 1);
	u.useable = d.hi >> 20 & 1;
	return u;
}

/* The user_desc the decoded descriptor must equal after a write. */
static inline struct user_desc written(const struct user_desc *in,
				       int clear, int oldmode)
{
	struct user_desc u;

	memset(&u, 0, sizeof(u));
	u.entry_number = in->entry_number;
	if (clear) {
		u.read_exec_only = 1;
		u.seg_not_present = 1;
		return u;
	}
	u.base_addr = in->base_addr;
	u.limit = in->limit & 0xfffff;
	u.seg_32bit = in->seg_32bit;
	u.contents = in->contents;
	u.read_exec_only = in->read_exec_only;
	u.limit_in_pages = in->limit_in_pages;
	u.seg_not_present = in->seg_not_present;
	u.useable = oldmode ? 0 : in->useable;
	return u;
}

static inline int same_ud(const struct user_desc *a,
			  const struct user_desc *b)
{
	return !memcmp(a, b, sizeof(*a));
}

static inline int desc_zero(struct desc d)
{
	return !d.lo && !d.hi;
}

/* Loadable into %ds/%es/%fs/%gs (every descriptor here has DPL 3). */
static inline int desc_loadable(struct desc d)
{
	uint32_t type = d.hi >> 8 & 0xf;

	if (!(d.hi & AR_S) || !(d.hi & AR_P))
		return 0;
	return !(type & 8) || (type & 2);
}

/* The limit LSL reports. */
static inline uint32_t desc_limit(struct desc d)
{
	uint32_t l = (d.lo & 0xffff) | (d.hi & 0xf0000);

	return d.hi & (1u << 23) ? l << 12 | 0xfff : l;
}

static inline uint32_t desc_base(struct desc d)
{
	return d.lo >> 16 | (d.hi & 0xff) << 16 | (d.hi & 0xff000000);
}

/* ---------------------------------------------------- a thread's %fs */

/*
 * A thread's %fs in the model: its selector (0 once the kernel nulled
 * it) and the descriptor a read through it uses.  On an i386 kernel that
 * is always the one in the table; an x86-64 kernel may leave an older
 * one in %fs, or, with FSGSBASE, give it the base of an older one.
 */
struct fsv {
	unsigned int sel;
	struct desc d;
};

#define MAX_FSV		4

static inline struct desc with_base(struct desc d, uint32_t base)
{
	d.lo = (d.lo & 0xffff) | base << 16;
	d.hi = (d.hi & 0x00ffff00) | (base >> 16 & 0xff) |
	       (base & 0xff000000);
	return d;
}

static inline int fsv_same(struct fsv a, struct fsv b)
{
	return a.sel == b.sel &&
	       (!a.sel || !memcmp(&a.d, &b.d, sizeof(a.d)));
}

/* @sel loaded from @d: the selector, or 0 by the kernel's fixup. */
static inline struct fsv fs_loaded(unsigned int sel, struct desc d)
{
	struct fsv v = { 0 };

	if (desc_loadable(d)) {
		v.sel = sel;
		v.d = d;
	}
	return v;
}

/*
 * set_thread_area() by the thread itself on the entry in its %fs, now
 * @now.  An i386 kernel reloads %fs on the way back to user mode (or,
 * with PDA_UP_NOSEG, tls.c does, whatever the RPL); tls.c on an x86-64
 * kernel reloads it only if it holds the RPL 3 selector, an RPL 0-2 one
 * keeps the descriptor it had.
 */
static inline struct fsv fs_refreshed(struct fsv v, struct desc now)
{
	if (!v.sel || (gdt.kernel64 && (v.sel & 3) != 3))
		return v;
	return fs_loaded(v.sel, now);
}

/*
 * A context switch of an x86-64 kernel: __switch_to() loads the saved
 * selector again from the descriptor there is @now (0 if it does not
 * load) and, with FSGSBASE, then puts back the base the thread had
 * (x86_fsgsbase_load()).  On i386 it changes nothing the model sees.
 */
static inline struct fsv fs_switched(struct fsv v, struct desc now)
{
	struct fsv n;

	if (!v.sel || !gdt.kernel64)
		return v;
	n = fs_loaded(v.sel, now);
	if (n.sel && gdt.fsgsbase)
		n.d = with_base(now, desc_base(v.d));
	return n;
}

#endif /* PDA_TESTS_SEG_FUZZ_H */
