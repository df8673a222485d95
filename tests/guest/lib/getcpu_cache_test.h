/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers of the getcpu_cache_* guest tests (i386 and ARM): the
 * raw system call, the online CPUs, pinning, a seeded PRNG, the Bochs
 * scale-down and memory that faults; klog.h scans the kernel log.
 * Header only; wants _GNU_SOURCE before the first #include.
 *
 * The command numbers come from the series' uAPI header in this checkout,
 * so the tests and the kernel cannot disagree on them.
 */
#ifndef PDA_TESTS_GETCPU_CACHE_TEST_H
#define PDA_TESTS_GETCPU_CACHE_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmdline.h"
#include "cpulist.h"
#include "xorshift.h"
#include "klog.h"
#include "../../../include/uapi/linux/getcpu_cache.h"

/*
 * Syscall 463 in the PDA series on x86-32, x86-64 (64-bit and 32-bit
 * programs), ARM and arm64 (64-bit and AArch32 programs); not mainline's 463.
 */
#define GC_NR		463
/* The most CPUs a test sees: every one a cpu_set_t can name. */
#define GC_MAX_CPUS	CPU_SETSIZE

/*
 * The raw call.  The three trailing zeros make mainline >= 6.13, where 463
 * is setxattrat(), fail with EINVAL instead of acting on garbage.
 */
/*
 * For a FIXTURE_TEARDOWN (kselftest_harness.h included first): the kernel
 * logged no splat since @fd was opened with klog_open(); closes @fd.
 */
#define GC_EXPECT_KLOG_CLEAN(fd)					\
	do {								\
		char __first[256];					\
		int __n = klog_scan((fd), __first, sizeof(__first));	\
									\
		EXPECT_EQ(0, __n) {					\
			TH_LOG("kernel log: %d splat(s), first: %s",	\
			       __n, __first);				\
		}							\
		if ((fd) >= 0)						\
			close(fd);					\
	} while (0)

/*
 * fork() while the registered cache cannot be written: the child's store
 * on its way to user mode fails, so SIGSEGV kills it before it runs.
 */
#define GC_EXPECT_FORK_CHILD_SEGV()					\
	do {								\
		int __status;						\
		pid_t __pid = fork();					\
									\
		if (__pid == 0)						\
			_exit(0);	/* never gets here */		\
		ASSERT_LE(0, __pid);					\
		ASSERT_EQ(__pid, waitpid(__pid, &__status, 0));		\
		EXPECT_TRUE(WIFSIGNALED(__status) &&			\
			    WTERMSIG(__status) == SIGSEGV) {		\
			TH_LOG("child status %#x", __status);		\
		}							\
	} while (0)

static inline long gc_call(long cmd, void *cpu_cachep, long flags)
{
	return syscall(GC_NR, cmd, cpu_cachep, flags, 0, 0, 0);
}

/* The call, returning 0 or the errno (never -1). */
static inline int gc_err(long cmd, void *cpu_cachep, long flags)
{
	return gc_call(cmd, cpu_cachep, flags) ? errno : 0;
}

static inline int gc_set(volatile int32_t *cache)
{
	volatile int32_t *p = cache;

	return gc_err(GETCPU_CACHE_SET, &p, 0);
}

/* The registered cache, or NULL with errno set. */
static inline volatile int32_t *gc_get(void)
{
	volatile int32_t *p = NULL;

	if (gc_call(GETCPU_CACHE_GET, &p, 0))
		return NULL;
	return p;
}

/* Does this kernel have the call?  Probes with GET, which changes nothing. */
static inline int gc_present(void)
{
	volatile int32_t *p;

	return !(gc_call(GETCPU_CACHE_GET, &p, 0) && errno == ENOSYS);
}

static inline int32_t gc_read(volatile int32_t *cache)
{
	return __atomic_load_n(cache, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------- CPUs */

struct gc_cpus {
	int n;
	int id[GC_MAX_CPUS];
};

static inline int gc_cpus_online(struct gc_cpus *c)
{
	c->n = cpulist_online(c->id, GC_MAX_CPUS);
	if (c->n > 0)
		return 0;
	c->n = 0;
	return -1;
}

/* Runs the calling thread on @cpu only; 0 or -errno. */
static inline int gc_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

static inline void gc_unpin(const struct gc_cpus *c)
{
	cpu_set_t set;
	int i;

	CPU_ZERO(&set);
	for (i = 0; i < c->n; i++)
		CPU_SET(c->id[i], &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/*
 * @handler takes SIGSEGV with its siginfo: the tests that lose a cache's
 * page look at si_code and map the page back from the handler.
 */
static inline void gc_catch_segv(void (*handler)(int, siginfo_t *, void *))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
}

/* ------------------------------------------------------ time, sizes */

static inline double gc_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Bochs (a bare "pda.bochs" on the command line) is 10-50x slower. */
static inline int gc_bochs(void)
{
	return cmdline_has("pda.bochs");
}

static inline long gc_scale(long n)
{
	n *= cmdline_scale();
	return gc_bochs() ? (n + 9) / 10 : n;
}

/* ----------------------------------------------------------- memory */

/*
 * Three adjacent pages: read-write, read-only, no access.  A 4-byte
 * object starting 2 bytes before the end of the first straddles into the
 * read-only page, and so on.
 */
struct gc_pages {
	char *rw, *ro, *none;
	long size;
};

static inline int gc_pages_map(struct gc_pages *p)
{
	char *base;

	p->size = sysconf(_SC_PAGESIZE);
	base = mmap(NULL, 3 * p->size, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return -1;
	p->rw = base;
	p->ro = base + p->size;
	p->none = base + 2 * p->size;
	if (mprotect(p->ro, p->size, PROT_READ) ||
	    mprotect(p->none, p->size, PROT_NONE))
		return -1;
	return 0;
}

/* An address above TASK_SIZE on both i386 and ARM (VMSPLIT_3G). */
#define GC_KERNEL_ADDR	((void *)0xc0000000ul)

#endif /* PDA_TESTS_GETCPU_CACHE_TEST_H */
