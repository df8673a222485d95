/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the guest tests that load a test module ask of /proc/modules.
 * Header only.
 */
#ifndef PDA_TESTS_MODULE_H
#define PDA_TESTS_MODULE_H

#include <stdio.h>
#include <string.h>

/* Whether /proc/modules lists @name; -1 if it cannot be read. */
static inline int module_listed(const char *name)
{
	char line[256];
	size_t len = strlen(name);
	FILE *f = fopen("/proc/modules", "r");
	int found = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, len) && line[len] == ' ')
			found = 1;
	fclose(f);
	return found;
}

#endif
