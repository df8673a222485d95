/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Leaf TLB invalidation without the broadcast for an address space live
 * on the flushing CPU alone (CONFIG_ARM64_TLBI_LOCAL); the rules are in
 * arch/arm64/mm/tlbi_local.c.
 *
 * Each path that may change is one test of the key as the first statement
 * of the inline that mainline has, and a call of one function here: off,
 * what follows the test is mainline's code.
 */
#ifndef __ASM_TLBI_LOCAL_H
#define __ASM_TLBI_LOCAL_H

#include <linux/jump_label.h>
#include <linux/types.h>

struct mm_struct;

/* Called when tlbi_local_enabled(): never without the option. */
void tlbi_local_switch_mm(struct mm_struct *next);
/* Between check_and_switch_context() and tlbi_local.c. */
void tlbi_local_check_and_switch_context(struct mm_struct *mm);
void tlbi_local_set_ttbr0(struct mm_struct *mm);

/* Reached through the thunks of tlbi_local_thunk.S, below. */
void __tlbi_local_flush_mm(struct mm_struct *mm);
void __tlbi_local_flush_page_nosync(struct mm_struct *mm, unsigned long uaddr);
void __tlbi_local_flush_range_nosync(struct mm_struct *mm, unsigned long start,
				     unsigned long end, unsigned long stride,
				     bool last_level, int tlb_level);

/*
 * A call of a thunk that, to GCC, clobbers x0 alone: the flush that holds
 * the hook keeps its registers and, if it is a leaf, stays one without a
 * frame.  The frame record pushed here keeps the unwinder's chain whole.
 */
#define TLBI_LOCAL_CALL(thunk)			\
	"stp	x29, x30, [sp, #-16]!\n\t"	\
	"mov	x29, sp\n\t"			\
	"bl	" #thunk "\n\t"		\
	"ldp	x29, x30, [sp], #16"

/* Called when tlbi_local_enabled(): never without the option. */
static __always_inline void tlbi_local_flush_mm(struct mm_struct *mm)
{
	register unsigned long x0 asm("x0") = (unsigned long)mm;

	asm volatile(TLBI_LOCAL_CALL(__tlbi_local_flush_mm_thunk)
		     : "+r" (x0) : : "cc", "memory");
}

static __always_inline void
tlbi_local_flush_page_nosync(struct mm_struct *mm, unsigned long uaddr)
{
	register unsigned long x0 asm("x0") = (unsigned long)mm;
	register unsigned long x1 asm("x1") = uaddr;

	asm volatile(TLBI_LOCAL_CALL(__tlbi_local_flush_page_nosync_thunk)
		     : "+r" (x0) : "r" (x1) : "cc", "memory");
}

static __always_inline void
tlbi_local_flush_range_nosync(struct mm_struct *mm, unsigned long start,
			      unsigned long end, unsigned long stride,
			      bool last_level, int tlb_level)
{
	register unsigned long x0 asm("x0") = (unsigned long)mm;
	register unsigned long x1 asm("x1") = start;
	register unsigned long x2 asm("x2") = end;
	register unsigned long x3 asm("x3") = stride;
	register unsigned long x4 asm("x4") = last_level;
	register unsigned long x5 asm("x5") = tlb_level;

	asm volatile(TLBI_LOCAL_CALL(__tlbi_local_flush_range_nosync_thunk)
		     : "+r" (x0)
		     : "r" (x1), "r" (x2), "r" (x3), "r" (x4), "r" (x5)
		     : "cc", "memory");
}

#ifdef CONFIG_ARM64_TLBI_LOCAL
DECLARE_STATIC_KEY_FALSE(tlbi_local_key);

/*
 * For an inline that holds the hook and that GCC inlines without the
 * option: -Os counts the test and the call against it, and an outlined
 * copy costs a call and a frame on every path, off included.
 */
#define __tlbi_local_hooked	__always_inline

/* tlbi_local=on was given and the system does not use CnP. */
static __always_inline bool tlbi_local_enabled(void)
{
	return static_branch_unlikely(&tlbi_local_key);
}
#else
#define __tlbi_local_hooked	inline

static __always_inline bool tlbi_local_enabled(void)
{
	return false;
}
#endif

#endif /* __ASM_TLBI_LOCAL_H */
