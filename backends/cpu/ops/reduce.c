/* SPDX-License-Identifier: MIT */
/*
 * CPU reference kernels: Reduce* (Mean, Sum, Max, Min, Prod, L1, L2, LogSum,
 * LogSumExp, SumSquare). ArgMax/ArgMin, CumSum and TopK are in reduce-index.c.
 *
 * The input is viewed through a compact plan: runs of adjacent axes that are all
 * kept or all reduced are merged (size-1 axes dropped), so the usual cases
 * (last axis, spatial axes of NCHW) become one or two strided loops. Float
 * dtypes accumulate in double, integer dtypes in int64 where the result is an
 * integer anyway (Sum, Prod, Max, Min, L1, SumSquare).
 */
#include <string.h>

#include "cpu/ops/norm-access.h"
#include "cpu/ops/reduce-kernels.h"
#include "cpu/vec/vec.h"
#include "ops/reduce-axes.h"

struct red_plan {
	int32_t nk, nr;
	int64_t kdim[ERT_MAX_RANK], kstride[ERT_MAX_RANK];
	int64_t rdim[ERT_MAX_RANK], rstride[ERT_MAX_RANK];
	int64_t red_n;               /* elements reduced into each output */
};

static void plan_build(const struct ert_value *x, uint32_t mask, struct red_plan *p)
{
	int64_t stride = 1;
	int last = -1; /* 0 kept, 1 reduced */

	memset(p, 0, sizeof(*p));
	p->red_n = 1;
	/* Walk from the innermost axis so merged runs get the smallest stride. */
	for (int32_t k = x->rank - 1; k >= 0; k--) {
		int64_t d = x->dims[k];
		int red = (mask >> k) & 1;

		if (red)
			p->red_n *= d;
		if (d == 1) {
			stride *= d;
			continue;
		}
		if (red == last) {
			if (red)
				p->rdim[p->nr - 1] *= d;
			else
				p->kdim[p->nk - 1] *= d;
		} else if (red) {
			p->rdim[p->nr] = d;
			p->rstride[p->nr++] = stride;
		} else {
			p->kdim[p->nk] = d;
			p->kstride[p->nk++] = stride;
		}
		last = red;
		stride *= d;
	}
}

struct red_args {
	const struct ert_value *in;
	struct ert_value *out;
	struct red_plan p;
	enum ert_op op;
	bool int_path;
	const struct ert_vec_kernels *vk;   /* contiguous float32 sums through vk->sum */
};

/* Offset in X of output element @o (kept axes stored innermost-first). */
static int64_t kept_offset(const struct red_plan *p, int64_t o)
{
	int64_t off = 0;

	for (int32_t i = 0; i < p->nk; i++) {
		off += (o % p->kdim[i]) * p->kstride[i];
		o /= p->kdim[i];
	}
	return off;
}

/* Calls the visitor for every reduced element of one output, innermost loop flat. */
#define FOR_REDUCED(p, base, OFF, BODY)                                                 \
	do {                                                                            \
		int64_t idx_[ERT_MAX_RANK] = { 0 };                                     \
		int64_t d0_ = (p)->nr ? (p)->rdim[0] : 1, s0_ = (p)->nr ? (p)->rstride[0] : 0; \
		int64_t outer_ = (p)->red_n / (d0_ ? d0_ : 1), o_;                      \
		if ((p)->red_n == 0)                                                    \
			break;                                                          \
		for (o_ = 0; o_ < outer_; o_++) {                                       \
			int64_t rb_ = (base);                                           \
			for (int32_t i_ = 1; i_ < (p)->nr; i_++)                        \
				rb_ += idx_[i_] * (p)->rstride[i_];                     \
			for (int64_t j_ = 0; j_ < d0_; j_++) {                          \
				int64_t OFF = rb_ + j_ * s0_;                           \
				BODY;                                                   \
			}                                                               \
			for (int32_t i_ = 1; i_ < (p)->nr; i_++) {                      \
				if (++idx_[i_] < (p)->rdim[i_])                         \
					break;                                          \
				idx_[i_] = 0;                                           \
			}                                                               \
		}                                                                       \
	} while (0)

/* Sum (or sum of squares) of @n contiguous floats with independent partial sums. */
static double sum_f32_run(const float *x, int64_t n, bool squares)
{
	double part[4] = { 0, 0, 0, 0 };
	int64_t k = 0;

	for (; k + 4 <= n; k += 4)
		for (int j = 0; j < 4; j++)
			part[j] += squares ? (double)x[k + j] * x[k + j] : x[k + j];
	for (; k < n; k++)
		part[0] += squares ? (double)x[k] * x[k] : x[k];
	return (part[0] + part[1]) + (part[2] + part[3]);
}

static double reduce_double(const struct red_args *a, int64_t base)
{
	const void *src = a->in->data;
	ert_dtype dt = a->in->dtype;
	const struct red_plan *p = &a->p;
	double acc, m;

	/* The common case: one contiguous float32 run (last axes of a row). */
	if (dt == ERT_DTYPE_FLOAT32 && p->nr == 1 && p->rstride[0] == 1) {
		const float *x = (const float *)src + base;
		int64_t n = p->rdim[0];

		double (*sum)(const float *, int64_t, bool) = a->vk ? a->vk->sum : sum_f32_run;

		switch (a->op) {
		case ERT_OP_ReduceSum:
			return sum(x, n, false);
		case ERT_OP_ReduceMean:
			return sum(x, n, false) / (double)n;
		case ERT_OP_ReduceSumSquare:
			return sum(x, n, true);
		case ERT_OP_ReduceL2:
			return sqrt(sum(x, n, true));
		default:
			break;
		}
	}

	switch (a->op) {
	case ERT_OP_ReduceMax:
		acc = -INFINITY;
		FOR_REDUCED(p, base, off, { double v = ert_nx_ld(src, dt, off); acc = v > acc || isnan(v) ? v : acc; });
		return acc;
	case ERT_OP_ReduceMin:
		acc = INFINITY;
		FOR_REDUCED(p, base, off, { double v = ert_nx_ld(src, dt, off); acc = v < acc || isnan(v) ? v : acc; });
		return acc;
	case ERT_OP_ReduceProd:
		acc = 1.0;
		FOR_REDUCED(p, base, off, acc *= ert_nx_ld(src, dt, off));
		return acc;
	case ERT_OP_ReduceL1:
		acc = 0.0;
		FOR_REDUCED(p, base, off, acc += fabs(ert_nx_ld(src, dt, off)));
		return acc;
	case ERT_OP_ReduceL2:
	case ERT_OP_ReduceSumSquare:
		acc = 0.0;
		FOR_REDUCED(p, base, off, { double v = ert_nx_ld(src, dt, off); acc += v * v; });
		return a->op == ERT_OP_ReduceL2 ? sqrt(acc) : acc;
	case ERT_OP_ReduceLogSumExp:
		m = -INFINITY;
		FOR_REDUCED(p, base, off, { double v = ert_nx_ld(src, dt, off); m = v > m ? v : m; });
		if (isinf(m))
			return m; /* empty set or all -inf: log(0); +inf stays +inf */
		acc = 0.0;
		FOR_REDUCED(p, base, off, acc += exp(ert_nx_ld(src, dt, off) - m));
		return m + log(acc);
	default: /* Sum, Mean, LogSum */
		acc = 0.0;
		FOR_REDUCED(p, base, off, acc += ert_nx_ld(src, dt, off));
		if (a->op == ERT_OP_ReduceMean)
			return acc / (double)p->red_n;
		if (a->op == ERT_OP_ReduceLogSum)
			return log(acc);
		return acc;
	}
}

static int64_t ld_int(const void *p, ert_dtype dt, int64_t i)
{
	switch (dt) {
	case ERT_DTYPE_INT64: return ((const int64_t *)p)[i];
	case ERT_DTYPE_UINT64: return (int64_t)((const uint64_t *)p)[i];
	default: return (int64_t)ert_nx_ld(p, dt, i);
	}
}

static void st_int(void *p, ert_dtype dt, int64_t i, int64_t v)
{
	switch (dt) {
	case ERT_DTYPE_INT64: ((int64_t *)p)[i] = v; break;
	case ERT_DTYPE_UINT64: ((uint64_t *)p)[i] = (uint64_t)v; break;
	case ERT_DTYPE_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
	case ERT_DTYPE_UINT32: ((uint32_t *)p)[i] = (uint32_t)v; break;
	case ERT_DTYPE_INT16: ((int16_t *)p)[i] = (int16_t)v; break;
	case ERT_DTYPE_UINT16: ((uint16_t *)p)[i] = (uint16_t)v; break;
	case ERT_DTYPE_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
	case ERT_DTYPE_BOOL: ((uint8_t *)p)[i] = v != 0; break;
	default: ((uint8_t *)p)[i] = (uint8_t)v; break;
	}
}

/* Integer arithmetic wraps like the two's-complement types ONNX runtimes use. */
static int64_t reduce_int(const struct red_args *a, int64_t base)
{
	const void *src = a->in->data;
	ert_dtype dt = a->in->dtype;
	const struct red_plan *p = &a->p;
	uint64_t acc;
	int64_t m;

	switch (a->op) {
	case ERT_OP_ReduceMax:
		m = INT64_MIN;
		FOR_REDUCED(p, base, off, { int64_t v = ld_int(src, dt, off); m = v > m ? v : m; });
		return m;
	case ERT_OP_ReduceMin:
		m = INT64_MAX;
		FOR_REDUCED(p, base, off, { int64_t v = ld_int(src, dt, off); m = v < m ? v : m; });
		return m;
	case ERT_OP_ReduceProd:
		acc = 1;
		FOR_REDUCED(p, base, off, acc *= (uint64_t)ld_int(src, dt, off));
		return (int64_t)acc;
	case ERT_OP_ReduceL1:
		acc = 0;
		FOR_REDUCED(p, base, off, { int64_t v = ld_int(src, dt, off); acc += (uint64_t)(v < 0 ? -v : v); });
		return (int64_t)acc;
	case ERT_OP_ReduceSumSquare:
		acc = 0;
		FOR_REDUCED(p, base, off, { uint64_t v = (uint64_t)ld_int(src, dt, off); acc += v * v; });
		return (int64_t)acc;
	default:
		acc = 0;
		FOR_REDUCED(p, base, off, acc += (uint64_t)ld_int(src, dt, off));
		return (int64_t)acc;
	}
}

static void reduce_range(void *arg, int64_t begin, int64_t end)
{
	const struct red_args *a = arg;
	ert_dtype dt = a->out->dtype;

	for (int64_t o = begin; o < end; o++) {
		int64_t base = kept_offset(&a->p, o);

		if (a->int_path) {
			int64_t v = reduce_int(a, base);

			/* Max/Min of an empty set: the dtype's lowest/highest value. */
			if (a->p.red_n == 0 && a->op == ERT_OP_ReduceMax)
				ert_nx_st(a->out->data, dt, o, -INFINITY);
			else if (a->p.red_n == 0 && a->op == ERT_OP_ReduceMin)
				ert_nx_st(a->out->data, dt, o, INFINITY);
			else
				st_int(a->out->data, dt, o, v);
		} else {
			ert_nx_st(a->out->data, dt, o, reduce_double(a, base));
		}
	}
}

static bool int_result(enum ert_op op)
{
	return op == ERT_OP_ReduceSum || op == ERT_OP_ReduceProd || op == ERT_OP_ReduceMax ||
	       op == ERT_OP_ReduceMin || op == ERT_OP_ReduceL1 || op == ERT_OP_ReduceSumSquare;
}

/* Sums over one contiguous float32 run per output go through the level's vector sum. */
static const struct ert_vec_kernels *reduce_vec(const struct ert_cpu *cpu, const struct red_args *a)
{
	bool sum = a->op == ERT_OP_ReduceSum || a->op == ERT_OP_ReduceMean ||
		   a->op == ERT_OP_ReduceSumSquare || a->op == ERT_OP_ReduceL2;

	if (!sum || a->in->dtype != ERT_DTYPE_FLOAT32 || a->p.nr != 1 || a->p.rstride[0] != 1)
		return NULL;
	return ert_vec_kernels_for(cpu->isa);
}

static ert_status reduce_prepare(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	struct ert_reduce_axes ra;
	struct red_args a = { .in = in, .out = x->out[0], .op = x->node->op };
	const struct ert_vec_kernels *vk;
	struct ert_err rerr;

	/* axes given as an input may only be known at run time; compute() checks them */
	if ((x->n_in > 1 && x->in[1] && !x->in_const[1]) ||
	    ert_reduce_axes_get(x->node, in, x->n_in > 1 ? x->in[1] : NULL, &ra, &rerr) != ERT_OK ||
	    ra.noop)
		return ERT_OK;
	plan_build(in, ra.mask, &a.p);
	vk = reduce_vec(cpu, &a);
	x->kernel = vk ? vk->name_reduce : NULL;
	return ERT_OK;
}

static ert_status reduce_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	struct ert_reduce_axes ra;
	struct red_args a = { .in = in, .out = x->out[0], .op = x->node->op };
	int64_t n_out = x->out[0]->numel, grain;
	ert_status st;

	st = ert_reduce_axes_get(x->node, in, x->n_in > 1 ? x->in[1] : NULL, &ra, err);
	if (st != ERT_OK)
		return st;
	if (ra.noop) {
		memcpy(x->out[0]->data, in->data, in->nbytes);
		return ERT_OK;
	}
	plan_build(in, ra.mask, &a.p);
	a.int_path = !ert_nx_is_float(in->dtype) && int_result(a.op);
	a.vk = reduce_vec(cpu, &a);
	if (n_out == 0)
		return ERT_OK;
	grain = 16384 / (a.p.red_n > 0 ? a.p.red_n : 1);
	ert_parallel_for(cpu->pool, n_out, grain < 1 ? 1 : grain, reduce_range, &a);
	return ERT_OK;
}

const struct ert_cpu_op ert_cpu_ops_reduce[] = {
	{ .op = ERT_OP_ReduceMean, .prepare = reduce_prepare, .compute = reduce_compute },
	{ .op = ERT_OP_ReduceSum, .prepare = reduce_prepare, .compute = reduce_compute },
	{ .op = ERT_OP_ReduceMax, .compute = reduce_compute },
	{ .op = ERT_OP_ReduceMin, .compute = reduce_compute },
	{ .op = ERT_OP_ReduceProd, .compute = reduce_compute },
	{ .op = ERT_OP_ReduceL1, .compute = reduce_compute },
	{ .op = ERT_OP_ReduceL2, .prepare = reduce_prepare, .compute = reduce_compute },
	{ .op = ERT_OP_ReduceLogSum, .compute = reduce_compute },
	{ .op = ERT_OP_ReduceLogSumExp, .compute = reduce_compute },
	{ .op = ERT_OP_ReduceSumSquare, .prepare = reduce_prepare, .compute = reduce_compute },
	{ .op = ERT_OP_ArgMax, .compute = ert_cpu_argminmax },
	{ .op = ERT_OP_ArgMin, .compute = ert_cpu_argminmax },
	{ .op = ERT_OP_CumSum, .compute = ert_cpu_cumsum },
	{ .op = ERT_OP_TopK, .workspace = ert_cpu_topk_workspace, .compute = ert_cpu_topk },
	{ .compute = NULL },
};
