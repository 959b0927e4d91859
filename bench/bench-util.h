/* SPDX-License-Identifier: MIT */
/*
 * bench-util.h — small pieces the kernel benchmarks of bench/ share: a
 * clock reading, the comparison for sorting times, and flushing a Conv's
 * packed weights out of the caches (as in a model run, where a layer's
 * weights were last read a whole network ago). Header-only: each bench
 * program is one .c file.
 */
#ifndef ERT_BENCH_UTIL_H
#define ERT_BENCH_UTIL_H

#include <time.h>

#include "cpu/cpu-impl.h"

/* Seconds on clock @clk (CLOCK_PROCESS_CPUTIME_ID, CLOCK_MONOTONIC, ...). */
static inline double bench_now(clockid_t clk)
{
	struct timespec t;

	clock_gettime(clk, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* qsort() comparison of doubles, ascending. */
static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The packed weights @state (a struct ert_cpu_packed, or NULL) out of every cache level. */
static inline void bench_flush_packed(const void *state)
{
#if defined(__x86_64__) || defined(__i386__)
	const struct ert_cpu_packed *pk = state;

	if (!pk || !pk->data)
		return;
	for (size_t off = 0; off < pk->bytes; off += 64)
		__builtin_ia32_clflush((const char *)pk->data + off);
	__builtin_ia32_mfence();
#else
	(void)state;
#endif
}

#endif /* ERT_BENCH_UTIL_H */
