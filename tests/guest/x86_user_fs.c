// SPDX-License-Identifier: GPL-2.0
/*
 * The user's %fs, whatever it holds, is the user's: the kernel must give
 * back the same selector *and* the same descriptor after everything it
 * does to a thread.  On a UP kernel with CONFIG_X86_PDA_UP_NOSEG the
 * kernel no longer loads %fs on entry and exit, so this is what proves
 * the context switch, the exit compare and the tls.c/ldt.c refreshes; on
 * every other kernel it must pass the same way.
 *
 * The same binary runs as a 32-bit (compat) task on an x86-64 kernel,
 * which leaves %fs alone on entry and exit and loads it at a context
 * switch: it must pass there too.  Its GDT differs (the TLS entries are
 * 12-14, not 6-8: lib/pda_hostile.h learns them); what differs in
 * behaviour is a descriptor changed under a loaded %fs (see
 * kernel_reloads()), and that there is no vm86 for 32-bit tasks.
 * lib/pda_hostile.h tells the kernel (ph_kernel64, ph_fsgsbase).
 *
 * Each case runs with %fs = null, a set_thread_area() TLS selector, an
 * LDT selector, and the PDA selector 0xeb.  "Same descriptor" is checked
 * by reading through %fs: TLS and LDT bases point at buffers holding
 * their own magic, and 0xeb reads the CPU the thread is on.  TLS and LDT
 * selectors come with every RPL: code at CPL 3 may load a DPL 3 segment
 * with RPL 0, 1, 2 or 3, all four name the same descriptor, and a kernel
 * that pops %fs on every exit treats them alike.
 *
 * - syscalls through int $0x80 and SYSENTER (the vDSO);
 * - timer interrupts across a long busy loop;
 * - context switches on one CPU with a process and a thread that hold the
 *   same selector over a different descriptor;
 * - signal delivery, sigreturn to every other kind, and to bad selectors;
 * - ptrace PEEKUSER, GETREGS and GETREGSET(NT_PRSTATUS) (what core dumps
 *   write), POKEUSER and SETREGS that take effect, an invalid one refused;
 * - fork and threads keep it, exec resets it to 0, vm86 gives it back;
 * - a descriptor changed under a loaded selector, by the thread itself, by
 *   a sibling (LDT) or by a tracer (TLS), is what the next %fs read sees,
 *   and one cleared under it leaves %fs = 0, for every RPL; on x86-64 as
 *   far as the kernel reloads %fs, and after the next context switch.
 */
#define _GNU_SOURCE
#include <asm/ldt.h>
#include <elf.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/vm86.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "lib/pda_hostile.h"

#define LDT_ENTRY	1
#define LDT_SEL		(LDT_ENTRY * 8 + 4 + 3)		/* 0xf */
#define EMPTY_LDT_SEL	(5 * 8 + 4 + 3)			/* never written */
#define BAD_GDT_SEL	(200 * 8 + 3)			/* past the GDT */
#define FS_OFF		offsetof(struct user_regs_struct, xfs)
#define EXEC_CHECK	"--fs-after-exec"

enum kind { K_NULL, K_TLS, K_LDT, K_PDA, K_MAX };

static const char *const kind_name[K_MAX] = { "null", "TLS", "LDT", "0xeb" };

/* What %fs must hold: a selector and, through it, a first word. */
struct want {
	enum kind kind;
	unsigned int sel;
	const uint32_t *buf;	/* TLS and LDT: the segment's base */
};

/* The kernel we run on, learnt by setup_all(). */
static uint32_t tls_buf[16] = { 0x544c5331 };	/* "TLS1" */
static uint32_t ldt_buf[16] = { 0x4c445431 };	/* "LDT1" */
static uint32_t alt_buf[16] = { 0x414c5431 };	/* "ALT1" */
static uint32_t alt2_buf[16] = { 0x414c5432 };	/* "ALT2" */

/*
 * Entry @entry of the TLS or the LDT: a flat data segment at @base, as
 * ph_tls_set() writes it, or empty.
 */
static struct user_desc flat_desc(int entry, const void *base, int present)
{
	struct user_desc d = { .entry_number = entry };

	if (present) {
		d.base_addr = (uint32_t)(uintptr_t)base;
		d.limit = 0xfffff;
		d.seg_32bit = 1;
		d.limit_in_pages = 1;
		d.useable = 1;
	} else {
		d.read_exec_only = 1;	/* the "empty" form clears it */
		d.seg_not_present = 1;
	}
	return d;
}

/* Writes LDT entry @entry: a flat data segment at @base, or empty. */
static int ldt_set(int entry, const void *base, int present)
{
	struct user_desc d = flat_desc(entry, base, present);

	return syscall(SYS_modify_ldt, 1, &d, sizeof(d));
}

static unsigned int with_rpl(unsigned int sel, unsigned int rpl)
{
	return (sel & ~3u) | rpl;
}

static struct want want_of(enum kind k)
{
	switch (k) {
	case K_TLS:
		return (struct want){ k, PH_TLS_SEL, tls_buf };
	case K_LDT:
		return (struct want){ k, LDT_SEL, ldt_buf };
	case K_PDA:
		return (struct want){ k, PH_SEL, NULL };
	default:
		return (struct want){ K_NULL, 0, NULL };
	}
}

/* Does %fs hold w's selector, over w's descriptor?  0 if so. */
static int fs_wrong(const struct want *w)
{
	if (ph_get_seg(fs) != w->sel)
		return 1;
	if (w->buf && ph_fs_load32(0) != w->buf[0])
		return 2;
	if (w->kind == K_PDA && ph_fs_read() != sched_getcpu())
		return 3;
	return 0;
}

static int nfail;
static char first_fail[256];

static void note_fail(const struct want *w, const char *where, long i)
{
	if (nfail++)
		return;
	snprintf(first_fail, sizeof(first_fail),
		 "%s #%ld: want %s %#x, %%fs = %#x, wrong=%d", where, i,
		 kind_name[w->kind], w->sel, ph_get_seg(fs), fs_wrong(w));
}

static void check(const struct want *w, const char *where, long i)
{
	if (fs_wrong(w))
		note_fail(w, where, i);
}

#define ASSERT_NO_FAILS() do {						\
	if (nfail)							\
		TH_LOG("%d failure(s), first: %s", nfail, first_fail);	\
	ASSERT_EQ(0, nfail);						\
} while (0)

/* ------------------------------------------------------------ fixture */

FIXTURE(ufs) {
	struct want w;
};

FIXTURE_VARIANT(ufs) {
	enum kind kind;
	unsigned int rpl;	/* TLS and LDT: the selector's RPL */
};

FIXTURE_VARIANT_ADD(ufs, null) { .kind = K_NULL };
FIXTURE_VARIANT_ADD(ufs, tls) { .kind = K_TLS, .rpl = 3 };
FIXTURE_VARIANT_ADD(ufs, tls_rpl0) { .kind = K_TLS, .rpl = 0 };
FIXTURE_VARIANT_ADD(ufs, tls_rpl1) { .kind = K_TLS, .rpl = 1 };
FIXTURE_VARIANT_ADD(ufs, tls_rpl2) { .kind = K_TLS, .rpl = 2 };
FIXTURE_VARIANT_ADD(ufs, ldt) { .kind = K_LDT, .rpl = 3 };
FIXTURE_VARIANT_ADD(ufs, ldt_rpl0) { .kind = K_LDT, .rpl = 0 };
FIXTURE_VARIANT_ADD(ufs, ldt_rpl1) { .kind = K_LDT, .rpl = 1 };
FIXTURE_VARIANT_ADD(ufs, ldt_rpl2) { .kind = K_LDT, .rpl = 2 };
FIXTURE_VARIANT_ADD(ufs, pda) { .kind = K_PDA };

/* Every kind's descriptor exists in every case; the variant picks %fs. */
static int setup_all(void)
{
	if (ph_init())
		return -1;
	if (ph_tls_set(PH_TLS_ENTRY, (uint32_t)(uintptr_t)tls_buf) != PH_TLS_SEL)
		return -2;
	if (ldt_set(LDT_ENTRY, ldt_buf, 1))
		return -3;
	return 0;
}

FIXTURE_SETUP(ufs)
{
	if (variant->kind == K_PDA && !ph_have_pda())
		SKIP(return, "no HWCAP2_PDA_USER_SEG: kernel without the PDA segment");
	ASSERT_EQ(0, setup_all());
	ASSERT_EQ(0, ph_pin(0));
	self->w = want_of(variant->kind);
	if (variant->kind == K_TLS || variant->kind == K_LDT)
		self->w.sel = with_rpl(self->w.sel, variant->rpl);
	ph_set_seg(fs, self->w.sel);
	ASSERT_EQ(0, fs_wrong(&self->w));
	nfail = 0;
}

FIXTURE_TEARDOWN(ufs)
{
	ph_set_seg(fs, 0);
}

/* ----------------------------------------------------------- syscalls */

TEST_F_TIMEOUT(ufs, syscalls, 120)
{
	long i, n = ph_scale(50000 * cmdline_scale());

	for (i = 0; i < n; i++) {
		ph_int80(SYS_getppid, 0, 0, 0);
		check(&self->w, "int $0x80", i);
		ph_vsys(SYS_getppid, 0, 0, 0);
		check(&self->w, "vDSO", i);
		if (i % 1000 == 0) {
			ph_vsys(SYS_sched_yield, 0, 0, 0);
			ph_int80(SYS_read, -1, 0, 0);	/* fails: EBADF */
			check(&self->w, "yield, failing read", i);
		}
	}
	TH_LOG("%ld getppid through each entry, %s %%fs", n,
	       kind_name[self->w.kind]);
	ASSERT_NO_FAILS();
}

/*
 * A busy loop across over a hundred timer interrupts at HZ 250 (half that
 * under Bochs), for each kind of %fs; pda.scale=N makes it N times as
 * long.
 */
TEST_F_TIMEOUT(ufs, timer_interrupts, 120)
{
	double end = ph_now() + (ph_bochs() ? 0.25 : 0.5) * cmdline_scale();
	long i, loops = 0;

	while (ph_now() < end && !nfail) {
		for (i = 0; i < 10000; i++)
			check(&self->w, "busy loop", loops);
		loops++;
	}
	TH_LOG("%ld x 10000 checks in a busy loop", loops);
	ASSERT_NO_FAILS();
}

/* ---------------------------------------------------- context switches */

struct pong {
	int rfd, wfd;
	long n;
	struct want w;
	int fails;
};

/* Reads a byte, checks %fs, writes a byte; n times. */
static void pingpong(struct pong *p, int first)
{
	char c = 0;
	long i;

	for (i = 0; i < p->n; i++) {
		if (!(first && i == 0) && read(p->rfd, &c, 1) != 1)
			break;
		if (fs_wrong(&p->w))
			p->fails++;
		if (write(p->wfd, &c, 1) != 1)
			break;
	}
}

/*
 * The partner reuses the selector over its own descriptor where it can
 * have one: TLS entries are per thread, the LDT per mm.
 */
static struct want partner_want(const struct want *w, const uint32_t *buf,
				int same_mm)
{
	struct want p = *w;

	if (w->kind == K_TLS) {
		ph_tls_set(PH_TLS_ENTRY, (uint32_t)(uintptr_t)buf);
		p.buf = buf;
	} else if (w->kind == K_LDT && !same_mm) {
		ldt_set(LDT_ENTRY, buf, 1);
		p.buf = buf;
	} else {
		p = want_of(K_TLS);	/* switch with a TLS selector */
		ph_tls_set(PH_TLS_ENTRY, (uint32_t)(uintptr_t)buf);
		p.buf = buf;
	}
	ph_set_seg(fs, p.sel);
	return p;
}

static void *pong_thread(void *arg)
{
	struct pong *p = arg;

	p->w = partner_want(&p->w, alt2_buf, 1);
	pingpong(p, 0);
	return NULL;
}

TEST_F_TIMEOUT(ufs, task_switches, 120)
{
	int ab[2], ba[2], status;
	struct pong me, other;
	pthread_t t;
	pid_t pid;

	/* A process: same selector, another mm's descriptor. */
	ASSERT_EQ(0, pipe(ab));
	ASSERT_EQ(0, pipe(ba));
	me = (struct pong){ ba[0], ab[1], ph_scale(4000 * cmdline_scale()),
			    self->w, 0 };
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		other = (struct pong){ ab[0], ba[1], me.n, self->w, 0 };
		other.w = partner_want(&self->w, alt_buf, 0);
		pingpong(&other, 0);
		_exit(other.fails ? 1 : 0);
	}
	pingpong(&me, 1);
	ASSERT_EQ(0, ph_wait(pid, &status, 100));
	EXPECT_EQ(0, me.fails);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	/* A thread: same mm, its own TLS descriptor. */
	other = (struct pong){ ab[0], ba[1], me.n, self->w, 0 };
	me.fails = 0;
	ASSERT_EQ(0, pthread_create(&t, NULL, pong_thread, &other));
	pingpong(&me, 1);
	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_EQ(0, me.fails);
	EXPECT_EQ(0, other.fails);
	check(&self->w, "after the switches", 0);
	TH_LOG("%ld round trips with a process and with a thread", me.n);
	ASSERT_NO_FAILS();
}

/* ------------------------------------------------------------ signals */

static struct {
	struct want w;		/* what the handler must find */
	unsigned int sc_fs;	/* sigcontext fs seen by the handler */
	int live_wrong;		/* fs_wrong() inside the handler */
	int set;		/* store new_fs into sigcontext */
	unsigned int new_fs;
} sg;

static void sg_handler(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	sg.sc_fs = uc->uc_mcontext.gregs[REG_FS] & 0xffff;
	sg.live_wrong = fs_wrong(&sg.w);
	if (sg.set)
		uc->uc_mcontext.gregs[REG_FS] = sg.new_fs;
	ph_set_seg(fs, 0);	/* sigreturn, not this, decides %fs */
}

TEST_F_TIMEOUT(ufs, signals, 120)
{
	struct sigaction sa = { .sa_sigaction = sg_handler,
				.sa_flags = SA_SIGINFO };
	static const unsigned int bad[] = { BAD_GDT_SEL, EMPTY_LDT_SEL };
	struct want back;
	int k;
	size_t i;

	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));

	/*
	 * Delivery keeps %fs; sigreturn restores it over a handler's load,
	 * with the RPL 3 it forces on every non-null selector (fixup_rpl()
	 * in signal_32.c).
	 */
	sg.w = self->w;
	sg.set = 0;
	raise(SIGUSR1);
	EXPECT_EQ(self->w.sel, sg.sc_fs);
	EXPECT_EQ(0, sg.live_wrong);
	back = self->w;
	if (back.sel > 3)
		back.sel |= 3;
	check(&back, "after sigreturn", 0);

	/* sigreturn into every kind: it takes effect, with its descriptor. */
	for (k = 0; k < K_MAX; k++) {
		struct want to = want_of(k);

		if (k == K_PDA && !ph_have_pda())
			continue;
		ph_set_seg(fs, self->w.sel);
		sg.set = 1;
		sg.new_fs = to.sel;
		raise(SIGUSR1);
		EXPECT_EQ(self->w.sel, sg.sc_fs);
		check(&to, "sigreturn to each kind", k);
	}

	/* A selector that does not load becomes 0, as it always has. */
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ph_set_seg(fs, self->w.sel);
		sg.new_fs = bad[i];
		raise(SIGUSR1);
		EXPECT_EQ(0, ph_get_seg(fs));
	}
	ASSERT_NO_FAILS();
}

/* ------------------------------------------------------------- ptrace */

/*
 * The tracee stops K_MAX + 1 times.  Before stop k >= 1 the tracer has
 * set fs to want_of(k - 1); the tracee records whether it got it.
 */
static void pt_tracee(const struct want *w)
{
	int k;

	if (ptrace(PTRACE_TRACEME, 0, 0, 0))
		_exit(10);
	ph_set_seg(fs, w->sel);
	raise(SIGSTOP);
	ph_res->v[0] = fs_wrong(w);
	for (k = 0; k < K_MAX; k++) {
		struct want to = want_of(k);

		raise(SIGSTOP);
		ph_res->v[1 + k] = ph_get_seg(fs);
		ph_res->v[8 + k] = fs_wrong(&to);
	}
	_exit(0);
}

static int pt_stop(pid_t pid)
{
	int status;

	if (ph_wait(pid, &status, 60))
		return -1;
	return WIFSTOPPED(status) && WSTOPSIG(status) == SIGSTOP ? 0 : -1;
}

TEST_F_TIMEOUT(ufs, ptrace, 120)
{
	struct user_regs_struct regs, prs;
	struct iovec iov = { &prs, sizeof(prs) };
	int k, status, have_pda = ph_have_pda();
	pid_t pid;

	memset((void *)ph_res->v, 0xff, sizeof(ph_res->v));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		pt_tracee(&self->w);
	ASSERT_EQ(0, pt_stop(pid));

	/* Every register view shows the live value. */
	errno = 0;
	EXPECT_EQ(self->w.sel, ptrace(PTRACE_PEEKUSER, pid, FS_OFF, 0));
	EXPECT_EQ(0, errno);
	ASSERT_EQ(0, ptrace(PTRACE_GETREGS, pid, 0, &regs));
	EXPECT_EQ(self->w.sel, regs.xfs & 0xffff);
	ASSERT_EQ(0, ptrace(PTRACE_GETREGSET, pid, NT_PRSTATUS, &iov));
	EXPECT_EQ(self->w.sel, prs.xfs & 0xffff);

	/* RPL 0 is no user selector. */
	errno = 0;
	EXPECT_EQ(-1, ptrace(PTRACE_POKEUSER, pid, FS_OFF, PH_TLS_SEL & ~3));
	EXPECT_EQ(EIO, errno);

	/* Set each kind, alternately with POKEUSER and SETREGS. */
	for (k = 0; k < K_MAX; k++) {
		unsigned int sel = want_of(k).sel;

		if (k == K_PDA && !have_pda)
			sel = 0;
		ASSERT_EQ(0, ptrace(PTRACE_CONT, pid, 0, 0));
		ASSERT_EQ(0, pt_stop(pid));
		if (k & 1) {
			ASSERT_EQ(0, ptrace(PTRACE_GETREGS, pid, 0, &regs));
			regs.xfs = sel;
			ASSERT_EQ(0, ptrace(PTRACE_SETREGS, pid, 0, &regs));
		} else {
			ASSERT_EQ(0, ptrace(PTRACE_POKEUSER, pid, FS_OFF, sel));
		}
	}
	ASSERT_EQ(0, ptrace(PTRACE_CONT, pid, 0, 0));
	ASSERT_EQ(0, ph_wait(pid, &status, 60));
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(0, ph_res->v[0]);
	for (k = 0; k < K_MAX; k++) {
		if (k == K_PDA && !have_pda)
			continue;
		EXPECT_EQ(want_of(k).sel, (unsigned int)ph_res->v[1 + k]);
		EXPECT_EQ(0, ph_res->v[8 + k]);
	}
}

/* ------------------------------------------- fork, threads, exec, vm86 */

static void *thread_check(void *arg)
{
	return (void *)(intptr_t)fs_wrong(arg);
}

TEST_F_TIMEOUT(ufs, fork_and_thread, 120)
{
	void *ret;
	pthread_t t;
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(fs_wrong(&self->w));
	ASSERT_EQ(0, ph_wait(pid, &status, 60));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	ASSERT_EQ(0, pthread_create(&t, NULL, thread_check, &self->w));
	ASSERT_EQ(0, pthread_join(t, &ret));
	EXPECT_EQ(0, (intptr_t)ret);
	check(&self->w, "parent after fork and thread", 0);
	ASSERT_NO_FAILS();
}

TEST_F_TIMEOUT(ufs, exec_resets_fs, 120)
{
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		execl("/proc/self/exe", "x86_user_fs", EXEC_CHECK, NULL);
		_exit(20);
	}
	ASSERT_EQ(0, ph_wait(pid, &status, 60));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/* mov %fs, %ax; hlt: vm86 reports the hlt as VM86_UNKNOWN. */
static const unsigned char vm86_code[] = { 0x8c, 0xe0, 0xf4 };
#define VM86_LOAD	0x10000

TEST_F_TIMEOUT(ufs, vm86, 120)
{
	struct vm86plus_struct v86;
	unsigned char *code;
	long ret;

	if (ph_kernel64) {
		/* ia32_sys_call_table has sys_ni_syscall for vm86 and vm86old */
		/* (SKIP would hide an EXPECT's failure: ASSERT) */
		errno = 0;
		ASSERT_EQ(-1, syscall(SYS_vm86, VM86_ENTER, NULL));
		ASSERT_EQ(ENOSYS, errno);
		errno = 0;
		ASSERT_EQ(-1, syscall(SYS_vm86old, NULL));
		ASSERT_EQ(ENOSYS, errno);
		check(&self->w, "after the refused vm86", 0);
		ASSERT_NO_FAILS();
		SKIP(return, "x86-64 kernel: no vm86 for 32-bit tasks (ENOSYS)");
	}
	code = mmap((void *)VM86_LOAD, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	ASSERT_EQ(VM86_LOAD, (uintptr_t)code);
	memcpy(code, vm86_code, sizeof(vm86_code));
	memset(&v86, 0, sizeof(v86));
	v86.regs.cs = v86.regs.ss = v86.regs.ds = v86.regs.es = VM86_LOAD / 16;
	v86.regs.fs = 0x1234;
	v86.regs.esp = 4096;
	v86.regs.eflags = X86_EFLAGS_IF;

	ret = syscall(SYS_vm86, VM86_ENTER, &v86);
	if (ret == -1 && (errno == ENOSYS || errno == EPERM))
		SKIP(return, "no vm86 (errno %d)", errno);
	EXPECT_EQ(VM86_UNKNOWN, VM86_TYPE(ret));
	EXPECT_EQ(0x1234, v86.regs.eax & 0xffff);	/* vm86 had its own fs */
	check(&self->w, "back from vm86", 0);
	ASSERT_NO_FAILS();
}

/* ---------------------------------- a descriptor changed under %fs */

/*
 * The reference is a kernel that pops %fs on every return to user mode
 * (i386-smp): whatever the RPL, the next read through a rewritten
 * descriptor sees the new one, and a cleared one leaves %fs = 0.
 *
 * An x86-64 kernel loads %fs at a context switch (__switch_to()), and in
 * a thread's own set_thread_area() where tls.c asks it to: if %fs holds
 * the RPL 3 selector of the entry written.  Any other selector keeps the
 * descriptor it was loaded from until the thread is switched out and in
 * again (ldt.c reloads %ds and %es, never %fs).  The switch loads the
 * selector again, 0 if that fails, and with FSGSBASE then puts back the
 * base %fs had, the one saved at the switch: a rewritten descriptor's
 * base is then never seen through it, unless the kernel updated that
 * saved base (tls.c does, for a stopped tracee's RPL 3 selector).  The
 * tests hold the kernel to exactly that: what %fs reads right after the
 * change (a round that a context switch came into is done again), and
 * again after a switch they force.
 */
FIXTURE(under) {
	unsigned int tls_sel, ldt_sel;
};

FIXTURE_VARIANT(under) {
	unsigned int rpl;
};

FIXTURE_VARIANT_ADD(under, rpl0) { .rpl = 0 };
FIXTURE_VARIANT_ADD(under, rpl1) { .rpl = 1 };
FIXTURE_VARIANT_ADD(under, rpl2) { .rpl = 2 };
FIXTURE_VARIANT_ADD(under, rpl3) { .rpl = 3 };

FIXTURE_SETUP(under)
{
	ASSERT_EQ(0, setup_all());
	ASSERT_EQ(0, ph_pin(0));	/* one CPU: a sibling is switched out */
	self->tls_sel = with_rpl(PH_TLS_SEL, variant->rpl);
	self->ldt_sel = with_rpl(LDT_SEL, variant->rpl);
}

FIXTURE_TEARDOWN(under)
{
	ph_set_seg(fs, 0);
}

static int tls_write(int entry, const void *base, int present)
{
	struct user_desc d = flat_desc(entry, base, present);

	return syscall(SYS_set_thread_area, &d);
}

/*
 * Each case runs this many rounds: a context switch reloads %fs, so one
 * that happened to fall between the change and the read would hide a
 * stale descriptor.
 */
#define ROUNDS	16


/* Sleeps until the thread has been switched out and in again. */
static void switch_out(struct __test_metadata *_metadata)
{
	long before = ph_thread_switches();
	int k;

	for (k = 0; k < 100 && ph_thread_switches() == before; k++)
		usleep(1000);
	ASSERT_NE(before, ph_thread_switches());
}

/*
 * Does the kernel load %fs = @sel again when the thread itself changes
 * the descriptor under it (an LDT one if @ldt)?  i386 does, on the way
 * back to user mode (with PDA_UP_NOSEG, tls.c and ldt.c do, whatever the
 * RPL); x86-64 only for an RPL 3 TLS selector.
 */
static int kernel_reloads(unsigned int sel, int ldt)
{
	if (!ph_kernel64)
		return 1;
	return !ldt && (sel & 3) == 3;
}

/*
 * What a read through %fs gives after a context switch, if %fs read
 * @had's before it and the descriptor in the table is now @now's: the
 * switch loads the selector again, but with FSGSBASE puts back the base
 * it saved, unless the kernel updated that (@base_updated).
 */
static const uint32_t *after_switch(const uint32_t *had, const uint32_t *now,
				    int base_updated)
{
	return ph_fsgsbase && !base_updated ? had : now;
}

/* %fs after the entry under it was cleared: 0, and a system call keeps it. */
static void expect_cleared(struct __test_metadata *_metadata, unsigned int sel,
			   int round)
{
	unsigned int now = ph_get_seg(fs);

	if (now)
		TH_LOG("round %d: %%fs still %#x (loaded %#x), and reads %#x through the cleared entry",
		       round, now, sel, ph_fs_load32(0));
	ASSERT_EQ(0, now);
	ph_int80(SYS_getppid, 0, 0, 0);
	ASSERT_EQ(0, ph_get_seg(fs));
}

/*
 * Reads %fs and through it, twice, with a system call between.  0 if it
 * held @sel and read @buf's magic both times, else 1 with what it read
 * the first time it did not.
 */
static int fs_reads(unsigned int sel, const uint32_t *buf, int *k,
		    unsigned int *now, uint32_t *got)
{
	for (*k = 0; *k < 2; ++*k) {
		*now = ph_get_seg(fs);
		*got = *now == sel ? ph_fs_load32(0) : 0;
		if (*now != sel || *got != buf[0])
			return 1;
		ph_vsys(SYS_getppid, 0, 0, 0);
	}
	return 0;
}

/* What fs_reads() found wrong: say it, and fail. */
static void reads_wrong(struct __test_metadata *_metadata, unsigned int sel,
			const uint32_t *buf, int round, const char *when,
			int k, unsigned int now, uint32_t got)
{
	TH_LOG("round %d%s%s: %%fs %#x reads %#x, want %#x reading %#x",
	       round, when, k ? ", after getppid" : "", now, got, sel, buf[0]);
	ASSERT_EQ(sel, now);
	ASSERT_EQ(buf[0], got);
}

/* %fs still @sel, reading @buf's magic, also after a system call. */
static void expect_reads(struct __test_metadata *_metadata, unsigned int sel,
			 const uint32_t *buf, int round, const char *when)
{
	unsigned int now;
	uint32_t got;
	int k;

	if (fs_reads(sel, buf, &k, &now, &got))
		reads_wrong(_metadata, sel, buf, round, when, k, now, got);
}

/* Rounds a context switch came into were done again: how many. */
static void log_redone(struct __test_metadata *_metadata, int rounds)
{
	if (rounds > ROUNDS)
		TH_LOG("%d of %d rounds done again: the thread was switched out between the change and the read",
		       rounds - ROUNDS, rounds);
}

static const uint32_t *const round_buf[] = { alt_buf, alt2_buf, tls_buf };

/* set_thread_area() and modify_ldt() behind one signature. */
typedef int (*desc_write_fn)(int entry, const void *base, int present);

/*
 * The thread itself rewrites the entry %fs holds: no reload by us.  @has
 * is what %fs reads through: the new descriptor where the kernel loads
 * %fs again, else still the one it had, until a context switch.
 */
static void rewritten_under_fs(struct __test_metadata *_metadata,
			       unsigned int sel, desc_write_fn write,
			       int entry, const uint32_t *first, int ldt)
{
	int reloads = kernel_reloads(sel, ldt), i, k, bad, done = 0;
	const uint32_t *has = first;
	unsigned int now;
	uint32_t got;
	long sw;

	ph_set_seg(fs, sel);
	ASSERT_EQ(first[0], ph_fs_load32(0));
	for (i = 0; done < ROUNDS && i < 4 * ROUNDS; i++) {
		const uint32_t *buf = round_buf[i % 3];

		sw = ph_thread_switches();
		ASSERT_EQ(0, write(entry, buf, 1));
		if (reloads)
			has = buf;
		bad = fs_reads(sel, has, &k, &now, &got);
		if (!reloads && ph_thread_switches() != sw) {
			/* switched out in between: not this round */
			ph_set_seg(fs, sel);
			has = buf;
			continue;
		}
		if (bad)
			reads_wrong(_metadata, sel, has, i, "", k, now, got);
		switch_out(_metadata);
		has = after_switch(has, buf, reloads);
		expect_reads(_metadata, sel, has, i, ", switched out");
		done++;
	}
	log_redone(_metadata, i);
	ASSERT_EQ(ROUNDS, done);
}

static void cleared_under_fs(struct __test_metadata *_metadata,
			     unsigned int sel, desc_write_fn write,
			     int entry, const uint32_t *first, int ldt)
{
	int reloads = kernel_reloads(sel, ldt), i, k, bad, done = 0;
	unsigned int now;
	uint32_t got;
	long sw;

	for (i = 0; done < ROUNDS && i < 4 * ROUNDS; i++) {
		ASSERT_EQ(0, write(entry, first, 1));
		ph_set_seg(fs, sel);
		ASSERT_EQ(first[0], ph_fs_load32(0));
		sw = ph_thread_switches();
		ASSERT_EQ(0, write(entry, NULL, 0));
		if (!reloads) {
			/* the selector, over the descriptor it had */
			bad = fs_reads(sel, first, &k, &now, &got);
			if (ph_thread_switches() != sw) {
				ph_set_seg(fs, 0);	/* not this round */
				continue;
			}
			if (bad)
				reads_wrong(_metadata, sel, first, i, "", k,
					    now, got);
			switch_out(_metadata);
		}
		expect_cleared(_metadata, sel, i);
		done++;
	}
	log_redone(_metadata, i);
	ASSERT_EQ(ROUNDS, done);
}

TEST_F(under, tls_rewritten)
{
	rewritten_under_fs(_metadata, self->tls_sel, tls_write, PH_TLS_ENTRY,
			   tls_buf, 0);
}

TEST_F(under, tls_cleared)
{
	cleared_under_fs(_metadata, self->tls_sel, tls_write, PH_TLS_ENTRY,
			 tls_buf, 0);
}

TEST_F(under, ldt_rewritten)
{
	rewritten_under_fs(_metadata, self->ldt_sel, ldt_set, LDT_ENTRY,
			   ldt_buf, 1);
}

TEST_F(under, ldt_cleared)
{
	cleared_under_fs(_metadata, self->ldt_sel, ldt_set, LDT_ENTRY,
			 ldt_buf, 1);
}

static struct {
	int go[2], done[2];
	uint32_t seen;
	unsigned int load, sel;
	int switched;
} sib;

/* Holds an LDT selector, sleeps while main changes the LDT, reads. */
static void *sibling(void *arg)
{
	long sw;
	char c;

	ph_set_seg(fs, sib.load);
	sw = ph_thread_switches();
	if (write(sib.done[1], "r", 1) != 1 || read(sib.go[0], &c, 1) != 1)
		return NULL;
	sib.sel = ph_get_seg(fs);
	sib.seen = sib.sel == sib.load ? ph_fs_load32(0) : 0;
	sib.switched = ph_thread_switches() != sw;
	ph_set_seg(fs, 0);
	return NULL;
}

/*
 * The LDT is the mm's: a sibling thread changes it under a sleeper, which
 * (one CPU) was switched out before the change and in after it.
 */
static void run_sibling(struct __test_metadata *_metadata, unsigned int sel,
			int present)
{
	pthread_t t;
	char c;

	sib.load = sel;
	ASSERT_EQ(0, pipe(sib.go));
	ASSERT_EQ(0, pipe(sib.done));
	ASSERT_EQ(0, pthread_create(&t, NULL, sibling, NULL));
	ASSERT_EQ(1, read(sib.done[0], &c, 1));
	ASSERT_EQ(0, ldt_set(LDT_ENTRY, alt_buf, present));
	ASSERT_EQ(1, write(sib.go[1], "g", 1));
	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_TRUE(sib.switched);
	if (present) {
		EXPECT_EQ(sel, sib.sel);
		EXPECT_EQ(after_switch(ldt_buf, alt_buf, 0)[0], sib.seen);
	} else {
		EXPECT_EQ(0, sib.sel);	/* the reload faulted: null */
	}
}

TEST_F(under, ldt_rewritten_under_sleeping_sibling)
{
	run_sibling(_metadata, self->ldt_sel, 1);
}

TEST_F(under, ldt_cleared_under_sleeping_sibling)
{
	run_sibling(_metadata, self->ldt_sel, 0);
}

/*
 * TLS entries are per thread: only a tracer (PTRACE_SET_THREAD_AREA)
 * changes another task's, here while the tracee is stopped with the
 * selector in %fs.  On x86-64, tls.c then updates the base the tracee
 * gets back if its %fs is the RPL 3 selector of the entry.
 */
static void run_tracer(struct __test_metadata *_metadata, unsigned int sel,
		       int present)
{
	struct user_desc d = flat_desc(PH_TLS_ENTRY, alt_buf, present);
	int status;
	pid_t pid;

	ph_res->v[0] = ph_res->v[1] = -1;
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, 0, 0))
			_exit(10);
		ph_set_seg(fs, sel);
		raise(SIGSTOP);
		ph_res->v[0] = ph_get_seg(fs);
		ph_res->v[1] = ph_res->v[0] ? ph_fs_load32(0) : 0;
		_exit(0);
	}
	ASSERT_EQ(0, pt_stop(pid));
	EXPECT_EQ(0, ptrace(PTRACE_SET_THREAD_AREA, pid,
			    (void *)PH_TLS_ENTRY, &d));
	ASSERT_EQ(0, ptrace(PTRACE_CONT, pid, 0, 0));
	ASSERT_EQ(0, ph_wait(pid, &status, 60));
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	if (present) {
		EXPECT_EQ(sel, (unsigned int)ph_res->v[0]);
		EXPECT_EQ(after_switch(tls_buf, alt_buf, (sel & 3) == 3)[0],
			  (uint32_t)ph_res->v[1]);
	} else {
		EXPECT_EQ(0, ph_res->v[0]);
	}
}

TEST_F(under, tls_rewritten_by_tracer)
{
	run_tracer(_metadata, self->tls_sel, 1);
}

TEST_F(under, tls_cleared_by_tracer)
{
	run_tracer(_metadata, self->tls_sel, 0);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], EXEC_CHECK))
		return ph_get_seg(fs) == 0 ? 0 : 1;
	return test_harness_run(argc, argv);
}
