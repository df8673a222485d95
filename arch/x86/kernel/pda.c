// SPDX-License-Identifier: GPL-2.0
/*
 * User per-CPU segment for 32-bit x86.
 *
 * Each CPU's GDT holds its own copy of entry PDA_USER_GDT_ENTRY: a flat
 * DPL-3 data segment based at cpu << PDA_USER_SHIFT.  Nothing has to
 * rewrite it when a thread migrates: every return to user space loads the
 * user's %fs again (RESTORE_REGS pops it, the SYSEXIT path moves it from
 * pt_regs), and that load takes the hidden base from the GDT of the CPU
 * the thread is now on.  A thread that keeps the selector in %fs therefore
 * always sees its current CPU's base, and a single instruction through it
 * cannot be split by a migration.
 *
 * The descriptor is no more powerful than a set_thread_area() TLS entry:
 * same type, same DPL, and paging still guards the kernel half.
 */

#include <linux/build_bug.h>
#include <linux/elf.h>
#include <linux/init.h>

#include <asm/desc.h>
#include <asm/hwcap2.h>
#include <asm/pda.h>
#include <asm/segment.h>

static_assert(GDT_ENTRY_PDA_USER == PDA_USER_GDT_ENTRY);
static_assert(GDT_ENTRY_PDA_USER < GDT_ENTRIES);
static_assert(PDA_USER_SLOT_SIZE == 1 << PDA_USER_SHIFT);

/*
 * Called from cpu_init_exception_handling() on every CPU as it comes up,
 * hotplug included, before it can run user tasks.
 */
void pda_setup_user_seg(unsigned int cpu)
{
	struct desc_struct d = pda_user_seg_desc(cpu);

	write_gdt_entry(get_cpu_gdt_rw(cpu), GDT_ENTRY_PDA_USER, &d,
			DESCTYPE_S);
}

/* Before init runs, so every process sees the same AT_HWCAP2. */
static int __init pda_user_seg_hwcap(void)
{
	elf_hwcap2 |= HWCAP2_PDA_USER_SEG;
	return 0;
}
arch_initcall(pda_user_seg_hwcap);
