/* SPDX-License-Identifier: MIT */
/*
 * Dropout. At inference (the usual case) the output is the input and the mask
 * keeps everything. In training mode (opset >= 12, training_mode input true)
 * elements are kept where a uniform draw in [0, 1) is >= ratio and scaled by
 * 1 / (1 - ratio). The draws come from MT19937 seeded with the "seed"
 * attribute and turned into doubles with 53 random bits, the generator and
 * conversion the ONNX reference uses, so that seeded results can be checked.
 */
#include <string.h>

#include "cpu/ops/elementwise.h"

#define MT_N 624
#define MT_M 397

struct mt19937 {
	uint32_t s[MT_N];
	int i;
};

static void mt_seed(struct mt19937 *mt, uint32_t seed)
{
	mt->s[0] = seed;
	for (int i = 1; i < MT_N; i++)
		mt->s[i] = 1812433253u * (mt->s[i - 1] ^ (mt->s[i - 1] >> 30)) + (uint32_t)i;
	mt->i = MT_N;
}

static uint32_t mt_next(struct mt19937 *mt)
{
	uint32_t y;

	if (mt->i >= MT_N) {
		for (int k = 0; k < MT_N; k++) {
			y = (mt->s[k] & 0x80000000u) | (mt->s[(k + 1) % MT_N] & 0x7fffffffu);
			mt->s[k] = mt->s[(k + MT_M) % MT_N] ^ (y >> 1) ^ ((y & 1) ? 0x9908b0dfu : 0);
		}
		mt->i = 0;
	}
	y = mt->s[mt->i++];
	y ^= y >> 11;
	y ^= (y << 7) & 0x9d2c5680u;
	y ^= (y << 15) & 0xefc60000u;
	y ^= y >> 18;
	return y;
}

static double mt_uniform(struct mt19937 *mt)
{
	uint32_t a = mt_next(mt) >> 5, b = mt_next(mt) >> 6;

	return ((double)a * 67108864.0 + (double)b) / 9007199254740992.0;
}

static void copy_value(const struct ert_value *in, struct ert_value *out)
{
	size_t n = in->nbytes < out->nbytes ? in->nbytes : out->nbytes;

	if (out->data != in->data && n)
		memmove(out->data, in->data, n);
}

/* A mask of all "kept": true, or 1 in the input's type before opset 10. */
static void fill_ones(struct ert_value *m)
{
	int64_t n = m->numel;

	switch (m->dtype) {
	case ERT_DTYPE_FLOAT32:
		for (int64_t i = 0; i < n; i++)
			((float *)m->data)[i] = 1.0f;
		break;
	case ERT_DTYPE_FLOAT64:
		for (int64_t i = 0; i < n; i++)
			((double *)m->data)[i] = 1.0;
		break;
	case ERT_DTYPE_FLOAT16:
	case ERT_DTYPE_BFLOAT16: {
		uint16_t one = m->dtype == ERT_DTYPE_FLOAT16 ? 0x3c00 : 0x3f80;

		for (int64_t i = 0; i < n; i++)
			((uint16_t *)m->data)[i] = one;
		break;
	}
	default:
		memset(m->data, ert_dtype_size(m->dtype) == 1 ? 1 : 0, m->nbytes);
		break;
	}
}

static void set_scaled(struct ert_value *y, const struct ert_value *x, int64_t i, double scale)
{
	switch (x->dtype) {
	case ERT_DTYPE_FLOAT32:
		((float *)y->data)[i] = (float)(((const float *)x->data)[i] * scale);
		break;
	case ERT_DTYPE_FLOAT64:
		((double *)y->data)[i] = ((const double *)x->data)[i] * scale;
		break;
	case ERT_DTYPE_FLOAT16:
		((uint16_t *)y->data)[i] = ert_fp32_to_fp16(
			(float)(ert_fp16_to_fp32(((const uint16_t *)x->data)[i]) * scale));
		break;
	case ERT_DTYPE_BFLOAT16:
		((uint16_t *)y->data)[i] = ert_fp32_to_bf16(
			(float)(ert_bf16_to_fp32(((const uint16_t *)x->data)[i]) * scale));
		break;
	default:
		break;
	}
}

ert_status ert_dropout_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	const struct ert_value *r = x->n_in > 1 ? x->in[1] : NULL;
	const struct ert_value *t = x->n_in > 2 ? x->in[2] : NULL;
	struct ert_value *y = x->out[0], *mask = x->n_out > 1 ? x->out[1] : NULL;
	double ratio = r && r->data && r->numel == 1 ? ert_value_get_float(r, 0) : 0.5;
	bool training = t && t->data && t->numel == 1 && ert_value_get_int(t, 0) != 0;
	struct mt19937 mt;

	if (!training || ratio <= 0.0) {
		copy_value(in, y);
		if (mask)
			fill_ones(mask);
		return ERT_OK;
	}
	if (!ert_ew_is_arith_float(in->dtype) || (mask && mask->dtype != ERT_DTYPE_BOOL))
		return ert_node_fail(x->node, err, ERT_STATUS_UNSUPPORTED,
				     "training mode on %s is not supported",
				     ert_dtype_name(in->dtype));
	/* Sequential on purpose: the draws must come in element order. */
	mt_seed(&mt, (uint32_t)ert_attr_int(x->node, "seed", 0));
	for (int64_t i = 0; i < in->numel; i++) {
		bool keep = ratio < 1.0 && mt_uniform(&mt) >= ratio;

		set_scaled(y, in, i, keep ? 1.0 / (1.0 - ratio) : 0.0);
		if (mask)
			((uint8_t *)mask->data)[i] = keep;
	}
	return ERT_OK;
}
