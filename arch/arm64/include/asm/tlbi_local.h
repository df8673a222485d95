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
void tlbi_local_flush_mm(struct mm_struct *mm);
void tlbi_local_flush_page_nosync(struct mm_struct *mm, unsigned long uaddr);
void tlbi_local_flush_range_nosync(struct mm_struct *mm, unsigned long start,
				   unsigned long end, unsigned long stride,
				   bool last_level, int tlb_level);
/* Between check_and_switch_context() and tlbi_local.c. */
void tlbi_local_check_and_switch_context(struct mm_struct *mm);
void tlbi_local_set_ttbr0(struct mm_struct *mm);

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
