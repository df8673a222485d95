// SPDX-License-Identifier: GPL-2.0
/*
 * sched_getcpu() and getcpu() answer what the getcpu system call answers,
 * with libpda-getcpu.so (tools/preload) preloaded, and without it,
 * when the same checks hold for the C library's own functions.  This is
 * an ordinary dynamically linked program: the library only replaces what
 * the dynamic linker binds.
 *
 * Every check is made pinned to one of the CPUs the process may use, and
 * compares sched_getcpu() and getcpu() (CPU and node, together and each
 * alone) with syscall(SYS_getcpu).
 *
 * - method: prints "# method: M", how the library answers in the main
 *   thread (its pda_getcpu_method(), found with dlsym(RTLD_DEFAULT) when
 *   the program starts; "none" without the library); fails if
 *   PDA_EXPECT_METHOD says otherwise.  Every check below also checks the
 *   method, in each thread, child and signal handler: a right answer
 *   through a fallback would hide a broken library.
 * - pinned_each_cpu: on each CPU in turn.
 * - migration_storm: threads re-pin themselves to random CPUs.
 * - fork_child: a child forked after the calls were used, on each CPU,
 *   and the parent after it.
 * - exec_child: such a child execs this program, whose first calls must
 *   be right (the kernel dropped the registration, reset the registers).
 * - new_threads: threads, each on each CPU.
 * - signal_handler: a thread's first call inside a handler, then
 *   handlers that interrupt the checks.
 * - foreign_selector (x86): a thread whose %fs (32-bit) or %gs (64-bit)
 *   holds a set_thread_area() TLS selector (an LDT one in 64-bit
 *   programs, which have no set_thread_area()) keeps it, with its base.
 *   Skipped where the LDT selector cannot be loaded at all (a host whose
 *   hypervisor gives user space no LDT; the guests run it).
 * - foreign_gs_base (x86-64): the same for a null %gs with a base
 *   (ARCH_SET_GS), which is how Wine keeps its TEB.
 * - dlopen_dlclose: the library at $PDA_PRELOAD_LIB, opened and closed
 *   while threads use it; it must stay mapped (the kernel may keep
 *   writing getcpu_cache words in its TLS).
 *
 * The guest's /init gives a test no environment: its arguments say what
 * to set, and it runs itself again with it (relaunch.h):
 *
 *	preload_test --lib PATH [--preload] [--rseq-off] [--expect METHOD]
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__i386__) || defined(__x86_64__)
#include <asm/ldt.h>
#endif
#ifdef __x86_64__
#include <asm/prctl.h>
#endif

#include "kselftest_harness.h"
#include "relaunch.h"

#define STORM_THREADS	4
#define STORM_WINDOWS	500	/* per thread */
#define NEW_THREADS	8
#define DL_THREADS	2
#define DL_CYCLES	20
#define WHY_LEN		160

struct calls {
	int (*sched_getcpu)(void);
	int (*getcpu)(unsigned int *cpu, unsigned int *node);
};

/* The program's own bindings: the preloaded library's, or glibc's. */
static const struct calls global_calls = { sched_getcpu, getcpu };

/* The CPUs the process may run on. */
static int cpus[CPU_SETSIZE], ncpus;

/*
 * How the library must answer (PDA_EXPECT_METHOD), checked after every
 * answer: a silent fallback to rseq or the system call would still be
 * right.  A thread whose selector is someone else's expects no method
 * in particular (NULL), only not the segment.
 */
static const char *expect_method;
static __thread int expect_any;
static const char *(*method_fn)(void);

static const char *library_method(void)
{
	return method_fn ? method_fn() : "none";
}

__attribute__((constructor)) static void load_cpus(void)
{
	cpu_set_t set;
	int cpu;

	expect_method = getenv("PDA_EXPECT_METHOD");
	method_fn = (const char *(*)(void))dlsym(RTLD_DEFAULT,
						 "pda_getcpu_method");

	if (sched_getaffinity(0, sizeof(set), &set))
		return;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &set))
			cpus[ncpus++] = cpu;
}

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* Pinned to @cpu, @c answers as the system call: 0, or -1 and @why. */
static int check_on(int cpu, const struct calls *c, char *why)
{
	unsigned int sys_cpu, sys_node, got_cpu = ~0U, got_node = ~0U;
	int got;

	if (pin(cpu)) {
		snprintf(why, WHY_LEN, "sched_setaffinity(%d): %s", cpu,
			 strerror(errno));
		return -1;
	}
	if (syscall(SYS_getcpu, &sys_cpu, &sys_node, NULL) ||
	    sys_cpu != (unsigned int)cpu) {
		snprintf(why, WHY_LEN, "pinned to %d, the system call says %u",
			 cpu, sys_cpu);
		return -1;
	}
	got = c->sched_getcpu();
	if (got != cpu) {
		snprintf(why, WHY_LEN, "on CPU %d: sched_getcpu() %d", cpu, got);
		return -1;
	}
	if (c->getcpu(&got_cpu, &got_node) || got_cpu != sys_cpu ||
	    got_node != sys_node) {
		snprintf(why, WHY_LEN, "on CPU %d node %u: getcpu() %u node %u",
			 cpu, sys_node, got_cpu, got_node);
		return -1;
	}
	got_cpu = got_node = ~0U;
	if (c->getcpu(&got_cpu, NULL) || c->getcpu(NULL, &got_node) ||
	    got_cpu != sys_cpu || got_node != sys_node) {
		snprintf(why, WHY_LEN,
			 "on CPU %d node %u: getcpu() alone: %u, node %u",
			 cpu, sys_node, got_cpu, got_node);
		return -1;
	}
	if (expect_method && !expect_any &&
	    strcmp(library_method(), expect_method)) {
		snprintf(why, WHY_LEN, "on CPU %d: right, but through %s, not %s",
			 cpu, library_method(), expect_method);
		return -1;
	}
	return 0;
}

static int check_each(const struct calls *c, char *why)
{
	int i;

	for (i = 0; i < ncpus; i++)
		if (check_on(cpus[i], c, why))
			return -1;
	return 0;
}

struct worker {
	pthread_t tid;
	const struct calls *calls;
	unsigned int seed;
	int windows;		/* storm: pinned windows to check */
	int failed;
	char why[WHY_LEN];
};

static void *each_cpu_thread(void *arg)
{
	struct worker *w = arg;

	w->failed = check_each(w->calls, w->why);
	return NULL;
}

static void *storm_thread(void *arg)
{
	struct worker *w = arg;
	int i;

	for (i = 0; i < w->windows && !w->failed; i++)
		w->failed = check_on(cpus[rand_r(&w->seed) % ncpus], w->calls,
				     w->why);
	return NULL;
}


TEST(method)
{
	const char *want = getenv("PDA_EXPECT_METHOD");
	const char *got = library_method();

	ksft_print_msg("method: %s\n", got);
	fflush(stdout);
	if (want)
		ASSERT_STREQ(want, got);
}

TEST(pinned_each_cpu)
{
	char why[WHY_LEN];

	ASSERT_LT(0, ncpus);
	ASSERT_EQ(0, check_each(&global_calls, why)) TH_LOG("%s", why);
}

TEST(migration_storm)
{
	struct worker w[STORM_THREADS] = {};
	int i;

	for (i = 0; i < STORM_THREADS; i++) {
		w[i].calls = &global_calls;
		w[i].seed = i + 1;
		w[i].windows = STORM_WINDOWS;
		ASSERT_EQ(0, pthread_create(&w[i].tid, NULL, storm_thread,
					    &w[i]));
	}
	for (i = 0; i < STORM_THREADS; i++) {
		pthread_join(w[i].tid, NULL);
		EXPECT_EQ(0, w[i].failed) TH_LOG("thread %d: %s", i, w[i].why);
	}
}

TEST(fork_child)
{
	char why[WHY_LEN];
	int status;
	pid_t pid;

	ASSERT_EQ(0, check_each(&global_calls, why)) TH_LOG("%s", why);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (!check_each(&global_calls, why))
			_exit(0);
		fprintf(stderr, "# child: %s\n", why);
		_exit(1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	EXPECT_EQ(0, check_each(&global_calls, why)) TH_LOG("%s", why);
}

/*
 * A child that used the calls (so holds the selector, or a registered
 * word) execs this program again: the new image starts from nothing,
 * and its calls must be right from the first one.
 */
#define EXEC_CHECK	"--exec-check"

static int exec_check(void)
{
	char why[WHY_LEN];

	if (!check_each(&global_calls, why))
		return 0;
	fprintf(stderr, "# after exec: %s\n", why);
	return 1;
}

TEST(exec_child)
{
	extern char **environ;
	char why[WHY_LEN];
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (check_each(&global_calls, why)) {
			fprintf(stderr, "# child before exec: %s\n", why);
			_exit(1);
		}
		execve("/proc/self/exe",
		       (char *[]){ "preload_test", EXEC_CHECK, NULL }, environ);
		_exit(2);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("status %#x", status);
}

TEST(new_threads)
{
	struct worker w[NEW_THREADS] = {};
	int i;

	for (i = 0; i < NEW_THREADS; i++) {
		w[i].calls = &global_calls;
		ASSERT_EQ(0, pthread_create(&w[i].tid, NULL, each_cpu_thread,
					    &w[i]));
	}
	for (i = 0; i < NEW_THREADS; i++) {
		pthread_join(w[i].tid, NULL);
		EXPECT_EQ(0, w[i].failed) TH_LOG("thread %d: %s", i, w[i].why);
	}
}

#define SIG_MIN		3
#define SIG_WINDOWS_MAX	200000

/* Only the signal thread takes SIGUSR1, and handlers do not nest. */
static volatile sig_atomic_t sig_calls, sig_bad;
static int sig_done;

static void on_usr1(int sig)
{
	int saved_errno = errno;
	unsigned int sys;

	(void)sig;
	/* The thread is pinned whenever it can take a signal. */
	if (syscall(SYS_getcpu, &sys, NULL, NULL) ||
	    sched_getcpu() != (int)sys)
		sig_bad++;
	else if (expect_method && strcmp(library_method(), expect_method))
		sig_bad++;
	sig_calls++;
	errno = saved_errno;
}

static void *signal_thread(void *arg)
{
	struct worker *w = arg;
	int i;

	/* Its first call runs in the handler (a 32-bit sigreturn then
	 * gives back the %fs the thread had before).
	 */
	if (pin(cpus[0]) || raise(SIGUSR1)) {
		w->failed = 1;
		snprintf(w->why, WHY_LEN, "pin or raise: %s", strerror(errno));
	}
	/*
	 * Until some signals have come too: on one CPU the sender only runs
	 * when this thread is preempted, which 400 windows may not see.
	 */
	for (i = 0; (i < w->windows || sig_calls < SIG_MIN) &&
	     i < SIG_WINDOWS_MAX && !w->failed; i++)
		w->failed = check_on(cpus[i % ncpus], w->calls, w->why);
	__atomic_store_n(&sig_done, 1, __ATOMIC_RELAXED);
	return NULL;
}

TEST(signal_handler)
{
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_RESTART };
	struct worker w = { .calls = &global_calls, .windows = 400 };

	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	ASSERT_EQ(0, pthread_create(&w.tid, NULL, signal_thread, &w));
	while (!__atomic_load_n(&sig_done, __ATOMIC_RELAXED)) {
		pthread_kill(w.tid, SIGUSR1);
		usleep(100);
	}
	pthread_join(w.tid, NULL);
	EXPECT_EQ(0, w.failed) TH_LOG("%s", w.why);
	EXPECT_LE(SIG_MIN, sig_calls);
	EXPECT_EQ(0, sig_bad);
}

#if defined(__i386__) || defined(__x86_64__)
#define MAGIC	0x5eb5eb5e

/* The register the library would load: PDA_SEG of tools/lib/pda/pda.h. */
#ifdef __i386__
#define SEG	"fs"
#else
#define SEG	"gs"
#endif

static unsigned int seg_read(void)
{
	unsigned int sel;

	asm volatile("movl %%" SEG ", %0" : "=r" (sel));
	return sel & 0xffff;
}

static void seg_load(unsigned int sel)
{
	asm volatile("movl %0, %%" SEG : : "r" (sel) : "memory");
}

static uint32_t seg_word0(void)
{
	uint32_t v;

	asm volatile("movl %%" SEG ":0, %0" : "=r" (v) : : "memory");
	return v;
}

struct foreign {
	struct worker w;
	int gs_base;		/* ARCH_SET_GS instead of a TLS selector */
	int no_ldt;		/* a kernel without modify_ldt() */
	int ldt_signal;		/* what loading the LDT selector raised */
};

#ifdef __x86_64__
/*
 * A paravirtualised kernel may accept modify_ldt() and still fault on
 * every load of an LDT selector (its hypervisor gives user space no LDT).
 * Find out in a child, which has a copy of the LDT: returns the signal
 * the load raised there, 0 if none.
 */
static int ldt_load_signal(unsigned int sel)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		seg_load(sel);
		_exit(seg_word0() == MAGIC ? 0 : 1);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}
#endif

/* After each check: the selector, and what it reaches, are untouched. */
static void *foreign_thread(void *arg)
{
	struct foreign *f = arg;
	struct worker *w = &f->w;
	unsigned int sel = 0;
	uint32_t *buf;
	int i;

	expect_any = 1;
	/* A descriptor base has 32 bits. */
	buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS
#ifdef __x86_64__
		   | MAP_32BIT
#endif
		   , -1, 0);
	if (buf == MAP_FAILED)
		goto fail;
	buf[0] = MAGIC;
	if (f->gs_base) {
#ifdef __x86_64__
		if (syscall(SYS_arch_prctl, ARCH_SET_GS, buf))
			goto fail;
#endif
	} else {
		struct user_desc d = {
			.entry_number = -1, .base_addr = (uintptr_t)buf,
			.limit = 0xfffff, .seg_32bit = 1,
			.limit_in_pages = 1, .useable = 1,
		};

#ifdef __i386__
		if (syscall(SYS_set_thread_area, &d))
			goto fail;
		sel = d.entry_number * 8 + 3;
#else
		/* No set_thread_area() for 64-bit programs: an LDT entry. */
		d.entry_number = 0;
		if (syscall(SYS_modify_ldt, 1, &d, sizeof(d))) {
			f->no_ldt = errno == ENOSYS;
			goto fail;
		}
		sel = 0 * 8 + 4 + 3;
		f->ldt_signal = ldt_load_signal(sel);
		if (f->ldt_signal > 0)
			return NULL;
		if (f->ldt_signal < 0)
			goto fail;
#endif
		seg_load(sel);
	}
	for (i = 0; i < ncpus; i++) {
		if (check_on(cpus[i], w->calls, w->why)) {
			w->failed = 1;
			return NULL;
		}
		if (seg_read() != sel || seg_word0() != MAGIC) {
			w->failed = 1;
			snprintf(w->why, WHY_LEN,
				 "%%" SEG " was %#x over %#x, now %#x over %#x",
				 sel, MAGIC, seg_read(), seg_word0());
			return NULL;
		}
	}
	if (!strcmp(library_method(), "segment")) {
		w->failed = 1;
		snprintf(w->why, WHY_LEN, "the library took %%" SEG);
	}
	return NULL;
fail:
	w->failed = 1;
	snprintf(w->why, WHY_LEN, "setup: %s", strerror(errno));
	return NULL;
}

static void run_foreign(struct __test_metadata *_metadata, int gs_base)
{
	struct foreign f = { .w.calls = &global_calls, .gs_base = gs_base };

	ASSERT_EQ(0, pthread_create(&f.w.tid, NULL, foreign_thread, &f));
	pthread_join(f.w.tid, NULL);
	if (f.no_ldt)
		SKIP(return, "no modify_ldt() (CONFIG_MODIFY_LDT_SYSCALL=n)");
	if (f.ldt_signal > 0)
		SKIP(return, "modify_ldt() worked, loading its selector: %s",
		     strsignal(f.ldt_signal));
	EXPECT_EQ(0, f.w.failed) TH_LOG("%s", f.w.why);
}

TEST(foreign_selector)
{
	run_foreign(_metadata, 0);
}
#else
TEST(foreign_selector)
{
	SKIP(return, "x86 only");
}
#endif

#ifdef __x86_64__
TEST(foreign_gs_base)
{
	run_foreign(_metadata, 1);
}
#else
TEST(foreign_gs_base)
{
	SKIP(return, "x86-64 only");
}
#endif

/* Opened at run time: NULL until then. */
static const struct calls *dl_calls;

struct dl_worker {
	struct worker w;
	int stop;
	int dl_windows;		/* checked through dl_calls */
};

/* Until stopped: the program's calls, and the opened library's. */
static void *dl_thread(void *arg)
{
	struct dl_worker *d = arg;
	struct worker *w = &d->w;
	const struct calls *dl;

	while (!__atomic_load_n(&d->stop, __ATOMIC_RELAXED) && !w->failed) {
		w->failed = check_on(cpus[rand_r(&w->seed) % ncpus],
				     &global_calls, w->why);
		dl = __atomic_load_n(&dl_calls, __ATOMIC_ACQUIRE);
		if (dl && !w->failed) {
			w->failed = check_on(cpus[rand_r(&w->seed) % ncpus],
					     dl, w->why);
			__atomic_fetch_add(&d->dl_windows, 1,
					   __ATOMIC_RELAXED);
		}
	}
	return NULL;
}

/* Waits until every worker made @n more checks through dl_calls. */
static int dl_wait(struct dl_worker *d, int n)
{
	int i, start[DL_THREADS];

	for (i = 0; i < DL_THREADS; i++)
		start[i] = __atomic_load_n(&d[i].dl_windows, __ATOMIC_RELAXED);
	for (i = 0; i < DL_THREADS; i++) {
		while (__atomic_load_n(&d[i].dl_windows, __ATOMIC_RELAXED) <
		       start[i] + n) {
			if (__atomic_load_n(&d[i].w.failed, __ATOMIC_RELAXED))
				return -1;
			usleep(1000);
		}
	}
	return 0;
}

TEST(dlopen_dlclose)
{
	const char *path = getenv("PDA_PRELOAD_LIB");
	struct dl_worker d[DL_THREADS] = {};
	struct worker after = { .calls = &global_calls };
	static struct calls opened;
	char why[WHY_LEN];
	void *h, *again;
	int i;

	if (!path)
		SKIP(return, "PDA_PRELOAD_LIB names no library");
	for (i = 0; i < DL_THREADS; i++) {
		d[i].w.seed = i + 1;
		ASSERT_EQ(0, pthread_create(&d[i].w.tid, NULL, dl_thread,
					    &d[i]));
	}

	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	ASSERT_TRUE(h != NULL) TH_LOG("dlopen: %s", dlerror());
	opened.sched_getcpu = (int (*)(void))dlsym(h, "sched_getcpu");
	opened.getcpu = (int (*)(unsigned int *cpu, unsigned int *node))
		dlsym(h, "getcpu");
	ASSERT_TRUE(opened.sched_getcpu && opened.getcpu);
	EXPECT_EQ(0, check_each(&opened, why)) TH_LOG("%s", why);
	__atomic_store_n(&dl_calls, &opened, __ATOMIC_RELEASE);
	EXPECT_EQ(0, dl_wait(d, 10));

	/* The workers keep calling &opened: valid only if it stays. */
	dlclose(h);
	again = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
	EXPECT_TRUE(again != NULL) TH_LOG("dlclose() unmapped the library");
	if (again)
		dlclose(again);
	else
		__atomic_store_n(&dl_calls, NULL, __ATOMIC_RELEASE);

	for (i = 0; i < DL_CYCLES; i++) {
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		ASSERT_TRUE(h != NULL) TH_LOG("dlopen: %s", dlerror());
		dlclose(h);
	}
	ASSERT_EQ(0, pthread_create(&after.tid, NULL, each_cpu_thread, &after));
	pthread_join(after.tid, NULL);
	EXPECT_EQ(0, after.failed) TH_LOG("thread after: %s", after.why);
	if (again)
		EXPECT_EQ(0, dl_wait(d, 10));

	for (i = 0; i < DL_THREADS; i++) {
		__atomic_store_n(&d[i].stop, 1, __ATOMIC_RELAXED);
		pthread_join(d[i].w.tid, NULL);
		EXPECT_EQ(0, d[i].w.failed) TH_LOG("thread %d: %s", i,
						   d[i].w.why);
	}
	EXPECT_EQ(0, check_each(&global_calls, why)) TH_LOG("%s", why);
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], EXEC_CHECK))
		return exec_check();
	if (preload_relaunch_asked(argc, argv))
		return preload_relaunch(argc, argv);
	return test_harness_run(argc, argv);
}
