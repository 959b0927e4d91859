/* SPDX-License-Identifier: MIT */
/*
 * CPU reference kernels: Col2Im (sum overlapping blocks back into an image),
 * DeformConv (convolution sampling X bilinearly at learned offsets, with an
 * optional modulation mask) and MaxUnpool (scatter pooled maxima back).
 * Sums are kept in double.
 */
#include <math.h>

#include "cpu/ops/value-store.h"
#include "ops/spatial.h"

static const struct ert_value *const *cin(const struct ert_exec *x)
{
	return (const struct ert_value *const *)x->in;
}

static size_t col2im_workspace(const struct ert_cpu *cpu, const struct ert_exec *x)
{
	return (size_t)x->out[0]->numel * sizeof(double);
}

static ert_status col2im_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	struct ert_value *out = x->out[0];
	struct ert_col2im_params p;
	ert_status st = ert_col2im_params(x->node, cin(x), x->n_in, &p, err);
	double *acc = x->workspace;

	if (st != ERT_OK)
		return st;
	int64_t img_size = 1, cols = in->dims[2];

	for (int32_t d = 0; d < p.k; d++)
		img_size *= p.img[d];
	for (int64_t i = 0; i < out->numel; i++)
		acc[i] = 0;
	for (int64_t nc = 0; nc < in->dims[0] * p.channels; nc++) {
		for (int64_t kb = 0; kb < p.block_size; kb++) {
			int64_t kidx[ERT_SPATIAL_MAX], r = kb;

			for (int32_t d = p.k - 1; d >= 0; d--) {
				kidx[d] = r % p.block[d];
				r /= p.block[d];
			}
			for (int64_t l = 0; l < cols; l++) {
				int64_t pos = 0, rl = l;
				bool inside = true;

				/* image position of tap kidx of block l, dim by dim from the last */
				int64_t lidx[ERT_SPATIAL_MAX];

				for (int32_t d = p.k - 1; d >= 0; d--) {
					lidx[d] = rl % p.blocks[d];
					rl /= p.blocks[d];
				}
				for (int32_t d = 0; d < p.k && inside; d++) {
					/* every term is below the padded image size: no overflow */
					int64_t c = lidx[d] * p.stride[d] - p.pad[d] + kidx[d] * p.dil[d];

					inside = c >= 0 && c < p.img[d];
					pos = pos * p.img[d] + c;
				}
				if (inside)
					acc[nc * img_size + pos] +=
						ert_value_get_float(in, (nc * p.block_size + kb) * cols + l);
			}
		}
	}
	for (int64_t i = 0; i < out->numel; i++)
		ert_cpu_store_f64(out, i, acc[i]);
	return ERT_OK;
}

/* X[c] at (y, x), bilinear, zero outside the image (each corner on its own). */
static double sample(const struct ert_value *xv, int64_t base, int64_t h, int64_t w, double y,
		     double xx)
{
	double v = 0;

	/* also refuses NaN and values no int64 holds */
	if (!(y > -1.0 && y < (double)h && xx > -1.0 && xx < (double)w))
		return 0;
	int64_t y0 = (int64_t)floor(y), x0 = (int64_t)floor(xx);
	double ly = y - (double)y0, lx = xx - (double)x0;

	for (int dy = 0; dy < 2; dy++)
		for (int dx = 0; dx < 2; dx++) {
			int64_t yy = y0 + dy, xc = x0 + dx;
			double wt = (dy ? ly : 1 - ly) * (dx ? lx : 1 - lx);

			if (yy >= 0 && yy < h && xc >= 0 && xc < w && wt != 0)
				v += wt * ert_value_get_float(xv, base + yy * w + xc);
		}
	return v;
}

static ert_status deform_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *X = x->in[0], *W = x->in[1], *off = x->in[2];
	const struct ert_value *B = x->n_in > 3 ? x->in[3] : NULL;
	const struct ert_value *mask = x->n_in > 4 ? x->in[4] : NULL;
	struct ert_value *out = x->out[0];
	struct ert_deform_params p;
	ert_status st = ert_deform_params(x->node, cin(x), x->n_in, &p, err);

	if (st != ERT_OK)
		return st;
	int64_t n = X->dims[0], c = X->dims[1], h = X->dims[2], w = X->dims[3];
	int64_t m = W->dims[0], cg = W->dims[1], mg = m / p.group, kh = p.kernel[0];
	int64_t kw = p.kernel[1], oh = p.out[0], ow = p.out[1], taps = kh * kw;
	int64_t c_per_og = c / p.offset_group;

	for (int64_t b = 0; b < n; b++)
		for (int64_t oc = 0; oc < m; oc++) {
			int64_t g = oc / mg;

			for (int64_t i = 0; i < oh; i++)
				for (int64_t j = 0; j < ow; j++) {
					double acc = B ? ert_value_get_float(B, oc) : 0;

					for (int64_t ci = 0; ci < cg; ci++) {
						int64_t ch = g * cg + ci, og = ch / c_per_og;

						for (int64_t t = 0; t < taps; t++) {
							int64_t ky = t / kw, kx = t % kw;
							int64_t oi = ((b * p.offset_group + og) * taps + t) * 2;
							double dy = ert_value_get_float(off, (oi * oh + i) * ow + j);
							double dx = ert_value_get_float(off, ((oi + 1) * oh + i) * ow + j);
							double y = (double)(i * p.stride[0] - p.pad[0] + ky * p.dil[0]) + dy;
							double xx = (double)(j * p.stride[1] - p.pad[1] + kx * p.dil[1]) + dx;
							double mk = 1;

							if (mask)
								mk = ert_value_get_float(mask, (((b * p.offset_group + og) * taps + t) * oh + i) * ow + j);
							acc += ert_value_get_float(W, (oc * cg + ci) * taps + t) * mk *
							       sample(X, (b * c + ch) * h * w, h, w, y, xx);
						}
					}
					ert_cpu_store_f64(out, ((b * m + oc) * oh + i) * ow + j, acc);
				}
		}
	return ERT_OK;
}

static ert_status unpool_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *X = x->in[0], *I = x->in[1];
	struct ert_value *out = x->out[0];
	struct ert_unpool_params p;
	ert_status st = ert_unpool_params(x->node, cin(x), x->n_in, &p, err);
	size_t es = ert_dtype_size(out->dtype);
	int64_t total = ert_shape_numel(p.rank, p.inferred);

	if (st != ERT_OK)
		return st;
	memset(out->data, 0, out->nbytes);
	for (int64_t i = 0; i < X->numel; i++) {
		int64_t idx = ((const int64_t *)I->data)[i], pos = 0, r;

		if (idx < 0 || idx >= total)
			return ert_node_fail(x->node, err, ERT_STATUS_INVALID_ARGUMENT,
					     "index %lld is outside [0, %lld)", (long long)idx,
					     (long long)total);
		/* the index counts in the inferred shape; Y may be larger */
		int64_t coord[ERT_MAX_RANK];

		r = idx;

		for (int32_t d = p.rank - 1; d >= 0; d--) {
			coord[d] = r % p.inferred[d];
			r /= p.inferred[d];
		}
		for (int32_t d = 0; d < p.rank; d++)
			pos = pos * p.out[d] + coord[d];
		memcpy((char *)out->data + (size_t)pos * es, (const char *)X->data + (size_t)i * es, es);
	}
	return ERT_OK;
}

static bool float_in(const struct ert_exec *x)
{
	ert_dtype dt = x->in[0]->dtype;

	return dt == ERT_DTYPE_FLOAT32 || dt == ERT_DTYPE_FLOAT64 || dt == ERT_DTYPE_FLOAT16 ||
	       dt == ERT_DTYPE_BFLOAT16;
}

const struct ert_cpu_op ert_cpu_ops_spatial[] = {
	{ .op = ERT_OP_Col2Im, .supports = float_in, .workspace = col2im_workspace,
	  .compute = col2im_compute },
	{ .op = ERT_OP_DeformConv, .supports = float_in, .compute = deform_compute },
	{ .op = ERT_OP_MaxUnpool, .compute = unpool_compute },
	{ .compute = NULL },
};
