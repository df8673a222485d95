// SPDX-License-Identifier: GPL-2.0
/*
 * A kernel thread that adopts a user task's mm with kthread_use_mm(), on
 * a CPU the task does not run on, and reads the task's memory there with
 * copy_from_user() whenever the task asks: the way vhost and other
 * drivers use a user mm from a kernel thread.  The guest test
 * tlb_kthread_mm changes the mapping between two reads (MADV_DONTNEED,
 * mprotect) and checks that the thread sees the change: a kernel that
 * thought the mm lived on the task's CPU alone (arm64's
 * CONFIG_ARM64_TLBI_LOCAL gone wrong) would flush only there, and the
 * thread would read through its CPU's stale TLB entries.
 *
 * The interface is a misc device, /dev/tlb_kthread_mm (tlb_kthread_mm.h;
 * the test kernels have no debugfs).  Each open file has at most one
 * thread:
 *
 * TKM_START   starts it, bound to a CPU, in the caller's mm: it reads
 *             the caller's buffer on request, polls for the next request
 *             for idle_ms after each read, then sleeps.  Returns its pid.
 * TKM_READ    has it read the buffer once, and copies what it read to
 *             the caller: the length, or -EFAULT, the CPU it read on and
 *             whether it had to be woken.
 * TKM_STATUS  what it is doing: polling, asleep or reading.
 * TKM_STOP    (and the last close) it leaves the mm with
 *             kthread_unuse_mm() and ends.
 */
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#include "tlb_kthread_mm.h"

/* How long a read may take before the device gives up on its thread. */
#define TKM_TIMEOUT	(10 * HZ)

struct tkm {
	struct mutex lock;		/* serialises the ioctls */
	struct task_struct *thread;	/* NULL until TKM_START */
	struct mm_struct *mm;		/* the starter's, mmget() */
	void __user *uaddr;		/* the buffer the thread reads */
	u32 len;
	u32 idle_ms;
	void *buf;			/* what it read */
	wait_queue_head_t wait;		/* it sleeps here */
	struct completion done;		/* it answered a request */
	int pending;			/* a request it has not answered */
	int state;			/* TKM_POLLING, _SLEEPING, _READING */
	bool broken;			/* a request timed out */
	/* The answer, written by the thread before it completes done. */
	long result;
	u32 copied;
	int read_cpu;
	bool slept;
	u64 reads;
};

static void tkm_serve(struct tkm *t, bool slept)
{
	unsigned long left;

	WRITE_ONCE(t->state, TKM_READING);
	left = copy_from_user(t->buf, t->uaddr, t->len);
	t->copied = t->len - left;
	if (left)
		t->result = -EFAULT;
	else
		t->result = t->len;
	t->read_cpu = raw_smp_processor_id();
	t->slept = slept;
	t->reads++;
	WRITE_ONCE(t->pending, 0);
	complete(&t->done);
}

static int tkm_thread(void *data)
{
	struct tkm *t = data;
	unsigned long until;
	bool slept = false;

	kthread_use_mm(t->mm);
	until = jiffies + msecs_to_jiffies(t->idle_ms);
	while (!kthread_should_stop()) {
		/* Pairs with tkm_read()'s release: done is reset first. */
		if (smp_load_acquire(&t->pending)) {
			tkm_serve(t, slept);
			slept = false;
			until = jiffies + msecs_to_jiffies(t->idle_ms);
			continue;
		}
		if (time_before(jiffies, until)) {
			WRITE_ONCE(t->state, TKM_POLLING);
			cond_resched();
			cpu_relax();
			continue;
		}
		WRITE_ONCE(t->state, TKM_SLEEPING);
		wait_event_interruptible(t->wait, READ_ONCE(t->pending) ||
					 kthread_should_stop());
		slept = true;
	}
	kthread_unuse_mm(t->mm);
	return 0;
}

static void tkm_stop(struct tkm *t)
{
	if (t->thread) {
		kthread_stop(t->thread);
		t->thread = NULL;
	}
	if (t->mm) {
		mmput(t->mm);
		t->mm = NULL;
	}
	kvfree(t->buf);
	t->buf = NULL;
	t->broken = false;
}

static long tkm_start(struct tkm *t, struct tkm_start __user *arg)
{
	struct task_struct *thread;
	struct tkm_start s;
	int err;

	if (copy_from_user(&s, arg, sizeof(s)))
		return -EFAULT;
	if (t->thread)
		return -EBUSY;
	if (!s.len || s.len > TKM_MAX_LEN || s.idle_ms > TKM_MAX_IDLE_MS)
		return -EINVAL;
	if (s.cpu < 0 || (unsigned int)s.cpu >= nr_cpu_ids || !cpu_online(s.cpu))
		return -EINVAL;
	t->buf = kvzalloc(s.len, GFP_KERNEL);
	if (!t->buf)
		return -ENOMEM;
	t->mm = get_task_mm(current);
	if (!t->mm) {
		err = -ESRCH;
		goto fail;
	}
	t->uaddr = u64_to_user_ptr(s.addr);
	t->len = s.len;
	t->idle_ms = s.idle_ms;
	t->state = TKM_POLLING;
	t->pending = 0;
	thread = kthread_create(tkm_thread, t, "tlb_kmm/%d", s.cpu);
	if (IS_ERR(thread)) {
		err = PTR_ERR(thread);
		goto fail;
	}
	kthread_bind(thread, s.cpu);
	t->thread = thread;
	wake_up_process(thread);
	s.pid = task_pid_nr(thread);
	if (copy_to_user(arg, &s, sizeof(s)))
		return -EFAULT;
	return 0;
fail:
	tkm_stop(t);
	return err;
}

static long tkm_read(struct tkm *t, struct tkm_read __user *arg)
{
	struct tkm_read r;
	long left;

	if (copy_from_user(&r, arg, sizeof(r)))
		return -EFAULT;
	if (!t->thread)
		return -EINVAL;
	if (t->broken)
		return -EIO;
	reinit_completion(&t->done);
	/* Pairs with tkm_thread()'s acquire: done is reset before it reads. */
	smp_store_release(&t->pending, 1);
	wake_up(&t->wait);
	left = wait_for_completion_killable_timeout(&t->done, TKM_TIMEOUT);
	if (left <= 0) {
		t->broken = true;
		return left ? left : -ETIMEDOUT;
	}
	r.result = t->result;
	r.copied = t->copied;
	r.cpu = t->read_cpu;
	r.slept = t->slept;
	if (r.copied && copy_to_user(u64_to_user_ptr(r.out), t->buf, r.copied))
		return -EFAULT;
	if (copy_to_user(arg, &r, sizeof(r)))
		return -EFAULT;
	return 0;
}

static long tkm_status(struct tkm *t, struct tkm_status __user *arg)
{
	struct tkm_status st = { };

	if (!t->thread)
		return -EINVAL;
	st.state = READ_ONCE(t->state);
	st.cpu = task_cpu(t->thread);
	st.reads = t->reads;
	if (copy_to_user(arg, &st, sizeof(st)))
		return -EFAULT;
	return 0;
}

static long tkm_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct tkm *t = file->private_data;
	void __user *uarg = (void __user *)arg;
	long ret;

	mutex_lock(&t->lock);
	switch (cmd) {
	case TKM_START:
		ret = tkm_start(t, uarg);
		break;
	case TKM_READ:
		ret = tkm_read(t, uarg);
		break;
	case TKM_STATUS:
		ret = tkm_status(t, uarg);
		break;
	case TKM_STOP:
		tkm_stop(t);
		ret = 0;
		break;
	default:
		ret = -ENOTTY;
		break;
	}
	mutex_unlock(&t->lock);
	return ret;
}

static int tkm_open(struct inode *inode, struct file *file)
{
	struct tkm *t = kzalloc(sizeof(*t), GFP_KERNEL);

	if (!t)
		return -ENOMEM;
	mutex_init(&t->lock);
	init_waitqueue_head(&t->wait);
	init_completion(&t->done);
	file->private_data = t;
	return 0;
}

static int tkm_release(struct inode *inode, struct file *file)
{
	struct tkm *t = file->private_data;

	tkm_stop(t);
	mutex_destroy(&t->lock);
	kfree(t);
	return 0;
}

static const struct file_operations tkm_fops = {
	.owner = THIS_MODULE,
	.open = tkm_open,
	.release = tkm_release,
	.unlocked_ioctl = tkm_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

static struct miscdevice tkm_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "tlb_kthread_mm",
	.fops = &tkm_fops,
	.mode = 0600,
};

module_misc_device(tkm_dev);
MODULE_DESCRIPTION("A kernel thread that reads a user buffer through kthread_use_mm()");
MODULE_LICENSE("GPL");
