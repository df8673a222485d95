// SPDX-License-Identifier: GPL-2.0
/*
 * probe.*: the instructions that look at a descriptor without loading it
 * (lsl, lar, verr: the way user space asks the GDT a question, as
 * __vdso_getcpu does with lsl) and the two that read TSC_AUX (rdpid,
 * rdtscp). Eight independent instructions per iteration.
 *
 * probe.iret: an iret to the same privilege level, with the pushes that
 * build its frame.  The kernel's iret to user mode also changes privilege
 * (and reloads %ss), so this is a lower bound of what that one costs;
 * the segment census (tools/segcensus) uses it as such.  Natively only:
 * QEMU 7.2's TCG pops an iret's frame with supervisor accesses even at
 * CPL 3, so with SMAP on the guest kernel sees a supervisor fault on a
 * user page from user mode and oopses (i386-smp and i386-up, both
 * mainline's handling), and an emulated timing means nothing anyway.
 */
#include "segs.h"
#include "cpuread.h"

static int setup_sel(const struct bench *b, char *why)
{
	(void)b;
	/* lsl, lar and verr only look at the descriptor: nothing to load. */
	return sb_seg_usable(SEL_UDS, SB_NOREG, 0, why);
}

static int setup_rdpid(const struct bench *b, char *why)
{
	(void)b;
	return sb_method_probe(M_RDPID, why);
}

static void exec_rdtscp(void *p)
{
	(void)p;
	asm volatile("rdtscp" : : : "eax", "ecx", "edx");
}

static void exec_rdtsc(void *p)
{
	(void)p;
	asm volatile("rdtsc" : : : "eax", "edx");
}

/* CR4.TSD (prctl PR_SET_TSC) or a hypervisor may fault what CPUID offers. */
static int try_insn(void (*fn)(void *), const char *name, char *why)
{
	int sig = sb_trap(fn, NULL);

	if (sig) {
		snprintf(why, SB_REASON_LEN, "%s raises %s", name,
			 sb_sig_name(sig));
		return -1;
	}
	return 0;
}

static int setup_rdtscp(const struct bench *b, char *why)
{
	unsigned int a, bx, c, d;

	(void)b;
	asm volatile("cpuid" : "=a" (a), "=b" (bx), "=c" (c), "=d" (d)
		     : "0" (0x80000001u), "2" (0));
	if (!(d & (1u << 27))) {
		snprintf(why, SB_REASON_LEN, "no RDTSCP (CPUID 80000001:EDX[27])");
		return -1;
	}
	return try_insn(exec_rdtscp, "CPUID offers RDTSCP but rdtscp", why);
}

static int setup_rdtsc(const struct bench *b, char *why)
{
	(void)b;
	return try_insn(exec_rdtsc, "rdtsc", why);
}

static void run_lsl(const struct bench *b, unsigned long n)
{
	unsigned int v, s = sb_segs[SEL_UDS].sel;

	(void)b;
	SB_LOOP(n, asm volatile(SB_REP8("lsl %1, %0\n\t")
				: "=&r" (v) : "r" (s) : "cc"));
}

static void run_lar(const struct bench *b, unsigned long n)
{
	unsigned int v, s = sb_segs[SEL_UDS].sel;

	(void)b;
	SB_LOOP(n, asm volatile(SB_REP8("lar %1, %0\n\t")
				: "=&r" (v) : "r" (s) : "cc"));
}

static void run_verr(const struct bench *b, unsigned long n)
{
	unsigned int s = sb_segs[SEL_UDS].sel;

	(void)b;
	SB_LOOP(n, asm volatile(SB_REP8("verr %w0\n\t") : : "r" (s) : "cc"));
}

static void run_rdpid(const struct bench *b, unsigned long n)
{
	unsigned long v;

	(void)b;
	SB_LOOP(n, asm volatile(SB_REP8("rdpid %0\n\t") : "=r" (v)));
}

static void run_rdtscp(const struct bench *b, unsigned long n)
{
	(void)b;
	SB_LOOP(n, asm volatile(SB_REP8("rdtscp\n\t")
				: : : "eax", "ecx", "edx"));
}

static void run_rdtsc(const struct bench *b, unsigned long n)
{
	(void)b;
	SB_LOOP(n, asm volatile(SB_REP8("rdtsc\n\t") : : : "eax", "edx"));
}

#if defined(__x86_64__)
/* Below the red zone, a frame for iretq: ss, rsp, rflags, cs, rip. */
#define IRET_SAME_CPL						\
	"sub $128, %%rsp\n\t"					\
	"mov %%ss, %k0\n\tpushq %0\n\t"			\
	"lea 8(%%rsp), %0\n\tpushq %0\n\t"			\
	"pushfq\n\t"						\
	"mov %%cs, %k0\n\tpushq %0\n\t"			\
	"lea 1f(%%rip), %0\n\tpushq %0\n\t"			\
	"iretq\n1:\n\t"					\
	"add $128, %%rsp\n\t"
#else
#define IRET_SAME_CPL						\
	"pushfl\n\tpushl %%cs\n\tpushl $1f\n\tiret\n1:\n\t"
#endif

static int setup_iret(const struct bench *b, char *why)
{
	struct sb_machine m;

	(void)b;
	sb_sysinfo(&m);
	if (m.mode != MODE_NATIVE) {
		snprintf(why, SB_REASON_LEN, "native only: %s (QEMU TCG pops "
			 "a user iret's frame as the kernel: an SMAP fault)",
			 m.virt);
		return -1;
	}
	return 0;
}

static void run_iret(const struct bench *b, unsigned long n)
{
	unsigned long tmp;

	(void)b;
	SB_LOOP(n, asm volatile(SB_REP8(IRET_SAME_CPL)
				: "=&r" (tmp) : : "memory", "cc"));
}

const struct bench sb_probe_benches[] = {
	{ .name = "probe.lsl", .group = "descriptor-probe",
	  .desc = "lsl of __USER_DS", .ops = SB_UNROLL,
	  .setup = setup_sel, .run = run_lsl },
	{ .name = "probe.lar", .group = "descriptor-probe",
	  .desc = "lar of __USER_DS", .ops = SB_UNROLL,
	  .setup = setup_sel, .run = run_lar },
	{ .name = "probe.verr", .group = "descriptor-probe",
	  .desc = "verr of __USER_DS", .ops = SB_UNROLL,
	  .setup = setup_sel, .run = run_verr },
	{ .name = "probe.rdpid", .group = "descriptor-probe",
	  .desc = "rdpid", .ops = SB_UNROLL,
	  .setup = setup_rdpid, .run = run_rdpid },
	{ .name = "probe.rdtscp", .group = "descriptor-probe",
	  .desc = "rdtscp (TSC and TSC_AUX)", .ops = SB_UNROLL,
	  .setup = setup_rdtscp, .run = run_rdtscp },
	{ .name = "probe.rdtsc", .group = "descriptor-probe",
	  .desc = "rdtsc, for comparison with rdtscp", .ops = SB_UNROLL,
	  .setup = setup_rdtsc, .run = run_rdtsc },
	{ .name = "probe.iret", .group = "descriptor-probe",
	  .desc = "iret to the same privilege level, frame pushes included",
	  .ops = SB_UNROLL, .setup = setup_iret, .run = run_iret },
	{ }
};
