/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared code of the 32-bit x86 tests (x86_pda_lifecycle.c,
 * x86_pda_hostile*.c, x86_user_fs.c, x86_seg_fuzz_*.c): the PDA user
 * segment (selector 0xeb, base = cpu << 6) driven with inline asm only,
 * next to an ordinary set_thread_area() TLS descriptor for comparison.
 *
 * - Segment registers: ph_get_seg()/ph_set_seg() on any of cs ds es fs gs
 *   ss; ph_fs_read() reads ph_table through %fs (slot <cpu> holds <cpu>).
 * - TLS: ph_tls_set() installs a flat DPL-3 data descriptor with a chosen
 *   base in GDT entry PH_TLS_ENTRY (selector PH_TLS_SEL).
 * - Children: ph_run() forks a child that runs one case with a handler
 *   for every fault signal; the handler writes what the kernel reported
 *   (siginfo and the ucontext registers) to shared memory and exits.
 * - The world outside: klog.h scans /dev/kmsg for splats since the
 *   last scan; ph_bystander_*() runs another process that keeps its own
 *   %fs (a TLS selector), %gs (glibc's), flat %ss/%ds/%es and, in a
 *   second thread, the PDA selector, and checks them in a loop.
 * - Bochs (pda.bochs on the command line) is two orders of magnitude
 *   slower than QEMU: ph_scale() shrinks iteration counts there.
 * - The kernel: the same binary runs on an i386 kernel and as a compat
 *   task on an x86-64 one.  ph_init() reads the user selectors, the TLS
 *   entries and the kernel's word size (ph_kernel64) from the machine;
 *   ph_vdso_entry() says how __kernel_vsyscall enters the kernel.
 *
 * Nothing here depends on tools/lib/pda/pda.h.
 */
#ifndef PDA_TESTS_PDA_HOSTILE_H
#define PDA_TESTS_PDA_HOSTILE_H

#include <asm/ldt.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "cmdline.h"
#include "cpulist.h"
#include "klog.h"

/* The ABI header of the kernel side (repository root). */
#include "../../../arch/x86/include/uapi/asm/pda.h"

#if !defined(__i386__)
#error "x86-32 only"
#endif

#define PH_HWCAP2	(1u << 2)			/* HWCAP2_PDA_USER_SEG */
#define PH_SEL		PDA_USER_SELECTOR		/* 0xeb */
#define PH_MAX_CPUS	64
#define PH_SLOT_INTS	(PDA_USER_SLOT_SIZE / 4)
#define PH_GDT_ENTRIES	32	/* on both kernels; PDA: entry 29 */

/*
 * The same binary runs on an i386 kernel and, as a 32-bit (compat)
 * process, on an x86-64 one, whose GDTs differ.  What the tests need of
 * the layout is read at run time by ph_init(), never assumed:
 *
 *                   i386 kernel  x86-64 kernel
 *   __USER_CS       0x73         0x23 (__USER32_CS)  %cs
 *   __USER_DS       0x7b         0x2b                %ss
 *   TLS entries     6-8          12-14               get_thread_area()
 *   PH_TLS_ENTRY    8 (0x43)     14 (0x73)           the last of them
 *   selector 0x33   TLS entry 6  64-bit __USER_CS    lar
 *
 * glibc holds the first TLS entry for %gs, a bystander's
 * set_thread_area(-1) gets the second, so the tests' own fixed entry is
 * the last one.  PH_USER_CS, PH_USER_DS, PH_TLS_ENTRY and PH_TLS_SEL are
 * variables, valid after ph_init() (and not constants for asm "i").
 */
static unsigned int ph_user_cs, ph_user_ds, ph_tls_entry;
static int ph_kernel64;		/* x86-64 kernel: we are a compat task */
static int ph_fsgsbase;		/* ... whose context switch uses FSGSBASE */

#define PH_HWCAP2_FSGSBASE	(1u << 1)	/* <asm/hwcap2.h> */

#define PH_USER_CS	ph_user_cs
#define PH_USER_DS	ph_user_ds
#define PH_TLS_ENTRY	ph_tls_entry
#define PH_TLS_SEL	(PH_TLS_ENTRY * 8 + 3)

_Static_assert(PDA_USER_SELECTOR == 0xeb, "PDA selector");
_Static_assert(PDA_USER_SLOT_SIZE == 1 << PDA_USER_SHIFT, "slot size");

/* Slot <cpu> of this table holds <cpu>: "%fs:ph_table" is the CPU. */
static int ph_table[PH_MAX_CPUS * PH_SLOT_INTS] __attribute__((aligned(64)));

#define ph_get_seg(seg) ({						\
	unsigned short __v;						\
	asm volatile("movw %%" #seg ", %0" : "=rm" (__v));		\
	(unsigned int)__v; })

#define ph_set_seg(seg, v)						\
	asm volatile("movw %w0, %%" #seg : : "r" ((unsigned int)(v)) : "memory")

/* The CPU as seen through %fs; with a TLS base of B it is slot B / 64. */
static inline int ph_fs_read(void)
{
	int v;

	asm volatile("movl %%fs:(%1), %0" : "=r" (v) : "r" (ph_table) : "memory");
	return v;
}

static inline uint32_t ph_fs_load32(uint32_t off)
{
	uint32_t v;

	asm volatile("movl %%fs:(%1), %0" : "=r" (v) : "r" (off) : "memory");
	return v;
}

/* Raw int $0x80 system calls: no libc, no %gs, no stack beyond ours. */
static inline long ph_int80(long nr, long a, long b, long c)
{
	long ret;

	asm volatile("int $0x80" : "=a" (ret)
		     : "0" (nr), "b" (a), "c" (b), "d" (c) : "memory");
	return ret;
}

/* The same through the vDSO's __kernel_vsyscall (SYSENTER when it can). */
static inline long ph_vsys(long nr, long a, long b, long c)
{
	unsigned long entry = getauxval(AT_SYSINFO);
	long ret;

	if (!entry)
		return ph_int80(nr, a, b, c);
	asm volatile("call *%%esi" : "=a" (ret)
		     : "0" (nr), "b" (a), "c" (b), "d" (c), "S" (entry)
		     : "memory");
	return ret;
}

static inline __attribute__((noreturn)) void ph_raw_exit(int code)
{
	for (;;)
		ph_int80(SYS_exit_group, code, 0, 0);
}

static inline int ph_have_pda(void)
{
	return !!(getauxval(AT_HWCAP2) & PH_HWCAP2);
}

/* pda.bochs on the kernel command line: the slow, exact emulator. */
static inline int ph_bochs(void)
{
	static int cached = -1;

	if (cached < 0)
		cached = cmdline_has("pda.bochs");
	return cached;
}

static inline long ph_scale(long n)
{
	if (ph_bochs())
		n /= 20;
	return n > 0 ? n : 1;
}

static inline double ph_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* --------------------------------------------------------------- CPUs */

struct ph_cpus {
	int n;
	int id[PH_MAX_CPUS];
};

static inline int ph_cpus_online(struct ph_cpus *c)
{
	c->n = cpulist_online(c->id, PH_MAX_CPUS);
	if (c->n > 0)
		return 0;
	c->n = 0;
	return -1;
}

static inline int ph_pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	return sched_setaffinity(0, sizeof(s), &s);
}

static inline int ph_unpin(const struct ph_cpus *c)
{
	cpu_set_t s;
	int i;

	CPU_ZERO(&s);
	for (i = 0; i < c->n; i++)
		CPU_SET(c->id[i], &s);
	return sched_setaffinity(0, sizeof(s), &s);
}

/* ---------------------------------------------------------------- TLS */

/*
 * A flat, page-granular, 32-bit, writable, DPL-3 data segment with the
 * given base in TLS entry @entry: as close to the PDA descriptor as
 * set_thread_area() allows.  Returns the selector or -1.
 */
static inline int ph_tls_set(int entry, uint32_t base)
{
	struct user_desc d = {
		.entry_number	= entry,
		.base_addr	= base,
		.limit		= 0xfffff,
		.seg_32bit	= 1,
		.contents	= 0,
		.read_exec_only	= 0,
		.limit_in_pages	= 1,
		.seg_not_present = 0,
		.useable	= 1,
	};

	if (syscall(SYS_set_thread_area, &d))
		return -1;
	return d.entry_number * 8 + 3;
}

/* ---------------------------------------------------------- setup */

static unsigned int ph_glibc_gs;

struct ph_result {
	volatile int done;		/* the case ran to its end */
	volatile int signo, code;	/* fatal signal caught, or 0 */
	uint32_t addr, trapno, err, ip;
	uint32_t cs, ss, ds, es, fs, gs;	/* from the ucontext */
	int status;			/* wait status, or -1 on timeout */
	volatile int32_t v[32];		/* case-specific */
};

/* Shared with the ph_run() child; set up by ph_init(). */
static struct ph_result *ph_res;

/* If set, the fault handler calls it before exiting (to save progress). */
static void (*ph_fatal_hook)(void);

/* lar: the access rights of @sel's descriptor, or -1 if it has none. */
static inline int ph_lar(unsigned int sel, uint32_t *ar)
{
	uint32_t v = 0;
	uint8_t ok;

	asm volatile("larl %2, %0\n\tsetz %1"
		     : "+r" (v), "=q" (ok) : "r" (sel) : "cc");
	*ar = v;
	return ok ? 0 : -1;
}

/*
 * The GDT's TLS entries: those get_thread_area() answers for (it refuses
 * any other with EINVAL, used or not).  Returns the last, or -1.
 */
static inline int ph_tls_last(void)
{
	struct user_desc d;
	int n, last = -1;

	for (n = 0; n < PH_GDT_ENTRIES; n++) {
		memset(&d, 0, sizeof(d));
		d.entry_number = n;
		if (!syscall(SYS_get_thread_area, &d))
			last = n;
	}
	return last;
}

/*
 * A 64-bit kernel has a 64-bit code segment (its __USER_CS) at 0x33; an
 * i386 kernel has TLS entry 6 there, which set_thread_area() cannot make
 * a 64-bit one (and glibc uses as data).  Unlike uname(), this does not
 * change under personality(PER_LINUX32).
 */
static inline int ph_kernel_is_64(void)
{
	uint32_t ar;

	if (ph_lar(0x33, &ar))
		return 0;
	/* code (S and bit 3 of the type), present, DPL 3, L */
	return (ar & 0x9800) == 0x9800 && (ar & 0x6000) == 0x6000 &&
	       (ar & (1u << 21));
}

static inline int ph_init(void)
{
	int i, tls;

	for (i = 0; i < PH_MAX_CPUS; i++)
		ph_table[i * PH_SLOT_INTS] = i;
	ph_glibc_gs = ph_get_seg(gs);
	ph_user_cs = ph_get_seg(cs);
	ph_user_ds = ph_get_seg(ss);
	ph_kernel64 = ph_kernel_is_64();
	/* AT_HWCAP2 says whether user space may use FSGSBASE: the kernel does. */
	ph_fsgsbase = ph_kernel64 &&
		      (getauxval(AT_HWCAP2) & PH_HWCAP2_FSGSBASE);
	tls = ph_tls_last();
	if (tls < 0)
		return -1;
	ph_tls_entry = tls;
	if (!ph_res) {
		ph_res = mmap(NULL, sizeof(*ph_res), PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (ph_res == MAP_FAILED) {
			ph_res = NULL;
			return -1;
		}
	}
	return 0;
}

/* Context switches of the calling thread so far, or -1. */
static inline long ph_thread_switches(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		return -1;
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

/*
 * ph_kernel64 against uname(): "x86_64" for a compat task on a 64-bit
 * kernel, unless personality(PER_LINUX32) makes it "i686" there too.
 * NULL if they agree, else why not.
 */
static inline const char *ph_kernel_mismatch(void)
{
	struct utsname u;
	int x86_64, linux32;

	if (uname(&u))
		return "uname() failed";
	x86_64 = !strcmp(u.machine, "x86_64");
	linux32 = (personality(0xffffffff) & PER_MASK) == PER_LINUX32;
	if (x86_64 && !ph_kernel64)
		return "uname() says x86_64, but 0x33 is no 64-bit code segment";
	if (!x86_64 && ph_kernel64 && !linux32)
		return "0x33 is a 64-bit code segment, but uname() is not x86_64";
	return NULL;
}

/*
 * How the vDSO's __kernel_vsyscall enters the kernel: SYSENTER (0f 34),
 * SYSCALL (0f 05: an x86-64 kernel on AMD) or int $0x80 (cd 80), which
 * ends the alternatives it picks from; PH_VDSO_NONE without a vDSO.
 */
enum { PH_VDSO_NONE, PH_VDSO_INT80, PH_VDSO_SYSENTER, PH_VDSO_SYSCALL };

static inline int ph_vdso_entry(void)
{
	const unsigned char *p = (const void *)getauxval(AT_SYSINFO);
	int i;

	if (!p)
		return PH_VDSO_NONE;
	for (i = 0; i < 32; i++) {
		if (p[i] == 0x0f && p[i + 1] == 0x34)
			return PH_VDSO_SYSENTER;
		if (p[i] == 0x0f && p[i + 1] == 0x05)
			return PH_VDSO_SYSCALL;
		if (p[i] == 0xcd && p[i + 1] == 0x80)
			break;
	}
	return PH_VDSO_INT80;
}

static const char *const ph_vdso_name[] = {
	"none", "int $0x80", "SYSENTER", "SYSCALL",
};

/* ------------------------------------------------------- child cases */

#define PH_EXIT_SIGNALLED	99

static char ph_altstack[65536] __attribute__((aligned(16)));

/*
 * A fault in a case: record what the kernel says and leave.  %gs may be
 * anything here (the kernel does not touch it on signal delivery), so
 * restore glibc's before anything could use TLS, and exit with a raw
 * system call.
 */
static void __attribute__((no_stack_protector, used))
ph_fatal(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	greg_t *g = uc->uc_mcontext.gregs;

	ph_set_seg(gs, ph_glibc_gs);
	ph_res->signo = sig;
	ph_res->code = si->si_code;
	ph_res->addr = (uint32_t)(uintptr_t)si->si_addr;
	ph_res->trapno = g[REG_TRAPNO];
	ph_res->err = g[REG_ERR];
	ph_res->ip = g[REG_EIP];
	ph_res->cs = g[REG_CS] & 0xffff;
	ph_res->ss = g[REG_SS] & 0xffff;
	ph_res->ds = g[REG_DS] & 0xffff;
	ph_res->es = g[REG_ES] & 0xffff;
	ph_res->fs = g[REG_FS] & 0xffff;
	ph_res->gs = g[REG_GS] & 0xffff;
	if (ph_fatal_hook)
		ph_fatal_hook();
	ph_raw_exit(PH_EXIT_SIGNALLED);
}

static inline void ph_catch_faults(void)
{
	static const int sigs[] = { SIGSEGV, SIGILL, SIGBUS, SIGFPE, SIGTRAP };
	struct sigaction sa;
	stack_t ss = {
		.ss_sp = ph_altstack,
		.ss_size = sizeof(ph_altstack),
	};
	size_t i;

	sigaltstack(&ss, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = ph_fatal;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

/* waitpid() with a deadline; kills the child (by pid) when it passes. */
static inline int ph_wait(pid_t pid, int *status, double seconds)
{
	double end = ph_now() + seconds;
	pid_t r;

	for (;;) {
		r = waitpid(pid, status, WNOHANG | __WALL);
		if (r == pid)
			return 0;
		if (r < 0)
			return -1;
		if (ph_now() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, status, __WALL);
			return -1;
		}
		usleep(2000);
	}
}

/*
 * Run fn(arg) in a forked child with every fault caught.  *out gets the
 * child's record; out->status its wait status (-1 if it had to be
 * killed after @seconds).
 */
static inline void ph_run(void (*fn)(void *), void *arg, double seconds,
			  struct ph_result *out)
{
	int status = 0;
	pid_t pid;

	memset(ph_res, 0, sizeof(*ph_res));
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		ph_catch_faults();
		fn(arg);
		ph_set_seg(gs, ph_glibc_gs);
		ph_res->done = 1;
		ph_raw_exit(0);
	}
	if (pid < 0 || ph_wait(pid, &status, seconds))
		status = -1;
	*out = *ph_res;
	out->status = status;
}

static inline const char *ph_describe(const struct ph_result *r, char *buf,
				      size_t len)
{
	if (r->status == -1)
		snprintf(buf, len, "timed out");
	else if (r->signo)
		snprintf(buf, len,
			 "signal %d code %d addr %#x trapno %u err %#x ip %#x "
			 "cs %#x ss %#x ds %#x es %#x fs %#x gs %#x",
			 r->signo, r->code, r->addr, r->trapno, r->err, r->ip,
			 r->cs, r->ss, r->ds, r->es, r->fs, r->gs);
	else if (WIFSIGNALED(r->status))
		snprintf(buf, len, "killed by signal %d", WTERMSIG(r->status));
	else
		snprintf(buf, len, "exit %d, done %d",
			 WEXITSTATUS(r->status), r->done);
	return buf;
}

/* ---------------------------------------------------------- bystander */

/*
 * Another process, minding its own business while a case runs: its main
 * thread holds a TLS selector in %fs (base: its marker), glibc's %gs, and
 * flat %ss/%ds/%es; its second thread holds the PDA selector and re-pins
 * itself round the CPUs, checking the CPU it reads.  On each request byte
 * it checks once more and answers with a report.
 */
#define PH_BY_MAGIC	0x5ca1ab1eu

struct ph_by_report {
	uint32_t checks;	/* total so far, both threads */
	uint32_t errors;
	uint32_t what, got, want;	/* the first error */
};

struct ph_bystander {
	pid_t pid;
	int req, resp;		/* our ends */
	uint32_t last_checks;
};

static struct {
	uint32_t marker[2];
	volatile uint32_t checks, errors, what, got, want;
	unsigned int fs_sel, gs_sel, gs0;
	struct ph_cpus cpus;
} ph_by;

static inline void ph_by_fail(uint32_t what, uint32_t got, uint32_t want)
{
	if (__sync_fetch_and_add(&ph_by.errors, 1) == 0) {
		ph_by.what = what;
		ph_by.got = got;
		ph_by.want = want;
	}
}

#define PH_BY_CHECK(what, got, want) do {				\
	uint32_t __g = (got), __w = (want);				\
	if (__g != __w)							\
		ph_by_fail(what, __g, __w);				\
} while (0)

static inline void ph_by_check_main(void)
{
	uint32_t gs0;

	PH_BY_CHECK(1, ph_get_seg(fs), ph_by.fs_sel);
	PH_BY_CHECK(2, ph_fs_load32(0), ph_by.marker[0]);
	PH_BY_CHECK(3, ph_fs_load32(4), ph_by.marker[1]);
	PH_BY_CHECK(4, ph_get_seg(gs), ph_by.gs_sel);
	asm volatile("movl %%gs:0, %0" : "=r" (gs0));
	PH_BY_CHECK(5, gs0, ph_by.gs0);
	PH_BY_CHECK(6, ph_get_seg(ss), PH_USER_DS);
	PH_BY_CHECK(7, ph_get_seg(ds), PH_USER_DS);
	PH_BY_CHECK(8, ph_get_seg(es), PH_USER_DS);
	PH_BY_CHECK(9, ph_get_seg(cs), PH_USER_CS);
	__sync_fetch_and_add(&ph_by.checks, 1);
}

/* Sleep a little: bystanders should not starve the cases on UP. */
static inline void ph_by_nap(void)
{
	struct timespec ts = { 0, 300000 };

	nanosleep(&ts, NULL);
}

static void *ph_by_pda_thread(void *unused)
{
	unsigned int k = 0;
	int i;

	(void)unused;
	ph_set_seg(fs, PH_SEL);
	for (;; k++) {
		int cpu = ph_by.cpus.id[k % ph_by.cpus.n];

		if (ph_pin(cpu))
			ph_by_fail(20, errno, 0);
		for (i = 0; i < 20; i++) {
			PH_BY_CHECK(21, ph_get_seg(fs), PH_SEL);
			PH_BY_CHECK(22, ph_fs_read(), cpu);
			PH_BY_CHECK(23, sched_getcpu(), cpu);
			PH_BY_CHECK(24, ph_get_seg(ss), PH_USER_DS);
			__sync_fetch_and_add(&ph_by.checks, 1);
			if (i % 4 == 0)
				sched_yield();
		}
		ph_by_nap();
	}
	return NULL;
}

static __attribute__((noreturn)) void ph_by_main(int req, int resp)
{
	struct pollfd p = { .fd = req, .events = POLLIN };
	pthread_t t;
	unsigned int k;
	int sel;

	ph_by.marker[0] = PH_BY_MAGIC;
	ph_by.marker[1] = (uint32_t)getpid();
	ph_by.gs_sel = ph_get_seg(gs);
	asm volatile("movl %%gs:0, %0" : "=r" (ph_by.gs0));
	if (ph_cpus_online(&ph_by.cpus))
		_exit(2);
	sel = ph_tls_set(-1, (uint32_t)(uintptr_t)ph_by.marker);
	if (sel < 0)
		_exit(3);
	ph_by.fs_sel = sel;
	ph_set_seg(fs, sel);
	if (pthread_create(&t, NULL, ph_by_pda_thread, NULL))
		_exit(4);
	for (k = 0;; k++) {
		ph_by_check_main();
		if (k % 4 == 0)
			sched_yield();
		if (k % 16 == 0)
			ph_by_nap();
		if (k % 16 == 0 && poll(&p, 1, 0) == 1) {
			struct ph_by_report rep;
			char c;

			if (read(req, &c, 1) != 1 || c == 'q')
				_exit(0);
			ph_by_check_main();
			rep.checks = ph_by.checks;
			rep.errors = ph_by.errors;
			rep.what = ph_by.what;
			rep.got = ph_by.got;
			rep.want = ph_by.want;
			if (write(resp, &rep, sizeof(rep)) != sizeof(rep))
				_exit(5);
		}
	}
}

static inline int ph_bystander_start(struct ph_bystander *b)
{
	int req[2], resp[2];

	if (pipe(req) || pipe(resp))
		return -1;
	fflush(stdout);
	fflush(stderr);
	b->pid = fork();
	if (b->pid < 0)
		return -1;
	if (b->pid == 0) {
		close(req[1]);
		close(resp[0]);
		ph_by_main(req[0], resp[1]);
	}
	close(req[0]);
	close(resp[1]);
	b->req = req[1];
	b->resp = resp[0];
	b->last_checks = 0;
	return 0;
}

/*
 * Ask the bystander how it is.  0 if it answered, had no errors and has
 * made progress since the last query; otherwise -1 with @why filled in.
 */
static inline int ph_bystander_query(struct ph_bystander *b, char *why,
				     size_t len)
{
	struct pollfd p = { .fd = b->resp, .events = POLLIN };
	struct ph_by_report rep;
	int status;

	if (write(b->req, "?", 1) != 1) {
		snprintf(why, len, "bystander gone: %s", strerror(errno));
		return -1;
	}
	if (poll(&p, 1, 60000) != 1 ||
	    read(b->resp, &rep, sizeof(rep)) != sizeof(rep)) {
		if (waitpid(b->pid, &status, WNOHANG) == b->pid)
			snprintf(why, len, "bystander died: status %#x",
				 status);
		else
			snprintf(why, len, "bystander does not answer");
		return -1;
	}
	if (rep.errors) {
		snprintf(why, len,
			 "bystander saw %u error(s); first: check %u got %#x want %#x",
			 rep.errors, rep.what, rep.got, rep.want);
		return -1;
	}
	if (rep.checks <= b->last_checks) {
		snprintf(why, len, "bystander made no progress (%u checks)",
			 rep.checks);
		return -1;
	}
	b->last_checks = rep.checks;
	return 0;
}

/*
 * After a case: is the world outside it intact?  No kernel-log splat since
 * the last scan of @klog (an unreadable log is not a failure here; PID 1
 * judges the whole log), and the bystander answers, unharmed.  Logs what
 * is wrong, prefixed with @what.
 */
static inline int ph_world_intact(int klog, struct ph_bystander *b,
				  const char *what)
{
	char why[512];
	int n = klog_scan(klog, why, sizeof(why)), ok = 1;

	if (n > 0) {
		fprintf(stderr, "# %s: %d kernel log splat(s), first: %s\n",
			what, n, why);
		ok = 0;
	}
	if (ph_bystander_query(b, why, sizeof(why))) {
		fprintf(stderr, "# %s: %s\n", what, why);
		ok = 0;
	}
	return ok;
}

static inline void ph_bystander_stop(struct ph_bystander *b)
{
	int status;

	if (b->pid <= 0)
		return;
	if (write(b->req, "q", 1) != 1 || ph_wait(b->pid, &status, 10))
		kill(b->pid, SIGKILL);
	waitpid(b->pid, &status, 0);
	close(b->req);
	close(b->resp);
	b->pid = 0;
}

#endif /* PDA_TESTS_PDA_HOSTILE_H */
