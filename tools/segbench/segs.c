// SPDX-License-Identifier: GPL-2.0
/*
 * Selector set-up for the segment benchmarks (x86, 32- and 64-bit).
 *
 * The TLS and LDT descriptors get a non-zero base (a static buffer) so a
 * load through them goes through the base adder for real; the flat user
 * data segment has base 0. Both are plain 32-bit read/write data.
 *
 * Also what the access rows (mem.*, incform.*) share: the descriptor
 * shape, borrowing the access register for a timed loop, and the x86-64
 * base MSR probe.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <asm/ldt.h>
#include <sys/syscall.h>
#include "segs.h"
#ifdef __x86_64__
#include <asm/prctl.h>
#endif

struct sb_seg sb_segs[SEL_NR];

static struct sb_slot uds_word, tls_buf[4], ldt_buf[4];

void sb_flat_desc(struct user_desc *d, unsigned long base)
{
	memset(d, 0, sizeof(*d));
	d->base_addr = (unsigned int)base;
	d->limit = 0xfffff;
	d->seg_32bit = 1;
	d->limit_in_pages = 1;
	d->useable = 1;
}

void sb_segs_init(void)
{
	static int done;
	struct sb_seg *s = sb_segs;
	struct user_desc d;
	unsigned int uds;

	if (done)
		return;
	done = 1;

	s[SEL_NULL].name = "null";
	s[SEL_NULL].ok = 1;

	/* %ss always holds the flat user data selector, in both modes. */
	asm volatile("mov %%ss, %0" : "=r" (uds));
	s[SEL_UDS].name = "user_ds";
	s[SEL_UDS].sel = uds & 0xffff;
	s[SEL_UDS].off = (uintptr_t)&uds_word;
	s[SEL_UDS].ok = 1;

	s[SEL_TLS].name = "tls";
	sb_flat_desc(&d, (uintptr_t)tls_buf);
	d.entry_number = -1;
	if (syscall(SYS_set_thread_area, &d) == 0) {
		s[SEL_TLS].sel = d.entry_number * 8 + 3;
		s[SEL_TLS].base = (uintptr_t)tls_buf;
		s[SEL_TLS].ok = 1;
	} else {
		snprintf(s[SEL_TLS].why, SB_REASON_LEN,
			 "set_thread_area: %s", strerror(errno));
	}

	s[SEL_LDT].name = "ldt";
	sb_flat_desc(&d, (uintptr_t)ldt_buf);
	d.entry_number = SB_LDT_SEGS;
	/* func 0x11: write an entry, in the modern format. */
	if (syscall(SYS_modify_ldt, 0x11, &d, sizeof(d)) == 0) {
		/* TI = LDT, RPL 3 */
		s[SEL_LDT].sel = SB_LDT_SEGS * 8 + 4 + 3;
		s[SEL_LDT].base = (uintptr_t)ldt_buf;
		s[SEL_LDT].ok = 1;
	} else {
		snprintf(s[SEL_LDT].why, SB_REASON_LEN, "modify_ldt: %s%s",
			 strerror(errno), errno == ENOSYS ?
			 " (CONFIG_MODIFY_LDT_SYSCALL off)" : "");
	}
}

/*
 * How each selector came to be, for the reason a probe of it failed:
 * "modify_ldt succeeded but loading selector 0x7 into %gs raises SIGSEGV".
 */
static const char *const origin[SEL_NR] = {
	[SEL_NULL] = "",
	[SEL_UDS] = "",
	[SEL_TLS] = "set_thread_area succeeded but ",
	[SEL_LDT] = "modify_ldt succeeded but ",
};
static const char *const label[SEL_NR] = {
	[SEL_NULL] = "the null selector",
	[SEL_UDS] = "__USER_DS selector",
	[SEL_TLS] = "selector",
	[SEL_LDT] = "selector",
};

/* Probe results: 0 not tried, 1 works, -1 faults (reason kept). */
static signed char tried[SEL_NR][2][2];
static char tried_why[SEL_NR][2][2][SB_REASON_LEN];

static int probe(int s, int reg, int use, char *why)
{
	struct sb_seg *g = &sb_segs[s];
	const char *r = sb_reg_name[reg];
	int sig;

	if (tried[s][reg][use]) {
		snprintf(why, SB_REASON_LEN, "%s", tried_why[s][reg][use]);
		return tried[s][reg][use] > 0 ? 0 : -1;
	}
	sig = sb_trap_seg(reg, g->sel, g->off,
			  use ? SB_PROBE_WRITE : SB_PROBE_LOAD);
	if (sig < 0)
		snprintf(tried_why[s][reg][use], SB_REASON_LEN,
			 "%%%s cannot be probed in this build", r);
	else if (sig > 0 && use)
		snprintf(tried_why[s][reg][use], SB_REASON_LEN,
			 "%san access through %s %#x in %%%s raises %s",
			 origin[s], label[s], g->sel, r, sb_sig_name(sig));
	else if (sig > 0)
		snprintf(tried_why[s][reg][use], SB_REASON_LEN,
			 "%sloading %s %#x into %%%s raises %s",
			 origin[s], label[s], g->sel, r, sb_sig_name(sig));
	tried[s][reg][use] = sig ? -1 : 1;
	snprintf(why, SB_REASON_LEN, "%s", tried_why[s][reg][use]);
	return sig ? -1 : 0;
}

int sb_seg_usable(int s, int reg, int use, char *why)
{
	sb_segs_init();
	if (!sb_segs[s].ok) {
		snprintf(why, SB_REASON_LEN, "%s", sb_segs[s].why);
		return -1;
	}
	if (use && s == SEL_NULL) {
		snprintf(why, SB_REASON_LEN, "null selector cannot address");
		return -1;
	}
	if (reg == SB_NOREG)
		return 0;
	/* The load alone first, so the reason says which step faults. */
	if (probe(s, reg, 0, why))
		return -1;
	return use ? probe(s, reg, 1, why) : 0;
}

unsigned int sb_seg_enter(unsigned int sel, unsigned long msr_base)
{
	unsigned int save;

	asm volatile("mov %%" SB_ACC_NAME ", %0\n\t"
		     "mov %1, %%" SB_ACC_NAME
		     : "=&r" (save) : "r" (sel) : "memory");
#ifdef __x86_64__
	if (msr_base)
		syscall(SYS_arch_prctl, ARCH_SET_GS, msr_base);
#else
	(void)msr_base;
#endif
	return save;
}

void sb_seg_leave(unsigned int save, unsigned long msr_base)
{
#ifdef __x86_64__
	/*
	 * The base first: ARCH_SET_GS also nulls the selector, and the one
	 * saved may be the PDA selector, whose base the reload restores.
	 */
	if (msr_base)
		syscall(SYS_arch_prctl, ARCH_SET_GS, 0ul);
#else
	(void)msr_base;
#endif
	asm volatile("mov %0, %%" SB_ACC_NAME : : "r" (save) : "memory");
}

#ifdef __x86_64__
static int set_gs_err;
static unsigned long gs_probe_off;

static void try_gs_base(void *p)
{
	unsigned long v;

	set_gs_err = 0;
	if (syscall(SYS_arch_prctl, ARCH_SET_GS, (unsigned long)p))
		set_gs_err = errno;
	else
		asm volatile("mov %%gs:(%1), %0" : "=r" (v) : "r" (gs_probe_off)
			     : "memory");
}

int sb_gs_base_usable(unsigned long base, unsigned long off, char *why)
{
	int sig;

	gs_probe_off = off;
	sig = sb_trap(try_gs_base, (void *)base);
	if (set_gs_err) {
		snprintf(why, SB_REASON_LEN, "arch_prctl(ARCH_SET_GS): %s",
			 strerror(set_gs_err));
		return -1;
	}
	if (sig) {
		snprintf(why, SB_REASON_LEN, "a read through a %%gs base "
			 "set by arch_prctl raises %s", sb_sig_name(sig));
		return -1;
	}
	return 0;
}
#endif
