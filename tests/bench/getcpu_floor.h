/* SPDX-License-Identifier: GPL-2.0 */
/* libgetcpu-floor.so's one function (getcpu_floor.c), for getcpu_bench.c. */
#ifndef PDA_GETCPU_FLOOR_H
#define PDA_GETCPU_FLOOR_H

int getcpu_floor(void);

#endif /* PDA_GETCPU_FLOOR_H */
