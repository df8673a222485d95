// SPDX-License-Identifier: GPL-2.0
/*
 * seg_census: the guest half of the segment census (scripts/harness/
 * census.py).  Booted under QEMU with tools/segcensus's plugin, it runs
 * each kernel path inside census windows (census_marker.h); the plugin
 * counts every segment-register write in them, user and kernel apart.
 *
 * Paths, each REPS windows after one warm-up window:
 *
 *	empty		the two markers alone (what every window adds)
 *	sys.int80	getppid through int $0x80 (32-bit builds)
 *	sys.vsyscall	getppid through __kernel_vsyscall (32-bit builds)
 *	sys.syscall	getppid through syscall (64-bit builds)
 *	*.pda		the same with the PDA selector in the PDA register
 *			(%fs in 32-bit programs, %gs in 64-bit ones, as
 *			pda.h decides): the mixed use of the 2006 debate
 *	fault.anon	a write to a fresh anonymous page
 *	ctxsw.same	a pipe round trip between two threads pinned to CPU 0:
 *			two context switches (ops=2), two writes, two reads
 *	ctxsw.same.pda	the same, both threads holding the PDA selector
 *	migrate		sched_setaffinity() from CPU 0 to CPU 1 (and back
 *			outside the window), counting every CPU (the other
 *			paths count CPU 0 only)
 *	signal		kill() of itself, the empty handler, sigreturn
 *	known		KNOWN_LOADS loads of the user data selector (%ss's)
 *			into the PDA register,
 *			then KNOWN_LOADS of the null selector: a window
 *			whose answer is known, which the harness checks the
 *			plugin's counts against (and then drops)
 *	irq		a user loop until an interrupt lands in it (seen as
 *			a jump of the instruction-counting TSC): the
 *			interrupt path, kernel mode only.  With several
 *			vCPUs the TSC also jumps when another vCPU takes its
 *			turn; those windows see no kernel entry, and the
 *			harness drops them
 *
 * Output, for the harness to join with the plugin's windows by id:
 *
 *	seg-census: path ID NAME ops=N
 *	seg-census: path ID NAME n/a REASON
 *	seg-census: done
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../tools/lib/pda/pda.h"
#include "../../tools/segcensus/census_marker.h"

#define REPS		9
#define PAGE		4096
#define KNOWN_LOADS	7
/* TSC steps bigger than this in a tight loop are an interrupt (-icount). */
#define IRQ_GAP		200
#define IRQ_SPIN_MAX	2000000000ull

#if defined(__x86_64__)
#define OPEN		CENSUS_OP_OPEN64
#define NR_GETPPID	110
#define NR_KILL		62
#else
#define OPEN		CENSUS_OP_OPEN32
#define NR_GETPPID	64
#define NR_KILL		37
#endif

enum path {
	P_EMPTY = 1,
	P_INT80, P_INT80_PDA,
	P_VSYSCALL, P_VSYSCALL_PDA,
	P_SYSCALL, P_SYSCALL_PDA,
	P_FAULT,
	P_CTXSW, P_CTXSW_PDA,
	P_MIGRATE,
	P_SIGNAL,
	P_IRQ,
	P_KNOWN,
};

static int failed;

/*
 * One warm-up window and REPS measured ones of @body, counting what this
 * CPU runs (the program stays on CPU 0; migrate() opens its own windows,
 * which count every CPU).  The id is an immediate in the marker, so a path's two
 * variants (register 0, PDA selector held) are two expansions.
 */
#define WINDOWS_SCOPED(id, body) do {					\
	int rep_;							\
									\
	for (rep_ = 0; rep_ <= REPS; rep_++) {				\
		CENSUS_MARK(OPEN, id);					\
		body;							\
		CENSUS_MARK(CENSUS_OP_CLOSE, (id) & CENSUS_ID_MASK);	\
	}								\
} while (0)

#define WINDOWS(id, body)	WINDOWS_SCOPED((id) | CENSUS_LOCAL, body)

#define WINDOWS_EITHER(pda, id, id_pda, body) do {			\
	if (pda)							\
		WINDOWS(id_pda, body);					\
	else								\
		WINDOWS(id, body);					\
} while (0)

static void __attribute__((format(printf, 4, 0)))
say_path(int id, const char *name, int pda, const char *fmt, const char *arg)
{
	printf("seg-census: path %d %s%s ", id, name, pda ? ".pda" : "");
	printf(fmt, arg);
	putchar('\n');
	fflush(stdout);
}

static void announce(int id, const char *name, int pda, int ops)
{
	char n[16];

	snprintf(n, sizeof(n), "%d", ops);
	say_path(id, name, pda, "ops=%s", n);
}

static void not_here(int id, const char *name, int pda, const char *why)
{
	say_path(id, name, pda, "n/a %s", why);
}

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* ------------------------------------------------------- the PDA register */

static void pda_load(unsigned int sel)
{
	asm volatile("mov %0, %%" PDA_SEG : : "r" (sel) : "memory");
}

/* ---------------------------------------------------------- null syscalls */

#if defined(__i386__)
static long getppid_int80(void)
{
	long r;

	asm volatile("int $0x80" : "=a" (r) : "0" (NR_GETPPID) : "memory");
	return r;
}

static void *vsyscall_entry;

static long getppid_vsyscall(void)
{
	long r;

	asm volatile("call *%1" : "=a" (r)
		     : "rm" (vsyscall_entry), "0" (NR_GETPPID)
		     : "memory", "ecx", "edx");
	return r;
}

static void syscall_paths(int pda)
{
	announce(pda ? P_INT80_PDA : P_INT80, "sys.int80", pda, 1);
	WINDOWS_EITHER(pda, P_INT80, P_INT80_PDA, getppid_int80());
	vsyscall_entry = (void *)getauxval(AT_SYSINFO);
	if (!vsyscall_entry) {
		not_here(pda ? P_VSYSCALL_PDA : P_VSYSCALL, "sys.vsyscall",
			 pda, "no AT_SYSINFO");
		return;
	}
	announce(pda ? P_VSYSCALL_PDA : P_VSYSCALL, "sys.vsyscall", pda, 1);
	WINDOWS_EITHER(pda, P_VSYSCALL, P_VSYSCALL_PDA, getppid_vsyscall());
}
#else
static long getppid_syscall(void)
{
	long r;

	asm volatile("syscall" : "=a" (r) : "0" (NR_GETPPID)
		     : "memory", "rcx", "r11");
	return r;
}

static void syscall_paths(int pda)
{
	announce(pda ? P_SYSCALL_PDA : P_SYSCALL, "sys.syscall", pda, 1);
	WINDOWS_EITHER(pda, P_SYSCALL, P_SYSCALL_PDA, getppid_syscall());
}
#endif

static void syscalls(int pda)
{
	if (pda)
		pda_load(PDA_USER_SELECTOR);
	syscall_paths(pda);
	if (pda)
		pda_load(0);
}

/* ------------------------------------------------------------ page fault */

static void fault(void)
{
	volatile char *mem = mmap(NULL, (REPS + 1) * PAGE,
				  PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int page = 0;

	if (mem == MAP_FAILED) {
		perror("seg_census: mmap");
		failed = 1;
		return;
	}
	announce(P_FAULT, "fault.anon", 0, 1);
	WINDOWS(P_FAULT, mem[page++ * PAGE] = 1);
	munmap((void *)mem, (REPS + 1) * PAGE);
}

/* -------------------------------------------------------- context switch */

struct pingpong {
	int to_peer[2], from_peer[2];
	int pda;
	int peer_unpinned;
};

static void *peer(void *arg)
{
	struct pingpong *pp = arg;
	char c;

	/* Unpinned, it still answers: the windows then show it, not a hang. */
	pp->peer_unpinned = pin(0);
	if (pp->pda)
		pda_load(PDA_USER_SELECTOR);
	while (read(pp->to_peer[0], &c, 1) == 1 && c)
		if (write(pp->from_peer[1], &c, 1) != 1)
			break;
	return NULL;
}

/* Send @c, wait for it back: two switches when the peer shares the CPU. */
static int round_trip(struct pingpong *pp, char c)
{
	return write(pp->to_peer[1], &c, 1) != 1 ||
	       read(pp->from_peer[0], &c, 1) != 1;
}

static void ctxsw(int pda)
{
	struct pingpong pp = { .pda = pda };
	pthread_t t;
	int bad = 0;

	if (pipe(pp.to_peer) || pipe(pp.from_peer) || pin(0) ||
	    pthread_create(&t, NULL, peer, &pp)) {
		perror("seg_census: ping-pong setup");
		failed = 1;
		return;
	}
	if (pda)
		pda_load(PDA_USER_SELECTOR);
	/* The first round trip only gets the peer going: not a window. */
	bad |= round_trip(&pp, 1);
	announce(pda ? P_CTXSW_PDA : P_CTXSW, "ctxsw.same", pda, 2);
	WINDOWS_EITHER(pda, P_CTXSW, P_CTXSW_PDA, bad |= round_trip(&pp, 1));
	if (write(pp.to_peer[1], "", 1) != 1)
		bad = 1;
	pthread_join(t, NULL);
	if (pda)
		pda_load(0);
	bad |= pp.peer_unpinned;
	if (bad) {
		fprintf(stderr, "seg_census: ping-pong failed\n");
		failed = 1;
	}
	close(pp.to_peer[0]);
	close(pp.to_peer[1]);
	close(pp.from_peer[0]);
	close(pp.from_peer[1]);
}

/* ------------------------------------------------------------- migration */

/* To CPU 1 inside the window, back to CPU 0 outside: one direction. */
static void migrate(void)
{
	cpu_set_t to1, to0;
	int rep, r = 0;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		not_here(P_MIGRATE, "migrate", 0, "one CPU online");
		return;
	}
	CPU_ZERO(&to0);
	CPU_ZERO(&to1);
	CPU_SET(0, &to0);
	CPU_SET(1, &to1);
	if (pin(0)) {
		perror("seg_census: pin");
		failed = 1;
		return;
	}
	announce(P_MIGRATE, "migrate", 0, 1);
	for (rep = 0; rep <= REPS; rep++) {
		CENSUS_MARK(OPEN, P_MIGRATE);
		r |= sched_setaffinity(0, sizeof(to1), &to1);
		CENSUS_MARK(CENSUS_OP_CLOSE, P_MIGRATE);
		r |= sched_setaffinity(0, sizeof(to0), &to0);
	}
	if (r) {
		perror("seg_census: sched_setaffinity");
		failed = 1;
	}
}

/* ---------------------------------------------------------------- signal */

static void on_usr1(int sig)
{
	(void)sig;
}

static void signal_path(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	pid_t pid = getpid();

	if (sigaction(SIGUSR1, &sa, NULL)) {
		perror("seg_census: sigaction");
		failed = 1;
		return;
	}
	announce(P_SIGNAL, "signal", 0, 1);
	WINDOWS(P_SIGNAL, syscall(NR_KILL, pid, SIGUSR1));
}

/* ------------------------------------------------------ the known window */

/* Each load is one executed instruction, however the loop is compiled. */
static void known_loads(void)
{
	unsigned int user_ds;
	int i;

	asm volatile("mov %%ss, %0" : "=r" (user_ds));
	for (i = 0; i < KNOWN_LOADS; i++)
		pda_load(user_ds);
	for (i = 0; i < KNOWN_LOADS; i++)
		pda_load(0);
}

static void known(void)
{
	announce(P_KNOWN, "known", 0, KNOWN_LOADS);
	WINDOWS(P_KNOWN, known_loads());
}

/* ------------------------------------------------------------- interrupt */

static inline uint64_t tsc(void)
{
	uint32_t lo, hi;

	asm volatile("rdtsc" : "=a" (lo), "=d" (hi));
	return (uint64_t)hi << 32 | lo;
}

/* Spin until the TSC jumps: somebody else ran in between. */
static int until_interrupted(void)
{
	uint64_t start = tsc(), last = start, now;

	for (;;) {
		now = tsc();
		if (now - last > IRQ_GAP)
			return 0;
		if (now - start > IRQ_SPIN_MAX)
			return -1;
		last = now;
	}
}

static void irq(void)
{
	int r = 0;

	if (pin(0)) {
		perror("seg_census: pin");
		failed = 1;
		return;
	}
	announce(P_IRQ, "irq", 0, 1);
	WINDOWS(P_IRQ, r |= until_interrupted());
	if (r) {
		fprintf(stderr, "seg_census: no interrupt in %llu TSC ticks\n",
			IRQ_SPIN_MAX);
		failed = 1;
	}
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pin(0)) {
		perror("seg_census: pin");
		return 1;
	}
	announce(P_EMPTY, "empty", 0, 1);
	WINDOWS(P_EMPTY, (void)0);
	syscalls(0);
	if (pda_available()) {
		syscalls(1);
		ctxsw(0);
		ctxsw(1);
	} else {
#if defined(__i386__)
		not_here(P_INT80_PDA, "sys.int80", 1, "no PDA segment");
		not_here(P_VSYSCALL_PDA, "sys.vsyscall", 1, "no PDA segment");
#else
		not_here(P_SYSCALL_PDA, "sys.syscall", 1, "no PDA segment");
#endif
		ctxsw(0);
		not_here(P_CTXSW_PDA, "ctxsw.same", 1, "no PDA segment");
	}
	fault();
	migrate();
	signal_path();
	known();
	irq();
	printf("seg-census: done\n");
	return failed;
}
