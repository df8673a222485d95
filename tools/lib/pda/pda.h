/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * pda.h: the user per-CPU segment of x86, header only.
 *
 * An x86 kernel with CONFIG_X86_PDA_USER_SEG (not running as a Xen PV
 * guest, which leaves it out) puts a flat DPL-3 read/write data
 * descriptor in GDT entry 29 of every CPU, with base
 * cpu << PDA_USER_SHIFT, and sets HWCAP2_PDA_USER_SEG in AT_HWCAP2.  A
 * thread that keeps PDA_USER_SELECTOR (0xeb) in %fs (32-bit programs) or
 * %gs (64-bit programs, see PDA_SEG) then reaches "its CPU's" 64-byte slot
 * of any array laid out as one slot per CPU, in one instruction:
 *
 *	movl %fs:pda_cpu_table, %eax	the CPU number (pda_cpu_raw())
 *	addl $1, %fs:counters		bump this CPU's counter (pda_slot_add())
 *
 * One instruction is never split by preemption or migration, and the
 * kernel reloads the register (so its hidden base) before the thread runs
 * on another CPU, so neither needs a lock prefix nor a restartable
 * sequence.  The ABI is in <asm/pda.h> (arch/x86/include/uapi/asm/pda.h).
 * Below, "%fs" means the register PDA_SEG names.
 *
 *	if (pda_init_thread())		once per thread: load %fs
 *		...			no segment: pda_cpu() falls back
 *	cpu = pda_cpu();		segment, or getcpu_cache, rseq, or
 *					sched_getcpu(), whichever works first
 *	static struct pda_slot hits[PDA_MAX_CPUS];
 *	pda_slot_add(hits, 1);		one "addl" in PDA_MODE_SEGMENT
 *
 * On other architectures, and on kernels without the segment, everything
 * here still works through the fallbacks (the slot helpers then use an
 * atomic add on the slot of the CPU pda_cpu() returned).
 *
 * The one rule of the slot helpers: within one process, either every
 * thread updates the per-CPU arrays through the segment, or every thread
 * uses locked atomics.  An unlocked "addl %fs:slot" on CPU c is atomic only
 * against other code on CPU c; it is a load and a store to the other CPUs,
 * so a locked add from CPU d to slot c can fall between them and be lost.
 * The process therefore picks one mode, once, on first use (pda_mode()):
 * PDA_MODE_SEGMENT if the kernel has the segment and the first thread to
 * ask can load it, else PDA_MODE_LOCKED.  In PDA_MODE_SEGMENT a thread whose
 * %fs holds some other selector cannot update: pda_slot_add() returns -1
 * with errno EBUSY there, and never falls back to a locked add.
 *
 * All libraries in a process share one CPU table, the weak symbol
 * pda_cpu_table, one mode, pda_process_mode, and one selector; each keeps
 * its own slot arrays.  These symbols have default visibility explicitly,
 * so that -fvisibility=hidden does not make them private to one shared
 * library; a version script that makes them local still does, which
 * stays correct (that library fills and uses its own table, and its
 * helpers follow their own mode on its own arrays) at the cost of a copy.
 */
#ifndef TOOLS_LIB_PDA_PDA_H
#define TOOLS_LIB_PDA_PDA_H

#include <errno.h>
#include <fcntl.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/auxv.h>
#include <unistd.h>

#if defined(__GLIBC__) && defined(__GLIBC_PREREQ)
#if __GLIBC_PREREQ(2, 35)
#include <sys/rseq.h>
#define PDA_HAVE_GLIBC_RSEQ	1
#endif
#endif

/* The ABI, as in the kernel's <asm/pda.h> and <asm/hwcap2.h>. */
#ifndef PDA_USER_SELECTOR
#define PDA_USER_GDT_ENTRY	29
#define PDA_USER_SELECTOR	(PDA_USER_GDT_ENTRY * 8 + 3)	/* 0xeb */
#define PDA_USER_SHIFT		6
#define PDA_USER_SLOT_SIZE	64
#endif
#ifndef HWCAP2_PDA_USER_SEG
#define HWCAP2_PDA_USER_SEG	0x4UL	/* bit 2 */
#endif
#ifndef AT_HWCAP2
#define AT_HWCAP2		26
#endif

/*
 * x86, the one architecture with the segment (GCC and clang): 32-bit
 * programs, on 32-bit and 64-bit kernels, and 64-bit ones on 64-bit
 * kernels.  Not x32, which has no getcpu_cache number either.
 */
#if defined(__i386)
#define PDA_X86_32		1
#else
#define PDA_X86_32		0
#endif
#if defined(__x86_64__) && !defined(__ILP32__)
#define PDA_X86_64		1
#else
#define PDA_X86_64		0
#endif

/*
 * The register that holds the selector, as an assembler name.  32-bit
 * programs use %fs, because glibc keeps its TLS in %gs; one without
 * glibc's TLS may define PDA_I386_USE_GS to use %gs.  64-bit programs use
 * %gs, because glibc keeps its TLS in %fs there.
 */
#if PDA_X86_64 || (PDA_X86_32 && defined(PDA_I386_USE_GS))
#define PDA_SEG			"gs"
#elif PDA_X86_32
#define PDA_SEG			"fs"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The symbols every library of a process shares (with #pragma weak). */
#define PDA_SHARED		__attribute__((visibility("default")))

/*
 * Slots every per-CPU array has, and entries of pda_cpu_table: 64, the
 * largest NR_CPUS a 32-bit x86 kernel can be built with
 * (NR_CPUS_RANGE_END in arch/x86/Kconfig), so every CPU number the segment
 * can yield has its slot, and an array is one 4 KiB page.  A 64-bit kernel
 * may have more CPUs: there pda_available() says no when more than 64 are
 * possible, and the fallbacks are used.  Without the segment CPU numbers
 * may be higher: the fallback
 * then folds CPU n onto slot n % PDA_MAX_CPUS, which stays exact because
 * that path only uses locked atomics.  Part of the ABI between the
 * libraries of a process: every copy of this header must agree on it
 * (and be one that checks an inherited selector, as pda_init_thread()
 * does: an older copy would fill the shared table on a machine with more
 * possible CPUs, and every copy would then read through it).
 */
#define PDA_MAX_CPUS		64
#define PDA_SLOT_WORDS		(PDA_USER_SLOT_SIZE / 4)

/*
 * One CPU's slot of a per-CPU array.  Arrays of these are indexed by CPU
 * number: "struct pda_slot counters[PDA_MAX_CPUS]".  Slot 0 is what the
 * segment helpers name; the segment base moves it to the current CPU's.
 * One slot is one cache line on current x86, so CPUs do not share lines.
 */
struct pda_slot {
	union {
		alignas(PDA_USER_SLOT_SIZE) unsigned char bytes[PDA_USER_SLOT_SIZE];
		int32_t s32[PDA_SLOT_WORDS];
		uint32_t u32[PDA_SLOT_WORDS];
		uint64_t u64[PDA_SLOT_WORDS / 2];
	};
};

/* Defines a per-CPU array of slots, one per possible CPU number. */
#define PDA_DEFINE_SLOTS(name)	struct pda_slot name[PDA_MAX_CPUS]

/* CPU @cpu's slot of per-CPU array @slots (plain memory, any thread). */
#define pda_slot_ptr(slots, cpu)	(&(slots)[(cpu)])

/*
 * pda_cpu_table_ready and pda_process_mode hold values a null or PDA %fs
 * can be compared with in one instruction: the selector with bit 16 set
 * (a selector has 16 bits), so that "%fs is 0xeb and X" is one branch.
 */
#define PDA_SEG_KEY(sel)		((int)((sel) | 0x10000U))
#define PDA_TABLE_READY		PDA_SEG_KEY(PDA_USER_SELECTOR)

/*
 * The shared CPU table: word 0 of slot i holds i.  Weak, so that every
 * library including this header and the program itself end up with one
 * copy (the convention of the getcpu_cache __getcpu_cache_tls symbol),
 * and default visibility (see above).  pda_table_fill() fills it once;
 * pda_cpu_table_ready is PDA_TABLE_READY when it is done, 0 before.
 */
PDA_SHARED struct pda_slot pda_cpu_table[PDA_MAX_CPUS];
PDA_SHARED int pda_cpu_table_ready;
#pragma weak pda_cpu_table
#pragma weak pda_cpu_table_ready

/*
 * The process's slot mode (see the rule at the top), shared like the
 * table: 0 until the first use decides it, for good, with a CAS.
 */
#define PDA_MODE_UNDECIDED	0
#define PDA_MODE_SEGMENT	PDA_SEG_KEY(PDA_USER_SELECTOR)
#define PDA_MODE_LOCKED		0x20000

PDA_SHARED int pda_process_mode;
#pragma weak pda_process_mode

/*
 * getcpu_cache(2), system call 463 on x86, ARM and arm64
 * (<linux/getcpu_cache.h>): the kernel keeps a registered int32_t equal to
 * the current CPU.  The getcpu_cache proposal's convention: one
 * thread-local __getcpu_cache_tls, weak, shared by every library; -1 until
 * the kernel wrote it.  The name is reserved, but it is that proposal's,
 * shared with code outside this header, so it is kept.
 */
#define PDA_NR_getcpu_cache	463
#define PDA_GETCPU_CACHE_GET	0
#define PDA_GETCPU_CACHE_SET	1

PDA_SHARED __thread int32_t __getcpu_cache_tls = -1;
#pragma weak __getcpu_cache_tls

/* How pda_cpu() found the CPU number in this thread, for reports. */
enum pda_cpu_method {
	PDA_METHOD_UNKNOWN = 0,
	PDA_METHOD_SEGMENT,
	PDA_METHOD_GETCPU_CACHE,
	PDA_METHOD_RSEQ,
	PDA_METHOD_SCHED_GETCPU,
};

static inline const char *pda_cpu_method_name(int method)
{
	static const char * const names[] = {
		"unknown", "segment", "getcpu_cache", "rseq", "sched_getcpu",
	};

	if (method < 0 || method > PDA_METHOD_SCHED_GETCPU)
		return names[0];
	return names[method];
}

/* Per thread and per translation unit: probing again costs little. */
static __thread int pda_thread_method;
static __thread int32_t *pda_thread_gcc;

/* ------------------------------------------------------- the segment */

/* Fills pda_cpu_table once per process; racing fillers store the same. */
static inline void pda_table_fill(void)
{
	int i;

	if (__atomic_load_n(&pda_cpu_table_ready, __ATOMIC_ACQUIRE) ==
	    PDA_TABLE_READY)
		return;
	for (i = 0; i < PDA_MAX_CPUS; i++)
		__atomic_store_n(&pda_cpu_table[i].s32[0], i, __ATOMIC_RELAXED);
	__atomic_store_n(&pda_cpu_table_ready, PDA_TABLE_READY,
			 __ATOMIC_RELEASE);
}

/*
 * One more than the highest CPU number the kernel may ever run, from
 * /sys/devices/system/cpu/possible (a list in ascending order: its last
 * number is the highest), or 0 if it cannot be read whole.  Not
 * sysconf(_SC_NPROCESSORS_CONF): musl's counts the caller's affinity
 * mask, and glibc's falls back to other counts without sysfs.
 */
static inline long pda_possible_cpus(void)
{
	char buf[256];
	long num = -1, last = -1;
	ssize_t len, i;
	int fd;

	fd = open("/sys/devices/system/cpu/possible", O_RDONLY);
	if (fd < 0)
		return 0;
	len = read(fd, buf, sizeof(buf));
	close(fd);
	if (len <= 0 || len == sizeof(buf))	/* nothing, or cut short */
		return 0;
	for (i = 0; i < len; i++) {
		if (buf[i] >= '0' && buf[i] <= '9') {
			num = (num < 0 ? 0 : num * 10) + (buf[i] - '0');
			continue;
		}
		if (num >= 0)
			last = num;
		num = -1;
	}
	if (num >= 0)
		last = num;
	return last + 1;
}

#if PDA_X86_32 || PDA_X86_64

#define PDA_HAVE_SEGMENT	1

/*
 * What lar must report for the selector (bits 8-23 of the access rights,
 * the accessed bit masked): a present, DPL-3, read/write, expand-up data
 * segment with 32-bit default size and page granularity.
 */
#define PDA_LAR_MASK		0x00c0fe00
#define PDA_LAR_EXPECT		0x00c0f200

static inline unsigned int pda_read_seg(void)
{
	unsigned int sel;

	__asm__ __volatile__ ("movl %%" PDA_SEG ", %0" : "=r" (sel));
	return sel & 0xffff;
}

/* lar of @sel: the access rights in @ar, returns 0 if @sel is visible. */
static inline int pda_lar(unsigned int sel, unsigned int *ar)
{
	unsigned char ok;

	__asm__ ("lar %2, %0\n\tsetz %1"
		 : "=r" (*ar), "=qm" (ok) : "r" (sel) : "cc");
	return ok ? 0 : -1;
}

/* lsl of @sel: the byte-granular limit in @limit, 0 if @sel is visible. */
static inline int pda_lsl(unsigned int sel, unsigned int *limit)
{
	unsigned char ok;

	__asm__ ("lsl %2, %0\n\tsetz %1"
		 : "=r" (*limit), "=qm" (ok) : "r" (sel) : "cc");
	return ok ? 0 : -1;
}

/* verr/verw: may CPL 3 read/write through @sel? */
static inline int pda_verr(unsigned int sel)
{
	unsigned char ok;

	__asm__ ("verr %w1\n\tsetz %0" : "=qm" (ok) : "r" (sel) : "cc");
	return ok;
}

static inline int pda_verw(unsigned int sel)
{
	unsigned char ok;

	__asm__ ("verw %w1\n\tsetz %0" : "=qm" (ok) : "r" (sel) : "cc");
	return ok;
}

/*
 * Does this kernel provide the segment?  AT_HWCAP2 says so, the
 * descriptor must look as the ABI promises, to CPL 3, and every possible
 * CPU must have its slot: a 64-bit kernel may have more than
 * PDA_MAX_CPUS, and where the possible CPUs cannot be read (no sysfs)
 * the answer is no.
 */
static inline int pda_available(void)
{
	unsigned int ar, limit;
	int saved_errno = errno;
	long possible;

	if (!(getauxval(AT_HWCAP2) & HWCAP2_PDA_USER_SEG)) {
		errno = saved_errno;	/* getauxval() sets ENOENT if absent */
		return 0;
	}
	possible = pda_possible_cpus();
	errno = saved_errno;
	if (possible < 1 || possible > PDA_MAX_CPUS)
		return 0;
	if (!pda_verr(PDA_USER_SELECTOR) || !pda_verw(PDA_USER_SELECTOR))
		return 0;
	if (pda_lar(PDA_USER_SELECTOR, &ar) ||
	    (ar & PDA_LAR_MASK) != PDA_LAR_EXPECT)
		return 0;
	if (pda_lsl(PDA_USER_SELECTOR, &limit) || limit != 0xffffffffU)
		return 0;
	return 1;
}

/* Does this thread have the segment in %fs? */
static inline int pda_thread_ready(void)
{
	return pda_read_seg() == PDA_USER_SELECTOR;
}

/* %fs as a key: equals PDA_TABLE_READY/PDA_MODE_SEGMENT if it is 0xeb. */
static inline int pda_seg_key(void)
{
	return PDA_SEG_KEY(pda_read_seg());
}

/* Can this thread hold the segment: %fs is 0xeb, or null (RPL 0-3)? */
static inline int pda_seg_free(unsigned int fs)
{
	return fs == PDA_USER_SELECTOR || !(fs & ~3U);
}

/*
 * The process's slot mode, decided on the first call in the process (by
 * any helper): PDA_MODE_SEGMENT if the kernel has the segment and the
 * calling thread's %fs is free for it, else PDA_MODE_LOCKED.  Never
 * changes afterwards (but is inherited by fork and reset by exec).
 */
static inline int pda_mode(void)
{
	int mode = __atomic_load_n(&pda_process_mode, __ATOMIC_RELAXED);
	int undecided = PDA_MODE_UNDECIDED;

	if (mode != PDA_MODE_UNDECIDED)
		return mode;
	mode = pda_seg_free(pda_read_seg()) && pda_available() ?
	       PDA_MODE_SEGMENT : PDA_MODE_LOCKED;
	if (!__atomic_compare_exchange_n(&pda_process_mode, &undecided, mode,
					 0, __ATOMIC_RELAXED,
					 __ATOMIC_RELAXED))
		mode = undecided;	/* another thread decided first */
	return mode;
}

/*
 * Chooses the mode before anything else decided it: 0, or -1 with errno
 * EINVAL (not a mode; SEGMENT without the segment) or EBUSY (already
 * decided otherwise).  For programs that know better than the first use.
 */
static inline int pda_set_mode(int mode)
{
	int undecided = PDA_MODE_UNDECIDED;

	if ((mode != PDA_MODE_SEGMENT && mode != PDA_MODE_LOCKED) ||
	    (mode == PDA_MODE_SEGMENT && !pda_available())) {
		errno = EINVAL;
		return -1;
	}
	if (__atomic_compare_exchange_n(&pda_process_mode, &undecided, mode,
					0, __ATOMIC_RELAXED, __ATOMIC_RELAXED) ||
	    undecided == mode)
		return 0;
	errno = EBUSY;
	return -1;
}

/*
 * Loads the selector into %fs for the calling thread (each thread, and
 * again after exec), and makes sure the CPU table is filled (also when
 * %fs already held the selector, inherited through clone() or loaded by
 * another library).  Decides the process's mode if nothing did yet.
 * Returns 0, or -1 with errno ENOTSUP when pda_available() says no (even
 * if %fs already holds the selector), or EBUSY when %fs already holds
 * another selector that someone else uses.
 * In PDA_MODE_LOCKED it still loads %fs, for pda_cpu(); the slot helpers
 * then use locked atomics all the same.
 */
static inline int pda_init_thread(void)
{
	unsigned int fs = pda_read_seg();

	pda_mode();
	/* The table is filled only where pda_available() said yes. */
	if (fs == PDA_USER_SELECTOR &&
	    __atomic_load_n(&pda_cpu_table_ready, __ATOMIC_ACQUIRE) ==
	    PDA_TABLE_READY) {
		pda_thread_method = PDA_METHOD_SEGMENT;
		return 0;
	}
	/*
	 * An inherited 0xeb is no proof either: on a kernel with more
	 * possible CPUs than the table has slots, a read on CPU 64 or above
	 * would land past the table.
	 */
	if (!pda_available()) {
		errno = ENOTSUP;
		return -1;
	}
	if (!pda_seg_free(fs)) {
		errno = EBUSY;
		return -1;
	}
	pda_table_fill();
	if (fs != PDA_USER_SELECTOR)
		__asm__ __volatile__ ("movl %0, %%" PDA_SEG
				      : : "r" (PDA_USER_SELECTOR) : "memory");
	pda_thread_method = PDA_METHOD_SEGMENT;
	return 0;
}

/*
 * How this thread may update per-CPU data, once the one-compare test of
 * the fast path (%fs holds 0xeb and the process is in PDA_MODE_SEGMENT)
 * failed: 1 in PDA_MODE_LOCKED (with locked atomics); 0 in
 * PDA_MODE_SEGMENT, through %fs, the selector loaded now if %fs was null;
 * -1 with errno EBUSY if %fs holds another selector, or with
 * pda_init_thread()'s (ENOTSUP) if it cannot load the selector: no update
 * at all.
 */
static inline int pda_seg_update_slow(void)
{
	int saved_errno = errno;

	if (pda_mode() != PDA_MODE_SEGMENT)
		return 1;
	/*
	 * The mode says the kernel has the segment, so a busy %fs is
	 * refused here without pda_available()'s sysfs read: a thread
	 * that is refused on every add must not pay a syscall each.
	 */
	if (!pda_seg_free(pda_read_seg())) {
		errno = EBUSY;
		return -1;
	}
	if (!pda_thread_ready() && pda_init_thread())
		return -1;
	errno = saved_errno;
	return 0;
}

/*
 * The segment read alone: one "movl %fs:pda_cpu_table, %reg".  Only
 * after pda_init_thread() returned 0 in this thread.  Volatile, so that
 * the compiler neither merges two reads nor moves one across a call that
 * may migrate the thread.  The operand is the whole table, because the
 * read lands in slot "cpu", not slot 0.
 */
static inline int pda_cpu_raw(void)
{
	int cpu;

	__asm__ __volatile__ ("movl %%" PDA_SEG ":%1, %0"
			      : "=r" (cpu) : "m" (pda_cpu_table));
	return cpu;
}

/*
 * One instruction through %fs on word @p0 of slot 0 of a per-CPU array,
 * which the segment base turns into the same word of this CPU's slot.
 * Only after pda_init_thread() returned 0 in this thread, and only in
 * PDA_MODE_SEGMENT, or on arrays no thread updates with locked atomics
 * (the checked helpers do, in PDA_MODE_LOCKED).  The "memory" clobbers:
 * the word reached is in slot "cpu", which *p0 does not name.
 */
static inline void pda_add32_raw(uint32_t *p0, uint32_t v)
{
	__asm__ __volatile__ ("addl %1, %%" PDA_SEG ":%0"
			      : "+m" (*p0) : "ir" (v) : "memory", "cc");
}

static inline uint32_t pda_read32_raw(const uint32_t *p0)
{
	uint32_t v;

	__asm__ __volatile__ ("movl %%" PDA_SEG ":%1, %0" : "=r" (v) : "m" (*p0)
			      : "memory");
	return v;
}

static inline void pda_write32_raw(uint32_t *p0, uint32_t v)
{
	__asm__ __volatile__ ("movl %1, %%" PDA_SEG ":%0"
			      : "=m" (*p0) : "ir" (v) : "memory");
}

/*
 * Compare-and-exchange on this CPU's word, without a lock prefix: atomic
 * against every other thread of this CPU (one instruction), which are the
 * only ones that reach this word through %fs.  Returns the old value.
 */
static inline uint32_t pda_cmpxchg32_raw(uint32_t *p0, uint32_t old,
					 uint32_t val)
{
	__asm__ __volatile__ ("cmpxchgl %2, %%" PDA_SEG ":%1"
			      : "+a" (old), "+m" (*p0) : "r" (val)
			      : "memory", "cc");
	return old;
}

#else /* not x86: no segment; the fallbacks do all the work. */

#define PDA_HAVE_SEGMENT	0

static inline int pda_available(void)
{
	return 0;
}

static inline int pda_thread_ready(void)
{
	return 0;
}

static inline int pda_init_thread(void)
{
	errno = ENOTSUP;
	return -1;
}

static inline int pda_mode(void)
{
	return PDA_MODE_LOCKED;
}

static inline int pda_set_mode(int mode)
{
	if (mode == PDA_MODE_LOCKED)
		return 0;
	errno = EINVAL;
	return -1;
}

#endif /* PDA_X86_32 || PDA_X86_64 */

/* ------------------------------------------------------ the fallbacks */

#if PDA_X86_32 || PDA_X86_64 || defined(__arm__) || defined(__aarch64__)
/*
 * <unistd.h> declares syscall() only with _DEFAULT_SOURCE, which strict
 * -std=c11 turns off: bind it by an asm label, as pda_sched_getcpu below.
 */
long pda_syscall(long nr, ...) __asm__("syscall");

static inline long pda_getcpu_cache(int cmd, int32_t **cpu_cachep, int flags)
{
	/*
	 * Mainline 6.13 and later use 463 for setxattrat(), which fails
	 * with EINVAL when its last argument (usize) is 0: pass zeros.
	 */
	return pda_syscall(PDA_NR_getcpu_cache, cmd, cpu_cachep, flags, 0, 0, 0);
}

/*
 * Registers __getcpu_cache_tls for this thread, or finds the cache some
 * other library registered.  Returns the cache, or NULL.
 */
static inline int32_t *pda_getcpu_cache_register(void)
{
	int32_t *cache = &__getcpu_cache_tls;

	if (!pda_getcpu_cache(PDA_GETCPU_CACHE_SET, &cache, 0))
		return cache;
	if (errno == EBUSY && !pda_getcpu_cache(PDA_GETCPU_CACHE_GET, &cache, 0))
		return cache;
	return NULL;
}
#else
static inline int32_t *pda_getcpu_cache_register(void)
{
	return NULL;
}
#endif

/*
 * This thread's struct rseq where glibc 2.35 or later registered rseq in
 * the process (__rseq_size is not 0): the thread pointer plus
 * __rseq_offset.  Its cpu_id is negative in a thread whose own
 * registration failed.
 */
#ifdef PDA_HAVE_GLIBC_RSEQ
static inline struct rseq *pda_rseq_area_raw(void)
{
	char *tp;

	/*
	 * The thread pointer __rseq_offset is relative to.  On x86 the
	 * TCB's first word points to itself, so %gs:0 (i386) or %fs:0
	 * (x86-64) is it, without __builtin_thread_pointer(), which GCC
	 * before 11 lacks on x86.
	 */
#if PDA_X86_32
	__asm__ ("movl %%gs:0, %0" : "=r" (tp));
#elif defined(__x86_64__)
	__asm__ ("movq %%fs:0, %0" : "=r" (tp));
#else
	tp = (char *)__builtin_thread_pointer();
#endif
	return (struct rseq *)(tp + __rseq_offset);
}

/*
 * The same, or NULL: no such glibc, or it registered none (__rseq_size
 * 0: rseq(2) failed, as on a kernel without CONFIG_RSEQ, or the
 * glibc.pthread.rseq=0 tunable turned it off).
 */
static inline struct rseq *pda_rseq_area(void)
{
	return __rseq_size ? pda_rseq_area_raw() : NULL;
}
#endif

static inline int pda_rseq_cpu(void)
{
#ifdef PDA_HAVE_GLIBC_RSEQ
	struct rseq *rs = pda_rseq_area();

	if (!rs)
		return -1;
	return (int32_t)__atomic_load_n(&rs->cpu_id, __ATOMIC_RELAXED);
#else
	return -1;
#endif
}

/*
 * The last fallback: the C library's sched_getcpu(), which already takes
 * the cheapest way it knows (glibc 2.35 and later: rseq's cpu_id, then
 * the vDSO's getcpu where the architecture has one, then getcpu(2); musl:
 * the vDSO on x86-64, getcpu(2) elsewhere).  Declared here under its own
 * name, bound to the symbol by an asm label, because <sched.h> declares
 * sched_getcpu() only with _GNU_SOURCE, which this header must neither
 * require nor define.
 */
typedef int pda_getcpu_fn(void);
pda_getcpu_fn pda_sched_getcpu __asm__("sched_getcpu");

/*
 * Picks this thread's method, in the order of preference, and returns the
 * CPU number through it.
 */
static inline int pda_cpu_probe(void)
{
	int cpu;

#if PDA_HAVE_SEGMENT
	if (!pda_init_thread())
		return pda_cpu_raw();
#endif
	pda_thread_gcc = pda_getcpu_cache_register();
	if (pda_thread_gcc) {
		/* Written before SET returned; -1 only if never written. */
		cpu = __atomic_load_n(pda_thread_gcc, __ATOMIC_RELAXED);
		if (cpu >= 0) {
			pda_thread_method = PDA_METHOD_GETCPU_CACHE;
			return cpu;
		}
	}
	cpu = pda_rseq_cpu();
	if (cpu >= 0) {
		pda_thread_method = PDA_METHOD_RSEQ;
		return cpu;
	}
	pda_thread_method = PDA_METHOD_SCHED_GETCPU;
	return pda_sched_getcpu();
}

/*
 * The CPU number through the method this thread settled on, or the
 * segment once the table is filled.  Leaves errno as it was.
 */
static inline int pda_cpu_slow(void)
{
	int cpu, saved_errno = errno;

	switch (pda_thread_method) {
	case PDA_METHOD_GETCPU_CACHE:
		cpu = __atomic_load_n(pda_thread_gcc, __ATOMIC_RELAXED);
		break;
	case PDA_METHOD_RSEQ:
		cpu = pda_rseq_cpu();
		break;
	case PDA_METHOD_SCHED_GETCPU:
		cpu = pda_sched_getcpu();
		break;
	default:
		/*
		 * First call (also with a %fs inherited or loaded by someone
		 * else, which pda_init_thread() checks), or %fs was changed
		 * under a SEGMENT thread.
		 */
		cpu = pda_cpu_probe();
		break;
	}
	errno = saved_errno;
	return cpu;
}

/*
 * The current CPU number: one segment read when this thread has the
 * selector in %fs and the shared table is filled (one compare, one
 * branch), which the first call arranges if %fs is null and the kernel
 * has the segment; otherwise getcpu_cache, rseq's cpu_id, or
 * sched_getcpu(), the first that works.
 * As with sched_getcpu(), the thread may be elsewhere by the time the
 * caller looks at the result, unless it is pinned.
 */
static inline int pda_cpu(void)
{
#if PDA_HAVE_SEGMENT
	if (__builtin_expect(pda_seg_key() ==
			     __atomic_load_n(&pda_cpu_table_ready,
					     __ATOMIC_ACQUIRE), 1))
		return pda_cpu_raw();
#endif
	return pda_cpu_slow();
}

/* How pda_cpu() reads the CPU number in this thread (after one call). */
static inline int pda_cpu_method(void)
{
#if PDA_HAVE_SEGMENT
	/* What pda_cpu()'s fast path takes: %fs 0xeb and the table filled. */
	if (pda_seg_key() == __atomic_load_n(&pda_cpu_table_ready,
					     __ATOMIC_ACQUIRE))
		return PDA_METHOD_SEGMENT;
#endif
	return pda_thread_method;
}

/* ----------------------------------------------------- per-CPU slots */

/*
 * The checked helpers follow the process's mode (pda_mode()):
 * - PDA_MODE_SEGMENT: one unlocked instruction through %fs, loading the
 *   selector first if this thread's %fs is null.  A thread whose %fs
 *   holds another selector gets -1 and errno EBUSY, and nothing is
 *   added: a locked add from it could race with the unlocked ones.
 * - PDA_MODE_LOCKED: a locked add on the slot of the CPU pda_cpu() names
 *   (CPU n >= PDA_MAX_CPUS uses slot n % PDA_MAX_CPUS), atomic because the
 *   thread may migrate between the two and share that slot with a thread
 *   of another CPU; every thread does this, even one that has the
 *   segment, so no update races with an unlocked one.
 * Either way the sum over the slots is exact.  They return 0, or -1 with
 * errno set; a successful call leaves errno alone.  @p0 points into slot
 * 0 of a per-CPU array.
 */
static inline uint32_t *pda_this_cpu_ptr(uint32_t *p0, int cpu)
{
	return (uint32_t *)((char *)p0 + ((size_t)cpu << PDA_USER_SHIFT));
}

static inline int pda_add32_slow(uint32_t *p0, uint32_t v)
{
	int cpu;

#if PDA_HAVE_SEGMENT
	int seg = pda_seg_update_slow();

	if (seg <= 0) {
		if (!seg)
			pda_add32_raw(p0, v);
		return seg;
	}
#endif
	cpu = pda_cpu();
	cpu = cpu < 0 ? 0 : cpu % PDA_MAX_CPUS;
	__atomic_fetch_add(pda_this_cpu_ptr(p0, cpu), v, __ATOMIC_RELAXED);
	return 0;
}

static inline int pda_add32(uint32_t *p0, uint32_t v)
{
#if PDA_HAVE_SEGMENT
	/* %fs is 0xeb and the process is in PDA_MODE_SEGMENT: one branch. */
	if (__builtin_expect(pda_seg_key() ==
			     __atomic_load_n(&pda_process_mode,
					     __ATOMIC_RELAXED), 1)) {
		pda_add32_raw(p0, v);
		return 0;
	}
#endif
	return pda_add32_slow(p0, v);
}

/* Called only for a constant @word out of range: a compile-time error. */
void pda_slot_word_out_of_range(void)
	__attribute__((error("pda_slot_add_word: word >= PDA_SLOT_WORDS")));

/*
 * Word @word of the current CPU's slot of @slots: add @v.  -1 with errno
 * EINVAL if @word >= PDA_SLOT_WORDS (a compile-time error when constant
 * and the call is inlined), else as pda_add32().
 */
static inline int pda_slot_add_word(struct pda_slot *slots,
				    unsigned int word, uint32_t v)
{
	if (word >= PDA_SLOT_WORDS) {
		if (__builtin_constant_p(word))
			pda_slot_word_out_of_range();
		errno = EINVAL;
		return -1;
	}
	return pda_add32(&slots[0].u32[word], v);
}

/* Word 0 of the current CPU's slot of @slots: add @v. */
#define pda_slot_add(slots, v)			pda_add32(&(slots)[0].u32[0], (v))
#define pda_slot_inc(slots)			pda_slot_add(slots, 1)

#if PDA_HAVE_SEGMENT
/*
 * Unchecked: the segment must be in %fs (pda_init_thread() returned 0),
 * and the array must not also be updated by locked atomics, so the
 * process must be in PDA_MODE_SEGMENT if checked helpers touch it too.
 */
#define pda_slot_add_raw(slots, v)		pda_add32_raw(&(slots)[0].u32[0], (v))
#define pda_slot_read_raw(slots)		pda_read32_raw(&(slots)[0].u32[0])
#endif

/* Word @word summed over the slots of CPUs 0 .. @ncpus - 1. */
static inline uint64_t pda_slots_sum32(const struct pda_slot *slots,
				       int ncpus, int word)
{
	uint64_t sum = 0;
	int i;

	if (word < 0 || word >= PDA_SLOT_WORDS)
		return 0;
	for (i = 0; i < ncpus && i < PDA_MAX_CPUS; i++)
		sum += __atomic_load_n(&slots[i].u32[word], __ATOMIC_RELAXED);
	return sum;
}

#ifdef __cplusplus
}
#endif

#endif /* TOOLS_LIB_PDA_PDA_H */
