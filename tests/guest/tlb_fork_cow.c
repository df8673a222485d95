// SPDX-License-Identifier: GPL-2.0
/*
 * After fork() a private page is shared copy-on-write: each side's
 * writes must stay its own.  The parent must never see what the child
 * writes after the fork, nor the child what the parent writes; each must
 * see its own writes, on every CPU it runs on.  The first write on each
 * side replaces its PTE (wp_page_copy(), whose ptep_clear_flush() is a
 * leaf flush: on arm64 with CONFIG_ARM64_TLBI_LOCAL one that may be local
 * or skipped); the side that writes last reuses the original page.  A CPU
 * that kept a stale read-only entry for the original page then reads the
 * other side's writes, which each check looks for by their tag.
 *
 * - occupied: one parent worker per CPU writes its word, the parent forks,
 *   the workers read the page on their CPUs (each CPU now caches the
 *   shared page) and block.  Even rounds, parent first: occupiers run on
 *   every CPU but the main thread's, main writes (its COW, alone in its
 *   mm), then the child writes into the original page; the workers wake
 *   where they read and must not see the child's word, on any CPU.  Odd
 *   rounds, child first: the child reads on every CPU, goes back to
 *   main's CPU, runs the occupiers itself and writes (its COW, alone in
 *   its mm); main then writes into the original page; the child visits
 *   every CPU again and must not see main's word.  Then each parent
 *   worker writes on its CPU, and every thread checks every word on every
 *   CPU again.
 * - lazy: the same without the occupiers: the other CPUs idle, still
 *   holding the mm whose COW is flushed, and must get that flush.
 * - concurrent: the parent's workers keep writing sequence numbers (and
 *   moving between CPUs) while main forks (in odd rounds they stop just
 *   before).  The child's copy of each worker's word must lie between
 *   what the worker had published before fork() and one past what it had
 *   published when fork() returned, and must not change later.  After
 *   fork() the workers go home and read, then the even ones write again
 *   (the parent's COW, the others running) and the child writes into the
 *   original page: no worker may see that, each must see the others'
 *   published writes, and one that only reads its own last write.
 * - one_cpu: the occupied case with main, two workers and the child on
 *   one CPU; it runs on a uniprocessor too.
 *
 * The /proc/vmstat tlbi_* counters, read around main's COW write (parent
 * first), must show it local (or skipped) when the kernel was booted
 * with tlbi_local=on in occupied and one_cpu, with catch-up flushes after
 * (but on one CPU), broadcast in lazy, and never local without
 * tlbi_local=on.  Each failure names the
 * thread (or "child"), its CPU (sched_getcpu()), the round, the address
 * and the value.  pda.scale=N multiplies the rounds.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "lib/tlb_rounds.h"

#define ROUNDS_OCCUPIED		16
#define ROUNDS_CONCURRENT	8
#define ACCESSES		8
#define MOVE_EVERY		3

/* The tags of the values, in the top nibble. */
#define PRE			0x5u	/* the parent's, before fork() */
#define PAR			0x6u	/* the parent's, after it */
#define SEQ			0x7u	/* a concurrent worker's sequence */
#define CHI			0xcu	/* the child's */
#define TAG(v)			((v) >> 28)

enum stage { TOUCH, CHECK, WRITE_PAR };
/* The phases of a concurrent round. */
enum { PH_BEFORE, PH_QUIET, PH_FORKED, PH_WRITE };

struct job {
	struct tlb_env *env;
	volatile uint32_t *mem;
	int nslots;			/* workers, main, child */
	uint32_t expect[TLB_MAX_CPUS + 2];
	enum stage stage;
	int only_cpu;			/* -1: home, then the others */
	int home_only;
	long round;
	/* concurrent */
	int stop;
	int phase;			/* PH_* */
	uint32_t pub[TLB_MAX_CPUS];	/* each worker's last written seq */
	unsigned long count[TLB_MAX_CPUS];
};

FIXTURE(cow) {
	struct tlb_env env;
	volatile uint32_t *mem;
	int to_child[2], to_parent[2];
	pid_t child;
	struct job j;
};

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void close_pipes(FIXTURE_DATA(cow) *self)
{
	int i;

	for (i = 0; i < 2; i++) {
		close_fd(&self->to_child[i]);
		close_fd(&self->to_parent[i]);
	}
}

/*
 * Fresh pipes for each child.  After fork() each side closes the ends it
 * does not use (keep_ends()), so either gets EOF or EPIPE, not a hang,
 * when the other is gone.
 */
static int open_pipes(FIXTURE_DATA(cow) *self)
{
	close_pipes(self);
	if (pipe(self->to_child) || pipe(self->to_parent))
		return -errno;
	return 0;
}

static void keep_ends(FIXTURE_DATA(cow) *self, int child)
{
	close_fd(child ? &self->to_child[1] : &self->to_child[0]);
	close_fd(child ? &self->to_parent[0] : &self->to_parent[1]);
}

FIXTURE_SETUP(cow)
{
	char why[256];

	self->child = 0;
	self->to_child[0] = self->to_child[1] = -1;
	self->to_parent[0] = self->to_parent[1] = -1;
	ASSERT_EQ(0, tlb_env_init(&self->env, -1, why, sizeof(why))) {
		TH_LOG("%s", why);
	}
	self->mem = mmap(NULL, self->env.page, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(self->mem != MAP_FAILED) {
		TH_LOG("mmap: %s", strerror(errno));
	}
	/* A child that died must not kill the parent writing to it. */
	signal(SIGPIPE, SIG_IGN);
	memset(&self->j, 0, sizeof(self->j));
	self->j.env = &self->env;
	self->j.mem = self->mem;
	self->j.nslots = self->env.nworkers + 2;
	TH_LOG("%d CPU(s), %d workers, page %p", self->env.ncpus,
	       self->env.nworkers, self->mem);
}

FIXTURE_TEARDOWN(cow)
{
	char why[256];

	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, NULL, 0);
	}
	EXPECT_EQ(0, tlb_env_fini(&self->env, why, sizeof(why))) {
		TH_LOG("%s", why);
	}
	close_pipes(self);
	if (self->mem != MAP_FAILED)
		munmap((void *)self->mem, self->env.page);
}

static int main_slot(struct job *j)
{
	return j->nslots - 2;
}

static int child_slot(struct job *j)
{
	return j->nslots - 1;
}

static volatile uint32_t *slot(struct job *j, int s)
{
	size_t stride = j->env->page / 4 / j->nslots;

	if (stride > 16)
		stride = 16;
	return j->mem + s * stride;
}

static uint32_t value(uint32_t tag, long r, int k, int s)
{
	return tag << 28 | (uint32_t)(r & 0xfff) << 16 | (k & 0xff) << 8 |
	       (s & 0xff);
}

static const char *tag_name(uint32_t v)
{
	switch (TAG(v)) {
	case PRE:
		return "the parent's from before fork()";
	case PAR:
		return "the parent's from after fork()";
	case SEQ:
		return "a parent worker's sequence number";
	case CHI:
		return "the child's";
	}
	return "nobody's";
}

static int in_child(void)
{
	return !strcmp(tlb_who, "child");
}

/* Every slot holds what @expect says; logs the first that does not. */
static void check_view(struct job *j, const uint32_t *expect,
		       const char *when)
{
	uint32_t got = 0;
	char buf[96];
	int s, sig;

	for (s = 0; s < j->nslots; s++) {
		volatile uint32_t *p = slot(j, s);

		sig = tlb_probe_read(p, &got);
		if (sig) {
			tlb_fail(j->env, "read of %p %s: %s", p, when,
				 tlb_sig_str(sig, buf, sizeof(buf)));
			return;
		}
		if (got == expect[s])
			continue;
		tlb_fail(j->env, "read %#x (%s) from %p %s, expected %#x (%s)%s",
			 got, tag_name(got), p, when, expect[s],
			 tag_name(expect[s]),
			 TAG(got) == (in_child() ? PAR : CHI) ?
			 ": the other side's write after fork() (stale TLB entry?)" :
			 TAG(got) != TAG(expect[s]) ? " (stale TLB entry?)" :
			 "");
		return;
	}
}

static void write_slot(struct job *j, int s, uint32_t v)
{
	volatile uint32_t *p = slot(j, s);
	char buf[96];
	int sig = tlb_probe_write(p, v);

	if (sig)
		tlb_fail(j->env, "write of %#x to %p: %s", v, p,
			 tlb_sig_str(sig, buf, sizeof(buf)));
}

static void occupied_job(struct tlb_worker *w, void *arg)
{
	struct job *j = arg;
	int k, n = j->stage == CHECK && !j->home_only ?
		   tlb_nvisits(j->env) : 1;

	for (k = 0; k < n; k++) {
		int cpu = j->only_cpu >= 0 ? j->only_cpu :
			  tlb_visit(j->env, w->idx, k);

		if (tlb_move(j->env, cpu))
			return;
		switch (j->stage) {
		case TOUCH:
			write_slot(j, w->idx, value(PRE, j->round, 0, w->idx));
			break;
		case CHECK:
			check_view(j, j->expect, "in the parent");
			break;
		case WRITE_PAR:
			write_slot(j, w->idx, value(PAR, j->round, 0, w->idx));
			break;
		}
		if (j->only_cpu >= 0)
			break;
	}
}

static void stage(struct job *j, enum stage st, int home_only, int nworkers)
{
	j->stage = st;
	j->home_only = home_only;
	tlb_run(j->env, nworkers, occupied_job, j);
}

/*
 * One byte through a pipe: 0, or -1 (the other side is gone: the child
 * then just _exit()s, the parent logs a failure).
 */
static int send_byte(int fd, char c)
{
	return write(fd, &c, 1) == 1 ? 0 : -1;
}

static int recv_byte(int fd, char want)
{
	char c;

	return read(fd, &c, 1) == 1 && c == want ? 0 : -1;
}

/* The parent's side of a step with the child: 0, or -1 (logged). */
static int talk(FIXTURE_DATA(cow) *self, char send, char want)
{
	if (send && send_byte(self->to_child[1], send)) {
		tlb_fail(&self->env, "write to the child's pipe: %s",
			 strerror(errno));
		return -1;
	}
	if (recv_byte(self->to_parent[0], want)) {
		tlb_fail(&self->env, "the child did not answer '%c'", want);
		return -1;
	}
	return 0;
}

/*
 * The child of an occupied or lazy round, single-threaded on main's CPU
 * @f.  @child_first: it first reads on every CPU, comes back to @f, sets
 * the other CPUs up as @mode says and takes its COW; else the parent has
 * already taken its own, and the child's first write goes into the
 * original page.  It reports 'w', and once the parent says 'g' visits
 * every CPU, writing its word on each: it must never see the parent's
 * writes after the fork.
 */
static void __attribute__((noreturn))
child_occupied(FIXTURE_DATA(cow) *self, int f, int only_cpu,
	       enum tlb_mode mode, int child_first)
{
	struct job *j = &self->j;
	struct tlb_env *e = &self->env;
	int k, n = only_cpu >= 0 ? 1 : tlb_nvisits(e), cs = child_slot(j);
	uint32_t *expect = j->expect;	/* our copy now */

	snprintf(tlb_who, sizeof(tlb_who), "child");
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	keep_ends(self, 1);
	if (recv_byte(self->to_child[0], 'g'))
		_exit(1);
	if (child_first) {
		/* Every CPU caches the shared page for the child's mm. */
		for (k = 0; k < n; k++) {
			if (tlb_move(e, only_cpu >= 0 ? only_cpu :
				     tlb_visit(e, 0, k)))
				_exit(1);
			check_view(j, expect, "in the child, before any write");
		}
		if (tlb_move(e, f) || tlb_before_flush(e, mode, f))
			_exit(1);
	} else if (tlb_move(e, f)) {
		_exit(1);
	}
	expect[cs] = value(CHI, j->round, 0, cs);
	write_slot(j, cs, expect[cs]);
	check_view(j, expect, "in the child, after its first write");
	if (send_byte(self->to_parent[1], 'w') ||
	    recv_byte(self->to_child[0], 'g'))
		_exit(1);
	for (k = 0; k < n; k++) {
		if (tlb_move(e, only_cpu >= 0 ? only_cpu : tlb_visit(e, 0, k)))
			break;
		check_view(j, expect, child_first ?
			   "in the child, after the parent wrote" :
			   "in the child");
		expect[cs] = value(CHI, j->round, k + 1, cs);
		write_slot(j, cs, expect[cs]);
		check_view(j, expect, "in the child, after its write here");
	}
	send_byte(self->to_parent[1], 'd');
	_exit(0);
}

/*
 * Reaps the child; 0 if it exited 0.  @kill_it: a round that failed
 * half-way, where the child may still wait for the parent.
 */
static int reap(FIXTURE_DATA(cow) *self, int kill_it)
{
	int status;

	if (kill_it)
		kill(self->child, SIGKILL);
	if (waitpid(self->child, &status, 0) != self->child) {
		tlb_fail(&self->env, "waitpid(child): %s", strerror(errno));
		return -1;
	}
	self->child = 0;
	if ((WIFEXITED(status) && !WEXITSTATUS(status)) || kill_it)
		return 0;
	tlb_fail(&self->env, "the child ended with status %#x", status);
	return -1;
}

/*
 * Parent first (even rounds): the workers read the shared page on their
 * CPUs and block, main takes the parent's COW (the other CPUs set up as
 * @mode says), the child writes into the original page, and the workers
 * wake where they read it: none may see the child's word.  Child first
 * (odd rounds): the child reads on every CPU and takes its COW, main
 * writes into the original page, and the child visits every CPU again:
 * it may not see main's word.  Nothing else runs on the other CPUs in
 * between, so in a lazy round each still holds the mm that must not see
 * the write.
 *
 * Not lib/tlb_rounds.h's rounds: here the flush is a write, the child's
 * or main's by turns, and a child process takes part in every round, so
 * the round is a dialogue over pipes, not fill, flush, check.  Only the
 * three cases around it are the shared ones (TLB_OCCUPIED_TESTS()); the
 * concurrent case below is its own for the same reason, with fork() in
 * the middle of its phases.
 */
static void occupied(struct __test_metadata *_metadata,
		     FIXTURE_DATA(cow) *self, int only_cpu,
		     enum tlb_mode mode)
{
	struct tlb_env *e = &self->env;
	struct job *j = &self->j;
	long rounds = tlb_rounds(ROUNDS_OCCUPIED), r;
	int nworkers = only_cpu < 0 ? e->nworkers : 2, s;
	int ms = main_slot(j), cs = child_slot(j);
	struct tlb_paths paths;
	uint64_t t0 = pda_test_now_ns();
	unsigned long child_first = 0;

	j->only_cpu = only_cpu;
	tlb_paths_start(&paths, mode, only_cpu < 0);
	for (r = 0; r < rounds && !tlb_failures(e); r++) {
		int f = only_cpu >= 0 ? only_cpu : e->cpus[r % e->ncpus];
		int cfirst = r & 1;

		j->round = e->round = r;
		if (tlb_move(e, f))
			break;
		for (s = 0; s < j->nslots; s++)
			j->expect[s] = value(PRE, r, 0, s);
		write_slot(j, ms, j->expect[ms]);
		write_slot(j, cs, j->expect[cs]);
		stage(j, TOUCH, 0, nworkers);
		/* The workers' slots unused in one_cpu keep the last round's. */
		for (s = nworkers; s < ms; s++)
			j->expect[s] = *slot(j, s);

		ASSERT_EQ(0, open_pipes(self));
		fflush(stdout);
		fflush(stderr);
		self->child = fork();
		ASSERT_LE(0, self->child);
		if (!self->child)
			child_occupied(self, f, only_cpu, mode, cfirst);
		keep_ends(self, 0);

		/* Every CPU caches the shared page for the parent's mm. */
		stage(j, CHECK, 1, nworkers);
		if (cfirst) {
			child_first++;
			if (talk(self, 'g', 'w'))
				break;
		} else if (tlb_before_flush(e, mode, f)) {
			break;
		}
		/*
		 * Parent first, main's write is the parent's COW: its flush
		 * is the test's (the child's, in the other rounds, is the
		 * child's mm and not counted here).
		 */
		j->expect[ms] = value(PAR, r, 0, ms);
		if (!cfirst)
			tlb_flush_begin(&paths);
		write_slot(j, ms, j->expect[ms]);
		if (!cfirst)
			tlb_flush_end(&paths);
		check_view(j, j->expect, "in the parent, after main's write");
		if (!cfirst) {
			if (talk(self, 'g', 'w'))
				break;
			/* Woken where they read: not the child's word. */
			stage(j, CHECK, 0, nworkers);
		}
		if (talk(self, 'g', 'd'))
			break;
		stage(j, CHECK, 0, nworkers);
		stage(j, WRITE_PAR, 0, nworkers);
		for (s = 0; s < nworkers; s++)
			j->expect[s] = value(PAR, r, 0, s);
		stage(j, CHECK, 0, nworkers);
		check_view(j, j->expect, "in the parent, at the end");
		reap(self, 0);
	}
	if (self->child > 0)
		reap(self, 1);
	TH_LOG("%ld rounds (%lu child first), %d workers, %s, in %llu ms",
	       r, child_first, nworkers, tlb_mode_name(mode),
	       (unsigned long long)(pda_test_now_ns() - t0) / 1000000);
	TLB_EXPECT_NO_FAILURES(e);
	TLB_PATHS_EXPECT(mode == TLB_OCCUPIED ? "occupied fork+COW" :
			 "lazy fork+COW", &paths);
	pda_stat("migrations", e->migrations);
}

TLB_OCCUPIED_TESTS(cow, occupied)

/* ------------------------------------------------------ concurrent */

/*
 * A parent worker of a concurrent round.  Phase PH_BEFORE: it writes ever
 * larger sequence numbers into its word, publishing each after the
 * write, and moves to its next CPU every MOVE_EVERY passes.  From
 * PH_QUIET (odd rounds: before fork(), so that no write takes the COW
 * before PH_WRITE) or PH_FORKED (once fork() returned) it goes back to
 * its home CPU, stays, and only reads, so each CPU caches the page now
 * shared with the child; in
 * PH_WRITE the even workers write again (the first write takes the
 * parent's COW while the odd ones still cache the shared page, which the
 * child then writes to).  Always: the child's word never changes, a
 * worker that only reads sees its own last write, and another worker's
 * word holds at least the sequence number that worker had published (a
 * stale entry for the shared page shows an older one).
 */
/* The sequence number in a worker's word, or 0 if it holds none. */
static uint32_t seq_of(struct job *j, int i, uint32_t v)
{
	return (v & ~(0xfffffu << 8)) == value(SEQ, 0, 0, i) ?
	       (v >> 8) & 0xfffff : 0;
}

/*
 * Worker @i's word, read after its published sequence number, holds at
 * least that one (release/acquire).  Checks one other worker per pass.
 * 0, or -1 (logged).
 */
static int check_other(struct job *j, int self, unsigned long pass)
{
	int i = pass % j->env->nworkers;
	volatile uint32_t *p = slot(j, i);
	uint32_t pub, v = 0;
	char buf[96];
	int sig;

	if (i == self)
		return 0;
	pub = __atomic_load_n(&j->pub[i], __ATOMIC_ACQUIRE);
	sig = tlb_probe_read(p, &v);
	if (sig) {
		tlb_fail(j->env, "read of %p: %s", p,
			 tlb_sig_str(sig, buf, sizeof(buf)));
		return -1;
	}
	if (pub && seq_of(j, i, v) < pub) {
		tlb_fail(j->env, "read %#x (sequence %u) from %p, worker %d's word, after it published %u (stale TLB entry?)",
			 v, seq_of(j, i, v), p, i, pub);
		return -1;
	}
	return 0;
}

static void concurrent_job(struct tlb_worker *w, void *arg)
{
	struct job *j = arg;
	volatile uint32_t *p = slot(j, w->idx);
	volatile uint32_t *c = slot(j, child_slot(j));
	uint32_t seq = 0, got = 0, mine = 0, v = 0;
	unsigned long n = 0;
	int k = 0, sig, home = 0;
	char buf[96];

	while (!__atomic_load_n(&j->stop, __ATOMIC_ACQUIRE)) {
		int ph = __atomic_load_n(&j->phase, __ATOMIC_ACQUIRE);
		int writer = ph == PH_BEFORE ||
			     (ph == PH_WRITE && !(w->idx & 1));

		if (ph == PH_BEFORE) {
			if (n % MOVE_EVERY == 0 &&
			    tlb_move(j->env, tlb_visit(j->env, w->idx, k++)))
				break;
		} else if (!home) {
			if (tlb_move(j->env, tlb_visit(j->env, w->idx, 0)))
				break;
			home = 1;
		}
		n++;
		if (writer) {
			mine = value(SEQ, 0, 0, w->idx) | ++seq << 8;
			sig = tlb_probe_write(p, mine);
		} else {
			sig = tlb_probe_read(p, &v);
			if (!sig && v != mine) {
				tlb_fail(j->env, "read %#x (%s) from %p, its own word, expected its last write %#x",
					 v, tag_name(v), p, mine);
				break;
			}
		}
		if (!sig)
			sig = tlb_probe_read(c, &got);
		if (sig) {
			tlb_fail(j->env, "access to %p or %p: %s", p, c,
				 tlb_sig_str(sig, buf, sizeof(buf)));
			break;
		}
		__atomic_store_n(&j->pub[w->idx], seq, __ATOMIC_RELEASE);
		if (check_other(j, w->idx, n))
			break;
		if (got != j->expect[child_slot(j)]) {
			tlb_fail(j->env, "read %#x (%s) from %p, the child's word, expected %#x%s",
				 got, tag_name(got), c,
				 j->expect[child_slot(j)],
				 TAG(got) == CHI ?
				 ": the child's write (stale TLB entry?)" : "");
			break;
		}
		__atomic_fetch_add(&j->count[w->idx], 1, __ATOMIC_RELAXED);
	}
}

/* Waits until every worker made ACCESSES more passes. */
static int wait_passes(struct job *j)
{
	unsigned long start[TLB_MAX_CPUS];
	uint64_t end = pda_test_now_ns() + tlb_wait_ns(j->env);
	int i;

	for (i = 0; i < j->env->nworkers; i++)
		start[i] = __atomic_load_n(&j->count[i], __ATOMIC_RELAXED);
	for (i = 0; i < j->env->nworkers; i++) {
		unsigned long spins = 0;

		while (__atomic_load_n(&j->count[i], __ATOMIC_RELAXED) <
		       start[i] + ACCESSES) {
			if (tlb_failures(j->env))
				return -1;
			if (pda_test_now_ns() > end) {
				tlb_fail(j->env, "worker %d made no %d passes within %llu s",
					 i, ACCESSES,
					 tlb_wait_ns(j->env) / 1000000000ULL);
				return -1;
			}
			tlb_pause(&spins);
		}
	}
	return 0;
}

/*
 * The child of a concurrent round: gets what each worker had published
 * when fork() returned in the parent (@pre: before fork()) and checks its
 * copy; writes its word where it is (main's CPU) and reports 'w'; on 'g'
 * visits every CPU, writing its word and checking its copy on each.
 */
static void __attribute__((noreturn))
child_concurrent(FIXTURE_DATA(cow) *self, const uint32_t *pre)
{
	struct job *j = &self->j;
	struct tlb_env *e = &self->env;
	int n = tlb_nvisits(e), cs = child_slot(j), nw = e->nworkers, i, k;
	uint32_t post[TLB_MAX_CPUS], snap[TLB_MAX_CPUS + 2];
	size_t len = nw * sizeof(post[0]);

	snprintf(tlb_who, sizeof(tlb_who), "child");
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	keep_ends(self, 1);
	if (read(self->to_child[0], post, len) != (ssize_t)len)
		_exit(1);
	for (i = 0; i < nw; i++) {
		uint32_t v = *slot(j, i), seq = seq_of(j, i, v);

		snap[i] = v;
		if (seq < pre[i] || seq > post[i] + 1)
			tlb_fail(e, "worker %d's word at %p is %#x in the child: sequence %u, expected %u..%u (published before fork() .. one past when it returned)",
				 i, slot(j, i), v, seq, pre[i], post[i] + 1);
	}
	snap[nw] = *slot(j, nw);
	snap[cs] = value(CHI, j->round, 0, cs);
	write_slot(j, cs, snap[cs]);
	check_view(j, snap, "in the child, its copy of the page");
	if (send_byte(self->to_parent[1], 'w') ||
	    recv_byte(self->to_child[0], 'g'))
		_exit(1);
	for (k = 0; k < n; k++) {
		if (tlb_move(e, tlb_visit(e, 0, k)))
			break;
		snap[cs] = value(CHI, j->round, k + 1, cs);
		write_slot(j, cs, snap[cs]);
		check_view(j, snap, "in the child, its copy of the page");
	}
	send_byte(self->to_parent[1], 'd');
	_exit(0);
}

static void set_phase(struct job *j, int ph)
{
	__atomic_store_n(&j->phase, ph, __ATOMIC_RELEASE);
}

/*
 * One concurrent round, the workers running: fork, PH_FORKED, PH_WRITE,
 * the child's first write, its visits.  0, or -1 (logged).  No ASSERT in
 * here: the workers would never stop.
 */
static int concurrent_round(FIXTURE_DATA(cow) *self)
{
	struct tlb_env *e = &self->env;
	struct job *j = &self->j;
	uint32_t pre[TLB_MAX_CPUS], post[TLB_MAX_CPUS];
	size_t len = e->nworkers * sizeof(post[0]);
	int i;

	if (wait_passes(j))
		return -1;
	/* Odd rounds: no write races the fork; PH_WRITE takes the COW. */
	if (e->round & 1) {
		set_phase(j, PH_QUIET);
		if (wait_passes(j))
			return -1;
	}
	for (i = 0; i < e->nworkers; i++)
		pre[i] = __atomic_load_n(&j->pub[i], __ATOMIC_ACQUIRE);
	fflush(stdout);
	fflush(stderr);
	self->child = fork();
	if (!self->child)
		child_concurrent(self, pre);
	set_phase(j, PH_FORKED);
	for (i = 0; i < e->nworkers; i++)
		post[i] = __atomic_load_n(&j->pub[i], __ATOMIC_ACQUIRE);
	if (self->child < 0) {
		tlb_fail(e, "fork: %s", strerror(errno));
		self->child = 0;
		return -1;
	}
	keep_ends(self, 0);
	/* Every worker at home, reading the page shared with the child. */
	if (wait_passes(j))
		return -1;
	set_phase(j, PH_WRITE);
	if (wait_passes(j))
		return -1;
	if (write(self->to_child[1], post, len) != (ssize_t)len) {
		tlb_fail(e, "write to the child's pipe: %s", strerror(errno));
		return -1;
	}
	if (recv_byte(self->to_parent[0], 'w')) {
		tlb_fail(e, "the child did not answer 'w'");
		return -1;
	}
	/* The readers read on after the child wrote into that page. */
	if (wait_passes(j))
		return -1;
	if (send_byte(self->to_child[1], 'g') ||
	    recv_byte(self->to_parent[0], 'd')) {
		tlb_fail(e, "the child did not answer 'd'");
		return -1;
	}
	return wait_passes(j);
}

TEST_F_TIMEOUT(cow, concurrent, TLB_TIMEOUT)
{
	struct tlb_env *e = &self->env;
	struct job *j = &self->j;
	long rounds = tlb_rounds(ROUNDS_CONCURRENT), r;
	struct tlb_vmstat before, after;
	uint64_t t0 = pda_test_now_ns();
	int i, cs = child_slot(j), ok;

	if (e->ncpus < 2)
		SKIP(return, "one online CPU: nothing runs concurrently");
	j->only_cpu = -1;
	tlb_vmstat_read(&before);
	for (r = 0; r < rounds && !tlb_failures(e); r++) {
		j->round = e->round = r;
		if (tlb_move(e, e->cpus[r % e->ncpus]))
			break;
		j->expect[cs] = value(PRE, r, 0, cs);
		write_slot(j, cs, j->expect[cs]);
		/* No sequence numbers from the last round. */
		for (i = 0; i < e->nworkers; i++)
			write_slot(j, i, 0);
		memset(j->pub, 0, sizeof(j->pub));
		memset(j->count, 0, sizeof(j->count));
		j->stop = 0;
		set_phase(j, PH_BEFORE);
		ASSERT_EQ(0, open_pipes(self));
		for (i = 0; i < e->nworkers; i++)
			tlb_worker_start(&e->w[i], concurrent_job, j);
		ok = !concurrent_round(self);
		__atomic_store_n(&j->stop, 1, __ATOMIC_RELEASE);
		for (i = 0; i < e->nworkers; i++)
			tlb_worker_wait(&e->w[i]);
		if (self->child > 0)
			reap(self, !ok);
	}
	tlb_vmstat_read(&after);
	TH_LOG("%ld forks, %d workers running throughout, in %llu ms",
	       r, e->nworkers,
	       (unsigned long long)(pda_test_now_ns() - t0) / 1000000);
	TLB_EXPECT_NO_FAILURES(e);
	TLB_VMSTAT_PRINT("concurrent fork+COW", &before, &after);
	TLB_EXPECT_OFF_UNCOUNTED("concurrent fork+COW", &before, &after);
	pda_stat("migrations", e->migrations);
}

TEST_HARNESS_MAIN
