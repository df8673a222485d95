// SPDX-License-Identifier: GPL-2.0
/*
 * User per-CPU segment for 32-bit x86.
 *
 * Each CPU's GDT holds its own copy of entry PDA_USER_GDT_ENTRY: a flat
 * DPL-3 data segment based at cpu << PDA_USER_SHIFT.  Nothing ever has to
 * rewrite it when a thread migrates: the kernel reloads the user's %fs on
 * every return to user space (RESTORE_REGS pops it), and that load takes
 * the hidden base from the GDT of the CPU the thread is now on.  A thread
 * that keeps the selector in %fs therefore always sees its current CPU's
 * base, and a single instruction through it cannot be split by a
 * migration.
 *
 * The descriptor is no more powerful than a set_thread_area() TLS entry:
 * same type, same DPL, and paging still guards the kernel half.
 */

#include <linux/build_bug.h>
#include <linux/elf.h>
#include <linux/init.h>
#include <linux/smp.h>

#include <asm/desc.h>
#include <asm/hwcap2.h>
#include <asm/pda.h>
#include <asm/segment.h>

static_assert(GDT_ENTRY_PDA_USER == PDA_USER_GDT_ENTRY);
static_assert(GDT_ENTRY_PDA_USER < GDT_ENTRIES);
static_assert(PDA_USER_SLOT_SIZE == 1 << PDA_USER_SHIFT);

/* Page-granular 4 GiB limit: the slot table may live anywhere. */
#define PDA_USER_LIMIT	0xfffff

struct desc_struct pda_user_seg_desc(unsigned int cpu)
{
	unsigned long base = (unsigned long)cpu << PDA_USER_SHIFT;
	struct desc_struct d = GDT_ENTRY_INIT(DESC_DATA32 | DESC_USER, base,
					      PDA_USER_LIMIT);

	return d;
}

/*
 * Called from cpu_init_exception_handling() on every CPU as it comes up,
 * hotplug included, before it can run user tasks.
 */
void pda_setup_user_seg(unsigned int cpu)
{
	struct desc_struct d = pda_user_seg_desc(cpu);

	write_gdt_entry(get_cpu_gdt_rw(cpu), GDT_ENTRY_PDA_USER, &d,
			DESCTYPE_S);
	elf_hwcap2 |= HWCAP2_PDA_USER_SEG;
}
