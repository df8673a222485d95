/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Scans /dev/kmsg for kernel splats (oopses, warnings, lockdep, ...) logged
 * while a guest test runs, so that a test can assert that what it did left
 * the kernel log clean; PID 1 (tests/init/init.c) judges the whole log with
 * the same list.  Header only.
 */
#ifndef PDA_TESTS_KLOG_H
#define PDA_TESTS_KLOG_H

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

/*
 * What a clean kernel never prints.  Matching is case-sensitive on
 * purpose: "Warning: unable to open an initial console." is not a splat.
 * @unless excludes lines that merely look alike.
 */
static const struct {
	const char *pattern;
	const char *unless;
} klog_splats[] = {
	{ "BUG:" },
	{ "kernel BUG at" },
	{ "WARNING:" },
	{ "Oops" },
	{ "Call Trace" },
	{ "Call trace:" },
	{ "Kernel panic" },
	{ "Internal error:" },
	{ "Unable to handle kernel" },
	/*
	 * A user-mode #GP that no handler catches is logged as
	 * "traps: prog[pid] general protection fault ip:...": that is the
	 * test's business (some selftests provoke it).  A kernel-mode one
	 * also says "Oops".
	 */
	{ "general protection fault", "traps:" },
	{ "double fault" },
	{ "stack-protector" },
	{ "UBSAN:" },
	{ "KASAN:" },
	{ "KFENCE:" },
	{ "INFO: lockdep" },
	{ "possible recursive locking" },
	{ "possible circular locking" },
	{ "inconsistent lock state" },
	{ "possible irq lock inversion" },
	{ "suspicious RCU usage" },
	{ "detected stall" },
	{ "blocked for more than" },
	{ "soft lockup" },
	{ "hard LOCKUP" },
	{ "list_add corruption" },
	{ "list_del corruption" },
	{ "refcount_t:" },
	/* A partly unpacked initramfs would just run fewer tests. */
	{ "Initramfs unpacking failed" },
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
 * The text of the next /dev/kmsg record ("prio,seq,ts,flags;text"), in
 * @rec; NULL when there is none left.  Records overwritten before we read
 * them (EPIPE) are skipped.
 */
static inline const char *klog_next(int fd, char *rec, size_t size)
{
	ssize_t r;
	char *text;

	do
		r = read(fd, rec, size - 1);
	while (r < 0 && errno == EPIPE);
	if (r <= 0)
		return NULL;
	rec[r] = '\0';
	text = strchr(rec, ';');
	text = text ? text + 1 : rec;
	text[strcspn(text, "\n")] = '\0';
	return text;
}

/*
 * Splat lines logged since klog_open() or the last scan; the first one is
 * copied to @first.  -1 if the log cannot be read.
 */
static inline int klog_scan(int fd, char *first, size_t len)
{
	char rec[8192];
	const char *text;
	int found = 0;

	if (fd < 0)
		return -1;
	if (len)
		first[0] = '\0';
	while ((text = klog_next(fd, rec, sizeof(rec)))) {
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
