/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Leaf TLB invalidation without the broadcast for an address space live
 * on the flushing CPU alone (CONFIG_ARM64_TLBI_LOCAL); the rules are in
 * arch/arm64/mm/tlbi_local.c.
 */
#ifndef __ASM_TLBI_LOCAL_H
#define __ASM_TLBI_LOCAL_H

#include <linux/jump_label.h>
#include <linux/types.h>

struct mm_struct;

/* Called when tlbi_local_enabled(): never without the option. */
void tlbi_local_flush_page(struct mm_struct *mm, unsigned long uaddr,
			   bool sync);
void tlbi_local_flush_range(struct mm_struct *mm, unsigned long start,
			    unsigned long end, unsigned long stride,
			    int tlb_level);

#ifdef CONFIG_ARM64_TLBI_LOCAL
DECLARE_STATIC_KEY_FALSE(tlbi_local_key);

/* tlbi_local=on was given and the system does not use CnP. */
static __always_inline bool tlbi_local_enabled(void)
{
	return static_branch_unlikely(&tlbi_local_key);
}

void tlbi_local_count_broadcast(void);
void tlbi_local_switch_mm(struct mm_struct *mm);
void tlbi_local_switch_to_reserved(void);
#else
static __always_inline bool tlbi_local_enabled(void)
{
	return false;
}

static inline void tlbi_local_count_broadcast(void)
{
}

static inline void tlbi_local_switch_mm(struct mm_struct *mm)
{
}

static inline void tlbi_local_switch_to_reserved(void)
{
}
#endif

#endif /* __ASM_TLBI_LOCAL_H */
