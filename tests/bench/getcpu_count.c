// SPDX-License-Identifier: GPL-2.0
/*
 * libgetcpu-count.so: counts each thread's sched_getcpu() calls, for
 * tests/bench/urcu_bench (scripts/harness/urcubench.py).  Preloaded
 * first, it is what the dynamic linker binds every module's
 * sched_getcpu() to, liburcu's among them; it counts the call in the
 * calling thread and passes it on to the next definition, which is
 * libpda-getcpu.so's when that is preloaded after it, else the C
 * library's.  Counting costs instructions, so urcu_bench counts in runs
 * of their own and times runs without this library.
 *
 * Why not count in libpda-getcpu.so: its fast path is what is measured,
 * and the plain runs do not load it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>

/* Initial-exec: preloaded, it has static TLS, and needs no call to reach it. */
static __thread unsigned long calls __attribute__((tls_model("initial-exec")));
static int (*next_sched_getcpu)(void);

int sched_getcpu(void)
{
	int (*next)(void) = __atomic_load_n(&next_sched_getcpu,
					    __ATOMIC_ACQUIRE);

	if (!next) {
		/* Found on the first call: a constructor could run after
		 * another library's first call.
		 */
		next = (int (*)(void))dlsym(RTLD_NEXT, "sched_getcpu");
		__atomic_store_n(&next_sched_getcpu, next, __ATOMIC_RELEASE);
	}
	calls++;
	return next ? next() : -1;
}

/* The calling thread's count so far. */
unsigned long getcpu_count_thread(void)
{
	return calls;
}
