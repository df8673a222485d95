/* SPDX-License-Identifier: GPL-2.0 */
/*
 * getcpu_cache(2): the hooks the scheduler, fork, exec and the return to
 * user space call.  Each is a test of one task_struct pointer when the
 * calling thread has no cache registered, and nothing without
 * CONFIG_GETCPU_CACHE.
 */
#ifndef _LINUX_GETCPU_CACHE_H
#define _LINUX_GETCPU_CACHE_H

#include <linux/sched.h>
#include <uapi/linux/getcpu_cache.h>

#ifdef CONFIG_GETCPU_CACHE

void __getcpu_cache_update(void);

/*
 * @t is moving to another CPU (set_task_cpu()).  It is not running, so
 * neither field can change under us; its next return to user space stores
 * the new CPU number.  A preemption without migration does not come here,
 * and TIF_NOTIFY_RESUME raised for anything else (rseq raises it on every
 * preemption) finds getcpu_cache_stale clear and stores nothing.
 */
static inline void getcpu_cache_migrate(struct task_struct *t)
{
	if (t->getcpu_cache) {
		t->getcpu_cache_stale = 1;
		set_tsk_thread_flag(t, TIF_NOTIFY_RESUME);
	}
}

/* From resume_user_mode_work(), on the way back to user space. */
static inline void getcpu_cache_handle_notify_resume(void)
{
	if (unlikely(current->getcpu_cache_stale))
		__getcpu_cache_update();
}

/*
 * copy_process(): a thread sharing the address space (CLONE_VM, which
 * includes vfork()) starts unregistered; a fork() child keeps the address,
 * which is valid in its copy of the address space, and refreshes it before
 * it first runs in user space, wherever it was placed.
 */
static inline void getcpu_cache_fork(struct task_struct *t,
				     unsigned long clone_flags)
{
	if (clone_flags & CLONE_VM)
		t->getcpu_cache = NULL;
	else
		t->getcpu_cache = current->getcpu_cache;
	t->getcpu_cache_stale = !!t->getcpu_cache;
	if (t->getcpu_cache)
		set_tsk_thread_flag(t, TIF_NOTIFY_RESUME);
}

/* A successful execve(): the old address space and its cache are gone. */
static inline void getcpu_cache_execve(struct task_struct *t)
{
	t->getcpu_cache = NULL;
	t->getcpu_cache_stale = 0;
}

#else /* !CONFIG_GETCPU_CACHE */

static inline void getcpu_cache_migrate(struct task_struct *t)
{
}

static inline void getcpu_cache_handle_notify_resume(void)
{
}

static inline void getcpu_cache_fork(struct task_struct *t,
				     unsigned long clone_flags)
{
}

static inline void getcpu_cache_execve(struct task_struct *t)
{
}

#endif /* CONFIG_GETCPU_CACHE */

#endif /* _LINUX_GETCPU_CACHE_H */
