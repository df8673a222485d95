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

/*
 * The register the access rows (mem.*, incform.*) use: %fs in the i386
 * build (glibc's thread pointer is %gs), %gs in the x86-64 build (it is
 * %fs there).
 */
#ifdef __i386__
#define SB_ACC_REG	SB_FS
#define SB_ACC_NAME	"fs"
#else
#define SB_ACC_REG	SB_GS
#define SB_ACC_NAME	"gs"
#endif

struct user_desc;
/*
 * A flat DPL-3 32-bit read/write data descriptor with a 4 GiB limit and
 * base @base, the shape of the PDA's and of every descriptor segbench
 * builds; the caller sets entry_number.
 */
void sb_flat_desc(struct user_desc *d, unsigned long base);

/*
 * Load @sel into the access register for a timed loop; returns the
 * selector to give back to sb_seg_leave(). x86-64 only: a non-zero
 * @msr_base is then written with arch_prctl(ARCH_SET_GS) (the base MSR,
 * not a descriptor; pass @sel 0). i386 ignores @msr_base.
 */
unsigned int sb_seg_enter(unsigned int sel, unsigned long msr_base);
void sb_seg_leave(unsigned int save, unsigned long msr_base);
#ifdef __x86_64__
/*
 * 0 if a %gs base of @base set by arch_prctl() works: set it and read
 * at offset @off under sb_trap(), which puts %gs and its base back.
 * -1 with the reason in @why if not.
 */
int sb_gs_base_usable(unsigned long base, unsigned long off, char *why);
#endif

#endif /* SB_SEGS_H */
