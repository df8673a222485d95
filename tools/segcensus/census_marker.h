/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The marker a guest program executes to open and close a census window:
 * "nopl DISP(%eax,%eax,1)" (0f 1f 84 00 + disp32), a multi-byte NOP that
 * no compiler or kernel emits with this displacement, and that decodes
 * the same in 32- and 64-bit mode.  DISP carries what the marker means.
 */
#ifndef SEGCENSUS_CENSUS_MARKER_H
#define SEGCENSUS_CENSUS_MARKER_H

#define CENSUS_MAGIC		0x53450000u	/* "SE" in the top half */
#define CENSUS_MAGIC_MASK	0xffff0000u
#define CENSUS_OP_SHIFT		12
#define CENSUS_OP_OPEN32	1	/* open; user code is 32-bit */
#define CENSUS_OP_OPEN64	2	/* open; user code is 64-bit */
#define CENSUS_OP_CLOSE		3
#define CENSUS_LOCAL		0x800u	/* count only the CPU that opened it */
#define CENSUS_ID_MASK		0x7ffu	/* which path: the program's own id */

#define CENSUS_MARKER_LEN	8

#define CENSUS_DISP(op, id)	(CENSUS_MAGIC | (op) << CENSUS_OP_SHIFT | (id))

#ifndef __ASSEMBLER__
/* "memory": a window must not open or close across a compiler-moved access. */
#define CENSUS_MARK(op, id)						\
	do {								\
		asm volatile(".byte 0x0f, 0x1f, 0x84, 0x00\n\t"	\
			     ".long %c0"				\
			     : : "i" (CENSUS_DISP(op, id)) : "memory");	\
	} while (0)
#endif

#endif
