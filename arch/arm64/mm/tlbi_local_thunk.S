/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The calls of the flush hooks (CONFIG_ARM64_TLBI_LOCAL) into
 * tlbi_local.c.
 *
 * A hooked flush is often a function that makes no call without the
 * option.  Were its hook a C call, GCC would give it a frame and move the
 * values it keeps across the call into callee-saved registers, on every
 * path, off included.  So the hooks call these thunks from an asm
 * statement (tlbi_local.h) that saves x30 and pushes the arguments, and
 * each thunk saves every other register the procedure call standard lets
 * a C function clobber but x16 and x17, and loads the arguments from the
 * hook's 64 bytes.  To GCC the call clobbers x16, x17, the flags and
 * memory, and binds no register.  x16 and x17 are left to the asm's
 * clobbers because a range veneer, or a module's PLT, may use them
 * before the thunk runs.  The C functions are built with
 * -mgeneral-regs-only, so no FP/SIMD register needs saving.
 */

#include <linux/export.h>
#include <linux/linkage.h>

	.macro	tlbi_local_thunk, func, nargs
SYM_FUNC_START(\func\()_thunk)
	stp	x29, x30, [sp, #-160]!
	mov	x29, sp
	stp	x0, x1, [sp, #16]
	stp	x2, x3, [sp, #32]
	stp	x4, x5, [sp, #48]
	stp	x6, x7, [sp, #64]
	stp	x8, x9, [sp, #80]
	stp	x10, x11, [sp, #96]
	stp	x12, x13, [sp, #112]
	stp	x14, x15, [sp, #128]
	str	x18, [sp, #144]
	/* The arguments, in the 64 bytes the hook pushed (tlbi_local.h). */
	.if	\nargs == 1
	ldr	x0, [sp, #160 + 16]
	.elseif	\nargs == 2
	ldp	x0, x1, [sp, #160 + 16]
	.elseif	\nargs == 6
	ldp	x0, x1, [sp, #160 + 16]
	ldp	x2, x3, [sp, #160 + 32]
	ldp	x4, x5, [sp, #160 + 48]
	.else
	.error	"tlbi_local_thunk: 1, 2 or 6 arguments"
	.endif
	bl	\func
	ldp	x0, x1, [sp, #16]
	ldp	x2, x3, [sp, #32]
	ldp	x4, x5, [sp, #48]
	ldp	x6, x7, [sp, #64]
	ldp	x8, x9, [sp, #80]
	ldp	x10, x11, [sp, #96]
	ldp	x12, x13, [sp, #112]
	ldp	x14, x15, [sp, #128]
	ldr	x18, [sp, #144]
	ldp	x29, x30, [sp], #160
	ret
SYM_FUNC_END(\func\()_thunk)
	.endm

/* Module code reaches them through the inline flushes (tlbi_local.h). */
tlbi_local_thunk __tlbi_local_flush_mm, 1
EXPORT_SYMBOL_GPL(__tlbi_local_flush_mm_thunk)
tlbi_local_thunk __tlbi_local_flush_page_nosync, 2
EXPORT_SYMBOL_GPL(__tlbi_local_flush_page_nosync_thunk)
tlbi_local_thunk __tlbi_local_flush_range_nosync, 6
EXPORT_SYMBOL_GPL(__tlbi_local_flush_range_nosync_thunk)
