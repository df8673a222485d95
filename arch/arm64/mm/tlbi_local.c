// SPDX-License-Identifier: GPL-2.0
/*
 * Leaf TLB invalidation without the inner-shareable broadcast for an
 * address space live on the flushing CPU alone (CONFIG_ARM64_TLBI_LOCAL).
 *
 * Off unless the kernel is booted with tlbi_local=on.  While it is off,
 * a change of address space and every flush do what they do without the
 * option: each path tests tlbi_local_key once, as the first statement of
 * mainline's inline (with jump labels, a branch to mainline's code that
 * is made a NOP when on), and nothing is counted.
 * On, the paths come here, and only here are flushes counted.
 *
 * The counters are vm events (/proc/vmstat), although they are arm64's:
 * the generic TLB events (NR_TLB_REMOTE_FLUSH and kin) live there too,
 * only under CONFIG_DEBUG_TLBFLUSH and on x86, and per-CPU vm events are
 * the cheapest counter the kernel has, read by the same tools.  They are
 * counted only while the option is on.
 *
 * A CPU holds an mm from the switch that installs its ASID until the next
 * switch, or the reserved TTBR0 and ASID, on that CPU.  That is not
 * current->mm: a lazy kernel thread keeps the user TTBR0, so the CPU stays
 * a holder while it idles.  mm->context.nr_active_cpus counts the holders.
 *
 * A leaf-only invalidation of user addresses (last_level: no page-table
 * page freed or unshared, see tlb_flush(); contpte's included) made by
 * the only holder uses a non-shareable TLBI; one made while no CPU holds
 * the mm issues no TLBI at all.  Either way every other CPU is first
 * marked in the mm's stale mask, mm->context.tlbi_stale, and a marked CPU
 * flushes the ASID locally before it installs it again.  Every other
 * flush broadcasts, as it does without this option: flush_tlb_mm(),
 * exit_mmap()'s included (another CPU's walk cache may hold the tables),
 * those that free or unshare page tables, non-leaf ranges (THP collapse,
 * mremap, hugetlb protection changes) and, since CnP lets CPUs share TLB
 * entries, all of them when CnP is in use.
 *
 * The SMMU is not a holder and needs none of this: SMMUv3 ignores
 * broadcast TLBIs (CR2.PTM) and SVA is kept right by
 * mmu_notifier_arch_invalidate_secondary_tlbs(), which every path here
 * calls, local and skipped ones included.  An mm with a pinned ASID
 * (arm64_mm_context_get(), which nothing calls in 6.12) would broadcast.
 *
 * The stale mask is the option's own: mm_cpumask() means "may hold" to
 * generic code (MMU_LAZY_TLB_SHOOTDOWN, clear_tasks_mm_cpumask()), and
 * arm64 leaves it alone.  Software PAN is excluded in Kconfig: it installs
 * an ASID outside the switch.  A CPU coming online invalidates its whole
 * TLB in __cpu_setup, so a mark left for an offline CPU costs at most one
 * needless catch-up.
 *
 * What the design relies on and cannot check: that a CPU neither walks
 * nor uses TLB entries for an ASID that is not in its TTBR.  Arm has not
 * said so.
 */

#include <linux/atomic.h>
#include <linux/cpufeature.h>
#include <linux/cpumask.h>
#include <linux/init.h>
#include <linux/jump_label.h>
#include <linux/kstrtox.h>
#include <linux/mm.h>
#include <linux/mmu_context.h>
#include <linux/mmu_notifier.h>
#include <linux/percpu.h>
#include <linux/printk.h>
#include <linux/vmstat.h>

#include <asm/tlbflush.h>

enum tlbi_scope { SCOPE_BROADCAST, SCOPE_LOCAL, SCOPE_SKIP };

DEFINE_STATIC_KEY_FALSE_RO(tlbi_local_key);
/* Tested by the inline flushes, module code included. */
EXPORT_SYMBOL_GPL(tlbi_local_key);

/* The mm this CPU holds, counted in its nr_active_cpus; NULL for none. */
static DEFINE_PER_CPU(struct mm_struct *, tlbi_local_mm);

static bool tlbi_local_param __initdata;

static int __init tlbi_local_setup(char *arg)
{
	if (!arg)
		return -EINVAL;
	return kstrtobool(arg, &tlbi_local_param);
}
early_param("tlbi_local", tlbi_local_setup);

/*
 * After smp_init(), so the CnP capability is final, and before any user
 * address space exists: the first user process is started after the
 * initcalls, and usermode helpers are enabled at rootfs_initcall.  So no
 * CPU holds an mm that flushes here without being counted.
 */
static int __init tlbi_local_init(void)
{
	if (!tlbi_local_param) {
		pr_info("tlbi_local: off (boot with tlbi_local=on to use it)\n");
		return 0;
	}
	if (system_supports_cnp()) {
		pr_info("tlbi_local: off (CnP shares TLB entries between CPUs)\n");
		return 0;
	}
	static_branch_enable(&tlbi_local_key);
	pr_info("tlbi_local: on\n");
	return 0;
}
arch_initcall(tlbi_local_init);

static void local_flush_tlb_asid(unsigned long asid)
{
	unsigned long arg = __TLBI_VADDR(0, asid);

	/*
	 * No dsb(nshst) first: this CPU wrote none of the entries; the
	 * flusher's dsb(ishst) made them visible before it marked us.  The
	 * TTBR write that follows ends with an isb.
	 */
	__tlbi(aside1, arg);
	__tlbi_user(aside1, arg);
	__tlbi_sync_s1nsh();
}

/* Every CPU but (if it holds @mm) this one must flush before using @mm. */
static void tlbi_local_mark_stale(struct mm_struct *mm, bool self)
{
	struct cpumask *stale = &mm->context.tlbi_stale;
	unsigned int this = smp_processor_id();
	unsigned int cpu;

	/* Atomic bit by bit, and only the bits a catch-up cleared since. */
	for_each_cpu_andnot(cpu, cpu_possible_mask, stale) {
		if (!self || cpu != this)
			cpumask_set_cpu(cpu, stale);
	}
}

/*
 * How a leaf-only flush of @mm is done.  Preemption is disabled and the
 * new PTEs are visible (dsb(ishst)).  The inline callers test
 * tlbi_local_enabled() first; testing it again keeps the exported entry
 * points right for a caller that does not: with the key off no CPU is
 * counted as a holder, and every flush would look skippable.
 */
static enum tlbi_scope tlbi_local_scope(struct mm_struct *mm)
{
	bool self = this_cpu_read(tlbi_local_mm) == mm;
	enum tlbi_scope scope = SCOPE_BROADCAST;

	if (!tlbi_local_enabled() ||
	    refcount_read(&mm->context.pinned) ||
	    atomic_read(&mm->context.nr_active_cpus) > self)
		goto out;

	tlbi_local_mark_stale(mm, self);
	/*
	 * Store buffering against tlbi_local_hold(): we mark, then read
	 * the count; a CPU switching in counts itself, then reads its mark.
	 * With a full barrier on both sides at least one sees the other:
	 * either we see it counted and broadcast, or it sees its mark and
	 * catches up before its TTBR write.  The acquire keeps our later
	 * frees of pages after this read.
	 */
	smp_mb();
	if (atomic_read_acquire(&mm->context.nr_active_cpus) > self)
		goto out;
	scope = self ? SCOPE_LOCAL : SCOPE_SKIP;
out:
	count_vm_event(scope == SCOPE_BROADCAST ? ARM64_TLBI_BROADCAST :
		       scope == SCOPE_LOCAL ? ARM64_TLBI_LOCAL : ARM64_TLBI_SKIPPED);
	return scope;
}

/*
 * The flushes below are nosync, as are the helpers they replace: the
 * caller's dsb(ish) (__tlbi_sync_s1ish(), arch_tlbbatch_flush()) or, if
 * it has none, the dsb(ish) of __switch_to() before this task runs on
 * another CPU, completes a local TLBI as it completes a broadcast one.
 */
void __tlbi_local_flush_page_nosync(struct mm_struct *mm, unsigned long uaddr)
{
	unsigned long addr;

	preempt_disable();
	dsb(ishst);
	addr = __TLBI_VADDR(uaddr, ASID(mm));
	switch (tlbi_local_scope(mm)) {
	case SCOPE_BROADCAST:
		__tlbi(vale1is, addr);
		__tlbi_user(vale1is, addr);
		break;
	case SCOPE_LOCAL:
		__tlbi(vale1, addr);
		__tlbi_user(vale1, addr);
		break;
	case SCOPE_SKIP:
		break;
	}
	preempt_enable();
	uaddr &= PAGE_MASK;
	mmu_notifier_arch_invalidate_secondary_tlbs(mm, uaddr,
						    uaddr + PAGE_SIZE);
}

/*
 * A range that is not leaf-only may free or unshare page tables, whose
 * walks another CPU that ran @mm earlier may cache: it broadcasts.  A
 * leaf-only range too long for a TLBI per page flushes the whole ASID,
 * as mainline does, here too on this CPU alone when it may.
 */
void __tlbi_local_flush_range_nosync(struct mm_struct *mm, unsigned long start,
				     unsigned long end, unsigned long stride,
				     bool last_level, int tlb_level)
{
	unsigned long asid, pages;
	bool whole_asid;

	if (!last_level) {
		count_vm_event(ARM64_TLBI_BROADCAST);
		__flush_tlb_range_nosync_bcast(mm, start, end, stride,
					       last_level, tlb_level);
		return;
	}

	start = round_down(start, stride);
	end = round_up(end, stride);
	pages = (end - start) >> PAGE_SHIFT;
	/* The limits of __flush_tlb_range_nosync_bcast(). */
	whole_asid = (!system_supports_tlb_range() &&
		      (end - start) >= (MAX_DVM_OPS * stride)) ||
		     pages > MAX_TLBI_RANGE_PAGES;

	preempt_disable();
	dsb(ishst);
	asid = ASID(mm);
	switch (tlbi_local_scope(mm)) {
	case SCOPE_BROADCAST:
		if (whole_asid) {
			__tlbi(aside1is, __TLBI_VADDR(0, asid));
			__tlbi_user(aside1is, __TLBI_VADDR(0, asid));
		} else {
			__flush_tlb_range_op(vale1is, start, pages, stride,
					     asid, tlb_level, true,
					     lpa2_is_enabled());
		}
		break;
	case SCOPE_LOCAL:
		if (whole_asid) {
			__tlbi(aside1, __TLBI_VADDR(0, asid));
			__tlbi_user(aside1, __TLBI_VADDR(0, asid));
		} else {
			__flush_tlb_range_op(vale1, start, pages, stride,
					     asid, tlb_level, true,
					     lpa2_is_enabled());
		}
		break;
	case SCOPE_SKIP:
		break;
	}
	preempt_enable();
	if (whole_asid)
		mmu_notifier_arch_invalidate_secondary_tlbs(mm, 0, -1UL);
	else
		mmu_notifier_arch_invalidate_secondary_tlbs(mm, start, end);
}

/* flush_tlb_mm(): always a broadcast, counted. */
void __tlbi_local_flush_mm(struct mm_struct *mm)
{
	count_vm_event(ARM64_TLBI_BROADCAST);
	__flush_tlb_mm_bcast(mm);
}

/* Count this CPU as a holder of @mm, and catch up if a flush skipped it. */
static void tlbi_local_hold(struct mm_struct *mm)
{
	unsigned int cpu = smp_processor_id();

	atomic_inc(&mm->context.nr_active_cpus);
	this_cpu_write(tlbi_local_mm, mm);
	/*
	 * Catalin Marinas (2020): nothing orders a TTBR write after a store
	 * to memory.  A DSB does: the count is visible to every flusher
	 * before this CPU can walk with the ASID.  It is also the full
	 * barrier of the store-buffering pair in tlbi_local_scope().
	 */
	dsb(ish);
	if (cpumask_test_cpu(cpu, &mm->context.tlbi_stale) &&
	    cpumask_test_and_clear_cpu(cpu, &mm->context.tlbi_stale)) {
		local_flush_tlb_asid(ASID(mm));
		count_vm_event(ARM64_TLBI_CATCHUP);
	}
}

/* After @prev's ASID has left TTBR1 and TTBR0, and the isb. */
static void tlbi_local_release(struct mm_struct *prev)
{
	if (!prev)
		return;
	/*
	 * Mark Rutland (2020): the isb does not complete walks that started
	 * with the old TTBR; only a DSB does.  Until then this CPU may still
	 * cache entries of @prev, so it must stay counted.
	 */
	dsb(ish);
	atomic_dec(&prev->context.nr_active_cpus);
}

/*
 * check_and_switch_context()'s TTBR write, counted.  IRQs are disabled
 * here: exec's activate_mm() comes with them enabled, and an EFI runtime
 * call must not switch in between.  The TTBRs are written here, not on
 * return to user: the option excludes software PAN, which defers the
 * write and installs an ASID from interrupt context too (uaccess).
 */
void tlbi_local_set_ttbr0(struct mm_struct *mm)
{
	struct mm_struct *prev;
	unsigned long flags;

	local_irq_save(flags);
	prev = this_cpu_read(tlbi_local_mm);
	if (prev != mm)
		tlbi_local_hold(mm);
	cpu_switch_mm(mm->pgd, mm);
	if (prev != mm)
		tlbi_local_release(prev);
	local_irq_restore(flags);
}

/*
 * __switch_mm(&init_mm).  cpu_set_reserved_ttbr0() alone would leave the
 * held mm's ASID in TTBR1 (TCR_EL1.A1 is set), and with it the TLB
 * entries of that ASID usable on this CPU although it no longer counts.
 * Install the reserved ASID #0 too, as the entry code does for software
 * PAN (context.c never allocates #0), so that the ASID has left this CPU
 * before it stops counting.
 */
void tlbi_local_switch_to_reserved(void)
{
	unsigned long flags;

	local_irq_save(flags);
	cpu_do_switch_mm(__pa_symbol(reserved_pg_dir), &init_mm);
	tlbi_local_release(this_cpu_xchg(tlbi_local_mm, NULL));
	local_irq_restore(flags);
}
