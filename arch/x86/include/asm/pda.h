/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _ASM_X86_PDA_H
#define _ASM_X86_PDA_H

#include <asm/desc_defs.h>
#include <uapi/asm/pda.h>

#ifdef CONFIG_X86_PDA_USER_SEG
struct desc_struct pda_user_seg_desc(unsigned int cpu);
void pda_setup_user_seg(unsigned int cpu);
#else
static inline void pda_setup_user_seg(unsigned int cpu) { }
#endif

#endif /* _ASM_X86_PDA_H */
