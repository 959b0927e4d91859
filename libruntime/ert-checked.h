/* SPDX-License-Identifier: MIT */
/*
 * ert-checked.h — checked integer arithmetic for shapes, strides, offsets and
 * attribute values.
 *
 * Models are untrusted: a dimension, an attribute or a plan-time input value
 * may hold any int64. Every computation on them that can leave the type's
 * range goes through these helpers, which report the overflow instead of
 * wrapping (undefined for signed types, a wrong allocation size for size_t).
 * The caller turns a false return into a planning error that names the node
 * and the attribute ("ConvTranspose 'up1': output_shape[0] = ... overflows").
 *
 * All helpers return true on success and store the exact result in *r; on
 * overflow they return false and leave *r unspecified.
 */
#ifndef ERT_CHECKED_H
#define ERT_CHECKED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The largest dimension any tensor may have, even one with no elements (a
 * tensor of shape [0, 2^62] holds nothing but its dims still enter shape
 * arithmetic). 2^48 leaves room for sums and products of a few dims and an
 * attribute bounded the same way without leaving int64.
 */
#define ERT_DIM_MAX (INT64_C(1) << 48)

/*
 * Bound for attributes that count elements along one axis (kernel sizes,
 * strides, dilations, pads, block sizes, window sizes, output sizes):
 * the same as a dimension.
 */
#define ERT_ATTR_SIZE_MAX ERT_DIM_MAX

static inline bool ert_add_i64(int64_t a, int64_t b, int64_t *r)
{
	return !__builtin_add_overflow(a, b, r);
}

static inline bool ert_sub_i64(int64_t a, int64_t b, int64_t *r)
{
	return !__builtin_sub_overflow(a, b, r);
}

static inline bool ert_mul_i64(int64_t a, int64_t b, int64_t *r)
{
	return !__builtin_mul_overflow(a, b, r);
}

/* -a; fails only for INT64_MIN. */
static inline bool ert_neg_i64(int64_t a, int64_t *r)
{
	return !__builtin_sub_overflow((int64_t)0, a, r);
}

/* a * b + c */
static inline bool ert_muladd_i64(int64_t a, int64_t b, int64_t c, int64_t *r)
{
	int64_t t;

	return ert_mul_i64(a, b, &t) && ert_add_i64(t, c, r);
}

static inline bool ert_add_size(size_t a, size_t b, size_t *r)
{
	return !__builtin_add_overflow(a, b, r);
}

/* a - b; fails when b > a. */
static inline bool ert_sub_size(size_t a, size_t b, size_t *r)
{
	return !__builtin_sub_overflow(a, b, r);
}

static inline bool ert_mul_size(size_t a, size_t b, size_t *r)
{
	return !__builtin_mul_overflow(a, b, r);
}

/* An int64 count (>= 0) times an element size, as bytes; fails for a < 0. */
static inline bool ert_bytes_size(int64_t count, size_t elem, size_t *r)
{
	return count >= 0 && (uint64_t)count <= SIZE_MAX && ert_mul_size((size_t)count, elem, r);
}

/*
 * Saturating forms, for heuristics only (a parallel loop's grain, a cost
 * estimate): the result is clamped to [INT64_MIN, INT64_MAX], never used to
 * size or index memory.
 */
static inline int64_t ert_mul_sat_i64(int64_t a, int64_t b)
{
	int64_t r;

	if (!__builtin_mul_overflow(a, b, &r))
		return r;
	return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
}

static inline int64_t ert_add_sat_i64(int64_t a, int64_t b)
{
	int64_t r;

	if (!__builtin_add_overflow(a, b, &r))
		return r;
	return b < 0 ? INT64_MIN : INT64_MAX;
}

/* v clamped to [lo, hi] (lo <= hi). */
static inline int64_t ert_clamp_i64(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

#endif /* ERT_CHECKED_H */
