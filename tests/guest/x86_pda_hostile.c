// SPDX-License-Identifier: GPL-2.0
/*
 * Hostile use of the PDA selector (0xeb) as a code segment, as a way to
 * the kernel half and as the stack segment: each case through 0xeb and
 * through a TLS selector, with a bystander and a clean kernel log (see
 * lib/pda_hostile_fixture.h).  Its RPL forms: x86_pda_hostile_rpl.c.
 *
 * - far_transfer: ljmp/lcall (immediate and indirect), lret and iret to
 *   CS = 0xeb raise #GP(0xe8): SIGSEGV, SI_KERNEL, trapno 13; a sigreturn
 *   that puts it in CS (or a ptrace POKEUSER: rpl_ptrace) makes the
 *   kernel's IRET fault: SIGILL, ILL_BADSTK on i386; an x86-64 kernel
 *   reports that #GP as if it came from the IRET's target, SIGSEGV like
 *   the rest.  (lret and iret are left out under QEMU TCG with SMAP,
 *   which oopses the kernel on any user lret: see qemu_tcg_smap().)
 * - kernel_half: writes and reads through %fs at the kernel half (on an
 *   x86-64 kernel, which has no kernel half in a compat task's 4 GiB: at
 *   the top page, which it never maps), and at the 4 GiB wrap-around of
 *   base + offset, fault like any user access: SIGSEGV, SEGV_MAPERR, at
 *   the same linear address for both.
 * - stack_segment: 0xeb in %ss while making int $0x80 and vDSO system
 *   calls, taking synchronous, asynchronous and "legacy stack" signals,
 *   yielding, spinning and re-pinning to every CPU (so the SS base moves
 *   under the program).  The code runs in asm on a private stack and
 *   puts __USER_DS back before it touches the C stack again.  Expected:
 *   it survives; int $0x80 and sigreturn keep the odd SS, whose base
 *   follows the CPU; the vDSO's SYSENTER (or, on an x86-64 kernel,
 *   SYSCALL) path returns with SS = __USER_DS; signal handlers run on
 *   __USER_DS with sc.ss = the selector; a handler without SA_RESTORER
 *   takes the legacy "sa_restorer is a stack" switch, which get_sigframe()
 *   only honours inside the sigaltstack.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "lib/pda_hostile_fixture.h"

/* --------------------------------------------------------- far transfers */

enum far_op {
	FAR_LJMP_IMM, FAR_LJMP_MEM, FAR_LCALL_IMM, FAR_LCALL_MEM, FAR_LRET,
	FAR_IRET, FAR_SIGRETURN_CS, FAR_NR
};

static const char *const far_name[] = {
	"ljmp $sel,$x", "ljmp *mem", "lcall $sel,$x", "lcall *mem", "lret",
	"iret", "sigreturn with sc.cs = sel",
};

struct far_arg {
	enum far_op op;
	int kind;	/* 0 PDA, 1 TLS */
};

static volatile unsigned int sigret_cs;

static void set_cs_handler(int sig, siginfo_t *si, void *ctx)
{
	((ucontext_t *)ctx)->uc_mcontext.gregs[REG_CS] = sigret_cs;
}

/*
 * "ljmp $sel, $target" (EA) or "lcall $sel, $target" (9A), ptr16:32 as the
 * assembler would encode it, but built in an executable page: the TLS
 * selector is only known at run time.  Called, and does not return.
 */
static void far_imm(unsigned char opcode, unsigned int sel, void *target)
{
	uint32_t off = (uint32_t)(uintptr_t)target;
	uint16_t sel16 = sel;
	unsigned char *code;

	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		ph_raw_exit(32);
	code[0] = opcode;
	memcpy(code + 1, &off, 4);
	memcpy(code + 5, &sel16, 2);
	asm volatile("call *%0" : : "r" (code) : "memory");
}

static void far_case(void *p)
{
	const struct far_arg *a = p;
	unsigned int sel = a->kind ? PH_TLS_SEL : PH_SEL;
	struct { uint32_t off; uint16_t sel; } __attribute__((packed)) fp;
	struct sigaction sa;

	if (ph_tls_set(PH_TLS_ENTRY, 0) != PH_TLS_SEL)
		ph_raw_exit(30);
	extern char far_target[];
	fp.off = (uint32_t)(uintptr_t)far_target;
	fp.sel = sel;
	switch (a->op) {
	case FAR_LJMP_IMM:
		far_imm(0xea, sel, far_target);
		break;
	case FAR_LCALL_IMM:
		far_imm(0x9a, sel, far_target);
		break;
	case FAR_LJMP_MEM:
		asm volatile("ljmp *%0" : : "m" (fp));
		break;
	case FAR_LCALL_MEM:
		asm volatile("lcall *%0" : : "m" (fp) : "memory");
		break;
	case FAR_LRET:
		asm volatile("pushl %0\n\tpushl $1f\n\tlret\n1:"
			     : : "r" (sel) : "memory");
		break;
	case FAR_IRET:
		asm volatile("pushfl\n\tpushl %0\n\tpushl $1f\n\tiret\n1:"
			     : : "r" (sel) : "memory");
		break;
	case FAR_SIGRETURN_CS:
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = set_cs_handler;
		sa.sa_flags = SA_SIGINFO;
		sigaction(SIGUSR1, &sa, NULL);
		sigret_cs = sel;
		raise(SIGUSR1);
		break;
	default:
		break;
	}
	asm volatile(".globl far_target\nfar_target:");
	/* nothing may get here */
	ph_res->v[0] = 1;
}

/*
 * QEMU's TCG (7.2 at least) pops the return frame of a user-mode lret or
 * iret with a supervisor access; with SMAP on, that faults without the U
 * bit and the kernel oopses -- for any CS, __USER_CS included, so it is not
 * ours to test there.  Bochs and hardware do it right.
 */
static int qemu_tcg_smap(void)
{
	char line[4096];
	int qemu = 0, smap = 0;
	FILE *f = fopen("/proc/cpuinfo", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "model name", 10) && strstr(line, "QEMU TCG"))
			qemu = 1;
		if (!strncmp(line, "flags", 5) && strstr(line, " smap"))
			smap = 1;
	}
	fclose(f);
	return qemu && smap;
}
TEST_F_TIMEOUT(hostile, far_transfer, 120)
{
	int op, no_ret = qemu_tcg_smap();

	if (no_ret)
		TH_LOG("QEMU TCG with SMAP: lret and iret left out (QEMU pops their frame as a supervisor access: the kernel oopses even for __USER_CS)");
	for (op = 0; op < FAR_NR; op++) {
		struct ph_result r[2];
		int k;

		if (no_ret && (op == FAR_LRET || op == FAR_IRET))
			continue;

		for (k = 0; k < 2; k++) {
			struct far_arg a = { op, k };
			char label[96];
			unsigned int sel = k ? PH_TLS_SEL : PH_SEL;

			ph_run(far_case, &a, 30, &r[k]);
			snprintf(label, sizeof(label), "%s %s", kind_name[k],
				 far_name[op]);
			LOG_RESULT(label, r[k]);
			EXPECT_EQ(PH_EXIT_SIGNALLED << 8, r[k].status);
			EXPECT_EQ(0, r[k].v[0]);
			if (op == FAR_SIGRETURN_CS) {
				/* the kernel's IRET to CS = sel faulted */
				expect_bad_iret(_metadata, &r[k], sel);
			} else {
				/* #GP(selector) */
				EXPECT_EQ(SIGSEGV, r[k].signo);
				EXPECT_EQ(SI_KERNEL_CODE, r[k].code);
				EXPECT_EQ(TRAP_GP, r[k].trapno);
				EXPECT_EQ(sel & ~3u, r[k].err);
				EXPECT_EQ(PH_USER_CS, r[k].cs);
			}
			CHECK_WORLD(label);
		}
		EXPECT_SAME_FAULT(r[0], r[1]);
	}
}

/* ------------------------------------------------------------ kernel half */

struct kh_arg {
	int kind, cpu, write;
	uint32_t linear;	/* where base + offset lands */
};

static void kh_case(void *p)
{
	const struct kh_arg *a = p;
	uint32_t base = (uint32_t)a->cpu << PDA_USER_SHIFT;
	uint32_t off = a->linear - base;
	uint32_t v = 0;

	if (ph_pin(a->cpu) ||
	    ph_tls_set(PH_TLS_ENTRY, base) != PH_TLS_SEL)
		ph_raw_exit(30);
	ph_set_seg(fs, a->kind ? PH_TLS_SEL : PH_SEL);
	/* positive control: this CPU's slot, through the segment */
	asm volatile("movl $0x5eed, %%fs:4(%0)" : : "r" (ph_table) : "memory");
	ph_res->v[1] = ph_table[a->cpu * PH_SLOT_INTS + 1];
	ph_res->v[2] = ph_fs_read();
	if (a->write)
		asm volatile("movl $0x0badc0de, %%fs:(%0)"
			     : : "r" (off) : "memory");
	else
		asm volatile("movl %%fs:(%1), %0"
			     : "=r" (v) : "r" (off) : "memory");
	ph_res->v[0] = 1;
	ph_res->v[3] = v;
}

/*
 * Where user accesses must fault.  An i386 kernel (VMSPLIT_3G) keeps its
 * own half above 0xc0000000 in every address space.  An x86-64 kernel has
 * no kernel half in a compat task's 4 GiB, which it may map almost all
 * of (0xc0000000 can be stack or mmap there); but never the top page,
 * from its TASK_SIZE, 0xffffe000, up: the same fault, a user access to
 * nothing, SIGSEGV with nothing written.
 */
static const uint32_t kh_targets_i386[] = {
	0xc0000000, 0xc1000000, 0xfffff000, 0xfffffffc,
};
static const uint32_t kh_targets_64[] = {
	0xffffe000, 0xffffeffc, 0xfffff000, 0xfffffffc,
};

TEST_F_TIMEOUT(hostile, kernel_half, 120)
{
	const uint32_t *targets = ph_kernel64 ? kh_targets_64 :
						kh_targets_i386;
	int cpus[2] = { self->cpus.id[0], self->last }, c, t, w;

	if (ph_kernel64)
		TH_LOG("x86-64 kernel: no kernel half in a compat task, the top page (never mapped) instead");
	for (c = 0; c < (self->cpus.n > 1 ? 2 : 1); c++) {
		int cpu = cpus[c];
		uint32_t base = (uint32_t)cpu << PDA_USER_SHIFT;

		/* the last one: offset 0xffffffc0, base + offset wraps */
		for (t = 0; t < 5; t++) {
			uint32_t linear = t < 4 ? targets[t] :
					  base + 0xffffffc0u;

			for (w = 0; w < 2; w++) {
				struct ph_result r[2];
				int k;

				for (k = 0; k < 2; k++) {
					struct kh_arg a = { k, cpu, w, linear };
					char label[128];

					ph_run(kh_case, &a, 30, &r[k]);
					snprintf(label, sizeof(label),
						 "%s cpu %d %s at %#x", kind_name[k],
						 cpu, w ? "write" : "read", linear);
					if (r[k].signo != SIGSEGV ||
					    r[k].addr != linear)
						LOG_RESULT(label, r[k]);
					EXPECT_EQ(PH_EXIT_SIGNALLED << 8,
						  r[k].status);
					EXPECT_EQ(0, r[k].v[0]);
					EXPECT_EQ(0x5eed, r[k].v[1]);
					EXPECT_EQ(cpu, r[k].v[2]);
					EXPECT_EQ(SIGSEGV, r[k].signo);
					EXPECT_EQ(SEGV_MAPERR, r[k].code);
					EXPECT_EQ(TRAP_PF, r[k].trapno);
					EXPECT_EQ(linear, r[k].addr);
					/* a user access, a write when it was */
					EXPECT_EQ(4, r[k].err & 4);
					EXPECT_EQ(w ? 2 : 0, r[k].err & 2);
					CHECK_WORLD(label);
				}
				EXPECT_SAME_FAULT(r[0], r[1]);
				EXPECT_EQ(r[0].addr, r[1].addr);
				EXPECT_EQ(r[0].err, r[1].err);
			}
		}
	}
}

/* ---------------------------------------------------------- stack segment */

/*
 * The asm below runs with %ss = ss_sel on a private stack (ss_stack) and
 * keeps everything it needs in these globals (reached through %ds, which
 * stays __USER_DS).  The SS base is cpu << 6 for the PDA selector, so the
 * stack moves by 64 bytes per CPU under the program; the code never relies
 * on what it pushed, except through __kernel_vsyscall, for which the
 * stack around its frame is filled with a 16-byte pattern (ebp, edx, ecx,
 * return address) repeated every 16 bytes: whatever the base, the landing
 * pad pops the right words.  The vDSO is entered from ss_call_top, 4 KiB
 * above the loop's ss_top: i386 has no red zone, and a signal taken in the
 * loop writes its frame right below ss_top, where it would clobber the
 * pattern (Bochs's FXSAVE frames do: the landing pad then returned to 0).
 *
 * A signal taken where the landing pad returns (%esp = ss_call_top, flat)
 * writes its frame over the flat 16 bytes below, which a SYSEXIT or SYSRET
 * pops on the next call when the base is not 0.  So each call plants
 * them again, through %ds, and jumps in with %esp already below the
 * return address: a call would leave %esp = ss_call_top for one
 * instruction, where a signal would clobber it again.  The loop sends
 * itself SIGALRM right there, so that this is tested on every call.
 */
#define STR_(x)		#x
#define STR(x)		STR_(x)
#define SS_VSYS_EBP	0x0e0e0e0e
#define SS_VSYS_EDX	0x0d0d0d0d
#define SS_VSYS_ECX	0x0c0c0c0c
#define SS_STACK_SIZE	(256 * 1024)

uint32_t ss_sel, ss_iters, ss_spin, ss_pid, ss_ncpu, ss_vsys;
/* A 64-bit affinity mask per CPU: CPU numbers up to 63 (PH_MAX_CPUS). */
_Static_assert(PH_MAX_CPUS <= 64, "ss_mask has 64 bits");
uint64_t ss_mask[PH_MAX_CPUS];
uint32_t ss_expect[PH_MAX_CPUS];
uint32_t ss_saved_esp, ss_top, ss_call_top, ss_k, ss_user_ds;
/* results */
uint32_t ss_done, ss_bad_ss, ss_bad_read, ss_last_read, ss_bad_pid;
uint32_t ss_aff_err, ss_vdso_ss, ss_vdso_bad, ss_loop_bad_ss;
uint32_t ss_loop_bad_read;
static char ss_stack[SS_STACK_SIZE] __attribute__((aligned(64)));

/* signal bookkeeping, written by the handlers */
static volatile uint32_t ss_usr1, ss_usr1_bad, ss_usr2, ss_usr2_legacy;
static volatile uint32_t ss_prof, ss_prof_sel, ss_prof_flat, ss_prof_other;
static volatile uint32_t ss_alrm;

void ss_run(void);
asm(".text\n"
    ".globl ss_run\n"
    "ss_run:\n\t"
    "pushl %ebp\n\t"
    "pushl %ebx\n\t"
    "pushl %esi\n\t"
    "pushl %edi\n\t"
    "movl %esp, ss_saved_esp\n\t"
    "movl ss_top, %esp\n\t"
    "xorl %edi, %edi\n"
    "ss_loop:\n\t"
    /* k = i % ncpu */
    "movl %edi, %eax\n\t"
    "xorl %edx, %edx\n\t"
    "divl ss_ncpu\n\t"
    "movl %edx, ss_k\n\t"
    /* %ss = the selector under test */
    "movl ss_sel, %eax\n\t"
    "movw %ax, %ss\n\t"
    /* sched_setaffinity(0, 8, &ss_mask[k]): int $0x80, a migration */
    "movl $241, %eax\n\t"
    "xorl %ebx, %ebx\n\t"
    "movl $8, %ecx\n\t"
    "leal ss_mask(,%edx,8), %edx\n\t"
    "int $0x80\n\t"
    "testl %eax, %eax\n\t"
    "jz 1f\n\t"
    "incl ss_aff_err\n"
    "1:\n\t"
    "movw %ss, %ax\n\t"
    "movzwl %ax, %eax\n\t"
    "cmpl ss_sel, %eax\n\t"
    "je 2f\n\t"
    "incl ss_bad_ss\n"
    "2:\n\t"
    "movl ss_k, %edx\n\t"
    "movl ss_expect(,%edx,4), %edx\n\t"
    "movl $ph_table_alias, %ebx\n\t"
    "movl %ss:(%ebx), %eax\n\t"
    "cmpl %edx, %eax\n\t"
    "je 3f\n\t"
    "incl ss_bad_read\n\t"
    "movl %eax, ss_last_read\n"
    "3:\n\t"
    /* getpid and sched_yield through int $0x80 */
    "movl $20, %eax\n\t"
    "int $0x80\n\t"
    "cmpl ss_pid, %eax\n\t"
    "je 4f\n\t"
    "incl ss_bad_pid\n"
    "4:\n\t"
    "movl $158, %eax\n\t"
    "int $0x80\n\t"
    /* kill(pid, SIGUSR1): the handler runs on the alternate stack */
    "movl $37, %eax\n\t"
    "movl ss_pid, %ebx\n\t"
    "movl $10, %ecx\n\t"
    "int $0x80\n\t"
    /* kill(pid, SIGUSR2): no SA_RESTORER, a "legacy" stack switch */
    "movl $37, %eax\n\t"
    "movl ss_pid, %ebx\n\t"
    "movl $12, %ecx\n\t"
    "int $0x80\n\t"
    /* spin: SIGPROF, timer ticks, preemption land in here */
    "movl ss_spin, %ecx\n\t"
    "movl ss_k, %edx\n\t"
    "movl ss_expect(,%edx,4), %edx\n\t"
    "movl $ph_table_alias, %ebx\n"
    "5:\n\t"
    "movw %ss, %ax\n\t"
    "movzwl %ax, %eax\n\t"
    "cmpl ss_sel, %eax\n\t"
    "je 6f\n\t"
    "incl ss_loop_bad_ss\n"
    "6:\n\t"
    "movl %ss:(%ebx), %eax\n\t"
    "cmpl %edx, %eax\n\t"
    "je 7f\n\t"
    "incl ss_loop_bad_read\n"
    "7:\n\t"
    "decl %ecx\n\t"
    "jnz 5b\n\t"
    /* getpid through __kernel_vsyscall, if there is one */
    "movl ss_vsys, %esi\n\t"
    "testl %esi, %esi\n\t"
    "jz 9f\n\t"
    "movl $20, %eax\n\t"
    "movl $" STR(SS_VSYS_ECX) ", %ecx\n\t"
    "movl $" STR(SS_VSYS_EDX) ", %edx\n\t"
    "movl $" STR(SS_VSYS_EBP) ", %ebp\n\t"
    "movl ss_call_top, %ebx\n\t"
    "movl $" STR(SS_VSYS_EBP) ", -16(%ebx)\n\t"
    "movl $" STR(SS_VSYS_EDX) ", -12(%ebx)\n\t"
    "movl $" STR(SS_VSYS_ECX) ", -8(%ebx)\n\t"
    "movl $ss_vsys_ret, -4(%ebx)\n\t"
    "leal -4(%ebx), %esp\n\t"
    "jmp *%esi\n"
    ".globl ss_vsys_ret\n"
    "ss_vsys_ret:\n\t"
    "movw %ss, %bx\n\t"
    "movzwl %bx, %ebx\n\t"
    "movl %ebx, ss_vdso_ss\n\t"
    "cmpl ss_pid, %eax\n\t"
    "je 8f\n\t"
    "incl ss_vdso_bad\n"
    "8:\n\t"
    /*
     * kill(pid, SIGALRM) with %esp where the landing pad left it: the
     * handler's frame goes right below, over the pattern.
     */
    "movl $37, %eax\n\t"
    "movl ss_pid, %ebx\n\t"
    "movl $14, %ecx\n\t"
    "int $0x80\n\t"
    "movl ss_top, %esp\n"
    "9:\n\t"
    "incl ss_done\n\t"
    "incl %edi\n\t"
    "cmpl ss_iters, %edi\n\t"
    "jb ss_loop\n\t"
    /* back to __USER_DS before the C stack */
    "movl ss_user_ds, %eax\n\t"
    "movw %ax, %ss\n\t"
    "movl ss_saved_esp, %esp\n\t"
    "popl %edi\n\t"
    "popl %esi\n\t"
    "popl %ebx\n\t"
    "popl %ebp\n\t"
    "ret\n");

/* ph_table under a global name the asm can use */
asm(".set ph_table_alias, ph_table");

static void ss_usr1_handler(int sig, siginfo_t *si, void *ctx)
{
	greg_t *g = ((ucontext_t *)ctx)->uc_mcontext.gregs;

	ss_usr1++;
	if ((g[REG_SS] & 0xffff) != ss_sel || ph_get_seg(ss) != PH_USER_DS)
		ss_usr1_bad++;
}

static void ss_usr2_handler(int sig, siginfo_t *si, void *ctx)
{
	uintptr_t frame = (uintptr_t)ctx;

	ss_usr2++;
	if (frame >= (uintptr_t)ph_altstack &&
	    frame < (uintptr_t)ph_altstack + sizeof(ph_altstack) / 2)
		ss_usr2_legacy++;
}

static void ss_alrm_handler(int sig, siginfo_t *si, void *ctx)
{
	ss_alrm++;
}

static void ss_prof_handler(int sig, siginfo_t *si, void *ctx)
{
	unsigned int ss = ((ucontext_t *)ctx)->uc_mcontext.gregs[REG_SS] & 0xffff;

	ss_prof++;
	if (ss == ss_sel)
		ss_prof_sel++;
	else if (ss == PH_USER_DS)
		ss_prof_flat++;
	else
		ss_prof_other++;
}

struct ss_arg {
	int kind;
	const struct ph_cpus *cpus;
};

/* The i386 kernel's struct sigaction, for a handler without SA_RESTORER. */
struct k_sigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	unsigned long mask[2];
};

static void ss_report(void);

static void ss_case(void *p)
{
	const struct ss_arg *a = p;
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
	struct k_sigaction ksa;
	struct sigaction sa;
	extern char ss_vsys_ret[];
	uint32_t *pat, top, i;
	int k;

	if (ph_tls_set(PH_TLS_ENTRY, 0) != PH_TLS_SEL)
		ph_raw_exit(30);
	ss_sel = a->kind ? PH_TLS_SEL : PH_SEL;
	ss_user_ds = PH_USER_DS;
	ss_iters = ph_scale(400);
	/*
	 * Bochs's clock counts instructions: fewer iterations there, but
	 * longer spins, so that SIGPROF (CPU time) still fires in them.
	 */
	ss_spin = ph_bochs() ? 200000 : 50000;
	ss_pid = getpid();
	ss_ncpu = a->cpus->n;
	for (k = 0; k < a->cpus->n; k++) {
		ss_mask[k] = 1ULL << a->cpus->id[k];
		/* TLS base 0 reads slot 0; the PDA base, this CPU's slot */
		ss_expect[k] = a->kind ? 0 : a->cpus->id[k];
	}
	ss_vsys = getauxval(AT_SYSINFO);

	/*
	 * The stack: the loop runs at ss_top, with room for signal frames
	 * below; the vDSO call is made from ss_call_top, above, and the
	 * pattern starts where its frame does.
	 */
	ss_top = ((uint32_t)(uintptr_t)ss_stack + SS_STACK_SIZE / 2) & ~63u;
	top = ss_top + 4096;
	ss_call_top = top;
	pat = (uint32_t *)(uintptr_t)(top - 16);
	for (i = 0; i < (PH_MAX_CPUS * 64 + 64) / 4; i += 4) {
		pat[i] = SS_VSYS_EBP;
		pat[i + 1] = SS_VSYS_EDX;
		pat[i + 2] = SS_VSYS_ECX;
		pat[i + 3] = (uint32_t)(uintptr_t)ss_vsys_ret;
	}

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sa.sa_sigaction = ss_usr1_handler;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_flags = SA_SIGINFO | SA_RESTART;	/* on the odd stack */
	sa.sa_sigaction = ss_prof_handler;
	sigaction(SIGPROF, &sa, NULL);
	sa.sa_sigaction = ss_alrm_handler;
	sigaction(SIGALRM, &sa, NULL);
	memset(&ksa, 0, sizeof(ksa));
	ksa.handler = ss_usr2_handler;
	ksa.flags = SA_SIGINFO;			/* no SA_RESTORER */
	/*
	 * get_sigframe() takes the legacy switch only to a stack inside the
	 * sigaltstack (else it reports an overflow): the bottom half of
	 * ph_altstack, below SIGUSR1's frames at its top.
	 */
	ksa.restorer = ph_altstack + sizeof(ph_altstack) / 2;
	if (syscall(SYS_rt_sigaction, SIGUSR2, &ksa, NULL, 8))
		ph_raw_exit(31);

	ph_fatal_hook = ss_report;
	setitimer(ITIMER_PROF, &it, NULL);
	ss_run();
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_PROF, &it, NULL);
	ss_report();
}

/* What the run saw; also called from the fault handler. */
static void ss_report(void)
{
	ph_res->v[0] = ss_done;
	ph_res->v[1] = ss_bad_ss;
	ph_res->v[2] = ss_bad_read;
	ph_res->v[3] = ss_last_read;
	ph_res->v[4] = ss_bad_pid;
	ph_res->v[5] = ss_aff_err;
	ph_res->v[6] = ss_vdso_ss;
	ph_res->v[7] = ss_vdso_bad;
	ph_res->v[8] = ss_loop_bad_ss;
	ph_res->v[9] = ss_loop_bad_read;
	ph_res->v[10] = ss_usr1;
	ph_res->v[11] = ss_usr1_bad;
	ph_res->v[12] = ss_usr2;
	ph_res->v[13] = ss_usr2_legacy;
	ph_res->v[14] = ss_prof;
	ph_res->v[15] = ss_prof_sel;
	ph_res->v[16] = ss_prof_flat;
	ph_res->v[17] = ss_prof_other;
	ph_res->v[18] = ss_iters;
	ph_res->v[19] = ph_get_seg(ss);
	ph_res->v[20] = ss_alrm;
}

TEST_F_TIMEOUT(hostile, stack_segment, 300)
{
	struct ph_result r[2];
	int k, i;

	for (k = 0; k < 2; k++) {
		struct ss_arg a = { k, &self->cpus };
		const volatile int32_t *v = r[k].v;
		char label[64];

		snprintf(label, sizeof(label), "%s in %%ss", kind_name[k]);
		ph_run(ss_case, &a, 240, &r[k]);
		LOG_RESULT(label, r[k]);
		TH_LOG("%s: %d/%d iterations; bad ss %d/%d, bad reads %d/%d (last %d), bad pid %d, affinity errors %d",
		       label, v[0], v[18], v[1], v[8], v[2], v[9], v[3], v[4],
		       v[5]);
		TH_LOG("%s: vDSO returned with ss %#x (bad pid %d), SIGALRM there %d; SIGUSR1 %d (bad %d), legacy SIGUSR2 %d/%d, SIGPROF %d (ss: odd %d, flat %d, other %d)",
		       label, v[6], v[7], v[20], v[10], v[11], v[13], v[12], v[14],
		       v[15], v[16], v[17]);
		/* It survives, and it was the only one to see the odd SS. */
		EXPECT_EQ(0, r[k].status);
		EXPECT_EQ(1, r[k].done);
		EXPECT_EQ(v[18], v[0]);
		EXPECT_EQ(0, v[1]);
		EXPECT_EQ(0, v[8]);
		EXPECT_EQ(0, v[2]);
		EXPECT_EQ(0, v[9]);
		EXPECT_EQ(0, v[4]);
		EXPECT_EQ(0, v[5]);
		EXPECT_EQ(0, v[7]);
		/*
		 * The SYSEXIT or SYSRET of the vDSO's fast path always
		 * loads __USER_DS (an x86-64 kernel's SYSCALL and SYSENTER
		 * entries even record it as the SS they came from); int
		 * $0x80 returns through IRET, with the SS it saved.
		 */
		if (self->vdso != PH_VDSO_NONE) {
			EXPECT_EQ(self->fast ? PH_USER_DS :
				  (k ? PH_TLS_SEL : PH_SEL), v[6]);
			EXPECT_EQ(v[18], v[20]);
		}
		EXPECT_EQ(v[18], v[10]);
		EXPECT_EQ(0, v[11]);
		EXPECT_EQ(v[18], v[12]);
		EXPECT_EQ(v[18], v[13]);
		/* asynchronous signals did arrive with the odd SS loaded */
		EXPECT_LT(0, v[15]);
		EXPECT_EQ(0, v[17]);
		EXPECT_EQ(PH_USER_DS, v[19]);
		CHECK_WORLD(label);
	}
	/* the same outcome through PDA and TLS */
	EXPECT_EQ(r[0].status, r[1].status);
	for (i = 0; i < 21; i++)
		if (i != 3 && i != 14 && i != 15 && i != 16 &&
		    (i != 6 || self->fast))
			EXPECT_EQ(r[0].v[i], r[1].v[i]);
}

TEST_HARNESS_MAIN
