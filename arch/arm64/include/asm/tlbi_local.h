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

/*
 * The switch's hooks, called when tlbi_local_enabled(): __switch_mm()'s
 * to init_mm, check_and_switch_context()'s TTBR write.
 */
void tlbi_local_switch_to_reserved(void);
void tlbi_local_set_ttbr0(struct mm_struct *mm);

/* Reached through the thunks of tlbi_local_thunk.S, below. */
void __tlbi_local_flush_mm(struct mm_struct *mm);
void __tlbi_local_flush_page_nosync(struct mm_struct *mm, unsigned long uaddr);
void __tlbi_local_flush_range_nosync(struct mm_struct *mm, unsigned long start,
				     unsigned long end, unsigned long stride,
				     bool last_level, int tlb_level);

/*
 * The thunks of tlbi_local_thunk.S: exported for modules, whose inline
 * flushes call them, and declared for modversions (asm-prototypes.h).
 * They take their arguments on the stack (below); not callable from C.
 */
void __tlbi_local_flush_mm_thunk(void);
void __tlbi_local_flush_page_nosync_thunk(void);
void __tlbi_local_flush_range_nosync_thunk(void);

/*
 * A call of a thunk that, to GCC, changes x16, x17 (which a veneer or a
 * module's PLT between the bl and the thunk may use), the flags and
 * memory alone, and takes its arguments in any registers: the asm stores
 * them in the 64 bytes it pushes, where the thunk finds them.  So the
 * flush that holds the hook keeps the registers it has without the
 * option, and a flush that makes no call without it makes none that GCC
 * sees with it, so gets no frame.  The asm saves x30 but builds no frame
 * record: the thunk's record, with x29 as the flush left it, chains to
 * the flush's frame as a C call's would.
 */
#define TLBI_LOCAL_CALL(thunk, store_args)	\
	"str	x30, [sp, #-64]!\n\t"		\
	store_args				\
	"bl	" #thunk "\n\t"		\
	"ldr	x30, [sp], #64"

/*
 * True, by a branch to its label: a hook's block ends with
 * "if (tlbi_local_branch_to_return()) return;", so that it leaves by a
 * branch of its own.  -Os lays the block that first reaches a shared
 * return out to run straight into it; were that the hook's block, the
 * path with the option off would take a branch that the kernel without
 * the option does not.
 */
static __always_inline bool tlbi_local_branch_to_return(void)
{
	asm goto("b\t%l[ret]" : : : : ret);
	unreachable();
ret:
	return true;
}

/* The flush hooks, called only when tlbi_local_enabled(). */
static __always_inline void tlbi_local_flush_mm(struct mm_struct *mm)
{
	asm volatile(TLBI_LOCAL_CALL(__tlbi_local_flush_mm_thunk,
				     "str	%0, [sp, #16]\n\t")
		     : : "r" (mm) : "x16", "x17", "cc", "memory");
}

static __always_inline void
tlbi_local_flush_page_nosync(struct mm_struct *mm, unsigned long uaddr)
{
	asm volatile(TLBI_LOCAL_CALL(__tlbi_local_flush_page_nosync_thunk,
				     "stp	%0, %1, [sp, #16]\n\t")
		     : : "r" (mm), "r" (uaddr)
		     : "x16", "x17", "cc", "memory");
}

static __always_inline void
tlbi_local_flush_range_nosync(struct mm_struct *mm, unsigned long start,
			      unsigned long end, unsigned long stride,
			      bool last_level, int tlb_level)
{
	asm volatile(TLBI_LOCAL_CALL(__tlbi_local_flush_range_nosync_thunk,
				     "stp	%0, %1, [sp, #16]\n\t"
				     "stp	%2, %3, [sp, #32]\n\t"
				     "stp	%4, %5, [sp, #48]\n\t")
		     : : "r" (mm), "r" (start), "r" (end), "r" (stride),
		       "r" ((unsigned long)last_level),
		       "r" ((unsigned long)tlb_level)
		     : "x16", "x17", "cc", "memory");
}

#ifdef CONFIG_ARM64_TLBI_LOCAL
DECLARE_STATIC_KEY_FALSE(tlbi_local_key);

/*
 * For an inline that holds the hook and that GCC inlines without the
 * option: -Os counts the test and the call against it, and an outlined
 * copy costs a call and a frame on every path, off included.
 */
#define __tlbi_local_hooked	__always_inline

/*
 * tlbi_local=on was given and the system does not use CnP.  With jump
 * labels the key's site is, while off, the branch to mainline's code, and
 * a NOP when on.  GCC does not reorder the blocks around an asm goto, so
 * after static_branch_unlikely()'s NOP the off path would often take a
 * second branch to reach that code.
 */
static __always_inline bool tlbi_local_enabled(void)
{
#ifdef CONFIG_JUMP_LABEL
	return unlikely(!arch_static_branch_jump(&tlbi_local_key.key, true));
#else
	return static_branch_unlikely(&tlbi_local_key);
#endif
}
#else
#define __tlbi_local_hooked	inline

static __always_inline bool tlbi_local_enabled(void)
{
	return false;
}
#endif

#endif /* __ASM_TLBI_LOCAL_H */
