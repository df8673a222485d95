// SPDX-License-Identifier: GPL-2.0
/*
 * sys.*: a null system call (getppid) with user %fs null and non-null.
 *
 * An i386 SMP kernel pushes user %fs on entry and pops it on exit, and the
 * pop of a non-null selector costs a descriptor load that the pop of a
 * null one does not. The difference between these rows is that cost on a
 * real kernel exit. An x86-64 kernel does not touch %fs on a compat
 * system call, so on the host the rows should agree.
 * Both entry paths: int $0x80 and __kernel_vsyscall (sysenter on Intel).
 */
#include <sys/syscall.h>
#include "segs.h"
#include "cpuread.h"

#define FS_NULL	0
#define FS_UDS	1
#define FS_TLS	2
#define FS_PDA	3
#define VIA_VSYSCALL 0x10

static int setup_sys(const struct bench *b, char *why)
{
	if ((b->arg & VIA_VSYSCALL) && !sb_vsyscall) {
		snprintf(why, SB_REASON_LEN, "no AT_SYSINFO (__kernel_vsyscall)");
		return -1;
	}
	switch (b->arg & 0xf) {
	case FS_UDS:
		return sb_seg_usable(SEL_UDS, SB_FS, 0, why);
	case FS_TLS:
		return sb_seg_usable(SEL_TLS, SB_FS, 0, why);
	case FS_PDA:
		return sb_method_probe(M_PDA, why);
	}
	return 0;
}

static unsigned int fs_for(const struct bench *b)
{
	switch (b->arg & 0xf) {
	case FS_UDS:
		return sb_segs[SEL_UDS].sel;
	case FS_TLS:
		return sb_segs[SEL_TLS].sel;
	case FS_PDA:
		return sb_pda_selector();
	}
	return 0;
}

static void run_sys(const struct bench *b, unsigned long n)
{
	unsigned int save, fs = fs_for(b);
	int ret;

	asm volatile("mov %%fs, %0\n\t"
		     "mov %1, %%fs"
		     : "=&r" (save) : "r" (fs) : "memory");
	if (b->arg & VIA_VSYSCALL) {
		void *vs = sb_vsyscall;

		SB_LOOP(n, asm volatile("call *%2"
					: "=a" (ret)
					: "0" (SYS_getppid), "r" (vs)
					: "memory", "cc"));
	} else {
		SB_LOOP(n, asm volatile("int $0x80"
					: "=a" (ret)
					: "0" (SYS_getppid)
					: "memory", "cc"));
	}
	asm volatile("mov %0, %%fs" : : "r" (save) : "memory");
}

#define SYS(nm, a, d)							\
	{ .name = "sys." nm, .group = "syscall", .desc = d,		\
	  .ops = 1, .flags = BF_SLOW, .arg = a, .setup = setup_sys,	\
	  .run = run_sys }

const struct bench sb_sys_benches[] = {
	SYS("int80.fs_null", FS_NULL, "getppid via int $0x80, %fs = 0"),
	SYS("int80.fs_user_ds", FS_UDS, "getppid via int $0x80, %fs = __USER_DS"),
	SYS("int80.fs_tls", FS_TLS, "getppid via int $0x80, %fs = TLS selector"),
	SYS("int80.fs_pda", FS_PDA, "getppid via int $0x80, %fs = PDA selector"),
	SYS("vsyscall.fs_null", FS_NULL | VIA_VSYSCALL,
	    "getppid via __kernel_vsyscall, %fs = 0"),
	SYS("vsyscall.fs_user_ds", FS_UDS | VIA_VSYSCALL,
	    "getppid via __kernel_vsyscall, %fs = __USER_DS"),
	SYS("vsyscall.fs_tls", FS_TLS | VIA_VSYSCALL,
	    "getppid via __kernel_vsyscall, %fs = TLS selector"),
	SYS("vsyscall.fs_pda", FS_PDA | VIA_VSYSCALL,
	    "getppid via __kernel_vsyscall, %fs = PDA selector"),
	{ }
};
