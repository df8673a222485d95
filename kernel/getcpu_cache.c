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
 * x86, ARM and arm64, single-copy atomic, so any thread reading the cache
 * sees one CPU number or another, never a mix.  If it faults (the thread
 * unmapped or write-protected its cache), the thread gets one SIGSEGV and
 * nothing else is written.  Every successful GETCPU_CACHE_SET stores, even
 * of the address already registered: that is how the thread recovers,
 * and how it repairs a cache it wrote itself.
 */
#include <linux/align.h>
#include <linux/compat.h>
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
	if (likely(!getcpu_cache_store(t->getcpu_cache)))
		return;

	/*
	 * The cache's page is gone or read-only.  The mark stays clear: the
	 * kernel does not retry by itself, so one failed store is one signal,
	 * never a loop of them.  The thread recovers by mapping the page
	 * again and repeating GETCPU_CACHE_SET, which stores; until then, or
	 * until the next migration, the cache is not written.
	 *
	 * The SIGSEGV is an ordinary one (SI_KERNEL, to this thread only), not
	 * force_sig() as for a faulting instruction, nor force_sigsegv() as
	 * rseq sends when it cannot read or update its area.  Those cannot
	 * wait: the instruction would fault again, and rseq must not let the
	 * thread run on in a critical section it could not check or abort.
	 * So a blocked or ignored SIGSEGV is unblocked and reset to SIG_DFL,
	 * and the whole process dies.  Here nothing is lost by waiting, and a
	 * thread that has SIGSEGV blocked is typically in the very handler
	 * that maps the cache again, and migrated before its mmap().  The
	 * signal stays pending until that handler returns, and is then
	 * delivered once; a thread that ignores SIGSEGV gets nothing, and
	 * SIG_DFL still kills.
	 */
	send_sig(SIGSEGV, t, 1);
}

/* GETCPU_CACHE_SET, once the address to register has been read. */
static long getcpu_cache_set(s32 __user *cache)
{
	struct task_struct *t = current;
	s32 __user *registered;

	if (!cache || !IS_ALIGNED((unsigned long)cache, sizeof(s32)))
		return -EINVAL;
	if (t->getcpu_cache && t->getcpu_cache != cache)
		return -EBUSY;

	/*
	 * SET of the address already registered stores too: the cache reads
	 * the current CPU after every successful SET, whatever user space
	 * wrote into it, and after a failed store (SIGSEGV) this SET is what
	 * writes it again.
	 *
	 * Publish the address, and clear the mark of a migration already
	 * past, before reading the CPU number: a migration after this point
	 * marks the cache stale, and the return to user space stores again.
	 * set_task_cpu() only runs while the task is off CPU, after the full
	 * barrier of the context switch, so the compiler is all there is to
	 * order against.
	 */
	registered = t->getcpu_cache;
	t->getcpu_cache = cache;
	t->getcpu_cache_stale = 0;
	barrier();
	if (getcpu_cache_store(cache)) {
		/*
		 * A failed SET leaves the registration as it was.  A new one is
		 * undone, so that no later migration sends SIGSEGV; one that was
		 * there stays.  Either way EFAULT is the only report: the mark
		 * is cleared, so the way out sends no SIGSEGV for this store.
		 */
		t->getcpu_cache = registered;
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
	s32 __user *cache;

	if (flags)
		return -EINVAL;

	switch (cmd) {
	case GETCPU_CACHE_GET:
		cache = current->getcpu_cache;
		if (!cache)
			return -ENOENT;
		return put_user(cache, cpu_cachep) ? -EFAULT : 0;
	case GETCPU_CACHE_SET:
		if (get_user(cache, cpu_cachep))
			return -EFAULT;
		return getcpu_cache_set(cache);
	default:
		return -EINVAL;
	}
}

#ifdef CONFIG_COMPAT
/* The same for 32-bit tasks of a 64-bit kernel: *cpu_cachep is 32 bits. */
COMPAT_SYSCALL_DEFINE3(getcpu_cache, int, cmd,
		       compat_uptr_t __user *, cpu_cachep, int, flags)
{
	compat_uptr_t cache;

	if (flags)
		return -EINVAL;

	switch (cmd) {
	case GETCPU_CACHE_GET:
		if (!current->getcpu_cache)
			return -ENOENT;
		return put_user(ptr_to_compat(current->getcpu_cache),
				cpu_cachep) ? -EFAULT : 0;
	case GETCPU_CACHE_SET:
		if (get_user(cache, cpu_cachep))
			return -EFAULT;
		return getcpu_cache_set(compat_ptr(cache));
	default:
		return -EINVAL;
	}
}
#endif
