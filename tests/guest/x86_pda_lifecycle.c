// SPDX-License-Identifier: GPL-2.0
/*
 * The PDA selector (0xeb) in %fs through a thread's life: it must survive
 * everything the kernel does to a thread, and keep reading the CPU the
 * thread is on.
 *
 * - syscalls: int $0x80, the vDSO (SYSENTER; SYSCALL on an x86-64 kernel
 *   on AMD), glibc's wrappers, failing and blocking ones, and
 *   sched_setaffinity re-pinning to every CPU;
 * - interrupts and preemption: a long asm loop that checks %fs and the
 *   CPU it reads on every iteration, sharing its CPU with a hog;
 * - context switches: three threads ping-ponging on one CPU, holding
 *   0xeb, a set_thread_area() TLS selector and 0;
 * - signals: the handler's sigcontext has fs == 0xeb, a handler that
 *   changes sc.fs changes %fs after sigreturn, a handler that changes the
 *   live %fs does not; and asynchronous timer signals during the loop;
 * - ptrace: PEEKUSER/GETREGS read 0xeb, POKEUSER/SETREGS of 0xeb into a
 *   tracee holding 0 takes effect (also at a syscall stop);
 * - fork and pthread_create keep it; exec resets %fs to 0 (and drops TLS
 *   entries, unlike the GDT entry, which the new image can still load).
 *
 * "The CPU" is always checked pinned: the segment read must equal the CPU
 * we pinned to and sched_getcpu().
 *
 * The same binary runs on an i386 kernel, which reloads %fs on every
 * return to user space, and as a compat task on an x86-64 one, which
 * reloads it at context switches (every migration is one); the
 * expectations are the same.  The TLS selector is whatever ph_init()
 * found the last TLS entry to be (0x43 on i386, 0x73 on x86-64).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "lib/pda_hostile.h"

#define FS_OFF	offsetof(struct user_regs_struct, xfs)

/* ------------------------------------------------------------ fixture */

FIXTURE(lc) {
	struct ph_cpus cpus;
	int last;		/* the highest online CPU: a non-zero base */
};

FIXTURE_SETUP(lc)
{
	if (!ph_have_pda())
		SKIP(return, "no HWCAP2_PDA_USER_SEG: kernel without the PDA segment");
	ASSERT_EQ(0, ph_init());
	ASSERT_EQ(0, ph_cpus_online(&self->cpus));
	self->last = self->cpus.id[self->cpus.n - 1];
	ASSERT_TRUE(ph_kernel_mismatch() == NULL) {
		TH_LOG("%s", ph_kernel_mismatch());
	}
	TH_LOG("%d CPU(s)%s, %s kernel, TLS selector %#x, vDSO %s",
	       self->cpus.n, ph_bochs() ? ", Bochs" : "",
	       ph_kernel64 ? "x86-64" : "i386", PH_TLS_SEL,
	       ph_vdso_name[ph_vdso_entry()]);
}

FIXTURE_TEARDOWN(lc)
{
}

/*
 * Checks that %fs holds @sel and, for the PDA selector, reads @cpu, which
 * sched_getcpu() must agree with.  The first failure is kept.
 */
static int nfail;
static char first_fail[256];

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	va_list ap;

	if (nfail++)
		return;
	va_start(ap, fmt);
	vsnprintf(first_fail, sizeof(first_fail), fmt, ap);
	va_end(ap);
}

static void check_pda(int cpu, const char *where, long i)
{
	unsigned int fs = ph_get_seg(fs);
	int seen, sched;

	if (fs != PH_SEL) {
		fail("%s #%ld: %%fs = %#x, want %#x", where, i, fs, PH_SEL);
		return;
	}
	seen = ph_fs_read();
	sched = sched_getcpu();
	if (seen != cpu || sched != cpu)
		fail("%s #%ld: pinned to %d, segment reads %d, sched_getcpu %d",
		     where, i, cpu, seen, sched);
}

#define ASSERT_NO_FAILS() do {						\
	if (nfail)							\
		TH_LOG("%d failure(s), first: %s", nfail, first_fail);	\
	ASSERT_EQ(0, nfail);						\
} while (0)

/* ---------------------------------------------------------- syscalls */

TEST_F_TIMEOUT(lc, syscalls, 120)
{
	long iters = ph_scale(1500), i;
	int fds[2], devnull;
	char c = 'x';
	pid_t pid = getpid();

	ASSERT_EQ(0, pipe(fds));
	devnull = open("/dev/null", O_WRONLY);
	ASSERT_LE(0, devnull);
	ph_set_seg(fs, PH_SEL);
	for (i = 0; i < iters; i++) {
		int cpu = self->cpus.id[i % self->cpus.n];
		struct timespec ts = { 0, 1000 };

		/* glibc's sched_setaffinity: the vDSO path, and a migration */
		ASSERT_EQ(0, ph_pin(cpu));
		check_pda(cpu, "after sched_setaffinity", i);
		if (ph_int80(SYS_getpid, 0, 0, 0) != pid)
			fail("int80 getpid");
		check_pda(cpu, "after int $0x80", i);
		if (ph_vsys(SYS_getpid, 0, 0, 0) != pid)
			fail("vsyscall getpid");
		check_pda(cpu, "after __kernel_vsyscall", i);
		if (write(fds[1], &c, 1) != 1 || read(fds[0], &c, 1) != 1)
			fail("pipe");
		check_pda(cpu, "after pipe I/O", i);
		if (write(devnull, &c, 1) != 1)
			fail("/dev/null");
		if (close(-1) != -1 || errno != EBADF)
			fail("close(-1)");
		check_pda(cpu, "after a failing syscall", i);
		if (ph_int80(SYS_getpid + 100000, 0, 0, 0) != -ENOSYS)
			fail("bad syscall number");
		check_pda(cpu, "after ENOSYS", i);
		sched_yield();
		check_pda(cpu, "after sched_yield", i);
		if (i % 8 == 0) {
			nanosleep(&ts, NULL);
			check_pda(cpu, "after nanosleep", i);
		}
		if (nfail)
			break;
	}
	ASSERT_NO_FAILS();
	ASSERT_EQ(PH_SEL, ph_get_seg(fs));
}

/* ------------------------------------------------ interrupts, preemption */

static unsigned long long intr_total(void)
{
	unsigned long long n = 0;
	char buf[256];
	FILE *f = fopen("/proc/stat", "r");

	if (!f)
		return 0;
	while (fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "intr %llu", &n) == 1)
			break;
	fclose(f);
	return n;
}

/*
 * @n iterations of: %fs must be 0xeb and must read @cpu.  Returns the
 * iterations left when it found otherwise (0 when all were fine).
 */
static unsigned long fs_loop(unsigned long n, int cpu)
{
	asm volatile("1:\n\t"
		     "movw %%fs, %%ax\n\t"
		     "cmpw %[sel], %%ax\n\t"
		     "jne 2f\n\t"
		     "movl %%fs:(%[tab]), %%eax\n\t"
		     "cmpl %[cpu], %%eax\n\t"
		     "jne 2f\n\t"
		     "decl %[n]\n\t"
		     "jnz 1b\n"
		     "2:"
		     : [n] "+r" (n)
		     : [sel] "i" (PH_SEL), [tab] "r" (ph_table), [cpu] "r" (cpu)
		     : "eax", "cc", "memory");
	return n;
}

static volatile int hog_stop;

static void *hog(void *arg)
{
	int cpu = *(int *)arg;

	ph_pin(cpu);
	while (!hog_stop)
		;
	return NULL;
}

TEST_F_TIMEOUT(lc, interrupts_and_preemption, 120)
{
	double per_cpu = ph_bochs() ? 1.0 : 2.0 / self->cpus.n;
	unsigned long long intr0 = intr_total(), intr1;
	unsigned long loops = 0;
	int k;

	for (k = 0; k < self->cpus.n; k++) {
		int cpu = self->cpus.id[k];
		struct rusage ru0, ru1;
		pthread_t t;
		double end;

		ASSERT_EQ(0, ph_pin(cpu));
		ph_set_seg(fs, PH_SEL);
		hog_stop = 0;
		ASSERT_EQ(0, pthread_create(&t, NULL, hog, &cpu));
		getrusage(RUSAGE_THREAD, &ru0);
		end = ph_now() + per_cpu;
		while (ph_now() < end) {
			unsigned long left = fs_loop(100000, cpu);

			loops++;
			if (left) {
				fail("cpu %d loop %lu: %%fs %#x reads %d", cpu,
				     loops, ph_get_seg(fs), ph_fs_read());
				break;
			}
		}
		getrusage(RUSAGE_THREAD, &ru1);
		hog_stop = 1;
		pthread_join(t, NULL);
		TH_LOG("cpu %d: %ld involuntary context switches", cpu,
		       ru1.ru_nivcsw - ru0.ru_nivcsw);
		/* The hog shared our CPU: we were preempted. */
		EXPECT_LT(0, ru1.ru_nivcsw - ru0.ru_nivcsw);
		check_pda(cpu, "after the loop", k);
	}
	intr1 = intr_total();
	TH_LOG("%lu x 100000 iterations, %llu interrupts meanwhile", loops,
	       intr1 - intr0);
	EXPECT_LT(intr0, intr1);
	ASSERT_NO_FAILS();
}

/* ---------------------------------------------------- context switches */

/*
 * A ring of three threads on one CPU, passing a token through pipes:
 * PDA holds 0xeb, TLS a TLS selector whose base is its marker, ZERO holds
 * 0.  Every few rounds the token names another CPU and each thread
 * re-pins itself to it.
 */
enum { CS_PDA, CS_TLS, CS_ZERO, CS_N };

struct cs_token {
	long round;	/* -1: stop */
	int cpu;
};

struct cs_thread {
	int role, in, out, cpu;
	unsigned int tls_sel;
	uint32_t marker[2];
	long switches;
};

static void cs_check(struct cs_thread *t, long round)
{
	unsigned int fs = ph_get_seg(fs);

	if (ph_get_seg(gs) != ph_glibc_gs)
		fail("role %d round %ld: %%gs %#x", t->role, round,
		     ph_get_seg(gs));
	switch (t->role) {
	case CS_PDA:
		check_pda(t->cpu, "PDA thread", round);
		break;
	case CS_TLS:
		if (fs != t->tls_sel || ph_fs_load32(0) != t->marker[0] ||
		    ph_fs_load32(4) != t->marker[1])
			fail("TLS thread round %ld: %%fs %#x, want %#x", round,
			     fs, t->tls_sel);
		break;
	case CS_ZERO:
		if (fs != 0)
			fail("zero thread round %ld: %%fs %#x", round, fs);
		break;
	}
}

static void *cs_run(void *arg)
{
	struct cs_thread *t = arg;
	struct cs_token tok;
	int sel;

	switch (t->role) {
	case CS_PDA:
		ph_set_seg(fs, PH_SEL);
		break;
	case CS_TLS:
		t->marker[0] = 0x7e57c0de;
		t->marker[1] = (uint32_t)syscall(SYS_gettid);
		sel = ph_tls_set(-1, (uint32_t)(uintptr_t)t->marker);
		if (sel < 0) {
			fail("set_thread_area: %s", strerror(errno));
			sel = 0;
		}
		t->tls_sel = sel;
		ph_set_seg(fs, sel);
		break;
	case CS_ZERO:
		ph_set_seg(fs, 0);
		break;
	}
	while (read(t->in, &tok, sizeof(tok)) == sizeof(tok)) {
		if (tok.round >= 0) {
			if (tok.cpu != t->cpu) {
				if (ph_pin(tok.cpu))
					fail("pin %d: %s", tok.cpu,
					     strerror(errno));
				t->cpu = tok.cpu;
			}
			cs_check(t, tok.round);
			t->switches++;
		}
		if (write(t->out, &tok, sizeof(tok)) != sizeof(tok))
			break;
		if (tok.round < 0)
			break;
	}
	return NULL;
}

TEST_F_TIMEOUT(lc, context_switches, 120)
{
	struct cs_thread th[CS_N];
	pthread_t tid[CS_N];
	int p[CS_N][2], i, start[2];
	long rounds = ph_scale(3000), r;
	struct cs_token tok;

	memset(th, 0, sizeof(th));
	for (i = 0; i < CS_N; i++)
		ASSERT_EQ(0, pipe(p[i]));
	ASSERT_EQ(0, pipe(start));
	ASSERT_EQ(0, ph_pin(self->cpus.id[0]));
	/* thread i reads p[i], writes p[i+1]; we feed p[0] and read p[N-1] */
	for (i = 0; i < CS_N; i++) {
		th[i].role = i;
		th[i].in = p[i][0];
		th[i].out = i + 1 < CS_N ? p[i + 1][1] : start[1];
		th[i].cpu = self->cpus.id[0];
		ASSERT_EQ(0, pthread_create(&tid[i], NULL, cs_run, &th[i]));
	}
	for (r = 0; r < rounds && !nfail; r++) {
		tok.round = r;
		tok.cpu = self->cpus.id[(r / 50) % self->cpus.n];
		if (tok.cpu != sched_getcpu())
			ASSERT_EQ(0, ph_pin(tok.cpu));
		ASSERT_EQ(sizeof(tok), write(p[0][1], &tok, sizeof(tok)));
		ASSERT_EQ(sizeof(tok), read(start[0], &tok, sizeof(tok)));
		ASSERT_EQ(r, tok.round);
	}
	tok.round = -1;
	ASSERT_EQ(sizeof(tok), write(p[0][1], &tok, sizeof(tok)));
	ASSERT_EQ(sizeof(tok), read(start[0], &tok, sizeof(tok)));
	for (i = 0; i < CS_N; i++) {
		pthread_join(tid[i], NULL);
		EXPECT_EQ(rounds, th[i].switches);
	}
	TH_LOG("%ld rounds of 3 threads (0xeb, TLS %#x, 0)", rounds,
	       th[CS_TLS].tls_sel);
	ASSERT_NO_FAILS();
}

/* ------------------------------------------------------------- signals */

static struct {
	volatile int mode;
	volatile int count;
	volatile unsigned int sc_fs, live_fs, set_fs;
	volatile int read;
} sg;

enum { SG_LOOK, SG_SET_SC, SG_CLOBBER_LIVE };

static void sg_handler(int sig, siginfo_t *si, void *ctx)
{
	greg_t *g = ((ucontext_t *)ctx)->uc_mcontext.gregs;

	(void)sig;
	(void)si;
	sg.count++;
	sg.sc_fs = g[REG_FS] & 0xffff;
	sg.live_fs = ph_get_seg(fs);
	if (sg.live_fs == PH_SEL)
		sg.read = ph_fs_read();
	switch (sg.mode) {
	case SG_SET_SC:
		g[REG_FS] = sg.set_fs;
		break;
	case SG_CLOBBER_LIVE:
		ph_set_seg(fs, 0);
		break;
	}
}

static void sg_install(int sig)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = sg_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

TEST_F_TIMEOUT(lc, signals, 120)
{
	int cpu = self->last, tls;
	static uint32_t marker[2] = { 0xfeedf00d, 0x600dcafe };
	struct itimerval it = { { 0, 2000 }, { 0, 2000 } };
	double end;
	int before;

	ASSERT_EQ(0, ph_pin(cpu));
	sg_install(SIGUSR1);

	/* The handler sees 0xeb, in sigcontext and live; sigreturn keeps it. */
	ph_set_seg(fs, PH_SEL);
	sg.mode = SG_LOOK;
	sg.count = 0;
	raise(SIGUSR1);
	ASSERT_EQ(1, sg.count);
	EXPECT_EQ(PH_SEL, sg.sc_fs);
	EXPECT_EQ(PH_SEL, sg.live_fs);
	EXPECT_EQ(cpu, sg.read);
	check_pda(cpu, "after a signal", 0);

	/* A handler that reloads the live %fs: sigreturn puts 0xeb back. */
	sg.mode = SG_CLOBBER_LIVE;
	raise(SIGUSR1);
	EXPECT_EQ(PH_SEL, sg.sc_fs);
	check_pda(cpu, "after a handler loaded 0 into %fs", 0);

	/* sc.fs = a TLS selector: it is in %fs after sigreturn. */
	tls = ph_tls_set(PH_TLS_ENTRY, (uint32_t)(uintptr_t)marker);
	ASSERT_EQ(PH_TLS_SEL, tls);
	sg.mode = SG_SET_SC;
	sg.set_fs = tls;
	raise(SIGUSR1);
	EXPECT_EQ(PH_SEL, sg.sc_fs);
	EXPECT_EQ(tls, ph_get_seg(fs));
	EXPECT_EQ(marker[0], ph_fs_load32(0));
	EXPECT_EQ(marker[1], ph_fs_load32(4));

	/* ... and from the TLS selector back to 0xeb. */
	sg.set_fs = PH_SEL;
	raise(SIGUSR1);
	EXPECT_EQ(tls, sg.sc_fs);
	check_pda(cpu, "after sc.fs = 0xeb (from TLS)", 0);

	/* From 0 to 0xeb: the segment works and reads the right CPU. */
	ph_set_seg(fs, 0);
	raise(SIGUSR1);
	EXPECT_EQ(0, sg.sc_fs);
	check_pda(cpu, "after sc.fs = 0xeb (from 0)", 0);

	/* And from 0xeb to 0. */
	sg.set_fs = 0;
	raise(SIGUSR1);
	EXPECT_EQ(PH_SEL, sg.sc_fs);
	EXPECT_EQ(0, ph_get_seg(fs));

	/*
	 * Asynchronous: SIGPROF every 2 ms of CPU time lands anywhere in
	 * the loop; every handler invocation clobbers the live %fs, and the
	 * loop must never see anything but 0xeb and this CPU.
	 */
	sg_install(SIGPROF);
	ph_set_seg(fs, PH_SEL);
	sg.mode = SG_CLOBBER_LIVE;
	sg.count = 0;
	setitimer(ITIMER_PROF, &it, NULL);
	end = ph_now() + (ph_bochs() ? 3.0 : 1.5);
	while (ph_now() < end && !nfail) {
		if (fs_loop(20000, cpu))
			fail("async loop: %%fs %#x", ph_get_seg(fs));
		if (sg.sc_fs != PH_SEL)
			fail("async signal: sc.fs = %#x", sg.sc_fs);
	}
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_PROF, &it, NULL);
	before = sg.count;
	TH_LOG("%d asynchronous signals during the loop", before);
	EXPECT_LT(0, before);
	check_pda(cpu, "after the async loop", 0);
	ASSERT_NO_FAILS();
}

/* -------------------------------------------------------------- ptrace */

enum { PTM_LEAVE, PTM_POKE, PTM_SETREGS, PTM_POKE_ZERO, PTM_SYSCALL_STOP };

/* The tracee: holds @initial, stops, then reports what it has. */
static void pt_tracee(int cpu, unsigned int initial, unsigned int expect,
		      int at_syscall)
{
	unsigned int fs;

	if (ph_pin(cpu) || ptrace(PTRACE_TRACEME, 0, 0, 0))
		_exit(10);
	ph_set_seg(fs, initial);
	raise(SIGSTOP);
	if (at_syscall)
		ph_int80(SYS_getppid, 0, 0, 0);
	fs = ph_get_seg(fs);
	ph_res->v[0] = fs;
	if (fs != expect)
		_exit(11);
	if (fs == PH_SEL) {
		ph_res->v[1] = ph_fs_read();
		ph_res->v[2] = sched_getcpu();
		if (ph_res->v[1] != cpu || ph_res->v[2] != cpu)
			_exit(12);
	}
	_exit(0);
}

static const char *pt_names[] = {
	"PEEKUSER/GETREGS of 0xeb", "POKEUSER 0xeb into 0",
	"SETREGS 0xeb into 0", "POKEUSER 0 into 0xeb",
	"POKEUSER 0xeb at a syscall-entry stop",
};

TEST_F_TIMEOUT(lc, ptrace, 120)
{
	int mode, cpu = self->last;

	for (mode = PTM_LEAVE; mode <= PTM_SYSCALL_STOP; mode++) {
		unsigned int initial = (mode == PTM_LEAVE || mode == PTM_POKE_ZERO) ?
				       PH_SEL : 0;
		unsigned int expect = mode == PTM_POKE_ZERO ? 0 : PH_SEL;
		struct user_regs_struct regs;
		int status;
		long v;
		pid_t pid;

		TH_LOG("%s", pt_names[mode]);
		memset(ph_res, 0, sizeof(*ph_res));
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0)
			pt_tracee(cpu, initial, expect, mode == PTM_SYSCALL_STOP);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFSTOPPED(status) && WSTOPSIG(status) == SIGSTOP);

		errno = 0;
		v = ptrace(PTRACE_PEEKUSER, pid, (void *)FS_OFF, 0);
		ASSERT_EQ(0, errno);
		EXPECT_EQ(initial, v & 0xffff);
		ASSERT_EQ(0, ptrace(PTRACE_GETREGS, pid, 0, &regs));
		EXPECT_EQ(initial, regs.xfs & 0xffff);

		switch (mode) {
		case PTM_POKE:
		case PTM_POKE_ZERO:
			ASSERT_EQ(0, ptrace(PTRACE_POKEUSER, pid, (void *)FS_OFF,
					    (void *)(long)expect));
			break;
		case PTM_SETREGS:
			regs.xfs = PH_SEL;
			ASSERT_EQ(0, ptrace(PTRACE_SETREGS, pid, 0, &regs));
			break;
		case PTM_SYSCALL_STOP:
			ASSERT_EQ(0, ptrace(PTRACE_SETOPTIONS, pid, 0,
					    (void *)PTRACE_O_TRACESYSGOOD));
			/* to the entry of getppid(), past raise()'s return */
			for (;;) {
				ASSERT_EQ(0, ptrace(PTRACE_SYSCALL, pid, 0, 0));
				ASSERT_EQ(pid, waitpid(pid, &status, 0));
				ASSERT_TRUE(WIFSTOPPED(status) &&
					    WSTOPSIG(status) == (SIGTRAP | 0x80));
				ASSERT_EQ(0, ptrace(PTRACE_GETREGS, pid, 0, &regs));
				if (regs.orig_eax == SYS_getppid)
					break;
			}
			EXPECT_EQ(0, regs.xfs & 0xffff);
			ASSERT_EQ(0, ptrace(PTRACE_POKEUSER, pid, (void *)FS_OFF,
					    (void *)PH_SEL));
			/* to its exit: still 0xeb */
			ASSERT_EQ(0, ptrace(PTRACE_SYSCALL, pid, 0, 0));
			ASSERT_EQ(pid, waitpid(pid, &status, 0));
			ASSERT_TRUE(WIFSTOPPED(status) &&
				    WSTOPSIG(status) == (SIGTRAP | 0x80));
			errno = 0;
			v = ptrace(PTRACE_PEEKUSER, pid, (void *)FS_OFF, 0);
			EXPECT_EQ(PH_SEL, v & 0xffff);
			break;
		}
		if (mode != PTM_LEAVE && mode != PTM_SYSCALL_STOP) {
			errno = 0;
			v = ptrace(PTRACE_PEEKUSER, pid, (void *)FS_OFF, 0);
			EXPECT_EQ(expect, v & 0xffff);
		}
		ASSERT_EQ(0, ptrace(PTRACE_CONT, pid, 0, 0));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			TH_LOG("tracee status %#x: %%fs %#x, reads %d, sched_getcpu %d (pinned to %d)",
			       status, ph_res->v[0], ph_res->v[1], ph_res->v[2],
			       cpu);
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
}

/* ---------------------------------------------------------------- fork */

/* Pinned to every CPU in turn, check_pda() everywhere. */
static void visit_all(const struct ph_cpus *cpus, const char *where)
{
	int k;

	for (k = 0; k < cpus->n; k++) {
		if (ph_pin(cpus->id[k])) {
			fail("%s: pin %d: %s", where, cpus->id[k],
			     strerror(errno));
			continue;
		}
		check_pda(cpus->id[k], where, k);
	}
}

static void *thread_visit(void *arg)
{
	const struct ph_cpus *cpus = arg;

	/* pthread_create copies the creator's registers: %fs too */
	check_pda(cpus->id[cpus->n - 1], "new thread", 0);
	visit_all(cpus, "new thread");
	return NULL;
}

TEST_F_TIMEOUT(lc, fork_and_threads, 120)
{
	int cpu = self->last, status;
	pthread_t t;
	pid_t pid;

	ASSERT_EQ(0, ph_pin(cpu));
	ph_set_seg(fs, PH_SEL);

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		nfail = 0;
		check_pda(cpu, "fork child", 0);
		visit_all(&self->cpus, "fork child");
		if (nfail)
			fprintf(stderr, "# child: %s\n", first_fail);
		_exit(nfail ? 1 : 0);
	}
	check_pda(cpu, "fork parent", 0);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	ASSERT_EQ(0, pthread_create(&t, NULL, thread_visit, &self->cpus));
	ASSERT_EQ(0, pthread_join(t, NULL));
	check_pda(cpu, "thread creator", 0);
	ASSERT_NO_FAILS();
}

/* ---------------------------------------------------------------- exec */

/*
 * The image started by exec: %fs as it found it, whether the TLS
 * selector the old image had still loads (it must not: exec clears the
 * TLS entries), and the CPU read through 0xeb, which it can still load.
 */
static sigjmp_buf exec_jmp;

static void exec_segv(int sig)
{
	(void)sig;
	siglongjmp(exec_jmp, 1);
}

static int exec_child(int fd)
{
	unsigned int fs0 = ph_get_seg(fs);
	int tls_faults = 0, seen, sched;
	char buf[128];

	ph_init();
	signal(SIGSEGV, exec_segv);
	if (sigsetjmp(exec_jmp, 1) == 0)
		ph_set_seg(fs, PH_TLS_SEL);
	else
		tls_faults = 1;
	signal(SIGSEGV, SIG_DFL);
	ph_set_seg(fs, PH_SEL);
	seen = ph_fs_read();
	sched = sched_getcpu();
	snprintf(buf, sizeof(buf), "%u %d %d %d\n", fs0, tls_faults, seen,
		 sched);
	return write(fd, buf, strlen(buf)) == (ssize_t)strlen(buf) ? 0 : 1;
}

TEST_F_TIMEOUT(lc, exec_resets_fs, 120)
{
	static uint32_t marker[2];
	int cpu = self->last, p[2], status, n;
	unsigned int fs0;
	int tls_faults, seen, sched;
	char buf[128], fdarg[16];
	ssize_t len;
	pid_t pid;

	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		char *argv[] = { "x86_pda_lifecycle", "--exec-child", fdarg,
				 NULL };

		close(p[0]);
		snprintf(fdarg, sizeof(fdarg), "%d", p[1]);
		if (ph_pin(cpu) ||
		    ph_tls_set(PH_TLS_ENTRY, (uint32_t)(uintptr_t)marker) !=
		    PH_TLS_SEL)
			_exit(20);
		ph_set_seg(fs, PH_TLS_SEL);	/* it loads here */
		ph_set_seg(fs, PH_SEL);
		execv("/proc/self/exe", argv);
		_exit(21);
	}
	close(p[1]);
	len = read(p[0], buf, sizeof(buf) - 1);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		TH_LOG("exec child status %#x", status);
	}
	ASSERT_LT(0, len);
	buf[len] = '\0';
	n = sscanf(buf, "%u %d %d %d", &fs0, &tls_faults, &seen, &sched);
	ASSERT_EQ(4, n);
	TH_LOG("after exec: %%fs %#x, TLS selector %s, 0xeb reads %d, sched_getcpu %d",
	       fs0, tls_faults ? "faults" : "loads", seen, sched);
	EXPECT_EQ(0, fs0);
	EXPECT_EQ(1, tls_faults);
	EXPECT_EQ(cpu, seen);
	EXPECT_EQ(cpu, sched);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--exec-child"))
		return exec_child(atoi(argv[2]));
	return test_harness_run(argc, argv);
}
