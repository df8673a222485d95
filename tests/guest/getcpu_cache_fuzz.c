// SPDX-License-Identifier: GPL-2.0
/*
 * getcpu_cache(2): a bounded, seeded fuzz loop of (cmd, cpu_cachep, flags)
 * triples, from fresh (unregistered) threads, with migrations in between.
 *
 * Every result must be an errno the man page allows for that command, and
 * the one a model of the call predicts: flags and cmd first, then whether
 * *cpu_cachep can be read (SET) or written (GET), the address's NULL-ness
 * and alignment, then the registration.  The kernel may write nothing but
 * the registered cache and the GET output: four sentinel caches, and the
 * bytes around each cpu_cachep, are checked after every call.  The kernel
 * log must stay clean.
 *
 * The seed is pda.seed=N on the kernel command line (SEED=N of make), else
 * a fixed one; it is printed, so a failure can be replayed, and at the
 * end with a checksum of the calls made, so that a replay can be shown to
 * have made the same ones.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "lib/getcpu_cache_test.h"
#include "lib/stat.h"

#define NCACHES		4
#define SENTINEL	(-1)
#define DEFAULT_SEED	0x5eed6a11u

/* The memory the fuzzer points at; all of it stays mapped. */
static struct gc_pages pages;
static volatile int32_t *caches;	/* NCACHES aligned slots, own page */
static struct gc_cpus cpus;

/* Where cpu_cachep points. */
enum arg {
	ARG_RW,			/* aligned, read-write */
	ARG_RW_ODD,		/* misaligned, read-write */
	ARG_RO,			/* read-only, content chosen at setup */
	ARG_STRADDLE_RO,	/* 2 bytes read-write, 2 read-only */
	ARG_STRADDLE_NONE,	/* 2 bytes read-only, 2 inaccessible */
	ARG_NONE,		/* inaccessible page */
	ARG_NULL,
	ARG_KERNEL,		/* a random address in the kernel half */
	ARG_NR,
};

/* What *cpu_cachep holds, for SET through a read-write cpu_cachep. */
enum val {
	VAL_CACHE,		/* one of the caches: writable */
	VAL_NULL,
	VAL_ODD,		/* a cache + 1..3 */
	VAL_RO,			/* aligned, read-only */
	VAL_NONE,		/* aligned, inaccessible */
	VAL_KERNEL,		/* random, kernel half, either alignment */
	VAL_NR,
};

/* The read-only page holds these at ro_vals[i], set once at setup. */
#define RO_SLOTS	4

struct fuzz {
	uint32_t seed;
	long iters;
	/* results */
	long calls, ok, by_errno[5], mismatches, stray_writes, bad_cpu;
	uint32_t checksum;	/* of the calls and their predicted outcomes */
	int err;
	char first[200];
};

static int errno_index(int e)
{
	switch (e) {
	case 0: return 0;
	case EINVAL: return 1;
	case EFAULT: return 2;
	case EBUSY: return 3;
	case ENOENT: return 4;
	}
	return -1;
}

static int online(int32_t cpu)
{
	int i;

	for (i = 0; i < cpus.n; i++)
		if (cpus.id[i] == cpu)
			return 1;
	return 0;
}

static void note(struct fuzz *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void note(struct fuzz *f, const char *fmt, ...)
{
	va_list ap;

	if (f->first[0])
		return;
	va_start(ap, fmt);
	vsnprintf(f->first, sizeof(f->first), fmt, ap);
	va_end(ap);
}

/*
 * The replay check: a hash of each call's command, flags, argument kinds
 * and predicted errno, never of an address (ASLR moves those).
 */
static uint32_t fnv1a(uint32_t h, uint32_t v)
{
	int i;

	for (i = 0; i < 4; i++, v >>= 8)
		h = (h ^ (v & 0xff)) * 16777619u;
	return h;
}

/* Is @p one of the caches (writable, aligned)? */
static int is_cache(uintptr_t p)
{
	uintptr_t c0 = (uintptr_t)&caches[0];

	return p >= c0 && p < c0 + NCACHES * 4 && !(p % 4);
}

/*
 * Addresses user space cannot reach: kernel_lo | (random & kernel_mask).
 * The kernel half of a 32-bit kernel, or of a 64-bit one for a 64-bit
 * program.  A 32-bit program on a 64-bit kernel owns nearly all of its
 * 4 GiB: only the top page, above its TASK_SIZE, is out of reach.
 */
static uintptr_t kernel_lo, kernel_mask;

static void kernel_range(void)
{
#if UINTPTR_MAX > 0xffffffffu
	kernel_lo = (uintptr_t)0xffff800000000000ull;
	kernel_mask = (uintptr_t)0x00007fffffffffffull;
#else
	struct utsname u;

	if (!uname(&u) && (!strcmp(u.machine, "x86_64") ||
			   !strcmp(u.machine, "aarch64"))) {
		kernel_lo = 0xfffff000u;
		kernel_mask = 0xfffu;
	} else {
		kernel_lo = 0xc0000000u;
		kernel_mask = 0x3fffffffu;
	}
#endif
}

static uintptr_t kernel_addr(uint32_t *rnd)
{
	uintptr_t r = xorshift32(rnd);

#if UINTPTR_MAX > 0xffffffffu
	r = r << 32 | xorshift32(rnd);
#endif
	return kernel_lo | (r & kernel_mask);
}

static void *fuzz_thread(void *arg)
{
	struct fuzz *f = arg;
	uint32_t rnd = f->seed;
	volatile int32_t *reg = NULL;	/* the model's registration */
	long i;
	int k;

	for (k = 0; k < NCACHES; k++)
		caches[k] = SENTINEL;
	for (i = 0; i < f->iters; i++) {
		uint32_t r = xorshift32(&rnd);
		long cmd, flags = 0, ret;
		enum arg a = r % ARG_NR;
		enum val v = (r >> 4) % VAL_NR;
		char *argp = NULL;
		uintptr_t content = 0;
		int readable = 0, writable = 0, known = 1, want, got, alw;
		/* 2 guard bytes, the pointer-sized argument, 2 guard bytes */
		char before[sizeof(uintptr_t) + 4];

		/* cmd: mostly valid; flags: mostly 0 */
		switch ((r >> 8) % 16) {
		case 0:
			cmd = (long)xorshift32(&rnd);
			break;
		case 1:
			cmd = 2 + (r >> 12) % 4;
			break;
		default:
			cmd = (r >> 12) & 1 ? GETCPU_CACHE_SET : GETCPU_CACHE_GET;
		}
		if ((r >> 16) % 10 == 0)
			flags = (long)(xorshift32(&rnd) | 1u << ((r >> 20) % 32));

		switch (v) {
		case VAL_CACHE:
			content = (uintptr_t)&caches[(r >> 24) % NCACHES];
			break;
		case VAL_NULL:
			content = 0;
			break;
		case VAL_ODD:
			content = (uintptr_t)&caches[(r >> 24) % NCACHES] +
				  1 + (r >> 26) % 3;
			break;
		case VAL_RO:
			content = (uintptr_t)pages.ro + 64;
			break;
		case VAL_NONE:
			content = (uintptr_t)pages.none + 128;
			break;
		default:
			content = kernel_addr(&rnd);
		}

		switch (a) {
		case ARG_RW:
			argp = pages.rw + 256;
			readable = writable = 1;
			break;
		case ARG_RW_ODD:
			argp = pages.rw + 512 + 1 + (r >> 28) % 3;
			readable = writable = 1;
			break;
		case ARG_RO:
			argp = pages.ro +
			       sizeof(uintptr_t) * ((r >> 24) % RO_SLOTS);
			memcpy(&content, argp, sizeof(content));
			readable = 1;
			break;
		case ARG_STRADDLE_RO:
			argp = pages.ro - 2;
			readable = 1;
			known = 0;	/* what it holds is half ours */
			break;
		case ARG_STRADDLE_NONE:
			argp = pages.none - 2;
			break;
		case ARG_NONE:
			argp = pages.none + 8;
			break;
		case ARG_NULL:
			argp = NULL;
			break;
		default:
			argp = (char *)kernel_addr(&rnd);
		}
		if (a == ARG_RW || a == ARG_RW_ODD)
			memcpy(argp, &content, sizeof(content));
		if (writable)
			memcpy(before, argp - 2, sizeof(before));

		/* The model. */
		if (flags || (cmd != GETCPU_CACHE_GET && cmd != GETCPU_CACHE_SET))
			want = EINVAL;
		else if (cmd == GETCPU_CACHE_GET)
			want = !reg ? ENOENT : writable ? 0 : EFAULT;
		else if (!readable)
			want = EFAULT;
		else if (!known)
			want = -1;
		else if (!content || content % 4)
			want = EINVAL;
		else if (reg)
			want = (uintptr_t)reg == content ? 0 : EBUSY;
		else
			want = is_cache(content) ? 0 : EFAULT;

		ret = gc_call(cmd, argp, flags);
		got = ret ? errno : 0;
		f->calls++;
		f->checksum = fnv1a(f->checksum, (uint32_t)cmd);
		f->checksum = fnv1a(f->checksum, (uint32_t)flags);
		f->checksum = fnv1a(f->checksum, a << 8 | v);
		f->checksum = fnv1a(f->checksum, (uint32_t)want);
		if (ret && ret != -1) {
			f->mismatches++;
			note(f, "call %ld: returned %ld (cmd %ld flags %#lx arg %d)",
			     i, ret, cmd, flags, a);
			continue;
		}
		if (errno_index(got) >= 0)
			f->by_errno[errno_index(got)]++;

		/* The errnos the man page allows for this command. */
		if (cmd == GETCPU_CACHE_GET)
			alw = !got || got == EINVAL || got == EFAULT || got == ENOENT;
		else if (cmd == GETCPU_CACHE_SET)
			alw = !got || got == EINVAL || got == EFAULT || got == EBUSY;
		else
			alw = got == EINVAL;
		if (!alw || (want >= 0 && got != want)) {
			f->mismatches++;
			note(f, "call %ld: errno %d, model %d (cmd %ld flags %#lx arg %d val %d)",
			     i, got, want, cmd, flags, a, v);
		}

		/* Bring the model along. */
		if (cmd == GETCPU_CACHE_SET && !got && !reg) {
			if (want < 0)
				memcpy(&content, argp, sizeof(content));
			reg = (volatile int32_t *)content;
		}
		if (cmd == GETCPU_CACHE_GET && !got && writable) {
			uintptr_t out;

			memcpy(&out, argp, sizeof(out));
			if (out != (uintptr_t)reg) {
				f->mismatches++;
				note(f, "call %ld: GET gave %#lx, registered %p",
				     i, (unsigned long)out, (void *)reg);
			}
		}

		/* Nothing written but the registered cache and GET's output. */
		if (writable && (memcmp(before, argp - 2, 2) ||
				 memcmp(before + 2 + sizeof(uintptr_t),
					argp + sizeof(uintptr_t), 2)))
			f->stray_writes++;
		if (writable && !(cmd == GETCPU_CACHE_GET && !got) &&
		    memcmp(before + 2, argp, sizeof(uintptr_t)))
			f->stray_writes++;
		for (k = 0; k < NCACHES; k++) {
			if (&caches[k] == reg)
				continue;
			if (caches[k] != SENTINEL && !f->stray_writes++)
				note(f, "call %ld: cache %d written (%d)",
				     i, k, caches[k]);
		}
		if (reg && !online(gc_read(reg)))
			f->bad_cpu++;

		/* Migrate now and then, and check the cache followed. */
		if (i % 64 == 63) {
			int cpu = cpus.id[xorshift32(&rnd) % cpus.n];

			if (gc_pin(cpu)) {
				f->err = errno;
				return NULL;
			}
			if (reg && gc_read(reg) != cpu)
				f->bad_cpu++;
		}
	}
	f->ok = 1;
	return NULL;
}

/* The read-only slots: NULL, a cache, misaligned, kernel. */
static int fill_ro(void)
{
	uintptr_t ro[RO_SLOTS] = {
		0, (uintptr_t)&caches[0], (uintptr_t)&caches[1] + 2,
		kernel_lo + 0x100,
	};

	if (mprotect(pages.ro, pages.size, PROT_READ | PROT_WRITE))
		return -1;
	memcpy(pages.ro, ro, sizeof(ro));
	return mprotect(pages.ro, pages.size, PROT_READ);
}

FIXTURE(gc) {
	int unused;
};

FIXTURE_SETUP(gc)
{
}

FIXTURE_TEARDOWN(gc)
{
}

TEST_F_TIMEOUT(gc, fuzz, 240)
{
	unsigned long seed = cmdline_seed(DEFAULT_SEED);
	long threads = 8, per = gc_scale(3000), k;
	long total[5] = { 0 }, mismatches = 0, stray = 0, bad_cpu = 0;
	long calls = 0;
	uint32_t checksum = 2166136261u;
	char first[256];
	int klog, n;

	if (!gc_present())
		SKIP(return, "getcpu_cache (463) is ENOSYS: no CONFIG_GETCPU_CACHE");
	TH_LOG("seed %lu (SEED=%lu replays it), %ld threads x %ld calls",
	       seed, seed, threads, per);
	ASSERT_EQ(0, gc_cpus_online(&cpus));
	ASSERT_EQ(0, gc_pages_map(&pages));
	kernel_range();
	caches = mmap(NULL, pages.size, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE((uintptr_t)MAP_FAILED, (uintptr_t)caches);
	ASSERT_EQ(0, fill_ro());
	klog = klog_open();

	for (k = 0; k < threads; k++) {
		struct fuzz f;
		pthread_t t;

		memset(&f, 0, sizeof(f));
		f.seed = (uint32_t)seed * 2654435761u + k * 40503u + 1;
		f.iters = per;
		f.checksum = 2166136261u;
		ASSERT_EQ(0, pthread_create(&t, NULL, fuzz_thread, &f));
		ASSERT_EQ(0, pthread_join(t, NULL));
		EXPECT_EQ(1, f.ok) {
			TH_LOG("thread %ld stopped: errno %d", k, f.err);
		}
		if (f.first[0])
			TH_LOG("thread %ld: %s", k, f.first);
		for (n = 0; n < 5; n++)
			total[n] += f.by_errno[n];
		mismatches += f.mismatches;
		calls += f.calls;
		stray += f.stray_writes;
		bad_cpu += f.bad_cpu;
		checksum = fnv1a(checksum, f.checksum);
	}
	TH_LOG("results: %ld ok, %ld EINVAL, %ld EFAULT, %ld EBUSY, %ld ENOENT",
	       total[0], total[1], total[2], total[3], total[4]);
	TH_LOG("fuzz: seed %lu, operation stream checksum %08x", seed,
	       checksum);
	pda_stat("fuzz_iterations", calls > mismatches ? calls - mismatches : 0);
	EXPECT_EQ(0, mismatches);
	EXPECT_EQ(0, stray);
	EXPECT_EQ(0, bad_cpu);
	/* Every outcome came up. */
	for (n = 0; n < 5; n++)
		EXPECT_LT(0, total[n]);
	n = klog_scan(klog, first, sizeof(first));
	EXPECT_EQ(0, n) {
		TH_LOG("kernel log: %d splat(s), first: %s", n, first);
	}
}

TEST_HARNESS_MAIN
