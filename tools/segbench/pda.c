// SPDX-License-Identifier: GPL-2.0
/*
 * The two kernel mechanisms under study that user space must set up:
 * the PDA segment (real, or emulated where the kernel lacks it) and the
 * getcpu_cache(2) registration.
 *
 * PDA ABI: GDT entry 29, selector 0xeb, base = cpu << 6, so that
 * "movl %fs:table, %eax" reads table[cpu * 16] when table[i * 16] == i.
 * Without it we build the same descriptor with set_thread_area(). A TLS
 * descriptor belongs to the thread, not the CPU, so the emulation is only
 * right while the thread stays pinned and must be rebuilt whenever the
 * thread is pinned elsewhere. Rows that use it are labelled emulated.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include "cpuread.h"
#ifdef SB_X86
#include <asm/ldt.h>
#endif

#define PDA_SELECTOR	0xeb		/* GDT entry 29, RPL 3 */
#define SB_HWCAP2_PDA	(1ul << 2)	/* AT_HWCAP2 bit; the one place to change */

#ifndef __NR_getcpu_cache
#define __NR_getcpu_cache 463		/* i386 and ARM, 6.12 + this series */
#endif
#define SB_GETCPU_CACHE_GET 0
#define SB_GETCPU_CACHE_SET 1

struct sb_slot sb_pda_table[SB_MAX_CPUS];
volatile int32_t *sb_gcc_ptr;

static int pda_state = -1;
static unsigned int pda_sel;

unsigned int sb_pda_selector(void)
{
	return pda_sel;
}

int sb_pda_state(void)
{
	return pda_state;
}

static void fill_table(void)
{
	int i;

	for (i = 0; i < SB_MAX_CPUS; i++)
		sb_pda_table[i].v[0] = i;
}

#ifdef __i386__
static int pda_entry = -1;	/* TLS slot of the emulation, once allocated */

static void load_fs(unsigned int sel)
{
	asm volatile("mov %0, %%fs" : : "r" (sel) : "memory");
}

/* Access rights of a selector, or 0 if lar refuses it. */
static unsigned int lar(unsigned int sel)
{
	unsigned int ar = 0, ok = 0;

	asm volatile("lar %2, %0\n\t"
		     "setz %b1"
		     : "+r" (ar), "+q" (ok)
		     : "r" (sel)
		     : "cc");
	return (ok & 1) ? ar : 0;
}

static int verr(unsigned int sel)
{
	unsigned int ok = 0;

	asm volatile("verr %w1\n\t"
		     "setz %b0"
		     : "+q" (ok)
		     : "r" (sel)
		     : "cc");
	return ok & 1;
}

static int set_tls(int cpu)
{
	struct user_desc d = {
		.entry_number = pda_entry,
		.base_addr = (unsigned int)cpu << SB_SLOT_SHIFT,
		.limit = 0xfffff,
		.seg_32bit = 1,
		.limit_in_pages = 1,
		.useable = 1,
	};

	if (syscall(SYS_set_thread_area, &d))
		return -1;
	pda_entry = d.entry_number;
	pda_sel = d.entry_number * 8 + 3;
	load_fs(pda_sel);
	return 0;
}

int sb_pda_init(char *why)
{
	unsigned long hw2 = getauxval(AT_HWCAP2);
	unsigned int ar = lar(PDA_SELECTOR);
	int cpu;

	fill_table();
	/* Present (P), DPL 3, code/data (S), data (not code), readable. */
	if ((ar & 0xf800) == 0xf000 && verr(PDA_SELECTOR)) {
		pda_sel = PDA_SELECTOR;
		load_fs(pda_sel);
		pda_state = 0;
		if (!(hw2 & SB_HWCAP2_PDA))
			snprintf(why, SB_REASON_LEN,
				 "selector 0xeb usable but AT_HWCAP2 bit not set");
		return 0;
	}
	cpu = sched_getcpu();
	if (set_tls(cpu < 0 ? 0 : cpu)) {
		snprintf(why, SB_REASON_LEN,
			 "no PDA entry 0xeb and set_thread_area: %s",
			 strerror(errno));
		return pda_state = -1;
	}
	snprintf(why, SB_REASON_LEN, "set_thread_area selector %#x%s",
		 pda_sel, (hw2 & SB_HWCAP2_PDA) ?
		 ", but AT_HWCAP2 claims PDA" : ", no GDT entry 0xeb");
	return pda_state = 1;
}

int sb_pda_pinned(int cpu)
{
	/*
	 * Real PDA: nothing to do, and nothing must be done. %fs was loaded
	 * once and threads inherit it; that the kernel refreshes the hidden
	 * base on every return to user after a migration is exactly what
	 * --check verifies, so reloading %fs here would hide a kernel bug.
	 */
	if (pda_state == 0)
		return 0;
	if (pda_state == 1 && cpu >= 0)
		return set_tls(cpu);
	return -1;
}
#else
int sb_pda_init(char *why)
{
	fill_table();
	snprintf(why, SB_REASON_LEN, "the PDA segment is an i386 ABI%s",
#ifdef __x86_64__
		 " (x86-64 %fs holds glibc TLS)"
#else
		 ""
#endif
		 );
	return pda_state = -1;
}

int sb_pda_pinned(int cpu)
{
	(void)cpu;
	return -1;
}
#endif

/*
 * getcpu_cache: 463 is getcpu_cache only on 6.12 kernels with this
 * series; mainline 6.13 gave 463 to setxattrat, so never issue it on a
 * newer kernel. Older kernels have nothing at 463 and answer ENOSYS.
 */
static __thread volatile int32_t gcc_word = -1;

int sb_gcc_register(char *why)
{
	volatile int32_t *p = &gcc_word;
	int major, minor;

#ifdef __x86_64__
	snprintf(why, SB_REASON_LEN, "getcpu_cache is wired for i386 and ARM");
	return -1;
#endif
	if (sb_kernel_version(&major, &minor) ||
	    major > 6 || (major == 6 && minor >= 13)) {
		snprintf(why, SB_REASON_LEN,
			 "kernel %d.%d >= 6.13: syscall 463 is not getcpu_cache",
			 major, minor);
		return -1;
	}
	if (syscall(__NR_getcpu_cache, SB_GETCPU_CACHE_SET, &p, 0)) {
		snprintf(why, SB_REASON_LEN, "getcpu_cache SET: %s",
			 errno == ENOSYS ? "ENOSYS (not in this kernel)" :
			 strerror(errno));
		return -1;
	}
	sb_gcc_ptr = &gcc_word;
	if (rd_gcc() < 0) {
		snprintf(why, SB_REASON_LEN,
			 "registered, but the kernel did not write the word");
		return -1;
	}
	return 0;
}
