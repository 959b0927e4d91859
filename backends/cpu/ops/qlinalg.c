/* SPDX-License-Identifier: MIT */
/*
 * CPU integer linear algebra with ONNX's exact rules: products of
 * (x - x_zero_point) and (w - w_zero_point) summed in int32; QLinear ops then
 * requantise with the real multiplier x_scale * w_scale / y_scale, rounding
 * half to even and saturating to the output type (the float rule), or with
 * the fixed-point rule of docs/int8.md under "ert.requant = 1", then clamp to
 * "ert.clamp". This is the oracle the NPU is checked against bit for bit: the
 * loops below are direct (no im2col), vectorisable over output rows and
 * columns. QGemm (com.microsoft) shares the matrix kernel.
 */
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "cpu/ops/qlinalg.h"

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

int32_t ert_qlinalg_zp(const struct ert_value *v, int64_t c)
{
	return zp_at(v, c);
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
	if (!ys)
		return (double)m; /* QGemm's float output */
	m /= scale_at(ys, 0);
	if (ys->dtype == ERT_DTYPE_FLOAT16 && as->dtype == ERT_DTYPE_FLOAT16)
		m = ert_fp16_to_fp32(ert_fp32_to_fp16(m));
	return (double)m;
}

/*
 * Fill @ch[c] for c < @count with the multiplier a_s * b_s[c] / y_s (times
 * @alpha for QGemm's float rule). UNSUPPORTED when the fixed rule cannot
 * represent one (shape inference refuses those; this guards the kernel).
 */
static ert_status q_chans(const struct ert_exec *x, const struct ert_qout *qo,
			  const struct ert_value *as, const struct ert_value *bs,
			  const struct ert_value *ys, float alpha, int64_t count, struct q_chan *ch,
			  struct ert_err *err)
{
	for (int64_t c = 0; c < count; c++) {
		ch[c].m = ch[c].s = 0;
		ch[c].f = 0.0;
		if (!qo->fixed) {
			float f = (float)q_mult(as, 0, bs, c, ys);

			ch[c].f = alpha == 1.0f ? (double)f : (double)(f * alpha);
			continue;
		}
		if (!ert_quant_product_multiplier(ert_qparam_float(as, 0), ert_qparam_float(bs, c),
						  ert_qparam_float(ys, 0), &ch[c].m, &ch[c].s))
			return ert_node_fail(x->node, err, ERT_STATUS_UNSUPPORTED,
					     "multiplier of channel %lld cannot be represented",
					     (long long)c);
	}
	return ERT_OK;
}

static inline int32_t q_finish(const struct ert_qout *qo, const struct q_chan *ch, int32_t acc)
{
	if (qo->fixed)
		return ert_qout_fixed(qo, acc, ch->m, ch->s);
	return ert_qout_float(qo, (double)acc * ch->f);
}

static size_t q_chans_bytes(int64_t count)
{
	return (size_t)(count > 0 ? count : 1) * sizeof(struct q_chan);
}

size_t ert_qlinalg_chans_bytes(int64_t count)
{
	return q_chans_bytes(count);
}

static const struct ert_value *in_at(const struct ert_exec *x, uint32_t i)
{
	return i < x->n_in ? x->in[i] : NULL;
}

/*
 * Work is handed out by lane as in the SGEMM driver: lane i owns slot i of the
 * workspace (an int32 accumulator plane or row) and pulls items from a shared
 * counter. Accumulators are uint32_t so that int32 overflow wraps (defined)
 * exactly like the int32 accumulation ONNX allows.
 */
struct lanes {
	uint32_t *scratch;
	int64_t slot;             /* uint32_t per lane */
	int64_t items;
	atomic_int_fast64_t next;
	void (*item)(const void *job, int64_t i, uint32_t *acc);
	const void *job;
};

static void lane_main(void *arg, int64_t begin, int64_t end)
{
	struct lanes *l = arg;

	for (int64_t lane = begin; lane < end; lane++)
		for (;;) {
			int64_t i = atomic_fetch_add(&l->next, 1);

			if (i >= l->items)
				break;
			l->item(l->job, i, l->scratch + lane * l->slot);
		}
}

/* Lanes' scratch: the workspace past its first @skip bytes. */
static ert_status run_lanes(struct ert_cpu *cpu, struct ert_exec *x, size_t skip, int64_t items,
			    int64_t slot, void (*item)(const void *, int64_t, uint32_t *),
			    const void *job, struct ert_err *err)
{
	size_t room = x->workspace_size > skip ? x->workspace_size - skip : 0;
	struct lanes l = { .scratch = x->workspace ? (uint32_t *)((char *)x->workspace + skip) : NULL,
			   .slot = slot, .items = items, .item = item, .job = job };
	int64_t n = slot > 0 ? (int64_t)(room / ((size_t)slot * sizeof(uint32_t))) : 0;

	if (items <= 0 || slot <= 0)
		return ERT_OK;
	if (!x->workspace || n < 1)
		return ert_node_fail(x->node, err, ERT_STATUS_INTERNAL, "workspace too small");
	if (n > (int64_t)cpu->num_threads)
		n = cpu->num_threads > 0 ? cpu->num_threads : 1;
	if (n > items)
		n = items;
	atomic_store(&l.next, 0);
	ert_parallel_for(cpu->pool, n, 1, lane_main, &l);
	return ERT_OK;
}

ert_status ert_qlinalg_run_lanes(struct ert_cpu *cpu, struct ert_exec *x, size_t skip,
				 int64_t items, int64_t slot,
				 void (*item)(const void *, int64_t, uint32_t *), const void *job,
				 struct ert_err *err)
{
	return run_lanes(cpu, x, skip, items, slot, item, job, err);
}

/* ---- convolution ---- */

/* acc[ow] += (x[ow * sw] - xz) * wv over one output row, for each input type. */
static void row_u8(uint32_t *restrict acc, const uint8_t *restrict x, int64_t n, int64_t sw,
		   int32_t wv, int32_t c)
{
	if (sw == 1)
		for (int64_t i = 0; i < n; i++)
			acc[i] += (uint32_t)(x[i] * wv - c);
	else
		for (int64_t i = 0; i < n; i++)
			acc[i] += (uint32_t)(x[i * sw] * wv - c);
}

static void row_i8(uint32_t *restrict acc, const int8_t *restrict x, int64_t n, int64_t sw,
		   int32_t wv, int32_t c)
{
	if (sw == 1)
		for (int64_t i = 0; i < n; i++)
			acc[i] += (uint32_t)(x[i] * wv - c);
	else
		for (int64_t i = 0; i < n; i++)
			acc[i] += (uint32_t)(x[i * sw] * wv - c);
}

/* One output plane (image n, channel m), tap by tap over whole output rows. */
static void iconv_plane(const void *arg, int64_t pl, uint32_t *acc)
{
	const struct iconv_job *j = arg;
	const struct ert_conv_geom *g = &j->g;
	int64_t n = pl / j->m, m = pl % j->m, gi = m / j->m_g;
	int32_t xz = zp_at(j->xzp, 0), wz = zp_at(j->wzp, m);
	uint32_t b0 = j->bias ? (uint32_t)((const int32_t *)j->bias->data)[m] : 0;
	const int64_t OH = g->out[1], OW = g->out[2], IH = g->in[1], IW = g->in[2];

	for (int64_t o = 0; o < j->out_sp; o++)
		acc[o] = b0;
	for (int64_t ci = 0; ci < j->cin_g; ci++) {
		int64_t xbase = (n * j->c_in + gi * j->cin_g + ci) * j->in_sp;
		int64_t wbase = (m * j->cin_g + ci) * j->kk;

		for (int64_t t = 0; t < j->kk; t++) {
			int64_t kw = t % g->k[2], kh = (t / g->k[2]) % g->k[1];
			int64_t kd = t / g->k[2] / g->k[1];
			int32_t wv = q8_at(j->w, wbase + t) - wz;
			int64_t off = kw * g->dil[2] - g->pad_b[2], sw = g->stride[2];
			/* Output columns whose tap lands inside the row; padding adds zero. */
			int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
			int64_t hi = IW - 1 - off < 0 ? -1 : (IW - 1 - off) / sw;

			if (hi > OW - 1)
				hi = OW - 1;
			if (wv == 0 || hi < lo)
				continue;
			for (int64_t od = 0; od < g->out[0]; od++) {
				int64_t iz = od * g->stride[0] - g->pad_b[0] + kd * g->dil[0];

				if (iz < 0 || iz >= g->in[0])
					continue;
				for (int64_t oh = 0; oh < OH; oh++) {
					int64_t iy = oh * g->stride[1] - g->pad_b[1] + kh * g->dil[1];

					if (iy < 0 || iy >= IH)
						continue;
					int64_t xi = xbase + (iz * IH + iy) * IW + lo * sw + off;
					uint32_t *arow = acc + (od * OH + oh) * OW + lo;

					if (j->x->dtype == ERT_DTYPE_UINT8)
						row_u8(arow, (const uint8_t *)j->x->data + xi,
						       hi - lo + 1, sw, wv, xz * wv);
					else
						row_i8(arow, (const int8_t *)j->x->data + xi,
						       hi - lo + 1, sw, wv, xz * wv);
				}
			}
		}
	}
	int64_t y0 = pl * j->out_sp;

	if (!j->qlinear) {
		for (int64_t o = 0; o < j->out_sp; o++)
			((int32_t *)j->y->data)[y0 + o] = (int32_t)acc[o];
		return;
	}
	const struct q_chan *ch = &j->chans[m];

	for (int64_t o = 0; o < j->out_sp; o++)
		ert_q8_store(j->y->data, j->qo.dtype, y0 + o, q_finish(&j->qo, ch, (int32_t)acc[o]));
	if (j->res)
		ert_qconv_residual(j, y0, j->out_sp);
}

static bool iconv_setup(const struct ert_exec *x, struct iconv_job *j, struct ert_err *err)
{
	bool ql = x->node->op == ERT_OP_QLinearConv;

	memset(j, 0, sizeof(*j));
	j->qlinear = ql;
	j->x = x->in[0];
	j->w = in_at(x, ql ? 3 : 1);
	j->xzp = in_at(x, 2);
	j->wzp = in_at(x, ql ? 5 : 3);
	if (ql) {
		j->xs = x->in[1];
		j->ws = x->in[4];
		j->ys = x->in[6];
		j->yzp = in_at(x, 7);
		j->bias = in_at(x, 8);
		j->r = ert_attr_int(x->node, "ert.residual", 0) ? in_at(x, 9) : NULL;
	}
	j->y = x->out[0];
	if (ert_geom_conv(x->node, j->x->rank - 2, j->x->dims + 2, j->w->dims + 2, false, &j->g,
			  err) != ERT_OK)
		return false;
	j->c_in = j->x->dims[1];
	j->m = j->w->dims[0];
	j->group = ert_attr_int(x->node, "group", 1);
	j->cin_g = j->w->dims[1];
	j->m_g = j->m / (j->group > 0 ? j->group : 1);
	j->kk = ert_geom_k_size(&j->g);
	j->in_sp = ert_geom_in_size(&j->g);
	j->out_sp = ert_geom_out_size(&j->g);
	return j->m_g > 0 || j->m == 0;
}

static size_t iconv_workspace(const struct ert_cpu *cpu, const struct ert_exec *x)
{
	struct iconv_job j;
	struct ert_err err;
	size_t ref, simd;

	if (!iconv_setup(x, &j, &err))
		return 0;
	ref = (size_t)j.out_sp * sizeof(uint32_t) * ert_cpu_lanes(cpu);
	simd = ert_qconv_gemm_workspace(&j, ert_cpu_lanes(cpu));
	ref = simd > ref ? simd : ref;
	simd = ert_qconv_dw_workspace(&j, ert_cpu_lanes(cpu));
	return q_chans_bytes(j.m) + (simd > ref ? simd : ref);
}

static ert_status iconv_prepare(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	struct iconv_job j;

	err->msg[0] = '\0';
	if (!iconv_setup(x, &j, err))
		return ERT_OK; /* compute() reports it */
	ert_qconv_dw_prepare(cpu, x, &j);
	return ert_qconv_gemm_prepare(cpu, x, &j, err);
}

/*
 * "ert.residual" (opt/fuse-residual.c): the conv's own output stage keeps
 * its zero point and requantises to the type's full range, as the
 * QLinearConv did before the fusion; ert.clamp is the QLinearAdd's, which
 * takes that output as A (x_s... y_s, y_zp) and r (inputs 9, 10, 11) as B,
 * with output scale and zero point inputs 12 and 13.
 */
static ert_status residual_setup(struct ert_cpu *cpu, const struct ert_exec *x,
				 struct iconv_job *j, struct ert_q8_add *res, struct ert_err *err)
{
	struct ert_qout out = j->qo;
	const struct ert_value *r = j->r, *rs = in_at(x, 10), *cs = in_at(x, 12);

	if (!j->qo.fixed || !rs || !cs || r->dtype != j->y->dtype || r->numel != j->y->numel)
		return ert_node_fail(x->node, err, ERT_STATUS_INVALID_MODEL,
				     "bad ert.residual inputs");
	out.zp = ert_qparam_int(in_at(x, 13), 0);
	if (!ert_q8_add_init(res, cpu->isa, &out, ert_qparam_float(j->ys, 0), j->qo.zp,
			     ert_qparam_float(rs, 0), ert_qparam_int(in_at(x, 11), 0),
			     ert_qparam_float(cs, 0)))
		return ert_node_fail(x->node, err, ERT_STATUS_UNSUPPORTED,
				     "residual multipliers cannot be represented");
	j->qo.lo = j->qo.dtype == ERT_DTYPE_UINT8 ? 0 : -128;
	j->qo.hi = j->qo.dtype == ERT_DTYPE_UINT8 ? 255 : 127;
	j->res = res;
	return ERT_OK;
}

static ert_status iconv_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	struct ert_q8_add res;
	struct iconv_job j;
	size_t skip;
	ert_status st;

	err->msg[0] = '\0';
	if (!iconv_setup(x, &j, err)) {
		if (!err->msg[0])
			ert_node_fail(x->node, err, ERT_STATUS_INVALID_MODEL, "bad group");
		return ERT_STATUS_INVALID_MODEL;
	}
	skip = q_chans_bytes(j.m);
	if (j.qlinear && j.x->dims[0] * j.out_sp > 0) {
		if (!x->workspace || x->workspace_size < skip)
			return ert_node_fail(x->node, err, ERT_STATUS_INTERNAL,
					     "workspace too small");
		j.chans = x->workspace;
		if ((st = ert_qout_init(&j.qo, x, j.y, j.yzp, err)) != ERT_OK ||
		    (st = q_chans(x, &j.qo, j.xs, j.ws, j.ys, 1.0f, j.m, x->workspace, err)) != ERT_OK)
			return st;
		if (j.r && (st = residual_setup(cpu, x, &j, &res, err)) != ERT_OK)
			return st;
	}
	if (ert_qconv_gemm_run(cpu, x, &j, skip, &st, err) ||
	    ert_qconv_dw_run(cpu, x, &j, skip, &st, err))
		return st;
	return run_lanes(cpu, x, skip, j.x->dims[0] * j.m, j.out_sp, iconv_plane, &j, err);
}

/* ---- matrix multiplication ---- */

/* QGemm's int32 C at (i, c), unidirectionally broadcast to (M, N). */
static int32_t gemm_bias(const struct ert_value *cv, int64_t i, int64_t c)
{
	const int32_t *d = cv->data;

	if (cv->rank == 2)
		return d[(cv->dims[0] == 1 ? 0 : i) * cv->dims[1] + (cv->dims[1] == 1 ? 0 : c)];
	if (cv->rank == 1)
		return d[cv->dims[0] == 1 ? 0 : c];
	return d[0];
}

/* Row-major B: acc[c] += av * b[p][c], row by row of B. */
static uint32_t imm_acc_rows(const struct imm_job *j, int64_t oa, int64_t ob, int64_t i, int32_t az,
			     uint32_t *acc)
{
	const struct ert_value *a = j->a, *b = j->b;
	uint32_t sum_a = 0;

	for (int64_t c = 0; c < j->n; c++)
		acc[c] = 0;
	for (int64_t p = 0; p < j->k; p++) {
		int32_t av = q8_at(a, oa + i * j->a_rs + p * j->a_cs) - az;
		int64_t bi = ob + p * j->n;

		sum_a += (uint32_t)av;
		if (av == 0)
			continue;
		if (b->dtype == ERT_DTYPE_UINT8) {
			const uint8_t *br = (const uint8_t *)b->data + bi;

			for (int64_t c = 0; c < j->n; c++)
				acc[c] += (uint32_t)(av * br[c]);
		} else {
			const int8_t *br = (const int8_t *)b->data + bi;

			for (int64_t c = 0; c < j->n; c++)
				acc[c] += (uint32_t)(av * br[c]);
		}
	}
	return sum_a;
}

/* Transposed B (n, k): the row of A once into @arow, then one dot product per column. */
static uint32_t imm_acc_dots(const struct imm_job *j, int64_t i, int32_t az, uint32_t *acc,
			     int32_t *restrict arow)
{
	uint32_t sum_a = 0;

	for (int64_t p = 0; p < j->k; p++) {
		arow[p] = q8_at(j->a, i * j->a_rs + p * j->a_cs) - az;
		sum_a += (uint32_t)arow[p];
	}
	for (int64_t c = 0; c < j->n; c++) {
		uint32_t s = 0;

		if (j->b->dtype == ERT_DTYPE_UINT8) {
			const uint8_t *restrict bc = (const uint8_t *)j->b->data + c * j->k;

			for (int64_t p = 0; p < j->k; p++)
				s += (uint32_t)(arow[p] * bc[p]);
		} else {
			const int8_t *restrict bc = (const int8_t *)j->b->data + c * j->k;

			for (int64_t p = 0; p < j->k; p++)
				s += (uint32_t)(arow[p] * bc[p]);
		}
		acc[c] = s;
	}
	return sum_a;
}

/*
 * One output row: acc[c] = sum_p (a[p] - az) * b[p][c], then minus
 * bz[c] * sum_p (a[p] - az), which keeps the inner loop free of zero points.
 */
static void imm_row(const void *arg, int64_t r, uint32_t *acc)
{
	const struct imm_job *j = arg;
	const struct ert_value *a = j->a, *b = j->b, *y = j->y;
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
	uint32_t sum_a = j->b_trans ? imm_acc_dots(j, i, az, acc, (int32_t *)(acc + j->n))
				    : imm_acc_rows(j, oa, ob, i, az, acc);

	for (int64_t c = 0; c < j->n; c++) {
		int32_t v = (int32_t)(acc[c] - sum_a * (uint32_t)zp_at(j->bzp, c));

		if (j->c)
			v = (int32_t)((uint32_t)v + (uint32_t)gemm_bias(j->c, i, c));
		if (j->kind == IMM_INTEGER) {
			((int32_t *)y->data)[r * j->n + c] = v;
		} else if (!j->quantised) {
			/* QGemm without y_zero_point: float32 output */
			((float *)y->data)[r * j->n + c] = (float)((double)v * j->chans[c].f);
		} else if (j->chans) {
			ert_q8_store(y->data, y->dtype, r * j->n + c, q_finish(&j->qo, &j->chans[c], v));
		} else {
			double f = q_mult(j->as, i, j->bs, c, j->ys);

			ert_q8_store(y->data, y->dtype, r * j->n + c, ert_qout_float(&j->qo, (double)v * f));
		}
	}
}

static void imm_setup(const struct ert_exec *x, struct imm_job *j)
{
	enum imm_kind kind = x->node->op == ERT_OP_QLinearMatMul ? IMM_QLINEAR
			     : x->node->op == ERT_OP_QGemm     ? IMM_QGEMM
							       : IMM_INTEGER;
	bool ql = kind != IMM_INTEGER;

	memset(j, 0, sizeof(*j));
	j->kind = kind;
	j->a = x->in[0];
	j->b = in_at(x, ql ? 3 : 1);
	j->azp = in_at(x, 2);
	j->bzp = in_at(x, ql ? 5 : 3);
	j->alpha = 1.0f;
	if (ql) {
		j->as = x->in[1];
		j->bs = x->in[4];
		j->ys = in_at(x, kind == IMM_QGEMM ? 7 : 6);
		j->yzp = in_at(x, kind == IMM_QGEMM ? 8 : 7);
		j->quantised = kind == IMM_QLINEAR || j->yzp;
	}
	j->y = x->out[0];
	if (kind == IMM_QGEMM) {
		bool ta = ert_attr_int(x->node, "transA", 0) != 0;

		j->c = in_at(x, 6);
		j->alpha = ert_attr_float(x->node, "alpha", 1.0f);
		j->b_trans = ert_attr_int(x->node, "transB", 0) != 0;
		j->m = j->a->dims[ta ? 1 : 0];
		j->k = j->a->dims[ta ? 0 : 1];
		j->n = j->b->dims[j->b_trans ? 0 : 1];
		j->a_rs = ta ? 1 : j->k;
		j->a_cs = ta ? j->m : 1;
		return;
	}
	j->k = j->a->dims[j->a->rank - 1];
	j->m = j->a->rank > 1 ? j->a->dims[j->a->rank - 2] : 1;
	j->n = j->b->rank > 1 ? j->b->dims[j->b->rank - 1] : 1;
	j->nb = j->y->rank - (j->a->rank > 1) - (j->b->rank > 1);
	j->ba = j->a->rank > 2 ? j->a->rank - 2 : 0;
	j->bb = j->b->rank > 2 ? j->b->rank - 2 : 0;
	j->a_rs = j->k;
	j->a_cs = 1;
}

/* uint32_t per lane: a row of accumulators, plus the row of A for transposed B. */
static int64_t imm_slot(const struct imm_job *j)
{
	return j->n + (j->b_trans ? j->k : 0);
}

static size_t imm_workspace(const struct ert_cpu *cpu, const struct ert_exec *x)
{
	struct imm_job j;
	size_t ref, simd;

	imm_setup(x, &j);
	ref = (size_t)imm_slot(&j) * sizeof(uint32_t) * ert_cpu_lanes(cpu);
	simd = ert_qmm_gemm_workspace(&j, ert_cpu_lanes(cpu));
	return q_chans_bytes(j.n) + (simd > ref ? simd : ref);
}

static ert_status imm_prepare(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	struct imm_job j;

	imm_setup(x, &j);
	return ert_qmm_gemm_prepare(cpu, x, &j, err);
}

static ert_status imm_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	size_t skip;
	struct imm_job j;
	int64_t rows;
	ert_status st;

	imm_setup(x, &j);
	rows = j.m;
	for (int64_t d = 0; d < j.nb; d++)
		rows *= j.y->dims[d];
	skip = q_chans_bytes(j.n);
	if (j.kind != IMM_INTEGER && rows * j.n > 0) {
		if (!x->workspace || x->workspace_size < skip)
			return ert_node_fail(x->node, err, ERT_STATUS_INTERNAL,
					     "workspace too small");
		if (j.quantised && (st = ert_qout_init(&j.qo, x, j.y, j.yzp, err)) != ERT_OK)
			return st;
		/* a per-row a_scale (QLinearMatMul, float rule) leaves no per-column table */
		if (j.as->numel == 1) {
			st = q_chans(x, &j.qo, j.as, j.bs, j.ys, j.alpha, j.n, x->workspace, err);
			if (st != ERT_OK)
				return st;
			j.chans = x->workspace;
		}
	}
	if (ert_qmm_gemm_run(cpu, x, &j, skip, &st, err))
		return st;
	return run_lanes(cpu, x, skip, rows, imm_slot(&j), imm_row, &j, err);
}

const struct ert_cpu_op ert_cpu_ops_qlinalg[] = {
	{ .op = ERT_OP_QLinearConv, .workspace = iconv_workspace, .prepare = iconv_prepare,
	  .compute = iconv_compute, .release = ert_cpu_release_packed },
	{ .op = ERT_OP_ConvInteger, .workspace = iconv_workspace, .prepare = iconv_prepare,
	  .compute = iconv_compute, .release = ert_cpu_release_packed },
	{ .op = ERT_OP_QLinearMatMul, .workspace = imm_workspace, .prepare = imm_prepare,
	  .compute = imm_compute, .release = ert_cpu_release_packed },
	{ .op = ERT_OP_MatMulInteger, .workspace = imm_workspace, .prepare = imm_prepare,
	  .compute = imm_compute, .release = ert_cpu_release_packed },
	{ .op = ERT_OP_QGemm, .workspace = imm_workspace, .prepare = imm_prepare,
	  .compute = imm_compute, .release = ert_cpu_release_packed },
	{ .compute = NULL },
};
