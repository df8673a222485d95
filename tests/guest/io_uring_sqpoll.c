// SPDX-License-Identifier: GPL-2.0
/*
 * An io_uring SQPOLL thread reads the task's memory on a CPU the task
 * never runs on, and must see every mapping change the task made.  The
 * thread shares the task's mm but runs in the kernel only; a kernel that
 * thought the mm lived on the task's CPU alone (arm64's
 * CONFIG_ARM64_TLBI_LOCAL gone wrong) would flush that CPU's TLB only,
 * and the thread would read through a stale translation.
 *
 * Raw system calls, no liburing: io_uring_setup() with
 * IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF, the thread bound to CPU b
 * (the last online CPU), the task pinned to CPU a (the first; checked
 * with sched_getcpu() every round).  The thread's read is an
 * IORING_OP_WRITE from a private anonymous buffer into a pipe, which the
 * task reads back.  The cases (lib/tlb_kuser.h), each in two variants:
 *
 * - sqpoll.idle.*: sq_thread_idle 1 ms; before each change the task
 *   waits until the thread is asleep (IORING_SQ_NEED_WAKEUP, and /proc
 *   state S), and the write after it must wake the thread
 *   (IORING_ENTER_SQ_WAKEUP): its CPU holds the mm only lazily;
 * - sqpoll.busy.*: sq_thread_idle 2000 ms; the submissions come back to
 *   back, so the thread polls on CPU b throughout each change (seen in
 *   /proc state R at least once);
 *
 * - dontneed: the task fills the buffer with a nonzero pattern, the
 *   thread's write carries the pattern, the task calls
 *   madvise(MADV_DONTNEED), and the next write must carry zeros;
 * - mprotect: after mprotect(PROT_NONE) the write must complete with
 *   -EFAULT and leave the pipe empty; after mprotect back to read-write
 *   it must carry the pattern again.
 *
 * Each change checks that the thread is on CPU b (/proc).  On arm64 the
 * tlbi_* counters of /proc/vmstat are read right around every change:
 * booted with tlbi_local=on, a change during which no other process ran
 * must count no local or skipped flush, since CPU b holds the mm too (and
 * DONTNEED and PROT_NONE one broadcast at least); booted without it,
 * nothing may be counted over the case; they must exist.  Each case logs
 * their sums (over its judged changes, and over the whole case), a
 * change its own only when a check fails: output wakes init, and a
 * change during which another process ran cannot be judged.  The data
 * checks are the core and hold on every architecture.
 *
 * io_uring_setup() failing with ENOSYS (no CONFIG_IO_URING: the i386 and
 * arm targets) skips the whole program, as does a single online CPU; any
 * other failure (EPERM: io_uring disabled by sysctl) fails.  It builds
 * for every architecture; the x86_64 targets run it as a 64-bit and as a
 * 32-bit (compat io_uring) program.  pda.scale=N multiplies the rounds.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/io_uring.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "lib/cpulist.h"
#include "lib/tlb_kuser.h"

/* The same numbers on every architecture since Linux 5.1. */
#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup	425
#endif
#ifndef __NR_io_uring_enter
#define __NR_io_uring_enter	426
#endif

#define NPAGES			4
#define ROUNDS_DONTNEED		8
#define ROUNDS_MPROTECT		6
#define TIMEOUT			300

static int uring_setup(unsigned int entries, struct io_uring_params *p)
{
	return syscall(__NR_io_uring_setup, entries, p);
}

static int uring_enter(int fd, unsigned int submit, unsigned int complete,
		       unsigned int flags)
{
	return syscall(__NR_io_uring_enter, fd, submit, complete, flags,
		       NULL, 0);
}

/* The rings, as io_uring_setup()'s offsets place them. */
struct ring {
	int fd;
	struct io_uring_params p;
	void *sq_map, *cq_map, *sqe_map;
	size_t sq_len, cq_len, sqe_len;
	unsigned int *sq_tail, *sq_mask, *sq_flags, *sq_array;
	unsigned int *cq_head, *cq_tail, *cq_mask;
	struct io_uring_cqe *cqes;
	struct io_uring_sqe *sqes;
	unsigned long long seq;
};

/* What the SQPOLL thread's reads need: the ring, and the pipe. */
struct sq {
	struct ring ring;
	int pipe[2];
};

FIXTURE(sqpoll) {
	struct sq sq;
	struct tlb_kuser k;
};

FIXTURE_VARIANT(sqpoll) {
	unsigned int idle_ms;
	int busy;
};

FIXTURE_VARIANT_ADD(sqpoll, idle) {
	.idle_ms = 1,
	.busy = 0,
};

FIXTURE_VARIANT_ADD(sqpoll, busy) {
	.idle_ms = 2000,
	.busy = 1,
};

static void *map_ring(int fd, size_t len, off_t off)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, fd, off);

	return p == MAP_FAILED ? NULL : p;
}

/* Maps the rings of @r->fd; 0, or -errno with what failed in @why. */
static int ring_map(struct ring *r, char *why, size_t len)
{
	struct io_uring_params *p = &r->p;

	r->sq_len = p->sq_off.array + p->sq_entries * sizeof(unsigned int);
	r->cq_len = p->cq_off.cqes +
		    p->cq_entries * sizeof(struct io_uring_cqe);
	if (p->features & IORING_FEAT_SINGLE_MMAP) {
		if (r->cq_len > r->sq_len)
			r->sq_len = r->cq_len;
		r->cq_len = r->sq_len;
	}
	r->sq_map = map_ring(r->fd, r->sq_len, IORING_OFF_SQ_RING);
	if (!r->sq_map) {
		snprintf(why, len, "mmap of the SQ ring: %s", strerror(errno));
		return -errno;
	}
	if (p->features & IORING_FEAT_SINGLE_MMAP) {
		r->cq_map = r->sq_map;
	} else {
		r->cq_map = map_ring(r->fd, r->cq_len, IORING_OFF_CQ_RING);
		if (!r->cq_map) {
			snprintf(why, len, "mmap of the CQ ring: %s",
				 strerror(errno));
			return -errno;
		}
	}
	r->sqe_len = p->sq_entries * sizeof(struct io_uring_sqe);
	r->sqe_map = map_ring(r->fd, r->sqe_len, IORING_OFF_SQES);
	if (!r->sqe_map) {
		snprintf(why, len, "mmap of the SQEs: %s", strerror(errno));
		return -errno;
	}
	r->sq_tail = (unsigned int *)((char *)r->sq_map + p->sq_off.tail);
	r->sq_mask = (unsigned int *)((char *)r->sq_map + p->sq_off.ring_mask);
	r->sq_flags = (unsigned int *)((char *)r->sq_map + p->sq_off.flags);
	r->sq_array = (unsigned int *)((char *)r->sq_map + p->sq_off.array);
	r->cq_head = (unsigned int *)((char *)r->cq_map + p->cq_off.head);
	r->cq_tail = (unsigned int *)((char *)r->cq_map + p->cq_off.tail);
	r->cq_mask = (unsigned int *)((char *)r->cq_map + p->cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)((char *)r->cq_map + p->cq_off.cqes);
	r->sqes = r->sqe_map;
	return 0;
}

static void ring_unmap(struct ring *r)
{
	if (r->sqe_map)
		munmap(r->sqe_map, r->sqe_len);
	if (r->cq_map && r->cq_map != r->sq_map)
		munmap(r->cq_map, r->cq_len);
	if (r->sq_map)
		munmap(r->sq_map, r->sq_len);
}

/* Waits for one completion; 0, or -1 with why. */
static int ring_wait(struct ring *r, struct io_uring_cqe *cqe, char *why,
		     size_t len)
{
	uint64_t end = tlb_kuser_now_ns() + TLB_KUSER_WAIT_NS;
	unsigned long spins = 0;

	for (;;) {
		unsigned int head = *r->cq_head;

		/* Pairs with the kernel's release of the tail. */
		if (head != __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE)) {
			*cqe = r->cqes[head & *r->cq_mask];
			/* The entry is read before the kernel may reuse it. */
			__atomic_store_n(r->cq_head, head + 1,
					 __ATOMIC_RELEASE);
			return 0;
		}
		if (tlb_kuser_now_ns() > end) {
			snprintf(why, len, "no completion within %llu s (SQ flags %#x)",
				 TLB_KUSER_WAIT_NS / 1000000000ULL,
				 __atomic_load_n(r->sq_flags,
						 __ATOMIC_RELAXED));
			return -1;
		}
		if (spins++ < 1000)
			sched_yield();
		else
			usleep(50);
	}
}

static int sq_asleep(struct tlb_kuser *k)
{
	struct sq *sq = k->arg;

	return !!(__atomic_load_n(sq->ring.sq_flags, __ATOMIC_ACQUIRE) &
		  IORING_SQ_NEED_WAKEUP);
}

/*
 * The thread writes the buffer into the pipe; the task reads what
 * arrived into k->out.
 */
static int sq_read(struct tlb_kuser *k, long *res, int *woke, char *why,
		   size_t len)
{
	struct sq *sq = k->arg;
	struct ring *r = &sq->ring;
	unsigned int tail = *r->sq_tail, idx = tail & *r->sq_mask;
	struct io_uring_sqe *sqe = &r->sqes[idx];
	unsigned long long ud = ++r->seq;
	struct io_uring_cqe cqe;
	size_t got = 0;
	ssize_t n;
	int left = 0;

	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_WRITE;
	sqe->fd = sq->pipe[1];
	sqe->addr = (uintptr_t)k->buf;
	sqe->len = k->len;
	sqe->off = 0;
	sqe->user_data = ud;
	r->sq_array[idx] = idx;
	/* The entry is written before the thread can see the new tail. */
	__atomic_store_n(r->sq_tail, tail + 1, __ATOMIC_RELEASE);
	/*
	 * Pairs with the thread's smp_mb__after_atomic() between setting
	 * IORING_SQ_NEED_WAKEUP and reading the tail: either it sees the
	 * entry and stays up, or we see the flag and wake it.
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(r->sq_flags, __ATOMIC_RELAXED) &
	    IORING_SQ_NEED_WAKEUP) {
		*woke = 1;
		if (uring_enter(r->fd, 0, 0, IORING_ENTER_SQ_WAKEUP) < 0) {
			snprintf(why, len, "io_uring_enter(IORING_ENTER_SQ_WAKEUP): %s",
				 strerror(errno));
			return -1;
		}
	}
	if (ring_wait(r, &cqe, why, len))
		return -1;
	if (cqe.user_data != ud) {
		snprintf(why, len, "completion for %llu, expected %llu",
			 (unsigned long long)cqe.user_data, ud);
		return -1;
	}
	*res = cqe.res;
	if (cqe.res <= 0) {
		if (ioctl(sq->pipe[0], FIONREAD, &left) || left) {
			snprintf(why, len, "the write failed (%s), yet the pipe holds %d bytes",
				 strerror(-cqe.res), left);
			return -1;
		}
		return 0;
	}
	while (got < (size_t)cqe.res) {
		n = read(sq->pipe[0], (char *)k->out + got, cqe.res - got);
		if (n <= 0) {
			snprintf(why, len, "reading the pipe after %zu of %d bytes: %s",
				 got, cqe.res, n ? strerror(errno) : "EOF");
			return -1;
		}
		got += n;
	}
	return 0;
}

static const struct tlb_kuser_ops sq_ops = {
	.read = sq_read,
	.asleep = sq_asleep,
};

/* The SQPOLL thread's tid: the thread of ours named iou-sqp-PID. */
static int sqpoll_tid(void)
{
	uint64_t end = tlb_kuser_now_ns() + TLB_KUSER_WAIT_NS;
	char path[64], comm[64];
	struct dirent *d;
	int tid;

	do {
		DIR *task = opendir("/proc/self/task");

		if (!task)
			return -1;
		while ((d = readdir(task))) {
			tid = tlb_kuser_number(d->d_name);
			if (tid <= 0)
				continue;
			snprintf(path, sizeof(path), "/proc/self/task/%d/comm",
				 tid);
			if (tlb_kuser_slurp(path, comm, sizeof(comm)) > 0 &&
			    !strncmp(comm, "iou-sqp-", 8)) {
				closedir(task);
				return tid;
			}
		}
		closedir(task);
		usleep(1000);
	} while (tlb_kuser_now_ns() < end);
	return -1;
}

FIXTURE_SETUP(sqpoll)
{
	struct io_uring_params *p = &self->sq.ring.p;
	char why[160];
	int err;

	self->sq.ring.fd = -1;
	self->sq.pipe[0] = -1;
	self->sq.pipe[1] = -1;
	tlb_kuser_setup(_metadata, &self->k, NPAGES);
	ASSERT_EQ(0, pipe2(self->sq.pipe, O_CLOEXEC)) {
		TH_LOG("pipe2: %s", strerror(errno));
	}

	memset(p, 0, sizeof(*p));
	p->flags = IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF;
	p->sq_thread_cpu = self->k.cpu_b;
	p->sq_thread_idle = variant->idle_ms;
	self->sq.ring.fd = uring_setup(4, p);
	ASSERT_LE(0, self->sq.ring.fd) {
		TH_LOG("io_uring_setup(SQPOLL | SQ_AFF, cpu %d, idle %u ms): %s",
		       self->k.cpu_b, variant->idle_ms, strerror(errno));
	}
	ASSERT_NE(0U, p->features & IORING_FEAT_SQPOLL_NONFIXED) {
		TH_LOG("features %#x: SQPOLL needs registered files (no SQPOLL_NONFIXED)",
		       p->features);
	}
	err = ring_map(&self->sq.ring, why, sizeof(why));
	ASSERT_EQ(0, err) {
		TH_LOG("%s", why);
	}

	self->k.holder = "the SQPOLL thread";
	self->k.ops = &sq_ops;
	self->k.arg = &self->sq;
	self->k.pid = getpid();
	self->k.tid = sqpoll_tid();
	ASSERT_LT(0, self->k.tid) {
		TH_LOG("no thread named iou-sqp-%d in /proc/self/task",
		       self->k.pid);
	}
	self->k.busy = variant->busy;
	TH_LOG("task on cpu %d, SQPOLL thread %d bound to cpu %d, idle %u ms",
	       self->k.cpu_a, self->k.tid, self->k.cpu_b, variant->idle_ms);
	TH_LOG("%zu bytes at %p", self->k.len, (void *)self->k.buf);
}

FIXTURE_TEARDOWN(sqpoll)
{
	ring_unmap(&self->sq.ring);
	if (self->sq.ring.fd >= 0)
		close(self->sq.ring.fd);
	if (self->sq.pipe[0] >= 0)
		close(self->sq.pipe[0]);
	if (self->sq.pipe[1] >= 0)
		close(self->sq.pipe[1]);
	tlb_kuser_teardown(&self->k);
}

TEST_F_TIMEOUT(sqpoll, dontneed, TIMEOUT)
{
	tlb_kuser_dontneed(_metadata, &self->k,
			   tlb_kuser_rounds(ROUNDS_DONTNEED));
}

TEST_F_TIMEOUT(sqpoll, mprotect, TIMEOUT)
{
	tlb_kuser_mprotect(_metadata, &self->k,
			   tlb_kuser_rounds(ROUNDS_MPROTECT));
}

/*
 * Without io_uring, or with one CPU, there is nothing to test: the whole
 * program skips.  io_uring_setup() failing any other way is a failure.
 */
int main(int argc, char **argv)
{
	struct io_uring_params p;
	int cpus[TLB_KUSER_MAX_CPUS], fd, n;

	memset(&p, 0, sizeof(p));
	fd = uring_setup(2, &p);
	if (fd < 0 && errno == ENOSYS)
		ksft_exit_skip("no io_uring in this kernel (io_uring_setup: ENOSYS)\n");
	if (fd < 0)
		ksft_exit_fail_msg("io_uring_setup (no flags): %s\n",
				   strerror(errno));
	close(fd);
	n = cpulist_online(cpus, TLB_KUSER_MAX_CPUS);
	if (n < 0)
		ksft_exit_fail_msg("cannot read %s\n", CPULIST_ONLINE);
	if (n < 2)
		ksft_exit_skip("one online CPU: the SQPOLL thread needs one of its own\n");
	return test_harness_run(argc, argv);
}
