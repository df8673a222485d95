// SPDX-License-Identifier: GPL-2.0
/*
 * segcensus: a QEMU 7.2 TCG plugin (x86 system emulation) that counts, in
 * windows the guest opens and closes with census_marker.h's marker, every
 * executed instruction that writes a segment register or looks at a
 * descriptor (segops.h), user and kernel mode apart, plus the instructions
 * executed and the user-to-kernel entries.
 *
 *	qemu-system-i386 -icount shift=0 \
 *		-plugin segcensus.so,out=FILE,kernel=0xc0000000,bits=32 ...
 *
 * kernel=ADDR: code at or above ADDR is kernel code (PAGE_OFFSET on i386;
 * 0xffff800000000000 on x86-64, where user code ends far below).  The
 * plugin API of 7.2 reads no registers, so the mode comes from the address.
 * bits=32|64: the kernel's code size; user code's comes from the marker
 * that opened the window (a 64-bit kernel runs 32-bit programs).
 *
 * A selector load is null or not by what it read: loading a non-null
 * selector makes the CPU read the descriptor, which QEMU's helper does
 * through the same memory callbacks as the instruction's own operand.
 *
 * One line per window:
 *	census id=ID seq=N bits=32|64 scope=cpu|all u.insns=X k.insns=Y \
 *		entries=Z [u|k].KIND[.null|.sel]=COUNT ...
 * A window counts what the vCPU that opened it runs (CENSUS_LOCAL), or
 * what every vCPU runs (a migration, which ends on another CPU).  Run it
 * under -icount: vCPUs then run in turn on one thread, so the counters
 * need no locks, the instructions of each vCPU are the global counter's
 * steps between two changes of vCPU, and the counts repeat exactly from
 * boot to boot.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "census_marker.h"
#include "qemu_plugin_api.h"
#include "segops.h"

__attribute__((visibility("default")))
int qemu_plugin_version = SEGCENSUS_PLUGIN_API;

#define MAX_VCPUS	64
#define MODE_USER	0
#define MODE_KERNEL	1

/* A load's counters: [mode][kind][non-null]. */
static uint64_t loads[2][SEGOP_NR][2];
static uint64_t other[2][SEGOP_NR];
/* Bumped inline at every instruction; read as differences. */
static uint64_t insns[2];
/* Split by vCPU: the global counts at the last change of vCPU. */
static uint64_t vcpu_insns[MAX_VCPUS][2];
static uint64_t insns_mark[2];
static int running_vcpu = -1;
static uint64_t insns_open[2];
static uint64_t entries;
static int window_vcpu = -1;	/* -1: every vCPU counts */

static FILE *out;
static uint64_t kernel_base;
static int kernel_bits;
static int user_bits;
static int open_id = -1;
static unsigned long seq;

/* What one translated instruction is, for its callbacks. */
struct insn_info {
	uint8_t mode;
	uint8_t marker_op;		/* 0: not a marker */
	uint8_t marker_local;
	uint16_t marker_id;
	/* user code: both decodings, the window's marker picks one */
	struct segop op32, op64;
};

/* A selector load under way on a vCPU: it reads, then the next insn runs. */
struct pending {
	const struct segop *op;
	uint8_t mode;
	unsigned int reads;
};

static struct pending pending[MAX_VCPUS];
static uint8_t last_mode[MAX_VCPUS];

static int counting(unsigned int vcpu)
{
	return open_id >= 0 && (window_vcpu < 0 || (int)vcpu == window_vcpu);
}

/* Give the instructions since the last change of vCPU to the one that ran. */
static void attribute(void)
{
	int m;

	if (running_vcpu < 0)
		return;
	for (m = 0; m < 2; m++) {
		vcpu_insns[running_vcpu][m] += insns[m] - insns_mark[m];
		insns_mark[m] = insns[m];
	}
}

static const uint64_t *window_insns(void)
{
	return window_vcpu < 0 ? insns : vcpu_insns[window_vcpu];
}

static void settle(unsigned int vcpu)
{
	struct pending *p = &pending[vcpu];

	if (!p->op)
		return;
	if (counting(vcpu))
		loads[p->mode][p->op->kind][p->reads > p->op->operand_reads]++;
	p->op = NULL;
}

static void emit(void)
{
	const uint64_t *now = window_insns();
	int mode, k;

	fprintf(out, "census id=%d seq=%lu bits=%d scope=%s u.insns=%llu k.insns=%llu entries=%llu",
		open_id, seq++, user_bits, window_vcpu < 0 ? "all" : "cpu",
		(unsigned long long)(now[MODE_USER] - insns_open[MODE_USER]),
		(unsigned long long)(now[MODE_KERNEL] - insns_open[MODE_KERNEL]),
		(unsigned long long)entries);
	for (mode = 0; mode < 2; mode++) {
		const char *m = mode == MODE_USER ? "u" : "k";

		for (k = 1; k < SEGOP_NR; k++) {
			if (loads[mode][k][0])
				fprintf(out, " %s.%s.null=%llu", m, segop_name(k),
					(unsigned long long)loads[mode][k][0]);
			if (loads[mode][k][1])
				fprintf(out, " %s.%s.sel=%llu", m, segop_name(k),
					(unsigned long long)loads[mode][k][1]);
			if (other[mode][k])
				fprintf(out, " %s.%s=%llu", m, segop_name(k),
					(unsigned long long)other[mode][k]);
		}
	}
	fputc('\n', out);
	fflush(out);
}

static void marker(unsigned int vcpu, const struct insn_info *ii)
{
	unsigned int v;

	for (v = 0; v < MAX_VCPUS; v++)
		settle(v);
	attribute();
	if (ii->marker_op == CENSUS_OP_CLOSE) {
		if (open_id != ii->marker_id)
			fprintf(out, "census error: close of %d, open is %d\n",
				ii->marker_id, open_id);
		else if (window_vcpu >= 0 && (int)vcpu != window_vcpu)
			/* It migrated: this vCPU's share was not counted. */
			fprintf(out, "census error: window %d opened on vCPU %d closed on %u\n",
				open_id, window_vcpu, vcpu);
		else
			emit();
		open_id = -1;
		return;
	}
	if (open_id >= 0)
		fprintf(out, "census error: open of %d inside %d\n",
			ii->marker_id, open_id);
	memset(loads, 0, sizeof(loads));
	memset(other, 0, sizeof(other));
	window_vcpu = ii->marker_local ? (int)vcpu : -1;
	memcpy(insns_open, window_insns(), sizeof(insns_open));
	entries = 0;
	user_bits = ii->marker_op == CENSUS_OP_OPEN64 ? 64 : 32;
	open_id = ii->marker_id;
}

static const struct segop *op_of(const struct insn_info *ii)
{
	if (ii->mode == MODE_KERNEL)
		return kernel_bits == 64 ? &ii->op64 : &ii->op32;
	return user_bits == 64 ? &ii->op64 : &ii->op32;
}

static void on_exec(unsigned int vcpu, void *udata)
{
	const struct insn_info *ii = udata;
	const struct segop *op;

	if (vcpu >= MAX_VCPUS)
		return;
	settle(vcpu);
	if (ii->marker_op) {
		marker(vcpu, ii);
		return;
	}
	op = op_of(ii);
	if (!counting(vcpu) || op->kind == SEGOP_NONE)
		return;
	if (segop_is_load(op->kind)) {
		pending[vcpu] = (struct pending){ .op = op, .mode = ii->mode };
		return;
	}
	other[ii->mode][op->kind]++;
}

static void on_mem(unsigned int vcpu, qemu_plugin_meminfo_t info,
		   uint64_t vaddr, void *udata)
{
	(void)vaddr;
	(void)udata;
	if (vcpu < MAX_VCPUS && pending[vcpu].op &&
	    !qemu_plugin_mem_is_store(info))
		pending[vcpu].reads++;
}

/* The first instruction of every TB: where user-to-kernel entries show. */
static void on_tb(unsigned int vcpu, void *udata)
{
	uint8_t mode = (uintptr_t)udata;

	if (vcpu >= MAX_VCPUS)
		return;
	if ((int)vcpu != running_vcpu) {
		attribute();
		running_vcpu = vcpu;
	}
	settle(vcpu);
	if (counting(vcpu) && last_mode[vcpu] == MODE_USER &&
	    mode == MODE_KERNEL)
		entries++;
	last_mode[vcpu] = mode;
}

static int is_marker(const uint8_t *p, size_t len, struct insn_info *ii)
{
	uint32_t disp;

	if (len != CENSUS_MARKER_LEN || p[0] != 0x0f || p[1] != 0x1f ||
	    p[2] != 0x84 || p[3] != 0x00)
		return 0;
	disp = p[4] | p[5] << 8 | p[6] << 16 | (uint32_t)p[7] << 24;
	if ((disp & CENSUS_MAGIC_MASK) != CENSUS_MAGIC)
		return 0;
	ii->marker_op = (disp >> CENSUS_OP_SHIFT) & 0xf;
	ii->marker_id = disp & CENSUS_ID_MASK;
	ii->marker_local = !!(disp & CENSUS_LOCAL);
	return ii->marker_op >= CENSUS_OP_OPEN32 &&
	       ii->marker_op <= CENSUS_OP_CLOSE;
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);

	(void)id;
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		const uint8_t *p = qemu_plugin_insn_data(insn);
		size_t len = qemu_plugin_insn_size(insn);
		uint8_t mode = qemu_plugin_insn_vaddr(insn) >= kernel_base ?
			       MODE_KERNEL : MODE_USER;
		struct insn_info ii = { .mode = mode };
		struct insn_info *keep;

		qemu_plugin_register_vcpu_insn_exec_inline(insn,
							   QEMU_PLUGIN_INLINE_ADD_U64,
							   &insns[mode], 1);
		if (i == 0)
			qemu_plugin_register_vcpu_tb_exec_cb(tb, on_tb,
							     QEMU_PLUGIN_CB_NO_REGS,
							     (void *)(uintptr_t)mode);
		if (mode == MODE_USER && is_marker(p, len, &ii)) {
			ii.op32.kind = SEGOP_NONE;
			ii.op64.kind = SEGOP_NONE;
		} else {
			ii.marker_op = 0;
			if (mode == MODE_USER || kernel_bits == 32)
				segop_decode(p, len, 0, &ii.op32);
			if (mode == MODE_USER || kernel_bits == 64)
				segop_decode(p, len, 1, &ii.op64);
			if (ii.op32.kind == SEGOP_NONE &&
			    ii.op64.kind == SEGOP_NONE)
				continue;
		}
		/*
		 * Kept for as long as QEMU may run this translation: QEMU 7.2
		 * tells a plugin nothing when it drops one.  Bounded by the
		 * segment instructions the guest ever translates.
		 */
		keep = malloc(sizeof(*keep));
		if (!keep)
			abort();
		*keep = ii;
		qemu_plugin_register_vcpu_insn_exec_cb(insn, on_exec,
						       QEMU_PLUGIN_CB_NO_REGS,
						       keep);
		if (segop_is_load(ii.op32.kind) || segop_is_load(ii.op64.kind))
			qemu_plugin_register_vcpu_mem_cb(insn, on_mem,
							 QEMU_PLUGIN_CB_NO_REGS,
							 QEMU_PLUGIN_MEM_RW,
							 NULL);
	}
}

static void on_qemu_exit(qemu_plugin_id_t id, void *udata)
{
	(void)id;
	(void)udata;
	if (open_id >= 0)
		fprintf(out, "census error: window %d still open at exit\n",
			open_id);
	fclose(out);
}

static int parse_args(int argc, char **argv, const char **path)
{
	int i;

	for (i = 0; i < argc; i++) {
		char *end;

		if (!strncmp(argv[i], "out=", 4)) {
			*path = argv[i] + 4;
		} else if (!strncmp(argv[i], "kernel=", 7)) {
			errno = 0;
			kernel_base = strtoull(argv[i] + 7, &end, 0);
			if (errno || *end || end == argv[i] + 7)
				return -1;
		} else if (!strcmp(argv[i], "bits=32") ||
			   !strcmp(argv[i], "bits=64")) {
			kernel_bits = atoi(argv[i] + 5);
		} else {
			return -1;
		}
	}
	return *path && kernel_base && kernel_bits ? 0 : -1;
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
			int argc, char **argv)
{
	const char *path = NULL;

	if (!info->system_emulation ||
	    (strcmp(info->target_name, "i386") &&
	     strcmp(info->target_name, "x86_64"))) {
		qemu_plugin_outs("segcensus: x86 system emulation only\n");
		return -1;
	}
	if (parse_args(argc, argv, &path)) {
		qemu_plugin_outs("segcensus: usage: out=FILE,kernel=ADDR,bits=32|64\n");
		return -1;
	}
	if (info->system.max_vcpus > MAX_VCPUS) {
		qemu_plugin_outs("segcensus: too many vCPUs\n");
		return -1;
	}
	out = fopen(path, "w");
	if (!out) {
		qemu_plugin_outs("segcensus: cannot open the out= file\n");
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, on_qemu_exit, NULL);
	return 0;
}
