// SPDX-License-Identifier: GPL-2.0
/*
 * A decoder for just the instructions in segops.h: legacy prefixes, REX,
 * then the one- and two-byte opcodes that touch segment state.  Anything
 * else decodes as SEGOP_NONE; the decoder never needs instruction lengths
 * because QEMU hands it one instruction at a time.
 */
#include "segops.h"

static const char *const names[SEGOP_NR] = {
	[SEGOP_NONE] = "none",
	[SEGOP_MOV_ES] = "mov.es", [SEGOP_MOV_SS] = "mov.ss",
	[SEGOP_MOV_DS] = "mov.ds", [SEGOP_MOV_FS] = "mov.fs",
	[SEGOP_MOV_GS] = "mov.gs",
	[SEGOP_POP_ES] = "pop.es", [SEGOP_POP_SS] = "pop.ss",
	[SEGOP_POP_DS] = "pop.ds", [SEGOP_POP_FS] = "pop.fs",
	[SEGOP_POP_GS] = "pop.gs",
	[SEGOP_LES] = "les", [SEGOP_LSS] = "lss", [SEGOP_LDS] = "lds",
	[SEGOP_LFS] = "lfs", [SEGOP_LGS] = "lgs",
	[SEGOP_IRET] = "iret", [SEGOP_LRET] = "lret",
	[SEGOP_LJMP] = "ljmp", [SEGOP_LCALL] = "lcall",
	[SEGOP_SYSEXIT] = "sysexit", [SEGOP_SYSRET] = "sysret",
	[SEGOP_INT] = "int", [SEGOP_SYSENTER] = "sysenter",
	[SEGOP_SYSCALL] = "syscall",
	[SEGOP_SWAPGS] = "swapgs", [SEGOP_WRFSBASE] = "wrfsbase",
	[SEGOP_WRGSBASE] = "wrgsbase",
	[SEGOP_LSL] = "lsl", [SEGOP_LAR] = "lar", [SEGOP_VERR] = "verr",
	[SEGOP_VERW] = "verw", [SEGOP_LLDT] = "lldt",
};

const char *segop_name(enum segop_kind k)
{
	return k < SEGOP_NR ? names[k] : "?";
}

/* The sreg field of mov Sreg, r/m (8e /r): ES CS SS DS FS GS. */
static const enum segop_kind mov_sreg[8] = {
	SEGOP_MOV_ES, SEGOP_NONE, SEGOP_MOV_SS, SEGOP_MOV_DS,
	SEGOP_MOV_FS, SEGOP_MOV_GS, SEGOP_NONE, SEGOP_NONE,
};

#define MODRM_MOD(m)	((m) >> 6)
#define MODRM_REG(m)	(((m) >> 3) & 7)

static int is_legacy_prefix(uint8_t b)
{
	switch (b) {
	case 0x26: case 0x2e: case 0x36: case 0x3e: case 0x64: case 0x65:
	case 0x66: case 0x67: case 0xf0: case 0xf2: case 0xf3:
		return 1;
	}
	return 0;
}

static void set(struct segop *op, enum segop_kind k, unsigned int reads)
{
	op->kind = k;
	op->operand_reads = reads;
}

/* 0f xx opcodes that need no ModRM byte to tell what they are. */
static const struct segop op0f_plain[256] = {
	[0xa1] = { SEGOP_POP_FS, 1 },	[0xa9] = { SEGOP_POP_GS, 1 },
	[0x35] = { SEGOP_SYSEXIT, 0 },	[0x07] = { SEGOP_SYSRET, 0 },
	[0x34] = { SEGOP_SYSENTER, 0 },	[0x05] = { SEGOP_SYSCALL, 0 },
	[0x02] = { SEGOP_LAR, 0 },	[0x03] = { SEGOP_LSL, 0 },
};

/* One-byte opcodes the same in 32- and 64-bit mode, without a ModRM. */
static const struct segop op_plain[256] = {
	[0xcf] = { SEGOP_IRET, 0 },
	[0xca] = { SEGOP_LRET, 0 },	[0xcb] = { SEGOP_LRET, 0 },
	[0xcc] = { SEGOP_INT, 0 },	[0xcd] = { SEGOP_INT, 0 },
};

static int decode_0f(const uint8_t *p, size_t len, int mode64, int rep,
		     struct segop *op)
{
	uint8_t m;

	if (op0f_plain[p[0]].kind != SEGOP_NONE) {
		*op = op0f_plain[p[0]];
		return 0;
	}
	switch (p[0]) {
	case 0xb2: case 0xb4: case 0xb5: case 0x00: case 0x01: case 0xae:
		if (len < 2)
			return -1;
		break;
	default:
		return 0;
	}
	m = p[1];
	switch (p[0]) {
	case 0xb2: case 0xb4: case 0xb5:
		if (MODRM_MOD(m) != 3)
			set(op, p[0] == 0xb2 ? SEGOP_LSS :
			    p[0] == 0xb4 ? SEGOP_LFS : SEGOP_LGS, 2);
		return 0;
	case 0x00:
		if (MODRM_REG(m) == 2)
			set(op, SEGOP_LLDT, 0);
		else if (MODRM_REG(m) == 4)
			set(op, SEGOP_VERR, 0);
		else if (MODRM_REG(m) == 5)
			set(op, SEGOP_VERW, 0);
		return 0;
	case 0x01:
		if (mode64 && m == 0xf8)
			set(op, SEGOP_SWAPGS, 0);
		return 0;
	case 0xae:
		/* f3 0f ae /2 and /3 with a register operand; /0 /1 read */
		if (rep && MODRM_MOD(m) == 3 && MODRM_REG(m) == 2)
			set(op, SEGOP_WRFSBASE, 0);
		else if (rep && MODRM_MOD(m) == 3 && MODRM_REG(m) == 3)
			set(op, SEGOP_WRGSBASE, 0);
		return 0;
	}
	return 0;
}

int segop_decode(const uint8_t *p, size_t len, int mode64, struct segop *op)
{
	size_t i = 0;
	int rep = 0;
	uint8_t b, m;

	set(op, SEGOP_NONE, 0);
	while (i < len && is_legacy_prefix(p[i]))
		rep |= p[i++] == 0xf3;
	if (mode64 && i < len && (p[i] & 0xf0) == 0x40)
		i++;
	if (i >= len)
		return -1;
	b = p[i++];
	if (op_plain[b].kind != SEGOP_NONE) {
		*op = op_plain[b];
		return 0;
	}
	switch (b) {
	case 0x07: case 0x17: case 0x1f:
		if (!mode64)
			set(op, b == 0x07 ? SEGOP_POP_ES :
			    b == 0x17 ? SEGOP_POP_SS : SEGOP_POP_DS, 1);
		return 0;
	case 0xce:
		if (!mode64)
			set(op, SEGOP_INT, 0);
		return 0;
	case 0xea: case 0x9a:
		if (!mode64)
			set(op, b == 0xea ? SEGOP_LJMP : SEGOP_LCALL, 0);
		return 0;
	case 0x0f:
		if (i >= len)
			return -1;
		return decode_0f(p + i, len - i, mode64, rep, op);
	}
	if (b != 0x8e && b != 0xc4 && b != 0xc5 && b != 0xff)
		return 0;
	if (i >= len)
		return -1;
	m = p[i];
	switch (b) {
	case 0x8e:
		if (mov_sreg[MODRM_REG(m)] != SEGOP_NONE)
			set(op, mov_sreg[MODRM_REG(m)], MODRM_MOD(m) != 3);
		break;
	case 0xc4: case 0xc5:
		/* VEX prefixes in 64-bit mode, and whenever mod is 3 */
		if (!mode64 && MODRM_MOD(m) != 3)
			set(op, b == 0xc4 ? SEGOP_LES : SEGOP_LDS, 2);
		break;
	case 0xff:
		if (MODRM_MOD(m) != 3 && MODRM_REG(m) == 3)
			set(op, SEGOP_LCALL, 0);
		else if (MODRM_MOD(m) != 3 && MODRM_REG(m) == 5)
			set(op, SEGOP_LJMP, 0);
		break;
	}
	return 0;
}
