// SPDX-License-Identifier: GPL-2.0
/*
 * libgetcpu-floor.so: the floor under getcpu_bench's figures.  The
 * program calls this function the way it calls sched_getcpu(), by name
 * in a shared library through the dynamic linker's tables, and it does
 * nothing else: what it costs, no sched_getcpu() in a shared library,
 * preloaded or not, can go below.
 */
#include "getcpu_floor.h"

int getcpu_floor(void)
{
	return 0;
}
