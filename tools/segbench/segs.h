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
/* 0 if selector @s can be loaded (@use: and used for memory access). */
int sb_seg_usable(int s, int use, char *why);

#endif /* SB_SEGS_H */
