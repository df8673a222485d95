/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reads the harness's settings from the kernel command line: the harness
 * passes facts about the machine it booted (e.g. pda.cpus=4) there,
 * because the guest has no other channel from the host.  Header only.
 */
#ifndef PDA_TESTS_CMDLINE_H
#define PDA_TESTS_CMDLINE_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Reads /proc/cmdline into @buf; 0, or -1 if it cannot be read. */
static inline int cmdline_read(char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = open("/proc/cmdline", O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

/*
 * Copies the value of "@key=value" from /proc/cmdline into @val.
 * Returns 0, or -1 if the key is absent or /proc/cmdline unreadable.
 */
static inline int cmdline_get(const char *key, char *val, size_t len)
{
	char buf[4096], *tok, *save;
	size_t klen = strlen(key);

	if (cmdline_read(buf, sizeof(buf)))
		return -1;
	for (tok = strtok_r(buf, " \t\n", &save); tok;
	     tok = strtok_r(NULL, " \t\n", &save)) {
		if (!strncmp(tok, key, klen) && tok[klen] == '=') {
			snprintf(val, len, "%s", tok + klen + 1);
			return 0;
		}
	}
	return -1;
}

/* True if the command line holds @word alone or as "@word=...". */
static inline int cmdline_has(const char *word)
{
	char buf[4096], *tok, *save;
	size_t wlen = strlen(word);

	if (cmdline_read(buf, sizeof(buf)))
		return 0;
	for (tok = strtok_r(buf, " \t\n", &save); tok;
	     tok = strtok_r(NULL, " \t\n", &save))
		if (!strncmp(tok, word, wlen) &&
		    (tok[wlen] == '\0' || tok[wlen] == '='))
			return 1;
	return 0;
}

/* Like cmdline_get() for a non-negative integer; -1 if absent or bad. */
static inline long cmdline_get_long(const char *key)
{
	char val[64], *end;
	long v;

	if (cmdline_get(key, val, sizeof(val)))
		return -1;
	v = strtol(val, &end, 10);
	return (*end || end == val || v < 0) ? -1 : v;
}

/*
 * pda.scale=N: a stress test runs at N times its make check size (the
 * soak of make check-full sets it); pda.scale.PROGRAM=N sets one
 * program's own, PROGRAM being its name under /tests (the soak runs the
 * fuzzers, cheap per iteration, longer).  1 when absent.
 */
static inline long cmdline_scale(void)
{
	char exe[256], key[300];
	const char *name;
	ssize_t len;
	long n = -1;

	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len > 0) {
		exe[len] = '\0';
		name = strrchr(exe, '/');
		snprintf(key, sizeof(key), "pda.scale.%s", name ? name + 1 : exe);
		n = cmdline_get_long(key);
	}
	if (n <= 0)
		n = cmdline_get_long("pda.scale");
	return n > 0 ? n : 1;
}

/*
 * pda.seed=N: the seed of a fuzzer, so that SEED=N replays a run (make
 * check passes one only when SEED is given).  @fallback when absent.
 */
static inline unsigned long cmdline_seed(unsigned long fallback)
{
	long n = cmdline_get_long("pda.seed");

	return n > 0 ? (unsigned long)n : fallback;
}

#endif /* PDA_TESTS_CMDLINE_H */
