/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The calls of the flush hooks (CONFIG_ARM64_TLBI_LOCAL) into
 * tlbi_local.c.
 *
 * A hooked flush is often a leaf function without the option.  Were its
 * hook a C call, GCC would give it a frame and move the values it keeps
 * across the call into callee-saved registers, on every path, off
 * included.  So the hooks call these thunks from an asm statement
 * (tlbi_local.h) that saves the frame pointer and the link register, and
 * each thunk saves every other register the procedure call standard lets
 * a C function clobber but x0.  To GCC the call clobbers x0, the flags
 * and memory.  The kernel does not use the FP/SIMD registers in C.
 */

#include <linux/export.h>
#include <linux/linkage.h>

	.macro	tlbi_local_thunk, func
SYM_FUNC_START(\func\()_thunk)
	stp	x29, x30, [sp, #-160]!
	mov	x29, sp
	stp	x1, x2, [sp, #16]
	stp	x3, x4, [sp, #32]
	stp	x5, x6, [sp, #48]
	stp	x7, x8, [sp, #64]
	stp	x9, x10, [sp, #80]
	stp	x11, x12, [sp, #96]
	stp	x13, x14, [sp, #112]
	stp	x15, x16, [sp, #128]
	stp	x17, x18, [sp, #144]
	bl	\func
	ldp	x1, x2, [sp, #16]
	ldp	x3, x4, [sp, #32]
	ldp	x5, x6, [sp, #48]
	ldp	x7, x8, [sp, #64]
	ldp	x9, x10, [sp, #80]
	ldp	x11, x12, [sp, #96]
	ldp	x13, x14, [sp, #112]
	ldp	x15, x16, [sp, #128]
	ldp	x17, x18, [sp, #144]
	ldp	x29, x30, [sp], #160
	ret
SYM_FUNC_END(\func\()_thunk)
	.endm

/* Module code reaches them through the inline flushes. */
tlbi_local_thunk __tlbi_local_flush_mm
EXPORT_SYMBOL_GPL(__tlbi_local_flush_mm_thunk)
tlbi_local_thunk __tlbi_local_flush_page_nosync
EXPORT_SYMBOL_GPL(__tlbi_local_flush_page_nosync_thunk)
tlbi_local_thunk __tlbi_local_flush_range_nosync
EXPORT_SYMBOL_GPL(__tlbi_local_flush_range_nosync_thunk)
