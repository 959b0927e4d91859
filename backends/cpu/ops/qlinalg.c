/* SPDX-License-Identifier: MIT */
/*
 * CPU integer linear algebra with ONNX's exact rules: products of
 * (x - x_zero_point) and (w - w_zero_point) summed in int32; QLinear ops then
 * requantise with the real multiplier x_scale * w_scale / y_scale, rounding
 * half to even and saturating to the output type. This is the oracle the NPU
 * is checked against bit for bit, so it stays a direct loop.
 */
#include <math.h>
#include <string.h>

#include "cpu/cpu-impl.h"
#include "ops/linalg-geom.h"

static int32_t q8_at(const struct ert_value *v, int64_t i)
{
	return v->dtype == ERT_DTYPE_UINT8 ? ((const uint8_t *)v->data)[i]
					   : ((const int8_t *)v->data)[i];
}

/* Per-tensor or per-channel parameter @c; 0 when absent. */
static int32_t zp_at(const struct ert_value *v, int64_t c)
{
	if (!v)
		return 0;
	return q8_at(v, v->numel > 1 ? c : 0);
}

static float scale_at(const struct ert_value *v, int64_t c)
{
	return (float)ert_value_get_float(v, v->numel > 1 ? c : 0);
}

/*
 * The requantisation multiplier a_scale * b_scale / y_scale, rounded at each
 * step in the scales' own type as ONNX's reference does (float16 scales give
 * a float16 multiplier).
 */
static double q_mult(const struct ert_value *as, int64_t ia, const struct ert_value *bs,
		     int64_t ib, const struct ert_value *ys)
{
	float m = scale_at(as, ia) * scale_at(bs, ib);

	if (as->dtype == ERT_DTYPE_FLOAT16 && bs->dtype == ERT_DTYPE_FLOAT16)
		m = ert_fp16_to_fp32(ert_fp32_to_fp16(m));
	m /= scale_at(ys, 0);
	if (ys->dtype == ERT_DTYPE_FLOAT16 && as->dtype == ERT_DTYPE_FLOAT16)
		m = ert_fp16_to_fp32(ert_fp32_to_fp16(m));
	return (double)m;
}

static void store_q(const struct ert_value *y, int64_t i, double r, int32_t zp)
{
	double q = rint(r) + zp;

	if (y->dtype == ERT_DTYPE_UINT8)
		((uint8_t *)y->data)[i] = (uint8_t)(q < 0 ? 0 : q > 255 ? 255 : q);
	else
		((int8_t *)y->data)[i] = (int8_t)(q < -128 ? -128 : q > 127 ? 127 : q);
}

static const struct ert_value *in_at(const struct ert_exec *x, uint32_t i)
{
	return i < x->n_in ? x->in[i] : NULL;
}

/* ---- convolution ---- */

struct iconv_job {
	struct ert_conv_geom g;
	const struct ert_value *x, *w, *xzp, *wzp, *bias, *xs, *ws, *ys, *yzp, *y;
	bool qlinear;
	int64_t c_in, m, group, cin_g, m_g, kk, in_sp, out_sp;
};

static void iconv_planes(void *arg, int64_t begin, int64_t end)
{
	const struct iconv_job *j = arg;
	const struct ert_conv_geom *g = &j->g;

	for (int64_t pl = begin; pl < end; pl++) {
		int64_t n = pl / j->m, m = pl % j->m, gi = m / j->m_g;
		int32_t xz = zp_at(j->xzp, 0), wz = zp_at(j->wzp, m);
		double mult = 0.0;

		if (j->qlinear)
			mult = q_mult(j->xs, 0, j->ws, m, j->ys);
		for (int64_t o = 0; o < j->out_sp; o++) {
			int64_t ow = o % g->out[2], oh = (o / g->out[2]) % g->out[1];
			int64_t od = o / g->out[2] / g->out[1];
			int32_t acc = j->bias ? ((const int32_t *)j->bias->data)[m] : 0;

			for (int64_t ci = 0; ci < j->cin_g; ci++) {
				int64_t xbase = (n * j->c_in + gi * j->cin_g + ci) * j->in_sp;
				int64_t wbase = (m * j->cin_g + ci) * j->kk;

				for (int64_t t = 0; t < j->kk; t++) {
					int64_t kw = t % g->k[2], kh = (t / g->k[2]) % g->k[1];
					int64_t kd = t / g->k[2] / g->k[1];
					int64_t iz = od * g->stride[0] - g->pad_b[0] + kd * g->dil[0];
					int64_t iy = oh * g->stride[1] - g->pad_b[1] + kh * g->dil[1];
					int64_t ix = ow * g->stride[2] - g->pad_b[2] + kw * g->dil[2];

					/* Padding holds x_zero_point: it contributes nothing. */
					if (iz < 0 || iz >= g->in[0] || iy < 0 || iy >= g->in[1] ||
					    ix < 0 || ix >= g->in[2])
						continue;
					acc += (q8_at(j->x, xbase + (iz * g->in[1] + iy) * g->in[2] + ix) -
						xz) * (q8_at(j->w, wbase + t) - wz);
				}
			}
			int64_t yi = pl * j->out_sp + o;

			if (j->qlinear)
				store_q(j->y, yi, (double)acc * mult, zp_at(j->yzp, 0));
			else
				((int32_t *)j->y->data)[yi] = acc;
		}
	}
}

static ert_status iconv_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	bool ql = x->node->op == ERT_OP_QLinearConv;
	struct iconv_job j;
	ert_status st;

	memset(&j, 0, sizeof(j));
	j.qlinear = ql;
	j.x = x->in[0];
	j.w = in_at(x, ql ? 3 : 1);
	j.xzp = in_at(x, 2);
	j.wzp = in_at(x, ql ? 5 : 3);
	if (ql) {
		j.xs = x->in[1];
		j.ws = x->in[4];
		j.ys = x->in[6];
		j.yzp = in_at(x, 7);
		j.bias = in_at(x, 8);
	}
	j.y = x->out[0];
	st = ert_geom_conv(x->node, j.x->rank - 2, j.x->dims + 2, j.w->dims + 2, false, &j.g, err);
	if (st != ERT_OK)
		return st;
	j.c_in = j.x->dims[1];
	j.m = j.w->dims[0];
	j.group = ert_attr_int(x->node, "group", 1);
	j.cin_g = j.w->dims[1];
	j.m_g = j.m / (j.group > 0 ? j.group : 1);
	j.kk = ert_geom_k_size(&j.g);
	j.in_sp = ert_geom_in_size(&j.g);
	j.out_sp = ert_geom_out_size(&j.g);
	ert_parallel_for(cpu->pool, j.x->dims[0] * j.m, 1, iconv_planes, &j);
	return ERT_OK;
}

/* ---- matrix multiplication ---- */

struct imm_job {
	const struct ert_value *a, *b, *azp, *bzp, *as, *bs, *ys, *yzp, *y;
	bool qlinear;
	int64_t m, n, k, nb;      /* nb: number of batch dims of y */
	int32_t ba, bb;           /* batch dims of a and b */
};

static void imm_rows(void *arg, int64_t begin, int64_t end)
{
	const struct imm_job *j = arg;
	const struct ert_value *a = j->a, *b = j->b, *y = j->y;

	for (int64_t r = begin; r < end; r++) {
		int64_t t = r / j->m, i = r % j->m, rem = t, oa = 0, ob = 0;
		int64_t sa = j->m * j->k, sb = j->k * j->n;

		for (int32_t d = (int32_t)j->nb - 1; d >= 0; d--) {
			int64_t idx = rem % y->dims[d];
			int32_t ia = d - ((int32_t)j->nb - j->ba), ib = d - ((int32_t)j->nb - j->bb);

			rem /= y->dims[d];
			if (ia >= 0) {
				oa += a->dims[ia] != 1 ? idx * sa : 0;
				sa *= a->dims[ia];
			}
			if (ib >= 0) {
				ob += b->dims[ib] != 1 ? idx * sb : 0;
				sb *= b->dims[ib];
			}
		}
		int32_t az = zp_at(j->azp, i);

		for (int64_t c = 0; c < j->n; c++) {
			int32_t bz = zp_at(j->bzp, c), acc = 0;

			for (int64_t p = 0; p < j->k; p++)
				acc += (q8_at(a, oa + i * j->k + p) - az) *
				       (q8_at(b, ob + p * j->n + c) - bz);
			if (j->qlinear) {
				double mult = q_mult(j->as, i, j->bs, c, j->ys);

				store_q(y, r * j->n + c, (double)acc * mult, zp_at(j->yzp, 0));
			} else {
				((int32_t *)y->data)[r * j->n + c] = acc;
			}
		}
	}
}

static ert_status imm_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	bool ql = x->node->op == ERT_OP_QLinearMatMul;
	struct imm_job j;

	memset(&j, 0, sizeof(j));
	j.qlinear = ql;
	j.a = x->in[0];
	j.b = in_at(x, ql ? 3 : 1);
	j.azp = in_at(x, 2);
	j.bzp = in_at(x, ql ? 5 : 3);
	if (ql) {
		j.as = x->in[1];
		j.bs = x->in[4];
		j.ys = x->in[6];
		j.yzp = in_at(x, 7);
	}
	j.y = x->out[0];
	j.k = j.a->dims[j.a->rank - 1];
	j.m = j.a->rank > 1 ? j.a->dims[j.a->rank - 2] : 1;
	j.n = j.b->rank > 1 ? j.b->dims[j.b->rank - 1] : 1;
	j.nb = j.y->rank - (j.a->rank > 1) - (j.b->rank > 1);
	j.ba = j.a->rank > 2 ? j.a->rank - 2 : 0;
	j.bb = j.b->rank > 2 ? j.b->rank - 2 : 0;
	int64_t rows = j.m;

	for (int64_t d = 0; d < j.nb; d++)
		rows *= j.y->dims[d];
	ert_parallel_for(cpu->pool, rows, 4, imm_rows, &j);
	return ERT_OK;
}

const struct ert_cpu_op ert_cpu_ops_qlinalg[] = {
	{ .op = ERT_OP_QLinearConv, .compute = iconv_compute },
	{ .op = ERT_OP_ConvInteger, .compute = iconv_compute },
	{ .op = ERT_OP_QLinearMatMul, .compute = imm_compute },
	{ .op = ERT_OP_MatMulInteger, .compute = imm_compute },
	{ .compute = NULL },
};
