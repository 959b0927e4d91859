/* SPDX-License-Identifier: MIT */
/* The requantisation rule of int8 ops: ert.requant, ert.clamp (ops/qlinear.h). */
#include <math.h>

#include "ops/qlinear.h"

const char *ert_qrule_read(const struct ert_node *n, ert_dtype out_dt, struct ert_qrule *r)
{
	const struct ert_attr *a = ert_node_attr(n, "ert.requant");
	int32_t qmin = out_dt == ERT_DTYPE_UINT8 ? 0 : -128;
	int32_t qmax = out_dt == ERT_DTYPE_UINT8 ? 255 : 127;
	const int64_t *c;
	uint32_t count;

	r->fixed = false;
	r->lo = qmin;
	r->hi = qmax;
	if (a) {
		if (a->type != ERT_ATTR_INT || (a->i != 0 && a->i != 1))
			return "ert.requant must be the integer 0 or 1";
		r->fixed = a->i == 1;
	}
	if (!ert_node_attr(n, "ert.clamp"))
		return NULL;
	c = ert_attr_ints(n, "ert.clamp", &count);
	if (!c || count != 2)
		return "ert.clamp must be two integers [lo, hi]";
	if (c[0] > c[1] || c[0] < qmin || c[1] > qmax)
		return "ert.clamp must satisfy qmin <= lo <= hi <= qmax of the output type";
	r->lo = (int32_t)c[0];
	r->hi = (int32_t)c[1];
	return NULL;
}

double ert_qparam_float(const struct ert_value *v, int64_t c)
{
	if (!v || !v->data)
		return 0.0;
	return ert_value_get_float(v, v->numel > 1 ? c : 0);
}

int32_t ert_qparam_int(const struct ert_value *v, int64_t c)
{
	if (!v || !v->data)
		return 0;
	return (int32_t)ert_value_get_int(v, v->numel > 1 ? c : 0);
}

ert_status ert_qinfer_rule(struct ert_infer_ctx *ctx, ert_dtype out_dt, struct ert_qrule *r)
{
	const char *why = ert_qrule_read(ctx->node, out_dt, r);

	if (why)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "%s", why);
	return ERT_OK;
}

ert_status ert_qinfer_scales_known(struct ert_infer_ctx *ctx, const uint32_t *idx, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++) {
		const struct ert_value *v = ert_qin(ctx, idx[k]);

		if (!v)
			continue;
		if (!v->data)
			return ert_infer_fail(ctx, ERT_STATUS_UNSUPPORTED,
					      "ert.requant = 1 needs constant scales (input %u is "
					      "computed at run time)", idx[k]);
		for (int64_t c = 0; c < v->numel; c++) {
			double s = ert_value_get_float(v, c);

			if (!(s > 0.0) || !isfinite(s))
				return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL,
						      "ert.requant = 1: input %u holds scale %g; "
						      "scales must be positive and finite", idx[k], s);
		}
	}
	return ERT_OK;
}

ert_status ert_qinfer_product_mults(struct ert_infer_ctx *ctx, uint32_t ia, uint32_t ib,
				    uint32_t iy, int64_t count)
{
	const struct ert_value *a = ert_qin(ctx, ia), *b = ert_qin(ctx, ib), *y = ert_qin(ctx, iy);

	for (int64_t c = 0; c < count; c++) {
		double as = ert_qparam_float(a, c), bs = ert_qparam_float(b, c);
		double ys = ert_qparam_float(y, 0);
		int32_t m, s;

		if (!ert_quant_product_multiplier(as, bs, ys, &m, &s))
			return ert_infer_fail(ctx, ERT_STATUS_UNSUPPORTED,
					      "ert.requant = 1: multiplier %g * %g / %g of channel "
					      "%lld is too large for the fixed-point rule (>= 2^31)",
					      as, bs, ys, (long long)c);
	}
	return ERT_OK;
}
