// SPDX-License-Identifier: GPL-2.0
/*
 * mcload: a small memcached text-protocol load client, loopback only.
 *
 * Usage: mcload PORT THREADS REQUESTS DEPTH KEYS_PER_GET SET_EVERY
 *
 * Each of THREADS threads opens one TCP connection to 127.0.0.1:PORT and
 * stores its NKEYS keys (values of 32 bytes).  All threads then wait at a
 * barrier, where timing starts, and each sends REQUESTS requests in
 * pipelined batches of DEPTH: every SET_EVERY-th request is a set (0: no
 * sets), the others a get of KEYS_PER_GET of its keys, all hits.  Prints
 * "wall_s S req_per_s R": the seconds from the barrier to the last reply
 * and the requests per second over all threads.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define NKEYS		1000
#define MAX_THREADS	256
#define VAL		"0123456789abcdef0123456789abcdef"
#define BUF_SIZE	(1 << 20)
/* The longest key, " t255:k999", and the set line with its value. */
#define KEY_MAX		16
#define SET_MAX		(64 + sizeof(VAL))

static long port, nthreads, requests, depth, keys_per_get, set_every;
static pthread_barrier_t barrier;

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n <= 0)
			die("mcload: write");
		buf += n;
		len -= n;
	}
}

/*
 * Read replies until @want of them ended: a get's ends with "END\r\n",
 * a set's is "STORED\r\n".  The last 8 bytes read slide through @tail.
 */
static void await_replies(int fd, char *buf, size_t cap, long want)
{
	char tail[8] = { 0 };

	while (want > 0) {
		ssize_t n = read(fd, buf, cap);

		if (n < 0)
			die("mcload: read");
		if (n == 0) {
			fprintf(stderr, "mcload: the server closed the connection\n");
			exit(1);
		}
		for (ssize_t i = 0; i < n; i++) {
			memmove(tail, tail + 1, sizeof(tail) - 1);
			tail[7] = buf[i];
			if (tail[7] != '\n' || tail[6] != '\r')
				continue;
			if (!memcmp(tail + 3, "END", 3) ||
			    !memcmp(tail, "STORED", 6))
				want--;
		}
	}
}

static size_t put_set(char *out, long id, long key)
{
	return sprintf(out, "set t%ld:k%ld 0 0 %zu\r\n" VAL "\r\n", id, key,
		       strlen(VAL));
}

static size_t put_get(char *out, long id, long n)
{
	size_t len = sprintf(out, "get");

	for (long j = 0; j < keys_per_get; j++)
		len += sprintf(out + len, " t%ld:k%ld", id,
			       (n * 7 + j) % NKEYS);
	return len + sprintf(out + len, "\r\n");
}

static void *worker(void *arg)
{
	long id = (long)arg, done = 0, n = 0;
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	char *out = malloc(BUF_SIZE), *in = malloc(BUF_SIZE);
	int one = 1;
	int fd;

	if (!out || !in)
		die("mcload: malloc");
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		die("mcload: socket");
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		die("mcload: connect");
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		die("mcload: setsockopt");
	for (long k = 0; k < NKEYS; k++) {
		write_all(fd, out, put_set(out, id, k));
		await_replies(fd, in, BUF_SIZE, 1);
	}
	pthread_barrier_wait(&barrier);	/* preloaded: timing starts */
	while (done < requests) {
		size_t len = 0;
		long b;

		for (b = 0; b < depth && done + b < requests; b++, n++) {
			if (set_every && n % set_every == 0)
				len += put_set(out + len, id, n % NKEYS);
			else
				len += put_get(out + len, id, n);
		}
		write_all(fd, out, len);
		await_replies(fd, in, BUF_SIZE, b);
		done += b;
	}
	close(fd);
	free(out);
	free(in);
	return NULL;
}

/* @text as a whole decimal number in [@min, @max], else a clear exit. */
static long number(const char *name, const char *text, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(text, &end, 10);
	if (errno || end == text || *end || v < min || v > max) {
		fprintf(stderr, "mcload: %s: \"%s\" is not an integer in %ld..%ld\n",
			name, text, min, max);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	pthread_t threads[MAX_THREADS];
	struct timespec start, end;
	size_t batch;
	double secs;
	int err;

	if (argc != 7) {
		fputs("usage: mcload PORT THREADS REQUESTS DEPTH KEYS_PER_GET\n"
		      "              SET_EVERY\n", stderr);
		return 2;
	}
	port = number("PORT", argv[1], 1, 65535);
	nthreads = number("THREADS", argv[2], 1, MAX_THREADS);
	requests = number("REQUESTS", argv[3], 1, LONG_MAX / MAX_THREADS);
	depth = number("DEPTH", argv[4], 1, INT_MAX);
	keys_per_get = number("KEYS_PER_GET", argv[5], 1, NKEYS);
	set_every = number("SET_EVERY", argv[6], 0, LONG_MAX);
	/* One batch of requests must fit the output buffer. */
	batch = depth * (keys_per_get * KEY_MAX + SET_MAX);
	if (depth > BUF_SIZE || batch > BUF_SIZE) {
		fprintf(stderr, "mcload: DEPTH x KEYS_PER_GET too large: ");
		fprintf(stderr, "a batch must fit %d bytes\n", BUF_SIZE);
		return 2;
	}

	err = pthread_barrier_init(&barrier, NULL, nthreads + 1);
	if (err) {
		errno = err;
		die("mcload: pthread_barrier_init");
	}
	for (long i = 0; i < nthreads; i++) {
		err = pthread_create(&threads[i], NULL, worker, (void *)i);
		if (err) {
			errno = err;
			die("mcload: pthread_create");
		}
	}
	pthread_barrier_wait(&barrier);
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (long i = 0; i < nthreads; i++)
		pthread_join(threads[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &end);
	secs = (end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9;
	printf("wall_s %.4f req_per_s %.0f\n", secs,
	       (double)requests * nthreads / secs);
	return 0;
}
