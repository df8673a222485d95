// SPDX-License-Identifier: GPL-2.0
/*
 * getcpu_cache(2): the ABI of Documentation/getcpu_cache.2.
 *
 * - every row of ERRORS, one test each (EINVAL's causes apart);
 * - SET writes the current CPU at once, GET returns what SET registered,
 *   SET of the same address again succeeds, of another one is EBUSY, a
 *   failed SET leaves nothing registered, and an EFAULT of either command
 *   leaves a registration that is there (getcpu_cache_recover has SET of
 *   the registered address);
 * - lifetime: a fork() child inherits the registration and has its copy
 *   refreshed before it first runs (a MAP_SHARED cache is the parent's,
 *   which the child then writes; a MADV_DONTFORK one is missing, and the
 *   child gets SIGSEGV); a new thread (CLONE_VM) and a vfork() child start
 *   unregistered and leave the parent's alone; after execve() nothing is
 *   registered;
 * - sched_setaffinity() of another thread does not write that thread's
 *   cache: its owner does, on its way back to user space.
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
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
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

/*
 * The man page has programs check, before their first call, that the
 * kernel is a 6.12 one (463 is setxattrat() from 6.13 on): this kernel
 * passes that check.
 */
TEST(release_is_6_12)
{
	struct utsname u;

	ASSERT_EQ(0, uname(&u));
	EXPECT_EQ(0, strncmp(u.release, "6.12.", 5)) {
		TH_LOG("release %s", u.release);
	}
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

	/* Neither EFAULT drops a registration that is there. */
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(EFAULT, gc_err(GETCPU_CACHE_SET, bad[i], 0)) {
			TH_LOG("registered, SET with cpu_cachep %p", bad[i]);
		}
		EXPECT_EQ((uintptr_t)&tls_cache, (uintptr_t)gc_get());
	}
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

/*
 * fork() with the cache in MAP_SHARED memory: the child's copy is the
 * parent's word.  The child's first store, and each one after it migrates,
 * land in the parent's cache, which then reads the child's CPU.
 */
TEST(fork_shared_cache)
{
	struct gc_cpus c;
	volatile int32_t *cache;
	int32_t got[2];
	int status, p[2], lo, hi;
	pid_t pid;

	REQUIRE_GC();
	ASSERT_EQ(0, gc_cpus_online(&c));
	lo = c.id[0];
	hi = c.id[c.n - 1];
	cache = mmap(NULL, sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE((uintptr_t)MAP_FAILED, (uintptr_t)cache);
	ASSERT_EQ(0, gc_pin(lo));
	ASSERT_EQ(0, gc_set(cache));
	ASSERT_EQ(lo, gc_read(cache));
	ASSERT_EQ(0, pipe(p));
	*cache = 12345;
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		got[0] = gc_read(cache);	/* stored before we first ran */
		got[1] = -1;
		if (!gc_pin(hi))
			got[1] = gc_read(cache);
		_exit(write(p[1], got, sizeof(got)) == sizeof(got) ? 0 : 1);
	}
	ASSERT_EQ(sizeof(got), read(p[0], got, sizeof(got)));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	TH_LOG("child wrote %d, then %d after moving to %d; parent on %d reads %d",
	       got[0], got[1], hi, sched_getcpu(), gc_read(cache));
	EXPECT_EQ(lo, got[0]);
	EXPECT_EQ(hi, got[1]);
	/* The parent never left lo, and its cache says hi. */
	EXPECT_EQ(lo, sched_getcpu());
	EXPECT_EQ(hi, gc_read(cache));
	EXPECT_EQ((uintptr_t)cache, (uintptr_t)gc_get());
	/* SET again repairs it. */
	EXPECT_EQ(0, gc_set(cache));
	EXPECT_EQ(lo, gc_read(cache));
}

/*
 * fork() with the cache in MADV_DONTFORK memory: the child has no page
 * there, so its first store faults and it gets SIGSEGV (SIG_DFL here: it
 * dies), keeping its registration; the parent's cache is left alone.
 */
TEST(fork_dontfork_cache)
{
	long size = sysconf(_SC_PAGESIZE);
	volatile int32_t *cache;
	int cpu;

	REQUIRE_GC();
	cpu = pin_last();
	ASSERT_LE(0, cpu);
	cache = mmap(NULL, size, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE((uintptr_t)MAP_FAILED, (uintptr_t)cache);
	if (madvise((void *)cache, size, MADV_DONTFORK)) {
		if (errno == ENOSYS)
			SKIP(return, "madvise() is ENOSYS: no CONFIG_ADVISE_SYSCALLS");
		ASSERT_EQ(0, errno);
	}
	ASSERT_EQ(0, gc_set(cache));
	*cache = 12345;
	GC_EXPECT_FORK_CHILD_SEGV();
	EXPECT_EQ(12345, gc_read(cache));
	EXPECT_EQ((uintptr_t)cache, (uintptr_t)gc_get());
}

/*
 * sched_setaffinity() of another thread returns before that thread's
 * cache shows the new CPU: the kernel writes a cache only on its owner's
 * way back to user space.  Asleep in read(), the owner's cache keeps the
 * old CPU for any other thread that reads it; the owner itself, woken,
 * reads the new one.
 */
struct sleeper {
	volatile int32_t *cache;
	int cpu, fd_ready, fd_wake;
	pid_t tid;
	int32_t seen, seen_sched;
	int err;
};

static void *sleeper_fn(void *arg)
{
	struct sleeper *s = arg;
	char c = 0;

	s->tid = syscall(SYS_gettid);
	s->cache = &tls_cache;
	s->err = gc_pin(s->cpu);
	if (!s->err)
		s->err = gc_set(&tls_cache);
	if (write(s->fd_ready, &c, 1) != 1 || s->err)
		return NULL;
	if (read(s->fd_wake, &c, 1) != 1)
		s->err = -1;
	s->seen = gc_read(&tls_cache);
	s->seen_sched = sched_getcpu();
	return NULL;
}

/* Waits until @tid sleeps (state S in /proc); 0, or -1 after ~10 s. */
static int wait_asleep(pid_t tid)
{
	char path[64], buf[256], *p;
	int i, fd, n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	for (i = 0; i < 10000; i++) {
		fd = open(path, O_RDONLY);
		if (fd < 0)
			return -1;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0) {
			buf[n] = 0;
			p = strrchr(buf, ')');
			if (p && p[1] == ' ' && p[2] == 'S')
				return 0;
		}
		usleep(1000);
	}
	return -1;
}

TEST(affinity_of_other_thread)
{
	struct sleeper s = { 0 };
	struct gc_cpus c;
	int ready[2], wake[2];
	cpu_set_t set;
	pthread_t t;
	char ch = 0;

	REQUIRE_GC();
	ASSERT_EQ(0, gc_cpus_online(&c));
	if (c.n < 2)
		SKIP(return, "one CPU: nothing migrates");
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(wake));
	s.cpu = c.id[0];
	s.fd_ready = ready[1];
	s.fd_wake = wake[0];
	ASSERT_EQ(0, pthread_create(&t, NULL, sleeper_fn, &s));
	ASSERT_EQ(1, read(ready[0], &ch, 1));
	ASSERT_EQ(0, s.err);
	ASSERT_EQ(c.id[0], gc_read(s.cache));
	ASSERT_EQ(0, wait_asleep(s.tid));

	CPU_ZERO(&set);
	CPU_SET(c.id[c.n - 1], &set);
	ASSERT_EQ(0, sched_setaffinity(s.tid, sizeof(set), &set));
	/* Returned, and the sleeper's cache still shows its old CPU. */
	EXPECT_EQ(c.id[0], gc_read(s.cache));

	ASSERT_EQ(1, write(wake[1], &ch, 1));
	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_EQ(0, s.err);
	EXPECT_EQ(c.id[c.n - 1], s.seen);
	EXPECT_EQ(c.id[c.n - 1], s.seen_sched);
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
