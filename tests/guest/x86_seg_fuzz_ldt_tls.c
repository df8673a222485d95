// SPDX-License-Identifier: GPL-2.0
/*
 * The LDT and the TLS entries rewritten under loaded selectors, against
 * the model of lib/seg_fuzz.h, which also says how the seed, the checksum
 * and the bystander work.
 *
 * ldt_tls_churn: random modify_ldt() (read, write, old-mode write, default
 * LDT, unknown functions, wrong sizes, bad pointers, entries out of range)
 * and set/get_thread_area() (allocation, glibc's entry, out of range),
 * each return value and each descriptor written modelled on ldt.c and
 * tls.c, read back raw (modify_ldt 0) and decoded (get_thread_area), and
 * checked with LAR/LSL.  Meanwhile the main thread keeps a TLS selector in
 * %fs and a second thread an LDT selector, each with every RPL in turn
 * (CPL 3 may load a DPL 3 segment with RPL 0-3; all four name the same
 * descriptor): whenever the descriptor changes, their reads through %fs
 * must follow it, and %fs must become 0 when it stops being loadable.  An
 * x86-64 kernel refreshes less, and the test holds it to what it does: the
 * sibling watches %es, which ldt.c reloads (it leaves %fs alone), and an
 * RPL 0-2 TLS selector in %fs keeps its descriptor until a context switch
 * reloads it (tls.c reloads only an RPL 3 one): see main_fs_after().
 */
#define _GNU_SOURCE
#include <pthread.h>

#include "kselftest_harness.h"

#include "lib/seg_fuzz.h"

/* Of tls_kinds, those readable at offset 0 or empty: for the watched entry. */
static const enum dkind watched_tls[] = { DK_RW, DK_RO, DK_CLEAR };

/* The marker buffers the watched descriptors point at. */
#define NMARK		4
static uint32_t markers[NMARK][16] __attribute__((aligned(64))) = {
	{ 0x4d4b3030 }, { 0x4d4b3131 }, { 0x4d4b3232 }, { 0x4d4b3333 },
};

/*
 * A base into the operation stream: a marker by its index, so that the
 * checksum depends on the seed only, not on where the binary put them.
 */
static void mix_base(uint32_t *h, uint32_t base)
{
	int k;

	for (k = 0; k < NMARK; k++)
		if (base == (uint32_t)(uintptr_t)markers[k])
			base = 0x4d4b0000 | k;
	mix(h, base);
}

/* Which marker a read of %fs:0 through @d gives, or -1 if none is safe. */
static int desc_marker(struct desc d)
{
	uint32_t base = desc_base(d);
	uint32_t type = d.hi >> 8 & 0xf;
	int k;

	if (!desc_loadable(d) || desc_limit(d) < 3 ||
	    (!(type & 8) && (type & 4)))	/* expand-down data */
		return -1;
	for (k = 0; k < NMARK; k++)
		if (base == (uint32_t)(uintptr_t)markers[k])
			return k;
	return -1;
}

/* A watched entry gets one of these: readable at a marker, or not loadable. */
enum wkind { W_RW, W_RO, W_CODE_R, W_CODE_X, W_NP, W_CLEAR, W_NR };

static struct user_desc watched_info(uint32_t r, unsigned int entry)
{
	static const enum dkind wk[W_NR] = {
		DK_RW, DK_RO, DK_CODE_R, DK_CODE_X, DK_NP_DATA, DK_CLEAR,
	};
	enum dkind k = wk[r % W_NR];

	return dk_info(k, entry, (uint32_t)(uintptr_t)markers[(r >> 4) % NMARK]);
}

/* Where a pointer argument points, and how many bytes there are usable. */
enum ptrk { P_OK, P_RO, P_NULL, P_NONE, P_STRADDLE, P_NR };

static const char *const ptr_name[] = {
	"buf", "ro", "NULL", "unmapped", "straddle",
};

#define BIG_BUF		(65536 + 4096)
#define SENTINEL	0xa5
#define LDT_BYTES	(LDT_ENTRIES * LDT_ENTRY_SIZE)

struct churn {
	uint8_t *buf;			/* BIG_BUF bytes, read-write */
	uint8_t *ro;			/* a read-only page of user_descs */
	uint8_t *none;			/* an inaccessible page */
	uint8_t *edge;			/* 8 bytes before an inaccessible page */
	int nro;			/* user_descs in ro */

	/* the model */
	int have_ldt;
	unsigned int nr;		/* LDT entries */
	struct desc *ldt;		/* LDT_ENTRIES */
	struct desc tls[3];		/* entries TLS_MIN .. TLS_MIN + 2 */
	/*
	 * What %fs holds in the main thread if the kernel keeps it on the
	 * watched entry, as an i386 kernel does: the operation stream
	 * depends on it, so that it is the same on every run.
	 */
	unsigned int main_fs;
	int watched_written;		/* by the current operation */
	/* What it may hold, the model proper; one after each check. */
	struct fsv fs[MAX_FSV];
	int nfs;
	long csw;			/* the main thread's context switches */
};

/* What an access of @size bytes at a @k pointer does: 1 if it faults. */
static int ptr_faults(enum ptrk k, unsigned long size, int write)
{
	if (!size)
		return 0;
	switch (k) {
	case P_OK:
		return size > BIG_BUF;
	case P_RO:
		return write || size > 4096;
	case P_STRADDLE:
		return size > 8;
	default:
		return 1;
	}
}

static uint8_t *ptr_of(struct churn *c, enum ptrk k)
{
	switch (k) {
	case P_OK:
		return c->buf;
	case P_RO:
		return c->ro;
	case P_NONE:
		return c->none;
	case P_STRADDLE:
		return c->edge;
	default:
		return NULL;
	}
}

/* The second thread: %fs (%es) = LDT entry 0, read through, checked. */
#define WATCH_LDT	0
#define WATCH_TLS	(TLS_MIN + 2)
#define SIB_SEL(rpl)	WITH_RPL(LDT_SEL(WATCH_LDT), rpl)

struct sib {
	volatile uint32_t gen;		/* even: entry 0 is view[gen / 2] */
	volatile int stop, ready;
	volatile uint8_t *view;		/* bit 0 loadable, bits 1-3 marker + 1 */
	volatile int32_t *last_bad;	/* latest unloadable generation <= */
	long nview;
};

static struct sib sib;

static uint8_t view_of(struct desc d)
{
	return desc_loadable(d) | (desc_marker(d) + 1) << 1;
}

/* The generation @g must be in the arrays. */
static void sib_publish(uint32_t g, struct desc d)
{
	long k = g / 2;

	sib.view[k] = view_of(d);
	if (!desc_loadable(d))
		sib.last_bad[k] = g;
	else
		sib.last_bad[k] = k ? sib.last_bad[k - 1] : -1;
	__sync_synchronize();
	sib.gen = g;
}

/*
 * The sibling's register: %fs on an i386 kernel, which keeps it on the
 * LDT (every return to user mode reloads it; with PDA_UP_NOSEG, ldt.c
 * does).  An x86-64 kernel reloads %ds and %es, on every CPU that runs
 * the mm, when the LDT changes (refresh_ldt_segments()), and leaves %fs
 * and %gs to the next context switch: there the sibling holds %es.
 */
static const char *sib_reg(void)
{
	return gdt.kernel64 ? "es" : "fs";
}

static int NOSP sib_load(unsigned int sel, struct skip_rec *rec)
{
	return gdt.kernel64 ? load_es(sel, rec) : load_fs(sel, rec);
}

static int NOSP sib_read0(unsigned int *sel, uint32_t *val,
			  struct skip_rec *rec)
{
	return gdt.kernel64 ? read_es0(sel, val, rec) : read_fs0(sel, val, rec);
}

/*
 * note() from the sibling.  The C library's string instructions write
 * through %es: when it holds the LDT selector, note() gets a flat one,
 * then the selector comes back (or 0, if it no longer loads).
 */
#define sib_note(...) do {						\
	unsigned int __es = ph_get_seg(es);				\
									\
	if (gdt.kernel64)						\
		ph_set_seg(es, USER_DS);				\
	note(out->progress, __VA_ARGS__);				\
	if (gdt.kernel64 && load_es(__es, &skip_recs[1]))		\
		ph_set_seg(es, 0);					\
} while (0)

/*
 * Its selector takes every RPL in turn: on each reload after the kernel
 * took it away, and now and then while it holds.
 */
static void *sib_main(void *unused)
{
	struct skip_rec *rec = &skip_recs[1];
	uint32_t g1, g2, g_load = 0, v, last_marker = ~0u;
	unsigned int k, sel, rpl = 0, cur = SIB_SEL(0), prev = cur, held = 0;

	(void)unused;
	/* a new thread starts with its creator's %fs and %es: take ours */
	if (sib_load(cur, rec))
		sib_note("sibling: cannot load %#x", cur);
	sib.ready = 1;
	for (k = 0; !sib.stop; k++) {
		uint8_t view;
		int m;

		/* enter the kernel now and then; nap, not to starve main */
		if (k % 8 == 7)
			ph_int80(SYS_sched_yield, 0, 0, 0);
		if (k % 64 == 63)
			ph_by_nap();
		g1 = sib.gen;
		__sync_synchronize();
		if (sib_read0(&sel, &v, rec) && sel == cur) {
			/*
			 * Nulled between the two reads, or beyond the limit
			 * (Bochs checks it): either way the handler's
			 * sigreturn gives it back with RPL 3 (fixup_rpl()).
			 */
			rpl = 3;
			cur = prev = SIB_SEL(3);
			continue;
		}
		__sync_synchronize();
		g2 = sib.gen;
		if (g1 != g2 || (g1 & 1))
			continue;
		view = sib.view[g1 / 2];
		m = (view >> 1) - 1;
		out->sib_checks++;
		if (ph_get_seg(gs) != GLIBC_GS)
			sib_note("sibling: %%gs %#x", ph_get_seg(gs));
		if (sel == cur && !(view & 1)) {
			out->sib_stale++;
			sib_note("sibling: %%%s still %#x, the descriptor of generation %u does not load",
				 sib_reg(), sel, g1);
		} else if (sel == cur && m >= 0 && v != markers[m][0]) {
			out->sib_stale++;
			sib_note("sibling: %%%s %#x:0 reads %#x, generation %u has marker %#x",
				 sib_reg(), sel, v, g1, markers[m][0]);
		} else if (sel == cur) {
			out->sib_rpl_checks[rpl]++;
			if (m >= 0 && (uint32_t)m != last_marker) {
				out->sib_follow++;
				out->sib_rpl_follow[rpl]++;
				last_marker = m;
			}
			/* the next RPL, as a reload after a zeroing would */
			if (++held % 16 == 0) {
				/* a failed load's sigreturn gives RPL 3 */
				rpl = sib_load(SIB_SEL(rpl + 1), rec) ? 3 :
				      (rpl + 1) & 3;
				cur = SIB_SEL(rpl);
				g_load = g1;
				sel = cur;
			}
		} else if (sel != 0) {
			out->sib_stale++;
			sib_note("sibling: %%%s %#x", sib_reg(), sel);
		} else if (sib.last_bad[g1 / 2] < (int32_t)g_load) {
			out->sib_stale++;
			sib_note("sibling: %%%s 0, but no generation in %u..%u was unloadable",
				 sib_reg(), g_load, g1);
		} else {
			if (prev == cur)
				out->sib_zeroed++;
			/* it was taken away: take it again when it loads */
			if ((view & 1) && !sib_load(SIB_SEL(rpl + 1), rec)) {
				out->sib_reloads++;
				rpl = (rpl + 1) & 3;
				cur = SIB_SEL(rpl);
				g_load = g1;
				sel = cur;
			}
		}
		prev = sel;
	}
	/* the C library's thread exit needs a flat %es */
	if (gdt.kernel64)
		ph_set_seg(es, USER_DS);
	return NULL;
}

enum {
	CK_LDT_SET, CK_LDT_CLEAR, CK_LDT_OLDMODE, CK_LDT_EINVAL_SIZE,
	CK_LDT_EINVAL_ENTRY, CK_LDT_EINVAL_CONTENTS, CK_LDT_EFAULT,
	CK_LDT_READ, CK_LDT_READ_EFAULT, CK_LDT_READ_DEFAULT, CK_ENOSYS,
	CK_TLS_SET, CK_TLS_CLEAR, CK_TLS_ALLOC, CK_TLS_ESRCH,
	CK_TLS_EINVAL_DESC, CK_TLS_EINVAL_ENTRY, CK_TLS_EFAULT, CK_TLS_GET,
	CK_TLS_GET_EINVAL, CK_TLS_GET_EFAULT, CK_TLS6, CK_FS_FOLLOWED,
	CK_FS_ZEROED, CK_SYSENTER, CK_FS_RPL0, CK_FS_RPL1, CK_FS_RPL2,
	CK_FS_RPL3, CK_FS_KEPT, CK_NR
};

static const char *const ck_name[] = {
	"LDT set", "LDT clear", "LDT old mode", "LDT EINVAL size",
	"LDT EINVAL entry", "LDT EINVAL contents 3", "LDT EFAULT",
	"LDT read", "LDT read EFAULT", "default LDT read", "ENOSYS",
	"TLS set", "TLS clear", "TLS allocated", "TLS ESRCH",
	"TLS EINVAL descriptor", "TLS EINVAL entry", "TLS EFAULT", "TLS get",
	"TLS get EINVAL", "TLS get EFAULT", "TLS entry of glibc (%gs)",
	"%fs followed", "%fs zeroed", "through SYSENTER",
	"RPL 0 %fs checked after a change", "RPL 1 %fs checked after a change",
	"RPL 2 %fs checked after a change", "RPL 3 %fs checked after a change",
	"%fs kept an older descriptor (x86-64)",
};

/* A random user_desc: special forms, contents 3, and garbage. */
static void random_info(uint32_t *rnd, struct user_desc *u,
			unsigned int entry)
{
	uint32_t r = xorshift32(rnd), flags;

	memset(u, 0, sizeof(*u));
	u->entry_number = entry;
	switch (r % 12) {
	case 0:
	case 1:
		u->read_exec_only = 1;
		u->seg_not_present = 1;		/* LDT_empty() */
		return;
	case 2:
		return;				/* LDT_zero() */
	case 3:
		/* zero base and limit: a clear in the old mode only */
		flags = xorshift32(rnd) & 0x7f;
		memcpy((char *)u + 12, &flags, 4);
		return;
	case 4:
	case 5:
		u->contents = 3;
		u->seg_not_present = (r >> 8) & 1;
		u->seg_32bit = (r >> 9) & 1;
		u->base_addr = xorshift32(rnd);
		u->limit = xorshift32(rnd) & 0xfffff;
		return;
	default:
		break;
	}
	u->base_addr = xorshift32(rnd);
	u->limit = (r >> 8) % 8 ? xorshift32(rnd) & 0xfffff : xorshift32(rnd);
	/* the seven flags, and now and then garbage in the unused bits */
	flags = xorshift32(rnd);
	if ((r >> 12) % 4)
		flags &= 0x7f;
	memcpy((char *)u + 12, &flags, 4);
}

static unsigned int random_ldt_entry(uint32_t *rnd)
{
	uint32_t r = xorshift32(rnd), s = r >> 8;

	switch (r % 32) {
	case 0:
	case 1:
		return LDT_ENTRIES + s % 16;
	case 2:
		return 0xffffffffu - s % 4;
	case 3:
	case 4:
		return s | LDT_ENTRIES;
	case 5:
		/* a large LDT, rarely: it makes every later write slower */
		return s % 16 ? 64 + s % 64 : s % LDT_ENTRIES;
	case 6:
		return 16 + s % 48;
	case 7 ... 12:
		return WATCH_LDT;
	default:
		return s % 16;
	}
}

static unsigned int random_tls_entry(uint32_t *rnd)
{
	uint32_t r = xorshift32(rnd);

	switch (r % 8) {
	case 0:
	case 1:
		return -1;
	case 2:
		return TLS_MIN + 1;
	case 3 ... 5:
		return WATCH_TLS;
	case 6:
		return (r >> 8) % 16;	/* mostly not a TLS entry */
	default:
		return xorshift32(rnd);
	}
}

static enum ptrk random_ptr(uint32_t *rnd)
{
	uint32_t r = xorshift32(rnd) % 32;

	if (r < 22)
		return P_OK;
	return r < 25 ? P_RO : r < 27 ? P_NULL : r < 29 ? P_NONE : P_STRADDLE;
}

/*
 * Puts *@u where a @k pointer points and returns the pointer; for P_RO a
 * prepared read-only user_desc replaces *@u; for P_STRADDLE only its
 * first 8 bytes are there.
 */
static uint8_t *place_info(struct churn *c, enum ptrk k, uint32_t r,
			   struct user_desc *u)
{
	switch (k) {
	case P_OK:
		memcpy(c->buf, u, sizeof(*u));
		return c->buf;
	case P_RO:
		memcpy(u, c->ro + sizeof(*u) * (r % c->nro), sizeof(*u));
		return c->ro + sizeof(*u) * (r % c->nro);
	case P_STRADDLE:
		memcpy(c->edge, u, 8);
		return c->edge;
	default:
		return ptr_of(c, k);
	}
}

/* LAR and LSL of @sel agree with the model's descriptor. */
static void check_lar_lsl(uint32_t op, unsigned int sel, struct desc d)
{
	uint32_t ar, lim;
	int ok_ar = seg_lar(sel, &ar), ok_lim = seg_lsl(sel, &lim);

	if (desc_zero(d)) {
		if (ok_ar || ok_lim)
			note(op, "LAR/LSL %#x work on an empty descriptor", sel);
		return;
	}
	if (!ok_ar || ar != (d.hi & AR_MASK) || !ok_lim ||
	    lim != desc_limit(d))
		note(op, "%#x: LAR %d %#x LSL %d %#x, model %#x %#x", sel,
		     ok_ar, ar, ok_lim, lim, d.hi & AR_MASK, desc_limit(d));
}

/* The whole LDT through modify_ldt(0) equals the model; nr * 8 + 8 read. */
static void check_ldt(struct churn *c, uint32_t op)
{
	static const uint8_t zero[8];
	unsigned long bc = c->nr * 8 + 8;
	unsigned long want = !c->have_ldt ? 0 : bc < LDT_BYTES ? bc : LDT_BYTES;
	long ret;

	memset(c->buf, SENTINEL, bc + 8);
	ret = sys3(SYS_modify_ldt, 0, (long)c->buf, bc, 0);
	if (ret != (long)want) {
		note(op, "LDT readback of %u entries returned %ld", c->nr, ret);
		return;
	}
	if (c->have_ldt && memcmp(c->buf, c->ldt, c->nr * 8))
		note(op, "LDT readback differs from the model (%u entries)",
		     c->nr);
	if (want == bc && memcmp(c->buf + c->nr * 8, zero, 8))
		note(op, "LDT readback: not zero past %u entries", c->nr);
}

/* The TLS entries after glibc's through get_thread_area() equal the model. */
static void check_tls(struct churn *c, uint32_t op)
{
	struct user_desc u, want;
	unsigned int e;
	long ret;

	for (e = TLS_MIN + 1; e <= TLS_MIN + 2; e++) {
		memset(&u, 0x5a, sizeof(u));
		u.entry_number = e;
		ret = sys3(SYS_get_thread_area, (long)&u, 0, 0, 0);
		want = decode(c->tls[e - TLS_MIN], e);
		if (ret || !same_ud(&u, &want))
			note(op, "TLS %u readback: %ld, base %#x limit %#x flags %#x; model base %#x limit %#x flags %#x",
			     e, ret, u.base_addr, u.limit, ((uint32_t *)&u)[3],
			     want.base_addr, want.limit, ((uint32_t *)&want)[3]);
	}
}

/* Adds @v to the main thread's possible %fs, once. */
static void fsv_add(struct churn *c, struct fsv v)
{
	int k;

	for (k = 0; k < c->nfs; k++)
		if (fsv_same(c->fs[k], v))
			return;
	if (c->nfs < MAX_FSV)
		c->fs[c->nfs++] = v;
}

/*
 * The main thread's %fs after an operation that may have rewritten the
 * watched entry from @d0 (@written).  @sw: the thread was switched out
 * since the last check (on x86-64, where that reloads %fs), before the
 * write or after it: the model keeps both.
 */
static void main_fs_after(struct churn *c, struct desc d0, int written,
			  int sw)
{
	struct desc d1 = c->tls[WATCH_TLS - TLS_MIN];
	struct fsv in[MAX_FSV], a;
	int n = c->nfs, k;

	memcpy(in, c->fs, sizeof(in));
	c->nfs = 0;
	for (k = 0; k < n; k++) {
		a = written ? fs_refreshed(in[k], d1) : in[k];
		if (sw) {
			fsv_add(c, fs_switched(a, d1));
			a = fs_switched(in[k], d0);
			if (written)
				a = fs_refreshed(a, d1);
		}
		fsv_add(c, a);
	}
}

/* Whether the main thread was switched out since the last look. */
static int main_switched(struct churn *c)
{
	long s = ph_thread_switches();
	int sw = s != c->csw;

	c->csw = s;
	out->main_switched += sw;
	return sw;
}

/*
 * The main thread's %fs holds what the model says, and reads through it.
 * On x86-64 a context switch since the operation (the count says that
 * one came, not when) may have reloaded it before the read or after it:
 * either is right, and after the read it has happened.
 */
static void check_main_fs(struct churn *c, uint32_t op)
{
	struct desc d = c->tls[WATCH_TLS - TLS_MIN];
	struct fsv hit = { 0 }, t;
	int fault, sw = 0, k, s, m, nhit = 0, ambiguous = 0;
	unsigned int fs;
	uint32_t v;

	fault = read_fs0(&fs, &v, &skip_recs[0]);
	if (gdt.kernel64)
		sw = main_switched(c);
	for (k = 0; k < c->nfs; k++) {
		for (s = 0; s <= sw; s++) {
			t = s ? fs_switched(c->fs[k], d) : c->fs[k];
			m = t.sel ? desc_marker(t.d) : -1;
			if (t.sel != fs ||
			    (m >= 0 && (fault || v != markers[m][0])))
				continue;
			if (sw)
				t = fs_switched(c->fs[k], d);
			if (nhit++ && !fsv_same(hit, t))
				ambiguous = 1;
			hit = t;
		}
	}
	if (!nhit) {
		t = c->fs[0];
		m = t.sel ? desc_marker(t.d) : -1;
		note(op, "main %%fs %#x reads %#x (fault %d), model %#x reading %#x (%d possible%s; watched TLS %08x %08x)",
		     fs, v, fault, t.sel, m >= 0 ? markers[m][0] : 0, c->nfs,
		     sw ? ", switched out" : "", d.hi, d.lo);
		c->fs[0] = fs_loaded(fs, d);
		c->nfs = 1;
		return;
	}
	c->fs[0] = hit;
	c->nfs = 1;
	/*
	 * x86-64: which descriptor it has is not known: load it again, with
	 * the RPL a faulted read's sigreturn has given it already (below);
	 * loading @fs would take that back.
	 */
	if (ambiguous) {
		unsigned int sel = fault && fs ? WITH_RPL(fs, 3) : fs;

		out->main_again++;
		if (load_fs(sel, &skip_recs[0]))
			note(op, "main: cannot load %#x again", sel);
		c->fs[0] = fs_loaded(sel, d);
	}
	/*
	 * Past the limit (Bochs checks it), or at a random base: the
	 * handler's sigreturn gives %fs back with RPL 3 (fixup_rpl()),
	 * always on i386, on x86-64 if that changes it (reload_segments()).
	 * An x86-64 kernel may have left %fs on a descriptor the table no
	 * longer has, whose base is anything: c->main_fs stays 0 then.
	 */
	if (fault && fs) {
		if (c->main_fs)
			c->main_fs = WITH_RPL(c->main_fs, 3);
		if (!gdt.kernel64 || (fs & 3) != 3)
			c->fs[0] = fs_loaded(WITH_RPL(fs, 3), d);
	}
	if (ph_get_seg(gs) != GLIBC_GS)
		note(op, "main %%gs %#x", ph_get_seg(gs));
}

/* modify_ldt(1 or 0x11 or anything): ldt.c write_ldt() and the switch. */
static void op_ldt_write(struct churn *c, uint32_t *rnd, uint32_t op,
			 uint32_t *h, int vsys)
{
	uint32_t r = xorshift32(rnd);
	struct user_desc u;
	enum ptrk pk = random_ptr(rnd);
	int oldmode = r % 3 == 0, func = oldmode ? 1 : 0x11, clear = 0;
	unsigned long bytecount = sizeof(u);
	long want, ret;
	uint8_t *p;
	unsigned int e = random_ldt_entry(rnd);
	struct desc d = { 0, 0 };
	uint32_t g;

	if (e == WATCH_LDT)
		u = watched_info(xorshift32(rnd), e);
	else
		random_info(rnd, &u, e);
	if ((r >> 4) % 8 == 0)
		bytecount = (r >> 8) % 4 ? (r >> 12) % 33 : xorshift32(rnd);
	if ((r >> 20) % 8 == 0) {
		/* not a function: ENOSYS whatever the rest */
		do {
			func = (r >> 25) % 2 ? (int)xorshift32(rnd) :
			       (int)xorshift32(rnd) % 32;
		} while (func == 0 || func == 1 || func == 2 || func == 0x11);
	}
	p = place_info(c, pk, r >> 8, &u);
	e = u.entry_number;

	if (func != 1 && func != 0x11)
		want = -ENOSYS;
	else if (bytecount != sizeof(u))
		want = -EINVAL;
	else if (ptr_faults(pk, sizeof(u), 0))
		want = -EFAULT;
	else if (e >= LDT_ENTRIES)
		want = -EINVAL;
	else if (u.contents == 3 && (oldmode || !u.seg_not_present))
		want = -EINVAL;
	else
		want = 0;
	if (!want) {
		clear = (oldmode && !u.base_addr && !u.limit) || ldt_empty(&u);
		if (!clear)
			d = fill_ldt(&u, oldmode);
	}
	mix(h, op);
	mix(h, func);
	mix(h, bytecount << 8 | pk);
	mix(h, e);
	mix_base(h, u.base_addr);
	mix(h, u.limit);
	mix(h, ((uint32_t *)&u)[3]);
	mix(h, want);

	/* the sibling must not judge %fs while the LDT changes */
	g = sib.gen;
	sib.gen = g + 1;
	__sync_synchronize();
	ret = sys3(SYS_modify_ldt, func, (long)p, bytecount, vsys);
	if (!want) {
		c->ldt[e] = d;
		if (e >= c->nr)
			c->nr = e + 1;
		c->have_ldt = 1;
	}
	sib_publish(g + 2, c->ldt[WATCH_LDT]);

	if (ret != want) {
		note(op, "modify_ldt(%#x, %s, %lu) entry %u base %#x limit %#x flags %#x: model %ld, got %ld",
		     func, ptr_name[pk], bytecount, e, u.base_addr, u.limit,
		     ((uint32_t *)&u)[3], want, ret);
		return;
	}
	if (func != 1 && func != 0x11)
		out->kinds[CK_ENOSYS]++;
	else if (want == -EFAULT)
		out->kinds[CK_LDT_EFAULT]++;
	else if (want && bytecount != sizeof(u))
		out->kinds[CK_LDT_EINVAL_SIZE]++;
	else if (want && e >= LDT_ENTRIES)
		out->kinds[CK_LDT_EINVAL_ENTRY]++;
	else if (want)
		out->kinds[CK_LDT_EINVAL_CONTENTS]++;
	else
		out->kinds[clear ? CK_LDT_CLEAR :
			   oldmode ? CK_LDT_OLDMODE : CK_LDT_SET]++;
	if (want)
		return;

	/* read back raw, decode, and ask the CPU */
	check_ldt(c, op);
	{
		struct user_desc got = decode(c->ldt[e], e);
		struct user_desc exp = written(&u, clear, oldmode);

		exp.entry_number = e;
		if (!same_ud(&got, &exp))
			note(op, "LDT %u decodes to base %#x limit %#x flags %#x, wrote base %#x limit %#x flags %#x",
			     e, got.base_addr, got.limit, ((uint32_t *)&got)[3],
			     exp.base_addr, exp.limit, ((uint32_t *)&exp)[3]);
	}
	check_lar_lsl(op, LDT_SEL(e), c->ldt[e]);
}

/* modify_ldt(0) and modify_ldt(2): read_ldt(), read_default_ldt(). */
static void op_ldt_read(struct churn *c, uint32_t *rnd, uint32_t op,
			uint32_t *h, int vsys)
{
	uint32_t r = xorshift32(rnd);
	enum ptrk pk = random_ptr(rnd);
	int func = r % 3 == 0 ? 2 : 0;
	unsigned long bc, n, fill;
	long want, ret;
	uint8_t *p = ptr_of(c, pk);

	switch ((r >> 4) % 8) {
	case 0:
		bc = 0;
		break;
	case 1:
		bc = xorshift32(rnd);
		break;
	case 2:
		bc = LDT_BYTES + (r >> 8) % 64;
		break;
	default:
		bc = (r >> 8) % (c->nr * 8 + 64);
		break;
	}
	if (func == 2) {
		/* read_default_ldt(): 5 entries on i386, 128 bytes on x86-64 */
		n = bc < gdt.k->default_ldt ? bc : gdt.k->default_ldt;
		want = ptr_faults(pk, n, 1) ? -EFAULT : (long)n;
	} else if (!c->have_ldt) {
		n = 0;
		want = 0;
	} else {
		n = bc < LDT_BYTES ? bc : LDT_BYTES;
		want = ptr_faults(pk, n, 1) ? -EFAULT : (long)n;
	}
	mix(h, op);
	mix(h, func << 8 | pk);
	mix(h, bc);
	mix(h, want);

	fill = n + 16 < BIG_BUF ? n + 16 : BIG_BUF;
	if (pk == P_OK)
		memset(c->buf, SENTINEL, fill);
	ret = sys3(SYS_modify_ldt, func, (long)p, bc, vsys);
	if (ret != want) {
		note(op, "modify_ldt(%d, %s, %lu): model %ld, got %ld", func,
		     ptr_name[pk], bc, want, ret);
		return;
	}
	if (want == -EFAULT) {
		out->kinds[CK_LDT_READ_EFAULT]++;
		return;
	}
	out->kinds[func == 2 ? CK_LDT_READ_DEFAULT : CK_LDT_READ]++;
	if (pk != P_OK)
		return;
	/* the entries, zeros to n, and nothing written past n */
	{
		unsigned long m = func == 2 ? 0 : c->nr * 8 < n ? c->nr * 8 : n;
		unsigned long k;

		if (memcmp(c->buf, c->ldt, m))
			note(op, "modify_ldt(%d) read differs from the model",
			     func);
		for (k = m; k < fill; k++) {
			if (c->buf[k] != (k < n ? 0 : SENTINEL)) {
				note(op, "modify_ldt(%d, %lu): byte %lu is %#x",
				     func, bc, k, c->buf[k]);
				break;
			}
		}
	}
}

/* set_thread_area() on entries other than glibc's: tls.c do_set_thread_area(). */
static void op_tls_set(struct churn *c, uint32_t *rnd, uint32_t op,
		       uint32_t *h, int vsys)
{
	uint32_t r = xorshift32(rnd);
	enum ptrk pk = random_ptr(rnd);
	unsigned int e = random_tls_entry(rnd);
	struct user_desc u, back;
	int idx, okay, clear, free_idx = -1;
	long want, ret;
	uint8_t *p;

	/*
	 * Mostly what tls_desc_okay() lets through (data, present) at a
	 * marker, so that the main thread's %fs reads through it; on the
	 * watched entry often the empty one, which takes %fs away.  Random
	 * ones a quarter of the time there, half the time elsewhere; never
	 * for an allocation, which should rather allocate.
	 */
	if (e == WATCH_TLS)
		u = dk_info(watched_tls[r % ARRAY_LEN(watched_tls)], e,
			    (uint32_t)(uintptr_t)markers[(r >> 4) % NMARK]);
	else
		u = dk_info(tls_kinds[r % ARRAY_LEN(tls_kinds)], e,
			    (uint32_t)(uintptr_t)markers[(r >> 4) % NMARK]);
	if (e == WATCH_TLS ? (r >> 8) % 4 == 0 :
	    e != (unsigned int)-1 && (r >> 8) % 2)
		random_info(rnd, &u, e);
	p = place_info(c, pk, r >> 12, &u);
	e = u.entry_number;
	if (e == TLS_MIN) {
		e = TLS_MIN + 1;	/* glibc's: op_tls6() only */
		u.entry_number = e;
	}
	if (pk == P_STRADDLE || pk == P_OK)
		memcpy(p, &u, pk == P_OK ? sizeof(u) : 8);

	okay = ldt_empty(&u) || ldt_zero(&u) ||
	       (u.seg_32bit && u.contents <= 1 && !u.seg_not_present);
	clear = ldt_empty(&u) || ldt_zero(&u);
	idx = (int)e;
	if (ptr_faults(pk, sizeof(u), 0)) {
		want = -EFAULT;
	} else if (!okay) {
		want = -EINVAL;
	} else {
		want = 0;
		if (idx == -1) {
			for (free_idx = TLS_MIN; free_idx <= (int)TLS_MIN + 2;
			     free_idx++)
				if (desc_zero(c->tls[free_idx - TLS_MIN]))
					break;
			if (free_idx > (int)TLS_MIN + 2)
				want = -ESRCH;
			else if (ptr_faults(pk, 4, 1))
				want = -EFAULT;	/* put_user(idx) */
			idx = free_idx;
		}
		if (!want && (idx < (int)TLS_MIN || idx > (int)TLS_MIN + 2))
			want = -EINVAL;
	}
	mix(h, op);
	mix(h, pk);
	mix(h, e);
	mix_base(h, u.base_addr);
	mix(h, u.limit);
	mix(h, ((uint32_t *)&u)[3]);
	mix(h, want);

	ret = sys3(SYS_set_thread_area, (long)p, 0, 0, vsys);
	if (!want) {
		c->tls[idx - TLS_MIN] = clear ? (struct desc){ 0, 0 } :
					fill_ldt(&u, 0);
		/* on i386, %fs is reloaded: see fs_refreshed() */
		if (idx == (int)WATCH_TLS) {
			c->watched_written = 1;
			if (c->main_fs && !desc_loadable(c->tls[idx - TLS_MIN]))
				c->main_fs = 0;
		}
	}
	if (ret != want) {
		note(op, "set_thread_area(%s) entry %d base %#x limit %#x flags %#x: model %ld, got %ld",
		     ptr_name[pk], (int)e, u.base_addr, u.limit,
		     ((uint32_t *)&u)[3], want, ret);
		return;
	}
	if (want == -EFAULT) {
		out->kinds[CK_TLS_EFAULT]++;
	} else if (want == -ESRCH) {
		out->kinds[CK_TLS_ESRCH]++;
	} else if (want) {
		out->kinds[okay ? CK_TLS_EINVAL_ENTRY : CK_TLS_EINVAL_DESC]++;
	} else {
		out->kinds[clear ? CK_TLS_CLEAR : CK_TLS_SET]++;
		if (free_idx >= 0) {
			out->kinds[CK_TLS_ALLOC]++;
			memcpy(&back, p, sizeof(back));
			if ((int)back.entry_number != idx)
				note(op, "set_thread_area(-1) allocated %d, model %d",
				     (int)back.entry_number, idx);
		}
		check_lar_lsl(op, TLS_SEL(idx), c->tls[idx - TLS_MIN]);
	}
}

/* get_thread_area(): tls.c do_get_thread_area(). */
static void op_tls_get(struct churn *c, uint32_t *rnd, uint32_t op,
		       uint32_t *h, int vsys)
{
	uint32_t r = xorshift32(rnd);
	enum ptrk pk = random_ptr(rnd);
	struct user_desc u, want_u;
	int idx = r % 2 ? (int)TLS_MIN + (r >> 4) % 3 :
			  (int)random_tls_entry(rnd);
	long want, ret;
	uint8_t *p;

	memset(&u, 0, sizeof(u));
	u.entry_number = idx;
	p = place_info(c, pk, r >> 8, &u);
	idx = u.entry_number;
	if (ptr_faults(pk, 4, 0))
		want = -EFAULT;			/* get_user(idx) */
	else if (idx < (int)TLS_MIN || idx > (int)TLS_MIN + 2)
		want = -EINVAL;
	else if (ptr_faults(pk, sizeof(u), 1))
		want = -EFAULT;			/* copy_to_user() */
	else
		want = 0;
	mix(h, op);
	mix(h, pk);
	mix(h, idx);
	mix(h, want);

	ret = sys3(SYS_get_thread_area, (long)p, 0, 0, vsys);
	if (ret != want) {
		note(op, "get_thread_area(%s) entry %d: model %ld, got %ld",
		     ptr_name[pk], idx, want, ret);
		return;
	}
	if (want) {
		out->kinds[want == -EFAULT ? CK_TLS_GET_EFAULT :
			   CK_TLS_GET_EINVAL]++;
		return;
	}
	out->kinds[CK_TLS_GET]++;
	want_u = decode(c->tls[idx - TLS_MIN], idx);
	if (memcmp(p, &want_u, sizeof(want_u)))
		note(op, "get_thread_area(%d) differs from the model", idx);
}

struct tls6_res {
	long ret, back_ret, restore_ret;
	unsigned int gs;
	struct user_desc back;
};

/*
 * set_thread_area() on glibc's entry while %gs holds it: tls.c must
 * reload %gs, with 0 if the new descriptor cannot be loaded.  Nothing
 * here may use TLS until glibc's descriptor and %gs are back.
 */
static void NOSP __attribute__((noinline))
tls6_op(struct user_desc *u, struct user_desc *saved, struct tls6_res *res,
	int vsys)
{
	struct user_desc back;

	res->ret = sys3(SYS_set_thread_area, (long)u, 0, 0, vsys);
	res->gs = ph_get_seg(gs);
	back.entry_number = TLS_MIN;
	res->back_ret = sys3(SYS_get_thread_area, (long)&back, 0, 0, 0);
	res->restore_ret = sys3(SYS_set_thread_area, (long)saved, 0, 0, 0);
	ph_set_seg(gs, ph_glibc_gs);
	res->back = back;
}

static void op_tls6(struct churn *c, uint32_t *rnd, uint32_t op, uint32_t *h,
		    int vsys, struct user_desc *saved)
{
	struct user_desc u, want_back;
	struct tls6_res res;
	unsigned int want_gs = GLIBC_GS;
	int okay, clear;
	long want;
	struct desc d;

	random_info(rnd, &u, TLS_MIN);
	okay = ldt_empty(&u) || ldt_zero(&u) ||
	       (u.seg_32bit && u.contents <= 1 && !u.seg_not_present);
	clear = ldt_empty(&u) || ldt_zero(&u);
	want = okay ? 0 : -EINVAL;
	d = !okay ? c->tls[0] : clear ? (struct desc){ 0, 0 } : fill_ldt(&u, 0);
	if (!desc_loadable(d))
		want_gs = 0;
	want_back = decode(d, TLS_MIN);
	mix(h, op);
	mix(h, u.base_addr);
	mix(h, u.limit);
	mix(h, ((uint32_t *)&u)[3]);
	mix(h, want);

	tls6_op(&u, saved, &res, vsys);
	if (res.restore_ret)
		ph_raw_exit(32);
	if (res.ret != want || res.gs != want_gs || res.back_ret ||
	    !same_ud(&res.back, &want_back)) {
		note(op, "set_thread_area(%u) base %#x limit %#x flags %#x: model %ld %%gs %#x, got %ld %%gs %#x, readback %s",
		     TLS_MIN, u.base_addr, u.limit, ((uint32_t *)&u)[3], want,
		     want_gs,
		     res.ret, res.gs,
		     same_ud(&res.back, &want_back) ? "ok" : "differs");
		return;
	}
	out->kinds[want ? CK_TLS_EINVAL_DESC : CK_TLS6]++;
}

struct churn_arg {
	uint32_t seed;
	long n;
};

static void churn_case(void *p)
{
	const struct churn_arg *a = p;
	uint32_t rnd = a->seed, h = 2166136261u;
	struct user_desc saved6, u;
	struct churn c;
	pthread_t t;
	long i, k;
	uint8_t *m;

	memset(&c, 0, sizeof(c));
	c.ldt = calloc(LDT_ENTRIES, sizeof(*c.ldt));
	sib.nview = a->n + 4;
	sib.view = calloc(sib.nview, 1);
	sib.last_bad = calloc(sib.nview, sizeof(*sib.last_bad));
	m = mmap(NULL, BIG_BUF + 4 * 4096, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!c.ldt || !sib.view || !sib.last_bad || m == MAP_FAILED)
		ph_raw_exit(30);
	/* buf | ro page | edge page | inaccessible page */
	c.buf = m;
	c.ro = m + BIG_BUF;
	c.edge = m + BIG_BUF + 2 * 4096 - 8;
	c.none = m + BIG_BUF + 2 * 4096;
	c.nro = 4096 / sizeof(u);
	for (k = 0; k < c.nro; k++) {
		random_info(&rnd, &u, k % 3 ? random_ldt_entry(&rnd) :
				      random_tls_entry(&rnd));
		if (u.entry_number == TLS_MIN)
			u.entry_number = TLS_MIN + 1;	/* glibc's: op_tls6() */
		memcpy(c.ro + k * sizeof(u), &u, sizeof(u));
	}
	if (mprotect(c.ro, 4096, PROT_READ) ||
	    mprotect(c.none, 4096, PROT_NONE))
		ph_raw_exit(31);
	skip_install();

	/* glibc's TLS entry, and the two after it as this thread has them */
	for (k = 0; k < 3; k++) {
		memset(&u, 0, sizeof(u));
		u.entry_number = TLS_MIN + k;
		if (sys3(SYS_get_thread_area, (long)&u, 0, 0, 0))
			ph_raw_exit(32);
		if (k == 0)
			saved6 = u;
		c.tls[k] = ldt_empty(&u) ? (struct desc){ 0, 0 } :
			   fill_ldt(&u, 0);
	}

	/* no LDT yet: modify_ldt(0) reads nothing, (2) the default */
	check_ldt(&c, 0);
	for (i = 0; i < 4; i++) {
		op_ldt_read(&c, &rnd, 0, &h, 0);
		out->iters++;
	}

	/*
	 * The watched entries, %fs on the last TLS entry here and %fs (%es)
	 * on LDT 0 there, each with every RPL in turn.
	 */
	u = dk_info(DK_RW, WATCH_TLS, (uint32_t)(uintptr_t)markers[1]);
	c.tls[WATCH_TLS - TLS_MIN] = fill_ldt(&u, 0);
	c.main_fs = WITH_RPL(TLS_SEL(WATCH_TLS), xorshift32(&rnd));
	mix(&h, c.main_fs);
	if (tls_write(&u) || load_fs(c.main_fs, &skip_recs[0]))
		ph_raw_exit(33);
	c.fs[0] = fs_loaded(c.main_fs, c.tls[WATCH_TLS - TLS_MIN]);
	c.nfs = 1;
	c.csw = ph_thread_switches();
	u = dk_info(DK_RW, WATCH_LDT, (uint32_t)(uintptr_t)markers[0]);
	if (ldt_write(&u))
		ph_raw_exit(34);
	c.ldt[WATCH_LDT] = fill_ldt(&u, 0);
	c.nr = 1;
	c.have_ldt = 1;
	sib_publish(0, c.ldt[WATCH_LDT]);
	if (pthread_create(&t, NULL, sib_main, NULL))
		ph_raw_exit(35);
	while (!sib.ready)
		ph_int80(SYS_sched_yield, 0, 0, 0);

	for (i = 0; i < a->n; i++) {
		uint32_t r = xorshift32(&rnd), op = i + 1;
		uint32_t rpl = xorshift32(&rnd);
		int vsys = (r >> 8) % 4 == 0 && vsys_entry;
		unsigned int fs_before = c.fs[0].sel;
		struct desc d0 = c.tls[WATCH_TLS - TLS_MIN], d1;
		struct fsv now;
		int changed = 0;

		out->progress = op;
		mix(&h, vsys);
		c.watched_written = 0;
		switch (r % 20) {
		case 0 ... 4:
			op_ldt_write(&c, &rnd, op, &h, vsys);
			break;
		case 5 ... 7:
			op_ldt_read(&c, &rnd, op, &h, vsys);
			break;
		case 8 ... 14:
			op_tls_set(&c, &rnd, op, &h, vsys);
			break;
		case 15 ... 17:
			op_tls_get(&c, &rnd, op, &h, vsys);
			break;
		default:
			op_tls6(&c, &rnd, op, &h, vsys, &saved6);
			break;
		}
		out->iters++;
		if (vsys)
			out->kinds[CK_SYSENTER]++;
		main_fs_after(&c, d0, c.watched_written,
			      gdt.kernel64 && main_switched(&c));
		check_tls(&c, op);
		check_main_fs(&c, op);
		d1 = c.tls[WATCH_TLS - TLS_MIN];
		now = c.fs[0];
		if (fs_before && !now.sel) {
			out->kinds[CK_FS_ZEROED]++;
			changed = 1;
		} else if (now.sel && memcmp(&d0, &d1, sizeof(d0))) {
			if (memcmp(&now.d, &d1, sizeof(d1))) {
				out->kinds[CK_FS_KEPT]++;
				changed = 1;
			} else if (desc_marker(d1) >= 0) {
				out->kinds[CK_FS_FOLLOWED]++;
				changed = 1;
			}
		}
		if (changed)
			out->kinds[CK_FS_RPL0 + (fs_before & 3)]++;
		/*
		 * %fs was taken away: take it again when it loads.  Now and
		 * then, take it again anyway, with another RPL.  What an
		 * i386 kernel would have left decides (c.main_fs), so that
		 * the operations do not depend on when an x86-64 kernel
		 * switched the thread out; it may still hold an older
		 * descriptor there, which the load replaces.
		 */
		if ((!c.main_fs && desc_loadable(d1) &&
		     (gdt.kernel64 || ph_get_seg(fs) == 0)) ||
		    (c.main_fs && rpl % 4 == 0)) {
			unsigned int sel = WITH_RPL(TLS_SEL(WATCH_TLS),
						    rpl >> 2);

			mix(&h, sel);
			if (load_fs(sel, &skip_recs[0])) {
				note(op, "main: cannot load %#x", sel);
			} else {
				c.main_fs = sel;
				c.fs[0] = fs_loaded(sel, d1);
				c.nfs = 1;
			}
		}
		if (i % 64 == 63)
			check_ldt(&c, op);
		/* let the sibling see this descriptor (one CPU: it must) */
		if (i % 4 == 3)
			ph_int80(SYS_sched_yield, 0, 0, 0);
	}
	sib.stop = 1;
	pthread_join(t, NULL);
	out->checksum = h;
}

TEST_F_TIMEOUT(fz, ldt_tls_churn, 290)
{
	struct churn_arg a = {
		sub_seed("ldt_tls_churn"), fz_iterations(14000),
	};
	struct ph_result res;
	double t0 = ph_now();
	int k;

	TH_LOG("seed %lu (SEED=%lu replays it), %ld operations", fz_seed,
	       fz_seed, a.n);
	ph_run(churn_case, &a, 250, &res);
	EXPECT_CHILD_DONE(res);
	/* Only an x86-64 kernel leaves an older descriptor in %fs. */
	report(_metadata, "ldt_tls_churn", ck_name, CK_NR,
	       ((1u << CK_NR) - 1) & ~(vsys_entry ? 0 : 1u << CK_SYSENTER) &
	       ~(gdt.kernel64 ? 0 : 1u << CK_FS_KEPT), ph_now() - t0);
	TH_LOG("ldt_tls_churn: sibling with %%%s = %#x..%#x: %u checks, %u descriptor changes followed, %u times zeroed, %u reloads, %u stale",
	       sib_reg(), SIB_SEL(0), SIB_SEL(3), out->sib_checks,
	       out->sib_follow,
	       out->sib_zeroed, out->sib_reloads, out->sib_stale);
	TH_LOG("ldt_tls_churn: sibling checks (changes followed) with RPL 0-3: %u (%u), %u (%u), %u (%u), %u (%u)",
	       out->sib_rpl_checks[0], out->sib_rpl_follow[0],
	       out->sib_rpl_checks[1], out->sib_rpl_follow[1],
	       out->sib_rpl_checks[2], out->sib_rpl_follow[2],
	       out->sib_rpl_checks[3], out->sib_rpl_follow[3]);
	if (gdt.kernel64)
		TH_LOG("ldt_tls_churn: main thread switched out in %u windows of an operation or a check, %u times loaded again not to guess",
		       out->main_switched, out->main_again);
	EXPECT_LT(0, out->sib_checks);
	EXPECT_EQ(0, out->sib_stale);
	for (k = 0; k < 4; k++)
		EXPECT_LT(0, out->sib_rpl_checks[k]);
	CHECK_WORLD("ldt_tls_churn");
}

TEST_HARNESS_MAIN
