// SPDX-License-Identifier: GPL-2.0
/*
 * Tearing an address space down frees its page tables, and another CPU
 * that ran the address space earlier may still cache walks through them
 * (its walk cache is tagged by ASID, not by TTBR).  So the flush before
 * the free must reach every CPU, even when no CPU holds the mm any more.
 * On arm64 with CONFIG_ARM64_TLBI_LOCAL that flush is flush_tlb_mm() in
 * tlb_flush(), and it must stay a broadcast.
 *
 * exec: a child touches 4 MiB on CPU b (its page tables now sit in b's
 * walk cache), moves to CPU a, lets an occupier process run on every
 * other CPU (b no longer holds the mm), and calls execve(): exec switches
 * a to the new mm before it drops the old one, so the old mm is torn
 * down with no user and no CPU holding it.  The new image exits at once.
 *
 * The teardown's flush_tlb_mm() counts in /proc/vmstat's tlbi_broadcast
 * when it broadcasts, as it must; a kernel that skipped the teardown of
 * an mm without holders counted it in tlbi_skipped instead, in every
 * such round.  Nothing else in a round can be skipped (a teardown's leaf
 * flushes never reach the local path, and the occupiers flush nothing),
 * so the test counts the rounds whose tlbi_skipped grew: fewer than half
 * of them may, which lets a stray skipped flush of some other mm pass
 * and fails a kernel that skips the teardown.  Each round must also
 * broadcast at least twice: fork()'s flush_tlb_mm() of the parent and
 * the teardown (exec and exit broadcast more).  With the option off
 * nothing is ever skipped; with tlbi_local=on the kernel must say it is
 * on, or the run proves nothing about the skip.
 *
 * pda.scale=N multiplies the rounds.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "lib/tlb_test.h"

#define ROUNDS		8
#define TOUCH_BYTES	(4UL << 20)
/* Flushes in each round that must broadcast at least (see above). */
#define TABLE_FLUSHES	2

enum child_exit { CHILD_OK, CHILD_MOVE, CHILD_MMAP, CHILD_OCCUPY, CHILD_EXEC };

static const char *const child_says[] = {
	"ok", "could not pin itself", "mmap failed",
	"the occupiers did not run", "execve() failed",
};

FIXTURE(teardown) {
	struct tlb_env env;
};

FIXTURE_SETUP(teardown)
{
	char why[256];

	if (tlb_env_init(&self->env, 0, why, sizeof(why)))
		SKIP(return, "%s", why);
	if (self->env.ncpus < 2)
		SKIP(return, "needs two CPUs, has %d", self->env.ncpus);
}

FIXTURE_TEARDOWN(teardown)
{
	char why[256];

	if (self->env.nocc && tlb_env_fini(&self->env, why, sizeof(why)))
		TH_LOG("teardown: %s", why);
}

/* The child of one round: see the top of the file. */
static void __attribute__((noreturn)) exec_child(struct tlb_env *e)
{
	char *argv[] = { "tlb_exec_exit", "--exit", NULL };
	size_t off;
	char *p;

	if (tlb_move(e, e->cpus[1]))
		_exit(CHILD_MOVE);
	p = mmap(NULL, TOUCH_BYTES, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		_exit(CHILD_MMAP);
	for (off = 0; off < TOUCH_BYTES; off += e->page)
		p[off] = 1;
	if (tlb_move(e, e->cpus[0]))
		_exit(CHILD_MOVE);
	if (tlb_occupy(e, e->cpus[0]))
		_exit(CHILD_OCCUPY);
	execv("/proc/self/exe", argv);
	_exit(CHILD_EXEC);
}

TEST_F_TIMEOUT(teardown, exec_broadcasts, TLB_TIMEOUT)
{
	struct tlb_env *e = &self->env;
	struct tlb_vmstat before, round, after;
	long r, rounds = tlb_rounds(ROUNDS), skipping = 0, thin = 0;
	char says[160];
	int status;
	pid_t pid;

	tlb_vmstat_read(&before);
	ASSERT_EQ(TLB_VM_NR, before.present) {
		TH_LOG("no tlbi_* counters in /proc/vmstat: a kernel without CONFIG_ARM64_TLBI_LOCAL or VM_EVENT_COUNTERS");
	}
	if (tlb_local_on()) {
		ASSERT_NE(NULL, strstr(tlb_kernel_says(says, sizeof(says)),
				       "tlbi_local: on")) {
			TH_LOG("booted with tlbi_local=on, but the kernel said: %s",
			       says);
		}
	}
	round = before;
	for (r = 0; r < rounds; r++) {
		struct tlb_vmstat now;

		e->round = r;
		fflush(stdout);
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid)
			exec_child(e);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFEXITED(status));
		ASSERT_EQ(CHILD_OK, WEXITSTATUS(status)) {
			int s = WEXITSTATUS(status);

			TH_LOG("round %ld: the child %s", r,
			       s < (int)(sizeof(child_says) / sizeof(*child_says)) ?
			       child_says[s] : "failed");
		}
		tlb_vmstat_read(&now);
		if (tlb_vm_delta(&round, &now, TLB_VM_SKIPPED))
			skipping++;
		if (tlb_vm_delta(&round, &now, TLB_VM_BCAST) < TABLE_FLUSHES)
			thin++;
		round = now;
	}
	after = round;
	TLB_EXPECT_NO_FAILURES(e);
	TLB_VMSTAT_PRINT("exec after a move, the old CPU occupied",
			 &before, &after);
	EXPECT_GT(rounds, 2 * skipping) {
		TH_LOG("%ld of %ld rounds skipped a flush: the teardown of an mm that no CPU holds was not broadcast",
		       skipping, rounds);
	}
	EXPECT_EQ(0, thin) {
		TH_LOG("%ld of %ld rounds broadcast fewer than %d flushes (fork and teardown)",
		       thin, rounds, TABLE_FLUSHES);
	}
	if (!tlb_local_on())
		EXPECT_EQ(0ULL, tlb_vm_delta(&before, &after, TLB_VM_SKIPPED));
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--exit"))
		return 0;
	return test_harness_run(argc, argv);
}
