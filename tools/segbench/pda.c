// SPDX-License-Identifier: GPL-2.0
/*
 * The two kernel mechanisms under study that user space must set up:
 * the PDA segment (real, or emulated where the kernel lacks it) and the
 * getcpu_cache(2) registration.
 *
 * PDA ABI: GDT entry 29, selector 0xeb, base = cpu << 6, so that
 * "movl %fs:table, %eax" reads table[cpu * 16] when table[i * 16] == i.
 * The i386 build uses %fs (i386 glibc's thread pointer is %gs); the
 * x86-64 build uses %gs (x86-64 glibc's is %fs, and glibc leaves %gs
 * alone), where a selector load also takes the base from the descriptor,
 * 32 bits of it, so "movl %gs:table" is the same one-instruction read.
 *
 * Without the GDT entry we build the same descriptor (flat DPL-3 32-bit
 * read/write data, 4 GiB limit, base cpu << 6) ourselves: with
 * set_thread_area() where it works (always on i386; x86-64 kernels may
 * refuse it to 64-bit tasks), else with modify_ldt(). A TLS descriptor
 * belongs to the thread, not the CPU, so it is rewritten whenever the
 * thread is pinned elsewhere; the LDT belongs to the process, so it gets
 * one entry per CPU and a thread pinned to CPU n loads entry n's
 * selector. Either way the emulation is only right while the thread stays
 * pinned. Rows that use it are labelled emulated.
 *
 * Every candidate is loaded and read through under sb_trap() first: a
 * hypervisor may refuse a descriptor the kernel handed out.
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
#define __NR_getcpu_cache 463		/* x86 and ARM, 6.12 + this series */
#endif
#define SB_GETCPU_CACHE_GET 0
#define SB_GETCPU_CACHE_SET 1

struct sb_slot sb_pda_table[SB_MAX_CPUS];
volatile int32_t *sb_gcc_ptr;

static int pda_state = -1;
static unsigned int pda_sel;
static const char *pda_how = "";

unsigned int sb_pda_selector(void)
{
	return pda_sel;
}

int sb_pda_state(void)
{
	return pda_state;
}

const char *sb_pda_emulation(void)
{
	return pda_how;
}

static void fill_table(void)
{
	int i;

	for (i = 0; i < SB_MAX_CPUS; i++)
		sb_pda_table[i].v[0] = i;
}

#ifdef SB_X86
#ifdef __i386__
#define PDA_REG SB_FS
#else
#define PDA_REG SB_GS
#endif

enum { EMU_NONE, EMU_TLS, EMU_LDT };
static int emu;
static int pda_entry = -1;	/* TLS slot of the emulation, once allocated */
static volatile unsigned char ldt_written[SB_MAX_CPUS];

static void load_pda(unsigned int sel)
{
	asm volatile("mov %0, %%" SB_PDA_REG : : "r" (sel) : "memory");
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

/* Under sb_trap(): lar and verr cannot fault, and guarding costs nothing. */
static volatile int real_ok;

static void probe_real(void *p)
{
	(void)p;
	/* Present (P), DPL 3, code/data (S), data (not code), readable. */
	real_ok = (lar(PDA_SELECTOR) & 0xf800) == 0xf000 &&
		  verr(PDA_SELECTOR);
}

static void pda_desc(struct user_desc *d, int entry, int cpu)
{
	memset(d, 0, sizeof(*d));
	d->entry_number = entry;
	d->base_addr = (unsigned int)cpu << SB_SLOT_SHIFT;
	d->limit = 0xfffff;
	d->seg_32bit = 1;
	d->limit_in_pages = 1;
	d->useable = 1;
}

static int set_tls(int cpu)
{
	struct user_desc d;

	pda_desc(&d, pda_entry, cpu);
	if (syscall(SYS_set_thread_area, &d))
		return -1;
	pda_entry = d.entry_number;
	pda_sel = d.entry_number * 8 + 3;
	return 0;
}

static int ldt_sel(int cpu)
{
	return (SB_LDT_PDA + cpu) * 8 + 4 + 3;	/* TI = LDT, RPL 3 */
}

static int set_ldt(int cpu)
{
	struct user_desc d;

	if (cpu < 0 || cpu >= SB_MAX_CPUS) {
		errno = ERANGE;
		return -1;
	}
	if (!ldt_written[cpu]) {
		pda_desc(&d, SB_LDT_PDA + cpu, cpu);
		/* func 0x11: write an entry, in the modern format. */
		if (syscall(SYS_modify_ldt, 0x11, &d, sizeof(d)))
			return -1;
		ldt_written[cpu] = 1;
	}
	pda_sel = ldt_sel(cpu);
	return 0;
}

/*
 * Load @pda_sel into the PDA register and read and write the table through
 * it, under sb_trap(). 0, or a reason in @why.
 */
static int try_sel(const char *origin, char *why, size_t len)
{
	int sig = sb_trap_seg(PDA_REG, pda_sel,
			      (uintptr_t)&sb_pda_table[0].v[0],
			      SB_PROBE_WRITE);

	if (!sig)
		return 0;
	if (!sb_trap_seg(PDA_REG, pda_sel, 0, SB_PROBE_LOAD))
		snprintf(why, len, "%s succeeded but an access through "
			 "selector %#x in %%" SB_PDA_REG " raises %s",
			 origin, pda_sel, sb_sig_name(sig));
	else
		snprintf(why, len, "%s succeeded but loading selector %#x "
			 "into %%" SB_PDA_REG " raises %s", origin, pda_sel,
			 sb_sig_name(sig));
	return -1;
}

int sb_pda_init(char *why)
{
	unsigned long hw2 = getauxval(AT_HWCAP2);
	char tls_why[SB_REASON_LEN], ldt_why[SB_REASON_LEN];
	int cpus[SB_MAX_CPUS], n, i, cpu, sig;

	fill_table();
	real_ok = 0;
	sig = sb_trap(probe_real, NULL);
	if (!sig && real_ok) {
		pda_sel = PDA_SELECTOR;
		if (try_sel("lar and verr", why, SB_REASON_LEN))
			return pda_state = -1;
		load_pda(pda_sel);
		emu = EMU_NONE;
		if (!(hw2 & SB_HWCAP2_PDA))
			snprintf(why, SB_REASON_LEN,
				 "selector 0xeb usable but AT_HWCAP2 bit not set");
		return pda_state = 0;
	}
	cpu = sched_getcpu();
	if (cpu < 0)
		cpu = 0;

	if (set_tls(cpu))
		snprintf(tls_why, sizeof(tls_why), "set_thread_area: %s",
			 strerror(errno));
	else if (!try_sel("set_thread_area", tls_why, sizeof(tls_why))) {
		emu = EMU_TLS;
		pda_how = "%" SB_PDA_REG " on a set_thread_area descriptor, "
			  "rebuilt per pinned thread";
		snprintf(why, SB_REASON_LEN, "set_thread_area selector %#x%s",
			 pda_sel, (hw2 & SB_HWCAP2_PDA) ?
			 ", but AT_HWCAP2 claims PDA" : ", no GDT entry 0xeb");
		load_pda(pda_sel);
		return pda_state = 1;
	}

	/* One entry per CPU this process may run on, written now. */
	n = sb_online_cpus(cpus, SB_MAX_CPUS);
	for (i = 0; i < n; i++)
		if (cpus[i] != cpu)
			set_ldt(cpus[i]);
	if (set_ldt(cpu))
		snprintf(ldt_why, sizeof(ldt_why), "modify_ldt: %s%s",
			 strerror(errno), errno == ENOSYS ?
			 " (CONFIG_MODIFY_LDT_SYSCALL off)" : "");
	else if (!try_sel("modify_ldt", ldt_why, sizeof(ldt_why))) {
		emu = EMU_LDT;
		pda_how = "%" SB_PDA_REG " on one modify_ldt descriptor per "
			  "CPU, chosen per pinned thread";
		snprintf(why, SB_REASON_LEN, "modify_ldt selector %#x "
			 "(entry %d + cpu)%s", pda_sel, SB_LDT_PDA,
			 (hw2 & SB_HWCAP2_PDA) ?
			 ", but AT_HWCAP2 claims PDA" : ", no GDT entry 0xeb");
		load_pda(pda_sel);
		return pda_state = 1;
	}
	/* Both reasons, as much of them as fits. */
	snprintf(why, SB_REASON_LEN, "no PDA entry 0xeb; ");
	strncat(why, tls_why, SB_REASON_LEN - 1 - strlen(why));
	strncat(why, "; ", SB_REASON_LEN - 1 - strlen(why));
	strncat(why, ldt_why, SB_REASON_LEN - 1 - strlen(why));
	return pda_state = -1;
}

int sb_pda_pinned(int cpu)
{
	/*
	 * Real PDA: nothing to do, and nothing must be done. The selector
	 * was loaded once and threads inherit it; that the kernel refreshes
	 * the hidden base after a migration (i386: on every return to user;
	 * x86-64: in __switch_to) is exactly what --check verifies, so
	 * reloading the register here would hide a kernel bug.
	 *
	 * Emulation on x86-64 with FSGSBASE: the kernel saves this thread's
	 * %gs base on a context switch and writes it back after reloading
	 * the selector. For a descriptor of this thread (TLS) or chosen by
	 * this thread's pin (LDT) that is the base the descriptor holds, so
	 * the write-back changes nothing.
	 */
	if (pda_state == 0)
		return 0;
	if (pda_state < 0 || cpu < 0)
		return -1;
	if (emu == EMU_TLS ? set_tls(cpu) : set_ldt(cpu))
		return -1;
	load_pda(pda_sel);
	return 0;
}
#else
int sb_pda_init(char *why)
{
	fill_table();
	snprintf(why, SB_REASON_LEN, "the PDA segment is an x86 ABI");
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
