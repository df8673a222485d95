// SPDX-License-Identifier: GPL-2.0
/*
 * A kernel thread in kthread_use_mm() reads the task's memory on a CPU
 * the task never runs on, and must see every mapping change the task
 * made.  The thread adopts the task's mm but runs in the kernel only; a
 * kernel that thought the mm lived on the task's CPU alone
 * (CONFIG_ARM64_TLBI_LOCAL gone wrong) would flush that CPU's TLB only,
 * and the thread would read through a stale translation.
 *
 * The thread is tests/modules/tlb_kthread_mm's, loaded from
 * /lib/modules/tlb_kthread_mm.ko (the harness packs it for arm64; no
 * module, or a load that fails, fails the test) and unloaded after each
 * case.  Through /dev/tlb_kthread_mm the task, pinned to CPU a (the
 * first online CPU; checked with sched_getcpu() every round), starts it
 * bound to CPU b (the last) in its mm, and has it copy_from_user() a
 * private anonymous buffer on request.  The cases (lib/tlb_kuser.h),
 * each in two variants:
 *
 * - kthread.idle.*: the thread polls 1 ms after each read, then sleeps;
 *   before each change the task waits until it is asleep (its own word,
 *   and /proc state S), and the read after must wake it: its CPU holds
 *   the mm only lazily;
 * - kthread.busy.*: it polls 2000 ms; the reads come back to back, so it
 *   polls on CPU b throughout each change (seen in /proc state R at
 *   least once);
 *
 * - dontneed: the task fills the buffer with a nonzero pattern, the
 *   thread reads the pattern, the task calls madvise(MADV_DONTNEED), and
 *   the next read must be all zeros;
 * - mprotect: after mprotect(PROT_NONE) the thread's read must fail with
 *   -EFAULT; after mprotect back to read-write it reads the pattern
 *   again.
 *
 * Every read reports the CPU it ran on, which must be CPU b (and /proc
 * agrees at each change).  The tlbi_* counters of /proc/vmstat are read
 * right around every change: booted with tlbi_local=on, a change during
 * which no other process ran must count no local or skipped flush, since
 * CPU b holds the mm too (and DONTNEED and PROT_NONE one broadcast at
 * least); booted without it, nothing may be counted over the case; they
 * must exist.  Each case logs their sums, a change its own only when a
 * check fails (output wakes init: see lib/tlb_kuser.h).  Then the module
 * must unload.  Fewer than two online CPUs skip the whole program.
 * pda.scale=N multiplies the rounds.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "lib/cpulist.h"
#include "lib/module.h"
#include "lib/tlb_kuser.h"
#include "../modules/tlb_kthread_mm/tlb_kthread_mm.h"

#define MODULE_PATH		"/lib/modules/tlb_kthread_mm.ko"
#define MODULE_NAME		"tlb_kthread_mm"
#define DEVICE_PATH		"/dev/tlb_kthread_mm"
#define NPAGES			4
#define ROUNDS_DONTNEED		8
#define ROUNDS_MPROTECT		6
#define TIMEOUT			300

FIXTURE(kthread) {
	int loaded;
	int dev;
	struct tlb_kuser k;
};

FIXTURE_VARIANT(kthread) {
	unsigned int idle_ms;
	int busy;
};

FIXTURE_VARIANT_ADD(kthread, idle) {
	.idle_ms = 1,
	.busy = 0,
};

FIXTURE_VARIANT_ADD(kthread, busy) {
	.idle_ms = 2000,
	.busy = 1,
};

static int kt_asleep(struct tlb_kuser *k)
{
	int *dev = k->arg;
	struct tkm_status st;

	memset(&st, 0, sizeof(st));
	if (ioctl(*dev, TKM_STATUS, &st))
		return 0;
	return st.state == TKM_SLEEPING;
}

/* The thread reads the buffer; the module copies what it read to out. */
static int kt_read(struct tlb_kuser *k, long *res, int *woke, char *why,
		   size_t len)
{
	int *dev = k->arg;
	struct tkm_read r;

	memset(&r, 0, sizeof(r));
	r.out = (uintptr_t)k->out;
	if (ioctl(*dev, TKM_READ, &r)) {
		snprintf(why, len, "ioctl(TKM_READ): %s", strerror(errno));
		return -1;
	}
	if (r.cpu != k->cpu_b) {
		snprintf(why, len, "the kernel thread read on cpu %d, not on cpu %d it is bound to",
			 r.cpu, k->cpu_b);
		return -1;
	}
	*res = r.result;
	*woke = !!r.slept;
	return 0;
}

static const struct tlb_kuser_ops kt_ops = {
	.read = kt_read,
	.asleep = kt_asleep,
};

FIXTURE_SETUP(kthread)
{
	struct tkm_start st;
	int fd, err;

	self->dev = -1;
	tlb_kuser_setup(_metadata, &self->k, NPAGES);

	fd = open(MODULE_PATH, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd) {
		TH_LOG("%s: %s (the harness packs it for a kernel with CONFIG_MODULES: arm64's)",
		       MODULE_PATH, strerror(errno));
	}
	err = syscall(SYS_finit_module, fd, "", 0) ? errno : 0;
	close(fd);
	ASSERT_TRUE(!err || err == EEXIST) {
		TH_LOG("finit_module(%s): %s", MODULE_PATH, strerror(err));
	}
	if (err == EEXIST)
		TH_LOG("%s was loaded already (an earlier case did not unload it)",
		       MODULE_NAME);
	self->loaded = 1;
	self->dev = open(DEVICE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->dev) {
		TH_LOG("%s: %s", DEVICE_PATH, strerror(errno));
	}

	memset(&st, 0, sizeof(st));
	st.addr = (uintptr_t)self->k.buf;
	st.len = self->k.len;
	st.cpu = self->k.cpu_b;
	st.idle_ms = variant->idle_ms;
	ASSERT_EQ(0, ioctl(self->dev, TKM_START, &st)) {
		TH_LOG("ioctl(TKM_START, cpu %d, idle %u ms): %s",
		       self->k.cpu_b, variant->idle_ms, strerror(errno));
	}

	self->k.holder = "the kthread_use_mm() thread";
	self->k.ops = &kt_ops;
	self->k.arg = &self->dev;
	self->k.pid = st.pid;
	self->k.tid = st.pid;
	self->k.busy = variant->busy;
	TH_LOG("task on cpu %d, kernel thread %d bound to cpu %d, idle %u ms",
	       self->k.cpu_a, st.pid, self->k.cpu_b, variant->idle_ms);
	TH_LOG("%zu bytes at %p", self->k.len, (void *)self->k.buf);
}

/* The thread leaves the mm and ends at the close; then the unload. */
FIXTURE_TEARDOWN(kthread)
{
	if (self->dev >= 0)
		close(self->dev);
	tlb_kuser_teardown(&self->k);
	if (!self->loaded)
		return;
	EXPECT_EQ(0, syscall(SYS_delete_module, MODULE_NAME, O_NONBLOCK)) {
		TH_LOG("delete_module(%s): %s", MODULE_NAME, strerror(errno));
	}
	EXPECT_EQ(0, module_listed(MODULE_NAME));
}

TEST_F_TIMEOUT(kthread, dontneed, TIMEOUT)
{
	tlb_kuser_dontneed(_metadata, &self->k,
			   tlb_kuser_rounds(ROUNDS_DONTNEED));
}

TEST_F_TIMEOUT(kthread, mprotect, TIMEOUT)
{
	tlb_kuser_mprotect(_metadata, &self->k,
			   tlb_kuser_rounds(ROUNDS_MPROTECT));
}

/* With one CPU there is nothing to test: the whole program skips. */
int main(int argc, char **argv)
{
	int cpus[TLB_KUSER_MAX_CPUS];
	int n = cpulist_online(cpus, TLB_KUSER_MAX_CPUS);

	if (n < 0)
		ksft_exit_fail_msg("cannot read %s\n", CPULIST_ONLINE);
	if (n < 2)
		ksft_exit_skip("one online CPU: the kernel thread needs one of its own\n");
	return test_harness_run(argc, argv);
}
