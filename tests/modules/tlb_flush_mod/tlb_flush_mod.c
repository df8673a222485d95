// SPDX-License-Identifier: GPL-2.0
/*
 * An out-of-tree module that flushes user TLB entries the way a driver
 * does, through the inline flush_tlb_page() and flush_tlb_range().  With
 * CONFIG_ARM64_TLBI_LOCAL those inline into a test of the series' static
 * key tlbi_local_key and, with it on, calls to the thunks
 * __tlbi_local_flush_page_nosync_thunk and
 * __tlbi_local_flush_range_nosync_thunk, so the module only links
 * (modpost) if the kernel exports them, and only loads if they resolve.
 * Its init flushes a page and the whole of the loading process's stack
 * VMA "flushes" times each (parameter), so that the tlbi_* counters of
 * /proc/vmstat grow by at least twice that; the guest
 * test tlb_module loads it and checks.  Only the page flushes can be
 * local: a range flush is not leaf-only and always broadcasts.
 *
 * No module can make these calls in a kernel with CONFIG_MMU_NOTIFIER=y,
 * with or without the series: they end in
 * __mmu_notifier_arch_invalidate_secondary_tlbs(), which is not exported.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/init.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <asm/tlbflush.h>

#define MAX_FLUSHES	65536

static unsigned int flushes = 1024;
module_param(flushes, uint, 0444);
MODULE_PARM_DESC(flushes, "flush_tlb_page() and flush_tlb_range() calls init makes, each (at most 65536)");

static int __init tlb_flush_mod_init(void)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	unsigned int i;

	if (!mm || flushes > MAX_FLUSHES)
		return -EINVAL;
	mmap_read_lock(mm);
	vma = vma_lookup(mm, mm->start_stack);
	if (!vma) {
		mmap_read_unlock(mm);
		return -ENOENT;
	}
	for (i = 0; i < flushes; i++) {
		flush_tlb_page(vma, vma->vm_start);
		flush_tlb_range(vma, vma->vm_start, vma->vm_end);
		cond_resched();
	}
	mmap_read_unlock(mm);
	pr_info("%u flush_tlb_page() and %u flush_tlb_range() of pid %d's stack\n",
		flushes, flushes, task_pid_nr(current));
	return 0;
}

static void __exit tlb_flush_mod_exit(void)
{
}

module_init(tlb_flush_mod_init);
module_exit(tlb_flush_mod_exit);
MODULE_DESCRIPTION("Calls the inline user TLB flushes from a module");
MODULE_LICENSE("GPL");
