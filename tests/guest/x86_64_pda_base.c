// SPDX-License-Identifier: GPL-2.0
/*
 * The %gs base of a 64-bit program that holds the PDA selector, as the
 * x86-64 kernel reports and restores it (patch 0008).  A 64-bit kernel
 * reloads %gs only at a context switch, and with FSGSBASE it used to
 * write the base saved on the previous CPU back after the reload.  The
 * harness boots this once on a CPU model with FSGSBASE and once without.
 *
 * - migrate_each_pair: pinned to A, then to B, for every ordered pair of
 *   online CPUs: the first read through %gs after the move names B.
 * - arch_prctl_get_gs: ARCH_GET_GS is this CPU's base, cpu << 6.
 * - ptrace_gs_base: a stopped tracee's PTRACE_PEEKUSER gs_base is the
 *   base the tracee itself read with ARCH_GET_GS, pinned, before it
 *   stopped (checked against what it read through %gs), also right after
 *   a PTRACE_POKEUSER of another base and after its affinity moved it
 *   elsewhere; the tracee, moved to another CPU while stopped, reads that
 *   CPU's number when it resumes, not through the poked base.
 * - wrgsbase_until_switch (FSGSBASE only): a base written with WRGSBASE
 *   while the selector is held is gone after the next switch: a move to
 *   another CPU gives that CPU's base.
 * - fork_child: a child pinned elsewhere reads its own CPU, not the
 *   parent's (a fork child starts with a copy of the parent's saved base).
 * - signal_handler: in a handler, and after sigreturn, %gs still holds
 *   the selector and reads the current CPU (64-bit frames save no
 *   selectors).
 * - arch_set_gs_leaves_pda: ARCH_SET_GS gives the thread a plain base
 *   and a null selector, as for any other selector.
 * - null_selector_after_pda: a thread that held the selector, was switched
 *   out and back, then loads a null %gs itself keeps the base the load
 *   left (0, on a CPU that clears it) across its next switches, as after
 *   any other selector: the switch-out saved no base for the selector.
 */
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "lib/pda_test.h"

#define BASE_HWCAP2_FSGSBASE	(1u << 1)	/* <asm/hwcap2.h> */

/* An unused CPU's slot: a read through a base set here yields 63. */
#define FOREIGN_BASE ((unsigned long)(PDA_MAX_CPUS - 1) << PDA_USER_SHIFT)

static int read_gs0(void)
{
	int v;

	asm volatile("movl %%gs:0, %0" : "=r" (v));
	return v;
}

/* The CPU /proc/<pid>/stat says @pid last ran on (field 39), or -1. */
static int proc_cpu(pid_t pid)
{
	char path[64], buf[1024], *p;
	int field = 2, cpu = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	p = strrchr(buf, ')');	/* the command name may hold spaces */
	if (!p)
		return -1;
	for (p++; *p && field < 39; p++)
		if (*p == ' ')
			field++;
	if (field == 39)
		sscanf(p, "%d", &cpu);
	return cpu;
}

static int pin_pid(pid_t pid, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(pid, sizeof(set), &set);
}

FIXTURE(base) {
	int cpus[CPU_SETSIZE];
	int n;
};

FIXTURE_SETUP(base)
{
	self->n = pda_test_online(self->cpus, CPU_SETSIZE);
	ASSERT_LT(0, self->n);
	ASSERT_EQ(0, pda_init_thread()) {
		TH_LOG("no user per-CPU segment: %s", strerror(errno));
	}
	ASSERT_EQ(PDA_USER_SELECTOR, pda_read_seg());
}

FIXTURE_TEARDOWN(base)
{
	pda_test_unpin();
}

TEST_F(base, migrate_each_pair)
{
	int a, b, bad = 0, pairs = 0;

	if (self->n < 2)
		SKIP(return, "one CPU: no pair to move between");
	for (a = 0; a < self->n; a++) {
		for (b = 0; b < self->n; b++) {
			int first, sched;

			if (a == b)
				continue;
			ASSERT_EQ(0, pda_test_pin(self->cpus[a]));
			ASSERT_EQ(self->cpus[a], pda_cpu_raw());
			ASSERT_EQ(0, pda_test_pin(self->cpus[b]));
			first = pda_cpu_raw();
			sched = sched_getcpu();
			pairs++;
			if (first != self->cpus[b] || sched != self->cpus[b]) {
				bad++;
				TH_LOG("%d -> %d: segment %d sched_getcpu %d",
				       self->cpus[a], self->cpus[b], first, sched);
			}
		}
	}
	TH_LOG("%d moves, %d mismatches", pairs, bad);
	EXPECT_EQ(0, bad);
}

TEST_F(base, arch_prctl_get_gs)
{
	int i;

	for (i = 0; i < self->n; i++) {
		int cpu = self->cpus[i];

		ASSERT_EQ(0, pda_test_pin(cpu));
		EXPECT_EQ((unsigned long)cpu << PDA_USER_SHIFT, pda_test_gs_base());
		EXPECT_EQ(PDA_USER_SELECTOR, pda_read_seg());
		EXPECT_EQ(cpu, pda_cpu_raw());
	}
}

/*
 * The tracee: report its own view of %gs (what it reads through it, its
 * ARCH_GET_GS base), stop, then report what %gs reads where it resumed.
 */
static void tracee(int fd)
{
	unsigned long base = pda_test_gs_base();
	int cpu = pda_cpu_raw();

	if (write(fd, &cpu, sizeof(cpu)) != sizeof(cpu) ||
	    write(fd, &base, sizeof(base)) != sizeof(base))
		_exit(3);
	if (ptrace(PTRACE_TRACEME, 0, 0, 0))
		_exit(2);
	raise(SIGSTOP);
	cpu = pda_cpu_raw();
	if (write(fd, &cpu, sizeof(cpu)) != sizeof(cpu))
		_exit(3);
	cpu = sched_getcpu();
	if (write(fd, &cpu, sizeof(cpu)) != sizeof(cpu))
		_exit(3);
	_exit(0);
}

TEST_F(base, ptrace_gs_base)
{
	/* Stopped on the last CPU, so the base it reports is not 0. */
	int from = self->cpus[self->n - 1], to = self->cpus[0];
	int fds[2], status, seg, sched, own_seg;
	unsigned long base, sel, own_base;
	pid_t pid;

	ASSERT_EQ(0, pipe(fds));
	ASSERT_EQ(0, pda_test_pin(from));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(fds[0]);
		tracee(fds[1]);
	}
	close(fds[1]);
	ASSERT_EQ(sizeof(own_seg), read(fds[0], &own_seg, sizeof(own_seg)));
	ASSERT_EQ(sizeof(own_base),
		  read(fds[0], &own_base, sizeof(own_base)));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSTOPPED(status));
	/* Pinned to @from before it stopped: its own reads say so. */
	TH_LOG("tracee before its stop: %%gs reads %d, ARCH_GET_GS %#lx",
	       own_seg, own_base);
	EXPECT_EQ(from, own_seg);
	EXPECT_EQ((unsigned long)from << PDA_USER_SHIFT, own_base);

	errno = 0;
	sel = ptrace(PTRACE_PEEKUSER, pid,
		     offsetof(struct user_regs_struct, gs), 0);
	ASSERT_EQ(0, errno);
	EXPECT_EQ(PDA_USER_SELECTOR, sel);
	base = ptrace(PTRACE_PEEKUSER, pid,
		      offsetof(struct user_regs_struct, gs_base), 0);
	ASSERT_EQ(0, errno);
	TH_LOG("stopped: gs %#lx gs_base %#lx (/proc says CPU %d)", sel,
	       base, proc_cpu(pid));
	EXPECT_EQ(own_base, base);

	/*
	 * Moved while stopped, and given another base: the base stays the
	 * one of the CPU it stopped on, which a stopped task keeps until it
	 * is woken, and the poked one is never used: it resumes on @to and
	 * must read @to (63 through the poked base).
	 */
	ASSERT_EQ(0, pin_pid(pid, to));
	ASSERT_EQ(0, ptrace(PTRACE_POKEUSER, pid,
			    offsetof(struct user_regs_struct, gs_base),
			    FOREIGN_BASE));
	base = ptrace(PTRACE_PEEKUSER, pid,
		      offsetof(struct user_regs_struct, gs_base), 0);
	ASSERT_EQ(0, errno);
	TH_LOG("pinned to %d and poked %#lx: gs_base %#lx (/proc says CPU %d)",
	       to, FOREIGN_BASE, base, proc_cpu(pid));
	EXPECT_EQ(own_base, base);
	ASSERT_EQ(0, ptrace(PTRACE_CONT, pid, 0, 0));
	ASSERT_EQ(sizeof(seg), read(fds[0], &seg, sizeof(seg)));
	ASSERT_EQ(sizeof(sched), read(fds[0], &sched, sizeof(sched)));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	close(fds[0]);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	TH_LOG("resumed pinned to %d: segment %d sched_getcpu %d", to, seg,
	       sched);
	EXPECT_EQ(to, sched);
	EXPECT_EQ(to, seg);
}

TEST_F(base, wrgsbase_until_switch)
{
	int a = self->cpus[0], b = self->cpus[self->n - 1];
	unsigned long seen;

	if (!(getauxval(AT_HWCAP2) & BASE_HWCAP2_FSGSBASE))
		SKIP(return, "no FSGSBASE in user space");
	if (a == b)
		SKIP(return, "needs two CPUs");
	ASSERT_EQ(0, pda_test_pin(a));
	asm volatile("wrgsbase %0" : : "r" (FOREIGN_BASE) : "memory");
	seen = pda_test_gs_base();
	/* A preemption in between may have put a's base back already. */
	TH_LOG("on %d after WRGSBASE %#lx: ARCH_GET_GS %#lx", a, FOREIGN_BASE,
	       seen);
	EXPECT_TRUE(seen == FOREIGN_BASE ||
		    seen == (unsigned long)a << PDA_USER_SHIFT);
	EXPECT_EQ(PDA_USER_SELECTOR, pda_read_seg());
	ASSERT_EQ(0, pda_test_pin(b));
	EXPECT_EQ((unsigned long)b << PDA_USER_SHIFT, pda_test_gs_base());
	EXPECT_EQ(b, pda_cpu_raw());
}

TEST_F(base, fork_child)
{
	int from = self->cpus[0], to = self->cpus[self->n - 1];
	int status;
	pid_t pid;

	ASSERT_EQ(0, pda_test_pin(from));
	ASSERT_EQ(from, pda_cpu_raw());
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (pda_read_seg() != PDA_USER_SELECTOR)
			_exit(2);
		if (pda_test_pin(to))
			_exit(3);
		if (pda_cpu_raw() != to)
			_exit(4);
		if (pda_test_gs_base() != (unsigned long)to << PDA_USER_SHIFT)
			_exit(5);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) {
		TH_LOG("child: 2 selector lost, 4 wrong CPU, 5 wrong base");
	}
	EXPECT_EQ(from, pda_cpu_raw());
}

static volatile int handler_cpu = -2, handler_sel;

static void on_usr1(int sig)
{
	handler_sel = pda_read_seg();
	handler_cpu = pda_cpu_raw();
}

TEST_F(base, signal_handler)
{
	int cpu = self->cpus[self->n - 1];

	ASSERT_NE(SIG_ERR, signal(SIGUSR1, on_usr1));
	ASSERT_EQ(0, pda_test_pin(cpu));
	ASSERT_EQ(0, raise(SIGUSR1));
	EXPECT_EQ(PDA_USER_SELECTOR, handler_sel);
	EXPECT_EQ(cpu, handler_cpu);
	EXPECT_EQ(PDA_USER_SELECTOR, pda_read_seg());
	EXPECT_EQ(cpu, pda_cpu_raw());
	signal(SIGUSR1, SIG_DFL);
}

TEST_F(base, arch_set_gs_leaves_pda)
{
	static struct pda_slot own[PDA_MAX_CPUS];
	int cpu = self->cpus[0];

	ASSERT_EQ(0, pda_test_pin(cpu));
	own[0].s32[0] = 12345;
	ASSERT_EQ(0, syscall(SYS_arch_prctl, ARCH_SET_GS, (unsigned long)own));
	EXPECT_EQ(0, pda_read_seg());
	EXPECT_EQ((unsigned long)own, pda_test_gs_base());
	/* A context switch keeps the plain base: sleep on a pinned CPU. */
	usleep(1000);
	EXPECT_EQ((unsigned long)own, pda_test_gs_base());
	EXPECT_EQ(12345, read_gs0());
	EXPECT_EQ(0, pda_init_thread());
	EXPECT_EQ(PDA_USER_SELECTOR, pda_read_seg());
	EXPECT_EQ(cpu, pda_cpu_raw());
}

TEST_F(base, null_selector_after_pda)
{
	/* CPU 0's base is 0 too: a stale base shows on another CPU only. */
	int cpu = self->cpus[self->n - 1], i;
	unsigned long after_load;

	if (self->n < 2)
		SKIP(return, "one CPU online: CPU 0's segment base is 0 too");
	ASSERT_EQ(0, pda_test_pin(cpu));
	usleep(1000);		/* switched out and in holding the selector */
	ASSERT_EQ(cpu, pda_cpu_raw());
	asm volatile("mov %0, %%gs" : : "r" (0));
	after_load = pda_test_gs_base();
	if (after_load)
		SKIP(return, "this CPU keeps the base on a null selector load (%#lx): Linux promises nothing then",
		     after_load);
	for (i = 0; i < 8; i++) {
		usleep(1000);
		EXPECT_EQ(0, pda_read_seg());
		EXPECT_EQ(0UL, pda_test_gs_base()) {
			TH_LOG("switch %d on CPU %d: a null %%gs got a base back",
			       i, cpu);
		}
	}
	EXPECT_EQ(0, pda_init_thread());
}

TEST_HARNESS_MAIN
