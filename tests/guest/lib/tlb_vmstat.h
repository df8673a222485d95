/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tlbi_broadcast/local/skipped/catchup counters of /proc/vmstat,
 * which an arm64 kernel with CONFIG_ARM64_TLBI_LOCAL keeps: reading them
 * (tlb_vmstat_read()), their growth (tlb_vm_delta(), TLB_VMSTAT_PRINT()),
 * whether the kernel was booted with tlbi_local=on (tlb_local_on()), what
 * it said about it (tlb_kernel_says()), TLB_EXPECT_OFF_UNCOUNTED(), which
 * fails when they grow with the option off, and TLB_EXPECT_COUNTERS(),
 * which fails on arm64 when they are missing.  lib/tlb_test.h's checks and
 * tlb_module use them.
 *
 * Header only.  Wants kselftest_harness.h included before it.
 */
#ifndef PDA_TESTS_TLB_VMSTAT_H
#define PDA_TESTS_TLB_VMSTAT_H

#ifndef TH_LOG
#error "include kselftest_harness.h before lib/tlb_vmstat.h"
#endif

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmdline.h"
#include "klog.h"

/* ----------------------------------------------------------- vmstat */

enum {
	TLB_VM_BCAST,
	TLB_VM_LOCAL,
	TLB_VM_SKIPPED,
	TLB_VM_CATCHUP,
	TLB_VM_NR
};

static const char *const tlb_vm_name[TLB_VM_NR] = {
	"tlbi_broadcast", "tlbi_local", "tlbi_skipped", "tlbi_catchup",
};

#ifndef TLB_VMSTAT_PATH
#define TLB_VMSTAT_PATH		"/proc/vmstat"
#endif

struct tlb_vmstat {
	int present;			/* how many of the four lines exist */
	unsigned long long v[TLB_VM_NR];
};

/* Reads the tlbi_* lines of /proc/vmstat (absent: present == 0). */
static inline void tlb_vmstat_read(struct tlb_vmstat *s)
{
	static char buf[64 * 1024];
	size_t have = 0;
	ssize_t n;
	char *line, *save;
	int fd, k;

	memset(s, 0, sizeof(*s));
	/*
	 * After a fork() the buffer is copy-on-write: break that before the
	 * counters are read, or the read's own fault would be counted as a
	 * flush of the test's (tlb_flush_begin() and _end()).
	 */
	memset(buf, 0, sizeof(buf));
	fd = open(TLB_VMSTAT_PATH, O_RDONLY);
	if (fd < 0)
		return;
	while (have < sizeof(buf) - 1 &&
	       (n = read(fd, buf + have, sizeof(buf) - 1 - have)) > 0)
		have += n;
	close(fd);
	buf[have] = '\0';
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		for (k = 0; k < TLB_VM_NR; k++) {
			size_t l = strlen(tlb_vm_name[k]);

			if (!strncmp(line, tlb_vm_name[k], l) &&
			    line[l] == ' ') {
				s->v[k] = strtoull(line + l + 1, NULL, 10);
				s->present++;
			}
		}
	}
}

/*
 * tlbi_local=on on the command line (kstrtobool()'s spellings, as the
 * kernel reads it).  Without it the option is off and every flush
 * broadcasts.
 */
static inline int tlb_local_on(void)
{
	char val[32];

	if (cmdline_get("tlbi_local", val, sizeof(val)) || !val[0])
		return 0;
	return strchr("yYtT1", val[0]) ||
	       ((val[0] == 'o' || val[0] == 'O') &&
		(val[1] == 'n' || val[1] == 'N'));
}

/*
 * The kernel's own word on the local path: its last "tlbi_local: ..."
 * boot message (e.g. "tlbi_local: off (CnP shares ...)") into @buf,
 * or "no tlbi_local: message in /dev/kmsg".
 */
static inline const char *tlb_kernel_says(char *buf, size_t len)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	const char *text, *hit;
	char rec[1024];

	snprintf(buf, len, "no \"tlbi_local:\" message in /dev/kmsg");
	if (fd < 0)
		return buf;
	while ((text = klog_next(fd, rec, sizeof(rec))))
		if ((hit = strstr(text, "tlbi_local: ")))
			snprintf(buf, len, "%s", hit);
	close(fd);
	return buf;
}

static inline unsigned long long tlb_vm_delta(const struct tlb_vmstat *a,
					      const struct tlb_vmstat *b,
					      int k)
{
	return b->v[k] - a->v[k];
}

/* Prints the counters' growth from @a to @b during @what. */
#define TLB_VMSTAT_PRINT(what, a, b)					\
	do {								\
		if ((a)->present != TLB_VM_NR ||			\
		    (b)->present != TLB_VM_NR) {			\
			TH_LOG("%s: no tlbi_* counters in /proc/vmstat (kernel without CONFIG_ARM64_TLBI_LOCAL, or without VM_EVENT_COUNTERS)", \
			       what);					\
			break;						\
		}							\
		TH_LOG("%s: tlbi_broadcast +%llu tlbi_local +%llu tlbi_skipped +%llu tlbi_catchup +%llu", \
		       what, tlb_vm_delta(a, b, TLB_VM_BCAST),		\
		       tlb_vm_delta(a, b, TLB_VM_LOCAL),		\
		       tlb_vm_delta(a, b, TLB_VM_SKIPPED),		\
		       tlb_vm_delta(a, b, TLB_VM_CATCHUP));		\
	} while (0)

/*
 * Booted without tlbi_local=on, every flush takes mainline's path and
 * counts nothing: none of the four counters may grow from @a to @b.
 */
#define TLB_EXPECT_OFF_UNCOUNTED(what, a, b)				\
	do {								\
		unsigned long long __n = 0;				\
		int __k;						\
									\
		if (tlb_local_on() || (a)->present != TLB_VM_NR ||	\
		    (b)->present != TLB_VM_NR)				\
			break;						\
		for (__k = 0; __k < TLB_VM_NR; __k++)			\
			__n += tlb_vm_delta(a, b, __k);			\
		EXPECT_EQ(0ULL, __n) {					\
			TH_LOG("%s: booted without tlbi_local=on, yet flushes were counted (local, skipped or broadcast): the off path is not mainline's", \
			       what);					\
		}							\
	} while (0)

/* No counters: a failure on arm64, where the kernel must have them. */
#ifdef __aarch64__
#define TLB_EXPECT_COUNTERS(what)					\
	EXPECT_TRUE(0) {						\
		TH_LOG("%s: no tlbi_* counters in /proc/vmstat: an arm64 kernel without CONFIG_ARM64_TLBI_LOCAL or VM_EVENT_COUNTERS", \
		       what);						\
	}
#else
#define TLB_EXPECT_COUNTERS(what)	do { } while (0)
#endif

#endif /* PDA_TESTS_TLB_VMSTAT_H */
