/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One per-CPU increment, four ways, as inline asm. Each adds 1 to the
 * calling CPU's slot of @slots (or to one shared word) and is exact under
 * preemption and migration, each for its own reason:
 *
 *  inc_pda_slot  one "addl $1, %fs:slots" (x86-64: %gs): an instruction
 *                is never split by an interrupt, and the PDA register's
 *                base is this CPU's slot (real PDA) or this pinned
 *                thread's (emulation)
 *  inc_rseq      rseq critical section in the librseq style: read cpu_id,
 *                add to that slot, commit with the final store; the
 *                kernel restarts it at the abort label if preempted
 *  inc_xadd      lock xadd on the slot the caller chose with getcpu
 *  inc_shared    lock xadd on one word for everybody
 */
#ifndef SB_INCR_H
#define SB_INCR_H

#include "cpuread.h"

/* Signature before the abort label; must match what glibc registered. */
#if defined(SB_X86)
#define SB_RSEQ_SIG "0x53053053"
#else
#define SB_RSEQ_SIG "0xe7f5def3"
#endif

#ifdef __i386__
static inline void inc_pda_slot(struct sb_slot *slots)
{
	asm volatile("addl $1, %%fs:%0" : "+m" (slots[0].v[0]) : : "cc");
}

/* Returns 0 when committed, 1 when the kernel aborted it. */
static inline int inc_rseq(struct sb_slot *slots)
{
	asm goto(".pushsection __rseq_cs, \"aw\"\n\t"
		 ".balign 32\n\t"
		 "3:\n\t"
		 ".long 0x0, 0x0\n\t"		/* version, flags */
		 ".long 1f, 0x0, 2f - 1f, 0x0, 4f, 0x0\n\t"
		 ".popsection\n\t"
		 /* Arm the section: rseq->rseq_cs = &cs (low half). */
		 "movl $3b, %%gs:8(%[off])\n\t"
		 "1:\n\t"
		 "movl %%gs:4(%[off]), %%eax\n\t"
		 "shll $6, %%eax\n\t"
		 "addl $1, (%[base], %%eax)\n\t"	/* commit */
		 "2:\n\t"
		 ".pushsection __rseq_failure, \"ax\"\n\t"
		 /* ud1 0x53053053, %edi: a trap if ever executed. */
		 ".byte 0x0f, 0xb9, 0x3d\n\t"
		 ".long " SB_RSEQ_SIG "\n\t"
		 "4:\n\t"
		 "jmp %l[abort]\n\t"
		 ".popsection\n\t"
		 : : [off] "r" (sb_rseq_off), [base] "r" (slots)
		 : "eax", "memory", "cc" : abort);
	return 0;
abort:
	return 1;
}
#elif defined(__x86_64__)
static inline void inc_pda_slot(struct sb_slot *slots)
{
	/*
	 * The slot array through a register, not as a disp32: an "m"
	 * operand would be RIP-relative (not %gs base + slots), and @slots
	 * is only a constant once inlined. The loop keeps it in the
	 * register, so the increment is still one instruction.
	 */
	asm volatile("addl $1, %%gs:(%1)"
		     : "+m" (slots[0].v[0]) : "r" (slots) : "cc");
}

static inline int inc_rseq(struct sb_slot *slots)
{
	asm goto(".pushsection __rseq_cs, \"aw\"\n\t"
		 ".balign 32\n\t"
		 "3:\n\t"
		 ".long 0x0, 0x0\n\t"
		 ".quad 1f, 2f - 1f, 4f\n\t"
		 ".popsection\n\t"
		 "leaq 3b(%%rip), %%rax\n\t"
		 "movq %%rax, %%fs:8(%[off])\n\t"
		 "1:\n\t"
		 "movl %%fs:4(%[off]), %%eax\n\t"
		 "shll $6, %%eax\n\t"
		 "addl $1, (%[base], %%rax)\n\t"
		 "2:\n\t"
		 ".pushsection __rseq_failure, \"ax\"\n\t"
		 ".byte 0x0f, 0xb9, 0x3d\n\t"
		 ".long " SB_RSEQ_SIG "\n\t"
		 "4:\n\t"
		 "jmp %l[abort]\n\t"
		 ".popsection\n\t"
		 : : [off] "r" (sb_rseq_off), [base] "r" (slots)
		 : "rax", "memory", "cc" : abort);
	return 0;
abort:
	return 1;
}
#elif defined(__arm__)
static inline void inc_pda_slot(struct sb_slot *slots)
{
	(void)slots;
}

static inline int inc_rseq(struct sb_slot *slots)
{
	char *rs = (char *)sb_tp() + sb_rseq_off;

	asm goto(".pushsection __rseq_cs, \"aw\"\n\t"
		 ".balign 32\n\t"
		 "3:\n\t"
		 ".word 0x0, 0x0, 1f, 0x0, 2f - 1f, 0x0, 4f, 0x0\n\t"
		 ".popsection\n\t"
		 "movw r0, #:lower16:3b\n\t"
		 "movt r0, #:upper16:3b\n\t"
		 "str r0, [%[rs], #8]\n\t"
		 "1:\n\t"
		 "ldr r0, [%[rs], #4]\n\t"
		 "add r0, %[base], r0, lsl #6\n\t"
		 "ldr r1, [r0]\n\t"
		 "add r1, r1, #1\n\t"
		 "str r1, [r0]\n\t"		/* commit */
		 "2:\n\t"
		 ".pushsection __rseq_failure, \"ax\"\n\t"
		 ".word " SB_RSEQ_SIG "\n\t"	/* udf #24035 */
		 "4:\n\t"
		 "b %l[abort]\n\t"
		 ".popsection\n\t"
		 : : [rs] "r" (rs), [base] "r" (slots)
		 : "r0", "r1", "memory", "cc" : abort);
	return 0;
abort:
	return 1;
}
#endif

#ifdef SB_X86
static inline void inc_atomic(volatile int32_t *p)
{
	int32_t one = 1;

	asm volatile("lock xaddl %0, %1" : "+r" (one), "+m" (*p) : : "cc");
}
#else
static inline void inc_atomic(volatile int32_t *p)
{
	int32_t tmp, fail;

	/* No barriers: a relaxed RMW, as lock xadd's ordering is not needed. */
	asm volatile("1:	ldrex %0, [%2]\n\t"
		     "add %0, %0, #1\n\t"
		     "strex %1, %0, [%2]\n\t"
		     "cmp %1, #0\n\t"
		     "bne 1b"
		     : "=&r" (tmp), "=&r" (fail)
		     : "r" (p)
		     : "memory", "cc");
}
#endif

#endif /* SB_INCR_H */
