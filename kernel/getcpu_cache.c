// SPDX-License-Identifier: GPL-2.0
/*
 * getcpu_cache(2): each thread may register one naturally aligned int32_t
 * in its own memory, and the kernel keeps it equal to the number of the
 * CPU the thread runs on, so that user space reads its CPU number with one
 * load.
 *
 * The cache is written when it is registered, and afterwards only on the
 * way back to user space after a migration: set_task_cpu() marks a
 * registered task that changes CPU stale and raises TIF_NOTIFY_RESUME, and
 * resume_user_mode_work() stores the CPU number.  A context switch that
 * does not migrate costs nothing, and a notify-resume for another reason
 * (rseq raises it on every preemption) costs one test.  If the thread
 * migrates again between clearing the mark and the store, both are set
 * again and the exit-to-user loop stores again before user space runs.
 *
 * The store is a put_user() of an aligned 32-bit value: one instruction on
 * x86-32 and ARM, single-copy atomic, so any thread reading the cache sees
 * one CPU number or another, never a mix.  If it faults (the thread
 * unmapped or write-protected its cache), the thread gets SIGSEGV and
 * nothing else is written.
 */
#include <linux/align.h>
#include <linux/getcpu_cache.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/smp.h>
#include <linux/syscalls.h>
#include <linux/uaccess.h>

/* Store the current CPU number into @cache; 0 or -EFAULT. */
static int getcpu_cache_store(s32 __user *cache)
{
	s32 cpu = raw_smp_processor_id();

	return put_user(cpu, cache);
}

/*
 * Called by getcpu_cache_handle_notify_resume() for a stale cache, with
 * TIF_NOTIFY_RESUME already cleared, preemptible, so the store may take a
 * page fault.  A fault is reported once per migration.
 */
void __getcpu_cache_update(void)
{
	struct task_struct *t = current;

	t->getcpu_cache_stale = 0;
	/* Clear the mark before reading the CPU number (see above). */
	barrier();
	if (unlikely(getcpu_cache_store(t->getcpu_cache)))
		force_sig(SIGSEGV);
}

static long getcpu_cache_get(s32 __user * __user *cpu_cachep)
{
	s32 __user *cache = current->getcpu_cache;

	if (!cache)
		return -ENOENT;
	if (put_user(cache, cpu_cachep))
		return -EFAULT;
	return 0;
}

static long getcpu_cache_set(s32 __user * __user *cpu_cachep)
{
	struct task_struct *t = current;
	s32 __user *cache;

	if (get_user(cache, cpu_cachep))
		return -EFAULT;
	if (!cache || !IS_ALIGNED((unsigned long)cache, sizeof(s32)))
		return -EINVAL;
	if (t->getcpu_cache)
		return t->getcpu_cache == cache ? 0 : -EBUSY;

	/*
	 * Publish the address before reading the CPU number: a migration
	 * after this point marks the cache stale, and the return to user
	 * space stores again.  set_task_cpu() only runs while the task is
	 * off CPU, after the full barrier of the context switch, so the
	 * compiler is all there is to order against.
	 */
	t->getcpu_cache = cache;
	barrier();
	if (getcpu_cache_store(cache)) {
		/* Unregister, so that no later migration sends SIGSEGV. */
		t->getcpu_cache = NULL;
		t->getcpu_cache_stale = 0;
		return -EFAULT;
	}
	return 0;
}

/**
 * sys_getcpu_cache - register or look up the thread's CPU number cache
 * @cmd:	GETCPU_CACHE_GET or GETCPU_CACHE_SET
 * @cpu_cachep:	where GET stores the registered address, and SET reads the
 *		address to register
 * @flags:	must be 0
 *
 * Return: 0; -EINVAL for non-zero @flags, an unknown @cmd, or a NULL or
 * misaligned address to register; -EFAULT if @cpu_cachep, or the address
 * to register, cannot be accessed; -EBUSY if SET finds another address
 * registered; -ENOENT if GET finds none.
 */
SYSCALL_DEFINE3(getcpu_cache, int, cmd, s32 __user * __user *, cpu_cachep,
		int, flags)
{
	if (flags)
		return -EINVAL;

	switch (cmd) {
	case GETCPU_CACHE_GET:
		return getcpu_cache_get(cpu_cachep);
	case GETCPU_CACHE_SET:
		return getcpu_cache_set(cpu_cachep);
	default:
		return -EINVAL;
	}
}
