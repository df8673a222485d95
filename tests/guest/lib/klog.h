/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Scans /dev/kmsg for kernel splats (oopses, warnings, lockdep, ...) logged
 * while a guest test runs, so that a test can assert that what it did left
 * the kernel log clean.  Header only.
 */
#ifndef PDA_TESTS_KLOG_H
#define PDA_TESTS_KLOG_H

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

/* The same list as tests/init/init.c: what a clean kernel never prints. */
static const struct {
	const char *pattern;
	const char *unless;
} klog_splats[] = {
	{ "BUG:" }, { "kernel BUG at" }, { "WARNING:" }, { "Oops" },
	{ "Call Trace" }, { "Call trace:" }, { "Kernel panic" },
	{ "Internal error:" }, { "Unable to handle kernel" },
	{ "general protection fault", "traps:" }, { "double fault" },
	{ "stack-protector" }, { "UBSAN:" }, { "KASAN:" }, { "KFENCE:" },
	{ "INFO: lockdep" }, { "possible recursive locking" },
	{ "possible circular locking" }, { "inconsistent lock state" },
	{ "possible irq lock inversion" }, { "suspicious RCU usage" },
	{ "detected stall" }, { "blocked for more than" }, { "soft lockup" },
	{ "hard LOCKUP" }, { "list_add corruption" },
	{ "list_del corruption" }, { "refcount_t:" },
};

static inline int klog_is_splat(const char *line)
{
	size_t i;

	for (i = 0; i < sizeof(klog_splats) / sizeof(klog_splats[0]); i++) {
		if (!strstr(line, klog_splats[i].pattern))
			continue;
		if (klog_splats[i].unless && strstr(line, klog_splats[i].unless))
			continue;
		return 1;
	}
	return 0;
}

/* /dev/kmsg positioned at its end: later scans see only new records. */
static inline int klog_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

/*
 * Splat lines logged since klog_open() or the last scan; the first one is
 * copied to @first.  -1 if the log cannot be read.
 */
static inline int klog_scan(int fd, char *first, size_t len)
{
	char rec[8192];
	int found = 0;
	ssize_t r;

	if (fd < 0)
		return -1;
	if (len)
		first[0] = '\0';
	for (;;) {
		char *text;

		r = read(fd, rec, sizeof(rec) - 1);
		if (r < 0 && errno == EPIPE)
			continue;
		if (r <= 0)
			break;
		rec[r] = '\0';
		text = strchr(rec, ';');
		text = text ? text + 1 : rec;
		text[strcspn(text, "\n")] = '\0';
		if (!klog_is_splat(text))
			continue;
		if (!found++ && len) {
			size_t n = strnlen(text, len - 1);

			memcpy(first, text, n);
			first[n] = '\0';
		}
	}
	return found;
}

#endif /* PDA_TESTS_KLOG_H */
