// SPDX-License-Identifier: GPL-2.0
/*
 * incform.*: what makes the per-CPU increment through the segment fast or
 * slow, one cause at a time.
 *
 * Why: on an AMD EPYC (family 25 model 17) the i386 build's inc.fs_slot.1t
 * ("addl $1, %fs:slot", the PDA's increment, eight in a row on one word)
 * costs ~7 cycles, more than an rseq critical section (~2), while the
 * x86-64 build's inc.gs_slot.1t costs ~1; on an Intel Xeon it is ~2 against
 * ~7. Eight adds to one word are a chain: each reads what the one before
 * stored, so the figure is how fast the core hands a store to the next load
 * of the same address (store-to-load forwarding, or memory renaming, which
 * skips it). These rows change one thing at a time:
 *
 *  base       plain: no prefix, the baseline; fs0 (gs0): a PDA-shaped
 *             descriptor with base 0, what CPU 0 gets; fsbase (gsbase):
 *             the same descriptor with base 64, what CPU 1 gets. The two
 *             are LDT entries written the same way that differ in the
 *             base alone, and their rows run the same code: only the
 *             selector loaded differs. So fs0 against plain is the prefix,
 *             fsbase against fs0 is a non-zero base.
 *  mode       the same rows in both builds: %fs in 32-bit mode (i386
 *             build), %gs in 64-bit mode (x86-64 build), where a selector
 *             load also takes the (32-bit) base from the descriptor, as
 *             the PDA's does. The x86-64 build adds gsmsr: the same base
 *             written to the base MSR with arch_prctl(ARCH_SET_GS), the
 *             way mem.*.gsbase sets theirs, to see whether where the base
 *             came from matters.
 *  form       rmw: "addl $1, SEG:(r)", one instruction, the only form here
 *             that is a per-CPU increment (nothing can come between its
 *             load and its store); split: "movl SEG:(r), t; addl $1, t;
 *             movl t, SEG:(r)", the same work in three instructions, which
 *             a migration can split: a measurement of whether the one-
 *             instruction form is what is slow, not an alternative.
 *             rmw_abs: the address as an absolute disp32, "addl $1,
 *             SEG:sym", what inc.fs_slot and pda.h's pda_add32_raw()
 *             compile to in a non-PIC 32-bit program; rmw_rip (x86-64):
 *             "addl $1, SEG:sym(%rip)", what pda_add32_raw() compiles to
 *             in a 64-bit one.
 *  addresses  1addr: eight increments of one word, one chain of dependent
 *             read-modify-writes, so the figure is the latency of a link;
 *             4addr: four words in turn, four chains; 8addr: eight words,
 *             each incremented once per iteration, independent counters,
 *             so the figure is throughput unless a link takes longer than
 *             eight increments. The words are consecutive in one 64-byte
 *             slot, as a PDA slot's counters are.
 *
 * Every row checks that the words it used hold the expected sums, in the
 * slot the base selects (slot 1 for base 64), and that no other word of
 * either slot changed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <asm/ldt.h>
#include <sys/syscall.h>
#include "segs.h"

#define R	SB_ACC_NAME
#define SEG	"%%" R ":"
#define NZ_BASE	64ul	/* 1 << SB_SLOT_SHIFT: the PDA base of CPU 1 */

enum { B_PLAIN, B_ZERO, B_NZ, B_MSR };

/* Slot 0 is what every row names; base 64 moves it to slot 1. */
static struct sb_slot cnt[2];
static unsigned long done;	/* iterations run since the row's setup */
static unsigned int ldt_sel[2];	/* base 0, base 64 */
static int ldt_state;		/* 0 not tried, 1 usable, -1 not */
static char ldt_why[SB_REASON_LEN];

/* Entries SB_LDT_INCFORM (base 0) and + 1 (base 64), written once. */
static int ldt_setup(char *why)
{
	struct user_desc d;
	int i, sig;

	for (i = 0; !ldt_state && i < 2; i++) {
		sb_flat_desc(&d, i * NZ_BASE);
		d.entry_number = SB_LDT_INCFORM + i;
		/* func 0x11: write an entry, in the modern format. */
		if (syscall(SYS_modify_ldt, 0x11, &d, sizeof(d))) {
			snprintf(ldt_why, sizeof(ldt_why), "modify_ldt: %s",
				 strerror(errno));
			ldt_state = -1;
			break;
		}
		ldt_sel[i] = (SB_LDT_INCFORM + i) * 8 + 4 + 3;	/* LDT, RPL 3 */
		sig = sb_trap_seg(SB_ACC_REG, ldt_sel[i],
				  (uintptr_t)&cnt[0].v[0], SB_PROBE_WRITE);
		if (sig) {
			snprintf(ldt_why, sizeof(ldt_why),
				 "modify_ldt selector %#x in %%" R " raises %s",
				 ldt_sel[i], sb_sig_name(sig));
			ldt_state = -1;
		}
	}
	if (!ldt_state)
		ldt_state = 1;
	if (ldt_state < 0) {
		snprintf(why, SB_REASON_LEN, "%s", ldt_why);
		return -1;
	}
	return 0;
}

static int setup_incform(const struct bench *b, char *why)
{
	int nz = b->arg2 == B_NZ;

	switch (b->arg2) {
	case B_ZERO:
	case B_NZ:
		if (ldt_setup(why))
			return -1;
		snprintf(why, SB_REASON_LEN, "modify_ldt selector %#x, base %lu",
			 ldt_sel[nz], nz ? NZ_BASE : 0ul);
		break;
#ifdef __x86_64__
	case B_MSR:
		if (sb_gs_base_usable(NZ_BASE, (uintptr_t)&cnt[0].v[0], why))
			return -1;
		snprintf(why, SB_REASON_LEN,
			 "selector 0, base %lu by arch_prctl", NZ_BASE);
		break;
#endif
	}
	memset(cnt, 0, sizeof(cnt));
	done = 0;
	return 0;
}

static unsigned int enter(const struct bench *b)
{
	switch (b->arg2) {
	case B_ZERO:
		return sb_seg_enter(ldt_sel[0], 0);
	case B_NZ:
		return sb_seg_enter(ldt_sel[1], 0);
	case B_MSR:
		return sb_seg_enter(0, NZ_BASE);
	}
	return 0;
}

static void leave(const struct bench *b, unsigned int save)
{
	if (b->arg2 != B_PLAIN)
		sb_seg_leave(save, b->arg2 == B_MSR ? NZ_BASE : 0);
}

/* Byte o of slot 0 through a register; word 0 as a disp32; RIP-relative. */
#define AT(o)		o "(%[p])"
#define ABS		"%c[a]"
#define RIP		"%c[a](%%rip)"

#define RMW(pfx, at)	"addl $1, " pfx at "\n\t"
#define SPLIT(pfx, at)	"movl " pfx at ", %[t]\n\t"			\
			"addl $1, %[t]\n\t"				\
			"movl %[t], " pfx at "\n\t"

/*
 * Eight increments, at the byte offsets in @offs (assembler .irp):
 * one word eight times, four words in turn, eight words.
 */
#define EIGHT(op, pfx, offs)	".irp o," offs "\n\t"			\
				op(pfx, AT("\\o")) ".endr\n\t"
#define ADDR1		"0,0,0,0,0,0,0,0"
#define ADDR4		"0,4,8,12,0,4,8,12"
#define ADDR8		"0,4,8,12,16,20,24,28"

/*
 * One run hook per instruction text. The rows of one text with base 0 and
 * base 64 share the hook: same code, another selector.
 */
#define RUNNER(name, text)						\
static void name(const struct bench *b, unsigned long n)		\
{									\
	uintptr_t p = (uintptr_t)&cnt[0];				\
	unsigned int t, save = enter(b);				\
									\
	SB_LOOP(n, asm volatile(text					\
				: [t] "=&r" (t)				\
				: [p] "r" (p), [a] "i" (&cnt[0].v[0])	\
				: "memory", "cc"));			\
	leave(b, save);							\
	done += n;							\
}

RUNNER(rmw1_plain, EIGHT(RMW, "", ADDR1))
RUNNER(rmw1_seg, EIGHT(RMW, SEG, ADDR1))
RUNNER(rmw4_plain, EIGHT(RMW, "", ADDR4))
RUNNER(rmw4_seg, EIGHT(RMW, SEG, ADDR4))
RUNNER(rmw8_plain, EIGHT(RMW, "", ADDR8))
RUNNER(rmw8_seg, EIGHT(RMW, SEG, ADDR8))
RUNNER(split1_plain, EIGHT(SPLIT, "", ADDR1))
RUNNER(split1_seg, EIGHT(SPLIT, SEG, ADDR1))
RUNNER(split4_plain, EIGHT(SPLIT, "", ADDR4))
RUNNER(split4_seg, EIGHT(SPLIT, SEG, ADDR4))
RUNNER(split8_plain, EIGHT(SPLIT, "", ADDR8))
RUNNER(split8_seg, EIGHT(SPLIT, SEG, ADDR8))
RUNNER(abs_plain, SB_REP8(RMW("", ABS)))
RUNNER(abs_seg, SB_REP8(RMW(SEG, ABS)))
#ifdef __x86_64__
RUNNER(rip_plain, SB_REP8(RMW("", RIP)))
RUNNER(rip_seg, SB_REP8(RMW(SEG, RIP)))
#endif

static int verify_incform(const struct bench *b, char *why)
{
	unsigned int slot = b->arg2 == B_NZ || b->arg2 == B_MSR;
	unsigned int naddr = b->arg, s, w;
	uint32_t want = (uint32_t)(done * (SB_UNROLL / naddr)), exp, got;

	for (s = 0; s < ARRAY_SIZE(cnt); s++) {
		for (w = 0; w < SB_SLOT_INTS; w++) {
			exp = s == slot && w < naddr ? want : 0;
			got = cnt[s].v[w];
			if (got != exp) {
				snprintf(why, SB_REASON_LEN,
					 "slot %u word %u: %u, expected %u",
					 s, w, got, exp);
				return -1;
			}
		}
	}
	return 0;
}

#define ROW(fn, bn, base, na, hook, d)					\
	{ .name = "incform." fn "." bn "." #na "addr",			\
	  .group = "increment-form", .desc = d, .ops = SB_UNROLL,	\
	  .flags = BF_COUNTED, .arg = na, .arg2 = base,			\
	  .setup = setup_incform, .run = hook, .verify = verify_incform }

/* The descriptions' last part: which segment, which base. */
#define NOSEG	", no prefix"
#define BASE0	", %" R " base 0"
#define BASE64	", %" R " base 64"

const struct bench sb_incform_benches[] = {
	ROW("rmw", "plain", B_PLAIN, 1, rmw1_plain,
	    "addl $1, 1 word (one chain)" NOSEG),
	ROW("rmw", R "0", B_ZERO, 1, rmw1_seg,
	    "addl $1, 1 word (one chain)" BASE0),
	ROW("rmw", R "base", B_NZ, 1, rmw1_seg,
	    "addl $1, 1 word (one chain)" BASE64),
	ROW("rmw", "plain", B_PLAIN, 4, rmw4_plain,
	    "addl $1, 4 words in turn" NOSEG),
	ROW("rmw", R "0", B_ZERO, 4, rmw4_seg,
	    "addl $1, 4 words in turn" BASE0),
	ROW("rmw", R "base", B_NZ, 4, rmw4_seg,
	    "addl $1, 4 words in turn" BASE64),
	ROW("rmw", "plain", B_PLAIN, 8, rmw8_plain,
	    "addl $1, 8 words (independent)" NOSEG),
	ROW("rmw", R "0", B_ZERO, 8, rmw8_seg,
	    "addl $1, 8 words (independent)" BASE0),
	ROW("rmw", R "base", B_NZ, 8, rmw8_seg,
	    "addl $1, 8 words (independent)" BASE64),
	ROW("split", "plain", B_PLAIN, 1, split1_plain,
	    "load+add+store, 1 word (one chain)" NOSEG),
	ROW("split", R "0", B_ZERO, 1, split1_seg,
	    "load+add+store, 1 word (one chain)" BASE0),
	ROW("split", R "base", B_NZ, 1, split1_seg,
	    "load+add+store, 1 word (one chain)" BASE64),
	ROW("split", "plain", B_PLAIN, 4, split4_plain,
	    "load+add+store, 4 words in turn" NOSEG),
	ROW("split", R "0", B_ZERO, 4, split4_seg,
	    "load+add+store, 4 words in turn" BASE0),
	ROW("split", R "base", B_NZ, 4, split4_seg,
	    "load+add+store, 4 words in turn" BASE64),
	ROW("split", "plain", B_PLAIN, 8, split8_plain,
	    "load+add+store, 8 words (independent)" NOSEG),
	ROW("split", R "0", B_ZERO, 8, split8_seg,
	    "load+add+store, 8 words (independent)" BASE0),
	ROW("split", R "base", B_NZ, 8, split8_seg,
	    "load+add+store, 8 words (independent)" BASE64),
	ROW("rmw_abs", "plain", B_PLAIN, 1, abs_plain,
	    "addl $1, 1 word at a disp32 address" NOSEG),
	ROW("rmw_abs", R "0", B_ZERO, 1, abs_seg,
	    "addl $1, 1 word at a disp32 address" BASE0),
	ROW("rmw_abs", R "base", B_NZ, 1, abs_seg,
	    "addl $1, 1 word at a disp32 address" BASE64),
#ifdef __x86_64__
	ROW("rmw_rip", "plain", B_PLAIN, 1, rip_plain,
	    "addl $1, 1 word at a RIP-relative address" NOSEG),
	ROW("rmw_rip", R "0", B_ZERO, 1, rip_seg,
	    "addl $1, 1 word at a RIP-relative address" BASE0),
	ROW("rmw_rip", R "base", B_NZ, 1, rip_seg,
	    "addl $1, 1 word at a RIP-relative address" BASE64),
	ROW("rmw", "gsmsr", B_MSR, 1, rmw1_seg,
	    "addl $1, 1 word (one chain), %gs base 64 from the MSR"),
#endif
	{ }
};
