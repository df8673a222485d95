// SPDX-License-Identifier: GPL-2.0
/*
 * Segment selectors loaded by mov, against the model of lib/seg_fuzz.h,
 * which also says how the seed, the checksum and the bystander work.
 *
 * mov_selectors: mov of a random selector into %ds, %es, %fs, %gs or %ss,
 * read back and restored in the same asm block; sometimes with an int
 * $0x80 in between, so that the kernel's exit path must give the selector
 * back.  A fault is SIGSEGV (#GP, trapno 13) or SIGBUS (#NP 11, #SS 12)
 * with the selector as error code, exactly as modelled.
 */
#define _GNU_SOURCE

#include "kselftest_harness.h"

#include "lib/seg_fuzz.h"

static const char *const mv_name[] = { "ok", "#GP", "#NP", "#SS" };

static const char *const reg_name[] = { "ds", "es", "fs", "gs", "ss" };

enum {
	MK_NULL, MK_NULL_ZEROED, MK_LOADED, MK_GP, MK_NP, MK_SS_OK, MK_SS_GP,
	MK_SS_SS, MK_VIA_SYSCALL, MK_NR
};

static const char *const mov_kind[] = {
	"null", "null zeroed by IRET", "loaded", "#GP", "#NP", "ss loaded",
	"ss #GP", "ss #SS", "through int $0x80",
};

/* A descriptor of a random kind, base and limit in LDT or TLS entry @e. */
static long put_random_desc(uint32_t *rnd, int e, int tls)
{
	uint32_t r = xorshift32(rnd);
	enum dkind k = tls ? tls_kinds[r % ARRAY_LEN(tls_kinds)] : r % DK_NR;
	struct user_desc d = dk_info(k, e, xorshift32(rnd));

	/* another limit; the empty form stays empty */
	if (((r >> 8) & 1) && k != DK_CLEAR) {
		d.limit = xorshift32(rnd) & 0xfffff;
		d.limit_in_pages = (r >> 9) & 1;
	}
	return tls ? tls_write(&d) : ldt_write(&d);
}

static void mov_case(void *p)
{
	const struct fz_arg *a = p;
	struct skip_rec *rec = &skip_recs[0];
	uint32_t rnd = a->seed, h = 2166136261u;
	int ldt_n = DK_NR + 2, e;
	long i;

	for (e = 0; e < ldt_n; e++) {
		struct user_desc d = dk_info(e < DK_NR ? e : DK_RW, e,
					     xorshift32(&rnd));

		if (ldt_write(&d))
			ph_raw_exit(30);
	}
	for (e = TLS_MIN + 1; e <= (int)TLS_MIN + 2; e++)
		if (put_random_desc(&rnd, e, 1))
			ph_raw_exit(31);
	skip_install();

	for (i = 0; i < a->n; i++) {
		uint32_t r = xorshift32(&rnd), val, want_err = 0, trap = 0;
		int reg = r % 9 == 8 ? R_SS : (r % 9) / 2, sys = !(r & 0x70);
		unsigned int sel, want_val;
		enum mv want;
		int sig = 0;

		out->progress = i;
		/* %ss: half the time an LDT entry, of whatever kind it has */
		if (reg == R_SS && (r >> 12) & 1)
			sel = LDT_SEL(xorshift32(&rnd) % ldt_n);
		else
			sel = draw_sel(&rnd, ldt_n);
		want_val = sel;
		/* now and then, other descriptors under the same selectors */
		if (i % 256 == 255) {
			e = xorshift32(&rnd) % (ldt_n + 1);
			if (put_random_desc(&rnd, e, 0) ||
			    put_random_desc(&rnd, TLS_MIN + 1 + (r >> 8) % 2, 1))
				note(i, "rewriting LDT %d / TLS failed", e);
			if (e == ldt_n)
				ldt_n++;
		}

		want = reg == R_SS ? model_ss_load(sel) : model_data_load(sel);
		switch (want) {
		case MV_GP:
			sig = SIGSEGV;
			trap = TRAP_GP;
			break;
		case MV_NP:
			sig = SIGBUS;
			trap = TRAP_NP;
			break;
		case MV_SS:
			sig = SIGBUS;
			trap = TRAP_SS;
			break;
		default:
			break;
		}
		if (sig)
			want_err = mv_err(sel);
		else if (sys)
			want_val = after_iret(reg, sel);
		mix(&h, (uint32_t)i);
		mix(&h, reg << 24 | sys << 20 | sel);
		mix(&h, want);

		val = probe_mov(reg, sel, sys, rec);
		out->iters++;
		if (sig != rec->sig ||
		    (sig && (rec->code != SI_KERNEL_CODE ||
			     rec->trapno != trap || rec->err != want_err))) {
			note(i, "mov %#x to %%%s%s: model %s (signal %d trapno %u err %#x), got signal %d code %#x trapno %u err %#x",
			     sel, reg_name[reg], sys ? " + int $0x80" : "",
			     mv_name[want], sig, trap, want_err, rec->sig,
			     rec->code, rec->trapno, rec->err);
			continue;
		}
		/* an interrupt between mov and read may null a null too */
		if (!sig && val != want_val &&
		    !(!sys && val == 0 && after_iret(reg, sel) == 0)) {
			note(i, "mov %#x to %%%s%s: model loads %#x, read back %#x",
			     sel, reg_name[reg], sys ? " + int $0x80" : "",
			     want_val, val);
			continue;
		}
		if (sys)
			out->kinds[MK_VIA_SYSCALL]++;
		if (reg == R_SS)
			out->kinds[want == MV_OK ? MK_SS_OK :
				   want == MV_GP ? MK_SS_GP : MK_SS_SS]++;
		else if (want == MV_GP)
			out->kinds[MK_GP]++;
		else if (want == MV_NP)
			out->kinds[MK_NP]++;
		else if (is_null(sel))
			out->kinds[val == sel ? MK_NULL : MK_NULL_ZEROED]++;
		else
			out->kinds[MK_LOADED]++;
	}
	out->checksum = h;
}

TEST_F_TIMEOUT(fz, mov_selectors, 290)
{
	struct fz_arg a = { sub_seed("mov_selectors"), fz_iterations(90000) };
	uint32_t required = (1u << MK_NR) - 1;
	struct ph_result res;
	double t0 = ph_now();

	TH_LOG("seed %lu (SEED=%lu replays it), %ld operations; null selectors kept by IRET: ds %d es %d fs %d gs %d",
	       fz_seed, fz_seed, a.n, null_kept[R_DS], null_kept[R_ES],
	       null_kept[R_FS], null_kept[R_GS]);
	ph_run(mov_case, &a, 250, &res);
	EXPECT_CHILD_DONE(res);
	/* Only where IRET nulls them: see after_iret(). */
	if (null_kept[R_DS] && null_kept[R_ES] && null_kept[R_FS] &&
	    null_kept[R_GS])
		required &= ~(1u << MK_NULL_ZEROED);
	report(_metadata, "mov_selectors", mov_kind, MK_NR, required,
	       ph_now() - t0);
	CHECK_WORLD("mov_selectors");
}

TEST_HARNESS_MAIN
