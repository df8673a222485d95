// SPDX-License-Identifier: GPL-2.0
/*
 * segops_test: decode instructions given as hex, one per line:
 *
 *	32|64 HEXBYTES		->	KIND OPERAND_READS
 *
 * For tests/host/census, which assembles each instruction with as(1)
 * and checks the decoder's answer.
 */
#include <stdio.h>
#include <string.h>

#include "segops.h"

int main(void)
{
	char line[256];

	while (fgets(line, sizeof(line), stdin)) {
		unsigned char bytes[16];
		struct segop op;
		size_t n = 0;
		int bits, off;
		char *p;

		if (sscanf(line, "%d %n", &bits, &off) != 1 ||
		    (bits != 32 && bits != 64)) {
			fprintf(stderr, "segops_test: bad line: %s", line);
			return 2;
		}
		for (p = line + off; n < sizeof(bytes) &&
		     sscanf(p, "%2hhx", &bytes[n]) == 1; p += 2)
			n++;
		if (segop_decode(bytes, n, bits == 64, &op)) {
			printf("short 0\n");
			continue;
		}
		printf("%s %u\n", segop_name(op.kind), op.operand_reads);
	}
	return 0;
}
