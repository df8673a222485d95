/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The interface of tlb_kthread_mm.ko, /dev/tlb_kthread_mm: included by
 * the module and by the guest test tests/guest/tlb_kthread_mm.c.
 */
#ifndef TLB_KTHREAD_MM_H
#define TLB_KTHREAD_MM_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* The most a thread reads per request, and polls before it sleeps. */
#define TKM_MAX_LEN		(64 * 1024)
#define TKM_MAX_IDLE_MS		10000

/* What the thread is doing (struct tkm_status.state). */
#define TKM_POLLING		1	/* spinning, waiting for a request */
#define TKM_SLEEPING		2	/* asleep, waiting for a request */
#define TKM_READING		3	/* serving one */

/* TKM_START: a thread on @cpu reads @len bytes at @addr of our mm. */
struct tkm_start {
	__u64 addr;
	__u32 len;
	__s32 cpu;
	__u32 idle_ms;		/* it polls this long after a read */
	__s32 pid;		/* out: the thread's */
};

/* TKM_READ: one read by the thread; what it read goes to @out. */
struct tkm_read {
	__u64 out;		/* @len bytes of the caller's */
	__s64 result;		/* out: @len, or -EFAULT */
	__u32 copied;		/* out: the bytes it copied */
	__s32 cpu;		/* out: the CPU it read on */
	__u32 slept;		/* out: it was asleep when asked */
	__u32 pad;
};

/* TKM_STATUS: what the thread is doing now. */
struct tkm_status {
	__s32 state;		/* TKM_POLLING, TKM_SLEEPING, TKM_READING */
	__s32 cpu;		/* where it runs, or last ran */
	__u64 reads;		/* requests it served */
};

#define TKM_IOC_MAGIC		0xb7
#define TKM_START		_IOWR(TKM_IOC_MAGIC, 1, struct tkm_start)
#define TKM_READ		_IOWR(TKM_IOC_MAGIC, 2, struct tkm_read)
#define TKM_STATUS		_IOR(TKM_IOC_MAGIC, 3, struct tkm_status)
#define TKM_STOP		_IO(TKM_IOC_MAGIC, 4)

#endif /* TLB_KTHREAD_MM_H */
