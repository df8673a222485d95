/* SPDX-License-Identifier: GPL-2.0 */
/* xorshift32: a cheap, per-thread PRNG for the guest tests. */
#ifndef PDA_TESTS_XORSHIFT_H
#define PDA_TESTS_XORSHIFT_H

#include <stdint.h>

/* @state must not be 0. */
static inline uint32_t xorshift32(uint32_t *state)
{
	uint32_t x = *state;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*state = x;
	return x;
}

#endif /* PDA_TESTS_XORSHIFT_H */
