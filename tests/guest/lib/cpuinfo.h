/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The CPU's feature flags as the kernel reports them in /proc/cpuinfo: what
 * the kernel found and kept, not what CPUID offers.  Header only.
 */
#ifndef PDA_TESTS_CPUINFO_H
#define PDA_TESTS_CPUINFO_H

#include <stdio.h>
#include <string.h>

/* Is @flag among the first CPU's flags in /proc/cpuinfo?  -1: unreadable */
static inline int cpuinfo_flag(const char *flag)
{
	char line[4096], *tok, *save;
	FILE *f = fopen("/proc/cpuinfo", "r");
	int found = -1;

	if (!f)
		return -1;
	while (found < 0 && fgets(line, sizeof(line), f)) {
		char *list = strchr(line, ':');

		if (strncmp(line, "flags", 5) || !list)
			continue;
		found = 0;
		for (tok = strtok_r(list + 1, " \n", &save); tok;
		     tok = strtok_r(NULL, " \n", &save))
			if (!strcmp(tok, flag))
				found = 1;
	}
	fclose(f);
	return found;
}

#endif
