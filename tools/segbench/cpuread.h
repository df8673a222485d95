/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ways of reading the current CPU number, as inline asm readers.
 *
 * The same readers serve --check (one read, compared with the CPU we are
 * pinned to) and the cpu.* benchmarks (unrolled in a loop), so what is
 * timed is exactly what is checked. Every reader is asm volatile: the
 * compiler may not merge, hoist or drop the read.
 */
#ifndef SB_CPUREAD_H
#define SB_CPUREAD_H

#include <stdint.h>
#include "segbench.h"

enum sb_method {
	M_SYSCALL,	/* getcpu(2), raw system call */
	M_GLIBC,	/* sched_getcpu(3) */
	M_VDSO,		/* __vdso_getcpu, found by parsing the vDSO */
	M_RSEQ,		/* rseq cpu_id at thread pointer + __rseq_offset */
	M_LSL,		/* lsl of the CPUNODE GDT entry */
	M_RDPID,	/* RDPID: TSC_AUX holds node << 12 | cpu */
	M_PDA,		/* movl %fs:table on the PDA segment (x86-64: %gs) */
	M_GCC,		/* getcpu_cache(2) registered word */
	M_NR
};

struct sb_method_info {
	const char *name;
	const char *desc;
};
extern const struct sb_method_info sb_methods[M_NR];

/* State found by sb_methods_init(); read by the inline readers. */
extern long sb_rseq_off;		/* __rseq_offset, if registered */
extern unsigned int sb_cpunode_sel;	/* 0xe3 on i386 kernels, 0x7b on x86-64 */
extern int (*sb_vdso_getcpu)(unsigned int *, unsigned int *, void *);
extern void *sb_vsyscall;		/* i386 __kernel_vsyscall, or NULL */
extern volatile int32_t *sb_gcc_ptr;	/* registered getcpu_cache word */
extern struct sb_slot sb_pda_table[SB_MAX_CPUS];

void sb_methods_init(void);
/* 0: real, 1: emulated, -1: unavailable (reason in @why) */
int sb_method_probe(int m, char *why);
/* After this thread moved to @cpu: redo per-thread setup. 0 on success. */
int sb_methods_pinned(int cpu);
int sb_method_read(int m);

/*
 * The PDA register: i386 glibc's thread pointer is %gs, so %fs; x86-64
 * glibc's is %fs and it leaves %gs alone, so %gs.
 */
#ifdef __x86_64__
#define SB_PDA_REG "gs"
#else
#define SB_PDA_REG "fs"
#endif

/* pda.c */
int sb_pda_init(char *why);	/* 0 real, 1 emulated, -1 none */
int sb_pda_pinned(int cpu);	/* emulation: rebuild this thread's descriptor */
unsigned int sb_pda_selector(void);
int sb_pda_state(void);		/* as sb_pda_init(), without redoing it */
const char *sb_pda_emulation(void);	/* what the emulation is, for notes */
int sb_gcc_register(char *why);	/* getcpu_cache for the calling thread */

#ifdef __i386__
#define NR_GETCPU 318
static inline int rd_syscall(void)
{
	unsigned int cpu = ~0u;
	int ret;

	if (sb_vsyscall) {
		/* The kernel's own entry sequence, as glibc uses it. */
		asm volatile("call *%[vs]"
			     : "=a" (ret)
			     : "0" (NR_GETCPU), "b" (&cpu), "c" (0), "d" (0),
			       [vs] "r" (sb_vsyscall)
			     : "memory", "cc");
	} else {
		asm volatile("int $0x80"
			     : "=a" (ret)
			     : "0" (NR_GETCPU), "b" (&cpu), "c" (0), "d" (0)
			     : "memory", "cc");
	}
	return ret ? -1 : (int)cpu;
}

static inline int rd_rseq(void)
{
	int cpu;

	/* i386 glibc: %gs base is the thread pointer. */
	asm volatile("movl %%gs:4(%1), %0" : "=r" (cpu) : "r" (sb_rseq_off));
	return cpu;
}

static inline int rd_pda(void)
{
	int cpu;

	asm volatile("movl %%fs:%1, %0" : "=r" (cpu) : "m" (sb_pda_table[0].v[0]));
	return cpu;
}
#elif defined(__x86_64__)
#define NR_GETCPU 309
static inline int rd_syscall(void)
{
	unsigned int cpu = ~0u;
	long ret;

	asm volatile("syscall"
		     : "=a" (ret)
		     : "0" ((long)NR_GETCPU), "D" (&cpu), "S" (0L), "d" (0L)
		     : "rcx", "r11", "memory", "cc");
	return ret ? -1 : (int)cpu;
}

static inline int rd_rseq(void)
{
	int cpu;

	/* x86-64 glibc: %fs base is the thread pointer. */
	asm volatile("movl %%fs:4(%1), %0" : "=r" (cpu) : "r" (sb_rseq_off));
	return cpu;
}

static inline int rd_pda(void)
{
	int cpu;

	/*
	 * The table's address as an absolute disp32 ("i", printed bare by
	 * %c): an "m" operand would be RIP-relative, and %gs:table(%rip)
	 * is not %gs base + table. segbench is static and not PIE
	 * (Makefile), so the address fits. The "m" operand, unused in the
	 * text, tells the compiler the table is read.
	 */
	asm volatile("movl %%gs:%c1, %0"
		     : "=r" (cpu)
		     : "i" (&sb_pda_table[0].v[0]), "m" (sb_pda_table[0].v[0]));
	return cpu;
}
#elif defined(__arm__)
#define NR_GETCPU 345
static inline int rd_syscall(void)
{
	unsigned int cpu = ~0u;
	register long r0 asm("r0") = (long)&cpu;
	register long r1 asm("r1") = 0;
	register long r2 asm("r2") = 0;
	register long r7 asm("r7") = NR_GETCPU;

	asm volatile("svc #0"
		     : "+r" (r0)
		     : "r" (r1), "r" (r2), "r" (r7)
		     : "memory", "cc");
	return r0 ? -1 : (int)cpu;
}

static inline void *sb_tp(void)
{
	void *tp;

	/* TPIDRURO: the user read-only thread ID register. */
	asm volatile("mrc p15, 0, %0, c13, c0, 3" : "=r" (tp));
	return tp;
}

static inline int rd_rseq(void)
{
	int cpu;
	const char *rs = (const char *)sb_tp() + sb_rseq_off;

	asm volatile("ldr %0, [%1, #4]" : "=r" (cpu) : "r" (rs) : "memory");
	return cpu;
}

static inline int rd_pda(void)
{
	return -1;
}
#endif

#ifdef SB_X86
static inline int rd_lsl(void)
{
	unsigned int lim;

	asm volatile("lsl %1, %0" : "=r" (lim) : "r" (sb_cpunode_sel) : "cc");
	return lim & 0xfff;
}

static inline int rd_rdpid(void)
{
	unsigned long aux;

	asm volatile("rdpid %0" : "=r" (aux));
	return aux & 0xfff;
}
#else
static inline int rd_lsl(void)
{
	return -1;
}

static inline int rd_rdpid(void)
{
	return -1;
}
#endif

static inline int rd_gcc(void)
{
	int cpu;

	/*
	 * No "memory" clobber: it would make the compiler reload sb_gcc_ptr
	 * before every read, and count that load too.  volatile is enough to
	 * read the word again each time.
	 */
#ifdef SB_X86
	asm volatile("movl (%1), %0" : "=r" (cpu) : "r" (sb_gcc_ptr));
#else
	asm volatile("ldr %0, [%1]" : "=r" (cpu) : "r" (sb_gcc_ptr));
#endif
	return cpu;
}

#endif /* SB_CPUREAD_H */
