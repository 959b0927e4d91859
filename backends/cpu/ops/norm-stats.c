/* SPDX-License-Identifier: MIT */
/*
 * CPU reference kernels: normalisations by mean and variance (LayerNormalization,
 * BatchNormalization, InstanceNormalization, GroupNormalization,
 * MeanVarianceNormalization). Statistics are two-pass in double.
 */
#include <string.h>

#include "cpu/ops/norm-access.h"
#include "cpu/ops/norm-kernels.h"
#include "cpu/vec/vec.h"

/* Mean and population variance of the @n contiguous elements at @base. */
static void stats(const void *p, ert_dtype dt, int64_t base, int64_t n, double *mean_out,
		  double *var_out)
{
	double sum = 0.0, sq = 0.0, mean;

	for (int64_t k = 0; k < n; k++)
		sum += ert_nx_ld(p, dt, base + k);
	mean = n ? sum / (double)n : 0.0;
	for (int64_t k = 0; k < n; k++) {
		double d = ert_nx_ld(p, dt, base + k) - mean;

		sq += d * d;
	}
	*mean_out = mean;
	*var_out = n ? sq / (double)n : 0.0;
}

static int64_t grain_for(int64_t work_per_item)
{
	int64_t g = 16384 / (work_per_item > 0 ? work_per_item : 1);

	return g < 1 ? 1 : g;
}

/* ---- LayerNormalization ---- */

struct ln_args {
	const struct ert_value *in, *scale, *bias;
	struct ert_value *out, *mean, *inv;
	int64_t n;
	double eps;
	int32_t nd_rank;                 /* rank of the normalised part */
	int64_t nd_dims[ERT_MAX_RANK];
	int64_t s_stride[ERT_MAX_RANK], b_stride[ERT_MAX_RANK];
	const struct ert_vec_kernels *vk;   /* ln_fast() rows through vk->layer_norm */
};

/* Index into Scale/B (numpy-broadcast to the normalised shape) for flat index @j. */
static int64_t bcast_index(const struct ln_args *a, const int64_t *stride, int64_t j)
{
	int64_t idx = 0;

	for (int32_t k = a->nd_rank - 1; k >= 0; k--) {
		idx += (j % a->nd_dims[k]) * stride[k];
		j /= a->nd_dims[k];
	}
	return idx;
}

static void bcast_strides(const struct ln_args *a, const struct ert_value *p, int64_t *stride)
{
	int64_t s = 1;

	for (int32_t k = a->nd_rank - 1; k >= 0; k--) {
		int32_t pk = k - (a->nd_rank - (p ? p->rank : 0));

		if (!p || pk < 0 || p->dims[pk] == 1) {
			stride[k] = 0;
			continue;
		}
		stride[k] = s;
		s *= p->dims[pk];
	}
}

/* float32 with full-size Scale/B: the layout every transformer export uses. */
static bool ln_fast(const struct ln_args *a)
{
	return a->in->dtype == ERT_DTYPE_FLOAT32 && a->scale->dtype == ERT_DTYPE_FLOAT32 &&
	       a->scale->numel == a->n &&
	       (!a->bias || (a->bias->dtype == ERT_DTYPE_FLOAT32 && a->bias->numel == a->n));
}

static void ln_row_f32(const struct ln_args *a, int64_t r, double *mean_out, double *inv_out)
{
	const float *x = (const float *)a->in->data + r * a->n;
	const float *s = a->scale->data, *b = a->bias ? a->bias->data : NULL;
	float *y = (float *)a->out->data + r * a->n;
	double sum = 0.0, sq = 0.0;
	float mean, inv;

	for (int64_t j = 0; j < a->n; j++)
		sum += x[j];
	mean = (float)(sum / (double)a->n);
	for (int64_t j = 0; j < a->n; j++) {
		float d = x[j] - mean;

		sq += (double)(d * d);
	}
	inv = (float)(1.0 / sqrt(sq / (double)a->n + a->eps));
	if (b) {
		for (int64_t j = 0; j < a->n; j++)
			y[j] = (x[j] - mean) * inv * s[j] + b[j];
	} else {
		for (int64_t j = 0; j < a->n; j++)
			y[j] = (x[j] - mean) * inv * s[j];
	}
	*mean_out = mean;
	*inv_out = inv;
}

static void ln_range(void *arg, int64_t begin, int64_t end)
{
	const struct ln_args *a = arg;
	ert_dtype dt = a->in->dtype;
	bool s_full = a->scale->numel == a->n;
	bool b_full = a->bias && a->bias->numel == a->n;
	bool fast = ln_fast(a);

	for (int64_t r = begin; r < end; r++) {
		if (fast) {
			double mean, inv;

			if (a->vk) {
				float fm, fi;

				a->vk->layer_norm((const float *)a->in->data + r * a->n,
						  a->scale->data, a->bias ? a->bias->data : NULL,
						  (float *)a->out->data + r * a->n, a->n, a->eps,
						  &fm, &fi);
				mean = fm;
				inv = fi;
			} else {
				ln_row_f32(a, r, &mean, &inv);
			}
			if (a->mean)
				ert_nx_st(a->mean->data, a->mean->dtype, r, mean);
			if (a->inv)
				ert_nx_st(a->inv->data, a->inv->dtype, r, inv);
			continue;
		}
		int64_t base = r * a->n;
		double mean, var, inv;

		stats(a->in->data, dt, base, a->n, &mean, &var);
		inv = 1.0 / sqrt(var + a->eps);
		for (int64_t j = 0; j < a->n; j++) {
			double s = ert_nx_ld(a->scale->data, a->scale->dtype,
					     s_full ? j : bcast_index(a, a->s_stride, j));
			double b = !a->bias ? 0.0
				   : ert_nx_ld(a->bias->data, a->bias->dtype,
					       b_full ? j : bcast_index(a, a->b_stride, j));
			double v = (ert_nx_ld(a->in->data, dt, base + j) - mean) * inv;

			ert_nx_st(a->out->data, dt, base + j, v * s + b);
		}
		if (a->mean)
			ert_nx_st(a->mean->data, a->mean->dtype, r, mean);
		if (a->inv)
			ert_nx_st(a->inv->data, a->inv->dtype, r, inv);
	}
}

/* A float32 LayerNormalization with full-size Scale/B runs the level's vector rows. */
static const struct ert_vec_kernels *ln_vec(const struct ert_cpu *cpu, const struct ln_args *a)
{
	return a->n > 0 && ln_fast(a) ? ert_vec_kernels_for(cpu->isa) : NULL;
}

static void ln_args_of(struct ert_exec *x, int32_t axis, struct ln_args *a)
{
	a->n = ert_nx_span(x->in[0], axis, x->in[0]->rank);
}

ert_status ert_cpu_layer_norm_prepare(struct ert_cpu *cpu, struct ert_exec *x,
				      struct ert_err *err)
{
	struct ln_args a = { .in = x->in[0], .scale = x->in[1],
			     .bias = x->n_in > 2 ? x->in[2] : NULL };
	const struct ert_vec_kernels *vk;
	int32_t axis;

	if (ert_norm_axis(ert_attr_int(x->node, "axis", -1), x->in[0]->rank, &axis)) {
		ln_args_of(x, axis, &a);
		vk = ln_vec(cpu, &a);
		x->kernel = vk ? vk->name_norm : NULL;
	}
	return ERT_OK;
}

ert_status ert_cpu_layer_norm(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	struct ln_args a = {
		.in = in, .scale = x->in[1], .bias = x->n_in > 2 ? x->in[2] : NULL,
		.out = x->out[0], .mean = x->n_out > 1 ? x->out[1] : NULL,
		.inv = x->n_out > 2 ? x->out[2] : NULL,
		.eps = ert_attr_float(x->node, "epsilon", 1e-5f),
	};
	int32_t axis;
	int64_t outer;

	if (!ert_norm_axis(ert_attr_int(x->node, "axis", -1), in->rank, &axis))
		return ert_node_fail(x->node, err, ERT_STATUS_SHAPE, "axis out of range");
	outer = ert_nx_span(in, 0, axis);
	ln_args_of(x, axis, &a);
	a.vk = ln_vec(cpu, &a);
	a.nd_rank = in->rank - axis;
	memcpy(a.nd_dims, in->dims + axis, sizeof(int64_t) * (size_t)a.nd_rank);
	bcast_strides(&a, a.scale, a.s_stride);
	bcast_strides(&a, a.bias, a.b_stride);
	if (in->numel > 0)
		ert_parallel_for(cpu->pool, outer, grain_for(a.n * 3), ln_range, &a);
	return ERT_OK;
}

/* ---- per-channel normalisations over [N, C, spatial] ---- */

struct chan_args {
	const struct ert_value *in, *scale, *bias, *mean, *var;
	struct ert_value *out, *run_mean, *run_var;
	int64_t n, c, spatial, groups;
	double eps, momentum;
};

/* y = (x - mean) * inv * scale + bias over one channel plane. */
static void apply_plane(const struct chan_args *a, int64_t base, double mean, double inv,
			int64_t ch)
{
	double s = ert_nx_ld(a->scale->data, a->scale->dtype, ch);
	double b = ert_nx_ld(a->bias->data, a->bias->dtype, ch);
	ert_dtype dt = a->in->dtype;

	if (dt == ERT_DTYPE_FLOAT32) {
		const float *x = (const float *)a->in->data + base;
		float *y = (float *)a->out->data + base;
		float mul = (float)(inv * s), m = (float)mean, add = (float)b;

		for (int64_t k = 0; k < a->spatial; k++)
			y[k] = (x[k] - m) * mul + add;
		return;
	}

	for (int64_t k = 0; k < a->spatial; k++) {
		double v = (ert_nx_ld(a->in->data, dt, base + k) - mean) * inv;

		ert_nx_st(a->out->data, dt, base + k, v * s + b);
	}
}

static void bn_range(void *arg, int64_t begin, int64_t end)
{
	const struct chan_args *a = arg;

	for (int64_t r = begin; r < end; r++) {
		int64_t ch = r % a->c;
		double mean = ert_nx_ld(a->mean->data, a->mean->dtype, ch);
		double var = ert_nx_ld(a->var->data, a->var->dtype, ch);

		apply_plane(a, r * a->spatial, mean, 1.0 / sqrt(var + a->eps), ch);
	}
}

/* Training mode: batch statistics per channel, running statistics updated. */
static void bn_train_range(void *arg, int64_t begin, int64_t end)
{
	const struct chan_args *a = arg;
	ert_dtype dt = a->in->dtype;

	for (int64_t ch = begin; ch < end; ch++) {
		double sum = 0.0, sq = 0.0, mean, var, cnt = (double)(a->n * a->spatial);

		for (int64_t b = 0; b < a->n; b++)
			for (int64_t k = 0; k < a->spatial; k++)
				sum += ert_nx_ld(a->in->data, dt, (b * a->c + ch) * a->spatial + k);
		mean = cnt > 0 ? sum / cnt : 0.0;
		for (int64_t b = 0; b < a->n; b++)
			for (int64_t k = 0; k < a->spatial; k++) {
				double d = ert_nx_ld(a->in->data, dt,
						     (b * a->c + ch) * a->spatial + k) - mean;

				sq += d * d;
			}
		var = cnt > 0 ? sq / cnt : 0.0;
		for (int64_t b = 0; b < a->n; b++)
			apply_plane(a, (b * a->c + ch) * a->spatial, mean,
				    1.0 / sqrt(var + a->eps), ch);
		if (a->run_mean)
			ert_nx_st(a->run_mean->data, a->run_mean->dtype, ch,
				  ert_nx_ld(a->mean->data, a->mean->dtype, ch) * a->momentum +
					  mean * (1.0 - a->momentum));
		if (a->run_var)
			ert_nx_st(a->run_var->data, a->run_var->dtype, ch,
				  ert_nx_ld(a->var->data, a->var->dtype, ch) * a->momentum +
					  var * (1.0 - a->momentum));
	}
}

static void chan_init(struct chan_args *a, struct ert_exec *x)
{
	const struct ert_value *in = x->in[0];

	memset(a, 0, sizeof(*a));
	a->in = in;
	a->out = x->out[0];
	a->scale = x->in[1];
	a->bias = x->in[2];
	a->n = in->dims[0];
	a->c = in->dims[1];
	a->spatial = ert_nx_span(in, 2, in->rank);
	a->eps = ert_attr_float(x->node, "epsilon", 1e-5f);
}

ert_status ert_cpu_batch_norm(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	struct chan_args a;

	chan_init(&a, x);
	a.mean = x->in[3];
	a.var = x->in[4];
	if (x->node->opset >= 14 && ert_attr_int(x->node, "training_mode", 0)) {
		a.momentum = ert_attr_float(x->node, "momentum", 0.9f);
		a.run_mean = x->n_out > 1 ? x->out[1] : NULL;
		a.run_var = x->n_out > 2 ? x->out[2] : NULL;
		if (a.c > 0)
			ert_parallel_for(cpu->pool, a.c, 1, bn_train_range, &a);
		return ERT_OK;
	}
	if (x->in[0]->numel > 0)
		ert_parallel_for(cpu->pool, a.n * a.c, grain_for(a.spatial), bn_range, &a);
	return ERT_OK;
}

static void in_range(void *arg, int64_t begin, int64_t end)
{
	const struct chan_args *a = arg;

	for (int64_t r = begin; r < end; r++) {
		double mean, var;

		stats(a->in->data, a->in->dtype, r * a->spatial, a->spatial, &mean, &var);
		apply_plane(a, r * a->spatial, mean, 1.0 / sqrt(var + a->eps), r % a->c);
	}
}

ert_status ert_cpu_instance_norm(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	struct chan_args a;

	chan_init(&a, x);
	if (x->in[0]->numel > 0)
		ert_parallel_for(cpu->pool, a.n * a.c, grain_for(a.spatial * 3), in_range, &a);
	return ERT_OK;
}

static void gn_range(void *arg, int64_t begin, int64_t end)
{
	const struct chan_args *a = arg;
	int64_t cpg = a->c / a->groups;
	bool per_channel = a->scale->numel == a->c;

	for (int64_t r = begin; r < end; r++) {
		int64_t g = r % a->groups, base = r * cpg * a->spatial;
		double mean, var, inv;

		stats(a->in->data, a->in->dtype, base, cpg * a->spatial, &mean, &var);
		inv = 1.0 / sqrt(var + a->eps);
		for (int64_t k = 0; k < cpg; k++)
			apply_plane(a, base + k * a->spatial, mean, inv,
				    per_channel ? g * cpg + k : g);
	}
}

ert_status ert_cpu_group_norm(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	struct chan_args a;

	chan_init(&a, x);
	a.groups = ert_attr_int(x->node, "num_groups", 1);
	if (a.groups <= 0 || a.c % a.groups)
		return ert_node_fail(x->node, err, ERT_STATUS_SHAPE, "bad num_groups");
	if (x->in[0]->numel > 0)
		ert_parallel_for(cpu->pool, a.n * a.groups, 1, gn_range, &a);
	return ERT_OK;
}

/* ---- MeanVarianceNormalization: statistics over an arbitrary axis set ---- */

/* Group of flat index @i: its coordinates on the kept axes, row-major. */
static int64_t mvn_group(const struct ert_value *v, uint32_t reduce_mask, int64_t i)
{
	int64_t g = 0, mul = 1;

	for (int32_t k = v->rank - 1; k >= 0; k--) {
		int64_t c = i % v->dims[k];

		i /= v->dims[k];
		if (!(reduce_mask & (1u << k))) {
			g += c * mul;
			mul *= v->dims[k];
		}
	}
	return g;
}

static uint32_t mvn_mask(const struct ert_exec *x, int64_t *groups)
{
	static const int64_t def_axes[3] = { 0, 2, 3 };
	const struct ert_value *in = x->in[0];
	uint32_t n, mask = 0;
	const int64_t *axes = ert_attr_ints(x->node, "axes", &n);
	int32_t a;

	if (!axes) {
		axes = def_axes;
		n = 3;
	}
	for (uint32_t i = 0; i < n; i++)
		if (ert_norm_axis(axes[i], in->rank, &a))
			mask |= 1u << a;
	*groups = 1;
	for (int32_t k = 0; k < in->rank; k++)
		if (!(mask & (1u << k)))
			*groups *= in->dims[k];
	return mask;
}

size_t ert_cpu_mvn_workspace(const struct ert_cpu *cpu, const struct ert_exec *x)
{
	int64_t groups;

	mvn_mask(x, &groups);
	return (size_t)groups * 2 * sizeof(double);
}

ert_status ert_cpu_mvn(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	int64_t groups;
	uint32_t mask = mvn_mask(x, &groups);
	double *sum = x->workspace, *sq = sum + groups;
	double per = groups > 0 ? (double)in->numel / (double)groups : 0.0;

	if (in->numel == 0)
		return ERT_OK;
	memset(sum, 0, (size_t)groups * 2 * sizeof(double));
	for (int64_t i = 0; i < in->numel; i++) {
		double v = ert_nx_ld(in->data, in->dtype, i);
		int64_t g = mvn_group(in, mask, i);

		sum[g] += v;
		sq[g] += v * v;
	}
	for (int64_t g = 0; g < groups; g++) {
		double mean = sum[g] / per, var = sq[g] / per - mean * mean;

		sum[g] = mean;
		/* ONNX's function body: (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9). */
		sq[g] = sqrt(var > 0.0 ? var : 0.0) + 1e-9;
	}
	for (int64_t i = 0; i < in->numel; i++) {
		int64_t g = mvn_group(in, mask, i);

		ert_nx_st(x->out[0]->data, in->dtype, i,
			  (ert_nx_ld(in->data, in->dtype, i) - sum[g]) / sq[g]);
	}
	return ERT_OK;
}
