/* SPDX-License-Identifier: MIT */
/*
 * CPU reference kernels: Softmax, LogSoftmax, Hardmax, LpNormalization, LRN.
 * The statistics-based normalisations are in norm-stats.c.
 */
#include "cpu/ops/norm-access.h"
#include "cpu/ops/norm-kernels.h"
#include "cpu/vec/vec.h"

/*
 * X viewed as [outer, n, inner]: the op normalises along n. Opset < 13 softmax
 * flattens X to 2-D at axis, which is the same view with inner = 1.
 */
struct lane_args {
	const struct ert_value *in;
	struct ert_value *out;
	int64_t n, inner;
	enum ert_op op;
	int64_t p;  /* LpNormalization */
	const struct ert_vec_kernels *vk;   /* Softmax rows of float32 through vk->softmax */
};

static void lane_view(const struct ert_value *v, int32_t axis, bool flatten, int64_t *outer,
		      int64_t *n, int64_t *inner)
{
	*outer = ert_nx_span(v, 0, axis);
	if (flatten) {
		*n = ert_nx_span(v, axis, v->rank);
		*inner = 1;
	} else {
		*n = v->dims[axis];
		*inner = ert_nx_span(v, axis + 1, v->rank);
	}
}

/* Eight independent partial sums: no serial add chain, no -ffast-math needed. */
static double sum_f32(const float *v, int64_t n)
{
	double part[8] = { 0 }, sum = 0.0;
	int64_t k = 0;

	for (; k + 8 <= n; k += 8)
		for (int j = 0; j < 8; j++)
			part[j] += v[k + j];
	for (; k < n; k++)
		sum += v[k];
	for (int j = 0; j < 8; j++)
		sum += part[j];
	return sum;
}

static void softmax_f32_row(const float *src, float *dst, int64_t n, enum ert_op op)
{
	float max = -INFINITY;
	double sum = 0.0;
	int64_t arg = 0;

	for (int64_t k = 0; k < n; k++)
		if (src[k] > max) {
			max = src[k];
			arg = k;
		}
	if (op == ERT_OP_Hardmax) {
		for (int64_t k = 0; k < n; k++)
			dst[k] = k == arg ? 1.0f : 0.0f;
		return;
	}
	if (op == ERT_OP_Softmax) {
		for (int64_t k = 0; k < n; k++)
			dst[k] = expf(src[k] - max);
		sum = sum_f32(dst, n);
	} else {
		/* LogSoftmax still needs src afterwards (dst may alias it): stage on the stack. */
		float buf[256];

		for (int64_t k = 0; k < n; k += 256) {
			int64_t m = n - k < 256 ? n - k : 256;

			for (int64_t j = 0; j < m; j++)
				buf[j] = expf(src[k + j] - max);
			sum += sum_f32(buf, m);
		}
	}
	if (op == ERT_OP_Softmax) {
		float inv = (float)(1.0 / sum);

		for (int64_t k = 0; k < n; k++)
			dst[k] *= inv;
	} else {
		float lse = max + (float)log(sum);

		for (int64_t k = 0; k < n; k++)
			dst[k] = src[k] - lse;
	}
}

void ert_cpu_softmax_row_f32(const float *x, float *y, int64_t n)
{
	softmax_f32_row(x, y, n, ERT_OP_Softmax);
}

static void softmax_range(void *arg, int64_t begin, int64_t end)
{
	const struct lane_args *a = arg;
	const void *src = a->in->data;
	void *dst = a->out->data;
	ert_dtype dt = a->in->dtype;
	int64_t n = a->n, inner = a->inner;

	for (int64_t r = begin; r < end; r++) {
		int64_t base = (r / inner) * n * inner + r % inner;
		double max = -INFINITY, sum = 0.0;
		int64_t arg_max = 0;

		if (a->vk) {
			a->vk->softmax((const float *)src + base, (float *)dst + base, n);
			continue;
		}
		if (dt == ERT_DTYPE_FLOAT32 && inner == 1) {
			softmax_f32_row((const float *)src + base, (float *)dst + base, n, a->op);
			continue;
		}
		for (int64_t k = 0; k < n; k++) {
			double v = ert_nx_ld(src, dt, base + k * inner);

			if (v > max) {
				max = v;
				arg_max = k;
			}
		}
		if (a->op == ERT_OP_Hardmax) {
			for (int64_t k = 0; k < n; k++)
				ert_nx_st(dst, dt, base + k * inner, k == arg_max ? 1.0 : 0.0);
			continue;
		}
		for (int64_t k = 0; k < n; k++)
			sum += exp(ert_nx_ld(src, dt, base + k * inner) - max);
		for (int64_t k = 0; k < n; k++) {
			double v = ert_nx_ld(src, dt, base + k * inner) - max;

			ert_nx_st(dst, dt, base + k * inner,
				  a->op == ERT_OP_Softmax ? exp(v) / sum : v - log(sum));
		}
	}
}

static int64_t grain_for(int64_t work_per_item)
{
	int64_t g = 16384 / (work_per_item > 0 ? work_per_item : 1);

	return g < 1 ? 1 : g;
}

/*
 * The vector Softmax of @cpu's level for a float32 row of @n, @inner 1
 * (bounds in cpu/vec/rows-tmpl.h), unless precision is HIGH; else NULL.
 */
static const struct ert_vec_kernels *softmax_vec(const struct ert_cpu *cpu,
						 const struct ert_exec *x, int64_t inner)
{
	if (x->node->op != ERT_OP_Softmax || x->in[0]->dtype != ERT_DTYPE_FLOAT32 || inner != 1 ||
	    cpu->precision == ERT_LEVEL_HIGH)
		return NULL;
	return ert_vec_kernels_for(cpu->isa);
}

static ert_status softmax_prepare(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	bool legacy = x->node->opset < 13;
	int32_t a;
	int64_t outer, n, inner;

	if (in->rank > 0 && ert_norm_axis(ert_attr_int(x->node, "axis", legacy ? 1 : -1),
					  in->rank, &a)) {
		const struct ert_vec_kernels *vk;

		lane_view(in, a, legacy, &outer, &n, &inner);
		vk = softmax_vec(cpu, x, inner);
		x->kernel = vk ? vk->name_softmax : NULL;
	}
	return ERT_OK;
}

static ert_status softmax_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	bool legacy = x->node->opset < 13;
	int64_t axis = ert_attr_int(x->node, "axis", legacy ? 1 : -1), outer;
	int32_t a = 0;
	struct lane_args args = { .in = in, .out = x->out[0], .op = x->node->op };

	if (in->rank == 0) {
		/* A scalar is its own single-element row. */
		double v = ert_nx_ld(in->data, in->dtype, 0);

		ert_nx_st(x->out[0]->data, in->dtype, 0,
			  x->node->op == ERT_OP_LogSoftmax ? (isfinite(v) ? 0.0 : NAN) : 1.0);
		return ERT_OK;
	}
	if (!ert_norm_axis(axis, in->rank, &a))
		return ert_node_fail(x->node, err, ERT_STATUS_SHAPE, "axis %lld out of range",
				     (long long)axis);
	lane_view(in, a, legacy, &outer, &args.n, &args.inner);
	if (outer * args.inner == 0 || args.n == 0)
		return ERT_OK;
	args.vk = softmax_vec(cpu, x, args.inner);
	ert_parallel_for(cpu->pool, outer * args.inner, grain_for(args.n * 8), softmax_range,
			 &args);
	return ERT_OK;
}

static void lp_range(void *arg, int64_t begin, int64_t end)
{
	const struct lane_args *a = arg;
	ert_dtype dt = a->in->dtype;

	for (int64_t r = begin; r < end; r++) {
		int64_t base = (r / a->inner) * a->n * a->inner + r % a->inner;
		double norm = 0.0;

		for (int64_t k = 0; k < a->n; k++) {
			double v = ert_nx_ld(a->in->data, dt, base + k * a->inner);

			norm += a->p == 1 ? fabs(v) : v * v;
		}
		if (a->p == 2)
			norm = sqrt(norm);
		for (int64_t k = 0; k < a->n; k++) {
			int64_t i = base + k * a->inner;

			/* A zero lane stays zero instead of becoming NaN. */
			ert_nx_st(a->out->data, dt, i,
				  norm == 0.0 ? 0.0 : ert_nx_ld(a->in->data, dt, i) / norm);
		}
	}
}

static ert_status lp_norm_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	struct lane_args args = { .in = in, .out = x->out[0], .p = ert_attr_int(x->node, "p", 2) };
	int64_t outer;
	int32_t a;

	if (!ert_norm_axis(ert_attr_int(x->node, "axis", -1), in->rank, &a))
		return ert_node_fail(x->node, err, ERT_STATUS_SHAPE, "axis out of range");
	lane_view(in, a, false, &outer, &args.n, &args.inner);
	/* numel, not outer * inner: a 0 on the axis leaves billions of empty lanes */
	if (in->numel > 0)
		ert_parallel_for(cpu->pool, outer * args.inner, grain_for(args.n * 4), lp_range,
				 &args);
	return ERT_OK;
}

struct lrn_args {
	const struct ert_value *in;
	struct ert_value *out;
	int64_t c, spatial, size;
	double alpha, beta, bias;
};

static void lrn_range(void *arg, int64_t begin, int64_t end)
{
	const struct lrn_args *a = arg;
	ert_dtype dt = a->in->dtype;
	/* floor and ceil of (size - 1) / 2, clamped to C: size may be far wider */
	int64_t lo_off = ert_clamp_i64((a->size - 1) / 2, 0, a->c);
	int64_t hi_off = ert_clamp_i64(a->size / 2, 0, a->c);

	for (int64_t r = begin; r < end; r++) {
		int64_t nb = r / a->spatial, s = r % a->spatial;

		for (int64_t c = 0; c < a->c; c++) {
			int64_t lo = c - lo_off < 0 ? 0 : c - lo_off;
			int64_t hi = c + hi_off > a->c - 1 ? a->c - 1 : c + hi_off;
			double sq = 0.0;

			for (int64_t k = lo; k <= hi; k++) {
				double v = ert_nx_ld(a->in->data, dt, (nb * a->c + k) * a->spatial + s);

				sq += v * v;
			}
			int64_t i = (nb * a->c + c) * a->spatial + s;
			double d = pow(a->bias + a->alpha / (double)a->size * sq, a->beta);

			ert_nx_st(a->out->data, dt, i, ert_nx_ld(a->in->data, dt, i) / d);
		}
	}
}

/* Pixels of one image a work item of the vector kernel: four vectors of AVX-512 */
#define LRN_BLOCK 64

struct lrn_vec_args {
	const struct ert_vec_kernels *vk;
	struct ert_lrn_desc d;
	const float *x;
	float *y;
	int64_t blocks;              /* LRN_BLOCK pixel blocks an image */
};

static void lrn_vec_range(void *arg, int64_t begin, int64_t end)
{
	const struct lrn_vec_args *a = arg;

	for (int64_t r = begin; r < end; r++) {
		int64_t nb = r / a->blocks, s0 = r % a->blocks * LRN_BLOCK;
		int64_t s1 = s0 + LRN_BLOCK < a->d.sp ? s0 + LRN_BLOCK : a->d.sp;

		a->vk->lrn(&a->d, a->x + nb * a->d.c * a->d.sp, a->y + nb * a->d.c * a->d.sp, s0,
			   s1);
	}
}

/* float32 LRN at a vector level: the level's kernel (cpu/vec/lrn-tmpl.h) */
static const struct ert_vec_kernels *lrn_vec(const struct ert_cpu *cpu, const struct ert_exec *x)
{
	return x->in[0]->dtype == ERT_DTYPE_FLOAT32 && x->in[0]->rank >= 2
		       ? ert_vec_kernels_for(cpu->isa) : NULL;
}

static ert_status lrn_prepare(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_vec_kernels *vk = lrn_vec(cpu, x);

	x->kernel = vk ? vk->name_lrn : NULL;
	return ERT_OK;
}

static ert_status lrn_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	const struct ert_vec_kernels *vk = lrn_vec(cpu, x);
	struct lrn_args a = {
		.in = in, .out = x->out[0], .c = in->dims[1],
		.spatial = ert_nx_span(in, 2, in->rank),
		.size = ert_attr_int(x->node, "size", 1),
		.alpha = ert_attr_float(x->node, "alpha", 1e-4f),
		.beta = ert_attr_float(x->node, "beta", 0.75f),
		.bias = ert_attr_float(x->node, "bias", 1.0f),
	};
	int64_t rows = in->dims[0] * a.spatial;

	if (rows <= 0 || a.c <= 0)
		return ERT_OK;
	/* size is at most ERT_ATTR_SIZE_MAX; a window wider than C costs C per element */
	if (vk) {
		struct lrn_vec_args v = {
			.vk = vk, .x = in->data, .y = x->out[0]->data,
			.d = { .c = a.c, .sp = a.spatial, .size = a.size,
			       .lo_off = ert_clamp_i64((a.size - 1) / 2, 0, a.c),
			       .hi_off = ert_clamp_i64(a.size / 2, 0, a.c),
			       .alpha = a.alpha, .beta = a.beta, .bias = a.bias },
			.blocks = (a.spatial + LRN_BLOCK - 1) / LRN_BLOCK,
		};

		ert_parallel_for(cpu->pool, in->dims[0] * v.blocks,
				 grain_for(ert_mul_sat_i64(ert_mul_sat_i64(a.c, LRN_BLOCK),
							   a.size < a.c ? a.size : a.c)),
				 lrn_vec_range, &v);
		return ERT_OK;
	}
	ert_parallel_for(cpu->pool, rows,
			 grain_for(ert_mul_sat_i64(a.c, a.size < a.c ? a.size : a.c)), lrn_range, &a);
	return ERT_OK;
}

static bool float_x(const struct ert_exec *x)
{
	return x->in[0] && ert_nx_is_float(x->in[0]->dtype);
}

const struct ert_cpu_op ert_cpu_ops_norm[] = {
	{ .op = ERT_OP_Softmax, .supports = float_x, .prepare = softmax_prepare,
	  .compute = softmax_compute },
	{ .op = ERT_OP_LogSoftmax, .supports = float_x, .compute = softmax_compute },
	{ .op = ERT_OP_Hardmax, .supports = float_x, .compute = softmax_compute },
	{ .op = ERT_OP_LpNormalization, .supports = float_x, .compute = lp_norm_compute },
	{ .op = ERT_OP_LRN, .supports = float_x, .prepare = lrn_prepare, .compute = lrn_compute },
	{ .op = ERT_OP_LayerNormalization, .supports = float_x,
	  .prepare = ert_cpu_layer_norm_prepare, .compute = ert_cpu_layer_norm },
	{ .op = ERT_OP_BatchNormalization, .supports = float_x, .compute = ert_cpu_batch_norm },
	{ .op = ERT_OP_InstanceNormalization, .supports = float_x,
	  .compute = ert_cpu_instance_norm },
	{ .op = ERT_OP_GroupNormalization, .supports = float_x, .compute = ert_cpu_group_norm },
	{ .op = ERT_OP_MeanVarianceNormalization, .supports = float_x,
	  .workspace = ert_cpu_mvn_workspace, .compute = ert_cpu_mvn },
	{ .compute = NULL },
};
