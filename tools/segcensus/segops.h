/* SPDX-License-Identifier: GPL-2.0 */
/*
 * segops: which x86 instructions write a segment register (or look at a
 * descriptor), decoded from their bytes.  Used by the QEMU plugin at
 * translation time and by the host test against the assembler.
 */
#ifndef SEGCENSUS_SEGOPS_H
#define SEGCENSUS_SEGOPS_H

#include <stddef.h>
#include <stdint.h>

enum segop_kind {
	SEGOP_NONE,
	/* selector loads: split into null and non-null when they run */
	SEGOP_MOV_ES, SEGOP_MOV_SS, SEGOP_MOV_DS, SEGOP_MOV_FS, SEGOP_MOV_GS,
	SEGOP_POP_ES, SEGOP_POP_SS, SEGOP_POP_DS, SEGOP_POP_FS, SEGOP_POP_GS,
	SEGOP_LES, SEGOP_LSS, SEGOP_LDS, SEGOP_LFS, SEGOP_LGS,
	/* control transfers that load %cs (and %ss) */
	SEGOP_IRET, SEGOP_LRET, SEGOP_LJMP, SEGOP_LCALL,
	SEGOP_SYSEXIT, SEGOP_SYSRET,
	SEGOP_INT, SEGOP_SYSENTER, SEGOP_SYSCALL,
	/* base writes without a selector */
	SEGOP_SWAPGS, SEGOP_WRFSBASE, SEGOP_WRGSBASE,
	/* descriptor probes, and the LDT register */
	SEGOP_LSL, SEGOP_LAR, SEGOP_VERR, SEGOP_VERW, SEGOP_LLDT,
	SEGOP_NR
};

#define SEGOP_FIRST_LOAD	SEGOP_MOV_ES
#define SEGOP_LAST_LOAD		SEGOP_LGS

struct segop {
	enum segop_kind kind;
	/*
	 * Loads: the memory reads the instruction makes for its own operand
	 * (0 for a register source, 1 for a pop or an m16, 2 for the m16:32
	 * of lds and friends).  A non-null selector makes the CPU read its
	 * descriptor too, so more reads than this mean "non-null".
	 */
	unsigned int operand_reads;
};

/* Decode one instruction; mode64: 64-bit code segment.  0 or -1 (short). */
int segop_decode(const uint8_t *p, size_t len, int mode64, struct segop *op);

static inline int segop_is_load(enum segop_kind k)
{
	return k >= SEGOP_FIRST_LOAD && k <= SEGOP_LAST_LOAD;
}

/* "mov.fs", "iret", ...: the census's names. */
const char *segop_name(enum segop_kind k);

#endif
