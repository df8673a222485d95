// SPDX-License-Identifier: GPL-2.0
/*
 * tlb_bench: the guest half of make bench's arm64 TLB section
 * (scripts/harness/tlbbench.py), for CONFIG_ARM64_TLBI_LOCAL (patch 0011).
 *
 * It measures these workloads, each as R repetitions (after one
 * warm-up) of a fixed amount of work:
 *
 *	mprotect	one process per CPU, each pinned to its CPU, each
 *			looping mprotect(RW -> RO -> RW) over its own small
 *			mapping, writing it after each RW (ops: mprotect
 *			pairs, summed over the processes)
 *	madvise		one thread per CPU in one process, each pinned, each
 *			writing its own chunk and freeing it with
 *			MADV_DONTNEED, as a malloc library does (ops: madvise
 *			calls, summed over the threads; ITERS / 8 per thread)
 *	madvise1	the same with a single thread: the mm is live on one
 *			CPU only
 *	cow		a process (pinned to CPU 0) touches N pages, forks; the
 *			child writes each page (a copy-on-write fault each)
 *			and exits; the parent waits (ops: forks)
 *	twothr_sleep	two threads in one process: one pinned to CPU 1 loops
 *			as mprotect does, the other (pinned to CPU 0) sleeps
 *			in a barrier (a futex) meanwhile, so CPU 0 idles and
 *			still holds the mm (ops: mprotect pairs)
 *	twothr_run	the same with both threads looping, one on CPU 0 and
 *			one on CPU 1, each over its own pages (ops: mprotect
 *			pairs, summed over the two)
 *	forkexec	a process (pinned to CPU 0) forks; the child execs
 *			this program again (/proc/self/exe), which exits at
 *			once; the parent waits (ops: fork + exec + exit)
 *	ctxsw		two processes (two mms, so switch_mm() runs), both
 *			pinned to CPU 0, ping-pong one byte over pipes (ops:
 *			switches, half a round trip each: 4 * ITERS)
 *	tlbshoot	after stress-ng's tlb-shootdown stressor (the load of
 *			Ryan Roberts' 2025 arm64 RFC), in this program's own
 *			code and with a fixed amount of work: one instance
 *			per CPU, each a process with a 512-page shared
 *			anonymous mapping and a 4-page shared file mapping
 *			and max(2, min(8, CPUs)) forked children.  A child's
 *			op: mprotect one page RO and read it, WO and write it;
 *			mprotect the whole mapping RO, read every cache line
 *			of it in a scattered order, WO, write them, RW;
 *			MADV_DONTNEED one page of each mapping and touch it;
 *			msync(MS_ASYNC) the file.  The instance's op:
 *			MADV_DONTNEED a page of the file, write it, msync,
 *			again with a read; the same twice on the anonymous
 *			mapping without msync; MADV_COLLAPSE and
 *			MADV_NOHUGEPAGE on both, msync.  Every child starts
 *			on CPU 0 and all move to CPU 1 halfway (stress-ng
 *			moves them on every second); the instances run on any
 *			CPU.  ITERS / TLBSHOOT_SCALE ops per process (ops:
 *			those of every child and instance)
 *
 * Per repetition it reads the /proc/vmstat tlbi_* counters before and
 * after the work (once every process has finished the work but before
 * any exits, so exit_mmap()'s flushes are not counted, except in cow and
 * forkexec where the child's exec and exit are part of the work), and
 * CLOCK_MONOTONIC.  Under
 * "qemu -icount shift=0" with pda.icount on the kernel command line,
 * CLOCK_MONOTONIC advances 1 ns per guest instruction, so the time rows
 * are instructions (unit=insns); otherwise wall-clock ns (unit=ns).
 *
 * Output, in pda_bench's line format (scripts/harness/guestout.py) with
 * its own prefix:
 *
 *	tlb-bench: W.time min=X median=Y reps=R iters=OPS unit=ns|insns
 *		time per op (total of the repetition / OPS)
 *	tlb-bench: W.COUNTER min=X median=Y reps=R iters=1 unit=flushes
 *			each=D1,D2,...
 *		the counter's delta over one whole repetition; each: the
 *		deltas in the order the repetitions ran (one line)
 *	tlb-bench: W.COUNTER n/a absent from /proc/vmstat
 *	tlb-bench: W FAILED what: error
 *	tlb-bench: info KEY=VALUE ...
 *
 * COUNTER is tlbi_broadcast, tlbi_local, tlbi_skipped or tlbi_catchup.
 *
 * Usage: tlb_bench [-r REPS] [-n ITERS] [WORKLOAD[=ITERS]...]  (default:
 * all but ctxsw and tlbshoot).  ITERS scales the per-process loop counts;
 * WORKLOAD=ITERS sets them for that workload alone (ctxsw wants many more
 * switches than the flush workloads want operations).  Exit 0, or 1 if
 * something that must work (a fork, a pipe, a mapping) failed.
 * "tlb_bench --exit" exits at once: forkexec's child.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../guest/lib/cmdline.h"

#define MAX_REPS		31
#define MAX_CPUS		64
#define PAGE			4096
#define CHUNK_PAGES		4	/* each worker's own pages */
#define CHUNK			(CHUNK_PAGES * PAGE)
#define COW_PAGES		16
#define EXIT_ARG		"--exit"
#define PROGRAM_NAME		"tlb_bench"

static int reps = 7;
static long iters = 200;
/*
 * madvise with a thread per CPU broadcasts with the option on or off (the
 * mm is live on every CPU), and under multi-threaded TCG a broadcast
 * stops every vCPU: tens of ms each on a loaded host.  It loops
 * iters / MADV_SCALE times per thread.
 */
#define MADV_SCALE		8
/*
 * A tlbshoot op of a child touches each of the 32,768 cache lines of its
 * 512 pages twice and changes the protection of all 512 three times: it
 * loops iters / TLBSHOOT_SCALE times per process.
 */
#define TLBSHOOT_SCALE		8
static int ncpus;
static int failed;
static const char *unit = "ns";

static const char *const counter_name[] = {
	"tlbi_broadcast", "tlbi_local", "tlbi_skipped", "tlbi_catchup",
};
#define NR_COUNTERS	4

struct sample {
	int64_t t[MAX_REPS];
	int64_t c[NR_COUNTERS][MAX_REPS];
};

/* ----------------------------------------------------------- helpers */

static int64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/*
 * The four counters, or -1 for each the kernel lacks (mainline, or the
 * option off at build time).  /proc/vmstat sums every CPU's counts.
 */
static void vmstat_read(int64_t v[NR_COUNTERS])
{
	char line[128], name[64];
	long long val;
	FILE *f;
	int i;

	for (i = 0; i < NR_COUNTERS; i++)
		v[i] = -1;
	f = fopen("/proc/vmstat", "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s %lld", name, &val) != 2)
			continue;
		for (i = 0; i < NR_COUNTERS; i++)
			if (!strcmp(name, counter_name[i]))
				v[i] = val;
	}
	fclose(f);
}

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* @each: also print the repetitions' own values, in the order they ran. */
static void row(const char *w, const char *what, const int64_t *v, long ops,
		const char *u, int each)
{
	int64_t sorted[MAX_REPS];
	int i;

	memcpy(sorted, v, reps * sizeof(*v));
	qsort(sorted, reps, sizeof(*v), cmp_i64);
	printf("tlb-bench: %s.%s min=%.2f median=%.2f reps=%d iters=%ld "
	       "unit=%s", w, what, (double)sorted[0] / ops,
	       (double)sorted[reps / 2] / ops, reps, ops, u);
	for (i = 0; each && i < reps; i++)
		printf("%s%lld", i ? "," : " each=", (long long)v[i]);
	printf("\n");
}

static void report(const char *w, struct sample *s, long ops)
{
	int i;

	row(w, "time", s->t, ops, unit, 0);
	for (i = 0; i < NR_COUNTERS; i++) {
		if (s->c[i][0] < 0)
			printf("tlb-bench: %s.%s n/a absent from /proc/vmstat\n",
			       w, counter_name[i]);
		else
			row(w, counter_name[i], s->c[i], 1, "flushes", 1);
	}
	fflush(stdout);
}

static void broken(const char *w, const char *what)
{
	printf("tlb-bench: %s FAILED %s: %s\n", w, what, strerror(errno));
	fflush(stdout);
	failed = 1;
}

/* Rep @r (-1: warm-up) took @t ns between counter readings @a and @b. */
static void record(struct sample *s, int r, int64_t t,
		   const int64_t a[NR_COUNTERS], const int64_t b[NR_COUNTERS])
{
	int i;

	if (r < 0)
		return;
	s->t[r] = t;
	for (i = 0; i < NR_COUNTERS; i++)
		s->c[i][r] = a[i] < 0 || b[i] < 0 ? -1 : b[i] - a[i];
}

/*
 * A store only: a read first would map the zero page and the write then
 * copy it (one more fault, and a flush, per page after MADV_DONTNEED).
 */
static void touch(volatile char *p, int pages)
{
	int i;

	for (i = 0; i < pages; i++)
		p[i * PAGE] = (char)i;
}

/*
 * A start line for forked workers: each writes a byte to @ready when set
 * up, waits for a byte on @go, works, writes a byte to @done, and waits
 * for EOF on @end before it exits.  So the parent reads the counters and
 * the clock with every worker set up (not counting fork and mmap) and
 * again with every worker finished (not counting exit).  @end is not @go:
 * a worker that finished first must not eat another's go byte.
 */
struct gate {
	int ready[2], go[2], done[2], end[2];
};

static int gate_open(struct gate *g)
{
	return pipe(g->ready) || pipe(g->go) || pipe(g->done) ||
		pipe(g->end) ? -1 : 0;
}

static void gate_close(struct gate *g)
{
	int *fd = &g->ready[0];
	int i;

	for (i = 0; i < 8; i++)
		if (fd[i] >= 0)
			close(fd[i]);
}

/* In a worker: 0 once the parent said go. */
static int gate_wait(struct gate *g)
{
	char c = 'r';

	close(g->end[1]);
	if (write(g->ready[1], &c, 1) != 1)
		return -1;
	return read(g->go[0], &c, 1) == 1 ? 0 : -1;
}

/* In a worker, after the work: report, then wait for the parent's EOF. */
static void gate_finish(struct gate *g)
{
	char c = 'd';

	if (write(g->done[1], &c, 1) != 1)
		_exit(1);
	while (read(g->end[0], &c, 1) > 0)
		;
}

/* In the parent: wait for @n bytes on @fd. */
static int gate_collect(int fd, int n)
{
	char c;

	while (n--)
		if (read(fd, &c, 1) != 1)
			return -1;
	return 0;
}

/* ---------------------------------------------------------- mprotect */

/* One operation: RW -> RO -> RW over a chunk, then write it. */
static int mprot_op(char *p)
{
	if (mprotect(p, CHUNK, PROT_READ) ||
	    mprotect(p, CHUNK, PROT_READ | PROT_WRITE))
		return -1;
	touch(p, CHUNK_PAGES);
	return 0;
}

/* One operation: write a chunk, free it as a malloc library does. */
static int madv_op(char *p)
{
	touch(p, CHUNK_PAGES);
	return madvise(p, CHUNK, MADV_DONTNEED);
}

static void mprotect_worker(struct gate *g, int cpu)
{
	char *p;
	long i;

	if (pin(cpu))
		_exit(2);
	p = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		_exit(3);
	touch(p, CHUNK_PAGES);
	if (gate_wait(g))
		_exit(4);
	for (i = 0; i < iters; i++)
		if (mprot_op(p))
			_exit(5);
	gate_finish(g);
	_exit(0);
}

/*
 * Runs @worker(cpu) in @n forked processes, one per CPU, for one
 * repetition; returns 0 and fills @t, @a, @b.  Each worker and the
 * processes it forks are @members members of the gate: each says ready
 * and done once.
 */
static int run_procs(int n, int members, void (*worker)(struct gate *, int),
		     int64_t *t, int64_t a[NR_COUNTERS],
		     int64_t b[NR_COUNTERS])
{
	struct gate g;
	pid_t pid[MAX_CPUS];
	int i, status, bad = 0;
	int64_t t0;

	if (gate_open(&g))
		return -1;
	fflush(stdout);
	for (i = 0; i < n; i++) {
		pid[i] = fork();
		if (pid[i] < 0) {
			n = i;
			bad = -1;
			break;
		}
		if (!pid[i]) {
			close(g.ready[0]);
			close(g.done[0]);
			worker(&g, i);
		}
	}
	if (!bad && gate_collect(g.ready[0], n * members))
		bad = -1;
	vmstat_read(a);
	t0 = now();
	/* One go byte each: every worker starts at once. */
	for (i = 0; !bad && i < n * members; i++)
		if (write(g.go[1], "g", 1) != 1)
			bad = -1;
	if (!bad && gate_collect(g.done[0], n * members))
		bad = -1;
	*t = now() - t0;
	vmstat_read(b);
	close(g.end[1]);
	g.end[1] = -1;
	for (i = 0; i < n; i++)
		if (waitpid(pid[i], &status, 0) != pid[i] ||
		    !WIFEXITED(status) || WEXITSTATUS(status))
			bad = -1;
	gate_close(&g);
	if (bad && !errno)
		errno = EIO;
	return bad;
}

static void bench_procs(const char *w, void (*worker)(struct gate *, int),
			int members, long ops)
{
	int64_t a[NR_COUNTERS], b[NR_COUNTERS], t;
	struct sample s;
	int r;

	for (r = -1; r < reps; r++) {
		if (run_procs(ncpus, members, worker, &t, a, b)) {
			broken(w, "a worker process");
			return;
		}
		record(&s, r, t, a, b);
	}
	report(w, &s, ops);
}

/* ----------------------------------------------------------- threads */

/*
 * Threads of one process, each pinned to its CPU and each doing @loops
 * operations @op per repetition on its own chunk.  The main thread,
 * pinned to CPU 0, reads the counters and the clock around the
 * repetition; between the two barriers it either works too (@main_works,
 * on chunk 0) or sleeps in the end barrier (a futex), its CPU idle.
 */
struct team {
	pthread_barrier_t start, end;
	int (*op)(char *p);
	char *area;
	long loops;		/* per thread and repetition */
	int err;
};

struct member {
	struct team *t;
	char *chunk;
	int cpu;
};

static void team_work(struct team *t, char *p)
{
	long i;

	for (i = 0; i < t->loops; i++)
		if (t->op(p))
			t->err = errno;
}

static void *team_thread(void *arg)
{
	struct member *me = arg;
	struct team *t = me->t;
	int r;

	if (pin(me->cpu))
		t->err = errno;
	for (r = -1; r < reps; r++) {
		pthread_barrier_wait(&t->start);
		team_work(t, me->chunk);
		pthread_barrier_wait(&t->end);
	}
	return NULL;
}

/*
 * @nthreads threads on CPUs @first_cpu.., and with @main_works the main
 * thread on CPU 0 as one more worker.
 */
static void bench_team(const char *w, int (*op)(char *), long loops,
		       int nthreads, int first_cpu, int main_works)
{
	int64_t a[NR_COUNTERS], b[NR_COUNTERS], t0;
	int nchunks = nthreads + main_works;
	long size = (long)nchunks * CHUNK;
	struct member args[MAX_CPUS];
	pthread_t tid[MAX_CPUS];
	struct team t = {
		.op = op,
		.loops = loops > 0 ? loops : 1,
	};
	struct sample s;
	int i, r;

	t.area = mmap(NULL, size, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t.area == MAP_FAILED) {
		broken(w, "mmap");
		return;
	}
	touch(t.area, nchunks * CHUNK_PAGES);
	pin(0);
	pthread_barrier_init(&t.start, NULL, nthreads + 1);
	pthread_barrier_init(&t.end, NULL, nthreads + 1);
	for (i = 0; i < nthreads; i++) {
		args[i] = (struct member){
			.t = &t,
			.chunk = t.area + (long)(i + main_works) * CHUNK,
			.cpu = first_cpu + i,
		};
		errno = pthread_create(&tid[i], NULL, team_thread, &args[i]);
		if (errno) {
			broken(w, "pthread_create");
			exit(1);	/* the others wait at a barrier */
		}
	}
	for (r = -1; r < reps; r++) {
		vmstat_read(a);
		t0 = now();
		pthread_barrier_wait(&t.start);
		if (main_works)
			team_work(&t, t.area);
		pthread_barrier_wait(&t.end);
		t0 = now() - t0;
		vmstat_read(b);
		record(&s, r, t0, a, b);
	}
	for (i = 0; i < nthreads; i++)
		pthread_join(tid[i], NULL);
	pthread_barrier_destroy(&t.start);
	pthread_barrier_destroy(&t.end);
	munmap(t.area, size);
	if (t.err) {
		errno = t.err;
		broken(w, "pin or operation");
		return;
	}
	report(w, &s, (long)nchunks * t.loops);
}

/* ---------------------------------------------------------- tlbshoot */

#define SHOOT_PAGES		512	/* stress-ng's MMAP_PAGES */
#define SHOOT_FD_PAGES		4	/* and MMAP_FD_PAGES */
#define SHOOT_MIN_CHILDREN	2
#define SHOOT_MAX_CHILDREN	8
#define LINE			64

/* One instance's mappings, made before its children are forked. */
static struct {
	volatile unsigned char *mem, *fdmem;
	size_t step;		/* bytes: a prime number of lines */
	uint32_t seed;
} shoot;

/* xorshift32: the same offsets on every boot. */
static uint32_t shoot_rand(void)
{
	uint32_t x = shoot.seed;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return shoot.seed = x;
}

static int is_prime(size_t v)
{
	size_t d;

	if (v < 2)
		return 0;
	for (d = 2; d * d <= v; d++)
		if (!(v % d))
			return 0;
	return 1;
}

static int shoot_children(void)
{
	return ncpus < SHOOT_MIN_CHILDREN ? SHOOT_MIN_CHILDREN :
		ncpus > SHOOT_MAX_CHILDREN ? SHOOT_MAX_CHILDREN : ncpus;
}

/* A random page of a mapping of @pages pages. */
static volatile unsigned char *shoot_page(volatile unsigned char *base,
					  int pages)
{
	return base + (shoot_rand() % pages) * (size_t)PAGE;
}

static void shoot_read(volatile unsigned char *p)
{
	int i;

	for (i = 0; i < PAGE; i += LINE)
		(void)p[i];
}

static void shoot_write(volatile unsigned char *p, unsigned char v)
{
	int i;

	for (i = 0; i < PAGE; i += LINE)
		p[i] = (unsigned char)(v + i);
}

/* A child's op; stress-ng ignores the calls' failures, and so does this. */
static void shoot_child_op(void)
{
	size_t size = (size_t)SHOOT_PAGES * PAGE, lines = size / LINE;
	size_t k = (shoot_rand() % lines) * LINE, l;
	unsigned char v = (unsigned char)shoot_rand();
	volatile unsigned char *p = shoot_page(shoot.mem, SHOOT_PAGES);
	char *mem = (char *)shoot.mem;

	mprotect((char *)p, PAGE, PROT_READ);
	shoot_read(p);
	mprotect((char *)p, PAGE, PROT_WRITE);
	shoot_write(p, v);
	mprotect(mem, size, PROT_READ);
	for (l = 0; l < lines; l++) {
		(void)shoot.mem[k];
		k = (k + shoot.step) % size;
	}
	mprotect(mem, size, PROT_WRITE);
	for (l = 0; l < lines; l++) {
		shoot.mem[k] = (unsigned char)(k + v);
		k = (k + shoot.step) % size;
	}
	mprotect(mem, size, PROT_READ | PROT_WRITE);
	p = shoot_page(shoot.mem, SHOOT_PAGES);
	madvise((char *)p, PAGE, MADV_DONTNEED);
	shoot_read(p);
	p = shoot_page(shoot.fdmem, SHOOT_FD_PAGES);
	madvise((char *)p, PAGE, MADV_DONTNEED);
	shoot_write(p, v);
	msync((char *)shoot.fdmem, SHOOT_FD_PAGES * PAGE, MS_ASYNC);
}

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE		25
#endif

/* The instance's own op. */
static void shoot_parent_op(void)
{
	size_t size = (size_t)SHOOT_PAGES * PAGE;
	size_t fdsize = (size_t)SHOOT_FD_PAGES * PAGE;
	unsigned char v = (unsigned char)shoot_rand();
	volatile unsigned char *p = shoot_page(shoot.fdmem, SHOOT_FD_PAGES);

	madvise((char *)p, PAGE, MADV_DONTNEED);
	shoot_write(p, v);
	msync((char *)shoot.fdmem, fdsize, MS_SYNC);
	madvise((char *)p, PAGE, MADV_DONTNEED);
	shoot_read(p);
	msync((char *)shoot.fdmem, fdsize, MS_SYNC);
	p = shoot_page(shoot.mem, SHOOT_PAGES);
	madvise((char *)p, PAGE, MADV_DONTNEED);
	shoot_read(p);
	madvise((char *)p, PAGE, MADV_DONTNEED);
	shoot_write(p, v);
	/*
	 * Without THP (these kernels) both fail with EINVAL, as they can in
	 * stress-ng.
	 */
	madvise((char *)shoot.mem, size, MADV_COLLAPSE);
	madvise((char *)shoot.mem, size, MADV_NOHUGEPAGE);
	madvise((char *)shoot.fdmem, fdsize, MADV_COLLAPSE);
	madvise((char *)shoot.fdmem, fdsize, MADV_NOHUGEPAGE);
	msync((char *)shoot.fdmem, fdsize, MS_SYNC);
}

static long shoot_ops(void)
{
	return iters / TLBSHOOT_SCALE ? iters / TLBSHOOT_SCALE : 1;
}

/* A child: on CPU 0, then on CPU 1 (if there is one) from halfway. */
static void shoot_child(struct gate *g)
{
	long i, n = shoot_ops();

	if (pin(0) || gate_wait(g))
		_exit(2);
	for (i = 0; i < n; i++) {
		if (i == n / 2 && ncpus > 1 && pin(1))
			_exit(3);
		shoot_child_op();
	}
	gate_finish(g);
	_exit(0);
}

/* The 4-page file: stress-ng's is a temporary file, unlinked. */
static int shoot_file(void)
{
	const char *dir = getenv("TMPDIR");
	char path[256];
	struct stat st;
	int fd;

	if (!dir || stat(dir, &st) || !S_ISDIR(st.st_mode))
		dir = stat("/tmp", &st) || !S_ISDIR(st.st_mode) ? "/" : "/tmp";
	snprintf(path, sizeof(path), "%s/tlbshoot.%d", dir, (int)getpid());
	fd = open(path, O_CREAT | O_EXCL | O_RDWR, 0600);
	if (fd < 0)
		return -1;
	unlink(path);
	if (ftruncate(fd, SHOOT_FD_PAGES * PAGE)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Instance @inst: its mappings, its children, its own ops; every one a
 * gate member.  Unpinned, as stress-ng's instances are.
 */
static void shoot_instance(struct gate *g, int inst)
{
	size_t size = (size_t)SHOOT_PAGES * PAGE, lines = size / LINE;
	int i, nchild = shoot_children(), status, fd, bad = 0;
	pid_t pid[SHOOT_MAX_CHILDREN];
	cpu_set_t all;
	long n;

	CPU_ZERO(&all);
	for (i = 0; i < ncpus; i++)
		CPU_SET(i, &all);
	if (sched_setaffinity(0, sizeof(all), &all))
		_exit(2);
	fd = shoot_file();
	shoot.fdmem = fd < 0 ? MAP_FAILED :
		mmap(NULL, SHOOT_FD_PAGES * PAGE, PROT_READ | PROT_WRITE,
		     MAP_SHARED, fd, 0);
	shoot.mem = mmap(NULL, size, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shoot.fdmem == MAP_FAILED || shoot.mem == MAP_FAILED)
		_exit(3);
	madvise((char *)shoot.fdmem, SHOOT_FD_PAGES * PAGE, MADV_NOHUGEPAGE);
	madvise((char *)shoot.mem, size, MADV_NOHUGEPAGE);
	memset((char *)shoot.mem, 0xff, size);
	/*
	 * A scattered walk, as stress-ng's is, over every line: steps of a
	 * prime number of lines (odd, so prime to the power-of-two count)
	 * of about a third of the mapping.
	 */
	for (shoot.step = lines / 3; !is_prime(shoot.step); shoot.step++)
		;
	shoot.step *= LINE;
	fflush(stdout);
	for (i = 0; i < nchild; i++) {
		shoot.seed = 0x9e3779b9u * (uint32_t)(inst * 16 + i + 1);
		pid[i] = fork();
		if (pid[i] < 0)
			_exit(4);
		if (!pid[i])
			shoot_child(g);
	}
	shoot.seed = 0x9e3779b9u * (uint32_t)(inst * 16 + 15);
	if (gate_wait(g))
		bad = 5;
	for (n = shoot_ops(); !bad && n > 0; n--)
		shoot_parent_op();
	if (!bad)
		gate_finish(g);
	for (i = 0; i < nchild; i++)
		if (waitpid(pid[i], &status, 0) != pid[i] ||
		    !WIFEXITED(status) || WEXITSTATUS(status))
			bad = 6;
	_exit(bad);
}

/* ------------------------------------------------------------- forks */

static char *cow_area;

static void cow_parent(void)
{
	touch(cow_area, COW_PAGES);
}

static void cow_child(void)
{
	touch(cow_area, COW_PAGES);
	_exit(0);
}

static void exec_child(void)
{
	static char *const argv[] = { PROGRAM_NAME, EXIT_ARG, NULL };

	execv("/proc/self/exe", argv);
	_exit(127);
}

/*
 * Forks per repetition: a quarter of the loop count.  Before each fork
 * the parent (pinned to CPU 0) runs @parent if set; the child runs
 * @child, which does not return; the parent waits for it.
 */
static void bench_forks(const char *w, void (*parent)(void),
			void (*child)(void))
{
	int64_t a[NR_COUNTERS], b[NR_COUNTERS], t0;
	long forks = iters / 4 ? iters / 4 : 1;
	struct sample s;
	int status, r;
	pid_t pid;
	long i;

	pin(0);
	for (r = -1; r < reps; r++) {
		vmstat_read(a);
		t0 = now();
		for (i = 0; i < forks; i++) {
			if (parent)
				parent();
			pid = fork();
			if (pid < 0) {
				broken(w, "fork");
				return;
			}
			if (!pid)
				child();
			if (waitpid(pid, &status, 0) != pid ||
			    !WIFEXITED(status) || WEXITSTATUS(status)) {
				errno = ECHILD;
				broken(w, "child");
				return;
			}
		}
		t0 = now() - t0;
		vmstat_read(b);
		record(&s, r, t0, a, b);
	}
	report(w, &s, forks);
}

static void bench_cow(const char *w)
{
	cow_area = mmap(NULL, COW_PAGES * PAGE, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (cow_area == MAP_FAILED) {
		broken(w, "mmap");
		return;
	}
	bench_forks(w, cow_parent, cow_child);
	munmap(cow_area, COW_PAGES * PAGE);
}

/* ------------------------------------------------------------- ctxsw */

static void pong(int in, int out)
{
	char c;

	while (read(in, &c, 1) == 1 && c != 'q')
		if (write(out, &c, 1) != 1)
			break;
	_exit(0);
}

static void bench_ctxsw(const char *w)
{
	int64_t a[NR_COUNTERS], b[NR_COUNTERS], t0;
	int to_b[2], to_a[2], status, r;
	long trips = iters * 2, i;
	struct sample s;
	char c = 'p';
	pid_t pid;

	/* Both on CPU 0: every round trip is two switch_mm()s. */
	if (pin(0) || pipe(to_b) || pipe(to_a)) {
		broken(w, "pin or pipe");
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		broken(w, "fork");
		return;
	}
	if (!pid) {
		close(to_b[1]);
		close(to_a[0]);
		pong(to_b[0], to_a[1]);
	}
	close(to_b[0]);
	close(to_a[1]);
	for (r = -1; r < reps; r++) {
		vmstat_read(a);
		t0 = now();
		for (i = 0; i < trips; i++)
			if (write(to_b[1], &c, 1) != 1 ||
			    read(to_a[0], &c, 1) != 1) {
				broken(w, "ping-pong");
				goto out;
			}
		t0 = now() - t0;
		vmstat_read(b);
		record(&s, r, t0, a, b);
	}
	report(w, &s, 2 * trips);
out:
	if (write(to_b[1], "q", 1) != 1)
		broken(w, "stop");
	close(to_b[1]);
	close(to_a[0]);
	waitpid(pid, &status, 0);
}

/* -------------------------------------------------------------- main */

static void run_here(const char *w)
{
	if (!strcmp(w, "mprotect"))
		bench_procs(w, mprotect_worker, 1, (long)ncpus * iters);
	else if (!strcmp(w, "madvise"))
		bench_team(w, madv_op, iters / MADV_SCALE, ncpus, 0, 0);
	else if (!strcmp(w, "madvise1"))
		bench_team(w, madv_op, iters / MADV_SCALE, 1, 0, 0);
	else if (!strcmp(w, "cow"))
		bench_cow(w);
	else if (!strcmp(w, "twothr_sleep"))
		bench_team(w, mprot_op, iters, 1, 1, 0);
	else if (!strcmp(w, "twothr_run"))
		bench_team(w, mprot_op, iters, 1, 1, 1);
	else if (!strcmp(w, "forkexec"))
		bench_forks(w, NULL, exec_child);
	else if (!strcmp(w, "ctxsw"))
		bench_ctxsw(w);
	else if (!strcmp(w, "tlbshoot"))
		bench_procs(w, shoot_instance, shoot_children() + 1,
			    (long)ncpus * (shoot_children() + 1) * shoot_ops());
	else {
		errno = EINVAL;
		broken(w, "unknown workload");
	}
}

/*
 * Each workload in a new process forked from main(), which is pinned to
 * CPU 0.  An idle CPU keeps the last user mm it ran (lazily, in TTBR0) and
 * counts as its holder, so a process that once ran elsewhere could be
 * held by another CPU for good and broadcast; a new mm that is born on
 * CPU 0 and pinned there is held only where the workload puts it.
 */
static void run(const char *arg)
{
	const char *eq = strchr(arg, '=');
	char w[32];
	int status;
	pid_t pid;

	snprintf(w, sizeof(w), "%.*s", eq ? (int)(eq - arg) : (int)strlen(arg),
		 arg);
	if (eq && atol(eq + 1) < 1) {
		errno = EINVAL;
		broken(w, "loop count");
		return;
	}

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		broken(w, "fork");
		return;
	}
	if (!pid) {
		if (eq)
			iters = atol(eq + 1);
		run_here(w);
		fflush(stdout);
		_exit(failed);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		failed = 1;
}

int main(int argc, char **argv)
{
	static const char *const all[] = {
		"mprotect", "madvise", "madvise1", "cow", "twothr_sleep",
		"twothr_run", "forkexec",
	};
	int64_t v[NR_COUNTERS];
	struct utsname u;
	char opt[32] = "";
	unsigned int i;
	int c;

	if (argc == 2 && !strcmp(argv[1], EXIT_ARG))
		return 0;
	while ((c = getopt(argc, argv, "r:n:")) != -1) {
		if (c == 'r')
			reps = atoi(optarg);
		else if (c == 'n')
			iters = atol(optarg);
		else
			goto usage;
	}
	if (reps < 1 || reps > MAX_REPS || iters < 1)
		goto usage;
	ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (pin(0))
		perror("pin to CPU 0");
	if (ncpus > MAX_CPUS)
		ncpus = MAX_CPUS;
	/* Under -icount CLOCK_MONOTONIC counts guest instructions. */
	if (cmdline_has("pda.icount"))
		unit = "insns";
	cmdline_get("tlbi_local", opt, sizeof(opt));
	vmstat_read(v);
	uname(&u);
	printf("tlb-bench: info kernel=%s machine=%s cpus=%d reps=%d "
	       "iters=%ld clock=%s counters=%s tlbi_local_arg=%s\n",
	       u.release, u.machine, ncpus, reps, iters,
	       strcmp(unit, "insns") ? "monotonic" : "icount-monotonic",
	       v[0] < 0 ? "absent" : "present", opt[0] ? opt : "default");
	fflush(stdout);
	if (optind == argc)
		for (i = 0; i < sizeof(all) / sizeof(all[0]); i++)
			run(all[i]);
	for (c = optind; c < argc; c++)
		run(argv[c]);
	return failed;
usage:
	fprintf(stderr, "usage: tlb_bench [-r REPS (1..%d)] [-n ITERS] "
		"[WORKLOAD[=ITERS] ...]\nWORKLOAD: mprotect|madvise|madvise1|"
		"cow|twothr_sleep|twothr_run|forkexec|ctxsw|tlbshoot\n",
		MAX_REPS);
	return 2;
}
