// SPDX-License-Identifier: GPL-2.0
/*
 * A seeded, reproducible fuzzer of segment selectors.  Every operation has
 * its outcome predicted by a model and the observed outcome must be that
 * prediction, exactly; the same seed replays the same operations.
 *
 * The seed is pda.seed=N on the kernel command line (SEED=N of make), else
 * a fixed one; each test prints it and, at its end, a checksum of the
 * operations it made (their parameters and predicted outcomes), so that two
 * runs can be shown to have done the same thing.  The size is a base count
 * times pda.scale, divided by 20 in Bochs.
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
 * The same binary runs on an i386 kernel and, as a 32-bit (compat) task,
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
 * - mov_selectors: mov of a random selector into %ds, %es, %fs, %gs or
 *   %ss, read back and restored in the same asm block; sometimes with an
 *   int $0x80 in between, so that the kernel's exit path must give the
 *   selector back.  A fault is SIGSEGV (#GP, trapno 13) or SIGBUS (#NP 11,
 *   #SS 12) with the selector as error code, exactly as modelled.
 * - sigreturn_selectors: a SIGUSR1 handler writes random selectors into
 *   sc.gs/fs/es/ds and sometimes sc.cs/ss and points sc.ip at a ud2.  The
 *   kernel (ia32_restore_sigcontext()) keeps 16 bits, forces RPL 3 on
 *   non-null data selectors and on CS and SS; what does not load becomes
 *   0; an IRET that cannot take CS or SS is SIGILL ILL_BADSTK, trapno 32
 *   on i386, the IRET's own fault on x86-64 (model_iret_fault()).  The
 *   SIGILL (SIGSEGV, SIGBUS) handler records the selectors the CPU really
 *   had and puts the original context back.
 * - ptrace_setregs: a tracee spinning in "1: jmp 1b" gets random selectors
 *   through SETREGS and POKEUSER.  A non-null selector with RPL != 3 is
 *   EIO (invalid_selector()); SETREGS writes the registers in their order
 *   and stops at the first refused one, so the ones before it stick.  CS
 *   and SS also refuse 0.  After a single step each data register holds
 *   its selector if loadable, else 0, and every other register is what
 *   the tracer wrote.
 * - ldt_tls_churn: random modify_ldt() (read, write, old-mode write,
 *   default LDT, unknown functions, wrong sizes, bad pointers, entries out
 *   of range) and set/get_thread_area() (allocation, glibc's entry, out
 *   of range), each return value and each descriptor written modelled
 *   on ldt.c and tls.c, read back raw (modify_ldt 0) and decoded
 *   (get_thread_area), and checked with LAR/LSL.  Meanwhile the main
 *   thread keeps a TLS selector in %fs and a second thread an LDT
 *   selector, each with every RPL in turn (CPL 3 may load a DPL 3
 *   segment with RPL 0-3; all four name the same descriptor): whenever
 *   the descriptor changes, their reads through %fs must follow it, and
 *   %fs must become 0 when it stops being loadable.  An x86-64 kernel
 *   refreshes less, and the test holds it to what it does: the sibling
 *   watches %es, which ldt.c reloads (it leaves %fs alone), and an RPL
 *   0-2 TLS selector in %fs keeps its descriptor until a context switch
 *   reloads it (tls.c reloads only an RPL 3 one): see main_fs_after().
 *
 * "Nothing lost": after each test a bystander process (lib/pda_hostile.h)
 * must still hold its own %fs (a TLS selector), %gs, flat %ss/%ds/%es and
 * read what it expects through them (its second thread reads its CPU
 * through 0xeb), and the kernel log must have no splat; within a test, the
 * registers an operation is not about must come back unchanged.
 */
#define _GNU_SOURCE
#include <asm/ldt.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "lib/pda_hostile.h"
#include "lib/stat.h"
#include "lib/xorshift.h"

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

static const char *const mv_name[] = { "ok", "#GP", "#NP", "#SS" };

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
static uint32_t mv_err(unsigned int sel)
{
	return is_null(sel) ? 0 : sel & 0xfffc;
}

/* What a load by the kernel leaves: the selector, or 0 by the fixup. */
static unsigned int kernel_load(unsigned int sel)
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

/* ia32_restore_sigcontext(): non-null data selectors get RPL 3. */
static unsigned int fixup_rpl(unsigned int sel)
{
	return sel <= 3 ? sel : sel | 3;
}

/* ------------------------------------- IRET and non-zero null selectors */

enum { R_DS, R_ES, R_FS, R_GS, R_SS };

static const char *const reg_name[] = { "ds", "es", "fs", "gs", "ss" };

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
static unsigned int after_iret(int reg, unsigned int sel)
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
/* The same, readable at offset 0 or empty: for the watched TLS entry. */
static const enum dkind watched_tls[] = { DK_RW, DK_RO, DK_CLEAR };

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
static unsigned int draw_sel(uint32_t *rnd, int ldt_n)
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

static void skip_install(void)
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

static uint32_t NOSP probe_mov(int reg, unsigned int sel, int sys,
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
static int NOSP load_fs(unsigned int sel, struct skip_rec *rec)
{
	rec->sig = 0;
	LOAD_SEG("fs", sel, rec);
	return rec->sig ? -1 : 0;
}

/* The same for %es (the sibling's on an x86-64 kernel). */
static int NOSP load_es(unsigned int sel, struct skip_rec *rec)
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
static int NOSP read_fs0(unsigned int *sel, uint32_t *val,
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
static int NOSP read_es0(unsigned int *sel, uint32_t *val,
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

/* ------------------------------------------------------ mov_selectors */

enum {
	MK_NULL, MK_NULL_ZEROED, MK_LOADED, MK_GP, MK_NP, MK_SS_OK, MK_SS_GP,
	MK_SS_SS, MK_VIA_SYSCALL, MK_NR
};

static const char *const mov_kind[] = {
	"null", "null zeroed by IRET", "loaded", "#GP", "#NP", "ss loaded",
	"ss #GP", "ss #SS", "through int $0x80",
};

struct fz_arg {
	uint32_t seed;
	long n;
};

/* A descriptor of a random kind, base and limit in LDT or TLS entry @e. */
static long put_random_desc(uint32_t *rnd, int e, int tls)
{
	uint32_t r = xorshift32(rnd);
	enum dkind k = tls ? tls_kinds[r % ARRAY_LEN(tls_kinds)] : r % DK_NR;
	struct user_desc d = dk_info(k, e, xorshift32(rnd));

	/* another limit; the empty form stays empty */
	if (((r >> 8) & 1) && k != DK_CLEAR) {
		d.limit = xorshift32(rnd) & 0xfffff;
		d.limit_in_pages = (r >> 9) & 1;
	}
	return tls ? tls_write(&d) : ldt_write(&d);
}

static void mov_case(void *p)
{
	const struct fz_arg *a = p;
	struct skip_rec *rec = &skip_recs[0];
	uint32_t rnd = a->seed, h = 2166136261u;
	int ldt_n = DK_NR + 2, e;
	long i;

	for (e = 0; e < ldt_n; e++) {
		struct user_desc d = dk_info(e < DK_NR ? e : DK_RW, e,
					     xorshift32(&rnd));

		if (ldt_write(&d))
			ph_raw_exit(30);
	}
	for (e = TLS_MIN + 1; e <= (int)TLS_MIN + 2; e++)
		if (put_random_desc(&rnd, e, 1))
			ph_raw_exit(31);
	skip_install();

	for (i = 0; i < a->n; i++) {
		uint32_t r = xorshift32(&rnd), val, want_err = 0, trap = 0;
		int reg = r % 9 == 8 ? R_SS : (r % 9) / 2, sys = !(r & 0x70);
		unsigned int sel, want_val;
		enum mv want;
		int sig = 0;

		out->progress = i;
		/* %ss: half the time an LDT entry, of whatever kind it has */
		if (reg == R_SS && (r >> 12) & 1)
			sel = LDT_SEL(xorshift32(&rnd) % ldt_n);
		else
			sel = draw_sel(&rnd, ldt_n);
		want_val = sel;
		/* now and then, other descriptors under the same selectors */
		if (i % 256 == 255) {
			e = xorshift32(&rnd) % (ldt_n + 1);
			if (put_random_desc(&rnd, e, 0) ||
			    put_random_desc(&rnd, TLS_MIN + 1 + (r >> 8) % 2, 1))
				note(i, "rewriting LDT %d / TLS failed", e);
			if (e == ldt_n)
				ldt_n++;
		}

		want = reg == R_SS ? model_ss_load(sel) : model_data_load(sel);
		switch (want) {
		case MV_GP:
			sig = SIGSEGV;
			trap = TRAP_GP;
			break;
		case MV_NP:
			sig = SIGBUS;
			trap = TRAP_NP;
			break;
		case MV_SS:
			sig = SIGBUS;
			trap = TRAP_SS;
			break;
		default:
			break;
		}
		if (sig)
			want_err = mv_err(sel);
		else if (sys)
			want_val = after_iret(reg, sel);
		mix(&h, (uint32_t)i);
		mix(&h, reg << 24 | sys << 20 | sel);
		mix(&h, want);

		val = probe_mov(reg, sel, sys, rec);
		out->iters++;
		if (sig != rec->sig ||
		    (sig && (rec->code != SI_KERNEL_CODE ||
			     rec->trapno != trap || rec->err != want_err))) {
			note(i, "mov %#x to %%%s%s: model %s (signal %d trapno %u err %#x), got signal %d code %#x trapno %u err %#x",
			     sel, reg_name[reg], sys ? " + int $0x80" : "",
			     mv_name[want], sig, trap, want_err, rec->sig,
			     rec->code, rec->trapno, rec->err);
			continue;
		}
		/* an interrupt between mov and read may null a null too */
		if (!sig && val != want_val &&
		    !(!sys && val == 0 && after_iret(reg, sel) == 0)) {
			note(i, "mov %#x to %%%s%s: model loads %#x, read back %#x",
			     sel, reg_name[reg], sys ? " + int $0x80" : "",
			     want_val, val);
			continue;
		}
		if (sys)
			out->kinds[MK_VIA_SYSCALL]++;
		if (reg == R_SS)
			out->kinds[want == MV_OK ? MK_SS_OK :
				   want == MV_GP ? MK_SS_GP : MK_SS_SS]++;
		else if (want == MV_GP)
			out->kinds[MK_GP]++;
		else if (want == MV_NP)
			out->kinds[MK_NP]++;
		else if (is_null(sel))
			out->kinds[val == sel ? MK_NULL : MK_NULL_ZEROED]++;
		else
			out->kinds[MK_LOADED]++;
	}
	out->checksum = h;
}

TEST_F_TIMEOUT(fz, mov_selectors, 290)
{
	struct fz_arg a = { sub_seed("mov_selectors"), fz_iterations(90000) };
	uint32_t required = (1u << MK_NR) - 1;
	struct ph_result res;
	double t0 = ph_now();

	TH_LOG("seed %lu (SEED=%lu replays it), %ld operations; null selectors kept by IRET: ds %d es %d fs %d gs %d",
	       fz_seed, fz_seed, a.n, null_kept[R_DS], null_kept[R_ES],
	       null_kept[R_FS], null_kept[R_GS]);
	ph_run(mov_case, &a, 250, &res);
	EXPECT_CHILD_DONE(res);
	/* Only where IRET nulls them: see after_iret(). */
	if (null_kept[R_DS] && null_kept[R_ES] && null_kept[R_FS] &&
	    null_kept[R_GS])
		required &= ~(1u << MK_NULL_ZEROED);
	report(_metadata, "mov_selectors", mov_kind, MK_NR, required,
	       ph_now() - t0);
	CHECK_WORLD("mov_selectors");
}

/* ------------------------------------------------ sigreturn_selectors */

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
static long fixed_install(void)
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

/*
 * The CS values IRET may take here, all flat 32-bit code: anything else
 * is redrawn (the 64-bit __USER_CS too: the ud2 would run in long mode).
 */
static int flat_cs(unsigned int cs)
{
	return cs == USER_CS || cs == LDT_SEL(2) || cs == LDT_SEL(3);
}

enum { SR_GS, SR_FS, SR_ES, SR_DS, SR_CS, SR_SS, SR_NR };

static const char *const sr_name[] = { "gs", "fs", "es", "ds", "cs", "ss" };
static const int sr_greg[SR_NR] = {
	REG_GS, REG_FS, REG_ES, REG_DS, REG_CS, REG_SS
};

static const int sr_reg[4] = { R_GS, R_FS, R_ES, R_DS };

static volatile struct {
	uint32_t v[SR_NR];	/* values for the sigcontext ... */
	int set[SR_NR];		/* ... of these registers */
} sr_plan;

static gregset_t sr_saved;

static volatile struct {
	int n, sig, code;
	uint32_t trapno, err, ip, seg[SR_NR];
} sr_seen;

/* A signal that ends a sigreturn: what it is, as siginfo and sigcontext say. */
struct sr_sig {
	int sig, code;
	uint32_t trapno, err;
};

/* The IRET took CS and SS: the ud2 ran. */
static const struct sr_sig sr_ud2_sig = { SIGILL, ILL_ILLOPN, TRAP_UD, 0 };

/*
 * The IRET to user mode could not take @cs or @ss (both RPL 3).  An i386
 * kernel turns any fault there into SIGILL ILL_BADSTK with trapno 32
 * (iret_error()).  A 64-bit kernel makes it the fault of the IRET target
 * (fixup_bad_iret()), SI_KERNEL: the CPU checks CS, then SS, as for a
 * mov (#GP with the selector, #NP if only P is missing; a null one #GP
 * with 0), except that an LDT SS sends IRET through the read-only espfix64
 * stack, where the fault becomes a double fault that exc_double_fault()
 * reports as #GP(0) (cf. sigreturn_64 in the x86 selftests).
 */
static struct sr_sig model_iret_fault(unsigned int cs, unsigned int ss)
{
	uint32_t ar;

	if (!gdt.kernel64)
		return (struct sr_sig){ SIGILL, ILL_BADSTK, TRAP_IRET, 0 };
	if (ss & 4)
		return (struct sr_sig){ SIGSEGV, SI_KERNEL_CODE, TRAP_GP, 0 };
	if (!model_iret_cs(cs)) {
		if (!is_null(cs) && seg_lar(cs, &ar) && (ar & AR_S) &&
		    (ar & AR_CODE))
			return (struct sr_sig){ SIGBUS, SI_KERNEL_CODE, TRAP_NP,
						mv_err(cs) };
		return (struct sr_sig){ SIGSEGV, SI_KERNEL_CODE, TRAP_GP,
					mv_err(cs) };
	}
	if (is_null(ss) || !seg_verw(ss) || !seg_lar(ss, &ar))
		return (struct sr_sig){ SIGSEGV, SI_KERNEL_CODE, TRAP_GP,
					mv_err(ss) };
	return (struct sr_sig){ SIGBUS, SI_KERNEL_CODE, TRAP_SS, mv_err(ss) };
}

void sr_ud2(void);
asm(".text\n.globl sr_ud2\nsr_ud2:\n\tud2\n");

/* SIGUSR1: keep the context, plant the selectors, return to the ud2. */
static void NOSP sr_usr1(int sig, siginfo_t *si, void *ctx)
{
	greg_t *g = ((ucontext_t *)ctx)->uc_mcontext.gregs;
	int k;

	for (k = 0; k < NGREG; k++)
		sr_saved[k] = g[k];
	for (k = 0; k < SR_NR; k++)
		if (sr_plan.set[k])
			g[sr_greg[k]] = sr_plan.v[k];
	g[REG_EIP] = (greg_t)(uintptr_t)sr_ud2;
}

/*
 * SIGILL, SIGSEGV or SIGBUS at the ud2: from the ud2, or from the kernel's
 * IRET to it.  Note what the CPU had, then return to where SIGUSR1 came in,
 * as if nothing had happened.  The FPU state is left to this frame's own
 * fpstate.  A fault anywhere else is a real one.
 */
static void NOSP sr_ill(int sig, siginfo_t *si, void *ctx)
{
	greg_t *g = ((ucontext_t *)ctx)->uc_mcontext.gregs;
	int k;

	if ((uint32_t)g[REG_EIP] != (uint32_t)(uintptr_t)sr_ud2) {
		ph_fatal(sig, si, ctx);
		return;
	}
	ph_set_seg(gs, ph_glibc_gs);
	sr_seen.n++;
	sr_seen.sig = sig;
	sr_seen.code = si->si_code;
	sr_seen.trapno = g[REG_TRAPNO];
	sr_seen.err = g[REG_ERR];
	sr_seen.ip = g[REG_EIP];
	for (k = 0; k < SR_NR; k++)
		sr_seen.seg[k] = g[sr_greg[k]] & 0xffff;
	for (k = 0; k < NGREG; k++)
		g[k] = sr_saved[k];
}

enum {
	SK_UD2, SK_IRET_FAULT, SK_LOADED, SK_RPL_FIXED, SK_ZEROED,
	SK_NULL_KEPT, SK_NULL_ZEROED, SK_CS_LDT, SK_SS_LDT, SK_SS_GDT_ODD,
	SK_UPPER_BITS, SK_IRET_GP0, SK_IRET_GP, SK_IRET_NP, SK_NR
};

/* The IRET faults only an x86-64 kernel tells apart. */
#define SK_IRET_64	(1u << SK_IRET_GP0 | 1u << SK_IRET_GP | 1u << SK_IRET_NP)

static const char *const sr_kind[] = {
	"ud2 reached", "IRET faulted", "loaded", "RPL forced to 3",
	"invalid -> 0", "null kept", "null zeroed by IRET", "ud2 on LDT CS",
	"ud2 on LDT SS (espfix)", "ud2 on other GDT SS", "upper bits ignored",
	"IRET #GP(0) (x86-64)", "IRET #GP(selector) (x86-64)",
	"IRET #NP(CS) (x86-64)",
};

static unsigned int draw_cs(uint32_t *rnd)
{
	const uint16_t cs[] = {
		USER_CS, LDT_SEL(2), LDT_SEL(3), LDT_SEL(5), LDT_SEL(8),
		USER_DS, LDT_SEL(0), CPUNODE, PH_SEL, gdt.k->kernel_cs, 0,
	};
	uint32_t r = xorshift32(rnd);

	if (r % 4 == 0)
		return draw_sel(rnd, FIXED_LDT_N);
	return (cs[(r >> 8) % ARRAY_LEN(cs)] & ~3u) | ((r >> 4) & 3);
}

static unsigned int draw_ss(uint32_t *rnd)
{
	const uint16_t ss[] = {
		USER_DS, PH_SEL, LDT_SEL(0), LDT_SEL(6), LDT_SEL(7),
		LDT_SEL(FIXED_LDT_BASED), TLS_SEL(TLS_MIN + 1),
		TLS_SEL(TLS_MIN + 2), LDT_SEL(1), LDT_SEL(4), CPUNODE, USER_CS,
		gdt.k->kernel_ss[0], gdt.k->kernel_ss[1], 0,
	};
	uint32_t r = xorshift32(rnd);

	if (r % 4 == 0)
		return draw_sel(rnd, FIXED_LDT_N);
	return (ss[(r >> 8) % ARRAY_LEN(ss)] & ~3u) | ((r >> 4) & 3);
}

static void sr_case(void *p)
{
	const struct fz_arg *a = p;
	uint32_t rnd = a->seed, h = 2166136261u, orig[SR_NR];
	long pid = getpid(), tid = syscall(SYS_gettid), i;
	struct sigaction sa;
	int k;

	if (fixed_install())
		ph_raw_exit(30);
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_sigaction = sr_usr1;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGUSR1, &sa, NULL);
	/*
	 * on the alternate stack: SS may be anything when it comes; SIGSEGV
	 * and SIGBUS are how a 64-bit kernel reports a failed IRET
	 */
	sa.sa_sigaction = sr_ill;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigaction(SIGILL, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	orig[SR_GS] = ph_get_seg(gs);
	orig[SR_FS] = ph_get_seg(fs);
	orig[SR_ES] = ph_get_seg(es);
	orig[SR_DS] = ph_get_seg(ds);
	orig[SR_CS] = ph_get_seg(cs);
	orig[SR_SS] = ph_get_seg(ss);

	for (i = 0; i < a->n; i++) {
		uint32_t r = xorshift32(&rnd), want[SR_NR], upper = 0;
		struct sr_sig ws;
		int iret_ok, bad = 0;

		out->progress = i;
		for (k = 0; k < SR_NR; k++) {
			uint32_t v;

			/* data registers 3/4 of the time, CS and SS 1/4 */
			sr_plan.set[k] = k < SR_CS ? (r >> (2 * k)) % 4 != 0 :
						   (r >> (2 * k)) % 4 == 0;
			if (!sr_plan.set[k]) {
				want[k] = orig[k];
				continue;
			}
			v = k == SR_CS ? draw_cs(&rnd) :
			    k == SR_SS ? draw_ss(&rnd) : draw_sel(&rnd, FIXED_LDT_N);
			if (k == SR_CS && model_iret_cs(v | 3) && !flat_cs(v | 3))
				v = USER_CS;
			/* __gsh and friends: the kernel reads 16 bits */
			if ((r >> 20) % 4 == 0) {
				v |= xorshift32(&rnd) & 0xffff0000u;
				upper |= v >> 16;
			}
			sr_plan.v[k] = v;
			v &= 0xffff;
			want[k] = k >= SR_CS ? v | 3 : fixup_rpl(v);
		}
		iret_ok = model_iret_cs(want[SR_CS]) && model_iret_ss(want[SR_SS]);
		ws = iret_ok ? sr_ud2_sig :
		     model_iret_fault(want[SR_CS], want[SR_SS]);
		for (k = 0; k < SR_CS; k++) {
			want[k] = kernel_load(want[k]);
			if (iret_ok)
				want[k] = after_iret(sr_reg[k], want[k]);
		}
		mix(&h, (uint32_t)i);
		for (k = 0; k < SR_NR; k++)
			mix(&h, sr_plan.set[k] ? sr_plan.v[k] : 0xffffffffu);
		mix(&h, iret_ok);

		sr_seen.n = 0;
		ph_int80(SYS_tgkill, pid, tid, SIGUSR1);
		out->iters++;

		if (sr_seen.n != 1 || sr_seen.sig != ws.sig ||
		    sr_seen.code != ws.code || sr_seen.trapno != ws.trapno ||
		    sr_seen.err != ws.err ||
		    sr_seen.ip != (uint32_t)(uintptr_t)sr_ud2) {
			note(i, "sigreturn cs %#x ss %#x: model %s (signal %d code %d trapno %u err %#x), got %d signal(s), the last %d code %d trapno %u err %#x ip %#x",
			     want[SR_CS], want[SR_SS],
			     iret_ok ? "ud2" : "IRET fault", ws.sig, ws.code,
			     ws.trapno, ws.err, sr_seen.n, sr_seen.sig,
			     sr_seen.code, sr_seen.trapno, sr_seen.err,
			     sr_seen.ip);
			continue;
		}
		for (k = 0; k < SR_NR; k++) {
			if (sr_seen.seg[k] == want[k])
				continue;
			note(i, "sigreturn sc.%s = %#x (%s): model %#x, CPU had %#x",
			     sr_name[k], sr_plan.v[k],
			     sr_plan.set[k] ? "set" : "kept", want[k],
			     sr_seen.seg[k]);
			bad = 1;
		}
		if (bad)
			continue;
		out->kinds[iret_ok ? SK_UD2 : SK_IRET_FAULT]++;
		for (k = 0; k < SR_CS; k++) {
			uint32_t v = sr_plan.v[k] & 0xffff;

			if (!sr_plan.set[k])
				continue;
			if (v >= 1 && v <= 3)
				out->kinds[want[k] ? SK_NULL_KEPT :
					   SK_NULL_ZEROED]++;
			else if (!want[k] && v)
				out->kinds[SK_ZEROED]++;
			else if (v && want[k] != v)
				out->kinds[SK_RPL_FIXED]++;
			else if (v)
				out->kinds[SK_LOADED]++;
		}
		if (iret_ok && (want[SR_CS] & 4))
			out->kinds[SK_CS_LDT]++;
		if (iret_ok && (want[SR_SS] & 4))
			out->kinds[SK_SS_LDT]++;
		if (iret_ok && !(want[SR_SS] & 4) && want[SR_SS] != USER_DS)
			out->kinds[SK_SS_GDT_ODD]++;
		if (upper)
			out->kinds[SK_UPPER_BITS]++;
		if (!iret_ok && gdt.kernel64)
			out->kinds[ws.trapno == TRAP_NP ? SK_IRET_NP :
				   ws.err ? SK_IRET_GP : SK_IRET_GP0]++;
	}
	out->checksum = h;
}

TEST_F_TIMEOUT(fz, sigreturn_selectors, 290)
{
	struct fz_arg a = {
		sub_seed("sigreturn_selectors"), fz_iterations(16000),
	};
	uint32_t required = (1u << SK_NR) - 1;
	struct ph_result res;
	double t0 = ph_now();

	TH_LOG("seed %lu (SEED=%lu replays it), %ld sigreturns",
	       fz_seed, fz_seed, a.n);
	ph_run(sr_case, &a, 250, &res);
	EXPECT_CHILD_DONE(res);
	if (null_kept[R_DS] && null_kept[R_ES] && null_kept[R_FS] &&
	    null_kept[R_GS])
		required &= ~(1u << SK_NULL_ZEROED);
	if (!gdt.kernel64)
		required &= ~SK_IRET_64;
	report(_metadata, "sigreturn_selectors", sr_kind, SK_NR, required,
	       ph_now() - t0);
	CHECK_WORLD("sigreturn_selectors");
}

/* ----------------------------------------------------- ptrace_setregs */

/* struct user_regs_struct as an array, in its order. */
enum {
	U_EBX, U_ECX, U_EDX, U_ESI, U_EDI, U_EBP, U_EAX, U_DS, U_ES, U_FS,
	U_GS, U_ORIG_EAX, U_EIP, U_CS, U_EFL, U_ESP, U_SS, U_NR
};

_Static_assert(sizeof(struct user_regs_struct) == U_NR * sizeof(long),
	       "user_regs_struct layout");

static const char *const u_name[U_NR] = {
	"ebx", "ecx", "edx", "esi", "edi", "ebp", "eax", "ds", "es", "fs",
	"gs", "orig_eax", "eip", "cs", "eflags", "esp", "ss",
};

union uregs {
	struct user_regs_struct s;
	long r[U_NR];
};

static int u_is_seg(int f)
{
	return (f >= U_DS && f <= U_GS) || f == U_CS || f == U_SS;
}

/* The model register of a data segment field. */
static int u_reg(int f)
{
	return f - U_DS;	/* U_DS..U_GS are R_DS..R_GS */
}

/* arch/x86/kernel/ptrace.c: set_segment_reg() refuses these. */
static int pt_refused(int f, unsigned long v)
{
	unsigned int s = v & 0xffff;

	if (s && (s & 3) != 3)
		return 1;		/* invalid_selector() */
	return (f == U_CS || f == U_SS) && !s;
}

void pt_spin(volatile int *flag);
extern char pt_spin_loop[];
asm(".text\n"
	".globl pt_spin\n"
	"pt_spin:\n\t"
	"movl 4(%esp), %eax\n\t"
	"movl $1, (%eax)\n"
	".globl pt_spin_loop\n"
	"pt_spin_loop:\n\t"
	"jmp pt_spin_loop\n");

enum {
	PK_SETREGS_OK, PK_SETREGS_EIO, PK_POKE_OK, PK_POKE_EIO, PK_LOADED,
	PK_ZEROED, PK_NULL, PK_CS_SS_OK, PK_CS_SS_EIO, PK_NR
};

static const char *const pt_kind[] = {
	"SETREGS ok", "SETREGS EIO (partial)", "POKEUSER ok", "POKEUSER EIO",
	"loaded", "invalid -> 0", "null", "POKEUSER cs/ss ok",
	"POKEUSER cs/ss EIO",
};

/* Single-step the tracee: 0 if it stopped again with SIGTRAP. */
static int pt_step(pid_t pid, int *status)
{
	if (ptrace(PTRACE_SINGLESTEP, pid, 0, 0))
		return -1;
	if (waitpid(pid, status, __WALL) != pid)
		return -1;
	return WIFSTOPPED(*status) && WSTOPSIG(*status) == SIGTRAP ? 0 : -1;
}

/*
 * After a step from @w (what the tracee's registers were set to): every
 * register as written, the data segments as the exit path loads them.
 */
static int pt_check_step(uint32_t op, const char *what, const union uregs *w,
			 const union uregs *got)
{
	int f, bad = 0;

	for (f = 0; f < U_NR; f++) {
		unsigned long want = w->r[f];

		if (f >= U_DS && f <= U_GS)
			want = after_iret(u_reg(f),
					  kernel_load(w->r[f] & 0xffff));
		else if (f == U_ORIG_EAX)
			want = -1;	/* the step's #DB */
		else if (f == U_EIP)
			want = (unsigned long)(uintptr_t)pt_spin_loop;
		if ((unsigned long)got->r[f] == want)
			continue;
		note(op, "%s: after the step %s = %#lx, model %#lx (set %#lx)",
		     what, u_name[f], (unsigned long)got->r[f], want,
		     (unsigned long)w->r[f]);
		bad = 1;
	}
	return bad;
}

static void pt_count_segs(const union uregs *w, const union uregs *base)
{
	int f;

	for (f = U_DS; f <= U_GS; f++) {
		unsigned int s = w->r[f] & 0xffff;

		if (w->r[f] == base->r[f])
			continue;
		if (is_null(s))
			out->kinds[PK_NULL]++;
		else
			out->kinds[kernel_load(s) ? PK_LOADED : PK_ZEROED]++;
	}
}

TEST_F_TIMEOUT(fz, ptrace_setregs, 290)
{
	uint32_t rnd = sub_seed("ptrace_setregs"), h = 2166136261u;
	long n = fz_iterations(6000), i;
	union uregs base, w, got;
	double t0 = ph_now(), end;
	struct ph_cpus cpus;
	cpu_set_t set;
	int status;
	pid_t pid;

	TH_LOG("seed %lu (SEED=%lu replays it), %ld SETREGS/POKEUSER",
	       fz_seed, fz_seed, n);
	/* the tracee inherits this LDT and these TLS entries */
	ASSERT_EQ(0, fixed_install());
	/*
	 * Tracer and tracee share a CPU, which moves round all of them: a
	 * step is then a switch, not a cross-CPU wakeup (ten times faster
	 * under TCG), and the tracee still runs on every CPU's GDT.
	 */
	ASSERT_EQ(0, ph_cpus_online(&cpus));
	ASSERT_EQ(0, ph_pin(cpus.id[0]));
	out->spin_flag = 0;
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* it spins for ever: it must not outlive a failed tracer */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) ||
		    ptrace(PTRACE_TRACEME, 0, 0, 0))
			ph_raw_exit(30);
		pt_spin(&out->spin_flag);
	}
	end = ph_now() + 60;
	while (!out->spin_flag && ph_now() < end)
		sched_yield();
	ASSERT_EQ(1, out->spin_flag);
	ASSERT_EQ(0, kill(pid, SIGSTOP));
	ASSERT_EQ(pid, waitpid(pid, &status, __WALL));
	ASSERT_TRUE(WIFSTOPPED(status) && WSTOPSIG(status) == SIGSTOP);
	/* one step first, so that orig_eax is the step's -1 from now on */
	ASSERT_EQ(0, pt_step(pid, &status));
	ASSERT_EQ(0, ptrace(PTRACE_GETREGS, pid, 0, &base.s));
	ASSERT_EQ((long)(uintptr_t)pt_spin_loop, base.r[U_EIP]);
	ASSERT_EQ(-1, base.r[U_ORIG_EAX]);

	for (i = 0; i < n; i++) {
		uint32_t r = xorshift32(&rnd);
		int f, refused = -1, rc, err, bad = 0;
		long peek;

		out->progress = i;
		if (i % 512 == 511) {
			int cpu = cpus.id[(i / 512) % cpus.n];

			CPU_ZERO(&set);
			CPU_SET(cpu, &set);
			ASSERT_EQ(0, sched_setaffinity(pid, sizeof(set), &set));
			ASSERT_EQ(0, ph_pin(cpu));
		}
		w = base;
		if (r % 4 < 2) {
			/*
			 * SETREGS: random GP registers and data selectors;
			 * half the time all of them RPL 3, so that it works.
			 */
			for (f = U_EBX; f <= U_EAX; f++)
				w.r[f] = xorshift32(&rnd);
			for (f = U_DS; f <= U_GS; f++) {
				uint32_t q = xorshift32(&rnd);

				if (q % 4 == 0)
					continue;
				w.r[f] = q % 8 == 1 ? (q >> 8) & 3 :
					 draw_sel(&rnd, FIXED_LDT_N);
				if ((r >> 8) % 2)
					w.r[f] |= 3;
				if ((q >> 12) % 8 == 0)
					w.r[f] |= xorshift32(&rnd) & 0xffff0000u;
			}
			/* genregs_set() stops at the first refused one */
			for (f = 0; f < U_NR && refused < 0; f++)
				if (u_is_seg(f) && pt_refused(f, w.r[f]))
					refused = f;
			mix(&h, (uint32_t)i);
			for (f = U_EBX; f <= U_GS; f++)
				mix(&h, w.r[f]);
			mix(&h, refused);

			errno = 0;
			rc = ptrace(PTRACE_SETREGS, pid, 0, &w.s);
			err = errno;
			out->iters++;
			if (refused >= 0 ? rc != -1 || err != EIO : rc != 0) {
				note(i, "SETREGS ds %#lx es %#lx fs %#lx gs %#lx: model %s, got %d errno %d",
				     w.r[U_DS], w.r[U_ES], w.r[U_FS], w.r[U_GS],
				     refused >= 0 ? "EIO" : "0", rc, err);
				goto restore;
			}
			/* what stuck: the fields before the refused one */
			for (f = 0; f < U_NR; f++) {
				if (refused >= 0 && f >= refused)
					w.r[f] = base.r[f];
				else if (u_is_seg(f))
					w.r[f] &= 0xffff;
			}
			out->kinds[refused >= 0 ? PK_SETREGS_EIO :
				   PK_SETREGS_OK]++;
		} else {
			/* POKEUSER one segment register, or CS or SS */
			static const int pf[] = { U_DS, U_ES, U_FS, U_GS };
			unsigned long v;

			f = r % 4 == 2 ? pf[(r >> 2) % 4] :
			    (r >> 2) % 2 ? U_CS : U_SS;
			v = draw_sel(&rnd, FIXED_LDT_N);
			if ((r >> 8) % 4 == 0)
				v |= xorshift32(&rnd) & 0xffff0000u;
			refused = pt_refused(f, v);
			mix(&h, (uint32_t)i);
			mix(&h, f << 20 | refused);
			mix(&h, v);

			errno = 0;
			rc = ptrace(PTRACE_POKEUSER, pid,
				    (void *)(f * sizeof(long)), (void *)v);
			err = errno;
			errno = 0;
			peek = ptrace(PTRACE_PEEKUSER, pid,
				      (void *)(f * sizeof(long)), 0);
			out->iters++;
			if ((refused ? rc != -1 || err != EIO : rc != 0) ||
			    errno ||
			    peek != (refused ? base.r[f] : (long)(v & 0xffff))) {
				note(i, "POKEUSER %s = %#lx: model %s, got %d errno %d; PEEKUSER %#lx",
				     u_name[f], v, refused ? "EIO" : "0", rc,
				     err, peek);
				goto restore;
			}
			if (f == U_CS || f == U_SS) {
				out->kinds[refused ? PK_CS_SS_EIO :
					   PK_CS_SS_OK]++;
				goto restore;	/* IRET may refuse them: not run */
			}
			out->kinds[refused ? PK_POKE_EIO : PK_POKE_OK]++;
			if (refused)
				goto restore;
			w.r[f] = v & 0xffff;
		}

		/* the registers now, then after a step through the exit path */
		ASSERT_EQ(0, ptrace(PTRACE_GETREGS, pid, 0, &got.s));
		for (f = 0; f < U_NR; f++) {
			if (got.r[f] == w.r[f])
				continue;
			note(i, "before the step %s = %#lx, wrote %#lx",
			     u_name[f], got.r[f], w.r[f]);
			bad = 1;
		}
		if (pt_step(pid, &status)) {
			note(i, "single step: status %#x", status);
			ASSERT_TRUE(WIFSTOPPED(status));
			goto restore;
		}
		ASSERT_EQ(0, ptrace(PTRACE_GETREGS, pid, 0, &got.s));
		bad |= pt_check_step(i, r % 4 < 2 ? "SETREGS" : "POKEUSER", &w,
				     &got);
		if (!bad)
			pt_count_segs(&w, &base);
restore:
		ASSERT_EQ(0, ptrace(PTRACE_SETREGS, pid, 0, &base.s));
	}
	out->checksum = h;
	kill(pid, SIGKILL);
	waitpid(pid, &status, __WALL);
	report(_metadata, "ptrace_setregs", pt_kind, PK_NR,
	       (1u << PK_NR) - 1, ph_now() - t0);
	CHECK_WORLD("ptrace_setregs");
}

/* ------------------------------------------------------ ldt_tls_churn */

/* A descriptor as the kernel stores it. */
struct desc {
	uint32_t lo, hi;
};

static int ldt_empty(const struct user_desc *u)
{
	return !u->base_addr && !u->limit && !u->contents &&
	       u->read_exec_only && !u->seg_32bit && !u->limit_in_pages &&
	       u->seg_not_present && !u->useable;
}

static int ldt_zero(const struct user_desc *u)
{
	return !u->base_addr && !u->limit && !u->contents &&
	       !u->read_exec_only && !u->seg_32bit && !u->limit_in_pages &&
	       !u->seg_not_present && !u->useable;
}

/* asm/desc.h: fill_ldt(); write_ldt() clears AVL in the old mode. */
static struct desc fill_ldt(const struct user_desc *u, int oldmode)
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
static struct user_desc decode(struct desc d, unsigned int idx)
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
static struct user_desc written(const struct user_desc *in, int clear,
				int oldmode)
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

static int same_ud(const struct user_desc *a, const struct user_desc *b)
{
	return !memcmp(a, b, sizeof(*a));
}

static int desc_zero(struct desc d)
{
	return !d.lo && !d.hi;
}

/* Loadable into %ds/%es/%fs/%gs (every descriptor here has DPL 3). */
static int desc_loadable(struct desc d)
{
	uint32_t type = d.hi >> 8 & 0xf;

	if (!(d.hi & AR_S) || !(d.hi & AR_P))
		return 0;
	return !(type & 8) || (type & 2);
}

/* The limit LSL reports. */
static uint32_t desc_limit(struct desc d)
{
	uint32_t l = (d.lo & 0xffff) | (d.hi & 0xf0000);

	return d.hi & (1u << 23) ? l << 12 | 0xfff : l;
}

/* The marker buffers the watched descriptors point at. */
#define NMARK		4
static uint32_t markers[NMARK][16] __attribute__((aligned(64))) = {
	{ 0x4d4b3030 }, { 0x4d4b3131 }, { 0x4d4b3232 }, { 0x4d4b3333 },
};

/*
 * A base into the operation stream: a marker by its index, so that the
 * checksum depends on the seed only, not on where the binary put them.
 */
static void mix_base(uint32_t *h, uint32_t base)
{
	int k;

	for (k = 0; k < NMARK; k++)
		if (base == (uint32_t)(uintptr_t)markers[k])
			base = 0x4d4b0000 | k;
	mix(h, base);
}

static uint32_t desc_base(struct desc d)
{
	return d.lo >> 16 | (d.hi & 0xff) << 16 | (d.hi & 0xff000000);
}

/* Which marker a read of %fs:0 through @d gives, or -1 if none is safe. */
static int desc_marker(struct desc d)
{
	uint32_t base = desc_base(d);
	uint32_t type = d.hi >> 8 & 0xf;
	int k;

	if (!desc_loadable(d) || desc_limit(d) < 3 ||
	    (!(type & 8) && (type & 4)))	/* expand-down data */
		return -1;
	for (k = 0; k < NMARK; k++)
		if (base == (uint32_t)(uintptr_t)markers[k])
			return k;
	return -1;
}

/* A watched entry gets one of these: readable at a marker, or not loadable. */
enum wkind { W_RW, W_RO, W_CODE_R, W_CODE_X, W_NP, W_CLEAR, W_NR };

static struct user_desc watched_info(uint32_t r, unsigned int entry)
{
	static const enum dkind wk[W_NR] = {
		DK_RW, DK_RO, DK_CODE_R, DK_CODE_X, DK_NP_DATA, DK_CLEAR,
	};
	enum dkind k = wk[r % W_NR];

	return dk_info(k, entry, (uint32_t)(uintptr_t)markers[(r >> 4) % NMARK]);
}

/* Where a pointer argument points, and how many bytes there are usable. */
enum ptrk { P_OK, P_RO, P_NULL, P_NONE, P_STRADDLE, P_NR };

static const char *const ptr_name[] = {
	"buf", "ro", "NULL", "unmapped", "straddle",
};

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

static struct desc with_base(struct desc d, uint32_t base)
{
	d.lo = (d.lo & 0xffff) | base << 16;
	d.hi = (d.hi & 0x00ffff00) | (base >> 16 & 0xff) |
	       (base & 0xff000000);
	return d;
}

static int fsv_same(struct fsv a, struct fsv b)
{
	return a.sel == b.sel &&
	       (!a.sel || !memcmp(&a.d, &b.d, sizeof(a.d)));
}

/* @sel loaded from @d: the selector, or 0 by the kernel's fixup. */
static struct fsv fs_loaded(unsigned int sel, struct desc d)
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
static struct fsv fs_refreshed(struct fsv v, struct desc now)
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
static struct fsv fs_switched(struct fsv v, struct desc now)
{
	struct fsv n;

	if (!v.sel || !gdt.kernel64)
		return v;
	n = fs_loaded(v.sel, now);
	if (n.sel && gdt.fsgsbase)
		n.d = with_base(now, desc_base(v.d));
	return n;
}


#define BIG_BUF		(65536 + 4096)
#define SENTINEL	0xa5
#define LDT_BYTES	(LDT_ENTRIES * LDT_ENTRY_SIZE)

struct churn {
	uint8_t *buf;			/* BIG_BUF bytes, read-write */
	uint8_t *ro;			/* a read-only page of user_descs */
	uint8_t *none;			/* an inaccessible page */
	uint8_t *edge;			/* 8 bytes before an inaccessible page */
	int nro;			/* user_descs in ro */

	/* the model */
	int have_ldt;
	unsigned int nr;		/* LDT entries */
	struct desc *ldt;		/* LDT_ENTRIES */
	struct desc tls[3];		/* entries TLS_MIN .. TLS_MIN + 2 */
	/*
	 * What %fs holds in the main thread if the kernel keeps it on the
	 * watched entry, as an i386 kernel does: the operation stream
	 * depends on it, so that it is the same on every run.
	 */
	unsigned int main_fs;
	int watched_written;		/* by the current operation */
	/* What it may hold, the model proper; one after each check. */
	struct fsv fs[MAX_FSV];
	int nfs;
	long csw;			/* the main thread's context switches */
};

/* What an access of @size bytes at a @k pointer does: 1 if it faults. */
static int ptr_faults(enum ptrk k, unsigned long size, int write)
{
	if (!size)
		return 0;
	switch (k) {
	case P_OK:
		return size > BIG_BUF;
	case P_RO:
		return write || size > 4096;
	case P_STRADDLE:
		return size > 8;
	default:
		return 1;
	}
}

static uint8_t *ptr_of(struct churn *c, enum ptrk k)
{
	switch (k) {
	case P_OK:
		return c->buf;
	case P_RO:
		return c->ro;
	case P_NONE:
		return c->none;
	case P_STRADDLE:
		return c->edge;
	default:
		return NULL;
	}
}

/* The second thread: %fs (%es) = LDT entry 0, read through, checked. */
#define WATCH_LDT	0
#define WATCH_TLS	(TLS_MIN + 2)
#define SIB_SEL(rpl)	WITH_RPL(LDT_SEL(WATCH_LDT), rpl)

struct sib {
	volatile uint32_t gen;		/* even: entry 0 is view[gen / 2] */
	volatile int stop, ready;
	volatile uint8_t *view;		/* bit 0 loadable, bits 1-3 marker + 1 */
	volatile int32_t *last_bad;	/* latest unloadable generation <= */
	long nview;
};

static struct sib sib;

static uint8_t view_of(struct desc d)
{
	return desc_loadable(d) | (desc_marker(d) + 1) << 1;
}

/* The generation @g must be in the arrays. */
static void sib_publish(uint32_t g, struct desc d)
{
	long k = g / 2;

	sib.view[k] = view_of(d);
	if (!desc_loadable(d))
		sib.last_bad[k] = g;
	else
		sib.last_bad[k] = k ? sib.last_bad[k - 1] : -1;
	__sync_synchronize();
	sib.gen = g;
}

/*
 * The sibling's register: %fs on an i386 kernel, which keeps it on the
 * LDT (every return to user mode reloads it; with PDA_UP_NOSEG, ldt.c
 * does).  An x86-64 kernel reloads %ds and %es, on every CPU that runs
 * the mm, when the LDT changes (refresh_ldt_segments()), and leaves %fs
 * and %gs to the next context switch: there the sibling holds %es.
 */
static const char *sib_reg(void)
{
	return gdt.kernel64 ? "es" : "fs";
}

static int NOSP sib_load(unsigned int sel, struct skip_rec *rec)
{
	return gdt.kernel64 ? load_es(sel, rec) : load_fs(sel, rec);
}

static int NOSP sib_read0(unsigned int *sel, uint32_t *val,
			  struct skip_rec *rec)
{
	return gdt.kernel64 ? read_es0(sel, val, rec) : read_fs0(sel, val, rec);
}

/*
 * note() from the sibling.  The C library's string instructions write
 * through %es: when it holds the LDT selector, note() gets a flat one,
 * then the selector comes back (or 0, if it no longer loads).
 */
#define sib_note(...) do {						\
	unsigned int __es = ph_get_seg(es);				\
									\
	if (gdt.kernel64)						\
		ph_set_seg(es, USER_DS);				\
	note(out->progress, __VA_ARGS__);				\
	if (gdt.kernel64 && load_es(__es, &skip_recs[1]))		\
		ph_set_seg(es, 0);					\
} while (0)

/*
 * Its selector takes every RPL in turn: on each reload after the kernel
 * took it away, and now and then while it holds.
 */
static void *sib_main(void *unused)
{
	struct skip_rec *rec = &skip_recs[1];
	uint32_t g1, g2, g_load = 0, v, last_marker = ~0u;
	unsigned int k, sel, rpl = 0, cur = SIB_SEL(0), prev = cur, held = 0;

	(void)unused;
	/* a new thread starts with its creator's %fs and %es: take ours */
	if (sib_load(cur, rec))
		sib_note("sibling: cannot load %#x", cur);
	sib.ready = 1;
	for (k = 0; !sib.stop; k++) {
		uint8_t view;
		int m;

		/* enter the kernel now and then; nap, not to starve main */
		if (k % 8 == 7)
			ph_int80(SYS_sched_yield, 0, 0, 0);
		if (k % 64 == 63)
			ph_by_nap();
		g1 = sib.gen;
		__sync_synchronize();
		if (sib_read0(&sel, &v, rec) && sel == cur) {
			/*
			 * Nulled between the two reads, or beyond the limit
			 * (Bochs checks it): either way the handler's
			 * sigreturn gives it back with RPL 3 (fixup_rpl()).
			 */
			rpl = 3;
			cur = prev = SIB_SEL(3);
			continue;
		}
		__sync_synchronize();
		g2 = sib.gen;
		if (g1 != g2 || (g1 & 1))
			continue;
		view = sib.view[g1 / 2];
		m = (view >> 1) - 1;
		out->sib_checks++;
		if (ph_get_seg(gs) != GLIBC_GS)
			sib_note("sibling: %%gs %#x", ph_get_seg(gs));
		if (sel == cur && !(view & 1)) {
			out->sib_stale++;
			sib_note("sibling: %%%s still %#x, the descriptor of generation %u does not load",
				 sib_reg(), sel, g1);
		} else if (sel == cur && m >= 0 && v != markers[m][0]) {
			out->sib_stale++;
			sib_note("sibling: %%%s %#x:0 reads %#x, generation %u has marker %#x",
				 sib_reg(), sel, v, g1, markers[m][0]);
		} else if (sel == cur) {
			out->sib_rpl_checks[rpl]++;
			if (m >= 0 && (uint32_t)m != last_marker) {
				out->sib_follow++;
				out->sib_rpl_follow[rpl]++;
				last_marker = m;
			}
			/* the next RPL, as a reload after a zeroing would */
			if (++held % 16 == 0) {
				/* a failed load's sigreturn gives RPL 3 */
				rpl = sib_load(SIB_SEL(rpl + 1), rec) ? 3 :
				      (rpl + 1) & 3;
				cur = SIB_SEL(rpl);
				g_load = g1;
				sel = cur;
			}
		} else if (sel != 0) {
			out->sib_stale++;
			sib_note("sibling: %%%s %#x", sib_reg(), sel);
		} else if (sib.last_bad[g1 / 2] < (int32_t)g_load) {
			out->sib_stale++;
			sib_note("sibling: %%%s 0, but no generation in %u..%u was unloadable",
				 sib_reg(), g_load, g1);
		} else {
			if (prev == cur)
				out->sib_zeroed++;
			/* it was taken away: take it again when it loads */
			if ((view & 1) && !sib_load(SIB_SEL(rpl + 1), rec)) {
				out->sib_reloads++;
				rpl = (rpl + 1) & 3;
				cur = SIB_SEL(rpl);
				g_load = g1;
				sel = cur;
			}
		}
		prev = sel;
	}
	/* the C library's thread exit needs a flat %es */
	if (gdt.kernel64)
		ph_set_seg(es, USER_DS);
	return NULL;
}

enum {
	CK_LDT_SET, CK_LDT_CLEAR, CK_LDT_OLDMODE, CK_LDT_EINVAL_SIZE,
	CK_LDT_EINVAL_ENTRY, CK_LDT_EINVAL_CONTENTS, CK_LDT_EFAULT,
	CK_LDT_READ, CK_LDT_READ_EFAULT, CK_LDT_READ_DEFAULT, CK_ENOSYS,
	CK_TLS_SET, CK_TLS_CLEAR, CK_TLS_ALLOC, CK_TLS_ESRCH,
	CK_TLS_EINVAL_DESC, CK_TLS_EINVAL_ENTRY, CK_TLS_EFAULT, CK_TLS_GET,
	CK_TLS_GET_EINVAL, CK_TLS_GET_EFAULT, CK_TLS6, CK_FS_FOLLOWED,
	CK_FS_ZEROED, CK_SYSENTER, CK_FS_RPL0, CK_FS_RPL1, CK_FS_RPL2,
	CK_FS_RPL3, CK_FS_KEPT, CK_NR
};

static const char *const ck_name[] = {
	"LDT set", "LDT clear", "LDT old mode", "LDT EINVAL size",
	"LDT EINVAL entry", "LDT EINVAL contents 3", "LDT EFAULT",
	"LDT read", "LDT read EFAULT", "default LDT read", "ENOSYS",
	"TLS set", "TLS clear", "TLS allocated", "TLS ESRCH",
	"TLS EINVAL descriptor", "TLS EINVAL entry", "TLS EFAULT", "TLS get",
	"TLS get EINVAL", "TLS get EFAULT", "TLS entry of glibc (%gs)",
	"%fs followed", "%fs zeroed", "through SYSENTER",
	"RPL 0 %fs checked after a change", "RPL 1 %fs checked after a change",
	"RPL 2 %fs checked after a change", "RPL 3 %fs checked after a change",
	"%fs kept an older descriptor (x86-64)",
};

/* A random user_desc: special forms, contents 3, and garbage. */
static void random_info(uint32_t *rnd, struct user_desc *u,
			unsigned int entry)
{
	uint32_t r = xorshift32(rnd), flags;

	memset(u, 0, sizeof(*u));
	u->entry_number = entry;
	switch (r % 12) {
	case 0:
	case 1:
		u->read_exec_only = 1;
		u->seg_not_present = 1;		/* LDT_empty() */
		return;
	case 2:
		return;				/* LDT_zero() */
	case 3:
		/* zero base and limit: a clear in the old mode only */
		flags = xorshift32(rnd) & 0x7f;
		memcpy((char *)u + 12, &flags, 4);
		return;
	case 4:
	case 5:
		u->contents = 3;
		u->seg_not_present = (r >> 8) & 1;
		u->seg_32bit = (r >> 9) & 1;
		u->base_addr = xorshift32(rnd);
		u->limit = xorshift32(rnd) & 0xfffff;
		return;
	default:
		break;
	}
	u->base_addr = xorshift32(rnd);
	u->limit = (r >> 8) % 8 ? xorshift32(rnd) & 0xfffff : xorshift32(rnd);
	/* the seven flags, and now and then garbage in the unused bits */
	flags = xorshift32(rnd);
	if ((r >> 12) % 4)
		flags &= 0x7f;
	memcpy((char *)u + 12, &flags, 4);
}

static unsigned int random_ldt_entry(uint32_t *rnd)
{
	uint32_t r = xorshift32(rnd), s = r >> 8;

	switch (r % 32) {
	case 0:
	case 1:
		return LDT_ENTRIES + s % 16;
	case 2:
		return 0xffffffffu - s % 4;
	case 3:
	case 4:
		return s | LDT_ENTRIES;
	case 5:
		/* a large LDT, rarely: it makes every later write slower */
		return s % 16 ? 64 + s % 64 : s % LDT_ENTRIES;
	case 6:
		return 16 + s % 48;
	case 7 ... 12:
		return WATCH_LDT;
	default:
		return s % 16;
	}
}

static unsigned int random_tls_entry(uint32_t *rnd)
{
	uint32_t r = xorshift32(rnd);

	switch (r % 8) {
	case 0:
	case 1:
		return -1;
	case 2:
		return TLS_MIN + 1;
	case 3 ... 5:
		return WATCH_TLS;
	case 6:
		return (r >> 8) % 16;	/* mostly not a TLS entry */
	default:
		return xorshift32(rnd);
	}
}

static enum ptrk random_ptr(uint32_t *rnd)
{
	uint32_t r = xorshift32(rnd) % 32;

	if (r < 22)
		return P_OK;
	return r < 25 ? P_RO : r < 27 ? P_NULL : r < 29 ? P_NONE : P_STRADDLE;
}

/*
 * Puts *@u where a @k pointer points and returns the pointer; for P_RO a
 * prepared read-only user_desc replaces *@u; for P_STRADDLE only its
 * first 8 bytes are there.
 */
static uint8_t *place_info(struct churn *c, enum ptrk k, uint32_t r,
			   struct user_desc *u)
{
	switch (k) {
	case P_OK:
		memcpy(c->buf, u, sizeof(*u));
		return c->buf;
	case P_RO:
		memcpy(u, c->ro + sizeof(*u) * (r % c->nro), sizeof(*u));
		return c->ro + sizeof(*u) * (r % c->nro);
	case P_STRADDLE:
		memcpy(c->edge, u, 8);
		return c->edge;
	default:
		return ptr_of(c, k);
	}
}

/* LAR and LSL of @sel agree with the model's descriptor. */
static void check_lar_lsl(uint32_t op, unsigned int sel, struct desc d)
{
	uint32_t ar, lim;
	int ok_ar = seg_lar(sel, &ar), ok_lim = seg_lsl(sel, &lim);

	if (desc_zero(d)) {
		if (ok_ar || ok_lim)
			note(op, "LAR/LSL %#x work on an empty descriptor", sel);
		return;
	}
	if (!ok_ar || ar != (d.hi & AR_MASK) || !ok_lim ||
	    lim != desc_limit(d))
		note(op, "%#x: LAR %d %#x LSL %d %#x, model %#x %#x", sel,
		     ok_ar, ar, ok_lim, lim, d.hi & AR_MASK, desc_limit(d));
}

/* The whole LDT through modify_ldt(0) equals the model; nr * 8 + 8 read. */
static void check_ldt(struct churn *c, uint32_t op)
{
	static const uint8_t zero[8];
	unsigned long bc = c->nr * 8 + 8;
	unsigned long want = !c->have_ldt ? 0 : bc < LDT_BYTES ? bc : LDT_BYTES;
	long ret;

	memset(c->buf, SENTINEL, bc + 8);
	ret = sys3(SYS_modify_ldt, 0, (long)c->buf, bc, 0);
	if (ret != (long)want) {
		note(op, "LDT readback of %u entries returned %ld", c->nr, ret);
		return;
	}
	if (c->have_ldt && memcmp(c->buf, c->ldt, c->nr * 8))
		note(op, "LDT readback differs from the model (%u entries)",
		     c->nr);
	if (want == bc && memcmp(c->buf + c->nr * 8, zero, 8))
		note(op, "LDT readback: not zero past %u entries", c->nr);
}

/* The TLS entries after glibc's through get_thread_area() equal the model. */
static void check_tls(struct churn *c, uint32_t op)
{
	struct user_desc u, want;
	unsigned int e;
	long ret;

	for (e = TLS_MIN + 1; e <= TLS_MIN + 2; e++) {
		memset(&u, 0x5a, sizeof(u));
		u.entry_number = e;
		ret = sys3(SYS_get_thread_area, (long)&u, 0, 0, 0);
		want = decode(c->tls[e - TLS_MIN], e);
		if (ret || !same_ud(&u, &want))
			note(op, "TLS %u readback: %ld, base %#x limit %#x flags %#x; model base %#x limit %#x flags %#x",
			     e, ret, u.base_addr, u.limit, ((uint32_t *)&u)[3],
			     want.base_addr, want.limit, ((uint32_t *)&want)[3]);
	}
}

/* Adds @v to the main thread's possible %fs, once. */
static void fsv_add(struct churn *c, struct fsv v)
{
	int k;

	for (k = 0; k < c->nfs; k++)
		if (fsv_same(c->fs[k], v))
			return;
	if (c->nfs < MAX_FSV)
		c->fs[c->nfs++] = v;
}

/*
 * The main thread's %fs after an operation that may have rewritten the
 * watched entry from @d0 (@written).  @sw: the thread was switched out
 * since the last check (on x86-64, where that reloads %fs), before the
 * write or after it: the model keeps both.
 */
static void main_fs_after(struct churn *c, struct desc d0, int written,
			  int sw)
{
	struct desc d1 = c->tls[WATCH_TLS - TLS_MIN];
	struct fsv in[MAX_FSV], a;
	int n = c->nfs, k;

	memcpy(in, c->fs, sizeof(in));
	c->nfs = 0;
	for (k = 0; k < n; k++) {
		a = written ? fs_refreshed(in[k], d1) : in[k];
		if (sw) {
			fsv_add(c, fs_switched(a, d1));
			a = fs_switched(in[k], d0);
			if (written)
				a = fs_refreshed(a, d1);
		}
		fsv_add(c, a);
	}
}

/* Whether the main thread was switched out since the last look. */
static int main_switched(struct churn *c)
{
	long s = ph_thread_switches();
	int sw = s != c->csw;

	c->csw = s;
	out->main_switched += sw;
	return sw;
}

/*
 * The main thread's %fs holds what the model says, and reads through it.
 * On x86-64 a context switch since the operation (the count says that
 * one came, not when) may have reloaded it before the read or after it:
 * either is right, and after the read it has happened.
 */
static void check_main_fs(struct churn *c, uint32_t op)
{
	struct desc d = c->tls[WATCH_TLS - TLS_MIN];
	struct fsv hit = { 0 }, t;
	int fault, sw = 0, k, s, m, nhit = 0, ambiguous = 0;
	unsigned int fs;
	uint32_t v;

	fault = read_fs0(&fs, &v, &skip_recs[0]);
	if (gdt.kernel64)
		sw = main_switched(c);
	for (k = 0; k < c->nfs; k++) {
		for (s = 0; s <= sw; s++) {
			t = s ? fs_switched(c->fs[k], d) : c->fs[k];
			m = t.sel ? desc_marker(t.d) : -1;
			if (t.sel != fs ||
			    (m >= 0 && (fault || v != markers[m][0])))
				continue;
			if (sw)
				t = fs_switched(c->fs[k], d);
			if (nhit++ && !fsv_same(hit, t))
				ambiguous = 1;
			hit = t;
		}
	}
	if (!nhit) {
		t = c->fs[0];
		m = t.sel ? desc_marker(t.d) : -1;
		note(op, "main %%fs %#x reads %#x (fault %d), model %#x reading %#x (%d possible%s; watched TLS %08x %08x)",
		     fs, v, fault, t.sel, m >= 0 ? markers[m][0] : 0, c->nfs,
		     sw ? ", switched out" : "", d.hi, d.lo);
		c->fs[0] = fs_loaded(fs, d);
		c->nfs = 1;
		return;
	}
	c->fs[0] = hit;
	c->nfs = 1;
	/*
	 * x86-64: which descriptor it has is not known: load it again, with
	 * the RPL a faulted read's sigreturn has given it already (below);
	 * loading @fs would take that back.
	 */
	if (ambiguous) {
		unsigned int sel = fault && fs ? WITH_RPL(fs, 3) : fs;

		out->main_again++;
		if (load_fs(sel, &skip_recs[0]))
			note(op, "main: cannot load %#x again", sel);
		c->fs[0] = fs_loaded(sel, d);
	}
	/*
	 * Past the limit (Bochs checks it), or at a random base: the
	 * handler's sigreturn gives %fs back with RPL 3 (fixup_rpl()),
	 * always on i386, on x86-64 if that changes it (reload_segments()).
	 * An x86-64 kernel may have left %fs on a descriptor the table no
	 * longer has, whose base is anything: c->main_fs stays 0 then.
	 */
	if (fault && fs) {
		if (c->main_fs)
			c->main_fs = WITH_RPL(c->main_fs, 3);
		if (!gdt.kernel64 || (fs & 3) != 3)
			c->fs[0] = fs_loaded(WITH_RPL(fs, 3), d);
	}
	if (ph_get_seg(gs) != GLIBC_GS)
		note(op, "main %%gs %#x", ph_get_seg(gs));
}

/* modify_ldt(1 or 0x11 or anything): ldt.c write_ldt() and the switch. */
static void op_ldt_write(struct churn *c, uint32_t *rnd, uint32_t op,
			 uint32_t *h, int vsys)
{
	uint32_t r = xorshift32(rnd);
	struct user_desc u;
	enum ptrk pk = random_ptr(rnd);
	int oldmode = r % 3 == 0, func = oldmode ? 1 : 0x11, clear = 0;
	unsigned long bytecount = sizeof(u);
	long want, ret;
	uint8_t *p;
	unsigned int e = random_ldt_entry(rnd);
	struct desc d = { 0, 0 };
	uint32_t g;

	if (e == WATCH_LDT)
		u = watched_info(xorshift32(rnd), e);
	else
		random_info(rnd, &u, e);
	if ((r >> 4) % 8 == 0)
		bytecount = (r >> 8) % 4 ? (r >> 12) % 33 : xorshift32(rnd);
	if ((r >> 20) % 8 == 0) {
		/* not a function: ENOSYS whatever the rest */
		do {
			func = (r >> 25) % 2 ? (int)xorshift32(rnd) :
			       (int)xorshift32(rnd) % 32;
		} while (func == 0 || func == 1 || func == 2 || func == 0x11);
	}
	p = place_info(c, pk, r >> 8, &u);
	e = u.entry_number;

	if (func != 1 && func != 0x11)
		want = -ENOSYS;
	else if (bytecount != sizeof(u))
		want = -EINVAL;
	else if (ptr_faults(pk, sizeof(u), 0))
		want = -EFAULT;
	else if (e >= LDT_ENTRIES)
		want = -EINVAL;
	else if (u.contents == 3 && (oldmode || !u.seg_not_present))
		want = -EINVAL;
	else
		want = 0;
	if (!want) {
		clear = (oldmode && !u.base_addr && !u.limit) || ldt_empty(&u);
		if (!clear)
			d = fill_ldt(&u, oldmode);
	}
	mix(h, op);
	mix(h, func);
	mix(h, bytecount << 8 | pk);
	mix(h, e);
	mix_base(h, u.base_addr);
	mix(h, u.limit);
	mix(h, ((uint32_t *)&u)[3]);
	mix(h, want);

	/* the sibling must not judge %fs while the LDT changes */
	g = sib.gen;
	sib.gen = g + 1;
	__sync_synchronize();
	ret = sys3(SYS_modify_ldt, func, (long)p, bytecount, vsys);
	if (!want) {
		c->ldt[e] = d;
		if (e >= c->nr)
			c->nr = e + 1;
		c->have_ldt = 1;
	}
	sib_publish(g + 2, c->ldt[WATCH_LDT]);

	if (ret != want) {
		note(op, "modify_ldt(%#x, %s, %lu) entry %u base %#x limit %#x flags %#x: model %ld, got %ld",
		     func, ptr_name[pk], bytecount, e, u.base_addr, u.limit,
		     ((uint32_t *)&u)[3], want, ret);
		return;
	}
	if (func != 1 && func != 0x11)
		out->kinds[CK_ENOSYS]++;
	else if (want == -EFAULT)
		out->kinds[CK_LDT_EFAULT]++;
	else if (want && bytecount != sizeof(u))
		out->kinds[CK_LDT_EINVAL_SIZE]++;
	else if (want && e >= LDT_ENTRIES)
		out->kinds[CK_LDT_EINVAL_ENTRY]++;
	else if (want)
		out->kinds[CK_LDT_EINVAL_CONTENTS]++;
	else
		out->kinds[clear ? CK_LDT_CLEAR :
			   oldmode ? CK_LDT_OLDMODE : CK_LDT_SET]++;
	if (want)
		return;

	/* read back raw, decode, and ask the CPU */
	check_ldt(c, op);
	{
		struct user_desc got = decode(c->ldt[e], e);
		struct user_desc exp = written(&u, clear, oldmode);

		exp.entry_number = e;
		if (!same_ud(&got, &exp))
			note(op, "LDT %u decodes to base %#x limit %#x flags %#x, wrote base %#x limit %#x flags %#x",
			     e, got.base_addr, got.limit, ((uint32_t *)&got)[3],
			     exp.base_addr, exp.limit, ((uint32_t *)&exp)[3]);
	}
	check_lar_lsl(op, LDT_SEL(e), c->ldt[e]);
}

/* modify_ldt(0) and modify_ldt(2): read_ldt(), read_default_ldt(). */
static void op_ldt_read(struct churn *c, uint32_t *rnd, uint32_t op,
			uint32_t *h, int vsys)
{
	uint32_t r = xorshift32(rnd);
	enum ptrk pk = random_ptr(rnd);
	int func = r % 3 == 0 ? 2 : 0;
	unsigned long bc, n, fill;
	long want, ret;
	uint8_t *p = ptr_of(c, pk);

	switch ((r >> 4) % 8) {
	case 0:
		bc = 0;
		break;
	case 1:
		bc = xorshift32(rnd);
		break;
	case 2:
		bc = LDT_BYTES + (r >> 8) % 64;
		break;
	default:
		bc = (r >> 8) % (c->nr * 8 + 64);
		break;
	}
	if (func == 2) {
		/* read_default_ldt(): 5 entries on i386, 128 bytes on x86-64 */
		n = bc < gdt.k->default_ldt ? bc : gdt.k->default_ldt;
		want = ptr_faults(pk, n, 1) ? -EFAULT : (long)n;
	} else if (!c->have_ldt) {
		n = 0;
		want = 0;
	} else {
		n = bc < LDT_BYTES ? bc : LDT_BYTES;
		want = ptr_faults(pk, n, 1) ? -EFAULT : (long)n;
	}
	mix(h, op);
	mix(h, func << 8 | pk);
	mix(h, bc);
	mix(h, want);

	fill = n + 16 < BIG_BUF ? n + 16 : BIG_BUF;
	if (pk == P_OK)
		memset(c->buf, SENTINEL, fill);
	ret = sys3(SYS_modify_ldt, func, (long)p, bc, vsys);
	if (ret != want) {
		note(op, "modify_ldt(%d, %s, %lu): model %ld, got %ld", func,
		     ptr_name[pk], bc, want, ret);
		return;
	}
	if (want == -EFAULT) {
		out->kinds[CK_LDT_READ_EFAULT]++;
		return;
	}
	out->kinds[func == 2 ? CK_LDT_READ_DEFAULT : CK_LDT_READ]++;
	if (pk != P_OK)
		return;
	/* the entries, zeros to n, and nothing written past n */
	{
		unsigned long m = func == 2 ? 0 : c->nr * 8 < n ? c->nr * 8 : n;
		unsigned long k;

		if (memcmp(c->buf, c->ldt, m))
			note(op, "modify_ldt(%d) read differs from the model",
			     func);
		for (k = m; k < fill; k++) {
			if (c->buf[k] != (k < n ? 0 : SENTINEL)) {
				note(op, "modify_ldt(%d, %lu): byte %lu is %#x",
				     func, bc, k, c->buf[k]);
				break;
			}
		}
	}
}

/* set_thread_area() on entries other than glibc's: tls.c do_set_thread_area(). */
static void op_tls_set(struct churn *c, uint32_t *rnd, uint32_t op,
		       uint32_t *h, int vsys)
{
	uint32_t r = xorshift32(rnd);
	enum ptrk pk = random_ptr(rnd);
	unsigned int e = random_tls_entry(rnd);
	struct user_desc u, back;
	int idx, okay, clear, free_idx = -1;
	long want, ret;
	uint8_t *p;

	/*
	 * Mostly what tls_desc_okay() lets through (data, present) at a
	 * marker, so that the main thread's %fs reads through it; on the
	 * watched entry often the empty one, which takes %fs away.  Random
	 * ones a quarter of the time there, half the time elsewhere; never
	 * for an allocation, which should rather allocate.
	 */
	if (e == WATCH_TLS)
		u = dk_info(watched_tls[r % ARRAY_LEN(watched_tls)], e,
			    (uint32_t)(uintptr_t)markers[(r >> 4) % NMARK]);
	else
		u = dk_info(tls_kinds[r % ARRAY_LEN(tls_kinds)], e,
			    (uint32_t)(uintptr_t)markers[(r >> 4) % NMARK]);
	if (e == WATCH_TLS ? (r >> 8) % 4 == 0 :
	    e != (unsigned int)-1 && (r >> 8) % 2)
		random_info(rnd, &u, e);
	p = place_info(c, pk, r >> 12, &u);
	e = u.entry_number;
	if (e == TLS_MIN) {
		e = TLS_MIN + 1;	/* glibc's: op_tls6() only */
		u.entry_number = e;
	}
	if (pk == P_STRADDLE || pk == P_OK)
		memcpy(p, &u, pk == P_OK ? sizeof(u) : 8);

	okay = ldt_empty(&u) || ldt_zero(&u) ||
	       (u.seg_32bit && u.contents <= 1 && !u.seg_not_present);
	clear = ldt_empty(&u) || ldt_zero(&u);
	idx = (int)e;
	if (ptr_faults(pk, sizeof(u), 0)) {
		want = -EFAULT;
	} else if (!okay) {
		want = -EINVAL;
	} else {
		want = 0;
		if (idx == -1) {
			for (free_idx = TLS_MIN; free_idx <= (int)TLS_MIN + 2;
			     free_idx++)
				if (desc_zero(c->tls[free_idx - TLS_MIN]))
					break;
			if (free_idx > (int)TLS_MIN + 2)
				want = -ESRCH;
			else if (ptr_faults(pk, 4, 1))
				want = -EFAULT;	/* put_user(idx) */
			idx = free_idx;
		}
		if (!want && (idx < (int)TLS_MIN || idx > (int)TLS_MIN + 2))
			want = -EINVAL;
	}
	mix(h, op);
	mix(h, pk);
	mix(h, e);
	mix_base(h, u.base_addr);
	mix(h, u.limit);
	mix(h, ((uint32_t *)&u)[3]);
	mix(h, want);

	ret = sys3(SYS_set_thread_area, (long)p, 0, 0, vsys);
	if (!want) {
		c->tls[idx - TLS_MIN] = clear ? (struct desc){ 0, 0 } :
					fill_ldt(&u, 0);
		/* on i386, %fs is reloaded: see fs_refreshed() */
		if (idx == (int)WATCH_TLS) {
			c->watched_written = 1;
			if (c->main_fs && !desc_loadable(c->tls[idx - TLS_MIN]))
				c->main_fs = 0;
		}
	}
	if (ret != want) {
		note(op, "set_thread_area(%s) entry %d base %#x limit %#x flags %#x: model %ld, got %ld",
		     ptr_name[pk], (int)e, u.base_addr, u.limit,
		     ((uint32_t *)&u)[3], want, ret);
		return;
	}
	if (want == -EFAULT) {
		out->kinds[CK_TLS_EFAULT]++;
	} else if (want == -ESRCH) {
		out->kinds[CK_TLS_ESRCH]++;
	} else if (want) {
		out->kinds[okay ? CK_TLS_EINVAL_ENTRY : CK_TLS_EINVAL_DESC]++;
	} else {
		out->kinds[clear ? CK_TLS_CLEAR : CK_TLS_SET]++;
		if (free_idx >= 0) {
			out->kinds[CK_TLS_ALLOC]++;
			memcpy(&back, p, sizeof(back));
			if ((int)back.entry_number != idx)
				note(op, "set_thread_area(-1) allocated %d, model %d",
				     (int)back.entry_number, idx);
		}
		check_lar_lsl(op, TLS_SEL(idx), c->tls[idx - TLS_MIN]);
	}
}

/* get_thread_area(): tls.c do_get_thread_area(). */
static void op_tls_get(struct churn *c, uint32_t *rnd, uint32_t op,
		       uint32_t *h, int vsys)
{
	uint32_t r = xorshift32(rnd);
	enum ptrk pk = random_ptr(rnd);
	struct user_desc u, want_u;
	int idx = r % 2 ? (int)TLS_MIN + (r >> 4) % 3 :
			  (int)random_tls_entry(rnd);
	long want, ret;
	uint8_t *p;

	memset(&u, 0, sizeof(u));
	u.entry_number = idx;
	p = place_info(c, pk, r >> 8, &u);
	idx = u.entry_number;
	if (ptr_faults(pk, 4, 0))
		want = -EFAULT;			/* get_user(idx) */
	else if (idx < (int)TLS_MIN || idx > (int)TLS_MIN + 2)
		want = -EINVAL;
	else if (ptr_faults(pk, sizeof(u), 1))
		want = -EFAULT;			/* copy_to_user() */
	else
		want = 0;
	mix(h, op);
	mix(h, pk);
	mix(h, idx);
	mix(h, want);

	ret = sys3(SYS_get_thread_area, (long)p, 0, 0, vsys);
	if (ret != want) {
		note(op, "get_thread_area(%s) entry %d: model %ld, got %ld",
		     ptr_name[pk], idx, want, ret);
		return;
	}
	if (want) {
		out->kinds[want == -EFAULT ? CK_TLS_GET_EFAULT :
			   CK_TLS_GET_EINVAL]++;
		return;
	}
	out->kinds[CK_TLS_GET]++;
	want_u = decode(c->tls[idx - TLS_MIN], idx);
	if (memcmp(p, &want_u, sizeof(want_u)))
		note(op, "get_thread_area(%d) differs from the model", idx);
}

struct tls6_res {
	long ret, back_ret, restore_ret;
	unsigned int gs;
	struct user_desc back;
};

/*
 * set_thread_area() on glibc's entry while %gs holds it: tls.c must
 * reload %gs, with 0 if the new descriptor cannot be loaded.  Nothing
 * here may use TLS until glibc's descriptor and %gs are back.
 */
static void NOSP __attribute__((noinline))
tls6_op(struct user_desc *u, struct user_desc *saved, struct tls6_res *res,
	int vsys)
{
	struct user_desc back;

	res->ret = sys3(SYS_set_thread_area, (long)u, 0, 0, vsys);
	res->gs = ph_get_seg(gs);
	back.entry_number = TLS_MIN;
	res->back_ret = sys3(SYS_get_thread_area, (long)&back, 0, 0, 0);
	res->restore_ret = sys3(SYS_set_thread_area, (long)saved, 0, 0, 0);
	ph_set_seg(gs, ph_glibc_gs);
	res->back = back;
}

static void op_tls6(struct churn *c, uint32_t *rnd, uint32_t op, uint32_t *h,
		    int vsys, struct user_desc *saved)
{
	struct user_desc u, want_back;
	struct tls6_res res;
	unsigned int want_gs = GLIBC_GS;
	int okay, clear;
	long want;
	struct desc d;

	random_info(rnd, &u, TLS_MIN);
	okay = ldt_empty(&u) || ldt_zero(&u) ||
	       (u.seg_32bit && u.contents <= 1 && !u.seg_not_present);
	clear = ldt_empty(&u) || ldt_zero(&u);
	want = okay ? 0 : -EINVAL;
	d = !okay ? c->tls[0] : clear ? (struct desc){ 0, 0 } : fill_ldt(&u, 0);
	if (!desc_loadable(d))
		want_gs = 0;
	want_back = decode(d, TLS_MIN);
	mix(h, op);
	mix(h, u.base_addr);
	mix(h, u.limit);
	mix(h, ((uint32_t *)&u)[3]);
	mix(h, want);

	tls6_op(&u, saved, &res, vsys);
	if (res.restore_ret)
		ph_raw_exit(32);
	if (res.ret != want || res.gs != want_gs || res.back_ret ||
	    !same_ud(&res.back, &want_back)) {
		note(op, "set_thread_area(%u) base %#x limit %#x flags %#x: model %ld %%gs %#x, got %ld %%gs %#x, readback %s",
		     TLS_MIN, u.base_addr, u.limit, ((uint32_t *)&u)[3], want,
		     want_gs,
		     res.ret, res.gs,
		     same_ud(&res.back, &want_back) ? "ok" : "differs");
		return;
	}
	out->kinds[want ? CK_TLS_EINVAL_DESC : CK_TLS6]++;
}

struct churn_arg {
	uint32_t seed;
	long n;
};

static void churn_case(void *p)
{
	const struct churn_arg *a = p;
	uint32_t rnd = a->seed, h = 2166136261u;
	struct user_desc saved6, u;
	struct churn c;
	pthread_t t;
	long i, k;
	uint8_t *m;

	memset(&c, 0, sizeof(c));
	c.ldt = calloc(LDT_ENTRIES, sizeof(*c.ldt));
	sib.nview = a->n + 4;
	sib.view = calloc(sib.nview, 1);
	sib.last_bad = calloc(sib.nview, sizeof(*sib.last_bad));
	m = mmap(NULL, BIG_BUF + 4 * 4096, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!c.ldt || !sib.view || !sib.last_bad || m == MAP_FAILED)
		ph_raw_exit(30);
	/* buf | ro page | edge page | inaccessible page */
	c.buf = m;
	c.ro = m + BIG_BUF;
	c.edge = m + BIG_BUF + 2 * 4096 - 8;
	c.none = m + BIG_BUF + 2 * 4096;
	c.nro = 4096 / sizeof(u);
	for (k = 0; k < c.nro; k++) {
		random_info(&rnd, &u, k % 3 ? random_ldt_entry(&rnd) :
				      random_tls_entry(&rnd));
		if (u.entry_number == TLS_MIN)
			u.entry_number = TLS_MIN + 1;	/* glibc's: op_tls6() */
		memcpy(c.ro + k * sizeof(u), &u, sizeof(u));
	}
	if (mprotect(c.ro, 4096, PROT_READ) ||
	    mprotect(c.none, 4096, PROT_NONE))
		ph_raw_exit(31);
	skip_install();

	/* glibc's TLS entry, and the two after it as this thread has them */
	for (k = 0; k < 3; k++) {
		memset(&u, 0, sizeof(u));
		u.entry_number = TLS_MIN + k;
		if (sys3(SYS_get_thread_area, (long)&u, 0, 0, 0))
			ph_raw_exit(32);
		if (k == 0)
			saved6 = u;
		c.tls[k] = ldt_empty(&u) ? (struct desc){ 0, 0 } :
			   fill_ldt(&u, 0);
	}

	/* no LDT yet: modify_ldt(0) reads nothing, (2) the default */
	check_ldt(&c, 0);
	for (i = 0; i < 4; i++) {
		op_ldt_read(&c, &rnd, 0, &h, 0);
		out->iters++;
	}

	/*
	 * The watched entries, %fs on the last TLS entry here and %fs (%es)
	 * on LDT 0 there, each with every RPL in turn.
	 */
	u = dk_info(DK_RW, WATCH_TLS, (uint32_t)(uintptr_t)markers[1]);
	c.tls[WATCH_TLS - TLS_MIN] = fill_ldt(&u, 0);
	c.main_fs = WITH_RPL(TLS_SEL(WATCH_TLS), xorshift32(&rnd));
	mix(&h, c.main_fs);
	if (tls_write(&u) || load_fs(c.main_fs, &skip_recs[0]))
		ph_raw_exit(33);
	c.fs[0] = fs_loaded(c.main_fs, c.tls[WATCH_TLS - TLS_MIN]);
	c.nfs = 1;
	c.csw = ph_thread_switches();
	u = dk_info(DK_RW, WATCH_LDT, (uint32_t)(uintptr_t)markers[0]);
	if (ldt_write(&u))
		ph_raw_exit(34);
	c.ldt[WATCH_LDT] = fill_ldt(&u, 0);
	c.nr = 1;
	c.have_ldt = 1;
	sib_publish(0, c.ldt[WATCH_LDT]);
	if (pthread_create(&t, NULL, sib_main, NULL))
		ph_raw_exit(35);
	while (!sib.ready)
		ph_int80(SYS_sched_yield, 0, 0, 0);

	for (i = 0; i < a->n; i++) {
		uint32_t r = xorshift32(&rnd), op = i + 1;
		uint32_t rpl = xorshift32(&rnd);
		int vsys = (r >> 8) % 4 == 0 && vsys_entry;
		unsigned int fs_before = c.fs[0].sel;
		struct desc d0 = c.tls[WATCH_TLS - TLS_MIN], d1;
		struct fsv now;
		int changed = 0;

		out->progress = op;
		mix(&h, vsys);
		c.watched_written = 0;
		switch (r % 20) {
		case 0 ... 4:
			op_ldt_write(&c, &rnd, op, &h, vsys);
			break;
		case 5 ... 7:
			op_ldt_read(&c, &rnd, op, &h, vsys);
			break;
		case 8 ... 14:
			op_tls_set(&c, &rnd, op, &h, vsys);
			break;
		case 15 ... 17:
			op_tls_get(&c, &rnd, op, &h, vsys);
			break;
		default:
			op_tls6(&c, &rnd, op, &h, vsys, &saved6);
			break;
		}
		out->iters++;
		if (vsys)
			out->kinds[CK_SYSENTER]++;
		main_fs_after(&c, d0, c.watched_written,
			      gdt.kernel64 && main_switched(&c));
		check_tls(&c, op);
		check_main_fs(&c, op);
		d1 = c.tls[WATCH_TLS - TLS_MIN];
		now = c.fs[0];
		if (fs_before && !now.sel) {
			out->kinds[CK_FS_ZEROED]++;
			changed = 1;
		} else if (now.sel && memcmp(&d0, &d1, sizeof(d0))) {
			if (memcmp(&now.d, &d1, sizeof(d1))) {
				out->kinds[CK_FS_KEPT]++;
				changed = 1;
			} else if (desc_marker(d1) >= 0) {
				out->kinds[CK_FS_FOLLOWED]++;
				changed = 1;
			}
		}
		if (changed)
			out->kinds[CK_FS_RPL0 + (fs_before & 3)]++;
		/*
		 * %fs was taken away: take it again when it loads.  Now and
		 * then, take it again anyway, with another RPL.  What an
		 * i386 kernel would have left decides (c.main_fs), so that
		 * the operations do not depend on when an x86-64 kernel
		 * switched the thread out; it may still hold an older
		 * descriptor there, which the load replaces.
		 */
		if ((!c.main_fs && desc_loadable(d1) &&
		     (gdt.kernel64 || ph_get_seg(fs) == 0)) ||
		    (c.main_fs && rpl % 4 == 0)) {
			unsigned int sel = WITH_RPL(TLS_SEL(WATCH_TLS),
						    rpl >> 2);

			mix(&h, sel);
			if (load_fs(sel, &skip_recs[0])) {
				note(op, "main: cannot load %#x", sel);
			} else {
				c.main_fs = sel;
				c.fs[0] = fs_loaded(sel, d1);
				c.nfs = 1;
			}
		}
		if (i % 64 == 63)
			check_ldt(&c, op);
		/* let the sibling see this descriptor (one CPU: it must) */
		if (i % 4 == 3)
			ph_int80(SYS_sched_yield, 0, 0, 0);
	}
	sib.stop = 1;
	pthread_join(t, NULL);
	out->checksum = h;
}

TEST_F_TIMEOUT(fz, ldt_tls_churn, 290)
{
	struct churn_arg a = {
		sub_seed("ldt_tls_churn"), fz_iterations(14000),
	};
	struct ph_result res;
	double t0 = ph_now();
	int k;

	TH_LOG("seed %lu (SEED=%lu replays it), %ld operations", fz_seed,
	       fz_seed, a.n);
	ph_run(churn_case, &a, 250, &res);
	EXPECT_CHILD_DONE(res);
	/* Only an x86-64 kernel leaves an older descriptor in %fs. */
	report(_metadata, "ldt_tls_churn", ck_name, CK_NR,
	       ((1u << CK_NR) - 1) & ~(vsys_entry ? 0 : 1u << CK_SYSENTER) &
	       ~(gdt.kernel64 ? 0 : 1u << CK_FS_KEPT), ph_now() - t0);
	TH_LOG("ldt_tls_churn: sibling with %%%s = %#x..%#x: %u checks, %u descriptor changes followed, %u times zeroed, %u reloads, %u stale",
	       sib_reg(), SIB_SEL(0), SIB_SEL(3), out->sib_checks,
	       out->sib_follow,
	       out->sib_zeroed, out->sib_reloads, out->sib_stale);
	TH_LOG("ldt_tls_churn: sibling checks (changes followed) with RPL 0-3: %u (%u), %u (%u), %u (%u), %u (%u)",
	       out->sib_rpl_checks[0], out->sib_rpl_follow[0],
	       out->sib_rpl_checks[1], out->sib_rpl_follow[1],
	       out->sib_rpl_checks[2], out->sib_rpl_follow[2],
	       out->sib_rpl_checks[3], out->sib_rpl_follow[3]);
	if (gdt.kernel64)
		TH_LOG("ldt_tls_churn: main thread switched out in %u windows of an operation or a check, %u times loaded again not to guess",
		       out->main_switched, out->main_again);
	EXPECT_LT(0, out->sib_checks);
	EXPECT_EQ(0, out->sib_stale);
	for (k = 0; k < 4; k++)
		EXPECT_LT(0, out->sib_rpl_checks[k]);
	CHECK_WORLD("ldt_tls_churn");
}

TEST_HARNESS_MAIN
