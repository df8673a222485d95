// SPDX-License-Identifier: GPL-2.0
/*
 * Selector set-up for the segment benchmarks (x86, 32- and 64-bit).
 *
 * The TLS and LDT descriptors get a non-zero base (a static buffer) so a
 * load through them goes through the base adder for real; the flat user
 * data segment has base 0. Both are plain 32-bit read/write data.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <asm/ldt.h>
#include <sys/syscall.h>
#include "segs.h"

struct sb_seg sb_segs[SEL_NR];

static struct sb_slot uds_word, tls_buf[4], ldt_buf[4];

static void desc_for(struct user_desc *d, void *base)
{
	memset(d, 0, sizeof(*d));
	d->base_addr = (unsigned int)(uintptr_t)base;
	d->limit = 0xfffff;
	d->seg_32bit = 1;
	d->limit_in_pages = 1;
	d->useable = 1;
}

void sb_segs_init(void)
{
	static int done;
	struct sb_seg *s = sb_segs;
	struct user_desc d;
	unsigned int uds;

	if (done)
		return;
	done = 1;

	s[SEL_NULL].name = "null";
	s[SEL_NULL].ok = 1;

	/* %ss always holds the flat user data selector, in both modes. */
	asm volatile("mov %%ss, %0" : "=r" (uds));
	s[SEL_UDS].name = "user_ds";
	s[SEL_UDS].sel = uds & 0xffff;
	s[SEL_UDS].off = (uintptr_t)&uds_word;
	s[SEL_UDS].ok = 1;

	s[SEL_TLS].name = "tls";
	desc_for(&d, tls_buf);
	d.entry_number = -1;
	if (syscall(SYS_set_thread_area, &d) == 0) {
		s[SEL_TLS].sel = d.entry_number * 8 + 3;
		s[SEL_TLS].base = (uintptr_t)tls_buf;
		s[SEL_TLS].ok = 1;
	} else {
		snprintf(s[SEL_TLS].why, SB_REASON_LEN,
			 "set_thread_area: %s", strerror(errno));
	}

	s[SEL_LDT].name = "ldt";
	desc_for(&d, ldt_buf);
	d.entry_number = 0;
	/* func 0x11: write an entry, in the modern format. */
	if (syscall(SYS_modify_ldt, 0x11, &d, sizeof(d)) == 0) {
		s[SEL_LDT].sel = 0 * 8 + 4 + 3;	/* index 0, TI = LDT, RPL 3 */
		s[SEL_LDT].base = (uintptr_t)ldt_buf;
		s[SEL_LDT].ok = 1;
	} else {
		snprintf(s[SEL_LDT].why, SB_REASON_LEN, "modify_ldt: %s%s",
			 strerror(errno), errno == ENOSYS ?
			 " (CONFIG_MODIFY_LDT_SYSCALL off)" : "");
	}
}

int sb_seg_usable(int s, int use, char *why)
{
	sb_segs_init();
	if (!sb_segs[s].ok) {
		snprintf(why, SB_REASON_LEN, "%s", sb_segs[s].why);
		return -1;
	}
	if (use && s == SEL_NULL) {
		snprintf(why, SB_REASON_LEN, "null selector cannot address");
		return -1;
	}
	return 0;
}
