/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * pda_rseq.h: one update of this CPU's copy of a word laid out one
 * 64-byte line per CPU (CPU c's copy at p0 + c * 64, a line for every
 * possible CPU: pda_pool.h's objects), in one rseq critical section, on
 * the struct rseq glibc registered for the thread (pda_rseq_area()).
 * Header only.
 *
 * Each section reads cpu_id, computes the copy, and ends with the one
 * instruction that commits the update (its store); if the thread is
 * preempted, migrated or signalled in between, the kernel sends it to
 * the abort handler instead, which reports it to the caller, so the
 * update is atomic against every thread that updates the same copy on
 * the same CPU, in a section or with one instruction through pda.h's
 * segment.  Not against a locked atomic from another CPU: never mix
 * these with atomics on the same copies.
 *
 *	rs = pda_rseq_area();		once per thread, or per update
 *	if (rs && (int32_t)rs->cpu_id >= 0)	registered
 *		while (pda_rseq_add_u32(rs, p0, 1))
 *			;		aborted: try again
 *
 * pda_rseq_OP_u32() and pda_rseq_OP_ulong(), OP add, and, or, xor, store,
 * on the uint32_t or unsigned long at @p0 (CPU 0's copy): 0, or 1 if the
 * kernel aborted the section (nothing was changed).  pda_rseq_xchg_*()
 * and pda_rseq_cmpxchg_*() also store the copy's value before in *@prev,
 * of the same type, when they commit (cmpxchg commits whether or not it
 * stores).  The caller makes sure cpu_id is not negative: the sections
 * do not check it (glibc 2.35 and later end the process rather than run
 * a thread whose registration failed, but other registrars may leave -2
 * there).  Nor do they bound it: the kernel's cpu_id is below nr_cpu_ids,
 * the last CPU of /sys/devices/system/cpu/possible plus one, which is
 * what pda_possible_cpus() returns and what sizes a pool.
 *
 * After a section rs->rseq_cs still points at its descriptor until the
 * kernel next preempts or signals the thread and clears it, and if the
 * descriptor is unmapped by then, the kernel sends the thread SIGSEGV.
 * So a shared library with sections must not be unloaded while its
 * sections may have run: link it, or dlopen() it with RTLD_NODELETE.
 *
 * The sections: x86 ends with one instruction on the copy (an add on
 * memory, a cmpxchg without lock); ARM and arm64 load, compute and store.
 * Each section's descriptor goes to section __rseq_cs; the abort
 * handler, after glibc's RSEQ_SIG, goes to __rseq_failure.  Arming a
 * section stores the descriptor's address in rs->rseq_cs: PC-relative on
 * x86-64, arm64 and ARM (so PIE and shared libraries link); on i386 with
 * a call to the next instruction under -fPIC/-fPIE and an absolute
 * address otherwise.  GCC or clang: asm goto (without outputs), and on
 * ARM an output instead (PDA_RSEQ_ABORT says why).
 */
#ifndef TOOLS_LIB_PDA_PDA_RSEQ_H
#define TOOLS_LIB_PDA_PDA_RSEQ_H

#include <stdint.h>

#include "pda.h"

/* ARM: little-endian, and movw/movt (ARMv6T2 and later). */
#if defined(PDA_HAVE_GLIBC_RSEQ) && (PDA_X86_32 || PDA_X86_64 ||	\
	(defined(__arm__) && defined(__ARMEL__) &&			\
	 (__ARM_ARCH >= 7 || defined(__ARM_ARCH_6T2__))) ||		\
	defined(__aarch64__))
#define PDA_HAVE_RSEQ_SECTIONS	1
#else
#define PDA_HAVE_RSEQ_SECTIONS	0
#endif

#if PDA_HAVE_RSEQ_SECTIONS

#ifndef __always_inline
#define __always_inline		inline
#endif

/*
 * The parts of every section, label by label: 3 its descriptor, 1 its
 * start, 2 just past the commit, 4 the abort handler (5 for the arming's
 * own use).  struct rseq_cs: version 0, flags 0, start_ip,
 * post_commit_offset, abort_ip, each of the last three 64 bits.
 */
#if PDA_X86_32 || (defined(__arm__))
#define PDA_RSEQ_TABLE							\
	".pushsection __rseq_cs, \"aw\"\n\t"				\
	".balign 32\n"							\
	"3:\n\t"							\
	".long 0x0, 0x0, 1f, 0x0, 2f - 1f, 0x0, 4f, 0x0\n\t"		\
	".popsection\n\t"
#else
#define PDA_RSEQ_TABLE							\
	".pushsection __rseq_cs, \"aw\"\n\t"				\
	".balign 32\n"							\
	"3:\n\t"							\
	".long 0x0, 0x0\n\t"						\
	".quad 1f, 2f - 1f, 4f\n\t"					\
	".popsection\n\t"
#endif

/*
 * The abort handler, after the signature: on to the C code's label
 * "abort" (asm goto), or on ARM, where GCC 12 underestimates an asm
 * goto's length and so places literal pools out of reach in a function
 * with many sections, zero the output "cp" (the copy's address, never 0
 * after a commit) and go on to the section's end, label 6.
 */
#if PDA_X86_32 || PDA_X86_64
/* ud1 <sig>, %edi: traps if ever executed. */
#define PDA_RSEQ_ABORT							\
	".pushsection __rseq_failure, \"ax\"\n\t"			\
	".byte 0x0f, 0xb9, 0x3d\n\t"					\
	".long %c[sig]\n"						\
	"4:\n\t"							\
	"jmp %l[abort]\n\t"						\
	".popsection\n\t"
#elif defined(__aarch64__)
#define PDA_RSEQ_ABORT							\
	".pushsection __rseq_failure, \"ax\"\n\t"			\
	".long %c[sig]\n"						\
	"4:\n\t"							\
	"b %l[abort]\n\t"						\
	".popsection\n\t"
#else
#define PDA_RSEQ_ABORT							\
	".pushsection __rseq_failure, \"ax\"\n\t"			\
	".long %c[sig]\n"						\
	"4:\n\t"							\
	"mov %[cp], #0\n\t"						\
	"b 6f\n\t"							\
	".popsection\n\t"
#endif

/*
 * PDA_RSEQ_START: arm the section and start it.  PDA_RSEQ_INDEX: the
 * copy's address, from cpu_id, as PDA_RSEQ_COPY names it, in register
 * PDA_RSEQ_CLOBBER (on ARM the output "cp").  PDA_RSEQ_TMP: the bodies'
 * scratch register (on x86 %eax, which cmpxchg compares with), which
 * x86's RMW bodies do not need (PDA_RSEQ_RMW_TMP).
 */
#if PDA_X86_32
#ifdef __PIC__
#define PDA_RSEQ_START							\
	"call 5f\n"							\
	"5:\n\t"							\
	"popl %%ecx\n\t"						\
	"leal 3b - 5b(%%ecx), %%ecx\n\t"				\
	"movl %%ecx, 8(%[rs])\n"					\
	"1:\n\t"
#else
#define PDA_RSEQ_START							\
	"movl $3b, 8(%[rs])\n"						\
	"1:\n\t"
#endif
#define PDA_RSEQ_INDEX							\
	"movl 4(%[rs]), %%ecx\n\t"					\
	"shll $6, %%ecx\n\t"
#define PDA_RSEQ_COPY		"(%[p0], %%ecx)"
#define PDA_RSEQ_CLOBBER	"ecx"
#define PDA_RSEQ_TMP		"eax"
#define PDA_RSEQ_RMW_TMP	"cc"	/* none: the list needs an entry */
#elif PDA_X86_64
#define PDA_RSEQ_START							\
	"leaq 3b(%%rip), %%rcx\n\t"					\
	"movq %%rcx, 8(%[rs])\n"					\
	"1:\n\t"
#define PDA_RSEQ_INDEX							\
	"movl 4(%[rs]), %%ecx\n\t"					\
	"shll $6, %%ecx\n\t"
#define PDA_RSEQ_COPY		"(%[p0], %%rcx)"
#define PDA_RSEQ_CLOBBER	"rcx"
#define PDA_RSEQ_TMP		"rax"
#define PDA_RSEQ_RMW_TMP	"cc"	/* none: the list needs an entry */
#elif defined(__arm__)
/* pc reads 4 (Thumb) or 8 (ARM) past the instruction that reads it. */
#ifdef __thumb__
#define PDA_RSEQ_PC		"4"
#else
#define PDA_RSEQ_PC		"8"
#endif
#define PDA_RSEQ_START							\
	"movw %[cp], #:lower16:(3b - (5f + " PDA_RSEQ_PC "))\n\t"	\
	"movt %[cp], #:upper16:(3b - (5f + " PDA_RSEQ_PC "))\n"	\
	"5:\n\t"							\
	"add %[cp], pc\n\t"						\
	"str %[cp], [%[rs], #8]\n"					\
	"1:\n\t"
#define PDA_RSEQ_INDEX							\
	"ldr %[cp], [%[rs], #4]\n\t"					\
	"add %[cp], %[p0], %[cp], lsl #6\n\t"
#define PDA_RSEQ_COPY		"[%[cp]]"
#define PDA_RSEQ_TMP		"r1"
#else /* arm64 */
#define PDA_RSEQ_START							\
	"adrp x9, 3b\n\t"						\
	"add x9, x9, :lo12:3b\n\t"					\
	"str x9, [%[rs], #8]\n"						\
	"1:\n\t"
#define PDA_RSEQ_INDEX							\
	"ldr w9, [%[rs], #4]\n\t"					\
	"add x9, %[p0], x9, lsl #6\n\t"
#define PDA_RSEQ_COPY		"[x9]"
#define PDA_RSEQ_CLOBBER	"x9"
#define PDA_RSEQ_TMP		"x10"
#define PDA_RSEQ_RMW_TMP	PDA_RSEQ_TMP
#endif

/*
 * The bodies, from the copy's address to the commit, for a field of
 * width W, 32 or LONG: PDA_RSEQ_S_W is x86's size suffix, PDA_RSEQ_T_W
 * the scratch register at that width, PDA_RSEQ_M_W the operand modifier
 * (arm64's w or x), PDA_RSEQ_V_W the constraint of the value.
 * RMW(insn): copy = copy insn v.  STORE: copy = v.  XCHG: tmp = copy,
 * copy = v.  CMPXCHG: tmp = copy, copy = v if tmp == old.  AFTER: past
 * the commit, *prev = tmp.
 */
#if PDA_X86_32 || PDA_X86_64
#define PDA_RSEQ_S_32		"l"
#define PDA_RSEQ_T_32		"%%eax"
#define PDA_RSEQ_V_32		"ir"
#if PDA_X86_64
#define PDA_RSEQ_S_LONG		"q"
#define PDA_RSEQ_T_LONG		"%%rax"
#define PDA_RSEQ_V_LONG		"er"	/* a sign-extended 32-bit immediate */
#else
#define PDA_RSEQ_S_LONG		"l"
#define PDA_RSEQ_T_LONG		"%%eax"
#define PDA_RSEQ_V_LONG		"ir"
#endif
#define PDA_RSEQ_OLD		"g"
#define PDA_RSEQ_ADD		"add"
#define PDA_RSEQ_AND		"and"
#define PDA_RSEQ_OR		"or"
#define PDA_RSEQ_XOR		"xor"
#define PDA_RSEQ_RMW(insn, w)						\
	insn PDA_RSEQ_S_##w " %[v], " PDA_RSEQ_COPY "\n"
#define PDA_RSEQ_STORE(w)						\
	"mov" PDA_RSEQ_S_##w " %[v], " PDA_RSEQ_COPY "\n"
/* xchg on memory always locks: still one instruction, the commit. */
#define PDA_RSEQ_XCHG(w)						\
	"mov" PDA_RSEQ_S_##w " %[v], " PDA_RSEQ_T_##w "\n\t"		\
	"xchg" PDA_RSEQ_S_##w " " PDA_RSEQ_T_##w ", " PDA_RSEQ_COPY "\n"
/*
 * cmpxchg compares with %eax and leaves the value it found there; no
 * lock prefix: atomic against this CPU, which is all a copy needs.
 */
#define PDA_RSEQ_CMPXCHG(w)						\
	"mov" PDA_RSEQ_S_##w " %[old], " PDA_RSEQ_T_##w "\n\t"		\
	"cmpxchg" PDA_RSEQ_S_##w " %[v], " PDA_RSEQ_COPY "\n"
#define PDA_RSEQ_AFTER(w)						\
	"mov" PDA_RSEQ_S_##w " " PDA_RSEQ_T_##w ", (%[prev])\n\t"
#else /* ARM, arm64 */
#ifdef __aarch64__
#define PDA_RSEQ_T_32		"w10"
#define PDA_RSEQ_T_LONG		"x10"
#define PDA_RSEQ_M_32		"w"
#define PDA_RSEQ_M_LONG		"x"
#define PDA_RSEQ_BNE		"b.ne"
#else
#define PDA_RSEQ_T_32		"r1"
#define PDA_RSEQ_T_LONG		"r1"
#define PDA_RSEQ_M_32		""
#define PDA_RSEQ_M_LONG		""
#define PDA_RSEQ_BNE		"bne"
#endif
#define PDA_RSEQ_V_32		"r"
#define PDA_RSEQ_V_LONG		"r"
#define PDA_RSEQ_OLD		"r"
#define PDA_RSEQ_ADD		"add"
#define PDA_RSEQ_AND		"and"
#define PDA_RSEQ_OR		"orr"
#define PDA_RSEQ_XOR		"eor"
#define PDA_RSEQ_RMW(insn, w)						\
	"ldr " PDA_RSEQ_T_##w ", " PDA_RSEQ_COPY "\n\t"			\
	insn " " PDA_RSEQ_T_##w ", " PDA_RSEQ_T_##w ", %"		\
	PDA_RSEQ_M_##w "[v]\n\t"					\
	"str " PDA_RSEQ_T_##w ", " PDA_RSEQ_COPY "\n"
#define PDA_RSEQ_STORE(w)						\
	"str %" PDA_RSEQ_M_##w "[v], " PDA_RSEQ_COPY "\n"
#define PDA_RSEQ_XCHG(w)						\
	"ldr " PDA_RSEQ_T_##w ", " PDA_RSEQ_COPY "\n\t"			\
	"str %" PDA_RSEQ_M_##w "[v], " PDA_RSEQ_COPY "\n"
/* No store when the copy differs: straight to the end, label 2. */
#define PDA_RSEQ_CMPXCHG(w)						\
	"ldr " PDA_RSEQ_T_##w ", " PDA_RSEQ_COPY "\n\t"			\
	"cmp " PDA_RSEQ_T_##w ", %" PDA_RSEQ_M_##w "[old]\n\t"		\
	PDA_RSEQ_BNE " 2f\n\t"						\
	"str %" PDA_RSEQ_M_##w "[v], " PDA_RSEQ_COPY "\n"
#define PDA_RSEQ_AFTER(w)						\
	"str " PDA_RSEQ_T_##w ", [%[prev]]\n\t"
#endif

/* One section: arm, index, @body, commit; then @after, and the end. */
#define PDA_RSEQ_SECTION(body, after)					\
	PDA_RSEQ_TABLE PDA_RSEQ_START PDA_RSEQ_INDEX body		\
	"2:\n\t" PDA_RSEQ_ABORT after "6:\n\t"

/*
 * The functions, 0 or 1 if aborted: asm goto, its abort label the
 * return of 1; on ARM (see PDA_RSEQ_ABORT) the copy's address, which the
 * abort handler zeroes.
 */
#ifndef __arm__
#define PDA_RSEQ_DEFINE_RMW(op, w, type, body, vcon)		\
static __always_inline int						\
pda_rseq_##op##_##w(struct rseq *rs, void *p0, type v)			\
{									\
	__asm__ goto(PDA_RSEQ_SECTION(body, "")				\
		     : : [rs] "r"(rs), [p0] "r"(p0), [v] vcon(v),	\
		       [sig] "i"(RSEQ_SIG)				\
		     : PDA_RSEQ_CLOBBER, PDA_RSEQ_RMW_TMP, "memory", "cc"	\
		     : abort);						\
	return 0;							\
abort:									\
	return 1;							\
}

#define PDA_RSEQ_DEFINE_XCHG(w, type, body, after)			\
static __always_inline int						\
pda_rseq_xchg_##w(struct rseq *rs, void *p0, type v, void *prev)	\
{									\
	__asm__ goto(PDA_RSEQ_SECTION(body, after)			\
		     : : [rs] "r"(rs), [p0] "r"(p0), [v] "r"(v),	\
		       [prev] "r"(prev), [sig] "i"(RSEQ_SIG)		\
		     : PDA_RSEQ_CLOBBER, PDA_RSEQ_TMP, "memory", "cc"	\
		     : abort);						\
	return 0;							\
abort:									\
	return 1;							\
}

#define PDA_RSEQ_DEFINE_CMPXCHG(w, type, body, after)		\
static __always_inline int						\
pda_rseq_cmpxchg_##w(struct rseq *rs, void *p0, type old, type v,	\
		     void *prev)					\
{									\
	__asm__ goto(PDA_RSEQ_SECTION(body, after)			\
		     : : [rs] "r"(rs), [p0] "r"(p0),			\
		       [old] PDA_RSEQ_OLD(old), [v] "r"(v),		\
		       [prev] "r"(prev), [sig] "i"(RSEQ_SIG)		\
		     : PDA_RSEQ_CLOBBER, PDA_RSEQ_TMP, "memory", "cc"	\
		     : abort);						\
	return 0;							\
abort:									\
	return 1;							\
}
#else
#define PDA_RSEQ_DEFINE_RMW(op, w, type, body, vcon)		\
static __always_inline int						\
pda_rseq_##op##_##w(struct rseq *rs, void *p0, type v)			\
{									\
	void *cp;							\
									\
	__asm__ __volatile__(PDA_RSEQ_SECTION(body, "")			\
			     : [cp] "=&r"(cp)				\
			     : [rs] "r"(rs), [p0] "r"(p0), [v] vcon(v),	\
			       [sig] "i"(RSEQ_SIG)			\
			     : PDA_RSEQ_TMP, "memory", "cc");		\
	return !cp;							\
}

#define PDA_RSEQ_DEFINE_XCHG(w, type, body, after)			\
static __always_inline int						\
pda_rseq_xchg_##w(struct rseq *rs, void *p0, type v, void *prev)	\
{									\
	void *cp;							\
									\
	__asm__ __volatile__(PDA_RSEQ_SECTION(body, after)		\
			     : [cp] "=&r"(cp)				\
			     : [rs] "r"(rs), [p0] "r"(p0), [v] "r"(v),	\
			       [prev] "r"(prev), [sig] "i"(RSEQ_SIG)	\
			     : PDA_RSEQ_TMP, "memory", "cc");		\
	return !cp;							\
}

#define PDA_RSEQ_DEFINE_CMPXCHG(w, type, body, after)		\
static __always_inline int						\
pda_rseq_cmpxchg_##w(struct rseq *rs, void *p0, type old, type v,	\
		     void *prev)					\
{									\
	void *cp;							\
									\
	__asm__ __volatile__(PDA_RSEQ_SECTION(body, after)		\
			     : [cp] "=&r"(cp)				\
			     : [rs] "r"(rs), [p0] "r"(p0),		\
			       [old] PDA_RSEQ_OLD(old), [v] "r"(v),	\
			       [prev] "r"(prev), [sig] "i"(RSEQ_SIG)	\
			     : PDA_RSEQ_TMP, "memory", "cc");		\
	return !cp;							\
}
#endif

PDA_RSEQ_DEFINE_RMW(add, u32, uint32_t,
		    PDA_RSEQ_RMW(PDA_RSEQ_ADD, 32), PDA_RSEQ_V_32)
PDA_RSEQ_DEFINE_RMW(and, u32, uint32_t,
		    PDA_RSEQ_RMW(PDA_RSEQ_AND, 32), PDA_RSEQ_V_32)
PDA_RSEQ_DEFINE_RMW(or, u32, uint32_t,
		    PDA_RSEQ_RMW(PDA_RSEQ_OR, 32), PDA_RSEQ_V_32)
PDA_RSEQ_DEFINE_RMW(xor, u32, uint32_t,
		    PDA_RSEQ_RMW(PDA_RSEQ_XOR, 32), PDA_RSEQ_V_32)
PDA_RSEQ_DEFINE_RMW(store, u32, uint32_t,
		    PDA_RSEQ_STORE(32), PDA_RSEQ_V_32)
PDA_RSEQ_DEFINE_XCHG(u32, uint32_t,
		     PDA_RSEQ_XCHG(32), PDA_RSEQ_AFTER(32))
PDA_RSEQ_DEFINE_CMPXCHG(u32, uint32_t,
			PDA_RSEQ_CMPXCHG(32), PDA_RSEQ_AFTER(32))

PDA_RSEQ_DEFINE_RMW(add, ulong, unsigned long,
		    PDA_RSEQ_RMW(PDA_RSEQ_ADD, LONG), PDA_RSEQ_V_LONG)
PDA_RSEQ_DEFINE_RMW(and, ulong, unsigned long,
		    PDA_RSEQ_RMW(PDA_RSEQ_AND, LONG), PDA_RSEQ_V_LONG)
PDA_RSEQ_DEFINE_RMW(or, ulong, unsigned long,
		    PDA_RSEQ_RMW(PDA_RSEQ_OR, LONG), PDA_RSEQ_V_LONG)
PDA_RSEQ_DEFINE_RMW(xor, ulong, unsigned long,
		    PDA_RSEQ_RMW(PDA_RSEQ_XOR, LONG), PDA_RSEQ_V_LONG)
PDA_RSEQ_DEFINE_RMW(store, ulong, unsigned long,
		    PDA_RSEQ_STORE(LONG), PDA_RSEQ_V_LONG)
PDA_RSEQ_DEFINE_XCHG(ulong, unsigned long,
		     PDA_RSEQ_XCHG(LONG), PDA_RSEQ_AFTER(LONG))
PDA_RSEQ_DEFINE_CMPXCHG(ulong, unsigned long,
			PDA_RSEQ_CMPXCHG(LONG), PDA_RSEQ_AFTER(LONG))

#endif /* PDA_HAVE_RSEQ_SECTIONS */

#endif /* TOOLS_LIB_PDA_PDA_RSEQ_H */
