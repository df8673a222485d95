// SPDX-License-Identifier: GPL-2.0
/*
 * sel.*: what loading a segment register costs.
 *
 *  sel.mov.REG.SEL      eight back-to-back "mov SEL, REG": the load alone
 *  sel.pushpop.REG.SEL  the 2006 time-segops sequence: push REG, load SEL,
 *                       add through it, pop REG (reloads the old selector)
 *  sel.loaduse.REG.SEL  load SEL and add through it, eight times: the
 *                       same selector every time
 *  sel.mixed.REG.A_B    Ingo Molnar's case: two different selectors loaded
 *                       alternately into one register, each used for a
 *                       memory access before the next load
 *  sel.kentry.fs.*      what a 32-bit UP kernel does to %fs per entry and
 *                       exit: mainline pushes it, loads __KERNEL_PERCPU (0)
 *                       and pops it; CONFIG_X86_PDA_UP_NOSEG pushes it and
 *                       compares it with the saved copy, loading nothing
 *
 * The register is saved before the loop and restored after it, so i386
 * glibc's %gs is only borrowed while nothing uses it. x86-64 glibc keeps
 * its thread pointer in %fs, so the 64-bit build measures %gs only.
 */
#include "segs.h"

/* arg: selector A in bits 0-3, selector B in 4-7, the register in 8. */
#define SEL(b)	(sb_segs[(b)->arg & 0xf].sel)
#define OFF(b)	(sb_segs[(b)->arg & 0xf].off)
#define SELB(b)	(sb_segs[((b)->arg >> 4) & 0xf].sel)
#define OFFB(b)	(sb_segs[((b)->arg >> 4) & 0xf].off)
#define REG(b)	((int)((b)->arg >> 8) & 1)
#define REG_fs	(SB_FS << 8)
#define REG_gs	(SB_GS << 8)

/*
 * Each setup loads the row's selectors into the row's register (and
 * addresses through them) once under sb_trap() before the row runs.
 */
static int setup_mov(const struct bench *b, char *why)
{
	return sb_seg_usable(b->arg & 0xf, REG(b), 0, why);
}

static int setup_use(const struct bench *b, char *why)
{
	return sb_seg_usable(b->arg & 0xf, REG(b), 1, why);
}

static int setup_mixed(const struct bench *b, char *why)
{
	if (sb_seg_usable(b->arg & 0xf, REG(b), 1, why))
		return -1;
	return sb_seg_usable((b->arg >> 4) & 0xf, REG(b), 1, why);
}

#define SEG_RUNNERS(reg)						\
static void run_mov_##reg(const struct bench *b, unsigned long n)	\
{									\
	unsigned int save, s = SEL(b);					\
									\
	asm volatile("mov %%" #reg ", %0" : "=r" (save));		\
	SB_LOOP(n, asm volatile(SB_REP8("mov %0, %%" #reg "\n\t")	\
				: : "r" (s)));				\
	asm volatile("mov %0, %%" #reg : : "r" (save));			\
}									\
									\
static void run_pushpop_##reg(const struct bench *b, unsigned long n)	\
{									\
	unsigned int s = SEL(b);					\
	unsigned long o = OFF(b);					\
									\
	SB_LOOP(n, asm volatile("push %%" #reg "\n\t"			\
				"mov %0, %%" #reg "\n\t"		\
				"addl $1, %%" #reg ":(%1)\n\t"		\
				"pop %%" #reg				\
				: : "r" (s), "r" (o) : "memory", "cc"));	\
}									\
									\
static void run_loaduse_##reg(const struct bench *b, unsigned long n)	\
{									\
	unsigned int save, s = SEL(b);					\
	unsigned long o = OFF(b);					\
									\
	asm volatile("mov %%" #reg ", %0" : "=r" (save));		\
	SB_LOOP(n, asm volatile(SB_REP8("mov %0, %%" #reg "\n\t"	\
					"addl $1, %%" #reg ":(%1)\n\t")	\
				: : "r" (s), "r" (o) : "memory", "cc"));	\
	asm volatile("mov %0, %%" #reg : : "r" (save));			\
}									\
									\
static void run_mixed_##reg(const struct bench *b, unsigned long n)	\
{									\
	unsigned int save, sa = SEL(b), sb = SELB(b);			\
	unsigned long oa = OFF(b), ob = OFFB(b);			\
									\
	asm volatile("mov %%" #reg ", %0" : "=r" (save));		\
	SB_LOOP(n, asm volatile(".rept 4\n\t"				\
				"mov %0, %%" #reg "\n\t"		\
				"addl $1, %%" #reg ":(%1)\n\t"		\
				"mov %2, %%" #reg "\n\t"		\
				"addl $1, %%" #reg ":(%3)\n\t"		\
				".endr"					\
				: : "r" (sa), "r" (oa), "r" (sb), "r" (ob) \
				: "memory", "cc"));			\
	asm volatile("mov %0, %%" #reg : : "r" (save));			\
}

#ifdef __i386__
SEG_RUNNERS(fs)

static int setup_kentry(const struct bench *b, char *why)
{
	(void)b;
	return sb_seg_usable(SEL_NULL, SB_FS, 0, why);
}

static void run_kentry_mainline(const struct bench *b, unsigned long n)
{
	(void)b;
	SB_LOOP(n, asm volatile("push %%fs\n\t"
				"mov %0, %%fs\n\t"
				"pop %%fs"
				: : "r" (0) : "memory"));
}

static void run_kentry_noseg(const struct bench *b, unsigned long n)
{
	unsigned int scratch;

	(void)b;
	SB_LOOP(n, asm volatile("push %%fs\n\t"
				"mov %%fs, %0\n\t"
				"cmpw %w0, (%%esp)\n\t"
				"je 1f\n\t"
				"mov (%%esp), %%fs\n"
				"1:\tadd $4, %%esp"
				: "=&r" (scratch) : : "memory", "cc"));
}
#endif
SEG_RUNNERS(gs)

#define MOV(reg, s, d)							\
	{ .name = "sel.mov." #reg "." #s, .group = "selector-load",	\
	  .desc = "mov to %" #reg " of " d, .ops = SB_UNROLL,		\
	  .arg = SEL_##s##_IDX | REG_##reg, .setup = setup_mov,	\
	  .run = run_mov_##reg }
#define PUSHPOP(reg, s)							\
	{ .name = "sel.pushpop." #reg "." #s, .group = "selector-load",	\
	  .desc = "push %" #reg "; mov; addl via %" #reg "; pop %" #reg,	\
	  .ops = 1, .arg = SEL_##s##_IDX | REG_##reg, .setup = setup_use, \
	  .run = run_pushpop_##reg }
#define LOADUSE(reg, s)							\
	{ .name = "sel.loaduse." #reg "." #s, .group = "selector-mixed", \
	  .desc = "mov to %" #reg " + addl through it, same selector",	\
	  .ops = SB_UNROLL, .arg = SEL_##s##_IDX | REG_##reg,		\
	  .setup = setup_use, .run = run_loaduse_##reg }
#define MIXED(reg, a, b)						\
	{ .name = "sel.mixed." #reg "." #a "_" #b,			\
	  .group = "selector-mixed",					\
	  .desc = "two selectors alternately loaded into %" #reg " and used", \
	  .ops = SB_UNROLL,						\
	  .arg = SEL_##a##_IDX | SEL_##b##_IDX << 4 | REG_##reg,	\
	  .setup = setup_mixed, .run = run_mixed_##reg }

#define SEL_null_IDX	SEL_NULL
#define SEL_user_ds_IDX	SEL_UDS
#define SEL_tls_IDX	SEL_TLS
#define SEL_ldt_IDX	SEL_LDT

#define REG_BENCHES(reg)						\
	MOV(reg, null, "the null selector"),				\
	MOV(reg, user_ds, "__USER_DS"),					\
	MOV(reg, tls, "a set_thread_area selector"),			\
	MOV(reg, ldt, "a modify_ldt selector"),				\
	PUSHPOP(reg, user_ds),						\
	PUSHPOP(reg, tls),						\
	PUSHPOP(reg, ldt),						\
	LOADUSE(reg, user_ds),						\
	LOADUSE(reg, tls),						\
	LOADUSE(reg, ldt),						\
	MIXED(reg, user_ds, tls),					\
	MIXED(reg, tls, ldt)

const struct bench sb_seg_benches[] = {
#ifdef __i386__
	REG_BENCHES(fs),
	{ .name = "sel.kentry.fs.mainline", .group = "selector-load",
	  .desc = "UP entry+exit, mainline: push %fs; load 0; pop %fs",
	  .ops = 1, .setup = setup_kentry, .run = run_kentry_mainline },
	{ .name = "sel.kentry.fs.noseg", .group = "selector-load",
	  .desc = "UP entry+exit, NOSEG: push %fs; read, compare; no load",
	  .ops = 1, .setup = setup_kentry, .run = run_kentry_noseg },
#endif
	REG_BENCHES(gs),
	{ }
};
