// SPDX-License-Identifier: GPL-2.0
/*
 * What the kernel holds right after boot, for make scale's cost boots:
 * the kernel's own /proc/meminfo figures that grow with the CPU count,
 * and the guest's uptime when the program starts (under -icount, guest
 * time counts instructions, so the same kernel gives the same figure).
 * One line each, "# pda-mem: KEY=N", for the harness; exit 0, or 1 if
 * /proc could not be read.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The /proc/meminfo fields that hold kernel memory, in kB. */
static const char * const fields[] = {
	"MemTotal", "MemFree", "Percpu", "KernelStack", "Slab", "PageTables",
};

int main(void)
{
	unsigned long long kb;
	char line[256], name[64];
	double up;
	size_t i;
	FILE *f;
	int found = 0;

	f = fopen("/proc/uptime", "r");
	if (!f || fscanf(f, "%lf", &up) != 1) {
		perror("/proc/uptime");
		return 1;
	}
	fclose(f);
	printf("# pda-mem: uptime_ms=%.0f\n", up * 1000);
	printf("# pda-mem: cpus_online=%ld\n", sysconf(_SC_NPROCESSORS_ONLN));
	f = fopen("/proc/meminfo", "r");
	if (!f) {
		perror("/proc/meminfo");
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63[^:]: %llu kB", name, &kb) != 2)
			continue;
		for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
			if (strcmp(name, fields[i]))
				continue;
			printf("# pda-mem: %s_kB=%llu\n", name, kb);
			found++;
		}
	}
	fclose(f);
	return found == sizeof(fields) / sizeof(fields[0]) ? 0 : 1;
}
