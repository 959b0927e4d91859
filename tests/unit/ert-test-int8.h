/* SPDX-License-Identifier: MIT */
/*
 * ert-test-int8.h — the int8 level tests' common part (test-int8-levels,
 * test-int8-pool-levels): random byte inputs, zero points and scales for a
 * struct one (ert-op-test.h), and running a node at every kernel level the
 * CPU has against the scalar level, byte for byte. A test program includes
 * it once; the inputs come from its one seed.
 */
#ifndef ERT_TEST_INT8_H
#define ERT_TEST_INT8_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu-impl.h"
#include "ert-op-test.h"
#include "ert-test.h"

static uint32_t seed = 2024;

/* Input @i of @o: @dt (int8 or uint8) of @dims, uniformly random bytes. */
static inline void in_bytes(struct one *o, uint32_t i, ert_dtype dt, int32_t rank,
			    const int64_t *dims)
{
	struct ert_value *v = one_in_alloc(o, i, dt, rank, dims);
	uint8_t *p = v->data;

	for (int64_t k = 0; k < v->numel; k++)
		p[k] = (uint8_t)(lcg_next(&seed) >> 13);
}

/* Input @i: @n zero points of @dt (rank 0 when @n is 0) in [lo, hi]. */
static inline void in_zp(struct one *o, uint32_t i, ert_dtype dt, int64_t n, int lo, int hi)
{
	struct ert_value *v = one_in_alloc(o, i, dt, n ? 1 : 0, &n);

	for (int64_t k = 0; k < v->numel; k++) {
		int z = lo + (int)(lcg_next(&seed) >> 8) % (hi - lo + 1);

		if (dt == ERT_DTYPE_UINT8)
			((uint8_t *)v->data)[k] = (uint8_t)z;
		else
			((int8_t *)v->data)[k] = (int8_t)z;
	}
}

/* Input @i: @n float32 scales (rank 0 when @n is 0), base * (0.7 .. 1.3). */
static inline void in_scales(struct one *o, uint32_t i, int64_t n, float base, bool jitter)
{
	struct ert_value *v = one_in_alloc(o, i, ERT_DTYPE_FLOAT32, n ? 1 : 0, &n);

	for (int64_t k = 0; k < v->numel; k++)
		((float *)v->data)[k] = jitter ? base * (1.0f + 0.3f * frand_r(&seed)) : base;
}

static inline void in_i32(struct one *o, uint32_t i, int32_t rank, const int64_t *dims,
			  int range)
{
	struct ert_value *v = one_in_alloc(o, i, ERT_DTYPE_INT32, rank, dims);

	for (int64_t k = 0; k < v->numel; k++)
		((int32_t *)v->data)[k] = (int32_t)(lcg_next(&seed) % (uint32_t)(2 * range + 1)) - range;
}

/* Index of the first element where @a and @b differ, or -1. */
static inline int64_t first_diff(const struct ert_value *a, const struct ert_value *b)
{
	size_t es = ert_dtype_size(a->dtype);

	for (int64_t i = 0; i < a->numel; i++)
		if (memcmp((const char *)a->data + i * es, (const char *)b->data + i * es, es))
			return i;
	return -1;
}

/* one_compare_levels()'s check: the same bytes. */
static inline bool same_bytes(const struct ert_value *got, const struct ert_value *ref, double tol,
			      char *why, size_t why_len)
{
	int64_t d = first_diff(got, ref);

	(void)tol;
	if (d >= 0)
		snprintf(why, why_len, "element %lld differs", (long long)d);
	return d < 0;
}

/*
 * @o at every level, prepacked and run-time weights, memory LOW, 1 and 2
 * threads, against the scalar level with one thread: identical bytes.
 * Returns the runs compared.
 */
static inline int compare_levels(int *ert_test_failed_, struct one *o, const char *what)
{
	return one_compare_levels(ert_test_failed_, o, what, same_bytes, 0);
}

/* The fixed rule when @fixed; ert.clamp [lo, hi] when lo <= hi. */
static inline void set_rule(struct one *o, bool fixed, int lo, int hi)
{
	if (fixed)
		ert_node_set_attr_int(o->g, o->n, "ert.requant", 1);
	if (lo <= hi) {
		int64_t c[2] = { lo, hi };

		ert_node_set_attr_ints(o->g, o->n, "ert.clamp", c, 2);
	}
}

#endif /* ERT_TEST_INT8_H */
