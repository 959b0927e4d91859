/* SPDX-License-Identifier: MIT */
/*
 * elementwise.h — private to libruntime/ops: dtype classes shared by the shape
 * inference of the unary and binary families.
 */
#ifndef ERT_OPS_ELEMENTWISE_H
#define ERT_OPS_ELEMENTWISE_H

#include "ert-op-impl.h"

/* Which element types an elementwise op accepts. */
enum ert_ew_class {
	ERT_EW_FLOAT,    /* float32/64, float16, bfloat16 */
	ERT_EW_NUM,      /* float class plus 8..64-bit integers */
	ERT_EW_INT,      /* 8..64-bit integers */
	ERT_EW_BOOL,
	ERT_EW_NUM_BOOL, /* numbers and bool (Less, ...) */
	ERT_EW_EQUAL,    /* numbers, bool and strings (Equal) */
	ERT_EW_ANY,      /* anything the runtime knows */
	ERT_EW_ANY_STRING, /* that and strings (Identity: handles move, ert-strings.h) */
};

static inline bool ert_ew_is_arith_float(ert_dtype dt)
{
	return dt == ERT_DTYPE_FLOAT32 || dt == ERT_DTYPE_FLOAT64 || dt == ERT_DTYPE_FLOAT16 ||
	       dt == ERT_DTYPE_BFLOAT16;
}

static inline bool ert_ew_is_int(ert_dtype dt)
{
	return ert_dtype_is_int(dt) && dt != ERT_DTYPE_INT4 && dt != ERT_DTYPE_UINT4;
}

static inline bool ert_ew_class_ok(ert_dtype dt, enum ert_ew_class c)
{
	switch (c) {
	case ERT_EW_FLOAT: return ert_ew_is_arith_float(dt);
	case ERT_EW_NUM: return ert_ew_is_arith_float(dt) || ert_ew_is_int(dt);
	case ERT_EW_INT: return ert_ew_is_int(dt);
	case ERT_EW_BOOL: return dt == ERT_DTYPE_BOOL;
	case ERT_EW_NUM_BOOL:
		return ert_ew_is_arith_float(dt) || ert_ew_is_int(dt) || dt == ERT_DTYPE_BOOL;
	case ERT_EW_EQUAL:
		return ert_ew_class_ok(dt, ERT_EW_NUM_BOOL) || dt == ERT_DTYPE_STRING;
	case ERT_EW_ANY: return ert_dtype_valid(dt);
	case ERT_EW_ANY_STRING: return ert_dtype_valid(dt) || dt == ERT_DTYPE_STRING;
	}
	return false;
}

static inline const char *ert_ew_class_name(enum ert_ew_class c)
{
	switch (c) {
	case ERT_EW_FLOAT: return "a float type";
	case ERT_EW_NUM: return "a numeric type";
	case ERT_EW_INT: return "an integer type";
	case ERT_EW_BOOL: return "bool";
	case ERT_EW_NUM_BOOL: return "a numeric type or bool";
	case ERT_EW_EQUAL: return "a numeric type, bool or string";
	case ERT_EW_ANY: return "a known type";
	case ERT_EW_ANY_STRING: return "a known type or string";
	}
	return "?";
}

/*
 * Opset < 7 binary ops broadcast only with broadcast=1, and "axis" aligns the
 * second operand's dims at that axis of the first instead of at the end. Gives
 * the second operand's shape padded with trailing 1s so that numpy rules apply.
 */
static inline void ert_ew_legacy_operand(const struct ert_node *n, const struct ert_value *a,
					 const struct ert_value *b, struct ert_value *eff)
{
	int32_t axis, pad;

	*eff = *b;
	if (n->opset >= 7)
		return;
	if (n->op == ERT_OP_PRelu) {
		/* PRelu-6: a 1-D slope runs along the channel axis (1). */
		if (b->rank != 1 || a->rank < 3 || b->dims[0] != a->dims[1])
			return;
		axis = 1;
	} else {
		if (!ert_attr_int(n, "broadcast", 0) || !ert_node_attr(n, "axis"))
			return;
		if (!ert_norm_axis(ert_attr_int(n, "axis", 0), a->rank, &axis))
			return;
	}
	pad = a->rank - axis - b->rank;
	if (pad <= 0 || b->rank + pad > ERT_MAX_RANK)
		return;
	for (int32_t i = 0; i < pad; i++)
		eff->dims[b->rank + i] = 1;
	eff->rank = b->rank + pad;
}

#endif /* ERT_OPS_ELEMENTWISE_H */
