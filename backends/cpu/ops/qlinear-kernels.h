/* SPDX-License-Identifier: MIT */
/*
 * qlinear-kernels.h — private to the CPU int8 kernels (qlinalg.c,
 * qlinear-ew.c, qlinear-pool.c): loading and storing 8-bit values and the
 * output stage of both requantisation rules (docs/int8.md).
 */
#ifndef ERT_CPU_QLINEAR_KERNELS_H
#define ERT_CPU_QLINEAR_KERNELS_H

#include <math.h>

#include "cpu/cpu-impl.h"
#include "ops/qlinear.h"

/* How an int8 op finishes: output type, zero point, clamp, rule. */
struct ert_qout {
	ert_dtype dtype;
	int32_t zp;
	int32_t lo, hi;
	bool fixed;
};

static inline int32_t ert_q8_load(const void *p, ert_dtype dt, int64_t i)
{
	return dt == ERT_DTYPE_UINT8 ? ((const uint8_t *)p)[i] : ((const int8_t *)p)[i];
}

/* @q is already inside the output type's range (the clamp saw to it). */
static inline void ert_q8_store(void *p, ert_dtype dt, int64_t i, int32_t q)
{
	if (dt == ERT_DTYPE_UINT8)
		((uint8_t *)p)[i] = (uint8_t)q;
	else
		((int8_t *)p)[i] = (int8_t)q;
}

/* Float rule: rint(@r) + zero point, clamped; NaN gives lo. */
static inline int32_t ert_qout_float(const struct ert_qout *o, double r)
{
	double q = rint(r) + o->zp;

	if (!(q >= o->lo))
		return o->lo;
	if (q > o->hi)
		return o->hi;
	return (int32_t)q;
}

/* Fixed rule: requant(@acc, @m, @s) + zero point, clamped. */
static inline int32_t ert_qout_fixed(const struct ert_qout *o, int32_t acc, int32_t m, int32_t s)
{
	int64_t q = (int64_t)ert_requant_fixed(acc, m, s) + o->zp;

	return (int32_t)(q < o->lo ? o->lo : q > o->hi ? o->hi : q);
}

/* The output stage of node @x writing int8/uint8 output @y with zero point @yzp (may be NULL). */
static inline ert_status ert_qout_init(struct ert_qout *o, const struct ert_exec *x,
				       const struct ert_value *y, const struct ert_value *yzp,
				       struct ert_err *err)
{
	struct ert_qrule r;
	const char *why = ert_qrule_read(x->node, y->dtype, &r);

	if (why) {
		ert_err_set(err, "%s '%s': %s", ert_op_name(x->node->op), x->node->name, why);
		return ERT_STATUS_INVALID_MODEL;
	}
	o->dtype = y->dtype;
	o->zp = ert_qparam_int(yzp, 0);
	o->lo = r.lo;
	o->hi = r.hi;
	o->fixed = r.fixed;
	return ERT_OK;
}

#endif /* ERT_CPU_QLINEAR_KERNELS_H */
