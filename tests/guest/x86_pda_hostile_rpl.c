// SPDX-License-Identifier: GPL-2.0
/*
 * The RPL forms of the PDA selector against those of a TLS one, each case
 * through both, with a bystander and a clean kernel log (see
 * lib/pda_hostile_fixture.h).
 *
 * - rpl_mov, rpl_sigreturn, rpl_ptrace: the RPL 0, 1 and 2 forms (0xe8,
 *   0xe9, 0xea) against the TLS ones.  mov loads them into %ds/%es/%fs/%gs
 *   (and they read like 0xeb) but not %ss; sigreturn turns them into RPL 3;
 *   ptrace refuses them with EIO, and takes 0xeb in CS, where the
 *   kernel's IRET faults as far_transfer (x86_pda_hostile.c) expects.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "lib/pda_hostile_fixture.h"

/* The RPL @r form of the PDA or TLS selector. */
#define PDA_RPL(r)	((PH_SEL & ~3) | (r))
#define TLS_RPL(r)	((PH_TLS_SEL & ~3) | (r))

/* -------------------------------------------------------------- RPL: mov */

/*
 * Loads @sel into SEG, reads the selector back and the CPU slot through
 * it, then again after an int $0x80 getpid and after a __kernel_vsyscall
 * getpid; puts the old selector back.  Stores go through %ss, which the
 * probe leaves alone.
 */
#define RPL_PROBE(SEG, out, sel, entry)					\
	asm volatile("movw %%" SEG ", %%cx\n\t"				\
		     "movzwl %%cx, %%ecx\n\t"				\
		     "movl %%ecx, %%ss:24(%%esi)\n\t"			\
		     "movw %%dx, %%" SEG "\n\t"				\
		     "movw %%" SEG ", %%cx\n\t"				\
		     "movzwl %%cx, %%ecx\n\t"				\
		     "movl %%ecx, %%ss:0(%%esi)\n\t"			\
		     "movl %%" SEG ":(%%ebx), %%ecx\n\t"		\
		     "movl %%ecx, %%ss:4(%%esi)\n\t"			\
		     "movl $20, %%eax\n\t"				\
		     "int $0x80\n\t"					\
		     "movw %%" SEG ", %%cx\n\t"				\
		     "movzwl %%cx, %%ecx\n\t"				\
		     "movl %%ecx, %%ss:8(%%esi)\n\t"			\
		     "movl %%" SEG ":(%%ebx), %%ecx\n\t"		\
		     "movl %%ecx, %%ss:12(%%esi)\n\t"			\
		     "movl $20, %%eax\n\t"				\
		     "call *%%edi\n\t"					\
		     "movw %%" SEG ", %%cx\n\t"				\
		     "movzwl %%cx, %%ecx\n\t"				\
		     "movl %%ecx, %%ss:16(%%esi)\n\t"			\
		     "movl %%" SEG ":(%%ebx), %%ecx\n\t"		\
		     "movl %%ecx, %%ss:20(%%esi)\n\t"			\
		     "movl %%ss:24(%%esi), %%ecx\n\t"			\
		     "movw %%cx, %%" SEG "\n\t"				\
		     : : "S" (out), "b" (ph_table), "d" (sel), "D" (entry) \
		     : "eax", "ecx", "memory", "cc")

struct rpl_out {
	uint32_t sel1, read1, sel2, read2, sel3, read3, orig;
};

void ph_int80_stub(void);
asm(".text\n.globl ph_int80_stub\nph_int80_stub:\n\tint $0x80\n\tret\n");

enum { SEG_DS, SEG_ES, SEG_FS, SEG_GS, SEG_SS, SEG_NR };
static const char *const seg_name[] = { "ds", "es", "fs", "gs", "ss" };

struct rpl_arg {
	int kind, rpl, cpu;
};

static void rpl_mov_case(void *p)
{
	const struct rpl_arg *a = p;
	unsigned int sel = a->kind ? TLS_RPL(a->rpl) : PDA_RPL(a->rpl);
	uintptr_t entry = getauxval(AT_SYSINFO);
	static struct rpl_out out[SEG_NR];
	uint32_t s1, r1;
	int i;

	if (!entry)
		entry = (uintptr_t)ph_int80_stub;
	if (ph_pin(a->cpu) ||
	    ph_tls_set(PH_TLS_ENTRY, (uint32_t)a->cpu << PDA_USER_SHIFT) !=
	    PH_TLS_SEL)
		ph_raw_exit(30);
	RPL_PROBE("ds", &out[SEG_DS], sel, entry);
	RPL_PROBE("es", &out[SEG_ES], sel, entry);
	RPL_PROBE("fs", &out[SEG_FS], sel, entry);
	RPL_PROBE("gs", &out[SEG_GS], sel, entry);
	for (i = 0; i < 4; i++) {
		const uint32_t *o = &out[i].sel1;
		int j;

		for (j = 0; j < 6; j++)
			ph_res->v[i * 6 + j] = o[j];
	}
	ph_res->v[30] = 1;
	/* %ss wants RPL == CPL: only the RPL 3 form loads */
	s1 = sel;
	asm volatile("movw %%ss, %%cx\n\t"
		     "movw %%dx, %%ss\n\t"
		     "movw %%ss, %%dx\n\t"
		     "movl %%ss:(%%ebx), %%eax\n\t"
		     "movw %%cx, %%ss"
		     : "+d" (s1), "=a" (r1) : "b" (ph_table) : "ecx", "memory");
	ph_res->v[24] = s1 & 0xffff;
	ph_res->v[25] = r1;
	ph_res->v[31] = 1;
}

TEST_F_TIMEOUT(hostile, rpl_mov, 120)
{
	int cpu = self->last, r, k, i;

	for (r = 0; r < 4; r++) {
		struct ph_result res[2];

		for (k = 0; k < 2; k++) {
			struct rpl_arg a = { k, r, cpu };
			unsigned int sel = k ? TLS_RPL(r) : PDA_RPL(r);
			char label[64];

			snprintf(label, sizeof(label), "mov %#x (%s RPL %d)", sel,
				 kind_name[k], r);
			ph_run(rpl_mov_case, &a, 30, &res[k]);
			if (!res[k].v[30] || (r == 3) != !res[k].signo)
				LOG_RESULT(label, res[k]);
			EXPECT_EQ(1, res[k].v[30]);
			for (i = 0; i < 4; i++) {
				const volatile int32_t *o = &res[k].v[i * 6];
				/* see fast_loses_ds */
				int lost = i <= SEG_ES && self->fast_loses_ds;

				if (o[0] != sel || o[1] != cpu || o[2] != sel ||
				    o[3] != cpu ||
				    o[4] != (lost ? PH_USER_DS : sel) ||
				    o[5] != (lost ? 0 : cpu))
					TH_LOG("  %s: %#x reads %d; after int80 %#x reads %d; after vsyscall %#x reads %d",
					       seg_name[i], o[0], o[1], o[2], o[3],
					       o[4], o[5]);
				EXPECT_EQ(sel, o[0]);
				EXPECT_EQ(cpu, o[1]);
				EXPECT_EQ(sel, o[2]);
				EXPECT_EQ(cpu, o[3]);
				EXPECT_EQ(lost ? PH_USER_DS : sel, o[4]);
				EXPECT_EQ(lost ? 0 : cpu, o[5]);
			}
			if (r == 3) {
				EXPECT_EQ(0, res[k].status);
				EXPECT_EQ(1, res[k].v[31]);
				EXPECT_EQ(sel, res[k].v[24]);
				EXPECT_EQ(cpu, res[k].v[25]);
			} else {
				/* mov to %ss: #GP(selector) */
				EXPECT_EQ(PH_EXIT_SIGNALLED << 8, res[k].status);
				EXPECT_EQ(0, res[k].v[31]);
				EXPECT_EQ(SIGSEGV, res[k].signo);
				EXPECT_EQ(SI_KERNEL_CODE, res[k].code);
				EXPECT_EQ(TRAP_GP, res[k].trapno);
				EXPECT_EQ(sel & ~3u, res[k].err);
			}
			CHECK_WORLD(label);
		}
		EXPECT_SAME_FAULT(res[0], res[1]);
		for (i = 0; i < 24; i++)
			if (i % 6 != 0 && i % 6 != 2 && i % 6 != 4)
				EXPECT_EQ(res[0].v[i], res[1].v[i]);
	}
}

/* -------------------------------------------------------- RPL: sigreturn */

static volatile int sr_reg;
static volatile unsigned int sr_sel;

static void sr_handler(int sig, siginfo_t *si, void *ctx)
{
	((ucontext_t *)ctx)->uc_mcontext.gregs[sr_reg] = sr_sel;
}

/*
 * kill(pid, SIGUSR1) with int $0x80; the handler puts sr_sel in the
 * sigcontext; after sigreturn, read SEG and the CPU slot through it, then
 * put __USER_DS back in %ds, %es and %ss before the stack is touched.
 * __USER_DS comes in %esi, which the system call and sigreturn keep: no
 * memory can be read through the segments by then.
 */
#define SR_PROBE(SEG, pid, selp, readp) do {				\
	uint32_t __b = (pid), __c = SIGUSR1, __s, __r;			\
									\
	asm volatile("pushl %%ebp\n\t"					\
		     "movl %%esp, %%ebp\n\t"				\
		     "movl $37, %%eax\n\t"				\
		     "int $0x80\n\t"					\
		     "movw %%" SEG ", %%ax\n\t"				\
		     "movzwl %%ax, %%eax\n\t"				\
		     "movl %%" SEG ":(%%edi), %%edx\n\t"		\
		     "movw %%si, %%ds\n\t"				\
		     "movw %%si, %%es\n\t"				\
		     "movw %%si, %%ss\n\t"				\
		     "movl %%ebp, %%esp\n\t"				\
		     "popl %%ebp"					\
		     : "=a" (__s), "=d" (__r), "+b" (__b), "+c" (__c)	\
		     : "D" (ph_table), "S" (PH_USER_DS)			\
		     : "memory", "cc");					\
	ph_set_seg(gs, ph_glibc_gs);					\
	*(selp) = __s;							\
	*(readp) = __r;							\
} while (0)

struct sr_arg {
	int kind, rpl, cpu, seg;
};

static const int sr_greg[] = { REG_DS, REG_ES, REG_FS, REG_GS, REG_SS };

static void sr_case(void *p)
{
	const struct sr_arg *a = p;
	struct sigaction sa;
	uint32_t sel, rd;
	pid_t pid = getpid();

	if (ph_pin(a->cpu) ||
	    ph_tls_set(PH_TLS_ENTRY, (uint32_t)a->cpu << PDA_USER_SHIFT) !=
	    PH_TLS_SEL)
		ph_raw_exit(30);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = sr_handler;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGUSR1, &sa, NULL);
	sr_reg = sr_greg[a->seg];
	sr_sel = a->kind ? TLS_RPL(a->rpl) : PDA_RPL(a->rpl);
	ph_set_seg(fs, PH_USER_DS);	/* readable before the change */
	switch (a->seg) {
	case SEG_DS:
		SR_PROBE("ds", pid, &sel, &rd);
		break;
	case SEG_ES:
		SR_PROBE("es", pid, &sel, &rd);
		break;
	case SEG_FS:
		SR_PROBE("fs", pid, &sel, &rd);
		break;
	case SEG_GS:
		SR_PROBE("gs", pid, &sel, &rd);
		break;
	default:
		SR_PROBE("ss", pid, &sel, &rd);
		break;
	}
	ph_res->v[0] = sel;
	ph_res->v[1] = rd;
	ph_res->v[2] = 1;
}

TEST_F_TIMEOUT(hostile, rpl_sigreturn, 120)
{
	int cpu = self->last, r, k, seg;

	for (seg = 0; seg < SEG_NR; seg++) {
		for (r = 0; r < 4; r++) {
			struct ph_result res[2];

			for (k = 0; k < 2; k++) {
				struct sr_arg a = { k, r, cpu, seg };
				unsigned int sel = k ? TLS_RPL(r) : PDA_RPL(r);
				char label[64];

				snprintf(label, sizeof(label), "sc.%s = %#x (%s RPL %d)",
					 seg_name[seg], sel, kind_name[k], r);
				ph_run(sr_case, &a, 30, &res[k]);
				if (res[k].status || res[k].v[0] != (sel | 3) ||
				    res[k].v[1] != cpu) {
					LOG_RESULT(label, res[k]);
					TH_LOG("%s: %%%s %#x, reads %d", label,
					       seg_name[seg], res[k].v[0],
					       res[k].v[1]);
				}
				/* the kernel makes it RPL 3: fixup_rpl(), | 3 */
				EXPECT_EQ(0, res[k].status);
				EXPECT_EQ(1, res[k].v[2]);
				EXPECT_EQ(sel | 3, res[k].v[0]);
				EXPECT_EQ(cpu, res[k].v[1]);
			}
			EXPECT_SAME_FAULT(res[0], res[1]);
			EXPECT_EQ(res[0].v[1], res[1].v[1]);
		}
		CHECK_WORLD(seg_name[seg]);
	}
}

/* ----------------------------------------------------------- RPL: ptrace */

static const struct {
	const char *name;
	size_t off;
} pt_regs_seg[] = {
	{ "xds", offsetof(struct user_regs_struct, xds) },
	{ "xes", offsetof(struct user_regs_struct, xes) },
	{ "xfs", offsetof(struct user_regs_struct, xfs) },
	{ "xgs", offsetof(struct user_regs_struct, xgs) },
	{ "xss", offsetof(struct user_regs_struct, xss) },
	{ "xcs", offsetof(struct user_regs_struct, xcs) },
};

/* The tracee: stops, then reports %fs and the CPU it reads. */
static void pt_tracee(void *p)
{
	int cpu = *(int *)p;

	if (ph_pin(cpu) ||
	    ph_tls_set(PH_TLS_ENTRY, (uint32_t)cpu << PDA_USER_SHIFT) !=
	    PH_TLS_SEL)
		ph_raw_exit(30);
	if (ptrace(PTRACE_TRACEME, 0, 0, 0))
		ph_raw_exit(31);
	raise(SIGSTOP);
	ph_res->v[0] = ph_get_seg(fs);
	if (ph_res->v[0])
		ph_res->v[1] = ph_fs_read();
	ph_res->v[2] = 1;
}

static pid_t pt_start(int *cpu)
{
	int status;
	pid_t pid;

	memset(ph_res, 0, sizeof(*ph_res));
	pid = fork();
	if (pid == 0) {
		ph_catch_faults();
		pt_tracee(cpu);
		ph_res->done = 1;
		ph_raw_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid ||
	    !WIFSTOPPED(status) || WSTOPSIG(status) != SIGSTOP)
		return -1;
	return pid;
}

/* Resume the tracee, passing on the signals it stops for; its status. */
static int pt_finish(pid_t pid, int *stopsig)
{
	int status, sig = 0;

	*stopsig = 0;
	for (;;) {
		if (ptrace(PTRACE_CONT, pid, 0, (void *)(long)sig))
			return -1;
		if (ph_wait(pid, &status, 30))
			return -1;
		if (!WIFSTOPPED(status))
			return status;
		sig = WSTOPSIG(status);
		if (!*stopsig)
			*stopsig = sig;
	}
}

TEST_F_TIMEOUT(hostile, rpl_ptrace, 120)
{
	int cpu = self->last, r, k, reg, status, stopsig;
	struct user_regs_struct regs, back;
	pid_t pid;
	long v;

	pid = pt_start(&cpu);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, ptrace(PTRACE_GETREGS, pid, 0, &regs));

	for (reg = 0; reg < 6; reg++) {
		size_t off = pt_regs_seg[reg].off;
		long orig;

		errno = 0;
		orig = ptrace(PTRACE_PEEKUSER, pid, (void *)off, 0);
		ASSERT_EQ(0, errno);
		for (r = 0; r < 4; r++) {
			int rc[2], err[2];

			for (k = 0; k < 2; k++) {
				unsigned int sel = k ? TLS_RPL(r) : PDA_RPL(r);

				errno = 0;
				rc[k] = ptrace(PTRACE_POKEUSER, pid, (void *)off,
					       (void *)(long)sel);
				err[k] = errno;
				v = ptrace(PTRACE_PEEKUSER, pid, (void *)off, 0);
				if ((r == 3) != !rc[k])
					TH_LOG("POKEUSER %s = %#x (%s RPL %d): %d %s; reads back %#lx",
					       pt_regs_seg[reg].name, sel,
					       kind_name[k], r, rc[k],
					       rc[k] ? strerror(err[k]) : "",
					       v & 0xffff);
				if (r == 3) {
					/* RPL 3: accepted, even in CS and SS */
					EXPECT_EQ(0, rc[k]);
					EXPECT_EQ(sel, v & 0xffff);
				} else {
					EXPECT_EQ(-1, rc[k]);
					EXPECT_EQ(EIO, err[k]);
					EXPECT_EQ(orig & 0xffff, v & 0xffff);
				}
				ASSERT_EQ(0, ptrace(PTRACE_POKEUSER, pid,
						    (void *)off, (void *)orig));
			}
			EXPECT_EQ(rc[0], rc[1]);
			EXPECT_EQ(err[0], err[1]);
		}
	}

	TH_LOG("POKEUSER of ds/es/fs/gs/ss/cs: RPL 3 forms taken, RPL 0-2 refused");

	/* SETREGS with an RPL 0-2 %fs: refused as a whole */
	for (r = 0; r < 4; r++) {
		for (k = 0; k < 2; k++) {
			unsigned int sel = k ? TLS_RPL(r) : PDA_RPL(r);
			struct user_regs_struct w = regs;
			int rc, err;

			w.xfs = sel;
			errno = 0;
			rc = ptrace(PTRACE_SETREGS, pid, 0, &w);
			err = errno;
			ASSERT_EQ(0, ptrace(PTRACE_GETREGS, pid, 0, &back));
			if ((r == 3) != !rc)
				TH_LOG("SETREGS xfs = %#x (%s RPL %d): %d %s; xfs now %#lx",
				       sel, kind_name[k], r, rc,
				       rc ? strerror(err) : "", back.xfs & 0xffff);
			if (r == 3) {
				EXPECT_EQ(0, rc);
				EXPECT_EQ(sel, back.xfs & 0xffff);
			} else {
				EXPECT_EQ(-1, rc);
				EXPECT_EQ(EIO, err);
				EXPECT_EQ(regs.xfs & 0xffff, back.xfs & 0xffff);
			}
			ASSERT_EQ(0, ptrace(PTRACE_SETREGS, pid, 0, &regs));
		}
	}

	/* The tracee runs on with the 0xeb the tracer gave it. */
	ASSERT_EQ(0, ptrace(PTRACE_POKEUSER, pid,
			    (void *)offsetof(struct user_regs_struct, xfs),
			    (void *)PH_SEL));
	status = pt_finish(pid, &stopsig);
	EXPECT_EQ(0, status);
	EXPECT_EQ(1, ph_res->v[2]);
	EXPECT_EQ(PH_SEL, ph_res->v[0]);
	EXPECT_EQ(cpu, ph_res->v[1]);
	CHECK_WORLD("ptrace RPL forms");

	/*
	 * CS = 0xeb (RPL 3, so ptrace takes it): the kernel's IRET faults,
	 * reported as in far_transfer of x86_pda_hostile.c (expect_bad_iret()).
	 */
	for (k = 0; k < 2; k++) {
		unsigned int sel = k ? PH_TLS_SEL : PH_SEL;
		struct ph_result res;
		char label[64];

		pid = pt_start(&cpu);
		ASSERT_LT(0, pid);
		ASSERT_EQ(0, ptrace(PTRACE_POKEUSER, pid,
				    (void *)offsetof(struct user_regs_struct, xcs),
				    (void *)(long)sel));
		status = pt_finish(pid, &stopsig);
		res = *ph_res;
		res.status = status;
		snprintf(label, sizeof(label), "ptrace cs = %#x (%s)", sel,
			 kind_name[k]);
		LOG_RESULT(label, res);
		/* the tracer saw the signal the fault raised */
		EXPECT_EQ(res.signo, stopsig);
		EXPECT_EQ(PH_EXIT_SIGNALLED << 8, status);
		expect_bad_iret(_metadata, &res, sel);
		CHECK_WORLD(label);
	}
}

TEST_HARNESS_MAIN
