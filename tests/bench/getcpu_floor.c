// SPDX-License-Identifier: GPL-2.0
/*
 * libgetcpu-floor.so: the floor under getcpu_bench's figures.  The
 * program reaches this function the way it reaches sched_getcpu(), in a
 * shared library through the dynamic linker's tables, and the function
 * does nothing else, so what it costs is what no sched_getcpu() in a
 * shared library, preloaded or not, can go below.
 */
int getcpu_floor(void)
{
	return 0;
}
