/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rseq_add32(): add @v to this CPU's copy of a 32-bit counter laid out
 * one 64-byte line per CPU (CPU c's copy at @p0 + c * 64: a pda_slot
 * array, or a field of a tools/lib/pda/pda_pool.h object), in one rseq
 * critical section on glibc's registration: read cpu_id, compute the
 * copy, load, add, and commit with the store: an add indexed by cpu_id
 * inside the section (librseq's rseq_load_add_store__ptr() reads the CPU
 * before it and compares inside, an instruction or two more), for the
 * benchmarks to compare the segment with.  Returns 0, or 1 if the kernel aborted the section (preemption,
 * migration or a signal inside it): the caller retries.
 *
 * @rs: the thread's struct rseq (cpu_methods.h's rseq_area()).  The
 * descriptor goes to section __rseq_cs, and the abort handler, preceded
 * by the signature glibc registered (RSEQ_SIG), to __rseq_failure.
 */
#ifndef PDA_BENCH_RSEQ_ADD_H
#define PDA_BENCH_RSEQ_ADD_H

#include <stdint.h>
#include <sys/rseq.h>

#if defined(__i386__)
static inline int rseq_add32(struct rseq *rs, uint32_t *p0, uint32_t v)
{
	__asm__ goto (".pushsection __rseq_cs, \"aw\"\n\t"
		      ".balign 32\n"
		      "3:\n\t"
		      ".long 0x0, 0x0, 1f, 0x0, 2f - 1f, 0x0, 4f, 0x0\n\t"
		      ".popsection\n\t"
		      "movl $3b, 8(%[rs])\n"	/* rseq_cs, low half */
		      "1:\n\t"
		      "movl 4(%[rs]), %%eax\n\t"	/* cpu_id */
		      "shll $6, %%eax\n\t"
		      "addl %[v], (%[p0], %%eax)\n"	/* the commit */
		      "2:\n\t"
		      ".pushsection __rseq_failure, \"ax\"\n\t"
		      ".byte 0x0f, 0xb9, 0x3d\n\t"	/* ud1 <sig>, %edi */
		      ".long %c[sig]\n"
		      "4:\n\t"
		      "jmp %l[abort]\n\t"
		      ".popsection"
		      : : [rs] "r" (rs), [p0] "r" (p0), [v] "r" (v),
			  [sig] "i" (RSEQ_SIG)
		      : "eax", "memory", "cc" : abort);
	return 0;
abort:
	return 1;
}
#elif defined(__x86_64__)
static inline int rseq_add32(struct rseq *rs, uint32_t *p0, uint32_t v)
{
	__asm__ goto (".pushsection __rseq_cs, \"aw\"\n\t"
		      ".balign 32\n"
		      "3:\n\t"
		      ".long 0x0, 0x0\n\t"
		      ".quad 1f, 2f - 1f, 4f\n\t"
		      ".popsection\n\t"
		      "leaq 3b(%%rip), %%rax\n\t"
		      "movq %%rax, 8(%[rs])\n"
		      "1:\n\t"
		      "movl 4(%[rs]), %%eax\n\t"
		      "shll $6, %%eax\n\t"
		      "addl %[v], (%[p0], %%rax)\n"
		      "2:\n\t"
		      ".pushsection __rseq_failure, \"ax\"\n\t"
		      ".byte 0x0f, 0xb9, 0x3d\n\t"
		      ".long %c[sig]\n"
		      "4:\n\t"
		      "jmp %l[abort]\n\t"
		      ".popsection"
		      : : [rs] "r" (rs), [p0] "r" (p0), [v] "r" (v),
			  [sig] "i" (RSEQ_SIG)
		      : "rax", "memory", "cc" : abort);
	return 0;
abort:
	return 1;
}
#elif defined(__arm__)
static inline int rseq_add32(struct rseq *rs, uint32_t *p0, uint32_t v)
{
	__asm__ goto (".pushsection __rseq_cs, \"aw\"\n\t"
		      ".balign 32\n"
		      "3:\n\t"
		      ".word 0x0, 0x0, 1f, 0x0, 2f - 1f, 0x0, 4f, 0x0\n\t"
		      ".popsection\n\t"
		      "movw r0, #:lower16:3b\n\t"
		      "movt r0, #:upper16:3b\n\t"
		      "str r0, [%[rs], #8]\n"
		      "1:\n\t"
		      "ldr r0, [%[rs], #4]\n\t"
		      "add r0, %[p0], r0, lsl #6\n\t"
		      "ldr r1, [r0]\n\t"
		      "add r1, r1, %[v]\n\t"
		      "str r1, [r0]\n"		/* the commit */
		      "2:\n\t"
		      ".pushsection __rseq_failure, \"ax\"\n\t"
		      ".word %c[sig]\n"
		      "4:\n\t"
		      "b %l[abort]\n\t"
		      ".popsection"
		      : : [rs] "r" (rs), [p0] "r" (p0), [v] "r" (v),
			  [sig] "i" (RSEQ_SIG)
		      : "r0", "r1", "memory", "cc" : abort);
	return 0;
abort:
	return 1;
}
#elif defined(__aarch64__)
static inline int rseq_add32(struct rseq *rs, uint32_t *p0, uint32_t v)
{
	__asm__ goto (".pushsection __rseq_cs, \"aw\"\n\t"
		      ".balign 32\n"
		      "3:\n\t"
		      ".long 0x0, 0x0\n\t"
		      ".quad 1f, 2f - 1f, 4f\n\t"
		      ".popsection\n\t"
		      "adrp x9, 3b\n\t"
		      "add x9, x9, :lo12:3b\n\t"
		      "str x9, [%[rs], #8]\n"
		      "1:\n\t"
		      "ldr w9, [%[rs], #4]\n\t"
		      "add x9, %[p0], x9, lsl #6\n\t"
		      "ldr w10, [x9]\n\t"
		      "add w10, w10, %w[v]\n\t"
		      "str w10, [x9]\n"		/* the commit */
		      "2:\n\t"
		      ".pushsection __rseq_failure, \"ax\"\n\t"
		      ".long %c[sig]\n"
		      "4:\n\t"
		      "b %l[abort]\n\t"
		      ".popsection"
		      : : [rs] "r" (rs), [p0] "r" (p0), [v] "r" (v),
			  [sig] "i" (RSEQ_SIG)
		      : "x9", "x10", "memory", "cc" : abort);
	return 0;
abort:
	return 1;
}
#endif

#endif /* PDA_BENCH_RSEQ_ADD_H */
