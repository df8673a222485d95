// SPDX-License-Identifier: GPL-2.0
/*
 * Segment selectors put in a sigcontext, against the model of
 * lib/seg_fuzz.h, which also says how the seed, the checksum and the
 * bystander work.
 *
 * sigreturn_selectors: a SIGUSR1 handler writes random selectors into
 * sc.gs/fs/es/ds and sometimes sc.cs/ss and points sc.ip at a ud2.  The
 * kernel (ia32_restore_sigcontext()) keeps 16 bits, forces RPL 3 on
 * non-null data selectors and on CS and SS; what does not load becomes 0;
 * an IRET that cannot take CS or SS is SIGILL ILL_BADSTK, trapno 32 on
 * i386, the IRET's own fault on x86-64 (model_iret_fault()).  The SIGILL
 * (SIGSEGV, SIGBUS) handler records the selectors the CPU really had and
 * puts the original context back.
 */
#define _GNU_SOURCE

#include "kselftest_harness.h"

#include "lib/seg_fuzz.h"

/* ia32_restore_sigcontext(): non-null data selectors get RPL 3. */
static unsigned int fixup_rpl(unsigned int sel)
{
	return sel <= 3 ? sel : sel | 3;
}

/*
 * The CS values IRET may take here, all flat 32-bit code: anything else
 * is redrawn (the 64-bit __USER_CS too: the ud2 would run in long mode).
 */
static int flat_cs(unsigned int cs)
{
	return cs == USER_CS || cs == LDT_SEL(2) || cs == LDT_SEL(3);
}

enum { SR_GS, SR_FS, SR_ES, SR_DS, SR_CS, SR_SS, SR_NR };

static const char *const sr_name[] = { "gs", "fs", "es", "ds", "cs", "ss" };
static const int sr_greg[SR_NR] = {
	REG_GS, REG_FS, REG_ES, REG_DS, REG_CS, REG_SS
};

static const int sr_reg[4] = { R_GS, R_FS, R_ES, R_DS };

static volatile struct {
	uint32_t v[SR_NR];	/* values for the sigcontext ... */
	int set[SR_NR];		/* ... of these registers */
} sr_plan;

static gregset_t sr_saved;

static volatile struct {
	int n, sig, code;
	uint32_t trapno, err, ip, seg[SR_NR];
} sr_seen;

/* A signal that ends a sigreturn: what it is, as siginfo and sigcontext say. */
struct sr_sig {
	int sig, code;
	uint32_t trapno, err;
};

/* The IRET took CS and SS: the ud2 ran. */
static const struct sr_sig sr_ud2_sig = { SIGILL, ILL_ILLOPN, TRAP_UD, 0 };

/*
 * The IRET to user mode could not take @cs or @ss (both RPL 3).  An i386
 * kernel turns any fault there into SIGILL ILL_BADSTK with trapno 32
 * (iret_error()).  A 64-bit kernel makes it the fault of the IRET target
 * (fixup_bad_iret()), SI_KERNEL: the CPU checks CS, then SS, as for a
 * mov (#GP with the selector, #NP if only P is missing; a null one #GP
 * with 0), except that an LDT SS sends IRET through the read-only espfix64
 * stack, where the fault becomes a double fault that exc_double_fault()
 * reports as #GP(0) (cf. sigreturn_64 in the x86 selftests).
 */
static struct sr_sig model_iret_fault(unsigned int cs, unsigned int ss)
{
	uint32_t ar;

	if (!gdt.kernel64)
		return (struct sr_sig){ SIGILL, ILL_BADSTK, TRAP_IRET, 0 };
	if (ss & 4)
		return (struct sr_sig){ SIGSEGV, SI_KERNEL_CODE, TRAP_GP, 0 };
	if (!model_iret_cs(cs)) {
		if (!is_null(cs) && seg_lar(cs, &ar) && (ar & AR_S) &&
		    (ar & AR_CODE))
			return (struct sr_sig){ SIGBUS, SI_KERNEL_CODE, TRAP_NP,
						mv_err(cs) };
		return (struct sr_sig){ SIGSEGV, SI_KERNEL_CODE, TRAP_GP,
					mv_err(cs) };
	}
	if (is_null(ss) || !seg_verw(ss) || !seg_lar(ss, &ar))
		return (struct sr_sig){ SIGSEGV, SI_KERNEL_CODE, TRAP_GP,
					mv_err(ss) };
	return (struct sr_sig){ SIGBUS, SI_KERNEL_CODE, TRAP_SS, mv_err(ss) };
}

void sr_ud2(void);
asm(".text\n.globl sr_ud2\nsr_ud2:\n\tud2\n");

/* SIGUSR1: keep the context, plant the selectors, return to the ud2. */
static void NOSP sr_usr1(int sig, siginfo_t *si, void *ctx)
{
	greg_t *g = ((ucontext_t *)ctx)->uc_mcontext.gregs;
	int k;

	for (k = 0; k < NGREG; k++)
		sr_saved[k] = g[k];
	for (k = 0; k < SR_NR; k++)
		if (sr_plan.set[k])
			g[sr_greg[k]] = sr_plan.v[k];
	g[REG_EIP] = (greg_t)(uintptr_t)sr_ud2;
}

/*
 * SIGILL, SIGSEGV or SIGBUS at the ud2: from the ud2, or from the kernel's
 * IRET to it.  Note what the CPU had, then return to where SIGUSR1 came in,
 * as if nothing had happened.  The FPU state is left to this frame's own
 * fpstate.  A fault anywhere else is a real one.
 */
static void NOSP sr_ill(int sig, siginfo_t *si, void *ctx)
{
	greg_t *g = ((ucontext_t *)ctx)->uc_mcontext.gregs;
	int k;

	if ((uint32_t)g[REG_EIP] != (uint32_t)(uintptr_t)sr_ud2) {
		ph_fatal(sig, si, ctx);
		return;
	}
	ph_set_seg(gs, ph_glibc_gs);
	sr_seen.n++;
	sr_seen.sig = sig;
	sr_seen.code = si->si_code;
	sr_seen.trapno = g[REG_TRAPNO];
	sr_seen.err = g[REG_ERR];
	sr_seen.ip = g[REG_EIP];
	for (k = 0; k < SR_NR; k++)
		sr_seen.seg[k] = g[sr_greg[k]] & 0xffff;
	for (k = 0; k < NGREG; k++)
		g[k] = sr_saved[k];
}

enum {
	SK_UD2, SK_IRET_FAULT, SK_LOADED, SK_RPL_FIXED, SK_ZEROED,
	SK_NULL_KEPT, SK_NULL_ZEROED, SK_CS_LDT, SK_SS_LDT, SK_SS_GDT_ODD,
	SK_UPPER_BITS, SK_IRET_GP0, SK_IRET_GP, SK_IRET_NP, SK_NR
};

/* The IRET faults only an x86-64 kernel tells apart. */
#define SK_IRET_64	(1u << SK_IRET_GP0 | 1u << SK_IRET_GP | 1u << SK_IRET_NP)

static const char *const sr_kind[] = {
	"ud2 reached", "IRET faulted", "loaded", "RPL forced to 3",
	"invalid -> 0", "null kept", "null zeroed by IRET", "ud2 on LDT CS",
	"ud2 on LDT SS (espfix)", "ud2 on other GDT SS", "upper bits ignored",
	"IRET #GP(0) (x86-64)", "IRET #GP(selector) (x86-64)",
	"IRET #NP(CS) (x86-64)",
};

static unsigned int draw_cs(uint32_t *rnd)
{
	const uint16_t cs[] = {
		USER_CS, LDT_SEL(2), LDT_SEL(3), LDT_SEL(5), LDT_SEL(8),
		USER_DS, LDT_SEL(0), CPUNODE, PH_SEL, gdt.k->kernel_cs, 0,
	};
	uint32_t r = xorshift32(rnd);

	if (r % 4 == 0)
		return draw_sel(rnd, FIXED_LDT_N);
	return (cs[(r >> 8) % ARRAY_LEN(cs)] & ~3u) | ((r >> 4) & 3);
}

static unsigned int draw_ss(uint32_t *rnd)
{
	const uint16_t ss[] = {
		USER_DS, PH_SEL, LDT_SEL(0), LDT_SEL(6), LDT_SEL(7),
		LDT_SEL(FIXED_LDT_BASED), TLS_SEL(TLS_MIN + 1),
		TLS_SEL(TLS_MIN + 2), LDT_SEL(1), LDT_SEL(4), CPUNODE, USER_CS,
		gdt.k->kernel_ss[0], gdt.k->kernel_ss[1], 0,
	};
	uint32_t r = xorshift32(rnd);

	if (r % 4 == 0)
		return draw_sel(rnd, FIXED_LDT_N);
	return (ss[(r >> 8) % ARRAY_LEN(ss)] & ~3u) | ((r >> 4) & 3);
}

static void sr_case(void *p)
{
	const struct fz_arg *a = p;
	uint32_t rnd = a->seed, h = 2166136261u, orig[SR_NR];
	long pid = getpid(), tid = syscall(SYS_gettid), i;
	struct sigaction sa;
	int k;

	if (fixed_install())
		ph_raw_exit(30);
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_sigaction = sr_usr1;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGUSR1, &sa, NULL);
	/*
	 * on the alternate stack: SS may be anything when it comes; SIGSEGV
	 * and SIGBUS are how a 64-bit kernel reports a failed IRET
	 */
	sa.sa_sigaction = sr_ill;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigaction(SIGILL, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	orig[SR_GS] = ph_get_seg(gs);
	orig[SR_FS] = ph_get_seg(fs);
	orig[SR_ES] = ph_get_seg(es);
	orig[SR_DS] = ph_get_seg(ds);
	orig[SR_CS] = ph_get_seg(cs);
	orig[SR_SS] = ph_get_seg(ss);

	for (i = 0; i < a->n; i++) {
		uint32_t r = xorshift32(&rnd), want[SR_NR], upper = 0;
		struct sr_sig ws;
		int iret_ok, bad = 0;

		out->progress = i;
		for (k = 0; k < SR_NR; k++) {
			uint32_t v;

			/* data registers 3/4 of the time, CS and SS 1/4 */
			sr_plan.set[k] = k < SR_CS ? (r >> (2 * k)) % 4 != 0 :
						   (r >> (2 * k)) % 4 == 0;
			if (!sr_plan.set[k]) {
				want[k] = orig[k];
				continue;
			}
			v = k == SR_CS ? draw_cs(&rnd) :
			    k == SR_SS ? draw_ss(&rnd) : draw_sel(&rnd, FIXED_LDT_N);
			if (k == SR_CS && model_iret_cs(v | 3) && !flat_cs(v | 3))
				v = USER_CS;
			/* __gsh and friends: the kernel reads 16 bits */
			if ((r >> 20) % 4 == 0) {
				v |= xorshift32(&rnd) & 0xffff0000u;
				upper |= v >> 16;
			}
			sr_plan.v[k] = v;
			v &= 0xffff;
			want[k] = k >= SR_CS ? v | 3 : fixup_rpl(v);
		}
		iret_ok = model_iret_cs(want[SR_CS]) && model_iret_ss(want[SR_SS]);
		ws = iret_ok ? sr_ud2_sig :
		     model_iret_fault(want[SR_CS], want[SR_SS]);
		for (k = 0; k < SR_CS; k++) {
			want[k] = kernel_load(want[k]);
			if (iret_ok)
				want[k] = after_iret(sr_reg[k], want[k]);
		}
		mix(&h, (uint32_t)i);
		for (k = 0; k < SR_NR; k++)
			mix(&h, sr_plan.set[k] ? sr_plan.v[k] : 0xffffffffu);
		mix(&h, iret_ok);

		sr_seen.n = 0;
		ph_int80(SYS_tgkill, pid, tid, SIGUSR1);
		out->iters++;

		if (sr_seen.n != 1 || sr_seen.sig != ws.sig ||
		    sr_seen.code != ws.code || sr_seen.trapno != ws.trapno ||
		    sr_seen.err != ws.err ||
		    sr_seen.ip != (uint32_t)(uintptr_t)sr_ud2) {
			note(i, "sigreturn cs %#x ss %#x: model %s (signal %d code %d trapno %u err %#x), got %d signal(s), the last %d code %d trapno %u err %#x ip %#x",
			     want[SR_CS], want[SR_SS],
			     iret_ok ? "ud2" : "IRET fault", ws.sig, ws.code,
			     ws.trapno, ws.err, sr_seen.n, sr_seen.sig,
			     sr_seen.code, sr_seen.trapno, sr_seen.err,
			     sr_seen.ip);
			continue;
		}
		for (k = 0; k < SR_NR; k++) {
			if (sr_seen.seg[k] == want[k])
				continue;
			note(i, "sigreturn sc.%s = %#x (%s): model %#x, CPU had %#x",
			     sr_name[k], sr_plan.v[k],
			     sr_plan.set[k] ? "set" : "kept", want[k],
			     sr_seen.seg[k]);
			bad = 1;
		}
		if (bad)
			continue;
		out->kinds[iret_ok ? SK_UD2 : SK_IRET_FAULT]++;
		for (k = 0; k < SR_CS; k++) {
			uint32_t v = sr_plan.v[k] & 0xffff;

			if (!sr_plan.set[k])
				continue;
			if (v >= 1 && v <= 3)
				out->kinds[want[k] ? SK_NULL_KEPT :
					   SK_NULL_ZEROED]++;
			else if (!want[k] && v)
				out->kinds[SK_ZEROED]++;
			else if (v && want[k] != v)
				out->kinds[SK_RPL_FIXED]++;
			else if (v)
				out->kinds[SK_LOADED]++;
		}
		if (iret_ok && (want[SR_CS] & 4))
			out->kinds[SK_CS_LDT]++;
		if (iret_ok && (want[SR_SS] & 4))
			out->kinds[SK_SS_LDT]++;
		if (iret_ok && !(want[SR_SS] & 4) && want[SR_SS] != USER_DS)
			out->kinds[SK_SS_GDT_ODD]++;
		if (upper)
			out->kinds[SK_UPPER_BITS]++;
		if (!iret_ok && gdt.kernel64)
			out->kinds[ws.trapno == TRAP_NP ? SK_IRET_NP :
				   ws.err ? SK_IRET_GP : SK_IRET_GP0]++;
	}
	out->checksum = h;
}

TEST_F_TIMEOUT(fz, sigreturn_selectors, 290)
{
	struct fz_arg a = {
		sub_seed("sigreturn_selectors"), fz_iterations(16000),
	};
	uint32_t required = (1u << SK_NR) - 1;
	struct ph_result res;
	double t0 = ph_now();

	TH_LOG("seed %lu (SEED=%lu replays it), %ld sigreturns",
	       fz_seed, fz_seed, a.n);
	ph_run(sr_case, &a, 250, &res);
	EXPECT_CHILD_DONE(res);
	if (null_kept[R_DS] && null_kept[R_ES] && null_kept[R_FS] &&
	    null_kept[R_GS])
		required &= ~(1u << SK_NULL_ZEROED);
	if (!gdt.kernel64)
		required &= ~SK_IRET_64;
	report(_metadata, "sigreturn_selectors", sr_kind, SK_NR, required,
	       ph_now() - t0);
	CHECK_WORLD("sigreturn_selectors");
}

TEST_HARNESS_MAIN
