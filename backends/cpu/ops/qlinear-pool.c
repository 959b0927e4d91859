/* SPDX-License-Identifier: MIT */
/*
 * CPU QLinearAveragePool and QLinearGlobalAveragePool (com.microsoft),
 * uint8 and int8. One item of parallel work is one (n, c) plane.
 *
 *   float rule (onnxruntime: dequantize, average, quantize): the window's
 *   sum of (x - x_zp) times x_scale, divided by the tap count (the whole
 *   window clipped to the padded input under count_include_pad) and by
 *   y_scale in double, rounded half to even, plus y_zp;
 *   fixed rule (y_scale = x_scale, y_zp = x_zp, count_include_pad = 0): the
 *   raw sum of the in-bounds taps divided by their count, rounded half away
 *   from zero, as the enpu POOL command.
 */
#include <string.h>

#include "cpu/ops/qlinear-kernels.h"
#include "ops/linalg-geom.h"

struct qpool_job {
	struct ert_conv_geom g;
	struct ert_qout qo;
	bool global, include_pad, channels_last;
	ert_dtype dt;
	const void *x;
	void *y;
	int32_t xzp;
	double xs, ys;
	int64_t channels, in_sp, out_sp;
	const struct ert_q8_pool_kernels *qk;  /* global NCHW: the level's plane sums */
};

const struct ert_q8_pool_kernels *ert_q8_pool_kernels_for(enum ert_cpu_isa isa)
{
	return isa >= ERT_ISA_AVX512 ? &ert_q8_pool_avx512 : isa >= ERT_ISA_AVX2 ? &ert_q8_pool_avx2
									  : NULL;
}

/* One axis of a window: in-bounds taps [lo, hi) and the tap count under count_include_pad. */
static void axis_taps(const struct ert_conv_geom *g, int ax, int64_t o, int64_t *start,
		      int64_t *lo, int64_t *hi, int64_t *padded)
{
	int64_t s = o * g->stride[ax] - g->pad_b[ax], e = s + g->k[ax];
	int64_t pe = g->in[ax] + g->pad_e[ax];

	*start = s;
	*lo = s < 0 ? -s : 0;
	*hi = (e > g->in[ax] ? g->in[ax] : e) - s;
	if (*hi < *lo)
		*hi = *lo;
	*padded = (e < pe ? e : pe) - (s > -g->pad_b[ax] ? s : -g->pad_b[ax]);
}

static int32_t qpool_out(const struct qpool_job *j, int64_t sum, int64_t count, int64_t div)
{
	if (j->qo.fixed) {
		int32_t r = ert_quant_avg_round(sum, count);

		return r < j->qo.lo ? j->qo.lo : r > j->qo.hi ? j->qo.hi : r;
	}
	if (div <= 0)
		return ert_qout_float(&j->qo, 0.0);
	return ert_qout_float(&j->qo, j->xs * (double)(sum - (int64_t)j->xzp * count) /
					      (double)div / j->ys);
}

static void avg_plane(const struct qpool_job *j, int64_t pl)
{
	const struct ert_conv_geom *g = &j->g;
	int64_t xoff = pl * j->in_sp, o = pl * j->out_sp;

	for (int64_t od = 0; od < g->out[0]; od++) {
		int64_t sd, ld, hd, pd;

		axis_taps(g, 0, od, &sd, &ld, &hd, &pd);
		for (int64_t oh = 0; oh < g->out[1]; oh++) {
			int64_t sh, lh, hh, ph;

			axis_taps(g, 1, oh, &sh, &lh, &hh, &ph);
			for (int64_t ow = 0; ow < g->out[2]; ow++, o++) {
				int64_t sw, lw, hw, pw, sum = 0;

				axis_taps(g, 2, ow, &sw, &lw, &hw, &pw);
				for (int64_t a = ld; a < hd; a++)
					for (int64_t b = lh; b < hh; b++) {
						int64_t row = xoff + ((sd + a) * g->in[1] + sh + b) *
							      g->in[2] + sw;

						if (j->dt == ERT_DTYPE_UINT8)
							for (int64_t c = lw; c < hw; c++)
								sum += ((const uint8_t *)j->x)[row + c];
						else
							for (int64_t c = lw; c < hw; c++)
								sum += ((const int8_t *)j->x)[row + c];
					}
				int64_t count = (hd - ld) * (hh - lh) * (hw - lw);

				/* a padded window may pass int64 (each side <= 2^50):
				 * saturated, it still divides the sum to about 0 */
				int64_t div = j->include_pad
						      ? ert_mul_sat_i64(ert_mul_sat_i64(pd, ph), pw)
						      : count;

				ert_q8_store(j->y, j->dt, o, qpool_out(j, sum, count, div));
			}
		}
	}
}

/* (n, c): NCHW planes are contiguous; channels_last walks with stride C. */
static void global_plane(const struct qpool_job *j, int64_t pl)
{
	int64_t n = pl / j->channels, c = pl % j->channels;
	int64_t base = j->channels_last ? n * j->in_sp * j->channels + c : pl * j->in_sp;
	int64_t step = j->channels_last ? j->channels : 1, sum = 0;

	for (int64_t i = 0; i < j->in_sp; i++)
		sum += ert_q8_load(j->x, j->dt, base + i * step);
	ert_q8_store(j->y, j->dt, pl, qpool_out(j, sum, j->in_sp, j->in_sp));
}

static void qpool_planes(void *arg, int64_t begin, int64_t end)
{
	const struct qpool_job *j = arg;

	if (j->qk) {
		int64_t sums[256];

		for (int64_t p0 = begin; p0 < end; p0 += 256) {
			int64_t np = end - p0 < 256 ? end - p0 : 256;

			j->qk->plane_sums((const uint8_t *)j->x + p0 * j->in_sp, np, j->in_sp,
					  j->dt == ERT_DTYPE_INT8, sums);
			for (int64_t p = 0; p < np; p++)
				ert_q8_store(j->y, j->dt, p0 + p,
					     qpool_out(j, sums[p], j->in_sp, j->in_sp));
		}
		return;
	}

	for (int64_t pl = begin; pl < end; pl++) {
		if (j->global)
			global_plane(j, pl);
		else
			avg_plane(j, pl);
	}
}

/* QLinearGlobalAveragePool over NCHW planes: the level's plane sums (NULL: the loops above). */
static const struct ert_q8_pool_kernels *qpool_vec(const struct ert_cpu *cpu,
						   const struct ert_exec *x)
{
	if (x->node->op != ERT_OP_QLinearGlobalAveragePool ||
	    ert_attr_int(x->node, "channels_last", 0) != 0 ||
	    (x->in[0]->dtype != ERT_DTYPE_UINT8 && x->in[0]->dtype != ERT_DTYPE_INT8))
		return NULL;
	return ert_q8_pool_kernels_for(cpu->isa);
}

static ert_status qpool_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *xv = x->in[0];
	struct qpool_job j;
	ert_status st;

	memset(&j, 0, sizeof(j));
	j.global = x->node->op == ERT_OP_QLinearGlobalAveragePool;
	j.dt = xv->dtype;
	j.x = xv->data;
	j.y = x->out[0]->data;
	j.xs = ert_qparam_float(x->in[1], 0);
	j.ys = ert_qparam_float(x->in[3], 0);
	j.xzp = ert_qparam_int(x->n_in > 2 ? x->in[2] : NULL, 0);
	j.include_pad = ert_attr_int(x->node, "count_include_pad", 0) != 0;
	if ((st = ert_qout_init(&j.qo, x, x->out[0], x->n_in > 4 ? x->in[4] : NULL, err)) != ERT_OK)
		return st;
	if (j.global) {
		j.channels_last = ert_attr_int(x->node, "channels_last", 0) != 0;
		j.channels = xv->dims[j.channels_last ? xv->rank - 1 : 1];
		j.in_sp = 1;
		for (int32_t i = 2; i < xv->rank; i++)
			j.in_sp *= xv->dims[j.channels_last ? i - 1 : i];
	} else {
		uint32_t nk;
		const int64_t *ks = ert_attr_ints(x->node, "kernel_shape", &nk);

		if (!ks || (int32_t)nk != xv->rank - 2)
			return ert_node_fail(x->node, err, ERT_STATUS_INVALID_MODEL,
					     "bad kernel_shape");
		st = ert_geom_conv(x->node, xv->rank - 2, xv->dims + 2, ks,
				   ert_attr_int(x->node, "ceil_mode", 0) != 0, &j.g, err);
		if (st != ERT_OK)
			return st;
		j.channels = xv->dims[1];
		j.in_sp = ert_geom_in_size(&j.g);
		j.out_sp = ert_geom_out_size(&j.g);
	}
	if (x->out[0]->numel == 0)
		return ERT_OK;
	j.qk = qpool_vec(cpu, x);
	ert_parallel_for(cpu->pool, xv->dims[0] * j.channels, j.qk ? 64 : 1, qpool_planes, &j);
	return ERT_OK;
}

static ert_status qpool_prepare(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_q8_pool_kernels *qk = qpool_vec(cpu, x);

	(void)err;
	x->kernel = qk ? qk->name : NULL;
	return ERT_OK;
}

const struct ert_cpu_op ert_cpu_ops_qlinear_pool[] = {
	{ .op = ERT_OP_QLinearAveragePool, .compute = qpool_compute },
	{ .op = ERT_OP_QLinearGlobalAveragePool, .prepare = qpool_prepare,
	  .compute = qpool_compute },
	{ .compute = NULL },
};
