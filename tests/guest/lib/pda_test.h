/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers of the x86_pda_* guest tests: the online CPUs, pinning,
 * a clock, a per-thread PRNG, the Bochs switch, and sysfs CPU hotplug.
 * The user library under test is tools/lib/pda/pda.h.  Header only; like
 * cpulist.h it wants _GNU_SOURCE defined before the first #include.
 */
#ifndef PDA_TESTS_PDA_TEST_H
#define PDA_TESTS_PDA_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __x86_64__
#include <asm/prctl.h>
#include <sys/syscall.h>
#endif

#include "cmdline.h"
#include "cpulist.h"
#include "xorshift.h"
#include "../../../tools/lib/pda/pda.h"

#define PDA_TEST_ONLINE	"/sys/devices/system/cpu/online"

/*
 * Is this guest Bochs?  The harness puts a bare "pda.bochs" on the
 * command line there; tests scale their sizes down (Bochs emulates an
 * instruction some 10-50 times slower than QEMU's TCG).
 */
static inline int pda_test_bochs(void)
{
	return cmdline_has("pda.bochs");
}

/* The online CPUs, as a list; returns how many, or -1. */
static inline int pda_test_online(int *cpus, int max)
{
	return cpulist_online(cpus, max);
}

/* Runs the calling thread on @cpu only; returns 0 or -errno. */
static inline int pda_test_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

/* Is the calling thread's affinity still exactly {@cpu}? */
static inline int pda_test_pinned_to(int cpu)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 0;
	return CPU_COUNT(&set) == 1 && CPU_ISSET(cpu, &set);
}

/* Every CPU of the system allowed again. */
static inline void pda_test_unpin(void)
{
	cpu_set_t set;
	int i;

	CPU_ZERO(&set);
	for (i = 0; i < CPU_SETSIZE; i++)
		CPU_SET(i, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static inline uint64_t pda_test_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

#if PDA_HAVE_SEGMENT
/*
 * __USER_DS, as %ss holds it in user mode: a selector the PDA register may
 * legitimately hold instead of the PDA one (0x7b on an i386 kernel, 0x2b
 * on an x86-64 one).
 */
static inline unsigned int pda_test_user_ds(void)
{
	unsigned int ss;

	asm volatile("movl %%ss, %0" : "=r" (ss));
	return ss & 0xffff;
}

/* Loads @sel into the register pda.h uses (PDA_SEG). */
static inline void pda_test_load_seg(unsigned int sel)
{
	asm volatile("movl %0, %%" PDA_SEG : : "r" (sel) : "memory");
}

/*
 * A test's own per-CPU table, a slot per possible CPU as the ABI gives
 * them (pda.h's stops at PDA_MAX_CPUS): slot i holds i in word 0 and
 * 0x5a000000 | i in word 1, so that a read of both also checks the base.
 * NULL if out of memory.
 */
#define PDA_TEST_WORD1(cpu)	(0x5a000000U | (unsigned int)(cpu))

static inline struct pda_slot *pda_test_table(long possible)
{
	struct pda_slot *table;
	long i;

	table = aligned_alloc(PDA_USER_SLOT_SIZE, possible * sizeof(*table));
	if (!table)
		return NULL;
	memset(table, 0, possible * sizeof(*table));
	for (i = 0; i < possible; i++) {
		table[i].s32[0] = i;
		table[i].u32[1] = PDA_TEST_WORD1(i);
	}
	return table;
}

/*
 * The CPU number through @table's segment read, or -2 if word 1 of the
 * same slot disagrees (a wrong base).
 */
static inline int pda_test_table_cpu(struct pda_slot *table)
{
	int cpu = pda_read32_raw(&table[0].u32[0]);

	return pda_read32_raw(&table[0].u32[1]) == PDA_TEST_WORD1(cpu) ?
	       cpu : -2;
}

/*
 * Puts the selector in this thread's register: through pda.h where it
 * takes the segment (every possible CPU has a slot in its table), else by
 * hand, after checking that pda.h refuses it (ENOTSUP) even with 0xeb
 * already loaded.  0, or -1 with errno (EPROTO: pda.h did not refuse).
 */
static inline int pda_test_take_segment(long possible)
{
	if (possible <= PDA_MAX_CPUS)
		return pda_init_thread();
	pda_test_load_seg(PDA_USER_SELECTOR);
	errno = 0;
	if (pda_init_thread() != -1 || errno != ENOTSUP) {
		errno = EPROTO;		/* pda.h took it: a failure to report */
		return -1;
	}
	return 0;
}

/*
 * The lsl of the CPUNODE selector: CPU, or -1.  It is 0xe3 on an i386
 * kernel and 0x7b on an x86-64 one, whose entry 28 is not present.  On an
 * i386 kernel 0x7b is __USER_DS, whose 4 GiB limit no CPUNODE has.
 */
static inline int pda_test_cpunode(void)
{
	unsigned int limit;

	if (!pda_lsl(0xe3, &limit))
		return limit & 0xfff;
	if (!pda_lsl(0x7b, &limit) && limit != 0xffffffffU)
		return limit & 0xfff;
	return -1;
}
#endif

#ifdef __x86_64__
/* The calling thread's %gs base as ARCH_GET_GS reports it, or ~0UL. */
static inline unsigned long pda_test_gs_base(void)
{
	unsigned long base = 0;

	if (syscall(SYS_arch_prctl, ARCH_GET_GS, &base))
		return ~0UL;
	return base;
}
#endif

/* The sysfs file that takes CPU @cpu offline and back. */
static inline void pda_test_online_path(char *buf, size_t len, int cpu)
{
	snprintf(buf, len, "/sys/devices/system/cpu/cpu%d/online", cpu);
}

/* Can CPU @cpu be taken offline (an "online" file that we can write)? */
static inline int pda_test_hotpluggable(int cpu)
{
	char path[64];

	pda_test_online_path(path, sizeof(path), cpu);
	return access(path, W_OK) == 0;
}

/*
 * Why CPU hotplug cannot be tested here, or NULL if it can: one online
 * CPU, or none whose online file we can write.
 */
static inline const char *pda_test_no_hotplug(void)
{
	int cpus[CPU_SETSIZE], n, i;

	n = pda_test_online(cpus, CPU_SETSIZE);
	if (n < 1)
		return NULL;	/* the test's own setup says what is wrong */
	if (n == 1)
		return "one online CPU: nothing to take offline";
	for (i = 0; i < n; i++)
		if (pda_test_hotpluggable(cpus[i]))
			return NULL;
	return "no CPU has a writable cpuN/online (CONFIG_HOTPLUG_CPU=n?)";
}

/* Writes 0 or 1 to cpuN/online; returns 0 or -errno. */
static inline int pda_test_set_online(int cpu, int online)
{
	char path[64];
	int fd, ret = 0;

	pda_test_online_path(path, sizeof(path), cpu);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, online ? "1" : "0", 1) != 1)
		ret = -errno;
	close(fd);
	return ret;
}

/* Reads cpuN/online: 1, 0, or -errno. */
static inline int pda_test_is_online(int cpu)
{
	char path[64], c;
	int fd, n;

	pda_test_online_path(path, sizeof(path), cpu);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, &c, 1);
	close(fd);
	return n == 1 ? c == '1' : -EIO;
}

#endif /* PDA_TESTS_PDA_TEST_H */
