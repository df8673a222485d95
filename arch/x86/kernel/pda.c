// SPDX-License-Identifier: GPL-2.0
/*
 * User per-CPU segment for x86, 32-bit and 64-bit kernels.
 *
 * Each CPU's GDT holds its own copy of entry PDA_USER_GDT_ENTRY: a flat
 * DPL-3 data segment based at cpu << PDA_USER_SHIFT.  Nothing has to
 * rewrite it when a thread migrates: a selector load takes the hidden base
 * from the GDT of the CPU it runs on, and the kernel loads the user's
 * selectors again before a thread runs user code on another CPU.  A 32-bit
 * SMP kernel does it at every return to user space (RESTORE_REGS pops
 * %fs, the SYSEXIT path moves it from pt_regs); a 64-bit kernel at every
 * context switch (__switch_to(), which with FSGSBASE leaves this
 * selector's base alone).  A thread that keeps the selector in %fs or %gs
 * therefore always sees its current CPU's base, and a single instruction
 * through it cannot be split by a migration.
 *
 * The descriptor is no more powerful than a set_thread_area() TLS entry:
 * same type, same DPL, and paging still guards the kernel half.
 *
 * Under Xen PV there is no segment: see pda_user_seg_provided().
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
 * Called from cpu_init_exception_handling() as each CPU comes up, hotplug
 * included, before it can run user tasks: on every CPU of a native, HVM or
 * PVH kernel, but on the boot CPU only under Xen PV, which leaves it out.
 */
void pda_setup_user_seg(unsigned int cpu)
{
	struct desc_struct d = pda_user_seg_desc(cpu);

	if (!pda_user_seg_provided())
		return;

	write_gdt_entry(get_cpu_gdt_rw(cpu), GDT_ENTRY_PDA_USER, &d,
			DESCTYPE_S);
}

/* Before init runs, so every process sees the same AT_HWCAP2. */
static int __init pda_user_seg_hwcap(void)
{
	if (pda_user_seg_provided())
		elf_hwcap2 |= HWCAP2_PDA_USER_SEG;
	return 0;
}
arch_initcall(pda_user_seg_hwcap);
