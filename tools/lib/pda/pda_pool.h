/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * pda_pool.h: per-CPU objects of any size, each access one instruction
 * through the user per-CPU segment (pda.h), header only.
 *
 * The segment's base is cpu * 64, so an address X read through %fs
 * reaches X + cpu * 64.  A pool lays its memory out so that this one
 * offset turns every byte of an object into the same byte of the current
 * CPU's copy.  The pool is rows of lines: a row is one 64-byte line per
 * possible CPU, stride = 64 x possible CPUs bytes, and CPU c's line of
 * row r is at base + r * stride + c * 64.  Each CPU sees the pool as one
 * "line space" of rows * 64 bytes (its lines, one after the other), and
 * an object is a byte range [o, o + size) of it, the same for every CPU:
 * byte k of CPU c's copy is at
 *
 *	base + ((o + k) / 64) * stride + c * 64 + (o + k) % 64
 *
 * The object's handle is CPU 0's copy of byte 0.  An object of up to 64
 * bytes lies inside one line (its copy is contiguous, so a handle is also
 * a plain pointer to CPU 0's copy), a larger one starts at a line; so
 * byte k of an object is at handle + (k / 64) * stride + k % 64 for CPU 0
 * and, through %fs, for the current CPU: an address the caller computes
 * once, independent of the CPU it runs on, and one instruction with it:
 *
 *	addl $1, %fs:8(%eax)		this CPU's copy of byte 8 of the
 *					object at %eax: +1
 *
 * No lock prefix and no restartable sequence: one instruction is never
 * split by preemption or migration, and the kernel reloads %fs (so its
 * base) before the thread runs on another CPU.  Possible CPUs, not online
 * ones, size the stride, so CPU hotplug needs nothing.
 *
 *	pool = pda_pool_create(4096);		4 KiB of line space per CPU
 *	st = pda_pool_alloc(pool, sizeof(*st), alignof(*st));
 *	pda_pool_inc_u32(pool, st, offsetof(struct stats, hits));
 *						one "addl $1, %fs:..."
 *	total = pda_pool_sum_u32(pool, st, offsetof(struct stats, hits));
 *						over every possible CPU
 *
 * Without the segment (ARM, arm64, a kernel without the descriptor, Xen
 * PV, more than PDA_MAX_CPUS possible CPUs) the same calls run one rseq
 * critical section each (pda_rseq.h) on this CPU's copy, on the struct
 * rseq glibc registered; so does a thread whose %fs holds another
 * selector in a process that uses the segment: a section and an unlocked
 * instruction through %fs are each atomic against the other code of the
 * CPU whose copy they change, so they mix.  Only where glibc registered
 * no rseq (glibc before 2.35, a kernel without CONFIG_RSEQ, the
 * glibc.pthread.rseq=0 tunable) do the calls take atomics on the copy of
 * the CPU pda_cpu() names, which mix with neither, so the whole process
 * does (pda_mode(), and the rule at the top of pda.h).
 * pda_pool_method() says which of the three a process has,
 * pda_pool_path() which one the calling thread takes.
 *
 * Operations, on a 32-bit (_u32) or unsigned long (_ulong) field at byte
 * offset @off of object @obj (an offset, not a pointer: past the first 64
 * bytes the copy is not contiguous, and a pointer to a field would name
 * another CPU's line):
 * load, store, add, sub, inc, dec, and, or, xor, xchg and cmpxchg.  Each
 * is one instruction through the segment: an unlocked one, atomic against
 * the other threads of this CPU, which are the only ones that reach this
 * CPU's copy that way; xchg is the one x86 always locks.  The checked
 * calls test the thread's path first, inline (on x86 six instructions:
 * read the selector, compare it with the mode, branch; in a process that
 * uses the segment, the rest is out of line).  Code that updates many
 * fields at once can test once, with pda_pool_path(), and then use the
 * raw accessors on pda_pool_field()'s address: where it says
 * PDA_POOL_SEGMENT, pda_pool_add_u32_raw() and the rest (x86 only), each
 * its one instruction; where it says PDA_POOL_RSEQ, pda_rseq_add_u32()
 * and the rest on pda_rseq_area_raw() (the path was RSEQ: glibc
 * registered rseq), each again while it returns 1 (aborted).
 *
 * @off must be a multiple of the field's size (else EINVAL: the field
 * could cross into the next CPU's line; a compile-time error when the
 * offset is a constant) and lie inside the object (not checked), and the
 * object must have been allocated with the field's alignment.  The
 * updates return 0, or -1 with errno EINVAL, or EBUSY when the process is
 * in PDA_MODE_SEGMENT, this thread's %fs holds another selector and glibc
 * registered no rseq (nothing is changed: a locked update from it could
 * race with the unlocked ones), or ENOTSUP when a thread with a null %fs
 * cannot take the selector (pda_init_thread()), or where the process
 * updates through rseq but this code was built without rseq sections or
 * the thread has no registration.  A successful call leaves errno alone.
 *
 * Creating and destroying a pool maps and unmaps its memory; allocation
 * and free take the pool's mutex and may call malloc: like malloc(), not
 * from a signal handler, and not in the child of a fork() while another
 * thread of the parent was in them.  The accessors take no lock and
 * allocate nothing; a thread's first one may probe its CPU-number method
 * (pda.h).  C only (C11 and later).
 */
#ifndef TOOLS_LIB_PDA_PDA_POOL_H
#define TOOLS_LIB_PDA_PDA_POOL_H

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "pda.h"
#include "pda_rseq.h"

/*
 * <sys/mman.h> defines MAP_ANONYMOUS only with _DEFAULT_SOURCE, which
 * strict -std=c11 turns off; 0x20 is its value on every architecture
 * this header serves (x86, ARM, arm64).
 */
#ifndef MAP_ANONYMOUS
#define MAP_ANONYMOUS		0x20
#endif

/*
 * glibc's <sys/cdefs.h> defines __always_inline and
 * __attribute_noinline__; elsewhere (musl) plain inline and nothing: as
 * correct, but an accessor is one instruction only where the compiler
 * inlines it, and its slow path may be inlined too.
 */
#ifndef __always_inline
#define __always_inline		inline
#endif
#ifndef __attribute_noinline__
#define __attribute_noinline__
#endif

/* One line per CPU and row: the segment's slot size. */
#define PDA_POOL_LINE		PDA_USER_SLOT_SIZE

/* A byte range of the line space: free, or one allocated object. */
struct pda_pool_extent {
	size_t off;
	size_t len;
};

/* A sorted array of extents. */
struct pda_pool_extents {
	struct pda_pool_extent *e;
	size_t nr;
	size_t cap;
};

struct pda_pool {
	unsigned char *base;	/* row 0, CPU 0's line */
	size_t stride;		/* bytes per row: a line per possible CPU */
	size_t rows;
	size_t map_size;
	int cpus;		/* possible CPUs */
	/* Line space above it has never held an object: still zero. */
	size_t fresh;
	pthread_mutex_t lock;	/* of the extents and fresh */
	struct pda_pool_extents free;	/* free ranges, coalesced */
	struct pda_pool_extents used;	/* objects, for free() and checks */
};

enum pda_pool_method {
	PDA_POOL_SEGMENT = 1,	/* one unlocked instruction through %fs */
	PDA_POOL_RSEQ,		/* an rseq critical section per update */
	PDA_POOL_ATOMIC,	/* atomics on pda_cpu()'s copy */
};

/*
 * Where the segment is not taken, how the process's pools are updated:
 * PDA_POOL_RSEQ or PDA_POOL_ATOMIC, decided once, by the first pool call
 * of any library in the process, like pda.h's pda_process_mode; 0 until
 * then.  Shared, so that code built without rseq sections (older glibc
 * headers, musl) cannot take atomics on copies another library updates
 * with rseq: it gets ENOTSUP instead.
 */
PDA_SHARED int pda_pool_process_fallback;
#pragma weak pda_pool_process_fallback

/* The first call's decision, out of line: once per process. */
static __attribute_noinline__ int pda_pool_fallback_decide(void)
{
	int undecided = 0, method;

#if PDA_HAVE_RSEQ_SECTIONS
	method = __rseq_size ? PDA_POOL_RSEQ : PDA_POOL_ATOMIC;
#else
	method = PDA_POOL_ATOMIC;
#endif
	if (!__atomic_compare_exchange_n(&pda_pool_process_fallback,
					 &undecided, method, 0,
					 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		method = undecided;	/* decided elsewhere first */
	return method;
}

static inline int pda_pool_fallback_method(void)
{
	int method = __atomic_load_n(&pda_pool_process_fallback,
				     __ATOMIC_RELAXED);

	return method ? method : pda_pool_fallback_decide();
}

/*
 * Which way this process's pools are updated, for its whole life: the
 * segment in pda.h's PDA_MODE_SEGMENT (threads whose %fs is taken use
 * rseq, which mixes with it: both are atomic only per CPU, and each
 * update runs on the CPU whose copy it changes), else rseq where glibc
 * registered it, else atomics (which mix with neither).
 */
static inline int pda_pool_method(void)
{
	if (pda_mode() == PDA_MODE_SEGMENT)
		return PDA_POOL_SEGMENT;
	return pda_pool_fallback_method();
}

static inline const char *pda_pool_method_name(int method)
{
	switch (method) {
	case PDA_POOL_SEGMENT:
		return "segment";
	case PDA_POOL_RSEQ:
		return "rseq";
	default:
		return "atomic";
	}
}

/* ------------------------------------------------------------ layout */

/*
 * Where byte @off of an object is, relative to its handle, in CPU 0's
 * copy (and, through %fs, the current CPU's).  Constant for a constant
 * @off below 64; a multiply by the stride beyond.
 */
static inline size_t pda_pool_disp(const struct pda_pool *pool, size_t off)
{
	return off / PDA_POOL_LINE * pool->stride + off % PDA_POOL_LINE;
}

/* CPU @cpu's copy of byte @off of object @obj: plain memory. */
static inline void *pda_pool_cpu_ptr(const struct pda_pool *pool, void *obj,
				     size_t off, int cpu)
{
	return (unsigned char *)obj + pda_pool_disp(pool, off) +
	       (size_t)cpu * PDA_POOL_LINE;
}

static inline int pda_pool_cpus(const struct pda_pool *pool)
{
	return pool->cpus;
}

/* The handle of the object at @off of the line space. */
static inline void *pda_pool_handle(const struct pda_pool *pool, size_t off)
{
	return pool->base + pda_pool_disp(pool, off);
}

/*
 * The line-space offset of handle @obj, or (size_t)-1 if @obj is not in
 * CPU 0's lines of @pool.
 */
static inline size_t pda_pool_offset(const struct pda_pool *pool,
				     const void *obj)
{
	uintptr_t p = (uintptr_t)obj, base = (uintptr_t)pool->base;
	size_t rel;

	if (p < base || p - base >= pool->map_size)
		return (size_t)-1;
	rel = p - base;
	if (rel % pool->stride >= PDA_POOL_LINE)
		return (size_t)-1;
	return rel / pool->stride * PDA_POOL_LINE + rel % pool->stride;
}

/* ---------------------------------------------------- create, destroy */

static inline void pda_pool_destroy(struct pda_pool *pool)
{
	if (!pool)
		return;
	munmap(pool->base, pool->map_size);
	pthread_mutex_destroy(&pool->lock);
	free(pool->free.e);
	free(pool->used.e);
	free(pool);
}

/*
 * A pool of @size bytes of line space per CPU (rounded up to whole
 * lines), for every possible CPU: size / 64 rows of 64 x possible CPUs
 * bytes, mapped now and populated as objects are first written (a new
 * object's lines are zeroed only where an earlier object was).  Returns
 * NULL with errno EINVAL (@size 0), ENOMEM (the rows would take more than
 * half the address space, or no memory), or ENOTSUP (the possible CPUs
 * cannot be read).
 */
static inline struct pda_pool *pda_pool_create(size_t size)
{
	struct pda_pool *pool;
	long cpus;
	size_t rows;
	void *map;

	if (!size) {
		errno = EINVAL;
		return NULL;
	}
	cpus = pda_possible_cpus();
	if (cpus < 1 || cpus > INT_MAX / PDA_POOL_LINE) {
		errno = ENOTSUP;
		return NULL;
	}
	rows = size / PDA_POOL_LINE + !!(size % PDA_POOL_LINE);
	/*
	 * A limit, so that rows * stride cannot overflow: more than half
	 * of a 64-bit address space would fail anyway, and on 32-bit it
	 * leaves a little for the rest of the program.
	 */
	if (rows > (SIZE_MAX / 2) / ((size_t)cpus * PDA_POOL_LINE)) {
		errno = ENOMEM;
		return NULL;
	}
	pool = calloc(1, sizeof(*pool));
	if (!pool)
		return NULL;
	pool->cpus = cpus;
	pool->stride = (size_t)cpus * PDA_POOL_LINE;
	pool->rows = rows;
	pool->map_size = rows * pool->stride;
	pool->free.e = malloc(sizeof(*pool->free.e));
	if (!pool->free.e) {
		free(pool);
		return NULL;
	}
	pool->free.cap = 1;
	pool->free.nr = 1;
	pool->free.e[0].off = 0;
	pool->free.e[0].len = rows * PDA_POOL_LINE;
	map = mmap(NULL, pool->map_size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		free(pool->free.e);
		free(pool);
		errno = ENOMEM;
		return NULL;
	}
	pool->base = map;
	pthread_mutex_init(&pool->lock, NULL);
	/* Decide them now, for every thread to agree. */
	pda_mode();
	pda_pool_fallback_method();
	return pool;
}

/* ------------------------------------------------------ alloc, free */

static inline void pda_pool_lock(struct pda_pool *pool)
{
	pthread_mutex_lock(&pool->lock);
}

static inline void pda_pool_unlock(struct pda_pool *pool)
{
	pthread_mutex_unlock(&pool->lock);
}

/* Index of the first extent of @x at or after offset @off. */
static inline size_t pda_pool_find(const struct pda_pool_extents *x,
				   size_t off)
{
	size_t lo = 0, hi = x->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (x->e[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Room for one more extent in @x: 0, or -1 (ENOMEM). */
static inline int pda_pool_reserve(struct pda_pool_extents *x)
{
	struct pda_pool_extent *e;
	size_t cap;

	if (x->nr < x->cap)
		return 0;
	cap = x->cap ? 2 * x->cap : 16;
	e = realloc(x->e, cap * sizeof(*e));
	if (!e)
		return -1;
	x->e = e;
	x->cap = cap;
	return 0;
}

static inline void pda_pool_insert(struct pda_pool_extents *x, size_t i,
				   size_t off, size_t len)
{
	memmove(&x->e[i + 1], &x->e[i], (x->nr - i) * sizeof(x->e[0]));
	x->e[i].off = off;
	x->e[i].len = len;
	x->nr++;
}

static inline void pda_pool_remove(struct pda_pool_extents *x, size_t i)
{
	x->nr--;
	memmove(&x->e[i], &x->e[i + 1], (x->nr - i) * sizeof(x->e[0]));
}

/*
 * Where in free extent @e an object of @size bytes, aligned to @align,
 * can start, or (size_t)-1: up to a line's size it must not cross a line,
 * a larger one starts at a line.
 */
static inline size_t pda_pool_fit(const struct pda_pool_extent *e,
				  size_t size, size_t align)
{
	size_t start, line = PDA_POOL_LINE;

	start = (e->off + align - 1) & ~(align - 1);
	if (size > line || start / line != (start + size - 1) / line)
		start = (start + line - 1) & ~(line - 1);
	/* Also refuses a @size so large that start + size wraps. */
	if (start < e->off || size > e->len || start - e->off > e->len - size)
		return (size_t)-1;
	return start;
}

/* Zeroes every CPU's copy of the object at line-space offset @off. */
static inline void pda_pool_zero(struct pda_pool *pool, size_t off,
				 size_t size)
{
	size_t done, len;
	int cpu;

	for (done = 0; done < size; done += len) {
		len = PDA_POOL_LINE - (off + done) % PDA_POOL_LINE;
		if (len > size - done)
			len = size - done;
		for (cpu = 0; cpu < pool->cpus; cpu++)
			memset(pda_pool_cpu_ptr(pool,
						pda_pool_handle(pool, off),
						done, cpu), 0, len);
	}
}

/*
 * An object of @size bytes, aligned to @align (a power of two up to 64,
 * the line: a copy of a larger object is not contiguous, so more has no
 * meaning; 0 means 1), every CPU's copy zeroed.  Returns its handle, or
 * NULL with errno EINVAL (@size 0, a bad @align) or ENOMEM (no room left
 * in the pool, or no memory for its bookkeeping).
 */
static inline void *pda_pool_alloc(struct pda_pool *pool, size_t size,
				   size_t align)
{
	size_t i, start = (size_t)-1;
	struct pda_pool_extent *e;

	if (!align)
		align = 1;
	if (!size || align > PDA_POOL_LINE || (align & (align - 1))) {
		errno = EINVAL;
		return NULL;
	}
	pda_pool_lock(pool);
	for (i = 0; i < pool->free.nr; i++) {
		start = pda_pool_fit(&pool->free.e[i], size, align);
		if (start != (size_t)-1)
			break;
	}
	/* Splitting the extent may add one free and one used entry. */
	if (start == (size_t)-1 || pda_pool_reserve(&pool->free) ||
	    pda_pool_reserve(&pool->used)) {
		pda_pool_unlock(pool);
		errno = ENOMEM;
		return NULL;
	}
	e = &pool->free.e[i];
	if (start + size < e->off + e->len)	/* the tail stays free */
		pda_pool_insert(&pool->free, i + 1, start + size,
				e->off + e->len - start - size);
	if (start > e->off)			/* and the head */
		e->len = start - e->off;
	else
		pda_pool_remove(&pool->free, i);
	pda_pool_insert(&pool->used, pda_pool_find(&pool->used, start),
			start, size);
	/* Past pool->fresh the mapping is still zero: leave it untouched. */
	if (start < pool->fresh)
		pda_pool_zero(pool, start, (start + size < pool->fresh ?
					    start + size : pool->fresh) - start);
	if (start + size > pool->fresh)
		pool->fresh = start + size;
	pda_pool_unlock(pool);
	return pda_pool_handle(pool, start);
}

/*
 * Frees the object @obj (NULL does nothing).  Its line-space range goes
 * back to the pool: a later object there reuses each CPU's own lines.
 * Returns 0, or -1 with errno EINVAL if @obj is not an object of @pool
 * (or was freed already), or ENOMEM (no memory for the bookkeeping; the
 * object stays allocated).
 */
static inline int pda_pool_free(struct pda_pool *pool, void *obj)
{
	size_t off = pda_pool_offset(pool, obj), len, i;
	struct pda_pool_extents *x = &pool->free;

	if (!obj)
		return 0;
	pda_pool_lock(pool);
	i = pda_pool_find(&pool->used, off);
	if (off == (size_t)-1 || i == pool->used.nr ||
	    pool->used.e[i].off != off) {
		pda_pool_unlock(pool);
		errno = EINVAL;
		return -1;
	}
	if (pda_pool_reserve(x)) {
		pda_pool_unlock(pool);
		errno = ENOMEM;
		return -1;
	}
	len = pool->used.e[i].len;
	pda_pool_remove(&pool->used, i);
	i = pda_pool_find(x, off);
	/* Merge with the free ranges on either side, if they touch. */
	if (i > 0 && x->e[i - 1].off + x->e[i - 1].len == off) {
		x->e[i - 1].len += len;
		if (i < x->nr && x->e[i].off == off + len) {
			x->e[i - 1].len += x->e[i].len;
			pda_pool_remove(x, i);
		}
	} else if (i < x->nr && x->e[i].off == off + len) {
		x->e[i].off = off;
		x->e[i].len += len;
	} else {
		pda_pool_insert(x, i, off, len);
	}
	pda_pool_unlock(pool);
	return 0;
}

/* ------------------------------------------------------- accessors */

/* Called only for a constant, misaligned offset: a compile-time error. */
void pda_pool_misaligned(void)
	__attribute__((error("pda_pool: field offset not naturally aligned")));

/*
 * CPU 0's copy of the @size-byte field at byte @off of @obj: the address
 * every access to it takes.  A field at a misaligned offset could cross
 * into the next CPU's line: refused at compile time when @off is known.
 */
static __always_inline void *
pda_pool_field(const struct pda_pool *pool, void *obj, size_t off,
	       size_t size)
{
	if (__builtin_constant_p(off) && off % size)
		pda_pool_misaligned();
	return (unsigned char *)obj + pda_pool_disp(pool, off);
}

/* The read-modify-writes and the store. */
enum pda_pool_op {
	PDA_POOL_OP_ADD,
	PDA_POOL_OP_AND,
	PDA_POOL_OP_OR,
	PDA_POOL_OP_XOR,
	PDA_POOL_OP_STORE,
};

/* What an update takes: a method, or nothing (-1, errno says why). */
#define PDA_POOL_BUSY		(-1)

#if PDA_HAVE_SEGMENT

#if PDA_X86_64
#define PDA_POOL_LONG_SUFFIX	"q"
#define PDA_POOL_LONG_IMM	"er"	/* a sign-extended 32-bit immediate */
#else
#define PDA_POOL_LONG_SUFFIX	"l"
#define PDA_POOL_LONG_IMM	"ir"
#endif

/*
 * The raw accessors: one instruction on the field at @p, CPU 0's copy,
 * which %fs turns into this CPU's.  Only in a thread that has the
 * selector in %fs, in a process in PDA_MODE_SEGMENT (the checked ones
 * below make sure).  @op is a constant once inlined, so each call is
 * its one instruction.  The "memory" clobbers: the word reached is not
 * *p.
 */
static __always_inline void
pda_pool_rmw_u32_raw(enum pda_pool_op op, uint32_t *p, uint32_t v)
{
	switch (op) {
	case PDA_POOL_OP_ADD:
		pda_add32_raw(p, v);
		break;
	case PDA_POOL_OP_AND:
		__asm__ __volatile__ ("andl %1, %%" PDA_SEG ":%0"
				      : "+m" (*p) : "ir" (v) : "memory", "cc");
		break;
	case PDA_POOL_OP_OR:
		__asm__ __volatile__ ("orl %1, %%" PDA_SEG ":%0"
				      : "+m" (*p) : "ir" (v) : "memory", "cc");
		break;
	case PDA_POOL_OP_XOR:
		__asm__ __volatile__ ("xorl %1, %%" PDA_SEG ":%0"
				      : "+m" (*p) : "ir" (v) : "memory", "cc");
		break;
	case PDA_POOL_OP_STORE:
		pda_write32_raw(p, v);
		break;
	}
}

static __always_inline void
pda_pool_rmw_ulong_raw(enum pda_pool_op op, unsigned long *p,
		       unsigned long v)
{
	switch (op) {
	case PDA_POOL_OP_ADD:
		__asm__ __volatile__ ("add" PDA_POOL_LONG_SUFFIX " %1, %%"
				      PDA_SEG ":%0" : "+m" (*p)
				      : PDA_POOL_LONG_IMM(v) : "memory", "cc");
		break;
	case PDA_POOL_OP_AND:
		__asm__ __volatile__ ("and" PDA_POOL_LONG_SUFFIX " %1, %%"
				      PDA_SEG ":%0" : "+m" (*p)
				      : PDA_POOL_LONG_IMM(v) : "memory", "cc");
		break;
	case PDA_POOL_OP_OR:
		__asm__ __volatile__ ("or" PDA_POOL_LONG_SUFFIX " %1, %%"
				      PDA_SEG ":%0" : "+m" (*p)
				      : PDA_POOL_LONG_IMM(v) : "memory", "cc");
		break;
	case PDA_POOL_OP_XOR:
		__asm__ __volatile__ ("xor" PDA_POOL_LONG_SUFFIX " %1, %%"
				      PDA_SEG ":%0" : "+m" (*p)
				      : PDA_POOL_LONG_IMM(v) : "memory", "cc");
		break;
	case PDA_POOL_OP_STORE:
		__asm__ __volatile__ ("mov" PDA_POOL_LONG_SUFFIX " %1, %%"
				      PDA_SEG ":%0" : "=m" (*p)
				      : PDA_POOL_LONG_IMM(v) : "memory");
		break;
	}
}

static inline unsigned long pda_pool_load_ulong_raw(const unsigned long *p)
{
	unsigned long v;

	__asm__ __volatile__ ("mov" PDA_POOL_LONG_SUFFIX " %%" PDA_SEG ":%1, %0"
			      : "=r" (v) : "m" (*p) : "memory");
	return v;
}

/* xchg with memory is the one x86 instruction that always locks. */
static inline uint32_t pda_pool_xchg_u32_raw(uint32_t *p, uint32_t v)
{
	__asm__ __volatile__ ("xchgl %0, %%" PDA_SEG ":%1"
			      : "+r" (v), "+m" (*p) : : "memory");
	return v;
}

static inline unsigned long pda_pool_xchg_ulong_raw(unsigned long *p,
						    unsigned long v)
{
	__asm__ __volatile__ ("xchg" PDA_POOL_LONG_SUFFIX " %0, %%" PDA_SEG ":%1"
			      : "+r" (v), "+m" (*p) : : "memory");
	return v;
}

/* Without a lock prefix: atomic against this CPU's threads. */
static inline unsigned long pda_pool_cmpxchg_ulong_raw(unsigned long *p,
						       unsigned long old,
						       unsigned long v)
{
	__asm__ __volatile__ ("cmpxchg" PDA_POOL_LONG_SUFFIX " %2, %%" PDA_SEG
			      ":%1" : "+a" (old), "+m" (*p) : "r" (v)
			      : "memory", "cc");
	return old;
}

/* pda.h's own, for 32 bits. */
#define pda_pool_load_u32_raw		pda_read32_raw
#define pda_pool_cmpxchg_u32_raw	pda_cmpxchg32_raw

#define pda_pool_add_u32_raw(p, v)	\
	pda_pool_rmw_u32_raw(PDA_POOL_OP_ADD, p, v)
#define pda_pool_and_u32_raw(p, v)	\
	pda_pool_rmw_u32_raw(PDA_POOL_OP_AND, p, v)
#define pda_pool_or_u32_raw(p, v)	\
	pda_pool_rmw_u32_raw(PDA_POOL_OP_OR, p, v)
#define pda_pool_xor_u32_raw(p, v)	\
	pda_pool_rmw_u32_raw(PDA_POOL_OP_XOR, p, v)
#define pda_pool_store_u32_raw(p, v)	\
	pda_pool_rmw_u32_raw(PDA_POOL_OP_STORE, p, v)
#define pda_pool_add_ulong_raw(p, v)	\
	pda_pool_rmw_ulong_raw(PDA_POOL_OP_ADD, p, v)
#define pda_pool_and_ulong_raw(p, v)	\
	pda_pool_rmw_ulong_raw(PDA_POOL_OP_AND, p, v)
#define pda_pool_or_ulong_raw(p, v)	\
	pda_pool_rmw_ulong_raw(PDA_POOL_OP_OR, p, v)
#define pda_pool_xor_ulong_raw(p, v)	\
	pda_pool_rmw_ulong_raw(PDA_POOL_OP_XOR, p, v)
#define pda_pool_store_ulong_raw(p, v)	\
	pda_pool_rmw_ulong_raw(PDA_POOL_OP_STORE, p, v)

#endif /* PDA_HAVE_SEGMENT: the raw accessors */

/*
 * Which way a thread without the segment updates a pool: rseq if that is
 * the process's (PDA_POOL_BUSY with errno ENOTSUP where this code has no
 * sections, or the thread has no registration), else atomics if
 * @may_lock (the process is not in PDA_MODE_SEGMENT), else PDA_POOL_BUSY
 * with errno as it is.
 */
static inline int pda_pool_path_fallback(int may_lock)
{
	if (pda_pool_fallback_method() == PDA_POOL_RSEQ) {
#if PDA_HAVE_RSEQ_SECTIONS
		/* Decided where __rseq_size is not 0: no test of it here. */
		struct rseq *rs = pda_rseq_area_raw();

		if ((int32_t)__atomic_load_n(&rs->cpu_id, __ATOMIC_RELAXED) >= 0)
			return PDA_POOL_RSEQ;
#endif
		errno = ENOTSUP;
		return PDA_POOL_BUSY;
	}
	return may_lock ? PDA_POOL_ATOMIC : PDA_POOL_BUSY;
}

#if PDA_HAVE_SEGMENT
/*
 * Which way this thread updates a pool, once the inline test for the
 * segment failed: PDA_POOL_SEGMENT in a PDA_MODE_SEGMENT process, the
 * selector loaded first if %fs was null; else pda_pool_path_fallback(),
 * which gives EBUSY (%fs holds another selector: a locked update from it
 * could race with the unlocked ones) or ENOTSUP (the selector cannot be
 * loaded) in a PDA_MODE_SEGMENT process without rseq.  Out of line: it is
 * the slow path.
 */
static __attribute_noinline__ int pda_pool_path_slow(void)
{
	int saved_errno = errno, seg = pda_seg_update_slow(), path;

	if (!seg)
		return PDA_POOL_SEGMENT;
	path = pda_pool_path_fallback(seg > 0);
	if (path != PDA_POOL_BUSY)
		errno = saved_errno;
	return path;
}

/* For a read, which never races: the segment if it can, else atomics. */
static __attribute_noinline__ int pda_pool_read_path_slow(void)
{
	int saved_errno = errno, path = pda_pool_path_slow();

	errno = saved_errno;
	return path == PDA_POOL_SEGMENT ? path : PDA_POOL_ATOMIC;
}

/* %fs holds 0xeb and the process is in PDA_MODE_SEGMENT: one compare. */
static inline int pda_pool_seg_ready(void)
{
	return __builtin_expect(pda_seg_key() ==
				__atomic_load_n(&pda_process_mode,
						__ATOMIC_RELAXED), 1);
}

/*
 * The segment, else, in a process that decided against it (a kernel
 * without the descriptor, say), rseq or atomics inline too: only the
 * cases that may load the selector or refuse take the call.
 */
static inline int pda_pool_path(void)
{
	if (pda_pool_seg_ready())
		return PDA_POOL_SEGMENT;
	if (__atomic_load_n(&pda_process_mode, __ATOMIC_RELAXED) ==
	    PDA_MODE_LOCKED)
		return pda_pool_path_fallback(1);
	return pda_pool_path_slow();
}

static inline int pda_pool_read_path(void)
{
	return pda_pool_seg_ready() ? PDA_POOL_SEGMENT :
				      pda_pool_read_path_slow();
}

#else /* no segment */

static inline int pda_pool_path(void)
{
	return pda_pool_path_fallback(1);
}

static inline int pda_pool_read_path(void)
{
	return PDA_POOL_ATOMIC;
}

#endif /* PDA_HAVE_SEGMENT */

/* A field's offset that is no multiple of its size: EINVAL. */
static inline int pda_pool_bad_offset(size_t off, size_t size)
{
	if (!(off % size))
		return 0;
	errno = EINVAL;
	return 1;
}

/* This CPU's copy of the field at @p (CPU 0's), for the atomic path. */
static inline void *pda_pool_this_cpu(const struct pda_pool *pool, void *p)
{
	int cpu = pda_cpu();

	/* pda_cpu() is below the possible count; be safe if it is not. */
	if (cpu < 0 || cpu >= pool->cpus)
		cpu = 0;
	return (unsigned char *)p + (size_t)cpu * PDA_POOL_LINE;
}

/*
 * Below, each accessor is written once for both widths, like the
 * kernel's __pcpu_size_call(): @size is the field's, sizeof(uint32_t) or
 * sizeof(unsigned long), a constant once inlined, so every test of it
 * folds away (and where long has 32 bits both widths take the same
 * code).  The _u32 and _ulong functions at the end give each width its
 * types.
 */
#define PDA_POOL_IS_U32(size)	((size) == sizeof(uint32_t))

#if PDA_HAVE_SEGMENT
/* The raw read-modify-write or store of the field at @p, either width. */
static __always_inline void
pda_pool_rmw_raw(enum pda_pool_op op, void *p, unsigned long v, size_t size)
{
	if (PDA_POOL_IS_U32(size))
		pda_pool_rmw_u32_raw(op, p, v);
	else
		pda_pool_rmw_ulong_raw(op, p, v);
}
#endif

#if PDA_HAVE_RSEQ_SECTIONS
/*
 * The rseq accessors: one critical section on the field at @p (CPU 0's
 * copy), again until the kernel lets it commit.  Only where
 * pda_pool_path() said PDA_POOL_RSEQ in this thread.
 */
static __always_inline int
pda_pool_rmw_rseq_once(struct rseq *rs, enum pda_pool_op op, void *p,
		       unsigned long v, size_t size)
{
	int u32 = PDA_POOL_IS_U32(size);

	switch (op) {
	case PDA_POOL_OP_ADD:
		return u32 ? pda_rseq_add_u32(rs, p, v) :
			     pda_rseq_add_ulong(rs, p, v);
	case PDA_POOL_OP_AND:
		return u32 ? pda_rseq_and_u32(rs, p, v) :
			     pda_rseq_and_ulong(rs, p, v);
	case PDA_POOL_OP_OR:
		return u32 ? pda_rseq_or_u32(rs, p, v) :
			     pda_rseq_or_ulong(rs, p, v);
	case PDA_POOL_OP_XOR:
		return u32 ? pda_rseq_xor_u32(rs, p, v) :
			     pda_rseq_xor_ulong(rs, p, v);
	case PDA_POOL_OP_STORE:
		return u32 ? pda_rseq_store_u32(rs, p, v) :
			     pda_rseq_store_ulong(rs, p, v);
	}
	return 0;
}

static __always_inline void
pda_pool_rmw_rseq(enum pda_pool_op op, void *p, unsigned long v, size_t size)
{
	struct rseq *rs = pda_rseq_area_raw();

	while (pda_pool_rmw_rseq_once(rs, op, p, v, size))
		;
}

/* The value before in *@prev, of the field's width. */
static __always_inline void
pda_pool_xchg_rseq(void *p, unsigned long v, void *prev, size_t size)
{
	struct rseq *rs = pda_rseq_area_raw();

	while (PDA_POOL_IS_U32(size) ? pda_rseq_xchg_u32(rs, p, v, prev) :
				       pda_rseq_xchg_ulong(rs, p, v, prev))
		;
}

static __always_inline void
pda_pool_cmpxchg_rseq(void *p, unsigned long old, unsigned long v,
		      void *prev, size_t size)
{
	struct rseq *rs = pda_rseq_area_raw();

	while (PDA_POOL_IS_U32(size) ?
	       pda_rseq_cmpxchg_u32(rs, p, old, v, prev) :
	       pda_rseq_cmpxchg_ulong(rs, p, old, v, prev))
		;
}
#endif /* PDA_HAVE_RSEQ_SECTIONS */

/*
 * The atomic accessors, on this CPU's copy *@ptr, of either type: the
 * __atomic builtins take the width from it.
 */
#define pda_pool_rmw_atomic(ptr, op, val)				\
	do {								\
		__typeof__(ptr) q_ = (ptr);				\
		__typeof__(*q_) v_ = (val);				\
									\
		switch (op) {						\
		case PDA_POOL_OP_ADD:					\
			__atomic_fetch_add(q_, v_, __ATOMIC_RELAXED);	\
			break;						\
		case PDA_POOL_OP_AND:					\
			__atomic_fetch_and(q_, v_, __ATOMIC_RELAXED);	\
			break;						\
		case PDA_POOL_OP_OR:					\
			__atomic_fetch_or(q_, v_, __ATOMIC_RELAXED);	\
			break;						\
		case PDA_POOL_OP_XOR:					\
			__atomic_fetch_xor(q_, v_, __ATOMIC_RELAXED);	\
			break;						\
		case PDA_POOL_OP_STORE:					\
			__atomic_store_n(q_, v_, __ATOMIC_RELAXED);	\
			break;						\
		}							\
	} while (0)

/* The path of an update of a @size-byte field at @off, or BUSY (EINVAL). */
static __always_inline int pda_pool_update_path(size_t off, size_t size)
{
	return pda_pool_bad_offset(off, size) ? PDA_POOL_BUSY :
						pda_pool_path();
}

/*
 * The checked accessors, for the field at byte offset @off of @obj:
 * through the segment (the inline test of pda_pool_path(), then the raw
 * instruction), an rseq critical section, or atomics, as
 * pda_pool_path() says.  The updates return 0, or -1 with errno EINVAL
 * (a misaligned @off), EBUSY or ENOTSUP (the header's comment says
 * when); loads and sums fail only on a misaligned @off (0, errno EINVAL).
 */
static __always_inline int
pda_pool_rmw(struct pda_pool *pool, void *obj, size_t off,
	     enum pda_pool_op op, unsigned long v, size_t size)
{
	void *p = pda_pool_field(pool, obj, off, size), *q;

	switch (pda_pool_update_path(off, size)) {
#if PDA_HAVE_SEGMENT
	case PDA_POOL_SEGMENT:
		pda_pool_rmw_raw(op, p, v, size);
		return 0;
#endif
#if PDA_HAVE_RSEQ_SECTIONS
	case PDA_POOL_RSEQ:
		pda_pool_rmw_rseq(op, p, v, size);
		return 0;
#endif
	case PDA_POOL_ATOMIC:
		q = pda_pool_this_cpu(pool, p);
		if (PDA_POOL_IS_U32(size))
			pda_pool_rmw_atomic((uint32_t *)q, op, (uint32_t)v);
		else
			pda_pool_rmw_atomic((unsigned long *)q, op, v);
		return 0;
	default:
		return -1;
	}
}

/* This CPU's copy of the field. */
static __always_inline unsigned long
pda_pool_load(struct pda_pool *pool, void *obj, size_t off, size_t size)
{
	void *p = pda_pool_field(pool, obj, off, size), *q;

	if (pda_pool_bad_offset(off, size))
		return 0;
#if PDA_HAVE_SEGMENT
	if (pda_pool_read_path() == PDA_POOL_SEGMENT)
		return PDA_POOL_IS_U32(size) ? pda_pool_load_u32_raw(p) :
					       pda_pool_load_ulong_raw(p);
#endif
	q = pda_pool_this_cpu(pool, p);
	return PDA_POOL_IS_U32(size) ?
	       __atomic_load_n((uint32_t *)q, __ATOMIC_RELAXED) :
	       __atomic_load_n((unsigned long *)q, __ATOMIC_RELAXED);
}

/*
 * *@prev, of the field's width, = @v.  By memcpy: where long has 32 bits
 * an unsigned long *@prev takes the uint32_t, and the aliasing rules
 * would not let a uint32_t store reach it.
 */
static __always_inline void pda_pool_put(void *prev, unsigned long v,
					 size_t size)
{
	uint32_t v32 = v;

	if (PDA_POOL_IS_U32(size))
		__builtin_memcpy(prev, &v32, sizeof(v32));
	else
		__builtin_memcpy(prev, &v, sizeof(v));
}

/* Stores @v in this CPU's copy; the value before in *@prev. */
static __always_inline int
pda_pool_xchg(struct pda_pool *pool, void *obj, size_t off, unsigned long v,
	      void *prev, size_t size)
{
	void *p = pda_pool_field(pool, obj, off, size), *q;

	switch (pda_pool_update_path(off, size)) {
#if PDA_HAVE_SEGMENT
	case PDA_POOL_SEGMENT:
		pda_pool_put(prev, PDA_POOL_IS_U32(size) ?
				   pda_pool_xchg_u32_raw(p, v) :
				   pda_pool_xchg_ulong_raw(p, v), size);
		return 0;
#endif
#if PDA_HAVE_RSEQ_SECTIONS
	case PDA_POOL_RSEQ:
		pda_pool_xchg_rseq(p, v, prev, size);
		return 0;
#endif
	case PDA_POOL_ATOMIC:
		q = pda_pool_this_cpu(pool, p);
		pda_pool_put(prev, PDA_POOL_IS_U32(size) ?
			     __atomic_exchange_n((uint32_t *)q, v,
						 __ATOMIC_RELAXED) :
			     __atomic_exchange_n((unsigned long *)q, v,
						 __ATOMIC_RELAXED), size);
		return 0;
	default:
		return -1;
	}
}

/* Stores @v in this CPU's copy if it holds @old; the value before: *@prev. */
static __always_inline int
pda_pool_cmpxchg(struct pda_pool *pool, void *obj, size_t off,
		 unsigned long old, unsigned long v, void *prev, size_t size)
{
	void *p = pda_pool_field(pool, obj, off, size), *q;
	uint32_t old32 = old;

	switch (pda_pool_update_path(off, size)) {
#if PDA_HAVE_SEGMENT
	case PDA_POOL_SEGMENT:
		pda_pool_put(prev, PDA_POOL_IS_U32(size) ?
				   pda_pool_cmpxchg_u32_raw(p, old, v) :
				   pda_pool_cmpxchg_ulong_raw(p, old, v), size);
		return 0;
#endif
#if PDA_HAVE_RSEQ_SECTIONS
	case PDA_POOL_RSEQ:
		pda_pool_cmpxchg_rseq(p, old, v, prev, size);
		return 0;
#endif
	case PDA_POOL_ATOMIC:
		/* The value found is left in old32 or old. */
		q = pda_pool_this_cpu(pool, p);
		if (PDA_POOL_IS_U32(size))
			__atomic_compare_exchange_n((uint32_t *)q, &old32, v,
						    0, __ATOMIC_RELAXED,
						    __ATOMIC_RELAXED);
		else
			__atomic_compare_exchange_n((unsigned long *)q, &old,
						    v, 0, __ATOMIC_RELAXED,
						    __ATOMIC_RELAXED);
		pda_pool_put(prev, PDA_POOL_IS_U32(size) ? old32 : old, size);
		return 0;
	default:
		return -1;
	}
}

/*
 * The field summed over every possible CPU's copy, in the field's own
 * width: the copies wrap (a dec on one CPU and an inc on another sum to
 * 0), so a wider sum would be wrong.  0 and errno EINVAL for a misaligned
 * @off.  The copies are read one by one, while others may update them.
 */
static __always_inline unsigned long
pda_pool_sum(struct pda_pool *pool, void *obj, size_t off, size_t size)
{
	unsigned long sum = 0;
	void *q;
	int cpu;

	if (pda_pool_bad_offset(off, size))
		return 0;
	for (cpu = 0; cpu < pool->cpus; cpu++) {
		q = pda_pool_cpu_ptr(pool, obj, off, cpu);
		sum += PDA_POOL_IS_U32(size) ?
		       __atomic_load_n((uint32_t *)q, __ATOMIC_RELAXED) :
		       __atomic_load_n((unsigned long *)q, __ATOMIC_RELAXED);
	}
	/* The u32 wrapper's return truncates: a 32-bit sum. */
	return sum;
}

/* Each width's types on the accessors above. */
static __always_inline int
pda_pool_rmw_u32(struct pda_pool *pool, void *obj, size_t off,
		 enum pda_pool_op op, uint32_t v)
{
	return pda_pool_rmw(pool, obj, off, op, v, sizeof(v));
}

static __always_inline int
pda_pool_rmw_ulong(struct pda_pool *pool, void *obj, size_t off,
		   enum pda_pool_op op, unsigned long v)
{
	return pda_pool_rmw(pool, obj, off, op, v, sizeof(v));
}

static inline uint32_t pda_pool_load_u32(struct pda_pool *pool, void *obj,
					 size_t off)
{
	return pda_pool_load(pool, obj, off, sizeof(uint32_t));
}

static inline unsigned long pda_pool_load_ulong(struct pda_pool *pool,
						void *obj, size_t off)
{
	return pda_pool_load(pool, obj, off, sizeof(unsigned long));
}

static inline int pda_pool_xchg_u32(struct pda_pool *pool, void *obj,
				    size_t off, uint32_t v, uint32_t *prev)
{
	return pda_pool_xchg(pool, obj, off, v, prev, sizeof(v));
}

static inline int pda_pool_xchg_ulong(struct pda_pool *pool, void *obj,
				      size_t off, unsigned long v,
				      unsigned long *prev)
{
	return pda_pool_xchg(pool, obj, off, v, prev, sizeof(v));
}

static inline int pda_pool_cmpxchg_u32(struct pda_pool *pool, void *obj,
				       size_t off, uint32_t old, uint32_t v,
				       uint32_t *prev)
{
	return pda_pool_cmpxchg(pool, obj, off, old, v, prev, sizeof(v));
}

static inline int pda_pool_cmpxchg_ulong(struct pda_pool *pool, void *obj,
					 size_t off, unsigned long old,
					 unsigned long v, unsigned long *prev)
{
	return pda_pool_cmpxchg(pool, obj, off, old, v, prev, sizeof(v));
}

static inline uint32_t pda_pool_sum_u32(struct pda_pool *pool, void *obj,
					size_t off)
{
	return pda_pool_sum(pool, obj, off, sizeof(uint32_t));
}

static inline unsigned long pda_pool_sum_ulong(struct pda_pool *pool,
					       void *obj, size_t off)
{
	return pda_pool_sum(pool, obj, off, sizeof(unsigned long));
}

#define pda_pool_add_u32(pool, obj, off, v)				\
	pda_pool_rmw_u32(pool, obj, off, PDA_POOL_OP_ADD, v)
#define pda_pool_sub_u32(pool, obj, off, v)				\
	pda_pool_rmw_u32(pool, obj, off, PDA_POOL_OP_ADD, -(uint32_t)(v))
#define pda_pool_inc_u32(pool, obj, off)				\
	pda_pool_rmw_u32(pool, obj, off, PDA_POOL_OP_ADD, 1)
#define pda_pool_dec_u32(pool, obj, off)				\
	pda_pool_rmw_u32(pool, obj, off, PDA_POOL_OP_ADD, (uint32_t)-1)
#define pda_pool_and_u32(pool, obj, off, v)				\
	pda_pool_rmw_u32(pool, obj, off, PDA_POOL_OP_AND, v)
#define pda_pool_or_u32(pool, obj, off, v)				\
	pda_pool_rmw_u32(pool, obj, off, PDA_POOL_OP_OR, v)
#define pda_pool_xor_u32(pool, obj, off, v)				\
	pda_pool_rmw_u32(pool, obj, off, PDA_POOL_OP_XOR, v)
#define pda_pool_store_u32(pool, obj, off, v)				\
	pda_pool_rmw_u32(pool, obj, off, PDA_POOL_OP_STORE, v)

#define pda_pool_add_ulong(pool, obj, off, v)				\
	pda_pool_rmw_ulong(pool, obj, off, PDA_POOL_OP_ADD, v)
#define pda_pool_sub_ulong(pool, obj, off, v)				\
	pda_pool_rmw_ulong(pool, obj, off, PDA_POOL_OP_ADD,		\
			   -(unsigned long)(v))
#define pda_pool_inc_ulong(pool, obj, off)				\
	pda_pool_rmw_ulong(pool, obj, off, PDA_POOL_OP_ADD, 1)
#define pda_pool_dec_ulong(pool, obj, off)				\
	pda_pool_rmw_ulong(pool, obj, off, PDA_POOL_OP_ADD, -1UL)
#define pda_pool_and_ulong(pool, obj, off, v)				\
	pda_pool_rmw_ulong(pool, obj, off, PDA_POOL_OP_AND, v)
#define pda_pool_or_ulong(pool, obj, off, v)				\
	pda_pool_rmw_ulong(pool, obj, off, PDA_POOL_OP_OR, v)
#define pda_pool_xor_ulong(pool, obj, off, v)				\
	pda_pool_rmw_ulong(pool, obj, off, PDA_POOL_OP_XOR, v)
#define pda_pool_store_ulong(pool, obj, off, v)				\
	pda_pool_rmw_ulong(pool, obj, off, PDA_POOL_OP_STORE, v)

#endif /* TOOLS_LIB_PDA_PDA_POOL_H */
