/* SPDX-License-Identifier: MIT */
/*
 * NPU lowering of the int8 arithmetic: QLinearConv to CONV2D, QLinearMatMul
 * and QGemm to MATMUL, QLinearAdd and QLinearMul to ELTWISE, the pools to
 * POOL (see npu-lower.h). Each is cut into commands under the device's
 * per-job work limit.
 */
#include <stdlib.h>
#include <string.h>

#include "npu/npu-lower.h"
#include "ops/linalg-geom.h"
#include "ops/quant-fixed.h"

/* ---- ELTWISE pieces, shared with CONV2D's fused residual ----------------- */

struct elt_params {
	struct enpu_cs_quant q;
	int32_t a_mult, a_shift, b_mult, b_shift;
};

/*
 * The ELTWISE parameters of a QLinearAdd/QLinearMul whose inputs A and B and
 * output have their scales and zero points at inputs @idx[0..5] (A_s, A_zp,
 * B_s, B_zp, Y_s, Y_zp), the clamp the node's.
 */
static bool elt_params_at(const struct ert_exec *x, const uint32_t *idx, bool mul,
			  struct elt_params *e)
{
	double as, bs, ys;

	memset(e, 0, sizeof(*e));
	if (!nl_scalar_scale(x, idx[0], &as) || !nl_scalar_zp(x, idx[1], &e->q.in_zp) ||
	    !nl_scalar_scale(x, idx[2], &bs) || !nl_scalar_zp(x, idx[3], &e->q.in2_zp) ||
	    !nl_scalar_scale(x, idx[4], &ys) || !nl_scalar_zp(x, idx[5], &e->q.out_zp))
		return false;
	nl_clamp_of(x->node, &e->q.act_min, &e->q.act_max);
	if (mul)
		return ert_quant_product_multiplier(as, bs, ys, &e->q.out_mult, &e->q.out_shift);
	struct ert_quant_add p;

	if (!ert_quant_add_params(as, bs, ys, &p))
		return false;
	e->a_mult = p.a_mult;
	e->a_shift = p.a_shift;
	e->b_mult = p.b_mult;
	e->b_shift = p.b_shift;
	e->q.out_mult = p.out_mult;
	e->q.out_shift = p.out_shift;
	return true;
}

/* Broadcast view of @v against the 4-D output dims: stride 0 where v's dim is 1. */
static bool bcast4(const struct ert_value *v, const int64_t *od, int64_t *d, int64_t *s)
{
	if (!nl_as4(v, d, s, 1))
		return false;
	for (int i = 0; i < 4; i++) {
		if (d[i] == od[i])
			continue;
		if (d[i] != 1)
			return false;
		s[i] = 0;
	}
	return true;
}

/* A 4-D view: where it lives, its dims and byte strides. */
struct view4 {
	uint32_t ref;
	uint64_t off;
	int64_t d[4], s[4];
};

/*
 * ELTWISE commands for out = a (op) b over @o's dims, a and b broadcast
 * views of them, cut by rows under the work limit. a may be out itself
 * (the same view): each element is read before it is written.
 */
static ert_status elt_cmds(struct lower *l, const struct elt_params *e, uint32_t op,
			   const struct view4 *a, const struct view4 *b, const struct view4 *o)
{
	struct rows4 r = nl_split_rows(o->d, 16, 0, l->limit);

	for (int64_t i = 0; i < nl_pieces(&r); i++) {
		int64_t at[3], cd[4], ca[4], cb[4];
		struct npu_cmd_entry *c;

		nl_piece_at(&r, i, at, cd);
		for (int k = 0; k < 4; k++) {
			ca[k] = a->d[k] == 1 ? 1 : cd[k];
			cb[k] = b->d[k] == 1 ? 1 : cd[k];
		}
		c = nl_add_cmd(l, ENPU_OP_ELTWISE, sizeof(struct enpu_cs_eltwise),
			       (uint64_t)cd[0] * cd[1] * cd[2] * cd[3] * 16);
		if (!c)
			return ERT_STATUS_OUT_OF_MEMORY;
		if (c->work > l->limit)
			return nl_lower_fail(l, ERT_STATUS_UNSUPPORTED,
					     "a row exceeds the work limit");
		struct enpu_cs_eltwise *el = &c->c.elt;

		el->a = nl_tensor4(a->ref, a->off + nl_piece_offset(at, a->s), ca, a->s);
		el->b = nl_tensor4(b->ref, b->off + nl_piece_offset(at, b->s), cb, b->s);
		el->out = nl_tensor4(o->ref, o->off + nl_piece_offset(at, o->s), cd, o->s);
		el->quant = e->q;
		el->op = op;
		el->a_mult = e->a_mult;
		el->a_shift = e->a_shift;
		el->b_mult = e->b_mult;
		el->b_shift = e->b_shift;
	}
	return ERT_OK;
}

/* ---- CONV2D --------------------------------------------------------------- */

/*
 * A QLinearConv with "ert.residual" (docs/int8.md): its own output stage
 * does not clamp, the node's clamp being the fused QLinearAdd's; that Add
 * reads the output (y_s, y_zp at 6, 7) as A and the residual (9, 10, 11) as
 * B and writes the sum (12, 13) over it, after the convolution's commands.
 */
static const uint32_t res_idx[6] = { 6, 7, 10, 11, 12, 13 };

static bool conv_residual(const struct ert_exec *x)
{
	return ert_attr_int(x->node, "ert.residual", 0) != 0;
}

static bool residual_supported(const struct ert_exec *x)
{
	struct elt_params e;
	int64_t od[4], os[4], rd[4], rs[4];

	if (x->n_in != 14 || !nl_is_int8(nl_in_at(x, 9)) || !nl_as4(x->out[0], od, os, 1) ||
	    !nl_as4(nl_in_at(x, 9), rd, rs, 1))
		return false;
	for (int i = 0; i < 4; i++)
		if (rd[i] != od[i])
			return false;
	return elt_params_at(x, res_idx, false, &e);
}

static ert_status lower_residual(struct lower *l, uint32_t r_out, uint64_t o_out)
{
	struct ert_exec *x = l->x;
	struct elt_params e;
	struct view4 o = { .ref = r_out, .off = o_out }, b;
	ert_status st;

	elt_params_at(x, res_idx, false, &e);
	nl_as4(x->out[0], o.d, o.s, 1);
	nl_as4(nl_in_at(x, 9), b.d, b.s, 1);
	st = nl_locate(l, nl_in_at(x, 9), 9, x->in_const[9], &b.ref, &b.off);
	return st == ERT_OK ? elt_cmds(l, &e, ENPU_ELTWISE_ADD, &o, &b, &o) : st;
}

struct conv_plan {
	int64_t n, ic, h, w, oc, oh, ow, kh, kw, groups, icg;
	int64_t sh, sw, dh, dw, pt, pl, pb, pr;
};

static uint64_t conv_work(const struct conv_plan *c, int64_t oc, int64_t rows)
{
	return (uint64_t)c->n * rows * c->ow * oc *
	       ((uint64_t)c->kh * c->kw * (c->icg + 4) + 16);
}

static bool conv_geometry(const struct ert_exec *x, struct conv_plan *c)
{
	const struct ert_value *in = nl_in_at(x, 0), *w = nl_in_at(x, 3), *out = x->out[0];
	struct ert_conv_geom g;
	struct ert_err e;
	int64_t k[2];

	if (!in || !w || !out || in->rank != 4 || w->rank != 4 || out->rank != 4)
		return false;
	k[0] = w->dims[2];
	k[1] = w->dims[3];
	if (ert_geom_conv(x->node, 2, &in->dims[2], k, false, &g, &e) != ERT_OK)
		return false;
	*c = (struct conv_plan){
		.n = in->dims[0], .ic = in->dims[1], .h = in->dims[2], .w = in->dims[3],
		.oc = w->dims[0], .oh = out->dims[2], .ow = out->dims[3],
		.kh = k[0], .kw = k[1], .groups = ert_attr_int(x->node, "group", 1),
		.icg = w->dims[1],
		.sh = g.stride[1], .sw = g.stride[2], .dh = g.dil[1], .dw = g.dil[2],
		.pt = g.pad_b[1], .pl = g.pad_b[2], .pb = g.pad_e[1], .pr = g.pad_e[2],
	};
	int64_t ic;

	/* group and W's dims are only bounded by 2^48 here: their product may not fit */
	if (c->groups < 1 || !ert_mul_i64(c->groups, c->icg, &ic) || c->ic != ic ||
	    c->oc % c->groups)
		return false;
	if (g.out[1] != c->oh || g.out[2] != c->ow)
		return false;
	int64_t v[] = { c->sh, c->sw, c->dh, c->dw };

	for (int i = 0; i < 4; i++)
		if (v[i] < 1 || v[i] > 255)
			return false;
	int64_t p[] = { c->pt, c->pl, c->pb, c->pr };

	for (int i = 0; i < 4; i++)
		if (p[i] < 0 || p[i] > 255)
			return false;
	int64_t d[] = { c->n, c->ic, c->h, c->w, c->oc, c->oh, c->ow, c->kh, c->kw };

	for (int i = 0; i < 9; i++)
		if (d[i] < 1 || d[i] > ENPU_CS_MAX_DIM)
			return false;
	/* byte strides of the NHWC views fit 32 bits */
	return c->ic * c->h * c->w <= UINT32_MAX && c->oc * c->oh * c->ow <= UINT32_MAX &&
	       c->icg * c->kh * c->kw <= UINT32_MAX;
}

/* Output channels a command may be cut down to: one, or one group's when grouped. */
static int64_t conv_unit(const struct conv_plan *c)
{
	return c->groups == 1 ? 1 : c->oc / c->groups;
}

static bool conv_supported(const struct ert_exec *x, uint64_t limit)
{
	struct conv_plan c;
	double xs, ys;
	int32_t zp;

	if (!nl_is_int8(nl_in_at(x, 0)) || !nl_is_int8(nl_in_at(x, 3)) || !nl_is_int8(x->out[0]) ||
	    !nl_in_is_const(x, 3) || !conv_geometry(x, &c))
		return false;
	if (!nl_scalar_scale(x, 1, &xs) || !nl_scalar_zp(x, 2, &zp) || !nl_weight_zp(x, 5, &zp) ||
	    !nl_scalar_scale(x, 6, &ys) || !nl_scalar_zp(x, 7, &zp))
		return false;
	const struct ert_value *b = nl_in_at(x, 8);

	if (b && (!nl_in_is_const(x, 8) || b->dtype != ERT_DTYPE_INT32 || b->numel != c.oc))
		return false;
	if (conv_residual(x) && !residual_supported(x))
		return false;
	int32_t *tab = malloc((size_t)c.oc * 8);
	bool ok = tab && nl_requant_table(x, xs, 4, ys, c.oc, tab);

	free(tab);
	/* the smallest piece lowering cuts, one output row of one unit, must fit a command */
	return ok && conv_work(&c, conv_unit(&c), 1) <= limit;
}

static ert_status lower_conv(struct lower *l)
{
	struct ert_exec *x = l->x;
	const struct ert_value *in = nl_in_at(x, 0), *w = nl_in_at(x, 3), *b = nl_in_at(x, 8);
	struct conv_plan c;
	struct enpu_cs_quant q = { 0 };
	uint32_t r_in, r_w, r_b = 0, r_rq, r_out;
	uint64_t o_in, o_w, o_b = 0, o_rq, o_out;
	double xs, ys;
	ert_status st;

	conv_geometry(x, &c);
	nl_scalar_scale(x, 1, &xs);
	nl_scalar_scale(x, 6, &ys);
	nl_scalar_zp(x, 2, &q.in_zp);
	nl_weight_zp(x, 5, &q.in2_zp);
	nl_scalar_zp(x, 7, &q.out_zp);
	nl_clamp_of(x->node, &q.act_min, &q.act_max);
	if (conv_residual(x)) {
		q.act_min = -128;
		q.act_max = 127;
	}

	int32_t *tab = malloc((size_t)c.oc * 8);

	if (!tab)
		return ERT_STATUS_OUT_OF_MEMORY;
	nl_requant_table(x, xs, 4, ys, c.oc, tab);
	st = nl_locate_bytes(l, tab, (size_t)c.oc * 8, &r_rq, &o_rq);
	free(tab);
	if (st == ERT_OK)
		st = nl_locate(l, in, 0, x->in_const[0], &r_in, &o_in);
	if (st == ERT_OK)
		st = nl_locate(l, w, 3, true, &r_w, &o_w);
	if (st == ERT_OK && b)
		st = nl_locate(l, b, 8, true, &r_b, &o_b);
	if (st == ERT_OK)
		st = nl_locate(l, x->out[0], -1, false, &r_out, &o_out);
	if (st != ERT_OK)
		return st;

	/* NHWC views of NCHW tensors, OHWI view of OIHW weights */
	int64_t in_st[4] = { c.ic * c.h * c.w, c.w, 1, c.h * c.w };
	int64_t out_st[4] = { c.oc * c.oh * c.ow, c.ow, 1, c.oh * c.ow };
	int64_t w_st[4] = { c.icg * c.kh * c.kw, c.kw, 1, c.kh * c.kw };
	/*
	 * Chunks of output channels (whole groups when grouped), then of output
	 * rows, each within the work limit.
	 */
	int64_t opg = c.oc / c.groups;       /* output channels per group */
	int64_t unit = conv_unit(&c);
	int64_t chunk = c.oc, rows = c.oh;

	while (chunk > unit && conv_work(&c, chunk, c.oh) > l->limit)
		chunk = ((chunk / unit + 1) / 2) * unit;
	while (rows > 1 && conv_work(&c, chunk, rows) > l->limit)
		rows = (rows + 1) / 2;
	if (conv_work(&c, chunk, rows) > l->limit)
		return nl_lower_fail(l, ERT_STATUS_UNSUPPORTED,
				     "one output row exceeds the device's work limit");

	int64_t eff_h = c.dh * (c.kh - 1) + 1;
	const int64_t zero_st[4] = { 0, 0, 0, 0 };
	uint32_t r_zp = 0;
	uint64_t o_zp = 0;
	bool have_zp = false;

	for (int64_t o0 = 0; o0 < c.oc; o0 += chunk) {
		int64_t oc = c.oc - o0 < chunk ? c.oc - o0 : chunk;
		/* grouped: the chunk's groups read their own input channels */
		int64_t g0 = c.groups == 1 ? 0 : o0 / opg;
		int64_t ng = c.groups == 1 ? 1 : oc / opg;
		int64_t ic0 = g0 * c.icg, icn = c.groups == 1 ? c.ic : ng * c.icg;

		for (int64_t y0 = 0; y0 < c.oh; y0 += rows) {
			int64_t ny = c.oh - y0 < rows ? c.oh - y0 : rows;
			int64_t top = y0 * c.sh - c.pt;   /* first input row, may be < 0 */
			int64_t r0 = top < 0 ? 0 : top, pt = top < 0 ? -top : 0;
			int64_t span = (ny - 1) * c.sh + eff_h;   /* padded rows read */
			int64_t hn = c.h - r0 < span - pt ? c.h - r0 : span - pt;
			int64_t pb = span - pt - hn;
			uint32_t rin = r_in;
			uint64_t oin = o_in + (uint64_t)(r0 * in_st[1] + ic0 * in_st[3]);
			const int64_t *ist = in_st;
			struct npu_cmd_entry *e;

			if (hn < 1) {
				/*
				 * Every row of the chunk reads only padding (pads
				 * larger than the kernel), which a command cannot say
				 * with an input of at least one row: read the input
				 * zero point everywhere instead, through zero strides,
				 * so that each tap adds nothing, as padding does.
				 */
				if (!have_zp) {
					int8_t zp = (int8_t)q.in_zp;

					st = nl_locate_bytes(l, &zp, 1, &r_zp, &o_zp);
					if (st != ERT_OK)
						return st;
					have_zp = true;
				}
				rin = r_zp;
				oin = o_zp;
				ist = zero_st;
				hn = span;
				pt = pb = 0;
			}
			if (pb > 255)
				return nl_lower_fail(l, ERT_STATUS_INTERNAL, "bad row split");
			e = nl_add_cmd(l, ENPU_OP_CONV2D, sizeof(struct enpu_cs_conv2d),
				       conv_work(&c, oc, ny));
			if (!e)
				return ERT_STATUS_OUT_OF_MEMORY;
			struct enpu_cs_conv2d *cv = &e->c.conv;
			int64_t in_d[4] = { c.n, hn, c.w, icn };
			int64_t out_d[4] = { c.n, ny, c.ow, oc };
			int64_t w_d[4] = { oc, c.kh, c.kw, c.icg };
			int64_t v_d[4] = { oc, 1, 1, 1 }, b_st[4] = { 4, 0, 0, 0 };
			int64_t rq_st[4] = { 8, 0, 0, 0 };

			cv->in = nl_tensor4(rin, oin, in_d, ist);
			cv->weights = nl_tensor4(r_w, o_w + (uint64_t)(o0 * w_st[0]), w_d, w_st);
			cv->bias = b ? nl_tensor4(r_b, o_b + (uint64_t)o0 * 4, v_d, b_st) : nl_tensor_none();
			cv->requant = nl_tensor4(r_rq, o_rq + (uint64_t)o0 * 8, v_d, rq_st);
			cv->out = nl_tensor4(r_out, o_out + (uint64_t)(y0 * out_st[1] + o0 * out_st[3]),
					     out_d, out_st);
			cv->quant = q;
			cv->stride_h = (uint16_t)c.sh;
			cv->stride_w = (uint16_t)c.sw;
			cv->dil_h = (uint16_t)c.dh;
			cv->dil_w = (uint16_t)c.dw;
			cv->pad_top = (uint16_t)pt;
			cv->pad_bottom = (uint16_t)pb;
			cv->pad_left = (uint16_t)c.pl;
			cv->pad_right = (uint16_t)c.pr;
			cv->groups = (uint32_t)ng;
		}
	}
	/* the commands of one job run in order: the Add reads the finished output */
	return conv_residual(x) ? lower_residual(l, r_out, o_out) : ERT_OK;
}

/* ---- MATMUL (QLinearMatMul, QGemm) --------------------------------------- */

struct mm_plan {
	int64_t batch, m, n, k;
	int64_t a_st[4], w_st[4], o_st[4];   /* (B, M|N, K|N, 1) views */
	uint32_t a_idx, w_idx, ws_idx, b_idx;  /* input indices; b_idx = UINT32_MAX: no bias */
	uint32_t as_idx, azp_idx, wzp_idx, ys_idx, yzp_idx;
};

static bool mm_geometry(const struct ert_exec *x, struct mm_plan *p)
{
	const struct ert_value *a, *w, *out = x->out[0];
	bool gemm = x->node->op == ERT_OP_QGemm;

	memset(p, 0, sizeof(*p));
	p->a_idx = 0;
	p->as_idx = 1;
	p->azp_idx = 2;
	p->w_idx = 3;
	p->ws_idx = 4;
	p->wzp_idx = 5;
	p->b_idx = gemm ? 6 : UINT32_MAX;
	p->ys_idx = gemm ? 7 : 6;
	p->yzp_idx = gemm ? 8 : 7;
	a = nl_in_at(x, p->a_idx);
	w = nl_in_at(x, p->w_idx);
	if (!a || !w || !out)
		return false;
	if (gemm) {
		bool tb = ert_attr_int(x->node, "transB", 0) != 0;

		if (ert_attr_int(x->node, "transA", 0) || a->rank != 2 || w->rank != 2 ||
		    ert_attr_float(x->node, "alpha", 1.0f) != 1.0f)
			return false;
		p->batch = 1;
		p->m = a->dims[0];
		p->k = a->dims[1];
		p->n = tb ? w->dims[0] : w->dims[1];
		int64_t a_st[4] = { 0, p->k, 1, 0 };
		int64_t w_st[4] = { 0, tb ? p->k : 1, tb ? 1 : p->n, 0 };
		int64_t o_st[4] = { 0, p->n, 1, 0 };

		memcpy(p->a_st, a_st, sizeof(a_st));
		memcpy(p->w_st, w_st, sizeof(w_st));
		memcpy(p->o_st, o_st, sizeof(o_st));
	} else {
		/* a: (..., M, K) with batch dims flattened; b: (K, N) shared or (B, K, N) */
		if (a->rank < 2 || w->rank < 2 || w->rank > 3 || out->rank != a->rank)
			return false;
		p->m = a->dims[a->rank - 2];
		p->k = a->dims[a->rank - 1];
		p->n = w->dims[w->rank - 1];
		p->batch = 1;
		for (int32_t i = 0; i < a->rank - 2; i++)
			p->batch *= a->dims[i];
		if (w->dims[w->rank - 2] != p->k ||
		    (w->rank == 3 && (w->dims[0] != p->batch || a->rank != 3)))
			return false;
	}
	int64_t d[] = { p->batch, p->m, p->n, p->k };

	for (int i = 0; i < 4; i++)
		if (d[i] < 1 || d[i] > ENPU_CS_MAX_DIM)
			return false;
	/* strides from dims of two tensors: only once each dim is known small */
	if (!gemm) {
		int64_t a_st[4] = { p->m * p->k, p->k, 1, 0 };
		int64_t w_st[4] = { w->rank == 3 ? p->k * p->n : 0, 1, p->n, 0 };
		int64_t o_st[4] = { p->m * p->n, p->n, 1, 0 };

		memcpy(p->a_st, a_st, sizeof(a_st));
		memcpy(p->w_st, w_st, sizeof(w_st));
		memcpy(p->o_st, o_st, sizeof(o_st));
	}
	return p->batch * p->m * p->k <= UINT32_MAX && p->batch * p->k * p->n <= UINT32_MAX &&
	       p->batch * p->m * p->n <= UINT32_MAX;
}

static bool mm_supported(const struct ert_exec *x)
{
	struct mm_plan p;
	double as, ys;
	int32_t zp;

	if (!mm_geometry(x, &p) || !nl_is_int8(nl_in_at(x, p.a_idx)) ||
	    !nl_is_int8(nl_in_at(x, p.w_idx)) || !nl_is_int8(x->out[0]))
		return false;
	if (!nl_scalar_scale(x, p.as_idx, &as) || !nl_scalar_zp(x, p.azp_idx, &zp) ||
	    !nl_weight_zp(x, p.wzp_idx, &zp) || !nl_scalar_scale(x, p.ys_idx, &ys) ||
	    !nl_scalar_zp(x, p.yzp_idx, &zp))
		return false;
	const struct ert_value *b = p.b_idx != UINT32_MAX ? nl_in_at(x, p.b_idx) : NULL;

	if (b && (!nl_in_is_const(x, p.b_idx) || b->dtype != ERT_DTYPE_INT32 || b->numel != p.n))
		return false;
	int32_t *tab = malloc((size_t)p.n * 8);
	bool ok = tab && nl_requant_table(x, as, p.ws_idx, ys, p.n, tab);

	free(tab);
	return ok;
}

static ert_status lower_mm(struct lower *l)
{
	struct ert_exec *x = l->x;
	struct mm_plan p;
	struct enpu_cs_quant q = { 0 };
	uint32_t r_a, r_w, r_b = 0, r_rq, r_out;
	uint64_t o_a, o_w, o_b = 0, o_rq, o_out;
	double as, ys;
	ert_status st;

	mm_geometry(x, &p);
	const struct ert_value *b = p.b_idx != UINT32_MAX ? nl_in_at(x, p.b_idx) : NULL;

	nl_scalar_scale(x, p.as_idx, &as);
	nl_scalar_scale(x, p.ys_idx, &ys);
	nl_scalar_zp(x, p.azp_idx, &q.in_zp);
	nl_weight_zp(x, p.wzp_idx, &q.in2_zp);
	nl_scalar_zp(x, p.yzp_idx, &q.out_zp);
	nl_clamp_of(x->node, &q.act_min, &q.act_max);

	int32_t *tab = malloc((size_t)p.n * 8);

	if (!tab)
		return ERT_STATUS_OUT_OF_MEMORY;
	nl_requant_table(x, as, p.ws_idx, ys, p.n, tab);
	st = nl_locate_bytes(l, tab, (size_t)p.n * 8, &r_rq, &o_rq);
	free(tab);
	if (st == ERT_OK)
		st = nl_locate(l, nl_in_at(x, p.a_idx), (int32_t)p.a_idx, x->in_const[p.a_idx], &r_a,
			       &o_a);
	if (st == ERT_OK)
		st = nl_locate(l, nl_in_at(x, p.w_idx), (int32_t)p.w_idx, x->in_const[p.w_idx], &r_w,
			       &o_w);
	if (st == ERT_OK && b)
		st = nl_locate(l, b, (int32_t)p.b_idx, true, &r_b, &o_b);
	if (st == ERT_OK)
		st = nl_locate(l, x->out[0], -1, false, &r_out, &o_out);
	if (st != ERT_OK)
		return st;

	uint64_t per = (uint64_t)p.k + 16;   /* work of one output element */
	int64_t cols = p.n, rows = p.m;

	while (cols > 1 && (uint64_t)p.batch * p.m * cols * per > l->limit)
		cols = (cols + 1) / 2;
	while (rows > 1 && (uint64_t)p.batch * rows * cols * per > l->limit)
		rows = (rows + 1) / 2;
	int64_t bper = p.batch;

	while (bper > 1 && (uint64_t)bper * rows * cols * per > l->limit)
		bper = (bper + 1) / 2;
	for (int64_t b0 = 0; b0 < p.batch; b0 += bper) {
		int64_t nb = p.batch - b0 < bper ? p.batch - b0 : bper;

		for (int64_t m0 = 0; m0 < p.m; m0 += rows) {
			int64_t nm = p.m - m0 < rows ? p.m - m0 : rows;

			for (int64_t n0 = 0; n0 < p.n; n0 += cols) {
				int64_t nn = p.n - n0 < cols ? p.n - n0 : cols;
				struct npu_cmd_entry *e = nl_add_cmd(l, ENPU_OP_MATMUL,
								     sizeof(struct enpu_cs_matmul),
								     (uint64_t)nb * nm * nn * per);

				if (!e)
					return ERT_STATUS_OUT_OF_MEMORY;
				struct enpu_cs_matmul *mm = &e->c.mm;
				int64_t a_d[4] = { nb, nm, p.k, 1 }, w_d[4] = { nb, nn, p.k, 1 };
				int64_t o_d[4] = { nb, nm, nn, 1 }, v_d[4] = { nn, 1, 1, 1 };
				int64_t b_st[4] = { 4, 0, 0, 0 }, rq_st[4] = { 8, 0, 0, 0 };

				mm->a = nl_tensor4(r_a, o_a + (uint64_t)(b0 * p.a_st[0] + m0 * p.a_st[1]),
						   a_d, p.a_st);
				mm->w = nl_tensor4(r_w, o_w + (uint64_t)(b0 * p.w_st[0] + n0 * p.w_st[1]),
						   w_d, p.w_st);
				mm->bias = b ? nl_tensor4(r_b, o_b + (uint64_t)n0 * 4, v_d, b_st)
					     : nl_tensor_none();
				mm->requant = nl_tensor4(r_rq, o_rq + (uint64_t)n0 * 8, v_d, rq_st);
				mm->out = nl_tensor4(r_out, o_out + (uint64_t)(b0 * p.o_st[0] +
									       m0 * p.o_st[1] + n0),
						     o_d, p.o_st);
				mm->quant = q;
			}
		}
	}
	return ERT_OK;
}

/* ---- ELTWISE (QLinearAdd, QLinearMul) ------------------------------------ */

static const uint32_t elt_idx[6] = { 1, 2, 4, 5, 6, 7 };

static bool elt_params(const struct ert_exec *x, struct elt_params *e)
{
	return elt_params_at(x, elt_idx, x->node->op == ERT_OP_QLinearMul, e);
}

static bool elt_supported(const struct ert_exec *x)
{
	struct elt_params e;
	int64_t od[4], os[4], d[4], s[4];

	if (!nl_is_int8(nl_in_at(x, 0)) || !nl_is_int8(nl_in_at(x, 3)) || !nl_is_int8(x->out[0]) ||
	    !nl_as4(x->out[0], od, os, 1) || !bcast4(nl_in_at(x, 0), od, d, s) ||
	    !bcast4(nl_in_at(x, 3), od, d, s))
		return false;
	return elt_params(x, &e);
}

static ert_status lower_elt(struct lower *l)
{
	struct ert_exec *x = l->x;
	struct elt_params e;
	struct view4 a, b, o;
	ert_status st;

	elt_params(x, &e);
	nl_as4(x->out[0], o.d, o.s, 1);
	bcast4(nl_in_at(x, 0), o.d, a.d, a.s);
	bcast4(nl_in_at(x, 3), o.d, b.d, b.s);
	st = nl_locate(l, nl_in_at(x, 0), 0, x->in_const[0], &a.ref, &a.off);
	if (st == ERT_OK)
		st = nl_locate(l, nl_in_at(x, 3), 3, x->in_const[3], &b.ref, &b.off);
	if (st == ERT_OK)
		st = nl_locate(l, x->out[0], -1, false, &o.ref, &o.off);
	if (st != ERT_OK)
		return st;
	return elt_cmds(l, &e, x->node->op == ERT_OP_QLinearMul ? ENPU_ELTWISE_MUL : ENPU_ELTWISE_ADD,
			&a, &b, &o);
}

/* ---- POOL ------------------------------------------------------------------ */

struct pool_plan {
	uint32_t mode;
	int64_t n, c, h, w, oh, ow, kh, kw, sh, sw, pt, pl, pb, pr;
	int32_t lo, hi;
};

static bool pool_plan(const struct ert_exec *x, struct pool_plan *p)
{
	const struct ert_node *n = x->node;
	const struct ert_value *in = nl_in_at(x, 0), *out = x->out[0];

	memset(p, 0, sizeof(*p));
	if (!nl_is_int8(in) || !nl_is_int8(out) || in->rank != 4 || out->rank != 4)
		return false;
	p->n = in->dims[0];
	p->c = in->dims[1];
	p->h = in->dims[2];
	p->w = in->dims[3];
	p->oh = out->dims[2];
	p->ow = out->dims[3];
	p->lo = -128;
	p->hi = 127;
	if (n->op == ERT_OP_QLinearGlobalAveragePool || n->op == ERT_OP_QLinearAveragePool) {
		double xs, ys;
		int32_t xz, yz;

		if (!nl_scalar_scale(x, 1, &xs) || !nl_scalar_zp(x, 2, &xz) || !nl_scalar_scale(x, 3, &ys) ||
		    !nl_scalar_zp(x, 4, &yz) || xs != ys || xz != yz ||
		    ert_attr_int(n, "channels_last", 0))
			return false;
		nl_clamp_of(n, &p->lo, &p->hi);
	}
	if (n->op == ERT_OP_QLinearGlobalAveragePool) {
		p->mode = ENPU_POOL_GLOBAL_AVG;
		return p->oh == 1 && p->ow == 1 && p->h <= ENPU_CS_MAX_DIM &&
		       p->w <= ENPU_CS_MAX_DIM && p->c * p->h * p->w <= UINT32_MAX;
	}
	if (n->op == ERT_OP_MaxPool) {
		if (n->n_outputs > 1 && n->outputs[1] >= 0)
			return false;
		p->mode = ENPU_POOL_MAX;
	} else {
		if (ert_attr_int(n, "count_include_pad", 0))
			return false;
		p->mode = ENPU_POOL_AVG;
	}
	uint32_t nk = 0;
	const int64_t *k = ert_attr_ints(n, "kernel_shape", &nk);
	struct ert_conv_geom g;
	struct ert_err e;

	if (!k || nk != 2 || ert_geom_conv(n, 2, &in->dims[2], k, false, &g, &e) != ERT_OK)
		return false;
	/* the engine's output size is the floor formula with dilation 1 */
	if (g.dil[1] != 1 || g.dil[2] != 1 || g.out[1] != p->oh || g.out[2] != p->ow)
		return false;
	p->kh = k[0];
	p->kw = k[1];
	p->sh = g.stride[1];
	p->sw = g.stride[2];
	p->pt = g.pad_b[1];
	p->pl = g.pad_b[2];
	p->pb = g.pad_e[1];
	p->pr = g.pad_e[2];
	int64_t v[] = { p->kh, p->kw, p->sh, p->sw };

	for (int i = 0; i < 4; i++)
		if (v[i] < 1 || v[i] > 255)
			return false;
	if (p->pt >= p->kh || p->pb >= p->kh || p->pl >= p->kw || p->pr >= p->kw ||
	    p->pt < 0 || p->pb < 0 || p->pl < 0 || p->pr < 0)
		return false;
	return p->c * p->h * p->w <= UINT32_MAX;
}

/* Work of one output row of one channel, the smallest piece lowering cuts. */
static uint64_t pool_row_work(const struct pool_plan *p)
{
	uint64_t win = p->mode == ENPU_POOL_GLOBAL_AVG ? (uint64_t)p->h * p->w
						       : (uint64_t)p->kh * p->kw;

	return (uint64_t)p->n * p->ow * (win + 16);
}

static ert_status lower_pool(struct lower *l)
{
	struct ert_exec *x = l->x;
	struct pool_plan p;
	uint32_t r_in, r_out;
	uint64_t o_in, o_out;
	ert_status st;

	pool_plan(x, &p);
	st = nl_locate_io(l, &r_in, &o_in, &r_out, &o_out);
	if (st != ERT_OK)
		return st;
	uint64_t row = pool_row_work(&p);
	int64_t cc = p.c, rows = p.oh;

	/* chunks of channels, then of output rows (GLOBAL_AVG has one) */
	while (cc > 1 && row * p.oh * cc > l->limit)
		cc = (cc + 1) / 2;
	while (rows > 1 && row * rows * cc > l->limit)
		rows = (rows + 1) / 2;
	if (row * rows * cc > l->limit)
		return nl_lower_fail(l, ERT_STATUS_UNSUPPORTED,
				     "one output row exceeds the work limit");
	int64_t in_st[4] = { p.c * p.h * p.w, p.w, 1, p.h * p.w };
	int64_t out_st[4] = { p.c * p.oh * p.ow, p.ow, 1, p.oh * p.ow };

	for (int64_t c0 = 0; c0 < p.c; c0 += cc) {
		int64_t nc = p.c - c0 < cc ? p.c - c0 : cc;

		for (int64_t y0 = 0; y0 < p.oh; y0 += rows) {
			int64_t ny = p.oh - y0 < rows ? p.oh - y0 : rows;
			/*
			 * The input rows the chunk's windows cover, and the padding
			 * left of p.pt / p.pb at its ends; pads are smaller than
			 * the kernel, so every window has a row of input.
			 */
			int64_t top = y0 * p.sh - p.pt, span = (ny - 1) * p.sh + p.kh;
			int64_t r0 = top < 0 ? 0 : top, pt = r0 - top;
			int64_t hn = p.h - r0 < span - pt ? p.h - r0 : span - pt;
			int64_t pb = span - pt - hn;

			if (p.mode == ENPU_POOL_GLOBAL_AVG) {
				r0 = pt = pb = 0;
				hn = p.h;
			}
			int64_t in_d[4] = { p.n, hn, p.w, nc }, out_d[4] = { p.n, ny, p.ow, nc };
			struct npu_cmd_entry *e = nl_add_cmd(l, ENPU_OP_POOL,
							     sizeof(struct enpu_cs_pool),
							     row * ny * nc);

			if (!e)
				return ERT_STATUS_OUT_OF_MEMORY;
			struct enpu_cs_pool *pc = &e->c.pool;

			pc->in = nl_tensor4(r_in, o_in + (uint64_t)(r0 * in_st[1] + c0 * in_st[3]),
					    in_d, in_st);
			pc->out = nl_tensor4(r_out,
					     o_out + (uint64_t)(y0 * out_st[1] + c0 * out_st[3]),
					     out_d, out_st);
			pc->quant.act_min = p.lo;
			pc->quant.act_max = p.hi;
			pc->mode = p.mode;
			if (p.mode != ENPU_POOL_GLOBAL_AVG) {
				pc->kernel_h = (uint16_t)p.kh;
				pc->kernel_w = (uint16_t)p.kw;
				pc->stride_h = (uint16_t)p.sh;
				pc->stride_w = (uint16_t)p.sw;
				pc->pad_top = (uint16_t)pt;
				pc->pad_left = (uint16_t)p.pl;
				pc->pad_bottom = (uint16_t)pb;
				pc->pad_right = (uint16_t)p.pr;
			}
		}
	}
	return ERT_OK;
}

/* ---- dispatch ------------------------------------------------------------- */

bool nl_compute_op(enum ert_op op)
{
	switch (op) {
	case ERT_OP_QLinearConv: case ERT_OP_QLinearMatMul: case ERT_OP_QGemm:
	case ERT_OP_QLinearAdd: case ERT_OP_QLinearMul: case ERT_OP_QLinearAveragePool:
	case ERT_OP_QLinearGlobalAveragePool: case ERT_OP_MaxPool:
		return true;
	default:
		return false;
	}
}

bool nl_compute_supports(const struct ert_exec *x, uint64_t limit)
{
	const struct ert_node *n = x->node;
	struct pool_plan p;

	switch (n->op) {
	case ERT_OP_QLinearConv:
		return nl_fixed_rule(n) && conv_supported(x, limit);
	case ERT_OP_QLinearMatMul:
	case ERT_OP_QGemm:
		return nl_fixed_rule(n) && mm_supported(x);
	case ERT_OP_QLinearAdd:
	case ERT_OP_QLinearMul:
		return nl_fixed_rule(n) && elt_supported(x);
	case ERT_OP_QLinearAveragePool:
	case ERT_OP_QLinearGlobalAveragePool:
		return nl_fixed_rule(n) && pool_plan(x, &p) && pool_row_work(&p) <= limit;
	case ERT_OP_MaxPool:
		return pool_plan(x, &p) && pool_row_work(&p) <= limit;
	default:
		return false;
	}
}

ert_status nl_compute_lower(struct lower *l)
{
	switch (l->x->node->op) {
	case ERT_OP_QLinearConv:
		return lower_conv(l);
	case ERT_OP_QLinearMatMul:
	case ERT_OP_QGemm:
		return lower_mm(l);
	case ERT_OP_QLinearAdd:
	case ERT_OP_QLinearMul:
		return lower_elt(l);
	default:
		return lower_pool(l);
	}
}
