// SPDX-License-Identifier: GPL-2.0
/*
 * Discovery of every way to read the CPU number: which exist on this
 * kernel and CPU, and the state the inline readers in cpuread.h need.
 *
 * A method that is missing is reported with the reason, never faked: the
 * only stand-in is the PDA segment on kernels without it, which is built
 * from a set_thread_area() or modify_ldt() descriptor and always labelled
 * emulated. What a hypervisor may refuse although CPUID or the kernel
 * offers it (lsl, RDPID, the vDSO, sched_getcpu, the PDA selector) is
 * executed once under sb_trap() (trap.c) before it is offered.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/rseq.h>
#include "cpuread.h"

const struct sb_method_info sb_methods[M_NR] = {
	[M_SYSCALL] = { "syscall", "getcpu(2) system call" },
	[M_GLIBC]   = { "glibc", "glibc sched_getcpu()" },
	[M_VDSO]    = { "vdso", "__vdso_getcpu() from the vDSO" },
	[M_RSEQ]    = { "rseq", "rseq cpu_id load via __rseq_offset" },
	[M_LSL]     = { "lsl", "lsl of the CPUNODE GDT entry" },
	[M_RDPID]   = { "rdpid", "RDPID instruction (TSC_AUX)" },
	[M_PDA]     = { "pda", "PDA segment load movl %" SB_PDA_REG ":table" },
	[M_GCC]     = { "getcpu_cache", "getcpu_cache(2) registered word" },
};

long sb_rseq_off;
unsigned int sb_cpunode_sel;
int (*sb_vdso_getcpu)(unsigned int *, unsigned int *, void *);
void *sb_vsyscall;

static int have_rseq, have_lsl, have_rdpid, have_glibc;
static char lsl_why[SB_REASON_LEN], rdpid_why[SB_REASON_LEN];
static char gcc_why[SB_REASON_LEN], pda_why[SB_REASON_LEN];
static char vdso_why[SB_REASON_LEN], glibc_why[SB_REASON_LEN];
static int gcc_state = -1, pda_state = -1;

/* Probes run under sb_trap(); each leaves its answer in probe_ret. */
static volatile int probe_ret;

#ifdef SB_X86
static void cpuid(unsigned int leaf, unsigned int sub, unsigned int r[4])
{
	asm volatile("cpuid"
		     : "=a" (r[0]), "=b" (r[1]), "=c" (r[2]), "=d" (r[3])
		     : "0" (leaf), "2" (sub));
}

/*
 * The CPUNODE entry is 28 (selector 0xe3) on i386 kernels and 15 (0x7b)
 * on x86-64 kernels, where a 32-bit process's 0x7b is not __USER_DS. The
 * user %cs tells the two apart even under a linux32 personality: 0x73 is
 * the i386 kernel's __USER_CS, 0x23 the x86-64 kernel's __USER32_CS.
 */
static unsigned int lsl_sel, lsl_lim;

static void exec_lsl(void *p)
{
	unsigned int lim, ok;

	(void)p;
	asm volatile("lsl %2, %0\n\t"
		     "setz %b1"
		     : "=r" (lim), "=q" (ok)
		     : "r" (lsl_sel), "0" (0u), "1" (0u)
		     : "cc");
	lsl_lim = lim;
	probe_ret = ok & 1;
}

static void probe_lsl(void)
{
	unsigned int cs, lim, sel, ok;
	int sig;

	asm volatile("mov %%cs, %0" : "=r" (cs));
	sel = (cs == 0x73) ? 0xe3 : 0x7b;
	/* lsl cannot fault in user mode; a hypervisor may think otherwise. */
	lsl_sel = sel;
	probe_ret = 0;
	sig = sb_trap(exec_lsl, NULL);
	if (sig) {
		snprintf(lsl_why, sizeof(lsl_why), "lsl raises %s",
			 sb_sig_name(sig));
		return;
	}
	ok = probe_ret;
	lim = lsl_lim;
	if (!(ok & 1)) {
		snprintf(lsl_why, sizeof(lsl_why),
			 "lsl of CPUNODE selector %#x failed (no entry)", sel);
		return;
	}
	/* A CPUNODE limit is node << 12 | cpu, never a 4 GiB flat limit. */
	if (lim >= 0x100000) {
		snprintf(lsl_why, sizeof(lsl_why),
			 "selector %#x is not a CPUNODE entry (limit %#x)",
			 sel, lim);
		return;
	}
	sb_cpunode_sel = sel;
	have_lsl = 1;
}

static void exec_rdpid(void *p)
{
	(void)p;
	probe_ret = rd_rdpid();
}

static void probe_rdpid(void)
{
	unsigned int r[4];
	int sig;

	cpuid(0, 0, r);
	if (r[0] < 7) {
		snprintf(rdpid_why, sizeof(rdpid_why), "no CPUID leaf 7");
		return;
	}
	cpuid(7, 0, r);
	if (!(r[2] & (1u << 22))) {
		snprintf(rdpid_why, sizeof(rdpid_why),
			 "RDPID not supported (CPUID.7.0:ECX[22] clear)");
		return;
	}
	/* Some hypervisors set the CPUID bit and fault the instruction. */
	sig = sb_trap(exec_rdpid, NULL);
	if (sig) {
		snprintf(rdpid_why, sizeof(rdpid_why),
			 "CPUID says RDPID but the instruction raises %s",
			 sb_sig_name(sig));
		return;
	}
	have_rdpid = 1;
}
#else
static void probe_lsl(void)
{
	snprintf(lsl_why, sizeof(lsl_why), "x86 only");
}

static void probe_rdpid(void)
{
	snprintf(rdpid_why, sizeof(rdpid_why), "x86 only");
}
#endif

static void probe_rseq(void)
{
	/*
	 * glibc >= 2.35 registers rseq for every thread and publishes where;
	 * __rseq_size is 0 when registration failed (kernel without rseq, or
	 * glibc.pthread.rseq=0).
	 */
	if (__rseq_size == 0)
		return;
	sb_rseq_off = __rseq_offset;
	have_rseq = rd_rseq() >= 0;
}

static void exec_vdso(void *p)
{
	unsigned int cpu = ~0u;

	(void)p;
	probe_ret = sb_vdso_getcpu(&cpu, NULL, NULL) ? -1 : (int)cpu;
}

/*
 * The vDSO's getcpu is lsl or RDPID inside: where RDPID faults under a
 * hypervisor, so may it. Then getcpu + xadd falls back to the syscall.
 */
static void probe_vdso(void)
{
	int sig;

	sb_vdso_getcpu = sb_vdso_sym("__vdso_getcpu");
	if (!sb_vdso_getcpu) {
		snprintf(vdso_why, sizeof(vdso_why), "no __vdso_getcpu in vDSO");
		return;
	}
	sig = sb_trap(exec_vdso, NULL);
	if (sig || probe_ret < 0) {
		snprintf(vdso_why, sizeof(vdso_why), "__vdso_getcpu %s%s",
			 sig ? "raises " : "fails",
			 sig ? sb_sig_name(sig) : "");
		sb_vdso_getcpu = NULL;
	}
}

static void exec_glibc(void *p)
{
	(void)p;
	probe_ret = sched_getcpu();
}

static void probe_glibc(void)
{
	int sig = sb_trap(exec_glibc, NULL);

	if (sig)
		snprintf(glibc_why, sizeof(glibc_why), "sched_getcpu raises %s",
			 sb_sig_name(sig));
	else if (probe_ret < 0)
		snprintf(glibc_why, sizeof(glibc_why), "sched_getcpu fails");
	else
		have_glibc = 1;
}

void sb_methods_init(void)
{
#ifdef __i386__
	sb_vsyscall = (void *)getauxval(AT_SYSINFO);
#endif
	probe_vdso();
	probe_glibc();
	probe_rseq();
	probe_lsl();
	probe_rdpid();
	pda_state = sb_pda_init(pda_why);
	gcc_state = sb_gcc_register(gcc_why);
}

int sb_method_probe(int m, char *why)
{
	switch (m) {
	case M_SYSCALL:
		if (rd_syscall() < 0) {
			snprintf(why, SB_REASON_LEN, "getcpu syscall failed");
			return -1;
		}
		return 0;
	case M_GLIBC:
		if (!have_glibc) {
			snprintf(why, SB_REASON_LEN, "%s", glibc_why);
			return -1;
		}
		return 0;
	case M_VDSO:
		if (!sb_vdso_getcpu) {
			snprintf(why, SB_REASON_LEN, "%s", vdso_why);
			return -1;
		}
		return 0;
	case M_RSEQ:
		if (!have_rseq) {
			snprintf(why, SB_REASON_LEN,
				 "rseq not registered by glibc (__rseq_size 0)");
			return -1;
		}
		return 0;
	case M_LSL:
		if (!have_lsl) {
			snprintf(why, SB_REASON_LEN, "%s", lsl_why);
			return -1;
		}
		return 0;
	case M_RDPID:
		if (!have_rdpid) {
			snprintf(why, SB_REASON_LEN, "%s", rdpid_why);
			return -1;
		}
		return 0;
	case M_PDA:
		snprintf(why, SB_REASON_LEN, "%s", pda_why);
		return pda_state;
	case M_GCC:
		snprintf(why, SB_REASON_LEN, "%s", gcc_why);
		return gcc_state;
	}
	snprintf(why, SB_REASON_LEN, "unknown method");
	return -1;
}

int sb_methods_pinned(int cpu)
{
	if (pda_state >= 0)
		return sb_pda_pinned(cpu);
	return 0;
}

int sb_method_read(int m)
{
	unsigned int cpu = ~0u;

	switch (m) {
	case M_SYSCALL:
		return rd_syscall();
	case M_GLIBC:
		return sched_getcpu();
	case M_VDSO:
		if (sb_vdso_getcpu(&cpu, NULL, NULL))
			return -1;
		return cpu;
	case M_RSEQ:
		return rd_rseq();
	case M_LSL:
		return rd_lsl();
	case M_RDPID:
		return rd_rdpid();
	case M_PDA:
		return rd_pda();
	case M_GCC:
		return rd_gcc();
	}
	return -1;
}
