/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared parts of the tlb_* guest tests: do the memory accesses of every
 * thread, on every CPU, see what a TLB flush promised (mprotect,
 * MADV_DONTNEED, munmap/mmap, COW, migration, hotplug)?
 *
 * The tests want the flushing thread's mm to run on that CPU only at the
 * moment of the flush.  An arm64 kernel with CONFIG_ARM64_TLBI_LOCAL then
 * flushes with a local TLBI (or none) and leaves every other CPU to flush
 * the ASID before the mm runs there again ("catch-up"); a kernel without
 * it broadcasts.  Either way the accesses after the flush must see the new
 * state; the /proc/vmstat tlbi_* counters show which path each of the
 * test's flushes took, and TLB_PATHS_EXPECT() holds it to the one the
 * mode calls for.
 *
 * A CPU stops counting an mm only when it switches to another process's
 * mm (an idle CPU keeps the last one, lazily), so blocking the test's
 * threads is not enough: every CPU but the flusher's has an "occupier", a
 * forked child pinned to it.  tlb_occupy() wakes the occupiers, waits
 * until each has run on its CPU, and lets them block again; a CPU whose
 * test threads are blocked then holds the occupier's mm, not the test's.
 *
 * The pieces:
 * - struct tlb_env: the online CPUs, the occupiers, a pool of worker
 *   threads (one job at a time each, BLOCKED in a futex between jobs), a
 *   failure log in MAP_SHARED memory (a forked child logs there too);
 * - tlb_move(): pin the caller to a CPU and check sched_getcpu();
 * - tlb_probe_read/write/scan(): an access that may fault, SIGSEGV and
 *   SIGBUS caught with sigsetjmp/siglongjmp, fault address recorded;
 * - tlb_run(), tlb_wait_counts(): jobs on the workers, and the waits of
 *   the concurrent phases;
 * - struct tlb_paths and TLB_PATHS_EXPECT(), on lib/tlb_vmstat.h's
 *   counters: the checks that the test's own flushes took the path the
 *   mode and tlbi_local call for;
 * - a shared-memory file for the remap tests (memfd, /dev/shm, /tmp) and
 *   the MADV_DONTNEED probe.
 *
 * lib/tlb_rounds.h builds the rounds and the cases of the tests on these.
 *
 * Header only.  Wants _GNU_SOURCE before the first #include, and
 * kselftest_harness.h included before it (the reporting helpers use
 * TH_LOG and EXPECT_*).
 */
#ifndef PDA_TESTS_TLB_TEST_H
#define PDA_TESTS_TLB_TEST_H

#ifndef TH_LOG
#error "include kselftest_harness.h before lib/tlb_test.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmdline.h"
#include "klog.h"
#include "pda_test.h"
#include "stat.h"
#include "tlb_vmstat.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif
#ifndef MADV_DONTNEED
#define MADV_DONTNEED		4
#endif

#define TLB_MAX_CPUS		CPU_SETSIZE
#define TLB_LOG_MAX		12
#define TLB_LOG_LEN		320
/*
 * How long an occupier or a worker may take to get going, per 4 online
 * CPUs (tlb_wait_ns()): with 64 vCPUs sharing a 2-core host, a worker of
 * tlb_madv_dontneed's concurrent case took more than 30 s for 4 passes.
 */
#define TLB_WAIT_NS		(30ULL * 1000000000ULL)
/* How long to wait for a worker to be seen asleep before flushing. */
#define TLB_BLOCKED_NS		(200ULL * 1000000ULL)
/* The CPUs a worker visits after a flush: all of them, up to this many. */
#define TLB_MAX_VISITS		8
/* The harness's per-test timeout; init's (pda.timeout) comes first. */
#define TLB_TIMEOUT		1800

/* ------------------------------------------------------------ futex */

static inline long tlb_futex(uint32_t *word, int op, uint32_t val)
{
	return syscall(SYS_futex, word, op, val, NULL, NULL, 0);
}

/* Sleeps while *@word == @val; @shared: the word is in MAP_SHARED memory. */
static inline void tlb_futex_wait(uint32_t *word, uint32_t val, int shared)
{
	tlb_futex(word, shared ? FUTEX_WAIT : FUTEX_WAIT_PRIVATE, val);
}

static inline void tlb_futex_wake(uint32_t *word, int shared)
{
	tlb_futex(word, shared ? FUTEX_WAKE : FUTEX_WAKE_PRIVATE, INT32_MAX);
}

/* A short pause in a wait loop: yield first, then sleep (TCG vCPUs idle). */
static inline void tlb_pause(unsigned long *spins)
{
	if ((*spins)++ < 64)
		sched_yield();
	else
		usleep(100);
}

/* -------------------------------------------------------------- log */

/*
 * Who the calling thread is, for failure messages: "main", "worker 3",
 * "child".  Each thread sets its own.
 */
static __thread char tlb_who[24] = "main";

/* The failures of a test, from any thread or forked child (MAP_SHARED). */
struct tlb_log {
	unsigned int count;
	unsigned long long probes;	/* accesses whose outcome was checked */
	char msg[TLB_LOG_MAX][TLB_LOG_LEN];
};

struct tlb_env;
static inline void tlb_fail(struct tlb_env *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ---------------------------------------------------------- probes */

/*
 * One access that may fault.  The handler jumps back into the probe that
 * armed it; a fault outside a probe restores the default action and
 * returns, so the access faults again and the test dies of the signal.
 */
struct tlb_probe {
	sigjmp_buf env;
	volatile int armed;
	volatile int sig;
	volatile int code;
	void *volatile addr;
};

static __thread struct tlb_probe tlb_probe_tls;

/*
 * The test's count of probes, for the reliability figures: tlb_log's,
 * shared with forked children.  NULL before tlb_env_init().
 */
static unsigned long long *tlb_probes;

static inline void tlb_probe_counted(void)
{
	if (tlb_probes)
		__atomic_fetch_add(tlb_probes, 1, __ATOMIC_RELAXED);
}

static void tlb_probe_handler(int sig, siginfo_t *si, void *uc)
{
	struct tlb_probe *p = &tlb_probe_tls;
	struct sigaction dfl;

	(void)uc;
	if (!p->armed) {
		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		sigaction(sig, &dfl, NULL);
		return;
	}
	p->armed = 0;
	p->sig = sig;
	p->code = si->si_code;
	p->addr = si->si_addr;
	siglongjmp(p->env, 1);
}

/* The handler for SIGSEGV and SIGBUS, for the whole process. */
static inline int tlb_probe_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = tlb_probe_handler;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, NULL) || sigaction(SIGBUS, &sa, NULL))
		return -errno;
	return 0;
}

/* The last fault a probe of this thread caught. */
static inline void *tlb_probe_addr(void)
{
	return tlb_probe_tls.addr;
}

static inline int tlb_probe_code(void)
{
	return tlb_probe_tls.code;
}

/*
 * Reads *@p into *@val.  0, or the signal (SIGSEGV, SIGBUS) the read
 * raised; tlb_probe_addr() and tlb_probe_code() then say where and why.
 * sigsetjmp() saves the signal mask, so the longjmp out of the handler
 * unblocks the signal again.
 */
static inline int tlb_probe_read(const volatile uint32_t *p, uint32_t *val)
{
	struct tlb_probe *pr = &tlb_probe_tls;

	if (sigsetjmp(pr->env, 1)) {
		tlb_probe_counted();
		return pr->sig;
	}
	pr->armed = 1;
	*val = *p;
	pr->armed = 0;
	tlb_probe_counted();
	return 0;
}

/* Writes @v to *@p.  0, or the signal the write raised. */
static inline int tlb_probe_write(volatile uint32_t *p, uint32_t v)
{
	struct tlb_probe *pr = &tlb_probe_tls;

	if (sigsetjmp(pr->env, 1)) {
		tlb_probe_counted();
		return pr->sig;
	}
	pr->armed = 1;
	*p = v;
	pr->armed = 0;
	tlb_probe_counted();
	return 0;
}

/*
 * Reads @n words from @p, word i expected to be @base + i * @step.
 * Returns 0 and sets *@bad to @n if all are, or to the first index that
 * is not, with its value in *@got; or the signal a read raised.
 */
static inline int tlb_probe_scan(const volatile uint32_t *p, size_t n,
				 uint32_t base, uint32_t step, size_t *bad,
				 uint32_t *got)
{
	struct tlb_probe *pr = &tlb_probe_tls;
	size_t i;

	if (sigsetjmp(pr->env, 1)) {
		tlb_probe_counted();
		return pr->sig;
	}
	pr->armed = 1;
	for (i = 0; i < n; i++) {
		uint32_t v = p[i];

		if (v != base + (uint32_t)i * step) {
			*got = v;
			break;
		}
	}
	pr->armed = 0;
	*bad = i;
	tlb_probe_counted();
	return 0;
}

/* "SIGSEGV (SEGV_ACCERR) at 0x..." for a failure message. */
static inline const char *tlb_sig_str(int sig, char *buf, size_t len)
{
	const char *code = "";

	if (!sig)
		return "no fault";
	if (sig == SIGSEGV)
		code = tlb_probe_code() == SEGV_ACCERR ? " (SEGV_ACCERR)" :
		       tlb_probe_code() == SEGV_MAPERR ? " (SEGV_MAPERR)" : "";
	snprintf(buf, len, "%s%s at %p", strsignal(sig), code,
		 tlb_probe_addr());
	return buf;
}

/* --------------------------------------------------------- occupiers */

/* One occupier's words; a cache line each. */
struct tlb_occ_slot {
	alignas(64) uint32_t go;	/* futex: bumped to ask for a visit */
	uint32_t ack;			/* the go it last ran for, on its CPU */
	int cpu;
	int online;			/* 0 while the test has its CPU offline */
	uint32_t misses;		/* visits not on its CPU (pin failed) */
};

struct tlb_occ_ctl {			/* MAP_SHARED: the test and occupiers */
	uint32_t exit;
	struct tlb_occ_slot slot[TLB_MAX_CPUS];
};

/*
 * The occupier of CPU @s->cpu: on every bump of its go word it (re)pins
 * itself there, acks if it runs there, and blocks again.  Its CPU then
 * keeps this process's mm (lazily) until a thread of another process runs
 * there.  It touches nothing but its slot and its stack.
 */
static inline void __attribute__((noreturn))
tlb_occupier(struct tlb_occ_ctl *c, struct tlb_occ_slot *s)
{
	uint32_t seen = 0;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (;;) {
		uint32_t g = __atomic_load_n(&s->go, __ATOMIC_ACQUIRE);

		if (__atomic_load_n(&c->exit, __ATOMIC_RELAXED))
			_exit(0);
		if (g == seen) {
			tlb_futex_wait(&s->go, g, 1);
			continue;
		}
		seen = g;
		if (sched_getcpu() != s->cpu)
			pda_test_pin(s->cpu);
		if (sched_getcpu() == s->cpu)
			__atomic_store_n(&s->ack, g, __ATOMIC_RELEASE);
		else
			__atomic_fetch_add(&s->misses, 1, __ATOMIC_RELAXED);
	}
}

/* ----------------------------------------------------------- workers */

struct tlb_worker;
typedef void (*tlb_job_fn)(struct tlb_worker *w, void *arg);

/* A thread of the test's mm that runs one job at a time. */
struct tlb_worker {
	alignas(64) uint32_t go;	/* futex: bumped for each job */
	uint32_t done;			/* futex: set to go when it ended */
	int stop;
	int idx;
	pid_t tid;
	tlb_job_fn fn;
	void *arg;
	struct tlb_env *env;
	pthread_t thread;
	int started;
};

/* ------------------------------------------------------------ the env */

struct tlb_env {
	int ncpus;
	int cpus[TLB_MAX_CPUS];		/* online at the start, lowest first */
	size_t page;			/* sysconf(_SC_PAGESIZE) */
	long round;			/* for failure messages; main sets it */
	struct tlb_log *log;		/* MAP_SHARED */
	struct tlb_occ_ctl *occ;	/* MAP_SHARED */
	pid_t occ_pid[TLB_MAX_CPUS];
	int nocc;
	struct tlb_worker *w;		/* nworkers of them */
	int nworkers;
	unsigned long migrations;	/* pins that moved a thread */
};

static inline void tlb_fail(struct tlb_env *e, const char *fmt, ...)
{
	unsigned int n = __atomic_fetch_add(&e->log->count, 1,
					    __ATOMIC_RELAXED);
	va_list ap;
	int len;

	if (n >= TLB_LOG_MAX)
		return;
	len = snprintf(e->log->msg[n], TLB_LOG_LEN, "round %ld, %s on cpu %d: ",
		       __atomic_load_n(&e->round, __ATOMIC_RELAXED), tlb_who,
		       sched_getcpu());
	if (len < 0 || len >= TLB_LOG_LEN)
		return;
	va_start(ap, fmt);
	vsnprintf(e->log->msg[n] + len, TLB_LOG_LEN - len, fmt, ap);
	va_end(ap);
}

static inline unsigned int tlb_failures(struct tlb_env *e)
{
	return __atomic_load_n(&e->log->count, __ATOMIC_ACQUIRE);
}

/* Prints the logged failures and fails the test if there are any. */
#define TLB_EXPECT_NO_FAILURES(e)					\
	do {								\
		unsigned int __n = tlb_failures(e), __i;		\
									\
		for (__i = 0; __i < __n && __i < TLB_LOG_MAX; __i++)	\
			TH_LOG("%s", (e)->log->msg[__i]);		\
		EXPECT_EQ(0, __n) {					\
			TH_LOG("%u failure(s), the first %d above", __n, \
			       TLB_LOG_MAX);				\
		}							\
	} while (0)

/*
 * Pins the calling thread to @cpu and checks that sched_getcpu() agrees.
 * 0, or -1 (logged as a failure).
 */
static inline int tlb_move(struct tlb_env *e, int cpu)
{
	int before = sched_getcpu(), err = pda_test_pin(cpu), now;

	if (err) {
		tlb_fail(e, "cannot pin to cpu %d: %s", cpu, strerror(-err));
		return -1;
	}
	now = sched_getcpu();
	if (now != cpu) {
		tlb_fail(e, "pinned to cpu %d, but sched_getcpu() says %d",
			 cpu, now);
		return -1;
	}
	if (before != cpu)
		__atomic_fetch_add(&e->migrations, 1, __ATOMIC_RELAXED);
	return 0;
}

/*
 * The @k-th CPU a thread whose home is cpus[@i] visits after a flush:
 * its home first (k == 0), then the others in turn, at most
 * TLB_MAX_VISITS in all (tlb_nvisits()).
 */
static inline int tlb_visit(const struct tlb_env *e, int i, int k)
{
	return e->cpus[(i + k) % e->ncpus];
}

static inline int tlb_nvisits(const struct tlb_env *e)
{
	return e->ncpus < TLB_MAX_VISITS ? e->ncpus : TLB_MAX_VISITS;
}

static void *tlb_worker_main(void *arg)
{
	struct tlb_worker *w = arg;
	uint32_t seen = 0;

	snprintf(tlb_who, sizeof(tlb_who), "worker %d", w->idx);
	w->tid = syscall(SYS_gettid);
	for (;;) {
		uint32_t g = __atomic_load_n(&w->go, __ATOMIC_ACQUIRE);

		if (g == seen) {
			tlb_futex_wait(&w->go, g, 0);
			continue;
		}
		seen = g;
		if (w->stop)
			break;
		w->fn(w, w->arg);
		__atomic_store_n(&w->done, g, __ATOMIC_RELEASE);
		tlb_futex_wake(&w->done, 0);
	}
	return NULL;
}

/* Starts @fn(@w, @arg) in worker @w; it must be idle. */
static inline void tlb_worker_start(struct tlb_worker *w, tlb_job_fn fn,
				    void *arg)
{
	w->fn = fn;
	w->arg = arg;
	__atomic_store_n(&w->go, w->go + 1, __ATOMIC_RELEASE);
	tlb_futex_wake(&w->go, 0);
}

/* Waits until @w's job has ended. */
static inline void tlb_worker_wait(struct tlb_worker *w)
{
	uint32_t d;

	while ((d = __atomic_load_n(&w->done, __ATOMIC_ACQUIRE)) != w->go)
		tlb_futex_wait(&w->done, d, 0);
}

/* The scheduler state of thread @tid of this process ('S', 'R'...), or 0. */
static inline char tlb_thread_state(pid_t tid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/*
 * Waits until @w is asleep in its futex (best effort: at most
 * TLB_BLOCKED_NS, and not at all without /proc).  A worker that has
 * published "done" but not yet blocked could still run on its CPU after
 * the occupier did, and the flush would then (rightly) broadcast.
 */
static inline void tlb_worker_wait_blocked(struct tlb_worker *w)
{
	uint64_t end = pda_test_now_ns() + TLB_BLOCKED_NS;
	unsigned long spins = 0;
	char st;

	while ((st = tlb_thread_state(w->tid)) == 'R' &&
	       pda_test_now_ns() < end)
		tlb_pause(&spins);
}

/* Runs @fn on workers 0..@n-1 at once; returns when all have blocked. */
static inline void tlb_run(struct tlb_env *e, int n, tlb_job_fn fn, void *arg)
{
	int i;

	for (i = 0; i < n; i++)
		tlb_worker_start(&e->w[i], fn, arg);
	for (i = 0; i < n; i++)
		tlb_worker_wait(&e->w[i]);
	for (i = 0; i < n; i++)
		tlb_worker_wait_blocked(&e->w[i]);
}

/* TLB_WAIT_NS for every 4 of the test's CPUs (at least once). */
static inline uint64_t tlb_wait_ns(const struct tlb_env *e)
{
	return TLB_WAIT_NS * (e->ncpus > 4 ? (uint64_t)(e->ncpus + 3) / 4 : 1);
}

/*
 * For the concurrent phases: waits until *@count of every worker
 * (@count[i * @stride] for worker i) is at least @min.  0, or -1 once a
 * failure is logged (by anyone) or tlb_wait_ns() passed.
 */
static inline int tlb_wait_counts(struct tlb_env *e,
				  const unsigned long *count, size_t stride,
				  unsigned long min, const char *what)
{
	uint64_t end = pda_test_now_ns() + tlb_wait_ns(e);
	int i;

	for (i = 0; i < e->nworkers; i++) {
		unsigned long spins = 0;

		while (__atomic_load_n(&count[i * stride], __ATOMIC_RELAXED) <
		       min) {
			if (tlb_failures(e))
				return -1;
			if (pda_test_now_ns() > end) {
				tlb_fail(e, "worker %d made no %lu %s within %llu s",
					 i, min, what,
					 tlb_wait_ns(e) / 1000000000ULL);
				return -1;
			}
			tlb_pause(&spins);
		}
	}
	return 0;
}

/*
 * Visits every CPU but @except (-1: every CPU) with its occupier, and
 * waits until each has run there.  Call it with the test's other threads
 * blocked: afterwards no CPU but @except holds the test's mm.  0, or -1
 * (logged as a failure).
 */
static inline int tlb_occupy(struct tlb_env *e, int except)
{
	uint32_t want[TLB_MAX_CPUS];
	uint64_t end = pda_test_now_ns() + tlb_wait_ns(e);
	int i, ret = 0;

	for (i = 0; i < e->nocc; i++) {
		struct tlb_occ_slot *s = &e->occ->slot[i];

		want[i] = 0;
		if (s->cpu == except || !s->online)
			continue;
		want[i] = s->go + 1;
		__atomic_store_n(&s->go, want[i], __ATOMIC_RELEASE);
		tlb_futex_wake(&s->go, 1);
	}
	for (i = 0; i < e->nocc; i++) {
		struct tlb_occ_slot *s = &e->occ->slot[i];
		unsigned long spins = 0;

		if (!want[i])
			continue;
		while (__atomic_load_n(&s->ack, __ATOMIC_ACQUIRE) != want[i]) {
			if (pda_test_now_ns() > end) {
				tlb_fail(e, "the occupier of cpu %d did not run there within %llu s (%u misses)",
					 s->cpu, tlb_wait_ns(e) / 1000000000ULL,
					 s->misses);
				ret = -1;
				break;
			}
			tlb_pause(&spins);
		}
	}
	return ret;
}

/*
 * How the CPUs other than the flusher's are left at the moment of a
 * flush, the test's threads there all blocked:
 *
 * TLB_OCCUPIED: each has since run its occupier, so the flusher's CPU is
 *   the only one holding the mm: the local (or skipped) flush, and the
 *   catch-up on the CPUs when the mm returns.  (QEMU's TCG flushes a
 *   vCPU's whole TLB whenever a TTBR's ASID changes, so there a missing
 *   catch-up cannot show; on hardware or under KVM it does.)
 * TLB_LAZY: each has been idle since a test thread blocked there, so it
 *   still holds the mm (lazily) and must get the flush; when the thread
 *   wakes the mm never left, so a flush that skipped the CPU shows as a
 *   stale entry, under TCG too.
 */
enum tlb_mode { TLB_OCCUPIED, TLB_LAZY };

static inline const char *tlb_mode_name(enum tlb_mode m)
{
	return m == TLB_OCCUPIED ? "flusher alone in its mm" :
	       "the other CPUs idle, still holding the mm";
}

/* Before a flush on CPU @f: sets the other CPUs up as @m says. */
static inline int tlb_before_flush(struct tlb_env *e, enum tlb_mode m, int f)
{
	return m == TLB_OCCUPIED ? tlb_occupy(e, f) : 0;
}

/* The test took CPU @cpu offline (0) or brought it back (1). */
static inline void tlb_occupier_online(struct tlb_env *e, int cpu, int online)
{
	int i;

	for (i = 0; i < e->nocc; i++)
		if (e->occ->slot[i].cpu == cpu)
			e->occ->slot[i].online = online;
}

static inline void *tlb_shared(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * The online CPUs, an occupier on each, @nworkers workers (worker i's
 * home is cpus[i % ncpus]; @nworkers < 0: one per CPU, at least two), the
 * probe handler.  0, or -1 with the reason in @why.  The occupiers are
 * forked before any worker exists.
 */
static inline int tlb_env_init(struct tlb_env *e, int nworkers, char *why,
			       size_t len)
{
	int i, err;

	memset(e, 0, sizeof(*e));
	e->page = sysconf(_SC_PAGESIZE);
	e->ncpus = pda_test_online(e->cpus, TLB_MAX_CPUS);
	if (e->ncpus < 1) {
		snprintf(why, len, "cannot read %s", PDA_TEST_ONLINE);
		return -1;
	}
	if (e->ncpus >= TLB_MAX_CPUS) {
		snprintf(why, len, "%d CPUs or more: every one needs an occupier",
			 TLB_MAX_CPUS);
		return -1;
	}
	if (nworkers < 0)
		nworkers = e->ncpus < 2 ? 2 : e->ncpus;
	err = tlb_probe_install();
	if (err) {
		snprintf(why, len, "sigaction: %s", strerror(-err));
		return -1;
	}
	e->log = tlb_shared(sizeof(*e->log));
	e->occ = tlb_shared(sizeof(*e->occ));
	if (!e->log || !e->occ) {
		snprintf(why, len, "mmap: %s", strerror(errno));
		return -1;
	}
	tlb_probes = &e->log->probes;
	fflush(stdout);
	fflush(stderr);
	for (i = 0; i < e->ncpus; i++) {
		struct tlb_occ_slot *s = &e->occ->slot[i];
		pid_t pid;

		s->cpu = e->cpus[i];
		s->online = 1;
		pid = fork();
		if (pid < 0) {
			snprintf(why, len, "fork: %s", strerror(errno));
			return -1;
		}
		if (!pid)
			tlb_occupier(e->occ, s);
		e->occ_pid[e->nocc++] = pid;
	}
	/* calloc() does not promise the 64-byte alignment of a worker. */
	if (posix_memalign((void **)&e->w, 64,
			   (nworkers ? nworkers : 1) * sizeof(*e->w))) {
		e->w = NULL;
		snprintf(why, len, "out of memory");
		return -1;
	}
	memset(e->w, 0, (nworkers ? nworkers : 1) * sizeof(*e->w));
	for (i = 0; i < nworkers; i++) {
		struct tlb_worker *w = &e->w[i];

		w->idx = i;
		w->env = e;
		err = pthread_create(&w->thread, NULL, tlb_worker_main, w);
		if (err) {
			snprintf(why, len, "pthread_create: %s", strerror(err));
			return -1;
		}
		w->started = 1;
		e->nworkers++;
	}
	/* Every worker has its tid and is asleep; every occupier pinned. */
	for (i = 0; i < e->nworkers; i++)
		while (!__atomic_load_n(&e->w[i].tid, __ATOMIC_RELAXED))
			sched_yield();
	if (tlb_occupy(e, -1)) {
		size_t l = strnlen(e->log->msg[0], len - 1);

		memcpy(why, e->log->msg[0], l);
		why[l] = '\0';
		return -1;
	}
	return 0;
}

/*
 * Stops the workers and the occupiers.  0, or -1 with the first problem
 * in @why (an occupier that died of a signal, say).
 */
static inline int tlb_env_fini(struct tlb_env *e, char *why, size_t len)
{
	int i, status, ret = 0;

	for (i = 0; e->w && i < e->nworkers; i++) {
		struct tlb_worker *w = &e->w[i];

		if (!w->started)
			continue;
		w->stop = 1;
		__atomic_store_n(&w->go, w->go + 1, __ATOMIC_RELEASE);
		tlb_futex_wake(&w->go, 0);
		pthread_join(w->thread, NULL);
	}
	free(e->w);
	e->w = NULL;
	if (e->occ) {
		__atomic_store_n(&e->occ->exit, 1, __ATOMIC_RELEASE);
		for (i = 0; i < e->nocc; i++) {
			struct tlb_occ_slot *s = &e->occ->slot[i];

			__atomic_add_fetch(&s->go, 1, __ATOMIC_RELEASE);
			tlb_futex_wake(&s->go, 1);
		}
	}
	for (i = 0; i < e->nocc; i++) {
		if (waitpid(e->occ_pid[i], &status, 0) != e->occ_pid[i]) {
			snprintf(why, len, "waitpid(occupier of cpu %d): %s",
				 e->occ->slot[i].cpu, strerror(errno));
			ret = -1;
		} else if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			snprintf(why, len, "the occupier of cpu %d ended with status %#x",
				 e->occ->slot[i].cpu, status);
			ret = -1;
		}
	}
	e->nocc = 0;
	pda_test_unpin();
	if (e->log)
		pda_stat("tlb_checks", e->log->probes);
	return ret;
}

/*
 * The path the test's own flushes took in one phase.  Each flush the test
 * makes with the other CPUs set up as @mode says is counted, and the
 * counters are read right before and after it, so that what others flush
 * meanwhile (the occupiers' forks, the kernel's own) is not credited to
 * it; catch-up comes later, when the mm runs again elsewhere, so it is
 * counted over the whole phase.
 */
struct tlb_paths {
	enum tlb_mode mode;
	int catchup_due;	/* the mm runs on other CPUs after a flush */
	long flushes;
	int missing;		/* some read lacked the counters */
	unsigned long long during[TLB_VM_NR];
	struct tlb_vmstat start, flush_start;
};

static inline void tlb_paths_start(struct tlb_paths *p, enum tlb_mode mode,
				   int catchup_due)
{
	memset(p, 0, sizeof(*p));
	p->mode = mode;
	p->catchup_due = catchup_due;
	tlb_vmstat_read(&p->start);
}

/*
 * Writes 16 KiB of stack below the caller's frame.  After a fork() those
 * pages are copy-on-write, and the first write to one inside a flush's
 * window (tlb_flush_end()'s frame, the counters' read) would break COW
 * with a flush of its own, counted as the test's.
 */
static __attribute__((noinline)) void tlb_touch_stack(void)
{
	volatile char pad[16 * 1024];
	size_t i;

	for (i = 0; i < sizeof(pad); i += 1024)
		pad[i] = 0;
}

/* Around each flush the test makes: before it, */
static inline void tlb_flush_begin(struct tlb_paths *p)
{
	tlb_touch_stack();
	tlb_vmstat_read(&p->flush_start);
}

/* and after it. */
static inline void tlb_flush_end(struct tlb_paths *p)
{
	struct tlb_vmstat now;
	int k;

	tlb_vmstat_read(&now);
	p->flushes++;
	if (p->flush_start.present != TLB_VM_NR || now.present != TLB_VM_NR) {
		p->missing = 1;
		return;
	}
	for (k = 0; k < TLB_VM_NR; k++)
		p->during[k] += tlb_vm_delta(&p->flush_start, &now, k);
}

/*
 * Prints the phase's mode, flushes and counters, and asserts the path
 * they took, each outcome whole.  Booted without tlbi_local=on: nothing
 * counted in the whole phase (mainline's path).  With it, occupied (the
 * flusher's CPU the only one holding the mm): every one of the test's
 * flushes local or skipped and none broadcast, and catch-up where the mm
 * ran elsewhere afterwards; lazy (the other CPUs idle, still holding
 * it): every one broadcast and none local or skipped.  On arm64 the counters must exist: a kernel that lacks them
 * would pass every check unseen.  A kernel that turned the local path off
 * by itself (CnP, say) fails on purpose, quoting its "tlbi_local:" boot
 * message.
 */
#define TLB_PATHS_EXPECT(what, p)					\
	do {								\
		struct tlb_vmstat __end;				\
		unsigned long long __lo, __bc, __cu;			\
		char __says[160];					\
									\
		tlb_vmstat_read(&__end);				\
		TH_LOG("%s: mode: %s; %ld flushes of the test's, tlbi_local=%s", \
		       what, tlb_mode_name((p)->mode), (p)->flushes,	\
		       tlb_local_on() ? "on" : "off");			\
		TLB_VMSTAT_PRINT(what, &(p)->start, &__end);		\
		if ((p)->missing || (p)->start.present != TLB_VM_NR ||	\
		    __end.present != TLB_VM_NR) {			\
			TLB_EXPECT_COUNTERS(what);			\
			break;						\
		}							\
		TH_LOG("%s: during the test's flushes: tlbi_broadcast +%llu tlbi_local +%llu tlbi_skipped +%llu", \
		       what, (p)->during[TLB_VM_BCAST],			\
		       (p)->during[TLB_VM_LOCAL],			\
		       (p)->during[TLB_VM_SKIPPED]);			\
		__lo = (p)->during[TLB_VM_LOCAL] +			\
		       (p)->during[TLB_VM_SKIPPED];			\
		__bc = (p)->during[TLB_VM_BCAST];			\
		__cu = tlb_vm_delta(&(p)->start, &__end, TLB_VM_CATCHUP); \
		if (!tlb_local_on()) {					\
			TLB_EXPECT_OFF_UNCOUNTED(what, &(p)->start, &__end); \
			break;						\
		}							\
		if ((p)->mode == TLB_LAZY) {				\
			EXPECT_TRUE(__bc == (unsigned long long)(p)->flushes && \
				    __lo == 0) {			\
				TH_LOG("%s: %ld flushes while the other CPUs held the mm: %llu broadcast, %llu local or skipped; want all broadcast", \
				       what, (p)->flushes, __bc, __lo);	\
			}						\
			break;						\
		}							\
		EXPECT_TRUE(__lo == (unsigned long long)(p)->flushes &&	\
			    __bc == 0) {				\
			TH_LOG("%s: %ld flushes by the only holder: %llu local or skipped, %llu broadcast; want all local or skipped; the kernel logged: %s", \
			       what, (p)->flushes, __lo, __bc,		\
			       tlb_kernel_says(__says, sizeof(__says)));	\
		}							\
		if ((p)->catchup_due && (p)->flushes) {			\
			EXPECT_LT(0ULL, __cu) {				\
				TH_LOG("%s: no catch-up flush although the mm ran on other CPUs after local flushes", \
				       what);				\
			}						\
		}							\
	} while (0)

/* ------------------------------------------------ files and madvise */

/*
 * Word w of file page @pg holds tlb_file_pattern(@pg) + w: each page its
 * own range of values, so a read shows which page a translation led to.
 */
static inline uint32_t tlb_file_pattern(int pg)
{
	return 0xf0000000u + ((uint32_t)pg << 24);
}

/* Writes every page of @fd its tlb_file_pattern(); -1 with @why. */
static inline int tlb_file_fill(int fd, int npages, size_t page, char *why,
				size_t len)
{
	uint32_t *buf = malloc(page);
	size_t i;
	int pg;

	if (!buf) {
		snprintf(why, len, "malloc: %s", strerror(errno));
		return -1;
	}
	for (pg = 0; pg < npages; pg++) {
		for (i = 0; i < page / 4; i++)
			buf[i] = tlb_file_pattern(pg) + i;
		if (pwrite(fd, buf, page, (off_t)pg * page) != (ssize_t)page) {
			snprintf(why, len, "pwrite of page %d: %s", pg,
				 strerror(errno));
			free(buf);
			return -1;
		}
	}
	free(buf);
	return 0;
}

/*
 * A file for MAP_SHARED mappings of @size bytes, already unlinked: a
 * memfd, else a file in /dev/shm or /tmp.  The fd, or -1 with every
 * attempt's failure in @why.
 */
static inline int tlb_file_open(size_t size, char *why, size_t len,
				const char **kind)
{
	static const char *const dirs[] = { "/dev/shm", "/tmp" };
	char path[64], memfd_err[64];
	size_t i;
	int fd;

	fd = memfd_create("tlb_test", MFD_CLOEXEC);
	if (fd >= 0) {
		*kind = "memfd";
		goto sized;
	}
	snprintf(memfd_err, sizeof(memfd_err), "%s", strerror(errno));
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/tlb_test.XXXXXX", dirs[i]);
		fd = mkstemp(path);
		if (fd >= 0) {
			unlink(path);
			*kind = dirs[i];
			goto sized;
		}
	}
	snprintf(why, len,
		 "no file to map: memfd_create: %s (CONFIG_MEMFD_CREATE=n?), and no writable /dev/shm or /tmp",
		 memfd_err);
	return -1;
sized:
	if (ftruncate(fd, size)) {
		snprintf(why, len, "ftruncate(%s): %s", *kind, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Reserves three pages, PROT_NONE, and returns the middle one: what is
 * mapped there has neighbours in its page table, so unmapping it frees
 * no page table and its flush is leaf-only (the case that may be local).
 */
static inline void *tlb_map_guarded(size_t page)
{
	char *p = mmap(NULL, 3 * page, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p + page;
}

static inline void tlb_unmap_guarded(void *mid, size_t page)
{
	if (mid)
		munmap((char *)mid - page, 3 * page);
}

/*
 * Does madvise(MADV_DONTNEED) work?  0 if so; 1, with why in @why, if the
 * kernel has no madvise() (ENOSYS: CONFIG_ADVISE_SYSCALLS=n, as tinyconfig
 * builds it), a skip; -1, with why, if it failed any other way: a bug.
 */
static inline int tlb_dontneed_missing(char *why, size_t len)
{
	size_t page = sysconf(_SC_PAGESIZE);
	int ret = 0;
	char *p;

	p = mmap(NULL, page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		snprintf(why, len, "mmap: %s", strerror(errno));
		return -1;
	}
	p[0] = 1;
	if (madvise(p, page, MADV_DONTNEED)) {
		ret = errno == ENOSYS ? 1 : -1;
		snprintf(why, len, ret > 0 ?
			 "madvise: %s: kernel lacks CONFIG_ADVISE_SYSCALLS" :
			 "madvise(MADV_DONTNEED): %s", strerror(errno));
	}
	munmap(p, page);
	return ret;
}

/* The scale of the run: rounds at pda.scale=1 times N. */
static inline long tlb_rounds(long base)
{
	return base * cmdline_scale();
}

#endif /* PDA_TESTS_TLB_TEST_H */
