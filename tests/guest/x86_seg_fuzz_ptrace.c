// SPDX-License-Identifier: GPL-2.0
/*
 * Segment selectors a tracer writes, against the model of lib/seg_fuzz.h,
 * which also says how the seed, the checksum and the bystander work.
 *
 * ptrace_setregs: a tracee spinning in "1: jmp 1b" gets random selectors
 * through SETREGS and POKEUSER.  A non-null selector with RPL != 3 is EIO
 * (invalid_selector()); SETREGS writes the registers in their order and
 * stops at the first refused one, so the ones before it stick.  CS and SS
 * also refuse 0.  After a single step each data register holds its
 * selector if loadable, else 0, and every other register is what the
 * tracer wrote.
 */
#define _GNU_SOURCE
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>

#include "kselftest_harness.h"

#include "lib/seg_fuzz.h"

/* struct user_regs_struct as an array, in its order. */
enum {
	U_EBX, U_ECX, U_EDX, U_ESI, U_EDI, U_EBP, U_EAX, U_DS, U_ES, U_FS,
	U_GS, U_ORIG_EAX, U_EIP, U_CS, U_EFL, U_ESP, U_SS, U_NR
};

_Static_assert(sizeof(struct user_regs_struct) == U_NR * sizeof(long),
	       "user_regs_struct layout");

static const char *const u_name[U_NR] = {
	"ebx", "ecx", "edx", "esi", "edi", "ebp", "eax", "ds", "es", "fs",
	"gs", "orig_eax", "eip", "cs", "eflags", "esp", "ss",
};

union uregs {
	struct user_regs_struct s;
	long r[U_NR];
};

static int u_is_seg(int f)
{
	return (f >= U_DS && f <= U_GS) || f == U_CS || f == U_SS;
}

/* The model register of a data segment field. */
static int u_reg(int f)
{
	return f - U_DS;	/* U_DS..U_GS are R_DS..R_GS */
}

/* arch/x86/kernel/ptrace.c: set_segment_reg() refuses these. */
static int pt_refused(int f, unsigned long v)
{
	unsigned int s = v & 0xffff;

	if (s && (s & 3) != 3)
		return 1;		/* invalid_selector() */
	return (f == U_CS || f == U_SS) && !s;
}

void pt_spin(volatile int *flag);
extern char pt_spin_loop[];
asm(".text\n"
	".globl pt_spin\n"
	"pt_spin:\n\t"
	"movl 4(%esp), %eax\n\t"
	"movl $1, (%eax)\n"
	".globl pt_spin_loop\n"
	"pt_spin_loop:\n\t"
	"jmp pt_spin_loop\n");

enum {
	PK_SETREGS_OK, PK_SETREGS_EIO, PK_POKE_OK, PK_POKE_EIO, PK_LOADED,
	PK_ZEROED, PK_NULL, PK_CS_SS_OK, PK_CS_SS_EIO, PK_NR
};

static const char *const pt_kind[] = {
	"SETREGS ok", "SETREGS EIO (partial)", "POKEUSER ok", "POKEUSER EIO",
	"loaded", "invalid -> 0", "null", "POKEUSER cs/ss ok",
	"POKEUSER cs/ss EIO",
};

/* Single-step the tracee: 0 if it stopped again with SIGTRAP. */
static int pt_step(pid_t pid, int *status)
{
	if (ptrace(PTRACE_SINGLESTEP, pid, 0, 0))
		return -1;
	if (waitpid(pid, status, __WALL) != pid)
		return -1;
	return WIFSTOPPED(*status) && WSTOPSIG(*status) == SIGTRAP ? 0 : -1;
}

/*
 * After a step from @w (what the tracee's registers were set to): every
 * register as written, the data segments as the exit path loads them.
 */
static int pt_check_step(uint32_t op, const char *what, const union uregs *w,
			 const union uregs *got)
{
	int f, bad = 0;

	for (f = 0; f < U_NR; f++) {
		unsigned long want = w->r[f];

		if (f >= U_DS && f <= U_GS)
			want = after_iret(u_reg(f),
					  kernel_load(w->r[f] & 0xffff));
		else if (f == U_ORIG_EAX)
			want = -1;	/* the step's #DB */
		else if (f == U_EIP)
			want = (unsigned long)(uintptr_t)pt_spin_loop;
		if ((unsigned long)got->r[f] == want)
			continue;
		note(op, "%s: after the step %s = %#lx, model %#lx (set %#lx)",
		     what, u_name[f], (unsigned long)got->r[f], want,
		     (unsigned long)w->r[f]);
		bad = 1;
	}
	return bad;
}

static void pt_count_segs(const union uregs *w, const union uregs *base)
{
	int f;

	for (f = U_DS; f <= U_GS; f++) {
		unsigned int s = w->r[f] & 0xffff;

		if (w->r[f] == base->r[f])
			continue;
		if (is_null(s))
			out->kinds[PK_NULL]++;
		else
			out->kinds[kernel_load(s) ? PK_LOADED : PK_ZEROED]++;
	}
}

TEST_F_TIMEOUT(fz, ptrace_setregs, 290)
{
	uint32_t rnd = sub_seed("ptrace_setregs"), h = 2166136261u;
	long n = fz_iterations(6000), i;
	union uregs base, w, got;
	double t0 = ph_now(), end;
	struct ph_cpus cpus;
	cpu_set_t set;
	int status;
	pid_t pid;

	TH_LOG("seed %lu (SEED=%lu replays it), %ld SETREGS/POKEUSER",
	       fz_seed, fz_seed, n);
	/* the tracee inherits this LDT and these TLS entries */
	ASSERT_EQ(0, fixed_install());
	/*
	 * Tracer and tracee share a CPU, which moves round all of them: a
	 * step is then a switch, not a cross-CPU wakeup (ten times faster
	 * under TCG), and the tracee still runs on every CPU's GDT.
	 */
	ASSERT_EQ(0, ph_cpus_online(&cpus));
	ASSERT_EQ(0, ph_pin(cpus.id[0]));
	out->spin_flag = 0;
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* it spins for ever: it must not outlive a failed tracer */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) ||
		    ptrace(PTRACE_TRACEME, 0, 0, 0))
			ph_raw_exit(30);
		pt_spin(&out->spin_flag);
	}
	end = ph_now() + 60;
	while (!out->spin_flag && ph_now() < end)
		sched_yield();
	ASSERT_EQ(1, out->spin_flag);
	ASSERT_EQ(0, kill(pid, SIGSTOP));
	ASSERT_EQ(pid, waitpid(pid, &status, __WALL));
	ASSERT_TRUE(WIFSTOPPED(status) && WSTOPSIG(status) == SIGSTOP);
	/* one step first, so that orig_eax is the step's -1 from now on */
	ASSERT_EQ(0, pt_step(pid, &status));
	ASSERT_EQ(0, ptrace(PTRACE_GETREGS, pid, 0, &base.s));
	ASSERT_EQ((long)(uintptr_t)pt_spin_loop, base.r[U_EIP]);
	ASSERT_EQ(-1, base.r[U_ORIG_EAX]);

	for (i = 0; i < n; i++) {
		uint32_t r = xorshift32(&rnd);
		int f, refused = -1, rc, err, bad = 0;
		long peek;

		out->progress = i;
		if (i % 512 == 511) {
			int cpu = cpus.id[(i / 512) % cpus.n];

			CPU_ZERO(&set);
			CPU_SET(cpu, &set);
			ASSERT_EQ(0, sched_setaffinity(pid, sizeof(set), &set));
			ASSERT_EQ(0, ph_pin(cpu));
		}
		w = base;
		if (r % 4 < 2) {
			/*
			 * SETREGS: random GP registers and data selectors;
			 * half the time all of them RPL 3, so that it works.
			 */
			for (f = U_EBX; f <= U_EAX; f++)
				w.r[f] = xorshift32(&rnd);
			for (f = U_DS; f <= U_GS; f++) {
				uint32_t q = xorshift32(&rnd);

				if (q % 4 == 0)
					continue;
				w.r[f] = q % 8 == 1 ? (q >> 8) & 3 :
					 draw_sel(&rnd, FIXED_LDT_N);
				if ((r >> 8) % 2)
					w.r[f] |= 3;
				if ((q >> 12) % 8 == 0)
					w.r[f] |= xorshift32(&rnd) & 0xffff0000u;
			}
			/* genregs_set() stops at the first refused one */
			for (f = 0; f < U_NR && refused < 0; f++)
				if (u_is_seg(f) && pt_refused(f, w.r[f]))
					refused = f;
			mix(&h, (uint32_t)i);
			for (f = U_EBX; f <= U_GS; f++)
				mix(&h, w.r[f]);
			mix(&h, refused);

			errno = 0;
			rc = ptrace(PTRACE_SETREGS, pid, 0, &w.s);
			err = errno;
			out->iters++;
			if (refused >= 0 ? rc != -1 || err != EIO : rc != 0) {
				note(i, "SETREGS ds %#lx es %#lx fs %#lx gs %#lx: model %s, got %d errno %d",
				     w.r[U_DS], w.r[U_ES], w.r[U_FS], w.r[U_GS],
				     refused >= 0 ? "EIO" : "0", rc, err);
				goto restore;
			}
			/* what stuck: the fields before the refused one */
			for (f = 0; f < U_NR; f++) {
				if (refused >= 0 && f >= refused)
					w.r[f] = base.r[f];
				else if (u_is_seg(f))
					w.r[f] &= 0xffff;
			}
			out->kinds[refused >= 0 ? PK_SETREGS_EIO :
				   PK_SETREGS_OK]++;
		} else {
			/* POKEUSER one segment register, or CS or SS */
			static const int pf[] = { U_DS, U_ES, U_FS, U_GS };
			unsigned long v;

			f = r % 4 == 2 ? pf[(r >> 2) % 4] :
			    (r >> 2) % 2 ? U_CS : U_SS;
			v = draw_sel(&rnd, FIXED_LDT_N);
			if ((r >> 8) % 4 == 0)
				v |= xorshift32(&rnd) & 0xffff0000u;
			refused = pt_refused(f, v);
			mix(&h, (uint32_t)i);
			mix(&h, f << 20 | refused);
			mix(&h, v);

			errno = 0;
			rc = ptrace(PTRACE_POKEUSER, pid,
				    (void *)(f * sizeof(long)), (void *)v);
			err = errno;
			errno = 0;
			peek = ptrace(PTRACE_PEEKUSER, pid,
				      (void *)(f * sizeof(long)), 0);
			out->iters++;
			if ((refused ? rc != -1 || err != EIO : rc != 0) ||
			    errno ||
			    peek != (refused ? base.r[f] : (long)(v & 0xffff))) {
				note(i, "POKEUSER %s = %#lx: model %s, got %d errno %d; PEEKUSER %#lx",
				     u_name[f], v, refused ? "EIO" : "0", rc,
				     err, peek);
				goto restore;
			}
			if (f == U_CS || f == U_SS) {
				out->kinds[refused ? PK_CS_SS_EIO :
					   PK_CS_SS_OK]++;
				goto restore;	/* IRET may refuse them: not run */
			}
			out->kinds[refused ? PK_POKE_EIO : PK_POKE_OK]++;
			if (refused)
				goto restore;
			w.r[f] = v & 0xffff;
		}

		/* the registers now, then after a step through the exit path */
		ASSERT_EQ(0, ptrace(PTRACE_GETREGS, pid, 0, &got.s));
		for (f = 0; f < U_NR; f++) {
			if (got.r[f] == w.r[f])
				continue;
			note(i, "before the step %s = %#lx, wrote %#lx",
			     u_name[f], got.r[f], w.r[f]);
			bad = 1;
		}
		if (pt_step(pid, &status)) {
			note(i, "single step: status %#x", status);
			ASSERT_TRUE(WIFSTOPPED(status));
			goto restore;
		}
		ASSERT_EQ(0, ptrace(PTRACE_GETREGS, pid, 0, &got.s));
		bad |= pt_check_step(i, r % 4 < 2 ? "SETREGS" : "POKEUSER", &w,
				     &got);
		if (!bad)
			pt_count_segs(&w, &base);
restore:
		ASSERT_EQ(0, ptrace(PTRACE_SETREGS, pid, 0, &base.s));
	}
	out->checksum = h;
	kill(pid, SIGKILL);
	waitpid(pid, &status, __WALL);
	report(_metadata, "ptrace_setregs", pt_kind, PK_NR,
	       (1u << PK_NR) - 1, ph_now() - t0);
	CHECK_WORLD("ptrace_setregs");
}

TEST_HARNESS_MAIN
