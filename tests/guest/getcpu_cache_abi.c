// SPDX-License-Identifier: GPL-2.0
/*
 * getcpu_cache(2): the ABI of Documentation/getcpu_cache.2.
 *
 * - every row of ERRORS, one test each (EINVAL's causes apart);
 * - SET writes the current CPU at once, GET returns what SET registered,
 *   SET of the same address again succeeds, of another one is EBUSY, a
 *   failed SET leaves nothing registered;
 * - lifetime: a fork() child inherits the registration and has its copy
 *   refreshed before it first runs; a new thread (CLONE_VM) and a vfork()
 *   child start unregistered and leave the parent's alone; after execve()
 *   nothing is registered.
 *
 * Each TEST runs in a child of the harness's process, which never
 * registers, so each starts unregistered.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "lib/getcpu_cache_test.h"

static __thread volatile int32_t tls_cache = -1;

#define REQUIRE_GC() do {						\
	if (!gc_present())						\
		SKIP(return, "getcpu_cache (463) is ENOSYS: no CONFIG_GETCPU_CACHE"); \
} while (0)

/* Pins to the highest online CPU (a non-zero one on SMP); returns it. */
static int pin_last(void)
{
	struct gc_cpus c;
	int cpu;

	if (gc_cpus_online(&c))
		return -1;
	cpu = c.id[c.n - 1];
	return gc_pin(cpu) ? -1 : cpu;
}

/* ------------------------------------------------------------ ERRORS */

/* EINVAL: flags is non-zero (for both commands, whatever the rest). */
TEST(einval_flags)
{
	volatile int32_t *p = &tls_cache;
	long flags[] = { 1, 2, -1, 0x80000000l, 0x100 };
	unsigned int i;

	REQUIRE_GC();
	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		EXPECT_EQ(EINVAL, gc_err(GETCPU_CACHE_GET, &p, flags[i]));
		EXPECT_EQ(EINVAL, gc_err(GETCPU_CACHE_SET, &p, flags[i]));
	}
	/* Nothing got registered or written on the way. */
	EXPECT_EQ(ENOENT, gc_err(GETCPU_CACHE_GET, &p, 0));
	EXPECT_EQ(-1, tls_cache);
}

/* EINVAL: an invalid cmd. */
TEST(einval_cmd)
{
	volatile int32_t *p = &tls_cache;
	long cmds[] = { 2, 3, -1, 0x7fffffffl, -0x7fffffffl - 1, 0x101 };
	unsigned int i;

	REQUIRE_GC();
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		EXPECT_EQ(EINVAL, gc_err(cmds[i], &p, 0)) {
			TH_LOG("cmd %ld", cmds[i]);
		}
		EXPECT_EQ(EINVAL, gc_err(cmds[i], NULL, 0));
	}
	EXPECT_EQ(ENOENT, gc_err(GETCPU_CACHE_GET, &p, 0));
	EXPECT_EQ(-1, tls_cache);
}

/*
 * EINVAL: *cpu_cachep holds an invalid address.  NULL is the address no
 * cache can have.  (The proposal's man page says "GET" in this clause, but
 * only SET reads *cpu_cachep; see Documentation/getcpu_cache.2.)
 */
TEST(einval_null_address)
{
	volatile int32_t *p = NULL;

	REQUIRE_GC();
	EXPECT_EQ(EINVAL, gc_err(GETCPU_CACHE_SET, &p, 0));
	EXPECT_EQ(ENOENT, gc_err(GETCPU_CACHE_GET, &p, 0));
}

/* EINVAL: *cpu_cachep is not aligned on 4 bytes. */
TEST(einval_misaligned)
{
	static int32_t buf[4] = { -1, -1, -1, -1 };
	volatile int32_t *p;
	int off;

	REQUIRE_GC();
	for (off = 1; off < 4; off++) {
		p = (volatile int32_t *)((char *)&buf[1] + off);
		EXPECT_EQ(EINVAL, gc_err(GETCPU_CACHE_SET, &p, 0)) {
			TH_LOG("offset %d", off);
		}
	}
	EXPECT_EQ(ENOENT, gc_err(GETCPU_CACHE_GET, &p, 0));
	for (off = 0; off < 4; off++)
		EXPECT_EQ(-1, buf[off]);
}

/* ENOSYS: what a kernel without the call says; this one has it. */
TEST(enosys)
{
	volatile int32_t *p;

	/* Our targets build CONFIG_GETCPU_CACHE=y: 463 must exist... */
	EXPECT_NE(ENOSYS, gc_err(GETCPU_CACHE_GET, &p, 0));
	/* ...and the number after it is where the table ends. */
	EXPECT_EQ(-1, syscall(GC_NR + 1, 0, 0, 0, 0, 0, 0));
	EXPECT_EQ(ENOSYS, errno);
}

/* EFAULT: cpu_cachep itself is not accessible. */
TEST(efault_cpu_cachep)
{
	struct gc_pages m;
	void *bad[4];
	unsigned int i;

	REQUIRE_GC();
	ASSERT_EQ(0, gc_pages_map(&m));
	bad[0] = NULL;
	bad[1] = m.none;
	bad[2] = GC_KERNEL_ADDR;
	bad[3] = m.ro;			/* readable: only GET must fail */

	/* SET reads *cpu_cachep. */
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(EFAULT, gc_err(GETCPU_CACHE_SET, bad[i], 0)) {
			TH_LOG("SET with cpu_cachep %p", bad[i]);
		}
	}
	EXPECT_EQ(ENOENT, gc_err(GETCPU_CACHE_GET, &bad[0], 0));

	/* GET writes *cpu_cachep, once there is something to write. */
	ASSERT_EQ(0, gc_set(&tls_cache));
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(EFAULT, gc_err(GETCPU_CACHE_GET, bad[i], 0)) {
			TH_LOG("GET with cpu_cachep %p", bad[i]);
		}
	}
	EXPECT_EQ((uintptr_t)&tls_cache, (uintptr_t)gc_get());
}

/*
 * EFAULT: *cpu_cachep holds an address the kernel cannot write: not
 * mapped, read-only (first and last word of the page), in the kernel
 * half.  Each failed SET leaves nothing registered.
 */
TEST(efault_cache_address)
{
	struct gc_pages m;
	volatile int32_t *p;
	int32_t *bad[5];
	unsigned int i;

	REQUIRE_GC();
	ASSERT_EQ(0, gc_pages_map(&m));
	bad[0] = (int32_t *)m.none;
	bad[1] = (int32_t *)m.ro;
	bad[2] = GC_KERNEL_ADDR;
	bad[3] = (int32_t *)(m.ro + m.size - 4);
	bad[4] = (int32_t *)0xfffffffcul;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		p = bad[i];
		EXPECT_EQ(EFAULT, gc_err(GETCPU_CACHE_SET, &p, 0)) {
			TH_LOG("SET of %p", bad[i]);
		}
		EXPECT_EQ(ENOENT, gc_err(GETCPU_CACHE_GET, &p, 0));
	}
	/* The read-only page was not written behind our back. */
	EXPECT_EQ(0, *(int32_t *)m.ro);
	/* And a good address still registers afterwards. */
	EXPECT_EQ(0, gc_set(&tls_cache));
}

/* EBUSY: SET of another address while one is registered. */
TEST(ebusy)
{
	static int32_t other = -1;
	volatile int32_t *p = &other;

	REQUIRE_GC();
	ASSERT_EQ(0, gc_set(&tls_cache));
	EXPECT_EQ(EBUSY, gc_err(GETCPU_CACHE_SET, &p, 0));
	EXPECT_EQ(-1, other);
	EXPECT_EQ((uintptr_t)&tls_cache, (uintptr_t)gc_get());
	/* Even a bad address is EBUSY or EINVAL, never a re-registration. */
	p = NULL;
	EXPECT_EQ(EINVAL, gc_err(GETCPU_CACHE_SET, &p, 0));
	EXPECT_EQ((uintptr_t)&tls_cache, (uintptr_t)gc_get());
}

/* ENOENT: GET with nothing registered; cpu_cachep is not written. */
TEST(enoent)
{
	volatile int32_t *p = (volatile int32_t *)0x1234;

	REQUIRE_GC();
	EXPECT_EQ(ENOENT, gc_err(GETCPU_CACHE_GET, &p, 0));
	EXPECT_EQ(0x1234, (uintptr_t)p);
	/* Nor does it care where cpu_cachep points. */
	EXPECT_EQ(ENOENT, gc_err(GETCPU_CACHE_GET, NULL, 0));
}

/* ---------------------------------------------------------- GET, SET */

TEST(set_writes_cpu_and_get_returns_it)
{
	int cpu;

	REQUIRE_GC();
	cpu = pin_last();
	ASSERT_LE(0, cpu);
	tls_cache = -7;
	ASSERT_EQ(0, gc_set(&tls_cache));
	EXPECT_EQ(cpu, gc_read(&tls_cache));
	EXPECT_EQ(cpu, sched_getcpu());
	EXPECT_EQ((uintptr_t)&tls_cache, (uintptr_t)gc_get());
	/* SET of the same address again: success, still registered. */
	EXPECT_EQ(0, gc_set(&tls_cache));
	EXPECT_EQ((uintptr_t)&tls_cache, (uintptr_t)gc_get());
	EXPECT_EQ(cpu, gc_read(&tls_cache));
}

/* --------------------------------------------------------- lifetime */

/*
 * fork(): the child has the same address registered, and its copy was
 * refreshed before it first ran, although the parent's copy held junk.
 * The parent's copy is the parent's: the child never writes it.
 */
TEST(fork_inherits)
{
	int cpu, status, p[2];
	pid_t pid;

	REQUIRE_GC();
	cpu = pin_last();
	ASSERT_LE(0, cpu);
	ASSERT_EQ(0, gc_set(&tls_cache));
	ASSERT_EQ(0, pipe(p));
	tls_cache = 12345;	/* user space may scribble on its cache */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int32_t seen = gc_read(&tls_cache);
		int got[3];

		got[0] = seen;
		got[1] = sched_getcpu();
		got[2] = gc_get() == &tls_cache;
		_exit(write(p[1], got, sizeof(got)) == sizeof(got) ? 0 : 1);
	} else {
		int got[3];

		ASSERT_EQ(sizeof(got), read(p[0], got, sizeof(got)));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
		TH_LOG("child: cache %d, sched_getcpu %d, registered %d (pinned to %d)",
		       got[0], got[1], got[2], cpu);
		EXPECT_EQ(cpu, got[0]);
		EXPECT_EQ(cpu, got[1]);
		EXPECT_EQ(1, got[2]);
		EXPECT_EQ(12345, tls_cache);
		EXPECT_EQ((uintptr_t)&tls_cache, (uintptr_t)gc_get());
	}
}

static void *thread_fn(void *arg)
{
	long *res = arg;
	volatile int32_t *p = (volatile int32_t *)0x1234;

	res[0] = gc_err(GETCPU_CACHE_GET, &p, 0);
	res[1] = p == (volatile int32_t *)0x1234;
	res[2] = gc_set(&tls_cache);
	res[3] = gc_get() == &tls_cache;
	res[4] = gc_read(&tls_cache) == sched_getcpu();
	return NULL;
}

/* A new thread starts unregistered, and may register its own cache. */
TEST(new_thread_unregistered)
{
	long res[5] = { -1, -1, -1, -1, -1 };
	pthread_t t;

	REQUIRE_GC();
	ASSERT_LE(0, pin_last());
	ASSERT_EQ(0, gc_set(&tls_cache));
	ASSERT_EQ(0, pthread_create(&t, NULL, thread_fn, res));
	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_EQ(ENOENT, res[0]);
	EXPECT_EQ(1, res[1]);
	EXPECT_EQ(0, res[2]);
	EXPECT_EQ(1, res[3]);
	EXPECT_EQ(1, res[4]);
	/* Ours is untouched by the thread's. */
	EXPECT_EQ((uintptr_t)&tls_cache, (uintptr_t)gc_get());
}

/* vfork(): the child shares our memory but not our registration. */
TEST(vfork_unregistered)
{
	static volatile long child_err = -1;
	int cpu, status;
	pid_t pid;

	REQUIRE_GC();
	cpu = pin_last();
	ASSERT_LE(0, cpu);
	ASSERT_EQ(0, gc_set(&tls_cache));
	pid = vfork();
	if (pid == 0) {
		volatile int32_t *p;

		child_err = gc_call(GETCPU_CACHE_GET, &p, 0) ? errno : 0;
		_exit(0);
	}
	ASSERT_LE(0, pid);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(ENOENT, child_err);
	EXPECT_EQ((uintptr_t)&tls_cache, (uintptr_t)gc_get());
	EXPECT_EQ(cpu, gc_read(&tls_cache));
}

/* What the image started by execve() finds: 0 if nothing registered. */
static int exec_child(void)
{
	volatile int32_t *p = (volatile int32_t *)0x1234;

	if (!gc_call(GETCPU_CACHE_GET, &p, 0))
		return 1;
	if (errno != ENOENT)
		return 2;
	/* And it may register its own. */
	if (gc_set(&tls_cache) || gc_get() != &tls_cache)
		return 3;
	return 0;
}

TEST(exec_clears)
{
	int status;
	pid_t pid;

	REQUIRE_GC();
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		char *argv[] = { "getcpu_cache_abi", "--exec-child", NULL };

		if (gc_set(&tls_cache))
			_exit(10);
		execv("/proc/self/exe", argv);
		_exit(11);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) {
		TH_LOG("exec child: 1 still registered, 2 wrong errno, "
		       "3 cannot register, 10 SET failed, 11 exec failed");
	}
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--exec-child"))
		return exec_child();
	return test_harness_run(argc, argv);
}
