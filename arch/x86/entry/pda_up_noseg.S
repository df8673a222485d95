/* SPDX-License-Identifier: GPL-2.0 */
/*
 * %fs at 32-bit kernel entry and exit with CONFIG_X86_PDA_UP_NOSEG.
 *
 * A !SMP kernel addresses no memory through %fs, so the user's %fs stays
 * loaded while the kernel runs.  pt_regs->fs is still saved on entry and
 * stays the authoritative user value: ptrace, sigreturn and vm86 change
 * it there.  The exit compares it with the live selector and loads %fs
 * only if they differ.  A descriptor that changed under an unchanged
 * selector is refreshed where it changes (tls.c, ldt.c, __switch_to()).
 * The user per-CPU segment (GDT entry 29, <asm/pda.h>) needs no reload:
 * a UP kernel writes it once, at boot.
 *
 * Included by entry_32.S only, like tdxcall.S: macros, no code of its own.
 */

/* After "pushl %fs" in SAVE_ALL: no load, only the espfix unwind. */
.macro PDA_UP_NOSEG_ENTRY unwind_espfix=0
.if \unwind_espfix > 0
	pushl	%eax
	UNWIND_ESPFIX_STACK
	popl	%eax
.endif
.endm

/*
 * With %esp pointing at pt_regs.  \scratch is clobbered; \regno is its
 * number in the x86 encoding (eax 0 ... edi 7) for the fixup, which turns
 * an invalid selector into the null selector as the mainline "popl %fs"
 * fixup does.  The compare is 16 bits wide because "pushl %fs" may leave
 * the upper half of the slot undefined.
 */
.macro PDA_UP_NOSEG_EXIT scratch:req scratch16:req regno:req
	movl	%fs, \scratch
	cmpw	\scratch16, PT_FS(%esp)
	je	.Lfs_done_\@
	movl	PT_FS(%esp), \scratch
.Lfs_load_\@:
	movl	\scratch, %fs
	_ASM_EXTABLE_TYPE(.Lfs_load_\@, .Lfs_load_\@, EX_TYPE_ZERO_REG | EX_DATA_REG(\regno))
.Lfs_done_\@:
.endm
