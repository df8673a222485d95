// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the user per-CPU segment: the descriptor we encode for
 * every possible CPU, and the copy that every online CPU's GDT holds.
 */

#include <kunit/test.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/smp.h>

#include <asm/desc.h>
#include <asm/pda.h>
#include <asm/segment.h>

static void pda_selector_abi_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, PDA_USER_SELECTOR, 0xeb);
	KUNIT_EXPECT_EQ(test, PDA_USER_SLOT_SIZE, 64);
}

static void pda_desc_encoding_test(struct kunit *test)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		struct desc_struct d = pda_user_seg_desc(cpu);

		KUNIT_EXPECT_EQ(test, get_desc_base(&d),
				(unsigned long)cpu << PDA_USER_SHIFT);
		KUNIT_EXPECT_EQ(test, get_desc_limit(&d), 0xfffffUL);
		/* Data, read/write, expand-up, accessed. */
		KUNIT_EXPECT_EQ(test, (unsigned int)d.type, 3U);
		KUNIT_EXPECT_EQ(test, (unsigned int)d.s, 1U);
		KUNIT_EXPECT_EQ(test, (unsigned int)d.dpl, 3U);
		KUNIT_EXPECT_EQ(test, (unsigned int)d.p, 1U);
		KUNIT_EXPECT_EQ(test, (unsigned int)d.d, 1U);
		KUNIT_EXPECT_EQ(test, (unsigned int)d.g, 1U);
		KUNIT_EXPECT_EQ(test, (unsigned int)d.l, 0U);
	}
}

static void pda_gdt_holds_desc_test(struct kunit *test)
{
	unsigned int cpu;

	if (!pda_user_seg_provided())
		kunit_skip(test, "no user per-CPU segment under Xen PV");

	cpus_read_lock();
	for_each_online_cpu(cpu) {
		struct desc_struct want = pda_user_seg_desc(cpu);
		struct desc_struct *gdt = get_cpu_gdt_rw(cpu);

		KUNIT_EXPECT_MEMEQ_MSG(test, &gdt[GDT_ENTRY_PDA_USER], &want,
				       sizeof(want), "CPU %u", cpu);
	}
	cpus_read_unlock();
}

struct pda_probe {
	u32 access;
	u32 limit;
	bool lar_ok;
	bool lsl_ok;
};

/* What the CPU itself makes of the selector, on the CPU it runs on. */
static void pda_probe_this_cpu(void *info)
{
	struct pda_probe *p = info;

	asm volatile("lar %[sel], %[ar]\n\tsetz %[ok]"
		     : [ar] "=r" (p->access), [ok] "=qm" (p->lar_ok)
		     : [sel] "r" (PDA_USER_SELECTOR) : "cc");
	asm volatile("lsl %[sel], %[lim]\n\tsetz %[ok]"
		     : [lim] "=r" (p->limit), [ok] "=qm" (p->lsl_ok)
		     : [sel] "r" (PDA_USER_SELECTOR) : "cc");
}

static void pda_cpu_sees_desc_test(struct kunit *test)
{
	unsigned int cpu;

	if (!pda_user_seg_provided())
		kunit_skip(test, "no user per-CPU segment under Xen PV");

	cpus_read_lock();
	for_each_online_cpu(cpu) {
		struct pda_probe p = { };

		smp_call_function_single(cpu, pda_probe_this_cpu, &p, 1);
		KUNIT_EXPECT_TRUE_MSG(test, p.lar_ok, "CPU %u", cpu);
		KUNIT_EXPECT_TRUE_MSG(test, p.lsl_ok, "CPU %u", cpu);
		/* G, D, P, DPL 3, S, type 3; bits 16-19 are undefined. */
		KUNIT_EXPECT_EQ_MSG(test, p.access & 0x00f0ff00, 0x00c0f300,
				    "CPU %u", cpu);
		KUNIT_EXPECT_EQ_MSG(test, p.limit, 0xffffffff, "CPU %u", cpu);
	}
	cpus_read_unlock();
}

static struct kunit_case pda_user_seg_cases[] = {
	KUNIT_CASE(pda_selector_abi_test),
	KUNIT_CASE(pda_desc_encoding_test),
	KUNIT_CASE(pda_gdt_holds_desc_test),
	KUNIT_CASE(pda_cpu_sees_desc_test),
	{}
};

static struct kunit_suite pda_user_seg_suite = {
	.name = "pda_user_seg",
	.test_cases = pda_user_seg_cases,
};

kunit_test_suite(pda_user_seg_suite);

MODULE_DESCRIPTION("KUnit tests for the x86 user per-CPU segment");
MODULE_LICENSE("GPL");
