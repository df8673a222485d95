/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
#ifndef _UAPI_ASM_X86_PDA_H
#define _UAPI_ASM_X86_PDA_H

/*
 * The user per-CPU segment of 32-bit x86 (CONFIG_X86_PDA_USER_SEG).
 *
 * Selector PDA_USER_SELECTOR names a flat read/write data segment whose
 * base is the current CPU's number shifted left by PDA_USER_SHIFT.  With
 * it in %fs, "movl %fs:table, %eax" reads slot <cpu> of a table of
 * PDA_USER_SLOT_SIZE-byte slots, and "addl $1, %fs:counters" bumps this
 * CPU's slot.  AT_HWCAP2 has HWCAP2_PDA_USER_SEG set when the kernel
 * provides it.
 *
 * Use it through %fs or %gs only: the SYSEXIT return path resets %ds and
 * %es to __USER_DS.  "One instruction" means one user instruction: an
 * instruction the kernel emulates (UMIP) may complete on another CPU.
 */
#define PDA_USER_GDT_ENTRY	29
#define PDA_USER_SELECTOR	(PDA_USER_GDT_ENTRY * 8 + 3)	/* 0xeb */
#define PDA_USER_SHIFT		6
#define PDA_USER_SLOT_SIZE	64				/* 1 << PDA_USER_SHIFT */

#endif /* _UAPI_ASM_X86_PDA_H */
