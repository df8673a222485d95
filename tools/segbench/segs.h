/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The selectors the segment benchmarks load: null, the flat user data
 * segment, a GDT TLS descriptor from set_thread_area() and an LDT
 * descriptor from modify_ldt(), each with a scratch word it can address.
 */
#ifndef SB_SEGS_H
#define SB_SEGS_H

#include "segbench.h"

enum sb_sel { SEL_NULL, SEL_UDS, SEL_TLS, SEL_LDT, SEL_NR };

struct sb_seg {
	const char *name;
	unsigned int sel;
	unsigned long off;	/* offset of the scratch word in the segment */
	unsigned long base;
	int ok;
	char why[SB_REASON_LEN];
};

extern struct sb_seg sb_segs[SEL_NR];

/* Build all selectors once; harmless to call again. */
void sb_segs_init(void);
/*
 * 0 if selector @s can be loaded into @reg (enum sb_reg) and, with @use,
 * read and written through; -1 with the reason in @why if not. Tried
 * under sb_trap() the first time: a kernel may hand out a descriptor that
 * the CPU (or hypervisor) then refuses to load. SB_NOREG: only that the
 * selector exists (lsl, lar and verr load nothing).
 */
int sb_seg_usable(int s, int reg, int use, char *why);

#endif /* SB_SEGS_H */
