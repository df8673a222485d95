// SPDX-License-Identifier: GPL-2.0
/*
 * getcpu_cache(2): recovery after the kernel could not write the cache.
 *
 * The invariant of the v4 proposal is that the registered word always
 * reads the CPU the thread runs on.  When the page under it is gone, the
 * store on the way back to user space faults and the thread gets SIGSEGV;
 * Documentation/getcpu_cache.2 says how it recovers: map the page again
 * and repeat GETCPU_CACHE_SET with the registered address.  So:
 *
 * - SET of the address already registered stores again: the word reads
 *   the current CPU even after user space scribbled on it, on every CPU
 *   (this one also runs on UP); if the word cannot be written, that SET
 *   is EFAULT and the registration stays;
 * - pinned, cache unmapped, migrated: one SIGSEGV; the handler maps the
 *   page again (MAP_FIXED, same address) and repeats SET; the word then
 *   equals the new CPU, and stays so while the thread stays pinned;
 * - with SIGSEGV blocked, the failed store leaves the signal pending
 *   instead of killing the process; mapping the page again and repeating
 *   SET recovers before the signal is even taken;
 * - a handler that migrates (SIGSEGV blocked, page still unmapped) before
 *   it maps the page again: the second failed store is delivered after
 *   the handler returns, once, and the process lives.
 *
 * Every CPU number is checked against sched_getcpu() while pinned.  The
 * new CPU is never 0, which an anonymous page mapped again reads anyway.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "lib/getcpu_cache_test.h"

FIXTURE(rec) {
	struct gc_cpus cpus;
	int lo, hi;		/* first and last online CPU; hi != 0 on SMP */
	int klog;
};

FIXTURE_SETUP(rec)
{
	if (!gc_present())
		SKIP(return, "getcpu_cache (463) is ENOSYS: no CONFIG_GETCPU_CACHE");
	ASSERT_EQ(0, gc_cpus_online(&self->cpus));
	self->lo = self->cpus.id[0];
	self->hi = self->cpus.id[self->cpus.n - 1];
	self->klog = klog_open();
}

FIXTURE_TEARDOWN(rec)
{
	GC_EXPECT_KLOG_CLEAN(self->klog);
}

/* ------------------------------------------------ SET of the same address */

static __thread volatile int32_t tls_cache = -1;

TEST_F(rec, set_again_stores)
{
	int k;

	for (k = 0; k < self->cpus.n; k++) {
		int cpu = self->cpus.id[k];

		ASSERT_EQ(0, gc_pin(cpu));
		ASSERT_EQ(cpu, sched_getcpu());
		if (k == 0) {
			ASSERT_EQ(0, gc_set(&tls_cache));
			ASSERT_EQ(cpu, gc_read(&tls_cache));
		}
		/* User space scribbles on its cache; SET repairs it. */
		tls_cache = 0x5eed;
		EXPECT_EQ(0, gc_set(&tls_cache));
		EXPECT_EQ(cpu, gc_read(&tls_cache)) {
			TH_LOG("pinned to %d: SET again left %d", cpu,
			       gc_read(&tls_cache));
		}
		EXPECT_EQ(cpu, sched_getcpu());
		EXPECT_EQ((uintptr_t)&tls_cache, (uintptr_t)gc_get());
	}
}

/* The same SET on a word it cannot write: EFAULT, still registered. */
TEST_F(rec, set_again_unwritable)
{
	long size = sysconf(_SC_PAGESIZE);
	volatile int32_t *cache;

	ASSERT_EQ(0, gc_pin(self->hi));
	cache = mmap(NULL, size, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE((uintptr_t)MAP_FAILED, (uintptr_t)cache);
	ASSERT_EQ(0, gc_set(cache));
	ASSERT_EQ(self->hi, gc_read(cache));
	*cache = 0x5eed;
	ASSERT_EQ(0, mprotect((void *)cache, size, PROT_READ));
	EXPECT_EQ(EFAULT, gc_set(cache));
	EXPECT_EQ((uintptr_t)cache, (uintptr_t)gc_get());
	EXPECT_EQ(0x5eed, gc_read(cache));
	/* Writable again: the next SET stores. */
	ASSERT_EQ(0, mprotect((void *)cache, size, PROT_READ | PROT_WRITE));
	EXPECT_EQ(0, gc_set(cache));
	EXPECT_EQ(self->hi, gc_read(cache));
	EXPECT_EQ(self->hi, sched_getcpu());
}

/* ------------------------------------------------- after SIGSEGV */

static void *page;
static long page_size;
static volatile int segv_count, segv_code, set_err, hop_to = -1;
static volatile int32_t in_handler = -1;

/*
 * What getcpu_cache.2 tells a program to do: map the page again at the
 * same address and repeat SET with the registered address (GET finds it).
 * The first call may first move the thread (hop_to), while SIGSEGV is
 * blocked and the page is still gone.
 */
static void segv_handler(int sig, siginfo_t *si, void *uc)
{
	volatile int32_t *cache = NULL;

	segv_count++;
	segv_code = si->si_code;
	if (segv_count == 1 && hop_to >= 0)
		gc_pin(hop_to);
	if (mmap(page, page_size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != page) {
		set_err = -1;
		return;
	}
	if (gc_call(GETCPU_CACHE_GET, &cache, 0)) {
		set_err = errno;
		return;
	}
	set_err = gc_err(GETCPU_CACHE_SET, &cache, 0);
	in_handler = gc_read(cache);
}

/* Pinned to @cpu, a cache registered in its own page, the page unmapped. */
static int lose_cache(int cpu)
{
	volatile int32_t *cache;

	page_size = sysconf(_SC_PAGESIZE);
	page = mmap(NULL, page_size, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return -1;
	cache = page;
	if (gc_pin(cpu) || gc_set(cache) || gc_read(cache) != cpu)
		return -2;
	return munmap(page, page_size) ? -3 : 0;
}

TEST_F(rec, handler_maps_and_sets)
{
	volatile int32_t *cache;

	if (self->cpus.n < 2)
		SKIP(return, "one CPU: nothing migrates");
	gc_catch_segv(segv_handler);
	ASSERT_EQ(0, lose_cache(self->lo));
	cache = page;
	/* The store on the way back from this call faults. */
	ASSERT_EQ(0, gc_pin(self->hi));
	TH_LOG("SIGSEGV x%d, si_code %d, SET in handler %d, word there %d, now %d",
	       segv_count, segv_code, set_err, in_handler, gc_read(cache));
	EXPECT_EQ(1, segv_count);
	EXPECT_EQ(SI_KERNEL, segv_code);
	EXPECT_EQ(0, set_err);
	EXPECT_EQ(self->hi, in_handler);
	EXPECT_EQ(self->hi, gc_read(cache));
	EXPECT_EQ(self->hi, sched_getcpu());
	EXPECT_EQ((uintptr_t)page, (uintptr_t)gc_get());
	/* Pinned: nothing writes it again, and nothing needs to. */
	sched_yield();
	usleep(1000);
	EXPECT_EQ(self->hi, gc_read(cache));
	EXPECT_EQ(self->hi, sched_getcpu());
	EXPECT_EQ(1, segv_count);
}

TEST_F(rec, blocked_stays_pending)
{
	volatile int32_t *cache;
	sigset_t set, pending;

	if (self->cpus.n < 2)
		SKIP(return, "one CPU: nothing migrates");
	gc_catch_segv(segv_handler);
	sigemptyset(&set);
	sigaddset(&set, SIGSEGV);
	ASSERT_EQ(0, sigprocmask(SIG_BLOCK, &set, NULL));
	ASSERT_EQ(0, lose_cache(self->lo));
	cache = page;
	/* force_sig() would unblock SIGSEGV, reset it to SIG_DFL: death. */
	ASSERT_EQ(0, gc_pin(self->hi));
	ASSERT_EQ(0, sigpending(&pending));
	EXPECT_TRUE(sigismember(&pending, SIGSEGV));
	EXPECT_EQ(0, segv_count);
	/* Recover before taking the signal. */
	ASSERT_EQ((uintptr_t)page,
		  (uintptr_t)mmap(page, page_size, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
	EXPECT_EQ(0, gc_set(cache));
	EXPECT_EQ(self->hi, gc_read(cache));
	EXPECT_EQ(self->hi, sched_getcpu());
	/* Now it is delivered, once; the handler's SET stores again. */
	ASSERT_EQ(0, sigprocmask(SIG_UNBLOCK, &set, NULL));
	EXPECT_EQ(1, segv_count);
	EXPECT_EQ(0, set_err);
	EXPECT_EQ(self->hi, gc_read(cache));
	EXPECT_EQ(self->hi, sched_getcpu());
}

TEST_F(rec, handler_migrates_first)
{
	volatile int32_t *cache;

	if (self->cpus.n < 2)
		SKIP(return, "one CPU: nothing migrates");
	gc_catch_segv(segv_handler);
	hop_to = self->hi;
	ASSERT_EQ(0, lose_cache(self->hi));
	cache = page;
	/*
	 * Fault 1 on the way back from here; the handler moves back to hi
	 * before mapping the page, so fault 2 happens with SIGSEGV blocked.
	 */
	ASSERT_EQ(0, gc_pin(self->lo));
	TH_LOG("SIGSEGV x%d, SET in handler %d, word there %d, now %d",
	       segv_count, set_err, in_handler, gc_read(cache));
	EXPECT_EQ(2, segv_count);
	EXPECT_EQ(0, set_err);
	EXPECT_EQ(self->hi, in_handler);
	EXPECT_EQ(self->hi, gc_read(cache));
	EXPECT_EQ(self->hi, sched_getcpu());
}

TEST_HARNESS_MAIN
