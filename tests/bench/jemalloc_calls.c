// SPDX-License-Identifier: GPL-2.0
/*
 * jemalloc_calls: how often Debian's jemalloc (libjemalloc2 5.3,
 * unmodified) asks sched_getcpu() when its arenas are per CPU, to show
 * that libpda-getcpu.so has nothing to gain there
 * (scripts/harness/urcubench.py, part of make bench).
 *
 *	jemalloc_calls LIBGETCPU_COUNT_SO LIBJEMALLOC_SO
 *
 * runs itself again with LD_PRELOAD=LIBGETCPU_COUNT_SO:LIBJEMALLOC_SO and
 * MALLOC_CONF=percpu_arena:percpu (the guest's /init gives a test no
 * environment).  Then, JC_REPS times: JC_THREADS threads, each JC_ALLOCS
 * malloc() and free() of sizes up to 64 KiB (a few live at a time), each
 * thread counting its sched_getcpu() calls with getcpu_count.c's
 * interposer.  jemalloc picks a thread's arena from its CPU only when the
 * arena it last used was another thread's, so the calls are rare; a line
 * per repetition says how rare:
 *
 *	jemalloc-calls: rep=R allocs=N threads=T calls=C percpu_arena=P
 *
 * P is what jemalloc itself reports of the option (mallctl()), so a run
 * on another allocator, or with the option refused, cannot pass for this
 * one.  Exit status 1 on any failure.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define JC_REPS		3
#define JC_THREADS	4
#define JC_ALLOCS	1280000
#define JC_LIVE		16
#define JC_MAX_SIZE	(64 << 10)

static unsigned long (*thread_calls)(void);

struct worker {
	unsigned int index;
	unsigned long calls;
};

static void *worker(void *arg)
{
	struct worker *w = arg;
	/* xorshift32, seeded by the thread's index: the same sizes each run */
	uint32_t x = 2463534242u + w->index;
	void *live[JC_LIVE] = { NULL };
	long i;

	for (i = 0; i < JC_ALLOCS; i++) {
		void **slot = &live[i % JC_LIVE];

		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		free(*slot);
		*slot = malloc(1 + x % JC_MAX_SIZE);
		if (!*slot)
			return "malloc failed";
		/* Touch it, so nothing elides the allocation. */
		*(volatile char *)*slot = (char)i;
	}
	for (i = 0; i < JC_LIVE; i++)
		free(live[i]);
	w->calls = thread_calls();
	return NULL;
}

static int relaunch(char **argv)
{
	static char preload[512];
	char *envp[] = { preload, "MALLOC_CONF=percpu_arena:percpu", NULL };

	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s:%s", argv[1],
		 argv[2]);
	execve(argv[0], (char *[]){ argv[0], NULL }, envp);
	perror("execve");
	return 1;
}

/* One repetition: the sched_getcpu() calls of its threads, or -1. */
static long run_threads(void)
{
	struct worker w[JC_THREADS];
	pthread_t tid[JC_THREADS];
	long total = 0;
	int i, n, bad = 0;

	for (n = 0; n < JC_THREADS; n++) {
		w[n] = (struct worker){ .index = n };
		if (pthread_create(&tid[n], NULL, worker, &w[n])) {
			printf("jemalloc-calls: FAILED pthread_create\n");
			bad = 1;
			break;
		}
	}
	/* Join every thread started, whatever the others did. */
	for (i = 0; i < n; i++) {
		void *err = NULL;

		if (pthread_join(tid[i], &err)) {
			printf("jemalloc-calls: FAILED pthread_join\n");
			bad = 1;
		} else if (err) {
			printf("jemalloc-calls: FAILED %s\n", (char *)err);
			bad = 1;
		} else {
			total += w[i].calls;
		}
	}
	return bad ? -1 : total;
}

typedef int mallctl_fn(const char *name, void *oldp, size_t *oldlenp,
		       void *newp, size_t newlen);

int main(int argc, char **argv)
{
	mallctl_fn *mallctl;
	const char *percpu = NULL;
	size_t len = sizeof(percpu);
	long calls;
	int rep;

	if (argc == 3)
		return relaunch(argv);
	if (argc != 1) {
		fprintf(stderr, "usage: %s LIBGETCPU_COUNT_SO LIBJEMALLOC_SO\n",
			argv[0]);
		return 2;
	}

	thread_calls = (unsigned long (*)(void))dlsym(RTLD_DEFAULT,
						      "getcpu_count_thread");
	mallctl = (mallctl_fn *)dlsym(RTLD_DEFAULT, "mallctl");
	if (!thread_calls || !mallctl) {
		printf("jemalloc-calls: FAILED preload libgetcpu-count.so and libjemalloc.so.2 (%s%s)\n",
		       thread_calls ? "" : "no getcpu_count_thread ",
		       mallctl ? "" : "no mallctl");
		return 1;
	}
	if (mallctl("opt.percpu_arena", &percpu, &len, NULL, 0) || !percpu) {
		printf("jemalloc-calls: FAILED mallctl(\"opt.percpu_arena\")\n");
		return 1;
	}
	for (rep = 1; rep <= JC_REPS; rep++) {
		calls = run_threads();
		if (calls < 0)
			return 1;
		printf("jemalloc-calls: rep=%d allocs=%ld threads=%d calls=%ld percpu_arena=%s\n",
		       rep, (long)JC_THREADS * JC_ALLOCS, JC_THREADS, calls,
		       percpu);
	}
	return 0;
}
