/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Parses the kernel's CPU list format ("0-3,5,7-8"), as found in
 * /sys/devices/system/cpu/online, into a cpu_set_t.  Header only.
 */
#ifndef PDA_TESTS_CPULIST_H
#define PDA_TESTS_CPULIST_H

#include <ctype.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

/* Returns 0, or -1 if @s is not a CPU list. */
static inline int cpulist_parse(const char *s, cpu_set_t *set)
{
	CPU_ZERO(set);
	while (*s && *s != '\n') {
		char *end;
		long a, b;

		if (!isdigit((unsigned char)*s))
			return -1;
		a = strtol(s, &end, 10);
		b = a;
		if (*end == '-') {
			if (!isdigit((unsigned char)end[1]))
				return -1;
			b = strtol(end + 1, &end, 10);
		}
		if (b < a || b >= CPU_SETSIZE)
			return -1;
		for (; a <= b; a++)
			CPU_SET(a, set);
		if (*end == ',')
			end++;
		else if (*end && *end != '\n')
			return -1;
		s = end;
	}
	return 0;
}

/* Reads a CPU list file such as /sys/devices/system/cpu/online. */
static inline int cpulist_read(const char *path, cpu_set_t *set)
{
	char buf[1024];
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return cpulist_parse(buf, set);
}

#define CPULIST_ONLINE	"/sys/devices/system/cpu/online"

/* The online CPUs, lowest first, into @cpus; how many, or -1. */
static inline int cpulist_online(int *cpus, int max)
{
	cpu_set_t set;
	int i, n = 0;

	if (cpulist_read(CPULIST_ONLINE, &set))
		return -1;
	for (i = 0; i < CPU_SETSIZE && n < max; i++)
		if (CPU_ISSET(i, &set))
			cpus[n++] = i;
	return n;
}

#endif /* PDA_TESTS_CPULIST_H */
