// SPDX-License-Identifier: GPL-2.0
/*
 * pda_bench: the guest half of `make bench` (scripts/harness/bench.py).
 *
 * Booted under "qemu -icount shift=0" (with "pda.icount" on the kernel
 * command line), every guest instruction advances virtual time by 1 ns.
 * On x86 the TSC then reads QEMU's virtual clock, so a difference of two
 * RDTSCs is the number of instructions the guest ran in between, on every
 * vCPU (TCG runs them in turn on one host thread).  On ARM the clock is
 * CLOCK_MONOTONIC from the architected timer, whose 62.5 MHz counter
 * ticks once per 16 instructions; totals are divided by thousands of
 * iterations.  QEMU counts each iteration of a REP string instruction as
 * one instruction.
 *
 * What it measures, each as (loop with the operation - the same loop
 * without it) / iterations, repeated REPS times after one warm-up run:
 *
 *	sys.int80		getppid through int $0x80 (x86)
 *	sys.vsyscall		getppid through __kernel_vsyscall (x86)
 *	sys.svc			getppid through svc #0 (ARM)
 *	fault.anon		write fault on a fresh anonymous page, minus the
 *				same write to a page already mapped
 *	ctxsw.same.REG		pipe ping-pong between two threads pinned to
 *				CPU 0, per switch (half a round trip: one
 *				write, one read, one context switch)
 *	ctxsw.cross.REG		the same with the threads on CPUs 0 and 1, per
 *				half round trip, instructions of both CPUs
 *	migrate.REG		one sched_setaffinity() that moves the calling
 *				thread to the other of CPUs 0 and 1
 *
 * REG is what each thread has registered: "none", "rseq" (glibc's
 * registration) or "getcpu_cache" (syscall 463, this series).  glibc
 * registers rseq for every thread, so the program re-executes itself
 * twice: once with GLIBC_TUNABLES=glibc.pthread.rseq=0 for everything
 * but the rseq rows, once with glibc's default for those.
 *
 * Output, one line per row, parsed by the harness:
 *
 *	pda-bench: OP min=X median=Y reps=R iters=N unit=insns|ticks
 *	pda-bench: OP n/a REASON
 *	pda-bench: info KEY=VALUE
 *
 * X and Y have two decimals.  Exit 0, or 1 if something that must work
 * (a pipe, a thread, a mapping) failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../guest/lib/cmdline.h"

#define REPS			7
#define SYS_ITERS		2000
#define FAULT_PAGES		256
#define PINGPONG_ITERS		400
#define MIGRATE_ITERS		100
#define PAGE			4096

static const char *unit = "insns";

#define NR_GETCPU_CACHE		463	/* this series, Linux 6.12 only */
#define GETCPU_CACHE_SET	1

#if defined(__x86_64__)
#define NR_GETPPID		110
#else
#define NR_GETPPID		64	/* i386 and ARM EABI alike */
#endif

/* Which build this is: a 32-bit one may run on a 64-bit kernel. */
#if defined(__x86_64__)
#define BUILD			"x86_64"
#elif defined(__i386__)
#define BUILD			"i386"
#else
#define BUILD			"arm"
#endif

enum reg { REG_NONE, REG_RSEQ, REG_GETCPU_CACHE };

static const char * const reg_name[] = {
	[REG_NONE] = "none",
	[REG_RSEQ] = "rseq",
	[REG_GETCPU_CACHE] = "getcpu_cache",
};

static int failed;
static int ncpus;

/* ----------------------------------------------------------------- clock */

#if defined(__i386__) || defined(__x86_64__)
static inline uint64_t now(void)
{
	uint32_t lo, hi;

	asm volatile("rdtsc" : "=a" (lo), "=d" (hi) : : "memory");
	return (uint64_t)hi << 32 | lo;
}
#else
static inline uint64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}
#endif

/* ---------------------------------------------------------------- output */

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* @cost[REPS]: per repetition, instructions for @iters operations. */
static void report(const char *op, int64_t *cost, unsigned long iters)
{
	qsort(cost, REPS, sizeof(*cost), cmp_i64);
	printf("pda-bench: %s min=%.2f median=%.2f reps=%d iters=%lu unit=%s\n",
	       op, (double)cost[0] / iters, (double)cost[REPS / 2] / iters,
	       REPS, iters, unit);
	fflush(stdout);
}

static void not_available(const char *op, const char *why)
{
	printf("pda-bench: %s n/a %s\n", op, why);
	fflush(stdout);
}

static void broken(const char *op, const char *what)
{
	printf("pda-bench: %s FAILED %s: %s\n", op, what, strerror(errno));
	fflush(stdout);
	failed = 1;
}

/* --------------------------------------------------------- null syscall */

/*
 * Each loop is one asm block, made by one macro with and without the
 * operation, so the loop without it is the same instructions minus
 * exactly the operation.
 */
#if defined(__i386__)
static unsigned long vsyscall_entry;

/* __kernel_vsyscall keeps every register but %eax. */
#define SYS_LOOP(name, op)						\
static void name(unsigned long n)					\
{									\
	asm volatile("1:\n\tmovl %[nr], %%eax\n\t" op			\
		     "decl %%ecx\n\tjnz 1b"				\
		     : "+c" (n)						\
		     : [nr] "i" (NR_GETPPID), [vs] "S" (vsyscall_entry)	\
		     : "eax", "memory", "cc");				\
}

SYS_LOOP(loop_int80, "int $0x80\n\t")
SYS_LOOP(loop_vsyscall, "call *%[vs]\n\t")
SYS_LOOP(loop_sys_empty, "")

/* Which instruction __kernel_vsyscall enters the kernel with. */
static const char *vsyscall_kind(void)
{
	const unsigned char *p = (const unsigned char *)vsyscall_entry;
	int i;

	for (i = 0; p && i < 48; i++) {
		if (p[i] == 0x0f && p[i + 1] == 0x34)
			return "sysenter";
		if (p[i] == 0x0f && p[i + 1] == 0x05)
			return "syscall";
		if (p[i] == 0xcd && p[i + 1] == 0x80)
			return "int80";
	}
	return "unknown";
}
#elif defined(__arm__)
/* r7 carries the syscall number; it may be Thumb's frame pointer. */
#define SYS_LOOP(name, op)						\
static void name(unsigned long n)					\
{									\
	register unsigned long cnt asm("r4") = n;			\
									\
	asm volatile("push {r7}\n"					\
		     "1:\n\tmov r7, %[nr]\n\t" op			\
		     "subs %[c], %[c], #1\n\tbne 1b\n\tpop {r7}"	\
		     : [c] "+r" (cnt) : [nr] "i" (NR_GETPPID)		\
		     : "r0", "memory", "cc");				\
}

SYS_LOOP(loop_svc, "svc #0\n\t")
SYS_LOOP(loop_sys_empty, "")
#elif defined(__x86_64__)
/* SYSCALL clobbers %rcx (the return address) and %r11 (the flags). */
#define SYS_LOOP(name, op)						\
static void name(unsigned long n)					\
{									\
	asm volatile("1:\n\tmovl %[nr], %%eax\n\t" op			\
		     "decq %[c]\n\tjnz 1b"				\
		     : [c] "+r" (n) : [nr] "i" (NR_GETPPID)		\
		     : "rax", "rcx", "r11", "memory", "cc");		\
}

SYS_LOOP(loop_syscall, "syscall\n\t")
SYS_LOOP(loop_sys_empty, "")
#endif

static void bench_loop(const char *op, void (*with)(unsigned long),
		       void (*without)(unsigned long), unsigned long iters)
{
	int64_t cost[REPS];
	uint64_t t0, t1, t2;
	int r;

	for (r = -1; r < REPS; r++) {
		t0 = now();
		with(iters);
		t1 = now();
		without(iters);
		t2 = now();
		if (r >= 0)
			cost[r] = (int64_t)(t1 - t0) - (int64_t)(t2 - t1);
	}
	report(op, cost, iters);
}

/* ----------------------------------------------------------- page fault */

static void __attribute__((noinline)) touch(volatile char *p, unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		p[i * PAGE] = 1;
}

static void bench_fault(void)
{
	const char *op = "fault.anon";
	int64_t cost[REPS];
	uint64_t t0, t1, t2;
	char *p;
	int r;

	for (r = -1; r < REPS; r++) {
		p = mmap(NULL, FAULT_PAGES * PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			broken(op, "mmap");
			return;
		}
		t0 = now();
		touch(p, FAULT_PAGES);
		t1 = now();
		touch(p, FAULT_PAGES);
		t2 = now();
		munmap(p, FAULT_PAGES * PAGE);
		if (r >= 0)
			cost[r] = (int64_t)(t1 - t0) - (int64_t)(t2 - t1);
	}
	report(op, cost, FAULT_PAGES);
}

/* ------------------------------------------------------- registrations */

static __thread int32_t gcc_word = -1;
static const char *gcc_missing;		/* why getcpu_cache is n/a, or NULL */

/* In a thread of its own: its registration ends with it. */
static void *gcc_probe_thread(void *arg)
{
	int32_t *p = &gcc_word;

	(void)arg;
	if (syscall(NR_GETCPU_CACHE, GETCPU_CACHE_SET, &p, 0) == 0) {
		gcc_missing = gcc_word >= 0 ? NULL :
			"registered, but the kernel did not store the CPU";
		return NULL;
	}
	gcc_missing = errno == ENOSYS ? "getcpu_cache(2): ENOSYS" :
		"getcpu_cache(2) SET failed";
	return NULL;
}

static void gcc_probe(void)
{
	struct utsname u;
	pthread_t tid;

	/* 6.13 and later gave 463 to setxattrat(2). */
	if (uname(&u) || strncmp(u.release, "6.12.", 5)) {
		gcc_missing = "not a 6.12 kernel (463 is another call there)";
		return;
	}
	errno = pthread_create(&tid, NULL, gcc_probe_thread, NULL);
	if (errno) {
		gcc_missing = "cannot start a thread to probe it";
		return;
	}
	pthread_join(tid, NULL);
}

/* Registers this thread as @reg asks; 0, or -1 with errno. */
static int thread_register(enum reg reg)
{
	int32_t *p = &gcc_word;

	if (reg == REG_GETCPU_CACHE)
		return syscall(NR_GETCPU_CACHE, GETCPU_CACHE_SET, &p, 0);
	if (reg == REG_RSEQ && !__rseq_size) {
		errno = ENOSYS;
		return -1;
	}
	return 0;
}

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* --------------------------------------------------------- ping-pong */

/*
 * Both sides are new threads, so that each has exactly the registration
 * asked for (a new thread starts with no getcpu_cache registration) and
 * loses it when it ends.
 */
struct pingpong {
	int to_b[2], to_a[2];
	int cpu_b;
	enum reg reg;
	int64_t cost[REPS];
	const char *err;
	int err_no;
};

static void pp_fail(struct pingpong *pp, const char *what)
{
	if (!pp->err) {
		pp->err = what;
		pp->err_no = errno;
	}
}

static void *pong(void *arg)
{
	struct pingpong *pp = arg;
	char c;

	if (pin(pp->cpu_b) || thread_register(pp->reg)) {
		pp_fail(pp, "pin or register (B)");
		close(pp->to_a[1]);
		return NULL;
	}
	while (read(pp->to_b[0], &c, 1) == 1 && c != 'q')
		if (write(pp->to_a[1], &c, 1) != 1)
			break;
	return NULL;
}

static int round_trips(struct pingpong *pp, unsigned long n)
{
	char c = 'p';

	while (n--)
		if (write(pp->to_b[1], &c, 1) != 1 ||
		    read(pp->to_a[0], &c, 1) != 1)
			return -1;
	return 0;
}

static void *ping(void *arg)
{
	struct pingpong *pp = arg;
	uint64_t t0, t1;
	pthread_t tid;
	int r;

	if (pin(0) || thread_register(pp->reg)) {
		pp_fail(pp, "pin or register (A)");
		return NULL;
	}
	errno = pthread_create(&tid, NULL, pong, pp);
	if (errno) {
		pp_fail(pp, "pthread_create");
		return NULL;
	}
	for (r = -1; r < REPS; r++) {
		t0 = now();
		if (round_trips(pp, PINGPONG_ITERS)) {
			pp_fail(pp, "ping-pong");
			break;
		}
		t1 = now();
		if (r >= 0)
			pp->cost[r] = (int64_t)(t1 - t0);
	}
	if (write(pp->to_b[1], "q", 1) != 1)
		pp_fail(pp, "stop");
	pthread_join(tid, NULL);
	return NULL;
}

static void bench_pingpong(const char *where, int cpu_b, enum reg reg)
{
	struct pingpong pp = { .cpu_b = cpu_b, .reg = reg };
	pthread_t tid;
	char op[64];

	snprintf(op, sizeof(op), "ctxsw.%s.%s", where, reg_name[reg]);
	if (cpu_b >= ncpus) {
		not_available(op, "one CPU");
		return;
	}
	if (reg == REG_GETCPU_CACHE && gcc_missing) {
		not_available(op, gcc_missing);
		return;
	}
	if (pipe(pp.to_b) || pipe(pp.to_a)) {
		broken(op, "pipe");
		return;
	}
	errno = pthread_create(&tid, NULL, ping, &pp);
	if (errno)
		pp_fail(&pp, "pthread_create");
	else
		pthread_join(tid, NULL);
	if (pp.err) {
		errno = pp.err_no;
		broken(op, pp.err);
	} else {
		report(op, pp.cost, 2 * PINGPONG_ITERS);
	}
	close(pp.to_b[0]);
	close(pp.to_b[1]);
	close(pp.to_a[0]);
	close(pp.to_a[1]);
}

/* ---------------------------------------------------------- migration */

/*
 * In a new thread, so that the registration is that thread's own and
 * gone when it ends.  An even number of moves ends on CPU 0, where the
 * clock was read first.
 */
struct migrate {
	enum reg reg;
	int64_t cost[REPS];
	int err;
};

static void *migrator(void *arg)
{
	struct migrate *m = arg;
	uint64_t t0, t1;
	unsigned long i;
	int r;

	if (pin(0) || thread_register(m->reg)) {
		m->err = errno;
		return NULL;
	}
	for (r = -1; r < REPS; r++) {
		t0 = now();
		for (i = 0; i < 2 * MIGRATE_ITERS; i++)
			if (pin(i & 1 ? 0 : 1)) {
				m->err = errno;
				return NULL;
			}
		t1 = now();
		if (r >= 0)
			m->cost[r] = (int64_t)(t1 - t0);
	}
	return NULL;
}

static void bench_migrate(enum reg reg)
{
	struct migrate m = { .reg = reg };
	pthread_t tid;
	char op[64];

	snprintf(op, sizeof(op), "migrate.%s", reg_name[reg]);
	if (ncpus < 2) {
		not_available(op, "one CPU");
		return;
	}
	if (reg == REG_GETCPU_CACHE && gcc_missing) {
		not_available(op, gcc_missing);
		return;
	}
	errno = pthread_create(&tid, NULL, migrator, &m);
	if (errno) {
		broken(op, "pthread_create");
		return;
	}
	pthread_join(tid, NULL);
	if (m.err) {
		errno = m.err;
		broken(op, "sched_setaffinity or register");
		return;
	}
	report(op, m.cost, 2 * MIGRATE_ITERS);
}

/* --------------------------------------------------------------- suites */

static void suite_norseq(void)
{
	if (pin(0))
		broken("suite", "pin to CPU 0");
	if (__rseq_size) {
		errno = EEXIST;
		broken("suite", "glibc registered rseq despite the tunable");
		return;
	}
#if defined(__i386__)
	bench_loop("sys.int80", loop_int80, loop_sys_empty, SYS_ITERS);
	vsyscall_entry = getauxval(AT_SYSINFO);
	if (vsyscall_entry) {
		printf("pda-bench: info vsyscall_entry=%s\n", vsyscall_kind());
		bench_loop("sys.vsyscall", loop_vsyscall, loop_sys_empty,
			   SYS_ITERS);
	} else {
		not_available("sys.vsyscall", "no AT_SYSINFO");
	}
#elif defined(__arm__)
	bench_loop("sys.svc", loop_svc, loop_sys_empty, SYS_ITERS);
#elif defined(__x86_64__)
	bench_loop("sys.syscall", loop_syscall, loop_sys_empty, SYS_ITERS);
#endif
	bench_fault();
	gcc_probe();
	bench_pingpong("same", 0, REG_NONE);
	bench_pingpong("same", 0, REG_GETCPU_CACHE);
	bench_pingpong("cross", 1, REG_NONE);
	bench_pingpong("cross", 1, REG_GETCPU_CACHE);
	bench_migrate(REG_NONE);
	bench_migrate(REG_GETCPU_CACHE);
}

static void suite_rseq(void)
{
	if (pin(0))
		broken("suite", "pin to CPU 0");
	if (!__rseq_size) {
		not_available("ctxsw.same.rseq", "glibc did not register rseq");
		not_available("ctxsw.cross.rseq", "glibc did not register rseq");
		not_available("migrate.rseq", "glibc did not register rseq");
		return;
	}
	bench_pingpong("same", 0, REG_RSEQ);
	bench_pingpong("cross", 1, REG_RSEQ);
	bench_migrate(REG_RSEQ);
}

/* Runs this program again as "pda_bench SUITE" with exactly @env. */
static int run_suite(const char *self, const char *suite, char **env)
{
	char *argv[] = { (char *)self, (char *)suite, NULL };
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid) {
		execve("/proc/self/exe", argv, env);
		perror("execve /proc/self/exe");
		_exit(1);
	}
	if (waitpid(pid, &status, 0) != pid)
		return 1;
	return !WIFEXITED(status) || WEXITSTATUS(status);
}

int main(int argc, char **argv)
{
	char *norseq_env[] = { "GLIBC_TUNABLES=glibc.pthread.rseq=0", NULL };
	char *rseq_env[] = { NULL };
	struct utsname u;
	int bad;

	ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	/* Without -icount the figures are clock ticks, not instructions. */
	if (!cmdline_has("pda.icount"))
		unit = "ticks";
	if (argc == 2 && !strcmp(argv[1], "norseq")) {
		suite_norseq();
		return failed;
	}
	if (argc == 2 && !strcmp(argv[1], "rseq")) {
		suite_rseq();
		return failed;
	}
	if (argc != 1) {
		fprintf(stderr, "usage: pda_bench\n");
		return 2;
	}
	uname(&u);
	printf("pda-bench: info kernel=%s machine=%s build=%s cpus=%d clock=%s\n",
	       u.release, u.machine, BUILD, ncpus,
#if defined(__i386__) || defined(__x86_64__)
	       cmdline_has("pda.icount") ? "icount-tsc" : "tsc"
#else
	       cmdline_has("pda.icount") ? "icount-monotonic" : "monotonic"
#endif
	       );
	bad = run_suite(argv[0], "norseq", norseq_env);
	bad |= run_suite(argv[0], "rseq", rseq_env);
	return bad;
}
