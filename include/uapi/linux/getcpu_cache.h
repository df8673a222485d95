/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
#ifndef _UAPI_LINUX_GETCPU_CACHE_H
#define _UAPI_LINUX_GETCPU_CACHE_H

/*
 * getcpu_cache(2): a per-thread, user-space copy of the current CPU number
 *
 *	int getcpu_cache(int cmd, int32_t **cpu_cachep, int flags);
 *
 * GETCPU_CACHE_SET registers *cpu_cachep, a 4-byte aligned int32_t, as the
 * calling thread's CPU number cache; the kernel writes it at once, and
 * again before the thread returns to user space on another CPU.
 * GETCPU_CACHE_GET stores the registered address into *cpu_cachep.  flags
 * must be 0.  One cache per thread; new threads (CLONE_VM) start without
 * one, a fork() child keeps its parent's, execve() drops it.
 *
 * System call 463 on x86-32, x86-64 (64-bit and 32-bit programs, not x32),
 * ARM and arm64 (64-bit and AArch32 programs); a 32-bit program's
 * *cpu_cachep is 32 bits wide.  Linux 6.13 and later
 * give 463 to setxattrat(), which fails with EINVAL for this call's
 * arguments.
 */

enum getcpu_cache_cmd {
	GETCPU_CACHE_GET = 0,	/* store the registered address in *cpu_cachep */
	GETCPU_CACHE_SET = 1,	/* register the address found in *cpu_cachep */
};

#endif /* _UAPI_LINUX_GETCPU_CACHE_H */
