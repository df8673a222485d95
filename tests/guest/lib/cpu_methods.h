/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every way user space can ask "which CPU am I on?" that mainline 6.12
 * offers, behind one interface, so tests can read them all and compare:
 *
 *	sched_getcpu	glibc's sched_getcpu()
 *	getcpu		the getcpu system call itself
 *	rseq		the cpu_id field of the rseq area glibc registered
 *	cpunode_lsl	x86: lsl of the CPUNODE GDT selector (cpu in the limit)
 *	vdso_getcpu	x86: __vdso_getcpu@LINUX_2.6 from the vDSO
 *
 * cpu_method_probe() tells why a method does not work; cpu_method_read()
 * returns the CPU number or a negative value.  Header only.
 */
#ifndef PDA_TESTS_CPU_METHODS_H
#define PDA_TESTS_CPU_METHODS_H

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "vdso.h"

#if defined(__i386__) || defined(__x86_64__)
#define CPU_METHODS_X86 1
#else
#define CPU_METHODS_X86 0
#endif

/* ------------------------------------------------------------------ rseq */

/*
 * The thread pointer glibc's __rseq_offset is relative to.  On x86 the
 * TCB's first word points to itself (that is how glibc's THREAD_SELF
 * works), so %gs:0 (i386) or %fs:0 (x86_64) is the thread pointer without
 * relying on __builtin_thread_pointer(), which older GCCs lack on x86.
 */
static inline void *cpu_thread_pointer(void)
{
	void *tp;

#if defined(__i386__)
	asm volatile("movl %%gs:0, %0" : "=r" (tp));
#elif defined(__x86_64__)
	asm volatile("movq %%fs:0, %0" : "=r" (tp));
#else
	tp = __builtin_thread_pointer();	/* ARM: TPIDRURO */
#endif
	return tp;
}

/*
 * This thread's rseq area, or NULL when glibc did not register one:
 * glibc sets __rseq_size to 0 when rseq(2) failed (kernel without
 * CONFIG_RSEQ) or was disabled by the glibc.pthread.rseq=0 tunable.
 */
static inline struct rseq *rseq_area(void)
{
	if (!__rseq_size)
		return NULL;
	return (struct rseq *)((char *)cpu_thread_pointer() + __rseq_offset);
}

/* The kernel writes cpu_id behind the compiler's back: read it once. */
static inline int rseq_cpu_id(void)
{
	struct rseq *rs = rseq_area();

	if (!rs)
		return -ENOSYS;
	return (int32_t)*(volatile uint32_t *)&rs->cpu_id;
}

/* ------------------------------------------------------------------- x86 */

#if CPU_METHODS_X86
/*
 * The CPUNODE GDT entry: 28 (selector 0xe3) on a 32-bit kernel, 15
 * (0x7b) on a 64-bit one.  The guest tests run on an i386 kernel; the
 * 64-bit case lets the same binary be sanity-checked on an x86_64 host.
 */
#define CPUNODE_SEL_32		0xe3
#define CPUNODE_SEL_64		0x7b
#define CPUNODE_CPU_MASK	0xfff

static inline unsigned int cpunode_selector(void)
{
	static unsigned int sel;
	struct utsname u;

	if (!sel)
		sel = !uname(&u) && !strcmp(u.machine, "x86_64") ?
			CPUNODE_SEL_64 : CPUNODE_SEL_32;
	return sel;
}

/* lsl sets ZF only if the selector is valid and visible at CPL 3. */
static inline int cpunode_lsl(void)
{
	unsigned int limit;
	unsigned char ok;

	asm volatile("lsl %[sel], %[limit]\n\tsetz %[ok]"
		     : [limit] "=r" (limit), [ok] "=qm" (ok)
		     : [sel] "r" (cpunode_selector())
		     : "cc");
	return ok ? (int)(limit & CPUNODE_CPU_MASK) : -EINVAL;
}

typedef long (*vdso_getcpu_fn)(unsigned int *cpu, unsigned int *node,
			       void *unused);

static inline vdso_getcpu_fn vdso_getcpu_lookup(void)
{
	static vdso_getcpu_fn fn;
	static int looked;

	if (!looked) {
		fn = (vdso_getcpu_fn)vdso_sym("LINUX_2.6", "__vdso_getcpu");
		looked = 1;
	}
	return fn;
}

static inline int vdso_getcpu(void)
{
	vdso_getcpu_fn fn = vdso_getcpu_lookup();
	unsigned int cpu;

	if (!fn)
		return -ENOSYS;
	return fn(&cpu, NULL, NULL) ? -EINVAL : (int)cpu;
}
#endif /* CPU_METHODS_X86 */

/* --------------------------------------------------------------- generic */

static inline int getcpu_syscall(void)
{
	unsigned int cpu;

	return syscall(SYS_getcpu, &cpu, NULL, NULL) ? -errno : (int)cpu;
}

static inline int glibc_sched_getcpu(void)
{
	int cpu = sched_getcpu();

	return cpu < 0 ? -errno : cpu;
}

struct cpu_method {
	const char *name;
	int (*read)(void);
};

static const struct cpu_method cpu_methods[] = {
	/*
	 * Since glibc 2.35 sched_getcpu() reads rseq's cpu_id when rseq is
	 * registered, so it is not independent of "rseq"; it is still the
	 * call applications use, so it is checked on its own.
	 */
	{ "sched_getcpu", glibc_sched_getcpu },
	{ "getcpu", getcpu_syscall },
	{ "rseq", rseq_cpu_id },
#if CPU_METHODS_X86
	{ "cpunode_lsl", cpunode_lsl },
	{ "vdso_getcpu", vdso_getcpu },
#endif
};

#define NR_CPU_METHODS (sizeof(cpu_methods) / sizeof(cpu_methods[0]))

/*
 * Why method @m cannot be used, in @buf, or NULL if it works.  A failed
 * read is also described, so a test can say what went wrong.
 */
static inline const char *cpu_method_probe(const struct cpu_method *m,
					   char *buf, size_t len)
{
	int cpu;

	if (m->read == rseq_cpu_id && !rseq_area()) {
		snprintf(buf, len,
			 "glibc has no rseq area (__rseq_size == 0): kernel without CONFIG_RSEQ, or glibc.pthread.rseq=0");
		return buf;
	}
#if CPU_METHODS_X86
	if (m->read == vdso_getcpu && !vdso_getcpu_lookup()) {
		snprintf(buf, len, getauxval(AT_SYSINFO_EHDR) ?
			 "no __vdso_getcpu@LINUX_2.6 in the vDSO" :
			 "no vDSO (AT_SYSINFO_EHDR is 0)");
		return buf;
	}
	if (m->read == cpunode_lsl && cpunode_lsl() < 0) {
		snprintf(buf, len,
			 "lsl of selector %#x failed: no CPUNODE descriptor",
			 cpunode_selector());
		return buf;
	}
#endif
	cpu = m->read();
	if (cpu < 0) {
		snprintf(buf, len, "%s returned %d (%s)", m->name, cpu,
			 cpu > -4096 ? strerror(-cpu) : "?");
		return buf;
	}
	return NULL;
}

#endif /* PDA_TESTS_CPU_METHODS_H */
