/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fixture of x86_pda_hostile.c and x86_pda_hostile_rpl.c: hostile use
 * of the PDA selector (0xeb), which must grant nothing that a
 * set_thread_area() DPL-3 TLS data descriptor does not.  Every case runs
 * in a forked child, once through the PDA selector and once through a TLS
 * selector (the last TLS entry: 8, 0x43, on an i386 kernel; 14, 0x73, on
 * an x86-64 one), and the test asserts both the concrete outcome and that
 * the two agree.  After each case a bystander process (lib/pda_hostile.h)
 * must still hold its own %fs/%gs/%ss/%ds/%es and read its own CPU through
 * 0xeb, and the kernel log must have no splat.
 *
 * The same binaries run on an i386 kernel and, as compat tasks, on an
 * x86-64 one; where the two kernels differ, the expectation says why.
 *
 * Header only, for one program each.  Wants _GNU_SOURCE before the first
 * #include, and kselftest_harness.h included before it (the fixture).
 */
#ifndef PDA_TESTS_PDA_HOSTILE_FIXTURE_H
#define PDA_TESTS_PDA_HOSTILE_FIXTURE_H

#ifndef TH_LOG
#error "include kselftest_harness.h before lib/pda_hostile_fixture.h"
#endif

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "pda_hostile.h"

#define SI_KERNEL_CODE	0x80
#define TRAP_GP		13
#define TRAP_PF		14
#define TRAP_IRET	32	/* X86_TRAP_IRET: the kernel's IRET faulted */

static const char *const kind_name[] = { "PDA", "TLS" };

FIXTURE(hostile) {
	struct ph_cpus cpus;
	struct ph_bystander by;
	int klog;
	int last;
	int vdso;	/* how __kernel_vsyscall enters: PH_VDSO_* */
	/*
	 * It returns through SYSEXIT or SYSRET, which load SS with
	 * __USER_DS whatever it was.
	 */
	int fast;
	/*
	 * ... and %ds and %es hold __USER_DS afterwards: the i386 kernel's
	 * SYSENTER path loads them for itself and SYSEXIT leaves them so.
	 * An x86-64 kernel does not touch them on any system call.
	 */
	int fast_loses_ds;
};

FIXTURE_SETUP(hostile)
{
	if (!ph_have_pda())
		SKIP(return, "no HWCAP2_PDA_USER_SEG: kernel without the PDA segment");
	ASSERT_EQ(0, ph_init());
	ASSERT_EQ(0, ph_cpus_online(&self->cpus));
	self->last = self->cpus.id[self->cpus.n - 1];
	self->vdso = ph_vdso_entry();
	self->fast = self->vdso == PH_VDSO_SYSENTER ||
		     self->vdso == PH_VDSO_SYSCALL;
	self->fast_loses_ds = self->fast && !ph_kernel64;
	ASSERT_TRUE(ph_kernel_mismatch() == NULL) {
		TH_LOG("%s", ph_kernel_mismatch());
	}
	signal(SIGPIPE, SIG_IGN);	/* a dead bystander is reported, not fatal */
	self->klog = klog_open();
	if (self->klog < 0)
		TH_LOG("cannot open /dev/kmsg (%s): kernel log not checked",
		       strerror(errno));
	ASSERT_EQ(0, ph_bystander_start(&self->by));
	TH_LOG("%d CPU(s)%s, %s kernel (cs %#x, ds %#x, TLS %#x), vDSO %s",
	       self->cpus.n, ph_bochs() ? ", Bochs" : "",
	       ph_kernel64 ? "x86-64" : "i386", PH_USER_CS, PH_USER_DS,
	       PH_TLS_SEL, ph_vdso_name[self->vdso]);
}

FIXTURE_TEARDOWN(hostile)
{
	ph_bystander_stop(&self->by);
	if (self->klog >= 0)
		close(self->klog);
}

/* After a case: the bystander is unharmed and the kernel log is clean. */
#define CHECK_WORLD(what) \
	EXPECT_TRUE(ph_world_intact(self->klog, &self->by, (what)))

/* The fields of a fault both kinds must agree on. */
#define EXPECT_SAME_FAULT(a, b) do {					\
	EXPECT_EQ((a).signo, (b).signo);				\
	EXPECT_EQ((a).code, (b).code);					\
	EXPECT_EQ((a).trapno, (b).trapno);				\
	EXPECT_EQ((a).status, (b).status);				\
} while (0)

#define LOG_RESULT(label, r) do {					\
	char __d[256];							\
	TH_LOG("%s: %s", (label), ph_describe(&(r), __d, sizeof(__d)));	\
} while (0)

/*
 * The kernel's IRET to user mode with CS = @sel (RPL 3, a data segment)
 * raised #GP(sel).  An i386 kernel reports that as its own IRET failing
 * (iret_exc: SIGILL, ILL_BADSTK, X86_TRAP_IRET).  An x86-64 kernel's
 * fixup_bad_iret() rewrites the frame as if the #GP had come from the
 * IRET's target in user mode: the SIGSEGV, SI_KERNEL, trapno 13 of any
 * user #GP, with the selector as error code.  Either way sc.cs is @sel.
 */
static void expect_bad_iret(struct __test_metadata *_metadata,
			    const struct ph_result *r, unsigned int sel)
{
	if (ph_kernel64) {
		EXPECT_EQ(SIGSEGV, r->signo);
		EXPECT_EQ(SI_KERNEL_CODE, r->code);
		EXPECT_EQ(TRAP_GP, r->trapno);
		EXPECT_EQ(sel & ~3u, r->err);
	} else {
		EXPECT_EQ(SIGILL, r->signo);
		EXPECT_EQ(ILL_BADSTK, r->code);
		EXPECT_EQ(TRAP_IRET, r->trapno);
	}
	EXPECT_EQ(sel, r->cs);
}

#endif /* PDA_TESTS_PDA_HOSTILE_FIXTURE_H */
