/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _ASM_X86_PDA_H
#define _ASM_X86_PDA_H

#include <linux/cpufeature.h>

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

/*
 * Whether this kernel provides the segment.  Not under Xen PV (64-bit
 * only): its secondary CPUs come up through cpu_bringup(), which calls
 * cpu_init() but not cpu_init_exception_handling(), so only the boot CPU
 * would get the descriptor.  There entry 29 stays empty on every CPU and
 * AT_HWCAP2 does not announce it.
 */
static inline bool pda_user_seg_provided(void)
{
	return IS_ENABLED(CONFIG_X86_PDA_USER_SEG) &&
	       !cpu_feature_enabled(X86_FEATURE_XENPV);
}

#ifdef CONFIG_X86_PDA_USER_SEG
void pda_setup_user_seg(unsigned int cpu);
#else
static inline void pda_setup_user_seg(unsigned int cpu) { }
#endif

#endif /* _ASM_X86_PDA_H */
