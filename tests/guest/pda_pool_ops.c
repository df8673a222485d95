// SPDX-License-Identifier: GPL-2.0
/*
 * Every accessor of tools/lib/pda/pda_pool.h, pinned to each online CPU
 * in turn, does what its operation says to that CPU's copy and to no
 * other, on a field inside the first line of an object and on one three
 * lines in (where the copy is not contiguous), 32-bit and long:
 *
 * - load, store, add, sub, inc, dec, and, or, xor, xchg (old value back),
 *   cmpxchg (stores on a match, not on a mismatch; old value back);
 * - every other CPU's copy keeps its own value;
 * - through the method the process must have: the segment wherever the
 *   kernel gives it (the selector is then in %fs), else an rseq critical
 *   section where glibc registered rseq, else atomics on the copy of the
 *   CPU pda_cpu() names; pda_cpu() agrees with sched_getcpu() while
 *   pinned.
 *
 * - sums are in the field's width: +1 on one CPU's copy and -1 on
 *   another's sum to 0;
 * - a successful call leaves errno alone; a misaligned offset (one that
 *   could cross into the next CPU's line) gets EINVAL and changes nothing.
 *
 * And, where the process updates through the segment:
 * - a thread whose %fs is null: its first update loads the selector and
 *   lands in the pinned CPU's copy;
 * - a thread whose %fs holds another selector: every operation goes
 *   through rseq and does the same as above, each CPU in turn;
 * - without rseq, such a thread's updates fail with EBUSY and change
 *   nothing, and a load still reads this CPU's copy.
 *
 * without_rseq runs this program's ops tests again with glibc's rseq
 * turned off (GLIBC_TUNABLES=glibc.pthread.rseq=0), so the atomic method
 * and the EBUSY refusal are tested on every kernel too.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "lib/pool_test.h"

/* An object whose last field is three lines in. */
struct obj {
	uint32_t a;
	unsigned long l;
	unsigned char pad[192 - 4 - sizeof(unsigned long)];
	uint32_t far;
	unsigned long lfar;
};

#define OFF(field)	offsetof(struct obj, field)

FIXTURE(ops) {
	struct pda_pool *pool;
	struct obj *o;
	int cpus[CPU_SETSIZE];
	int n;
};

FIXTURE_SETUP(ops)
{
	self->n = pda_test_online(self->cpus, CPU_SETSIZE);
	ASSERT_LT(0, self->n);
	self->pool = pda_pool_create(4096);
	ASSERT_TRUE(self->pool != NULL);
	self->o = pda_pool_alloc(self->pool, sizeof(struct obj),
				 alignof(struct obj));
	ASSERT_TRUE(self->o != NULL);
	TH_LOG("%d online, %d possible CPUs; method %s; glibc rseq %s",
	       self->n, pda_pool_cpus(self->pool),
	       pda_pool_method_name(pda_pool_method()),
	       pool_test_have_rseq() ? "registered" : "off");
}

FIXTURE_TEARDOWN(ops)
{
	pda_pool_destroy(self->pool);
}

/* A value of CPU @cpu's copy nobody else's has. */
static uint32_t mark(int cpu, int field)
{
	return 0x51000000U | (uint32_t)cpu << 8 | (uint32_t)field;
}

/* Sets every possible CPU's copy of the four fields to its mark. */
static void mark_all(struct pda_pool *pool, struct obj *o)
{
	int c;

	for (c = 0; c < pda_pool_cpus(pool); c++) {
		*(uint32_t *)pda_pool_cpu_ptr(pool, o, OFF(a), c) = mark(c, 0);
		*(unsigned long *)pda_pool_cpu_ptr(pool, o, OFF(l), c) =
			mark(c, 1);
		*(uint32_t *)pda_pool_cpu_ptr(pool, o, OFF(far), c) =
			mark(c, 2);
		*(unsigned long *)pda_pool_cpu_ptr(pool, o, OFF(lfar), c) =
			mark(c, 3);
	}
}

/* How many copies other than @cpu's lost their mark. */
static int others_changed(struct pda_pool *pool, struct obj *o, int cpu)
{
	int c, bad = 0;

	for (c = 0; c < pda_pool_cpus(pool); c++) {
		if (c == cpu)
			continue;
		bad += *(uint32_t *)pda_pool_cpu_ptr(pool, o, OFF(a), c) !=
		       mark(c, 0);
		bad += *(unsigned long *)pda_pool_cpu_ptr(pool, o, OFF(l), c) !=
		       mark(c, 1);
		bad += *(uint32_t *)pda_pool_cpu_ptr(pool, o, OFF(far), c) !=
		       mark(c, 2);
		bad += *(unsigned long *)pda_pool_cpu_ptr(pool, o, OFF(lfar),
							  c) != mark(c, 3);
	}
	return bad;
}

/*
 * The whole sequence on one field of width W at @off, pinned to @cpu,
 * each step checked against the copy in plain memory.  A macro, so that
 * both widths run the same steps.
 */
#define CHECK_OPS(W, T, off)						\
	do {								\
		T *mine = pda_pool_cpu_ptr(pool, o, off, cpu), prev;	\
									\
		ASSERT_EQ(*mine, pda_pool_load_##W(pool, o, off));	\
		ASSERT_EQ(0, pda_pool_store_##W(pool, o, off, 1000));	\
		ASSERT_EQ((T)1000, *mine);				\
		ASSERT_EQ(0, pda_pool_add_##W(pool, o, off, 34));	\
		ASSERT_EQ(0, pda_pool_sub_##W(pool, o, off, 4));	\
		ASSERT_EQ(0, pda_pool_inc_##W(pool, o, off));		\
		ASSERT_EQ(0, pda_pool_inc_##W(pool, o, off));		\
		ASSERT_EQ(0, pda_pool_dec_##W(pool, o, off));		\
		ASSERT_EQ((T)1031, *mine);				\
		ASSERT_EQ((T)1031, pda_pool_load_##W(pool, o, off));	\
		ASSERT_EQ(0, pda_pool_and_##W(pool, o, off, 0xff));	\
		ASSERT_EQ((T)(1031 & 0xff), *mine);			\
		ASSERT_EQ(0, pda_pool_or_##W(pool, o, off, 0x300));	\
		ASSERT_EQ((T)((1031 & 0xff) | 0x300), *mine);		\
		ASSERT_EQ(0, pda_pool_xor_##W(pool, o, off, 0x101));	\
		ASSERT_EQ((T)(((1031 & 0xff) | 0x300) ^ 0x101), *mine);	\
		ASSERT_EQ(0, pda_pool_xchg_##W(pool, o, off, 77, &prev)); \
		ASSERT_EQ((T)(((1031 & 0xff) | 0x300) ^ 0x101), prev);	\
		ASSERT_EQ((T)77, *mine);				\
		ASSERT_EQ(0, pda_pool_cmpxchg_##W(pool, o, off, 76, 5,	\
						  &prev));		\
		ASSERT_EQ((T)77, prev);					\
		ASSERT_EQ((T)77, *mine);	/* no match: kept */	\
		ASSERT_EQ(0, pda_pool_cmpxchg_##W(pool, o, off, 77, 5,	\
						  &prev));		\
		ASSERT_EQ((T)77, prev);					\
		ASSERT_EQ((T)5, *mine);					\
		ASSERT_EQ(0, pda_pool_dec_##W(pool, o, off));		\
		ASSERT_EQ(0, pda_pool_sub_##W(pool, o, off, 5));	\
		ASSERT_EQ((T)-1, *mine);	/* wraps, as unsigned */ \
	} while (0)

/*
 * CHECK_OPS on all four fields, pinned to each of the @n CPUs in turn,
 * and no other CPU's copy changed.
 */
static void ops_on_each_cpu(struct __test_metadata *_metadata,
			    struct pda_pool *pool, struct obj *o,
			    const int *cpus, int n)
{
	int i, cpu;

	for (i = 0; i < n; i++) {
		cpu = cpus[i];
		ASSERT_EQ(0, pda_test_pin(cpu));
		ASSERT_EQ(cpu, sched_getcpu());
		ASSERT_EQ(cpu, pda_cpu());
		mark_all(pool, o);
		CHECK_OPS(u32, uint32_t, OFF(a));
		CHECK_OPS(ulong, unsigned long, OFF(l));
		CHECK_OPS(u32, uint32_t, OFF(far));
		CHECK_OPS(ulong, unsigned long, OFF(lfar));
		ASSERT_EQ(0, others_changed(pool, o, cpu)) {
			TH_LOG("CPU %d: another CPU's copy changed", cpu);
		}
		ASSERT_EQ(cpu, sched_getcpu());
	}
	pda_test_unpin();
}

TEST_F(ops, each_cpu_each_op)
{
	int method = pda_pool_method();

	EXPECT_EQ(pool_test_expected_method(), method);
	/* The first thread's own path is the process's method. */
	EXPECT_EQ(method, pda_pool_path());
	ops_on_each_cpu(_metadata, self->pool, self->o, self->cpus, self->n);
	if (method != PDA_POOL_SEGMENT)
		TH_LOG("%s path, CPU number by %s",
		       pda_pool_method_name(method),
		       pda_cpu_method_name(pda_cpu_method()));
}

TEST_F(ops, sum_wraps_with_the_field)
{
	struct pda_pool *pool = self->pool;
	struct obj *o = self->o;

	if (self->n < 2)
		SKIP(return, "one online CPU: no second copy to wrap");
	mark_all(pool, o);
	ASSERT_EQ(0, pda_test_pin(self->cpus[0]));
	ASSERT_EQ(0, pda_pool_store_u32(pool, o, OFF(far), 1));
	ASSERT_EQ(0, pda_pool_store_ulong(pool, o, OFF(l), 1));
	ASSERT_EQ(0, pda_test_pin(self->cpus[1]));
	ASSERT_EQ(0, pda_pool_store_u32(pool, o, OFF(far), 0));
	ASSERT_EQ(0, pda_pool_dec_u32(pool, o, OFF(far)));
	ASSERT_EQ(0, pda_pool_store_ulong(pool, o, OFF(l), 0));
	ASSERT_EQ(0, pda_pool_sub_ulong(pool, o, OFF(l), 1));
	pda_test_unpin();
	/* Every other copy back to 0, so the two are the whole sum. */
	for (int c = 0; c < pda_pool_cpus(pool); c++)
		if (c != self->cpus[0] && c != self->cpus[1]) {
			*(uint32_t *)pda_pool_cpu_ptr(pool, o, OFF(far), c) = 0;
			*(unsigned long *)pda_pool_cpu_ptr(pool, o, OFF(l), c) = 0;
		}
	EXPECT_EQ(0, pda_pool_sum_u32(pool, o, OFF(far)));
	EXPECT_EQ(0, pda_pool_sum_ulong(pool, o, OFF(l)));
}

TEST_F(ops, errno_and_bad_offsets)
{
	struct pda_pool *pool = self->pool;
	struct obj *o = self->o;
	uint32_t prev;
	volatile size_t odd = OFF(a) + 2;	/* not known at compile time */

	mark_all(pool, o);
	errno = 12345;
	EXPECT_EQ(0, pda_pool_add_u32(pool, o, OFF(far), 1));
	EXPECT_EQ(0, pda_pool_xchg_u32(pool, o, OFF(a), 7, &prev));
	EXPECT_EQ(0, pda_pool_cmpxchg_u32(pool, o, OFF(a), 7, 8, &prev));
	EXPECT_EQ(0, pda_pool_inc_ulong(pool, o, OFF(lfar)));
	pda_pool_load_ulong(pool, o, OFF(l));
	pda_pool_sum_u32(pool, o, OFF(far));
	EXPECT_TRUE(pda_pool_alloc(pool, 4, 4) != NULL);
	EXPECT_EQ(12345, errno);

	mark_all(pool, o);
	errno = 0;
	EXPECT_EQ(-1, pda_pool_add_u32(pool, o, odd, 1));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(-1, pda_pool_xchg_u32(pool, o, odd, 1, &prev));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(0, pda_pool_load_u32(pool, o, odd));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(0, pda_pool_sum_u32(pool, o, odd));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, others_changed(pool, o, -1));
}

#if PDA_HAVE_SEGMENT
struct null_arg {
	struct pda_pool *pool;
	struct obj *o;
	int cpu;
	int ret, sel_before, sel_after;
};

/* A thread with a null %fs makes a pool update first of all. */
static void *null_thread(void *p)
{
	struct null_arg *a = p;

	if (pda_test_pin(a->cpu))
		return NULL;
	pda_test_load_seg(0);
	a->sel_before = pda_read_seg();
	a->ret = pda_pool_add_u32(a->pool, a->o, OFF(far), 5);
	a->sel_after = pda_read_seg();
	return NULL;
}

TEST_F(ops, null_fs_update_loads_selector)
{
	struct null_arg a = { .pool = self->pool, .o = self->o, .ret = -2 };
	pthread_t t;
	uint32_t *copy;

	if (pda_pool_method() != PDA_POOL_SEGMENT)
		SKIP(return, "the process does not update through the segment");
	a.cpu = self->cpus[self->n - 1];
	mark_all(self->pool, self->o);
	ASSERT_EQ(0, pthread_create(&t, NULL, null_thread, &a));
	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_EQ(0, a.ret);
	EXPECT_EQ(0, a.sel_before);
	EXPECT_EQ(PDA_USER_SELECTOR, a.sel_after);
	copy = pda_pool_cpu_ptr(self->pool, self->o, OFF(far), a.cpu);
	EXPECT_EQ(mark(a.cpu, 2) + 5, *copy);
	*copy = mark(a.cpu, 2);
	EXPECT_EQ(0, others_changed(self->pool, self->o, -1));
}

struct busy_arg {
	struct pda_pool *pool;
	struct obj *o;
	int cpu;
	int fails, ebusy, changed, load_ok;
};

/* Every update from a thread whose %fs holds __USER_DS. */
static void *busy_thread(void *p)
{
	struct busy_arg *b = p;
	struct pda_pool *pool = b->pool;
	struct obj *o = b->o;
	uint32_t prev32;
	unsigned long prevl;
	int r[8], i;

	if (pda_test_pin(b->cpu))
		return NULL;
	pda_test_load_seg(pda_test_user_ds());
	errno = 0;
	r[0] = pda_pool_store_u32(pool, o, OFF(a), 1);
	r[1] = pda_pool_add_u32(pool, o, OFF(a), 1);
	r[2] = pda_pool_and_ulong(pool, o, OFF(l), 1);
	r[3] = pda_pool_or_u32(pool, o, OFF(far), 1);
	r[4] = pda_pool_xor_ulong(pool, o, OFF(lfar), 1);
	r[5] = pda_pool_xchg_u32(pool, o, OFF(a), 1, &prev32);
	r[6] = pda_pool_cmpxchg_ulong(pool, o, OFF(l), mark(b->cpu, 1), 1,
				      &prevl);
	r[7] = pda_pool_inc_u32(pool, o, OFF(far));
	for (i = 0; i < 8; i++)
		b->fails += r[i] == -1;
	b->ebusy = errno == EBUSY;
	b->changed = others_changed(pool, o, -1);
	b->load_ok = pda_pool_load_u32(pool, o, OFF(far)) == mark(b->cpu, 2) &&
		     pda_pool_load_ulong(pool, o, OFF(l)) == mark(b->cpu, 1);
	return NULL;
}

TEST_F(ops, busy_fs_changes_nothing)
{
	struct busy_arg b = { .pool = self->pool, .o = self->o };
	pthread_t t;

	if (pda_pool_method() != PDA_POOL_SEGMENT)
		SKIP(return, "the process does not update through the segment");
	if (pool_test_have_rseq())
		SKIP(return, "rseq registered: a busy %%fs updates through it (busy_fs_updates_through_rseq; without_rseq runs this)");
	b.cpu = self->cpus[self->n - 1];
	mark_all(self->pool, self->o);
	ASSERT_EQ(0, pthread_create(&t, NULL, busy_thread, &b));
	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_EQ(8, b.fails);
	EXPECT_EQ(1, b.ebusy);
	EXPECT_EQ(0, b.changed);
	EXPECT_EQ(1, b.load_ok);
}

/*
 * This test's own thread, %fs holding __USER_DS in a segment process:
 * every operation through rseq, on each CPU's copy in turn.
 */
TEST_F(ops, busy_fs_updates_through_rseq)
{
	if (pda_pool_method() != PDA_POOL_SEGMENT)
		SKIP(return, "the process does not update through the segment");
	if (!pool_test_have_rseq())
		SKIP(return, "glibc registered no rseq: busy_fs_changes_nothing covers this");
	pda_test_load_seg(pda_test_user_ds());
	errno = 0;
	ASSERT_EQ(PDA_POOL_RSEQ, pda_pool_path());
	ASSERT_EQ(0, errno);
	ops_on_each_cpu(_metadata, self->pool, self->o, self->cpus, self->n);
	ASSERT_EQ(pda_test_user_ds(), pda_read_seg());
	EXPECT_EQ(0, errno);
	pda_test_load_seg(PDA_USER_SELECTOR);
}
#endif

#if PDA_HAVE_RSEQ_SECTIONS
static unsigned char *fault_page;
static long fault_page_size;
static volatile sig_atomic_t faults;

/* The commit's store faulted: count it, and let the next try through. */
static void unprotect(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	faults++;
	mprotect(fault_page, fault_page_size, PROT_READ | PROT_WRITE);
}

/*
 * One operation whose first try's commit faults on a read-only copy: the
 * kernel delivers SIGSEGV and moves the section to its abort handler, so
 * the call returns 1 with the copy (and *prev) unchanged; the second
 * try, the page writable again, commits.  @expr is the call, @want the
 * copy after it.
 */
#define ABORT_THEN_COMMIT(T, copy, start, expr, want)			\
	do {								\
		*(copy) = (start);					\
		ASSERT_EQ(0, mprotect(fault_page, fault_page_size,	\
				      PROT_READ));			\
		faults = 0;						\
		EXPECT_EQ(1, (expr)) {					\
			TH_LOG("%s: committed on a read-only copy", #expr); \
		}							\
		EXPECT_EQ(1, faults);					\
		EXPECT_EQ((T)(start), *(copy));				\
		EXPECT_EQ(0, (expr));					\
		EXPECT_EQ((T)(want), *(copy));				\
	} while (0)

/*
 * Every section's abort path, taken for certain: under emulation a
 * section seldom meets an interrupt, so the sums of pda_pool_sum may
 * never see one.
 */
TEST(rseq_abort_on_fault)
{
	struct rseq *rs = pda_rseq_area();
	struct sigaction sa = { .sa_sigaction = unprotect,
				.sa_flags = SA_SIGINFO };
	uint32_t *w, p32 = 7;
	unsigned long *l, pl = 7;
	unsigned char *p0;
	int cpu;

	if (!rs)
		SKIP(return, "glibc registered no rseq");
	cpu = sched_getcpu();
	ASSERT_EQ(0, pda_test_pin(cpu));
	ASSERT_EQ(cpu, (int)rs->cpu_id);
	fault_page_size = sysconf(_SC_PAGESIZE);
	/* CPU 0's copy at p0; this CPU's, at p0 + cpu * 64, on its own page. */
	fault_page = mmap(NULL, fault_page_size, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(fault_page != MAP_FAILED);
	p0 = fault_page - (size_t)cpu * 64;
	w = (uint32_t *)fault_page;
	l = (unsigned long *)fault_page;
	ASSERT_EQ(0, sigaction(SIGSEGV, &sa, NULL));

	ABORT_THEN_COMMIT(uint32_t, w, 5, pda_rseq_add_u32(rs, p0, 3), 8);
	ABORT_THEN_COMMIT(uint32_t, w, 6, pda_rseq_and_u32(rs, p0, 3), 2);
	ABORT_THEN_COMMIT(uint32_t, w, 6, pda_rseq_or_u32(rs, p0, 3), 7);
	ABORT_THEN_COMMIT(uint32_t, w, 6, pda_rseq_xor_u32(rs, p0, 3), 5);
	ABORT_THEN_COMMIT(uint32_t, w, 6, pda_rseq_store_u32(rs, p0, 3), 3);
	ABORT_THEN_COMMIT(uint32_t, w, 6,
			  pda_rseq_xchg_u32(rs, p0, 3, &p32), 3);
	EXPECT_EQ(6, p32);
	ABORT_THEN_COMMIT(uint32_t, w, 6,
			  pda_rseq_cmpxchg_u32(rs, p0, 6, 9, &p32), 9);
	EXPECT_EQ(6, p32);
	ABORT_THEN_COMMIT(unsigned long, l, 5, pda_rseq_add_ulong(rs, p0, 3), 8);
	ABORT_THEN_COMMIT(unsigned long, l, 6, pda_rseq_and_ulong(rs, p0, 3), 2);
	ABORT_THEN_COMMIT(unsigned long, l, 6, pda_rseq_or_ulong(rs, p0, 3), 7);
	ABORT_THEN_COMMIT(unsigned long, l, 6, pda_rseq_xor_ulong(rs, p0, 3), 5);
	ABORT_THEN_COMMIT(unsigned long, l, 6,
			  pda_rseq_store_ulong(rs, p0, 3), 3);
	ABORT_THEN_COMMIT(unsigned long, l, 6,
			  pda_rseq_xchg_ulong(rs, p0, 3, &pl), 3);
	EXPECT_EQ(6, pl);
	ABORT_THEN_COMMIT(unsigned long, l, 6,
			  pda_rseq_cmpxchg_ulong(rs, p0, 6, 9, &pl), 9);
	EXPECT_EQ(6, pl);
	pda_test_unpin();
	signal(SIGSEGV, SIG_DFL);
	munmap(fault_page, fault_page_size);
}
#endif

/*
 * The ops fixture again, in a new image of this program with glibc's
 * rseq registration turned off: its output goes to a file, shown here
 * only if it failed.  It must say rseq is off, take atomics where there
 * is no segment, and, where there is, run busy_fs_changes_nothing.
 */
TEST(without_rseq)
{
	char *argv[] = { "pda_pool_ops", "-f", "ops", NULL };
	char *envp[] = { "GLIBC_TUNABLES=glibc.pthread.rseq=0", NULL };
	char out[] = "/tmp/pda_pool_ops.XXXXXX", line[512];
	int seg = pda_pool_method() == PDA_POOL_SEGMENT;
	const char *method = seg ? "method segment;" : "method atomic;";
	int fd, status, off = 0, method_seen = 0, busy_ran = 0;
	pid_t pid;
	FILE *f;

	if (!pool_test_have_rseq())
		SKIP(return, "rseq is off already: the tests above ran without it");
	fd = mkstemp(out);
	ASSERT_LE(0, fd);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		dup2(fd, 1);
		dup2(fd, 2);
		execve("/proc/self/exe", argv, envp);
		_exit(127);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	f = fdopen(fd, "r");
	ASSERT_TRUE(f != NULL);
	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		off |= strstr(line, "glibc rseq off") != NULL;
		method_seen |= strstr(line, method) != NULL;
		busy_ran |= !strncmp(line, "ok ", 3) &&
			    strstr(line, "ops.busy_fs_changes_nothing") &&
			    !strstr(line, "SKIP");
	}
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0 && off &&
		    method_seen && (busy_ran || !seg)) {
		TH_LOG("exit status %#x; rseq off %d, \"%s\" %d, busy_fs ran %d",
		       status, off, method, method_seen, busy_ran);
		rewind(f);
		while (fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = '\0';
			TH_LOG("| %s", line);
		}
	}
	fclose(f);
	unlink(out);
}

TEST_HARNESS_MAIN
