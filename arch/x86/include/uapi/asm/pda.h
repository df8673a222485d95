/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
#ifndef _UAPI_ASM_X86_PDA_H
#define _UAPI_ASM_X86_PDA_H

/*
 * The user per-CPU segment of x86 (CONFIG_X86_PDA_USER_SEG), the same on
 * 32-bit and 64-bit kernels.
 *
 * Selector PDA_USER_SELECTOR names a flat read/write data segment whose
 * base is the current CPU's number shifted left by PDA_USER_SHIFT.  A
 * 32-bit program keeps it in %fs, a 64-bit program in %gs (the register
 * glibc leaves free on each).  Then "movl %fs:table, %eax" (or %gs:)
 * reads slot <cpu> of a table of PDA_USER_SLOT_SIZE-byte slots, and
 * "addl $1, %fs:counters" bumps this CPU's slot.  AT_HWCAP2 has
 * HWCAP2_PDA_USER_SEG set when the kernel provides it; a 64-bit kernel
 * running as a Xen PV guest does not.
 *
 * Use it through %fs or %gs only.  A 32-bit kernel does not keep it in
 * %ds or %es: its SYSEXIT return path leaves them __USER_DS.  That rule is
 * the 32-bit kernel's; a 64-bit kernel does not reset them, but 64-bit
 * mode ignores their bases, and the ABI covers %fs and %gs alone.
 * "One instruction" means one user instruction: an instruction the kernel
 * emulates (UMIP) may complete on another CPU.
 */
#define PDA_USER_GDT_ENTRY	29
#define PDA_USER_SELECTOR	(PDA_USER_GDT_ENTRY * 8 + 3)	/* 0xeb */
#define PDA_USER_SHIFT		6
#define PDA_USER_SLOT_SIZE	64				/* 1 << PDA_USER_SHIFT */

#endif /* _UAPI_ASM_X86_PDA_H */
