// SPDX-License-Identifier: GPL-2.0
/*
 * mem.*: does a segment prefix cost anything on a memory access?
 *
 * Plain loads and stores against the same through a segment register with
 * base 0 (__USER_DS) and with a non-zero base (a set_thread_area
 * descriptor). Latency is a pointer chase, each load's address being the
 * previous load's result: "mov SEG:(%r), %r" on a word that holds its own
 * offset in the segment. Throughput is 32 independent loads, or stores
 * (eight addresses, four times), per iteration.
 *
 * i386 uses %fs (unused by glibc there); x86-64 uses %gs (%fs is glibc's).
 */
#include "segs.h"

#ifdef __i386__
#define SEG "%%fs"
#define SEG_REG SB_FS
#else
#define SEG "%%gs"
#define SEG_REG SB_GS
#endif

enum { PLAIN, ZERO_BASE, NZ_BASE };

/* Chase cells, one per cache line; NZ_BASE uses base + 128. */
static struct sb_slot plain_cell, zero_cell, tput_buf;
#ifdef __x86_64__
static struct sb_slot nz_buf[4];
#endif

static unsigned int seg_sel;
static unsigned long chase_start, tput_off, nz_base;

static int setup_mem(const struct bench *b, char *why)
{
	struct sb_seg *s;
	unsigned long *cell;

	sb_segs_init();
	switch (b->arg) {
	case PLAIN:
		cell = (unsigned long *)&plain_cell;
		*cell = (uintptr_t)cell;
		chase_start = *cell;
		tput_off = (uintptr_t)&tput_buf;
		return 0;
	case ZERO_BASE:
		if (sb_seg_usable(SEL_UDS, SEG_REG, 1, why))
			return -1;
		s = &sb_segs[SEL_UDS];
		cell = (unsigned long *)&zero_cell;
		*cell = (uintptr_t)cell;
		chase_start = *cell;
		tput_off = (uintptr_t)&tput_buf;
		break;
	default:
#ifdef __x86_64__
		/*
		 * The base MSR, set with arch_prctl(), selector 0: a
		 * selector load would take the base from the descriptor
		 * (as the PDA does; incform.rmw.gsmsr.1addr compares).
		 */
		nz_base = (uintptr_t)&nz_buf;
		seg_sel = 0;
		if (sb_gs_base_usable(nz_base, 128, why))
			return -1;
#else
		if (sb_seg_usable(SEL_TLS, SB_FS, 1, why))
			return -1;
		s = &sb_segs[SEL_TLS];
		nz_base = s->base;
		seg_sel = s->sel;
#endif
		/* base + 128 is inside the buffer and holds 128. */
		cell = (unsigned long *)(nz_base + 128);
		*cell = 128;
		chase_start = 128;
		tput_off = 192;
		return 0;
	}
	seg_sel = s->sel;
	nz_base = 0;
	return 0;
}

/* i386: nz_base is the TLS descriptor's, and sb_seg_enter() ignores it. */
static unsigned int seg_enter(void)
{
	return sb_seg_enter(seg_sel, nz_base);
}

static void seg_leave(unsigned int save)
{
	sb_seg_leave(save, nz_base);
}

static void run_lat(const struct bench *b, unsigned long n)
{
	unsigned long p = chase_start;
	unsigned int save;

	if (b->arg == PLAIN) {
		SB_LOOP(n, asm volatile(SB_REP8("mov (%0), %0\n\t")
					: "+r" (p)));
		return;
	}
	save = seg_enter();
	SB_LOOP(n, asm volatile(SB_REP8("mov " SEG ":(%0), %0\n\t")
				: "+r" (p)));
	seg_leave(save);
}

#define LOADS(pfx)							\
	".rept 4\n\t"							\
	"mov " pfx "0(%1), %0\n\t"  "mov " pfx "4(%1), %0\n\t"		\
	"mov " pfx "8(%1), %0\n\t"  "mov " pfx "12(%1), %0\n\t"		\
	"mov " pfx "16(%1), %0\n\t" "mov " pfx "20(%1), %0\n\t"		\
	"mov " pfx "24(%1), %0\n\t" "mov " pfx "28(%1), %0\n\t"	\
	".endr\n\t"
#define STORES(pfx)							\
	".rept 4\n\t"							\
	"movl %0, " pfx "0(%1)\n\t"  "movl %0, " pfx "4(%1)\n\t"	\
	"movl %0, " pfx "8(%1)\n\t"  "movl %0, " pfx "12(%1)\n\t"	\
	"movl %0, " pfx "16(%1)\n\t" "movl %0, " pfx "20(%1)\n\t"	\
	"movl %0, " pfx "24(%1)\n\t" "movl %0, " pfx "28(%1)\n\t"	\
	".endr\n\t"

static void run_load(const struct bench *b, unsigned long n)
{
	unsigned long o = tput_off;
	unsigned int v, save;

	if (b->arg == PLAIN) {
		SB_LOOP(n, asm volatile(LOADS("") : "=&r" (v) : "r" (o)));
		return;
	}
	save = seg_enter();
	SB_LOOP(n, asm volatile(LOADS(SEG ":") : "=&r" (v) : "r" (o)));
	seg_leave(save);
}

static void run_store(const struct bench *b, unsigned long n)
{
	unsigned long o = tput_off;
	unsigned int v = 1, save;

	if (b->arg == PLAIN) {
		SB_LOOP(n, asm volatile(STORES("") : : "r" (v), "r" (o)
					: "memory"));
		return;
	}
	save = seg_enter();
	SB_LOOP(n, asm volatile(STORES(SEG ":") : : "r" (v), "r" (o)
				: "memory"));
	seg_leave(save);
}

#ifdef __i386__
#define R "fs"
#else
#define R "gs"
#endif

#define OPS_lat		SB_UNROLL
#define OPS_load	SB_UNROLL_CHEAP
#define OPS_store	SB_UNROLL_CHEAP
#define MEM(kind, nm, a, d)						\
	{ .name = "mem." #kind "." nm, .group = "prefixed-access",	\
	  .desc = d, .arg = a, .setup = setup_mem, .ops = OPS_##kind,	\
	  .run = run_##kind }

const struct bench sb_mem_benches[] = {
	MEM(lat, "plain", PLAIN, "pointer-chase load, no prefix"),
	MEM(lat, R "0", ZERO_BASE, "pointer-chase load via %" R ", base 0"),
	MEM(lat, R "base", NZ_BASE, "pointer-chase load via %" R ", base != 0"),
	MEM(load, "plain", PLAIN, "independent loads, no prefix"),
	MEM(load, R "0", ZERO_BASE, "independent loads via %" R ", base 0"),
	MEM(load, R "base", NZ_BASE, "independent loads via %" R ", base != 0"),
	MEM(store, "plain", PLAIN, "independent stores, no prefix"),
	MEM(store, R "0", ZERO_BASE, "independent stores via %" R ", base 0"),
	MEM(store, R "base", NZ_BASE, "independent stores via %" R ", base != 0"),
	{ }
};
