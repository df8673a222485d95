/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _ASM_X86_PDA_H
#define _ASM_X86_PDA_H

#include <asm/desc_defs.h>
#include <uapi/asm/pda.h>

static inline unsigned long pda_user_seg_base(unsigned int cpu)
{
	return (unsigned long)cpu << PDA_USER_SHIFT;
}

/*
 * The user per-CPU segment: flat, read/write, DPL 3, page granular with a
 * 4 GiB limit so the slot table may live anywhere, based at this CPU's slot.
 */
static inline struct desc_struct pda_user_seg_desc(unsigned int cpu)
{
	struct desc_struct d = GDT_ENTRY_INIT(DESC_DATA32 | DESC_USER,
					      pda_user_seg_base(cpu), 0xfffff);

	return d;
}

#ifdef CONFIG_X86_PDA_USER_SEG
void pda_setup_user_seg(unsigned int cpu);
#else
static inline void pda_setup_user_seg(unsigned int cpu) { }
#endif

#endif /* _ASM_X86_PDA_H */
