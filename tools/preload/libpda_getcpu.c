// SPDX-License-Identifier: GPL-2.0
/*
 * libpda-getcpu.so: sched_getcpu() and getcpu() for programs that cannot
 * be rebuilt.  Preloaded, these definitions come before the C library's;
 * each thread settles on the cheapest way that works for it on its first
 * call, and keeps it:
 *
 * 1. x86, when the kernel advertises the PDA segment (pda_available()):
 *    one load through the selector register pda.h's PDA_SEG names (%fs in
 *    32-bit programs, %gs in 64-bit ones), which this library loads with
 *    0xeb if it is free.  Free means a null selector, and in a 64-bit
 *    program also a zero base: Wine and others keep a pointer in the %gs
 *    base under a null selector (ARCH_SET_GS, wrgsbase), which loading a
 *    selector would destroy.  A register that holds anything else is
 *    never written.
 * 2. getcpu_cache(2), on a Linux 6.12 kernel of the PDA series: a word in
 *    this library's thread-local storage that the kernel keeps equal to
 *    the CPU.  On any other kernel number 463 is not called at all (see
 *    pg_init()).
 * 3. rseq's cpu_id, when the C library registered rseq.
 * 4. The C library's own function, found with dlsym(RTLD_NEXT).
 *
 * getcpu()'s node comes from the CPU-to-node map of sysfs, read once; for
 * a CPU the map does not name (no NUMA sysfs, a CPU that came online
 * later) getcpu() asks the C library.
 *
 * Lifetimes.  The kernel writes a registered getcpu_cache word until its
 * thread exits or execs, and has no call to unregister it, so no
 * destructor can make unloading safe: a library destructor runs in one
 * thread while the others keep their registrations, and a pthread key
 * destructor runs only at thread exit, when the registration ends anyway.
 * The words are in this library's TLS, so the library is linked with
 * -z nodelete (dlclose() never unmaps it) and uses initial-exec TLS,
 * which glibc keeps in each thread's static TLS block, freed only with
 * the thread.  (glibc frees a closed module's dynamic TLS block when the
 * thread next updates its DTV, and may give static TLS space to a module
 * loaded later.)  A selector left in a register needs no memory of ours.
 * - fork: the child keeps the thread's registers, its getcpu_cache
 *   registration (the kernel writes the child's own copy of the word
 *   before the child runs) and its rseq area: the inherited state is
 *   right as it stands.
 * - vfork (and posix_spawn's CLONE_VM child) runs on the parent thread's
 *   TLS without its registration, so the word can be stale there, as
 *   glibc's rseq cpu_id is (rseq is not inherited with CLONE_VM either).
 *   The segment is right there too.
 * - exec: the kernel drops the registration and resets the registers;
 *   the new image starts from nothing.
 * - Signals: the fast path only reads.  A thread's first call takes no
 *   lock and allocates nothing; it makes system calls and stores only
 *   values that an interrupting handler's first call would store too, so
 *   it may run in a handler.  A 32-bit sigreturn gives back the
 *   interrupted %fs: a thread whose first call ran in a handler finds %fs
 *   null again after it, and loads the selector once more.
 *
 * The once-per-process setup (dlsym(), sysfs) runs in the constructor;
 * only a call that comes before it, from another library's constructor,
 * runs it instead, and no signal handler does in practice.
 *
 * pda.h's shared symbols (pda_cpu_table, __getcpu_cache_tls, ...) are
 * made local by the version script: the library exports only what it
 * overrides and pda_getcpu_method(), so it changes no other module's
 * binding, and whatever it registers lives in its own memory.  Another
 * module's registration still wins: SET then fails with EBUSY and pda.h's
 * pda_getcpu_cache_register() reads that word instead.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "../lib/pda/pda.h"

#if PDA_X86_64
#include <asm/prctl.h>
#endif

/* CPUs the node map covers: x86's largest NR_CPUS (MAXSMP). */
#define PG_MAX_CPUS	8192

enum { PG_NEW, PG_INITIALIZING, PG_READY };

typedef int sched_getcpu_fn(void);
typedef int getcpu_fn(unsigned int *cpu, unsigned int *node);

/*
 * Process-wide, written once by pg_init() before it publishes pg_state
 * (and pg_seg_key) with a release store.  A thread on the fast path has
 * read one of those two, or got its state from a thread that had.
 */
static int pg_state;
#if PDA_HAVE_SEGMENT
static int pg_seg_key;		/* PDA_TABLE_READY when the segment works */
#endif
static int pg_have_gcc;		/* 463 is getcpu_cache(2) on this kernel */
static sched_getcpu_fn *real_sched_getcpu;
static getcpu_fn *real_getcpu;
static unsigned short pg_node1[PG_MAX_CPUS];	/* node + 1; 0: unknown */

/* Per thread; initial-exec TLS (-ftls-model), see "Lifetimes" above. */
static __thread int32_t *pg_cache;	/* the getcpu_cache word in use */
static __thread int pg_method;		/* PDA_METHOD_*; 0 before probing */

/* The C library's calls, or the system call until they are known. */
static int pg_real_getcpu(unsigned int *cpu, unsigned int *node)
{
	if (__atomic_load_n(&pg_state, __ATOMIC_ACQUIRE) == PG_READY &&
	    real_getcpu)
		return real_getcpu(cpu, node);
	return syscall(SYS_getcpu, cpu, node, NULL);
}

static int pg_real_sched_getcpu(void)
{
	unsigned int cpu;

	if (__atomic_load_n(&pg_state, __ATOMIC_ACQUIRE) == PG_READY &&
	    real_sched_getcpu)
		return real_sched_getcpu();
	if (syscall(SYS_getcpu, &cpu, NULL, NULL))
		return -1;
	return cpu;
}

/* @path's contents, NUL-terminated: 0, or -1 if unreadable or too long. */
static int pg_read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, size);
	close(fd);
	if (n <= 0 || (size_t)n == size)
		return -1;	/* a cut list could name wrong CPUs */
	buf[n] = '\0';
	return 0;
}

/* The next range of a sysfs list ("0-3,8"): the rest, or NULL at its end. */
static const char *pg_range(const char *s, unsigned long *lo,
			    unsigned long *hi)
{
	char *end;

	*lo = strtoul(s, &end, 10);
	if (end == s)
		return NULL;
	*hi = *lo;
	if (*end == '-') {
		s = end + 1;
		*hi = strtoul(s, &end, 10);
		if (end == s)
			return NULL;
	}
	return *end == ',' ? end + 1 : end;
}

/* Marks the CPUs of @node's cpulist, unless it cannot be read whole. */
static void pg_read_node(unsigned long node)
{
	unsigned long lo, hi, cpu;
	char path[64], cpus[4096];
	const char *s;

	snprintf(path, sizeof(path),
		 "/sys/devices/system/node/node%lu/cpulist", node);
	if (pg_read_file(path, cpus, sizeof(cpus)))
		return;
	for (s = cpus; (s = pg_range(s, &lo, &hi));)
		for (cpu = lo; cpu <= hi && cpu < PG_MAX_CPUS; cpu++)
			__atomic_store_n(&pg_node1[cpu], node + 1,
					 __ATOMIC_RELAXED);
}

/*
 * The CPU-to-node map.  A CPU no list names stays unknown, and getcpu()
 * asks the C library for it: a kernel without NUMA sysfs, a node whose
 * list cannot be read, a CPU that comes online later.
 */
static void pg_read_nodes(void)
{
	unsigned long lo, hi, node;
	char nodes[256];
	const char *s;

	if (pg_read_file("/sys/devices/system/node/online", nodes,
			 sizeof(nodes)))
		return;
	for (s = nodes; (s = pg_range(s, &lo, &hi));)
		for (node = lo; node <= hi && node < 0xffff; node++)
			pg_read_node(node);
}

/* 463 is getcpu_cache(2) only on this series' 6.12: x86, arm and arm64. */
static int pg_getcpu_cache_here(void)
{
#if PDA_X86_32 || PDA_X86_64 || defined(__arm__) || defined(__aarch64__)
	struct utsname u;

	return !uname(&u) && !strncmp(u.release, "6.12.", 5);
#else
	return 0;
#endif
}

/*
 * The process's setup, once.  Returns 1 when done, 0 while it is under
 * way: in another thread, or in this one when the C library calls us
 * back from dlsym() (a malloc() that asks for the CPU).  The caller then
 * makes the system call, and probes again on its next call.
 */
static int pg_init(void)
{
	int state = PG_NEW;

	if (__atomic_load_n(&pg_state, __ATOMIC_ACQUIRE) == PG_READY)
		return 1;
	if (!__atomic_compare_exchange_n(&pg_state, &state, PG_INITIALIZING,
					 0, __ATOMIC_ACQUIRE,
					 __ATOMIC_ACQUIRE))
		return state == PG_READY;
	real_sched_getcpu = dlsym(RTLD_NEXT, "sched_getcpu");
	real_getcpu = dlsym(RTLD_NEXT, "getcpu");	/* glibc >= 2.29 */
	pg_read_nodes();
	pg_have_gcc = pg_getcpu_cache_here();
#if PDA_HAVE_SEGMENT
	if (pda_available()) {
		pda_table_fill();
		__atomic_store_n(&pg_seg_key, PDA_TABLE_READY,
				 __ATOMIC_RELEASE);
	}
#endif
	__atomic_store_n(&pg_state, PG_READY, __ATOMIC_RELEASE);
	return 1;
}

__attribute__((constructor)) static void pg_constructor(void)
{
	int saved_errno = errno;

	pg_init();
	errno = saved_errno;
}

#if PDA_HAVE_SEGMENT
/* May this thread's register take the selector?  See the top. */
static int pg_seg_free(void)
{
#if PDA_X86_64
	unsigned long base;
#endif

	if (pda_read_seg() & ~3U)
		return 0;	/* not a null selector */
#if PDA_X86_64
	if (syscall(SYS_arch_prctl, ARCH_GET_GS, &base) || base)
		return 0;
#endif
	return 1;
}
#endif

/*
 * A thread's first call, or a call after the register lost the selector
 * it had (sigreturn, or the program loaded its own): pick the method.
 */
static int pg_probe(void)
{
	int saved_errno = errno, cpu;
	int32_t *cache;

	if (!pg_init())
		return pg_real_sched_getcpu();
	errno = saved_errno;	/* pg_init() looked for files */
#if PDA_HAVE_SEGMENT
	if (pg_seg_key && pg_seg_free()) {
		__asm__ __volatile__ ("movl %0, %%" PDA_SEG
				      : : "r" (PDA_USER_SELECTOR) : "memory");
		pg_method = PDA_METHOD_SEGMENT;
		return pda_cpu_raw();
	}
#endif
	cache = pg_have_gcc ? pda_getcpu_cache_register() : NULL;
	errno = saved_errno;
	/* Written before SET returned; -1 if it never was. */
	cpu = cache ? __atomic_load_n(cache, __ATOMIC_RELAXED) : -1;
	if (cpu >= 0) {
		pg_cache = cache;
		pg_method = PDA_METHOD_GETCPU_CACHE;
		return cpu;
	}
	cpu = pda_rseq_cpu();
	if (cpu >= 0) {
		pg_method = PDA_METHOD_RSEQ;
		return cpu;
	}
	pg_method = PDA_METHOD_SCHED_GETCPU;
	return pg_real_sched_getcpu();
}

static __attribute__((noinline)) int pg_cpu_slow(void)
{
	switch (pg_method) {
	case PDA_METHOD_RSEQ:
		return pda_rseq_cpu();
	case PDA_METHOD_SCHED_GETCPU:
		return pg_real_sched_getcpu();
	default:
		return pg_probe();
	}
}

/*
 * The fast path: the selector register is 0xeb and the segment works
 * (one compare), then one load through it; or the getcpu_cache word.
 */
static inline int pg_cpu(void)
{
	int32_t *cache;

#if PDA_HAVE_SEGMENT
	if (__builtin_expect(pda_seg_key() ==
			     __atomic_load_n(&pg_seg_key, __ATOMIC_ACQUIRE),
			     1))
		return pda_cpu_raw();
#endif
	cache = pg_cache;
	if (__builtin_expect(!!cache, 1))
		return __atomic_load_n(cache, __ATOMIC_RELAXED);
	return pg_cpu_slow();
}

int sched_getcpu(void)
{
	return pg_cpu();
}

int getcpu(unsigned int *cpu, unsigned int *node)
{
	int c = pg_cpu();
	unsigned int node1 = 0;

	/* Atomic: a call made while pg_init() runs elsewhere reads it. */
	if (c >= 0 && c < PG_MAX_CPUS)
		node1 = __atomic_load_n(&pg_node1[c], __ATOMIC_RELAXED);
	if (c < 0 || (node && !node1))
		return pg_real_getcpu(cpu, node);
	if (cpu)
		*cpu = c;
	if (node)
		*node = node1 - 1;
	return 0;
}

/*
 * How the calling thread's calls find the CPU: "segment",
 * "getcpu_cache", "rseq" or "sched_getcpu" (the C library's).  For
 * tests and reports; look it up with dlsym(RTLD_DEFAULT, ...), which
 * finds nothing when the library is not loaded.
 */
const char *pda_getcpu_method(void)
{
	pg_cpu();
#if PDA_HAVE_SEGMENT
	if (pda_seg_key() == __atomic_load_n(&pg_seg_key, __ATOMIC_ACQUIRE))
		return pda_cpu_method_name(PDA_METHOD_SEGMENT);
#endif
	if (pg_cache)
		return pda_cpu_method_name(PDA_METHOD_GETCPU_CACHE);
	return pda_cpu_method_name(pg_method);
}
