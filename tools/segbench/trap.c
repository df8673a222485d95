// SPDX-License-Identifier: GPL-2.0
/*
 * Fault-catching probes.
 *
 * A host may claim a feature it does not deliver: a paravirtualised guest
 * whose modify_ldt() succeeds but which raises #GP when the selector is
 * loaded, a hypervisor that sets the RDPID CPUID bit and traps the
 * instruction. segbench must skip such a row with the reason, not die, so
 * every row's setup first executes what the row needs through sb_trap():
 * handlers for SIGSEGV, SIGBUS and SIGILL siglongjmp() back, and the
 * previous handlers are put back afterwards.
 *
 * Segment registers. A probe may return, or fault, with %fs or %gs holding
 * a selector it loaded (a load that worked, then an access past the
 * limit). On i386, %gs is glibc's thread pointer: siglongjmp() demangles
 * its saved registers with the pointer guard at %gs:0x18, and errno, the
 * vsyscall pointer and the stack protector's canary are %gs-relative too.
 * The kernel runs a signal handler with %fs and %gs as they were at the
 * fault (it resets %ds and %es only); the values saved in the signal frame
 * come back on sigreturn, which siglongjmp() never reaches. So the
 * selectors are saved before the probe in plain globals (a __thread
 * variable would itself be %gs-relative), the handler reloads them with
 * inline asm before it calls anything, and sb_trap() reloads them again
 * after every probe, fault or not. The handler and the probes are built
 * without the stack protector, for the same reason.
 *
 * x86-64: a probe may only touch %gs; %fs is glibc's thread pointer.
 * Reloading a null %gs selector clears the base on Intel and keeps the old
 * one on AMD before Zen, so a base set with arch_prctl() is put back with
 * arch_prctl().
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "segbench.h"
#ifdef SB_X86
#include <asm/ldt.h>
#endif
#ifdef __x86_64__
#include <asm/prctl.h>
#endif

#if defined(__has_attribute)
#if __has_attribute(no_stack_protector)
#define SB_NO_SSP __attribute__((no_stack_protector))
#endif
#endif
#ifndef SB_NO_SSP
#define SB_NO_SSP
#endif

static const int trap_sigs[] = { SIGSEGV, SIGBUS, SIGILL };
static sigjmp_buf trap_env;
static volatile sig_atomic_t trap_armed;

#ifdef SB_X86
const char *const sb_reg_name[2] = { "fs", "gs" };
static unsigned int saved_fs, saved_gs;
#endif
#ifdef __x86_64__
static unsigned long saved_gsbase;
static int saved_gsbase_ok;
#endif

static void seg_save(void)
{
#ifdef SB_X86
	asm volatile("mov %%fs, %0" : "=r" (saved_fs));
	asm volatile("mov %%gs, %0" : "=r" (saved_gs));
	saved_fs &= 0xffff;
	saved_gs &= 0xffff;
#endif
#ifdef __x86_64__
	saved_gsbase_ok = !syscall(SYS_arch_prctl, ARCH_GET_GS, &saved_gsbase);
#endif
}

/* Safe in the handler: no call, nothing %gs-relative. */
static inline SB_NO_SSP void seg_reload(void)
{
#ifdef SB_X86
	asm volatile("mov %0, %%gs" : : "r" (saved_gs) : "memory");
#endif
#ifdef __i386__
	/* %fs is x86-64 glibc's thread pointer: never reload it there. */
	asm volatile("mov %0, %%fs" : : "r" (saved_fs) : "memory");
#endif
}

static void seg_restore(void)
{
	seg_reload();
#ifdef __x86_64__
	/* A null selector's base is not the descriptor's: put it back. */
	if (!(saved_gs & 0xfffc) && saved_gsbase_ok)
		syscall(SYS_arch_prctl, ARCH_SET_GS, saved_gsbase);
#endif
}

static SB_NO_SSP void trap_handler(int sig)
{
	/* The thread pointer first: see the top of the file. */
	seg_reload();
	if (!trap_armed) {
		/* Not a probe's fault: die of it as we would without us. */
		signal(sig, SIG_DFL);
		return;
	}
	trap_armed = 0;
	siglongjmp(trap_env, sig);
}

int sb_trap(void (*fn)(void *), void *arg)
{
	struct sigaction sa, old[ARRAY_SIZE(trap_sigs)];
	unsigned int i;
	int sig;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = trap_handler;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < ARRAY_SIZE(trap_sigs); i++)
		sigaddset(&sa.sa_mask, trap_sigs[i]);
	seg_save();
	for (i = 0; i < ARRAY_SIZE(trap_sigs); i++)
		sigaction(trap_sigs[i], &sa, &old[i]);
	/* Save the signal mask: the handler returns with its signal blocked. */
	sig = sigsetjmp(trap_env, 1);
	if (!sig) {
		trap_armed = 1;
		fn(arg);
		trap_armed = 0;
	}
	seg_restore();
	for (i = 0; i < ARRAY_SIZE(trap_sigs); i++)
		sigaction(trap_sigs[i], &old[i], NULL);
	return sig;
}

const char *sb_sig_name(int sig)
{
	static char buf[16];

	switch (sig) {
	case SIGSEGV:
		return "SIGSEGV";
	case SIGBUS:
		return "SIGBUS";
	case SIGILL:
		return "SIGILL";
	}
	snprintf(buf, sizeof(buf), "signal %d", sig);
	return buf;
}

#ifdef SB_X86
struct seg_probe {
	unsigned int sel;
	unsigned long off;
	int mode;
};

/* The load and the access in one asm: no compiled code in between. */
#define SEG_PROBE(reg)							\
static SB_NO_SSP void probe_##reg(void *p)				\
{									\
	const struct seg_probe *s = p;					\
	unsigned int v;							\
									\
	switch (s->mode) {						\
	case SB_PROBE_LOAD:						\
		asm volatile("mov %0, %%" #reg				\
			     : : "r" (s->sel) : "memory");		\
		break;							\
	case SB_PROBE_READ:						\
		asm volatile("mov %1, %%" #reg "\n\t"			\
			     "movl %%" #reg ":(%2), %0"			\
			     : "=r" (v) : "r" (s->sel), "r" (s->off)	\
			     : "memory");				\
		break;							\
	default:							\
		asm volatile("mov %0, %%" #reg "\n\t"			\
			     "addl $0, %%" #reg ":(%1)"			\
			     : : "r" (s->sel), "r" (s->off)		\
			     : "memory", "cc");				\
	}								\
}

#ifdef __i386__
SEG_PROBE(fs)
#endif
SEG_PROBE(gs)

int sb_trap_seg(int reg, unsigned int sel, unsigned long off, int mode)
{
	struct seg_probe s = { .sel = sel, .off = off, .mode = mode };

#ifdef __i386__
	if (reg == SB_FS)
		return sb_trap(probe_fs, &s);
#endif
	if (reg == SB_GS)
		return sb_trap(probe_gs, &s);
	return -1;
}
#endif

/*
 * Self-test: the mechanism must itself be tested on hosts where nothing
 * faults, or its first real use would be on the host that needs it.
 */
static volatile int selftest_runs;
static __thread volatile int selftest_tls;

static void count_run(void *p)
{
	(void)p;
	selftest_runs++;
}

static SB_NO_SSP void undefined_insn(void *p)
{
	(void)p;
#ifdef SB_X86
	asm volatile("ud2");
#else
	asm volatile("udf #0");
#endif
}

static void marker(int sig)
{
	(void)sig;
}

int sb_trap_selftest_count(void)
{
#ifdef SB_X86
	return 7;
#else
	return 3;
#endif
}

#ifdef SB_X86
struct segstate {
	unsigned int fs, gs;
	unsigned long gsbase;
};

static void get_state(struct segstate *st)
{
	asm volatile("mov %%fs, %0" : "=r" (st->fs));
	asm volatile("mov %%gs, %0" : "=r" (st->gs));
	st->fs &= 0xffff;
	st->gs &= 0xffff;
	st->gsbase = 0;
#ifdef __x86_64__
	if (!(st->gs & 0xfffc))
		syscall(SYS_arch_prctl, ARCH_GET_GS, &st->gsbase);
#endif
}

/* Same selectors (and x86-64 %gs base), and this thread's TLS still works. */
static int kept(const struct segstate *before, char *note)
{
	struct segstate now;

	get_state(&now);
	if (now.fs != before->fs || now.gs != before->gs ||
	    now.gsbase != before->gsbase) {
		snprintf(note, SB_REASON_LEN,
			 "%%fs %#x -> %#x, %%gs %#x -> %#x, %%gs base %#lx -> %#lx",
			 before->fs, now.fs, before->gs, now.gs,
			 before->gsbase, now.gsbase);
		return 0;
	}
	if (selftest_tls != 0x5eb) {
		snprintf(note, SB_REASON_LEN, "TLS word reads %#x",
			 selftest_tls);
		return 0;
	}
	return 1;
}

static void selftest_seg(void (*report)(int, const char *, const char *))
{
	static struct sb_slot word[2];
	char what[SB_REASON_LEN], note[SB_REASON_LEN] = "";
	struct segstate st;
	unsigned int ss;
	int sig;

	selftest_tls = 0x5eb;
	get_state(&st);

	sig = sb_trap_seg(SB_GS, 0xfff8 | 3, 0, SB_PROBE_LOAD);
	if (sig != SIGSEGV)
		snprintf(note, sizeof(note), "got %s",
			 sig ? sb_sig_name(sig) : "no fault");
	report(sig == SIGSEGV && kept(&st, note),
	       "GDT selector 0xfffb (past the GDT limit) in %gs: SIGSEGV "
	       "caught, %fs, %gs and TLS kept", note);

	note[0] = '\0';
	sig = sb_trap_seg(SB_GS, 8191 << 3 | 7, 0, SB_PROBE_LOAD);
	if (sig <= 0)
		snprintf(note, sizeof(note), "no fault");
	report(sig > 0 && kept(&st, note),
	       "LDT selector 0xffff (entry 8191, never written) in %gs: "
	       "fault caught, %fs, %gs and TLS kept", note);

	note[0] = '\0';
	asm volatile("mov %%ss, %0" : "=r" (ss));
	ss &= 0xffff;
	sig = sb_trap_seg(SB_GS, ss, (uintptr_t)&word[0], SB_PROBE_WRITE);
	if (sig)
		snprintf(note, sizeof(note), "raised %s", sb_sig_name(sig));
	snprintf(what, sizeof(what), "__USER_DS (%%ss, %#x) in %%gs, "
		 "written through: no fault, %%gs kept", ss);
	report(!sig && kept(&st, note), what, note);

#ifdef __i386__
	{
		/* One byte at &word: an access at offset 64 is past the limit. */
		struct user_desc d = {
			.entry_number = SB_LDT_SELFTEST,
			.base_addr = (unsigned int)(uintptr_t)&word[0],
			.limit = 0,
			.seg_32bit = 1,
			.useable = 1,
		};
		unsigned int sel = SB_LDT_SELFTEST << 3 | 7;

		snprintf(what, sizeof(what), "an access past a 1-byte LDT "
			 "segment in %%gs (%#x): SIGSEGV caught with that %%gs "
			 "loaded, %%gs and TLS kept", sel);
		note[0] = '\0';
		if (syscall(SYS_modify_ldt, 0x11, &d, sizeof(d))) {
			snprintf(note, sizeof(note), "modify_ldt: %m");
			report(-1, what, note);
			return;
		}
		sig = sb_trap_seg(SB_GS, sel, 0, SB_PROBE_LOAD);
		if (sig) {
			snprintf(note, sizeof(note), "modify_ldt succeeded but "
				 "loading selector %#x into %%gs raises %s",
				 sel, sb_sig_name(sig));
			report(-1, what, note);
			return;
		}
		sig = sb_trap_seg(SB_GS, sel, 64, SB_PROBE_READ);
		if (!sig) {
			/* QEMU TCG, for one, does not check data limits. */
			report(-1, what, "no fault: this CPU or emulator does "
			       "not enforce segment limits");
			return;
		}
		if (sig != SIGSEGV)
			snprintf(note, sizeof(note), "got %s",
				 sb_sig_name(sig));
		report(sig == SIGSEGV && kept(&st, note), what, note);
	}
#else
	report(-1, "an access past a 1-byte LDT segment in %gs: caught",
	       "64-bit mode checks no segment limits");
#endif
}
#endif

void sb_trap_selftest(void (*report)(int res, const char *what,
				     const char *note))
{
	struct sigaction mark, prev[ARRAY_SIZE(trap_sigs)], now;
	char note[SB_REASON_LEN] = "";
	unsigned int i;
	int sig, back = 1;

	selftest_runs = 0;
	sig = sb_trap(count_run, NULL);
	if (sig || selftest_runs != 1)
		snprintf(note, sizeof(note), "%s, ran %d times",
			 sig ? sb_sig_name(sig) : "no signal", selftest_runs);
	report(!sig && selftest_runs == 1,
	       "a probe that does not fault runs once, no signal", note);

	/* Handlers of our own, to see that they come back. */
	memset(&mark, 0, sizeof(mark));
	mark.sa_handler = marker;
	sigemptyset(&mark.sa_mask);
	for (i = 0; i < ARRAY_SIZE(trap_sigs); i++)
		sigaction(trap_sigs[i], &mark, &prev[i]);
	sig = sb_trap(undefined_insn, NULL);
	for (i = 0; i < ARRAY_SIZE(trap_sigs); i++) {
		sigaction(trap_sigs[i], &prev[i], &now);
		back &= now.sa_handler == marker;
	}
	note[0] = '\0';
	if (sig != SIGILL)
		snprintf(note, sizeof(note), "got %s",
			 sig ? sb_sig_name(sig) : "no fault");
	report(sig == SIGILL, "an undefined instruction raises SIGILL, caught",
	       note);
	report(back, "the previous SIGSEGV, SIGBUS and SIGILL handlers are "
	       "back after a caught fault", back ? "" : "not restored");
#ifdef SB_X86
	selftest_seg(report);
#endif
}
