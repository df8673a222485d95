// SPDX-License-Identifier: GPL-2.0
/*
 * Reduction of trials to the two figures reported: the minimum (the cost
 * with nothing in the way, what the hardware can do) and the median (what
 * a run typically sees; unlike the mean it ignores the odd trial that
 * took an interrupt or a migration).
 */
#include "segbench.h"

/* Insertion sort: there are tens of trials, and it keeps NaN out of it. */
void sb_sort(double *v, size_t n)
{
	size_t i, j;

	for (i = 1; i < n; i++) {
		double x = v[i];

		for (j = i; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

double sb_min(const double *v, size_t n)
{
	double m;
	size_t i;

	if (!n)
		return -1.0;
	m = v[0];
	for (i = 1; i < n; i++)
		if (v[i] < m)
			m = v[i];
	return m;
}

/* Sorts @v in place. An even count gives the mean of the middle two. */
double sb_median(double *v, size_t n)
{
	if (!n)
		return -1.0;
	sb_sort(v, n);
	if (n & 1)
		return v[n / 2];
	return (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/*
 * Turn raw trial times into cost per measured op: take away the empty
 * loop (@overhead ticks per iteration, measured the same way), then
 * divide by the ops done. A trial faster than the empty loop means the op
 * hid entirely in the loop's own latency; it costs nothing we can see, so
 * it is 0, not negative.
 */
void sb_per_op(double *v, size_t n, const uint64_t *ticks,
	       unsigned long iters, unsigned int ops, double overhead)
{
	size_t i;

	for (i = 0; i < n; i++) {
		double t = (double)ticks[i] - overhead * (double)iters;

		if (t < 0)
			t = 0;
		v[i] = t / ((double)iters * (ops ? ops : 1));
	}
}

/* How many times the reference; -1 when either side is missing. */
double sb_ratio(double value, double ref)
{
	if (value < 0 || ref <= 0)
		return -1.0;
	return value / ref;
}
