/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The cases of the guest tests in which a kernel-side user of the test's
 * mm reads the test's memory on a CPU the test's task does not run on:
 * io_uring's SQPOLL thread (io_uring_sqpoll) and a kernel thread in
 * kthread_use_mm() (tlb_kthread_mm, with tests/modules/tlb_kthread_mm).
 * That "holder" runs in the kernel only, bound to CPU b.  The task,
 * pinned to CPU a, changes the mapping of a private anonymous buffer and
 * has the holder read the buffer before and after the change:
 *
 * - tlb_kuser_dontneed(): after madvise(MADV_DONTNEED) the holder must
 *   read zeros, not the pattern the task wrote (the freed page, through
 *   a stale TLB entry of CPU b);
 * - tlb_kuser_mprotect(): after mprotect(PROT_NONE) its read must fail
 *   with EFAULT; after mprotect(PROT_READ | PROT_WRITE) it must read the
 *   pattern again.
 *
 * The test runs each with the holder asleep at every change (idle: it
 * served the read before the change and then went to sleep, so CPU b
 * holds the mm only lazily, and the read after the change must wake it)
 * and with the holder polling on CPU b during the change (busy).  A
 * kernel that thought the mm lived on CPU a alone would flush CPU a's TLB
 * only: the holder would still read the old page, or read without a
 * fault.  These data checks hold on every architecture.
 *
 * The tlbi_* counters (lib/tlb_vmstat.h), on arm64 with
 * CONFIG_ARM64_TLBI_LOCAL.  A CPU stops holding an mm only when it
 * switches to another one; a kernel thread, the idle task among them,
 * keeps the previous mm (Documentation/notes/arm64-tlbi-local.md,
 * section 3, enter_lazy_tlb()).  So when no thread of any other process
 * has run since before the holder's read that precedes the change until
 * after the change, CPU b still holds the mm at the change, next to CPU
 * a: nr_active_cpus counts both, and with tlbi_local=on every flush of
 * the change must broadcast, none local or skipped (section 5).  The
 * other processes (init, the kselftest harness's parents) are found once
 * per case (tlb_bystanders_find()) and read from /proc around each change
 * (state and context-switch counts, tlb_bystanders_quiet()); a change
 * during which one of them ran is not judged, only logged, and each case
 * must judge at least one.  A process created during a case would not be
 * seen; nothing in the guest creates one then.  Booted without
 * tlbi_local=on, nothing may be counted over the whole case.  On arm64
 * the counters must exist (TLB_EXPECT_COUNTERS()); elsewhere the data
 * checks are all.
 *
 * The pattern of each round is never 0, and the buffer the holder's
 * bytes land in is filled with 0xee before each read, so zeros can only
 * come from the holder.  Nothing is printed between a case's first and
 * last round unless a check fails: output wakes init, a process of its
 * own, and a change during which it runs cannot be judged.
 *
 * Header only.  Wants _GNU_SOURCE before the first #include, and
 * kselftest_harness.h included before it.
 */
#ifndef PDA_TESTS_TLB_KUSER_H
#define PDA_TESTS_TLB_KUSER_H

#ifndef TH_LOG
#error "include kselftest_harness.h before lib/tlb_kuser.h"
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "cmdline.h"
#include "cpulist.h"
#include "tlb_vmstat.h"

/* How long the holder may take to answer, or to fall asleep. */
#define TLB_KUSER_WAIT_NS	(10ULL * 1000000000ULL)
/* Threads of other processes a case can follow. */
#ifndef TLB_KUSER_BYSTANDERS
#define TLB_KUSER_BYSTANDERS	64
#endif
/* include/linux/sched.h's PF_KTHREAD, field 9 of /proc/PID/stat. */
#define TLB_KUSER_PF_KTHREAD	0x00200000UL
/* What the holder's bytes land on before each read. */
#define TLB_KUSER_POISON	0xee

static inline uint64_t tlb_kuser_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Reads @path into @buf, NUL-terminated; the length, or -1. */
static inline ssize_t tlb_kuser_slurp(const char *path, char *buf, size_t len)
{
	ssize_t n, have = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while (have < (ssize_t)len - 1 &&
	       (n = read(fd, buf + have, len - 1 - have)) > 0)
		have += n;
	close(fd);
	buf[have] = '\0';
	return have;
}

/* ------------------------------------------------------ /proc tasks */

/* One thread as /proc/PID/task/TID shows it. */
struct tlb_task {
	char state;			/* 'R', 'S'...; 0: could not be read */
	int cpu;			/* where it runs, or last ran */
	unsigned long flags;		/* PF_* */
	unsigned long long switches;	/* voluntary and involuntary */
};

/* Not on a CPU, nor waiting for one. */
static inline int tlb_task_asleep(const struct tlb_task *t)
{
	return t->state && t->state != 'R';
}

/* Reads thread @tid of process @pid; 0, or -1 (t->state 0). */
static inline int tlb_task_read(int pid, int tid, struct tlb_task *t)
{
	static const char vol[] = "\nvoluntary_ctxt_switches:";
	static const char invol[] = "\nnonvoluntary_ctxt_switches:";
	char path[64], buf[4096], *p, *q, *tok, *save = NULL;
	unsigned long flags = 0;
	char state = 0;
	int field = 3, cpu = -1;

	memset(t, 0, sizeof(*t));
	t->cpu = -1;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	if (tlb_kuser_slurp(path, buf, sizeof(buf)) <= 0)
		return -1;
	/* The fields after the command name, which may hold anything. */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return -1;
	for (tok = strtok_r(p + 2, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save), field++) {
		if (field == 3) {
			state = tok[0];
		} else if (field == 9) {
			flags = strtoul(tok, NULL, 10);
		} else if (field == 39) {
			cpu = atoi(tok);
			break;
		}
	}
	if (field != 39)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	if (tlb_kuser_slurp(path, buf, sizeof(buf)) <= 0)
		return -1;
	p = strstr(buf, vol);
	q = strstr(buf, invol);
	if (!p || !q)
		return -1;
	t->switches = strtoull(p + sizeof(vol) - 1, NULL, 10) +
		      strtoull(q + sizeof(invol) - 1, NULL, 10);
	t->state = state;
	t->flags = flags;
	t->cpu = cpu;
	return 0;
}

/* ------------------------------------------------------- bystanders */

/* The threads of every other process but kernel threads. */
struct tlb_bystanders {
	int n;
	int overflow;
	int pid[TLB_KUSER_BYSTANDERS];
	int tid[TLB_KUSER_BYSTANDERS];
};

/* @s as a positive decimal number, or -1. */
static inline int tlb_kuser_number(const char *s)
{
	const char *c;

	for (c = s; *c; c++)
		if (*c < '0' || *c > '9')
			return -1;
	return c == s ? -1 : atoi(s);
}

/*
 * Finds every thread of a process other than this one whose process is
 * not a kernel thread (their threads switch to no mm of their own).  0,
 * or -1 with why in @why.
 */
static inline int tlb_bystanders_find(struct tlb_bystanders *b, char *why,
				      size_t len)
{
	DIR *proc = opendir("/proc"), *task;
	int self = getpid(), pid, tid;
	struct dirent *d, *e;
	struct tlb_task t;
	char path[64];

	memset(b, 0, sizeof(*b));
	if (!proc) {
		snprintf(why, len, "opendir /proc: %s", strerror(errno));
		return -1;
	}
	while ((d = readdir(proc))) {
		pid = tlb_kuser_number(d->d_name);
		if (pid <= 0 || pid == self)
			continue;
		if (tlb_task_read(pid, pid, &t) ||
		    (t.flags & TLB_KUSER_PF_KTHREAD))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task", pid);
		task = opendir(path);
		if (!task)
			continue;
		while ((e = readdir(task))) {
			tid = tlb_kuser_number(e->d_name);
			if (tid <= 0)
				continue;
			if (b->n == TLB_KUSER_BYSTANDERS) {
				b->overflow = 1;
				break;
			}
			b->pid[b->n] = pid;
			b->tid[b->n++] = tid;
		}
		closedir(task);
	}
	closedir(proc);
	return 0;
}

/* Reads every bystander into @t (b->n of them). */
static inline void tlb_bystanders_read(const struct tlb_bystanders *b,
				       struct tlb_task *t)
{
	int i;

	for (i = 0; i < b->n; i++)
		tlb_task_read(b->pid[i], b->tid[i], &t[i]);
}

/*
 * Did no bystander run between the reads @s0 and @s1?  Asleep at both
 * and no context switch between: it was on no CPU in between.  1, or 0
 * with the first one that may have run in @why.
 */
static inline int tlb_bystanders_quiet(const struct tlb_bystanders *b,
				       const struct tlb_task *s0,
				       const struct tlb_task *s1,
				       char *why, size_t len)
{
	int i;

	if (b->overflow) {
		snprintf(why, len, "more than %d threads of other processes: not followed",
			 TLB_KUSER_BYSTANDERS);
		return 0;
	}
	for (i = 0; i < b->n; i++) {
		if (tlb_task_asleep(&s0[i]) && tlb_task_asleep(&s1[i]) &&
		    s0[i].switches == s1[i].switches)
			continue;
		snprintf(why, len,
			 "pid %d (thread %d) may have run: state %c to %c, %llu to %llu context switches",
			 b->pid[i], b->tid[i], s0[i].state ? s0[i].state : '?',
			 s1[i].state ? s1[i].state : '?', s0[i].switches,
			 s1[i].switches);
		return 0;
	}
	return 1;
}

/* ----------------------------------------------------------- holder */

struct tlb_kuser;

struct tlb_kuser_ops {
	/*
	 * The holder reads the whole buffer (k->buf, k->len bytes): what
	 * it read goes to k->out, its result (bytes, or -errno) to *@res,
	 * and whether it had to be woken for it to *@woke.  0, or -1 with
	 * why in @why if the request itself failed.
	 */
	int (*read)(struct tlb_kuser *k, long *res, int *woke, char *why,
		    size_t len);
	/* Does the holder say it is asleep, waiting for a request? */
	int (*asleep)(struct tlb_kuser *k);
};

/* One case: the holder, the buffer, and what the changes showed. */
struct tlb_kuser {
	/* Set by the test: */
	const char *holder;		/* "the SQPOLL thread", for messages */
	const struct tlb_kuser_ops *ops;
	void *arg;			/* the test's, for the ops */
	int pid, tid;			/* the holder: /proc/PID/task/TID */
	int cpu_a, cpu_b;		/* the task's CPU, the holder's */
	int busy;			/* the holder polls during changes */
	size_t len;			/* of buf and out, a multiple of 4 */
	uint32_t *buf;			/* private anonymous, read-write */
	uint32_t *out;			/* what the holder read */
	/* Kept here: */
	long round;
	int counting;			/* tlbi_local=on, and counters */
	int missing;			/* a change's read lacked them */
	struct tlb_bystanders by;
	struct tlb_vmstat start;
	uint64_t t0;
	long reads, woken, changes, running, judged, unjudged;
	unsigned long long during[TLB_VM_NR];	/* the judged changes' */
	char first_unjudged[200];
};

/* One mapping change, and what was read around it. */
struct tlb_kuser_change {
	const char *what;		/* "MADV_DONTNEED" */
	int must_flush;			/* it must count a flush */
	struct tlb_task s0[TLB_KUSER_BYSTANDERS];
	struct tlb_task s1[TLB_KUSER_BYSTANDERS];
	struct tlb_task h0, h1;		/* the holder, before and after */
	int asleep0, asleep1;		/* what it said, before and after */
	struct tlb_vmstat c0, c1;	/* the counters, right around it */
};

/* Rounds of a case: @base times pda.scale, fewer under Bochs. */
static inline long tlb_kuser_rounds(long base)
{
	if (cmdline_has("pda.bochs"))
		base = base > 4 ? base / 4 : 1;
	return base * cmdline_scale();
}

/* Word @i of round @r's pattern: never 0. */
static inline uint32_t tlb_kuser_pattern(long r, size_t i)
{
	return 0x80000000u | ((uint32_t)(r & 0x7ff) << 20) |
	       (uint32_t)(i & 0xfffff);
}

/* Still on CPU a? */
static inline void tlb_kuser_on_a(struct __test_metadata *_metadata,
				  struct tlb_kuser *k)
{
	int cpu = sched_getcpu();

	ASSERT_EQ(k->cpu_a, cpu) {
		TH_LOG("round %ld: pinned to cpu %d, but sched_getcpu() says %d",
		       k->round, k->cpu_a, cpu);
	}
}

/*
 * The setup both tests share: CPU a (the first online one) for the task,
 * pinned and checked with sched_getcpu(), CPU b (the last) for the
 * holder, and @npages of buffer and of output, private and anonymous.
 */
#define TLB_KUSER_MAX_CPUS	CPU_SETSIZE

static inline void tlb_kuser_setup(struct __test_metadata *_metadata,
				   struct tlb_kuser *k, int npages)
{
	int cpus[TLB_KUSER_MAX_CPUS], n, cpu;
	cpu_set_t set;

	k->buf = MAP_FAILED;
	k->out = MAP_FAILED;
	n = cpulist_online(cpus, TLB_KUSER_MAX_CPUS);
	ASSERT_LE(2, n) {
		TH_LOG("%d online CPU(s) (%s)", n, CPULIST_ONLINE);
	}
	k->cpu_a = cpus[0];
	k->cpu_b = cpus[n - 1];
	CPU_ZERO(&set);
	CPU_SET(k->cpu_a, &set);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(set), &set)) {
		TH_LOG("pinning to cpu %d: %s", k->cpu_a, strerror(errno));
	}
	cpu = sched_getcpu();
	ASSERT_EQ(k->cpu_a, cpu) {
		TH_LOG("pinned to cpu %d, but sched_getcpu() says %d",
		       k->cpu_a, cpu);
	}
	k->len = npages * sysconf(_SC_PAGESIZE);
	k->buf = mmap(NULL, k->len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	k->out = mmap(NULL, k->len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(k->buf != MAP_FAILED && k->out != MAP_FAILED) {
		TH_LOG("mmap: %s", strerror(errno));
	}
}

static inline void tlb_kuser_teardown(struct tlb_kuser *k)
{
	if (k->buf != MAP_FAILED)
		munmap(k->buf, k->len);
	if (k->out != MAP_FAILED)
		munmap(k->out, k->len);
}

/* The start of a case: its counters, and the other processes. */
static inline void tlb_kuser_start(struct __test_metadata *_metadata,
				   struct tlb_kuser *k)
{
	char why[160];

	k->t0 = tlb_kuser_now_ns();
	tlb_vmstat_read(&k->start);
	k->counting = tlb_local_on() && k->start.present == TLB_VM_NR;
	if (k->counting) {
		ASSERT_EQ(0, tlb_bystanders_find(&k->by, why, sizeof(why))) {
			TH_LOG("%s", why);
		}
	}
}

/* One read by the holder; its result. */
static inline long tlb_kuser_read(struct __test_metadata *_metadata,
				  struct tlb_kuser *k, int *woke,
				  const char *when)
{
	long res = 0;
	char why[200];
	int err;

	memset(k->out, TLB_KUSER_POISON, k->len);
	*woke = 0;
	err = k->ops->read(k, &res, woke, why, sizeof(why));
	ASSERT_EQ(0, err) {
		TH_LOG("round %ld, %s: %s", k->round, when, why);
	}
	k->reads++;
	if (*woke)
		k->woken++;
	return res;
}

/*
 * The holder read all of the buffer, and it held round k->round's
 * pattern (@zero: zeros).
 */
static inline void tlb_kuser_expect_data(struct __test_metadata *_metadata,
					 struct tlb_kuser *k, long res,
					 int zero, const char *when)
{
	size_t i, n = k->len / 4;
	uint32_t want = 0;

	ASSERT_EQ((long)k->len, res) {
		TH_LOG("round %ld, %s: %s on cpu %d read %ld of %zu bytes (%s)",
		       k->round, when, k->holder, k->cpu_b, res, k->len,
		       res < 0 ? strerror(-res) : "short");
	}
	for (i = 0; i < n; i++) {
		want = zero ? 0 : tlb_kuser_pattern(k->round, i);
		if (k->out[i] != want)
			break;
	}
	ASSERT_EQ(n, i) {
		TH_LOG("round %ld, %s: %s on cpu %d read %#x at offset %zu, expected %#x%s",
		       k->round, when, k->holder, k->cpu_b, k->out[i], i * 4,
		       want, zero ?
		       " (a stale TLB entry on its CPU: the freed page)" : "");
	}
}

/* The task writes round k->round's pattern. */
static inline void tlb_kuser_fill(struct tlb_kuser *k)
{
	size_t i, n = k->len / 4;

	for (i = 0; i < n; i++)
		k->buf[i] = tlb_kuser_pattern(k->round, i);
}

/*
 * Idle: waits until the holder is asleep, by its own word and by /proc.
 * Busy: nothing, it polls.
 */
static inline void tlb_kuser_settle(struct __test_metadata *_metadata,
				    struct tlb_kuser *k)
{
	uint64_t end = tlb_kuser_now_ns() + TLB_KUSER_WAIT_NS;
	struct tlb_task t;

	if (k->busy)
		return;
	for (;;) {
		int said = k->ops->asleep(k);

		tlb_task_read(k->pid, k->tid, &t);
		if (said && tlb_task_asleep(&t))
			return;
		ASSERT_LT(tlb_kuser_now_ns(), end) {
			TH_LOG("round %ld: %s not asleep within %llu s (says %s, state %c)",
			       k->round, k->holder,
			       TLB_KUSER_WAIT_NS / 1000000000ULL,
			       said ? "asleep" : "awake",
			       t.state ? t.state : '?');
		}
		usleep(1000);
	}
}

/*
 * Opens the window of a change: before the holder's read that precedes
 * it, the bystanders' first reading.
 */
static inline void tlb_kuser_window(struct tlb_kuser *k,
				    struct tlb_kuser_change *ch,
				    const char *what, int must_flush)
{
	memset(ch, 0, sizeof(*ch));
	ch->what = what;
	ch->must_flush = must_flush;
	if (k->counting)
		tlb_bystanders_read(&k->by, ch->s0);
}

/* Right before the change: the holder, then the counters. */
static inline void tlb_kuser_change_begin(struct tlb_kuser *k,
					  struct tlb_kuser_change *ch)
{
	ch->asleep0 = k->ops->asleep(k);
	tlb_task_read(k->pid, k->tid, &ch->h0);
	tlb_vmstat_read(&ch->c0);
}

/* Right after it: the counters, the holder, the bystanders. */
static inline void tlb_kuser_change_end(struct tlb_kuser *k,
					struct tlb_kuser_change *ch)
{
	tlb_vmstat_read(&ch->c1);
	tlb_task_read(k->pid, k->tid, &ch->h1);
	ch->asleep1 = k->ops->asleep(k);
	if (k->counting)
		tlb_bystanders_read(&k->by, ch->s1);
}

/*
 * The checks of one change: the holder on CPU b; with tlbi_local=on and
 * no other process run since the window opened, no flush of the change
 * local or skipped, and (@must_flush) one broadcast at least.
 */
static inline void tlb_kuser_judge(struct __test_metadata *_metadata,
				   struct tlb_kuser *k,
				   struct tlb_kuser_change *ch)
{
	unsigned long long lo, bc, d[TLB_VM_NR];
	char why[160], says[160];
	int i;

	k->changes++;
	EXPECT_TRUE(ch->h0.cpu == k->cpu_b && ch->h1.cpu == k->cpu_b) {
		TH_LOG("round %ld, %s: %s on cpu %d before, %d after: bound to %d",
		       k->round, ch->what, k->holder, ch->h0.cpu, ch->h1.cpu,
		       k->cpu_b);
	}
	if (ch->h0.state == 'R' && ch->h1.state == 'R' && !ch->asleep0 &&
	    !ch->asleep1)
		k->running++;
	if (!k->counting)
		return;
	if (ch->c0.present != TLB_VM_NR || ch->c1.present != TLB_VM_NR) {
		k->missing = 1;
		return;
	}
	if (!tlb_bystanders_quiet(&k->by, ch->s0, ch->s1, why, sizeof(why))) {
		if (!k->unjudged++)
			snprintf(k->first_unjudged, sizeof(k->first_unjudged),
				 "round %ld, %s: %s", k->round, ch->what, why);
		return;
	}
	k->judged++;
	for (i = 0; i < TLB_VM_NR; i++) {
		d[i] = tlb_vm_delta(&ch->c0, &ch->c1, i);
		k->during[i] += d[i];
	}
	lo = d[TLB_VM_LOCAL] + d[TLB_VM_SKIPPED];
	bc = d[TLB_VM_BCAST];
	EXPECT_EQ(0ULL, lo) {
		TH_LOG("round %ld: %s on cpu %d, %s (%s) holding the mm on cpu %d",
		       k->round, ch->what, k->cpu_a, k->holder,
		       ch->asleep0 ? "asleep" : "polling", k->cpu_b);
		TH_LOG("no other process ran: two CPUs held the mm, so every flush must broadcast");
		TH_LOG("tlbi_local +%llu tlbi_skipped +%llu tlbi_broadcast +%llu",
		       d[TLB_VM_LOCAL], d[TLB_VM_SKIPPED], bc);
	}
	if (ch->must_flush) {
		EXPECT_LE(1ULL, bc) {
			TH_LOG("round %ld: %s: broadcast +%llu local +%llu skipped +%llu",
			       k->round, ch->what, bc, d[TLB_VM_LOCAL],
			       d[TLB_VM_SKIPPED]);
			TH_LOG("with tlbi_local=on every user flush is counted");
			TH_LOG("the kernel logged: %s",
			       tlb_kernel_says(says, sizeof(says)));
		}
	}
}

/* In the idle case the read after a change had to wake the holder. */
static inline void tlb_kuser_expect_woken(struct __test_metadata *_metadata,
					  struct tlb_kuser *k, int woke,
					  const char *what)
{
	if (k->busy)
		return;
	EXPECT_TRUE(woke) {
		TH_LOG("round %ld: after %s, %s was awake when asked to read:",
		       k->round, what, k->holder);
		TH_LOG("the idle case did not test a holder asleep across the change");
	}
}

/* The end of a case: what it saw, and the checks over all of it. */
static inline void tlb_kuser_finish(struct __test_metadata *_metadata,
				    struct tlb_kuser *k, const char *what)
{
	struct tlb_vmstat end;
	char says[160];

	tlb_vmstat_read(&end);
	TH_LOG("%s, %s: %ld rounds in %llu ms, %ld changes by the task on cpu %d",
	       what, k->busy ? "busy" : "idle", k->round,
	       (unsigned long long)(tlb_kuser_now_ns() - k->t0) / 1000000,
	       k->changes, k->cpu_a);
	TH_LOG("%s: %ld reads by %s on cpu %d, %ld woke it; %ld changes it polled across",
	       what, k->reads, k->holder, k->cpu_b, k->woken, k->running);
	if (k->busy) {
		EXPECT_LT(0, k->running) {
			TH_LOG("%s: %s never seen polling across a change (state R, awake):",
			       what, k->holder);
			TH_LOG("the busy case did not test a running holder");
		}
	}
	TLB_VMSTAT_PRINT(what, &k->start, &end);
	if (k->start.present != TLB_VM_NR || end.present != TLB_VM_NR ||
	    k->missing) {
		TLB_EXPECT_COUNTERS(what);
		return;
	}
	if (!tlb_local_on()) {
		TH_LOG("%s: tlbi_local=off: nothing may be counted", what);
		TLB_EXPECT_OFF_UNCOUNTED(what, &k->start, &end);
		return;
	}
	TH_LOG("%s: tlbi_local=on: %ld of %ld changes judged (no other process ran)",
	       what, k->judged, k->changes);
	TH_LOG("%s: during them tlbi_broadcast +%llu tlbi_local +%llu tlbi_skipped +%llu",
	       what, k->during[TLB_VM_BCAST], k->during[TLB_VM_LOCAL],
	       k->during[TLB_VM_SKIPPED]);
	if (k->unjudged)
		TH_LOG("%s: %ld not judged, the first: %s", what, k->unjudged,
		       k->first_unjudged);
	EXPECT_LT(0, k->judged) {
		TH_LOG("%s: no change judged (the first reason above): the counters showed nothing",
		       what);
		TH_LOG("%s: the kernel logged: %s", what,
		       tlb_kernel_says(says, sizeof(says)));
	}
}

/* ------------------------------------------------------------ cases */

/* MADV_DONTNEED: zeros after it, every round. */
static inline void tlb_kuser_dontneed(struct __test_metadata *_metadata,
				      struct tlb_kuser *k, long rounds)
{
	struct tlb_kuser_change ch;
	long res;
	int woke, err;

	tlb_kuser_start(_metadata, k);
	for (k->round = 0; k->round < rounds; k->round++) {
		tlb_kuser_on_a(_metadata, k);
		tlb_kuser_fill(k);
		tlb_kuser_window(k, &ch, "MADV_DONTNEED", 1);
		res = tlb_kuser_read(_metadata, k, &woke,
				     "before MADV_DONTNEED");
		tlb_kuser_expect_data(_metadata, k, res, 0,
				      "before MADV_DONTNEED");
		tlb_kuser_settle(_metadata, k);
		tlb_kuser_change_begin(k, &ch);
		err = madvise(k->buf, k->len, MADV_DONTNEED) ? errno : 0;
		tlb_kuser_change_end(k, &ch);
		ASSERT_EQ(0, err) {
			TH_LOG("round %ld: madvise(MADV_DONTNEED): %s",
			       k->round, strerror(err));
		}
		tlb_kuser_judge(_metadata, k, &ch);
		res = tlb_kuser_read(_metadata, k, &woke,
				     "after MADV_DONTNEED returned");
		tlb_kuser_expect_data(_metadata, k, res, 1,
				      "after MADV_DONTNEED returned");
		tlb_kuser_expect_woken(_metadata, k, woke, "MADV_DONTNEED");
	}
	tlb_kuser_finish(_metadata, k, "MADV_DONTNEED");
}

/* mprotect(): EFAULT while PROT_NONE, the data once read-write again. */
static inline void tlb_kuser_mprotect(struct __test_metadata *_metadata,
				      struct tlb_kuser *k, long rounds)
{
	struct tlb_kuser_change none, rw;
	long res;
	int woke, err;

	tlb_kuser_start(_metadata, k);
	for (k->round = 0; k->round < rounds; k->round++) {
		tlb_kuser_on_a(_metadata, k);
		tlb_kuser_fill(k);
		tlb_kuser_window(k, &none, "mprotect(PROT_NONE)", 1);
		res = tlb_kuser_read(_metadata, k, &woke, "before PROT_NONE");
		tlb_kuser_expect_data(_metadata, k, res, 0, "before PROT_NONE");
		tlb_kuser_settle(_metadata, k);
		tlb_kuser_change_begin(k, &none);
		err = mprotect(k->buf, k->len, PROT_NONE) ? errno : 0;
		tlb_kuser_change_end(k, &none);
		ASSERT_EQ(0, err) {
			TH_LOG("round %ld: mprotect(PROT_NONE): %s", k->round,
			       strerror(err));
		}
		tlb_kuser_judge(_metadata, k, &none);

		/* The read that fails is the holder's last before the next. */
		tlb_kuser_window(k, &rw, "mprotect(PROT_READ | PROT_WRITE)", 0);
		res = tlb_kuser_read(_metadata, k, &woke,
				     "after mprotect(PROT_NONE) returned");
		ASSERT_EQ(-EFAULT, res) {
			TH_LOG("round %ld: after PROT_NONE, %s on cpu %d read: %ld, want -EFAULT",
			       k->round, k->holder, k->cpu_b, res);
			if (res > 0)
				TH_LOG("a stale TLB entry on its CPU: the old permissions");
		}
		tlb_kuser_expect_woken(_metadata, k, woke, "PROT_NONE");
		tlb_kuser_settle(_metadata, k);
		tlb_kuser_change_begin(k, &rw);
		err = mprotect(k->buf, k->len, PROT_READ | PROT_WRITE) ?
		      errno : 0;
		tlb_kuser_change_end(k, &rw);
		ASSERT_EQ(0, err) {
			TH_LOG("round %ld: mprotect(PROT_READ | PROT_WRITE): %s",
			       k->round, strerror(err));
		}
		tlb_kuser_judge(_metadata, k, &rw);
		res = tlb_kuser_read(_metadata, k, &woke,
				     "after mprotect(PROT_READ | PROT_WRITE) returned");
		tlb_kuser_expect_data(_metadata, k, res, 0,
				      "after mprotect(PROT_READ | PROT_WRITE) returned");
		tlb_kuser_expect_woken(_metadata, k, woke,
				       "mprotect(PROT_READ | PROT_WRITE)");
	}
	tlb_kuser_finish(_metadata, k, "mprotect");
}

#endif /* PDA_TESTS_TLB_KUSER_H */
