/* SPDX-License-Identifier: MIT */
/*
 * Lowering int8 nodes to enpu commands (uapi/drm/enpu_cmdstream.h).
 *
 * Tensors stay in the graph's layout: the command stream takes a byte stride
 * per dimension, so an NCHW activation is handed to CONV2D and POOL as an
 * NHWC view and OIHW weights as an OHWI view, with no repacking. Only ops
 * with the fixed-point rule (ert.requant = 1, docs/int8.md) are lowered, so
 * the results equal the CPU backend's bit for bit.
 *
 * A command asks for at most the device's per-job work (QUERY max_job_work):
 * larger layers are cut into several commands (by output channel, then by
 * output row), which the job builder may put in different jobs.
 */
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu-impl.h"
#include "npu/npu-impl.h"
#include "ops/linalg-geom.h"
#include "ops/movement-params.h"
#include "ops/quant-fixed.h"

/* ---- building commands ---------------------------------------------------- */

struct lower {
	struct ert_npu *npu;
	struct ert_exec *x;
	struct npu_op *op;
	uint32_t cap;
	uint64_t limit;      /* most work of one command */
	struct ert_err *err;
};

static ert_status lower_fail(struct lower *l, ert_status st, const char *why)
{
	ert_err_set(l->err, "npu: %s '%s': %s", ert_op_name(l->x->node->op), l->x->node->name,
		    why);
	return st;
}

static struct npu_cmd_entry *add_cmd(struct lower *l, uint16_t opcode, size_t size,
				     uint64_t work)
{
	struct npu_op *op = l->op;

	if (op->n_cmds == l->cap) {
		uint32_t cap = l->cap ? l->cap * 2 : 4;
		struct npu_cmd_entry *c = realloc(op->cmds, cap * sizeof(*c));

		if (!c)
			return NULL;
		op->cmds = c;
		l->cap = cap;
	}
	struct npu_cmd_entry *e = &op->cmds[op->n_cmds++];

	memset(e, 0, sizeof(*e));
	e->c.hdr.opcode = opcode;
	e->c.hdr.size = (uint16_t)size;
	e->work = work;
	return e;
}

/* A node-local reference to @bo (+ @offset of the tensor's first byte). */
static int32_t add_ref(struct lower *l, const struct npu_bo *bo, int32_t input, const void *base,
		       uint64_t offset)
{
	struct npu_op *op = l->op;

	for (uint32_t i = 0; i < op->n_refs; i++)
		if (input >= 0 ? op->refs[i].input == input
			       : op->refs[i].bo == bo && op->refs[i].input < 0)
			return (int32_t)i;
	if (op->n_refs == NPU_MAX_REFS)
		return -1;
	op->refs[op->n_refs] = (struct npu_ref){ .bo = bo, .input = input, .base = base,
						 .offset = offset };
	return (int32_t)op->n_refs++;
}

/* Where value @v (input @k of the node, or -1 for an output) lives: ref + offset. */
static ert_status locate(struct lower *l, const struct ert_value *v, int32_t k, bool is_const,
			 uint32_t *ref, uint64_t *offset)
{
	struct ert_npu *npu = l->npu;
	const struct npu_bo *bo = NULL;
	ert_status st;

	if (is_const) {
		st = ert_npu_upload(npu, v->data, v->nbytes, &bo, offset, l->err);
		if (st != ERT_OK)
			return st;
	} else {
		bo = ert_npu_find(npu, v->data, v->nbytes, offset);
		/* a graph input, in the session's page-aligned buffer: wrapped by the node */
		if (!bo && k >= 0) {
			int32_t r = add_ref(l, NULL, k, v->data, 0);
			struct npu_ref *ir = r >= 0 ? &l->op->refs[r] : NULL;

			if (!ir)
				return lower_fail(l, ERT_STATUS_INTERNAL,
						  "too many buffers for one node");
			if (!ir->bo) {
				st = ert_npu_wrap(npu, v->data, v->nbytes, &ir->own, l->err);
				if (st != ERT_OK)
					return st;
				ir->bo = &ir->own;
			}
			*offset = 0;
			*ref = (uint32_t)r;
			return ERT_OK;
		}
		if (!bo)
			return lower_fail(l, ERT_STATUS_INTERNAL,
					  "a tensor is not in NPU-visible memory");
	}
	int32_t r = add_ref(l, bo, -1, NULL, 0);

	if (r < 0)
		return lower_fail(l, ERT_STATUS_INTERNAL, "too many buffers for one node");
	*ref = (uint32_t)r;
	return ERT_OK;
}

/* Input 0 and output 0 of the node: where each lives. */
static ert_status locate_io(struct lower *l, uint32_t *ri, uint64_t *oi, uint32_t *ro,
			    uint64_t *oo)
{
	struct ert_exec *x = l->x;
	ert_status st = locate(l, x->in[0], 0, x->in_const[0], ri, oi);

	return st == ERT_OK ? locate(l, x->out[0], -1, false, ro, oo) : st;
}

/* Upload bytes computed at prepare time (requant tables, LUTs): not cached. */
static ert_status locate_bytes(struct lower *l, const void *data, size_t n, uint32_t *ref,
			       uint64_t *offset)
{
	const struct npu_bo *bo;
	ert_status st = ert_npu_upload_bytes(l->npu, data, n, &bo, offset, l->err);
	if (st != ERT_OK)
		return st;
	int32_t r = add_ref(l, bo, -1, NULL, 0);

	if (r < 0)
		return lower_fail(l, ERT_STATUS_INTERNAL, "too many buffers for one node");
	*ref = (uint32_t)r;
	return ERT_OK;
}

static struct enpu_cs_tensor tensor4(uint32_t ref, uint64_t offset, const int64_t *dims,
				     const int64_t *strides)
{
	struct enpu_cs_tensor t = { .region = ref, .offset = offset };

	for (int i = 0; i < 4; i++) {
		t.dim[i] = (uint32_t)dims[i];
		t.stride[i] = (uint32_t)strides[i];
	}
	return t;
}

static struct enpu_cs_tensor tensor_none(void)
{
	struct enpu_cs_tensor t = { .region = ENPU_CS_NO_REGION };

	return t;
}

/* Dense row-major strides (bytes) of dims[0..rank) with element size @es. */
static void dense_strides(const int64_t *dims, int32_t rank, int64_t es, int64_t *st)
{
	int64_t s = es;

	for (int32_t i = rank; i-- > 0;) {
		st[i] = s;
		s *= dims[i];
	}
}

/* Dims and strides fit the command stream (dims 1..65535, strides < 2^32). */
static bool fits4(const int64_t *dims, const int64_t *st)
{
	for (int i = 0; i < 4; i++)
		if (dims[i] < 1 || dims[i] > ENPU_CS_MAX_DIM || st[i] < 0 || st[i] > UINT32_MAX)
			return false;
	return true;
}

/* Right-align a value of rank <= 4 to 4 dims; false when the rank is larger. */
static bool as4(const struct ert_value *v, int64_t *dims, int64_t *st, int64_t es)
{
	int64_t d[ERT_MAX_RANK], s[ERT_MAX_RANK];

	if (v->rank > 4)
		return false;
	dense_strides(v->dims, v->rank, es, s);
	for (int32_t i = 0; i < v->rank; i++)
		d[i] = v->dims[i];
	for (int i = 0; i < 4; i++) {
		int32_t j = v->rank - 4 + i;

		dims[i] = j >= 0 ? d[j] : 1;
		st[i] = j >= 0 ? s[j] : 0;
	}
	return fits4(dims, st);
}

/* ---- quantisation parameters ---------------------------------------------- */

static const struct ert_value *in_at(const struct ert_exec *x, uint32_t i)
{
	return i < x->n_in ? x->in[i] : NULL;
}

static bool in_is_const(const struct ert_exec *x, uint32_t i)
{
	return i < x->n_in && x->in[i] && x->in_const[i] && x->in[i]->data;
}

static bool is_int8(const struct ert_value *v)
{
	return v && v->dtype == ERT_DTYPE_INT8;
}

/* A constant scalar scale (float32/16) > 0, finite. */
static bool scalar_scale(const struct ert_exec *x, uint32_t i, double *s)
{
	const struct ert_value *v = in_at(x, i);

	if (!in_is_const(x, i) || v->numel != 1 || !ert_dtype_is_float(v->dtype))
		return false;
	*s = ert_value_get_float(v, 0);
	return *s > 0 && *s < 1e30;
}

/* A constant int8 scalar zero point (absent: 0). */
static bool scalar_zp(const struct ert_exec *x, uint32_t i, int32_t *zp)
{
	const struct ert_value *v = in_at(x, i);

	*zp = 0;
	if (!v)
		return true;
	if (!in_is_const(x, i) || v->numel != 1 || v->dtype != ERT_DTYPE_INT8)
		return false;
	*zp = (int32_t)ert_value_get_int(v, 0);
	return true;
}

/* The weight zero point: absent, or int8 constant all-equal. */
static bool weight_zp(const struct ert_exec *x, uint32_t i, int32_t *zp)
{
	const struct ert_value *v = in_at(x, i);

	*zp = 0;
	if (!v)
		return true;
	if (!in_is_const(x, i) || v->dtype != ERT_DTYPE_INT8 || v->numel < 1)
		return false;
	*zp = (int32_t)ert_value_get_int(v, 0);
	for (int64_t c = 1; c < v->numel; c++)
		if (ert_value_get_int(v, c) != *zp)
			return false;
	return true;
}

static bool fixed_rule(const struct ert_node *n)
{
	return ert_attr_int(n, "ert.requant", 0) == 1;
}

static void clamp_of(const struct ert_node *n, int32_t *lo, int32_t *hi)
{
	uint32_t count = 0;
	const int64_t *c = ert_attr_ints(n, "ert.clamp", &count);

	*lo = -128;
	*hi = 127;
	if (c && count == 2) {
		*lo = (int32_t)(c[0] < -128 ? -128 : c[0] > 127 ? 127 : c[0]);
		*hi = (int32_t)(c[1] < -128 ? -128 : c[1] > 127 ? 127 : c[1]);
	}
}

/*
 * Per-channel (mult, shift) table of x_s * w_s[c] / y_s for @n channels; the
 * weight scale input @ws has 1 or @n entries. False when one is not
 * representable or a scale is not positive.
 */
static bool requant_table(const struct ert_exec *x, double xs, uint32_t ws_idx, double ys,
			  int64_t n, int32_t *tab)
{
	const struct ert_value *ws = in_at(x, ws_idx);

	if (!in_is_const(x, ws_idx) || !ert_dtype_is_float(ws->dtype) ||
	    (ws->numel != 1 && ws->numel != n))
		return false;
	for (int64_t c = 0; c < n; c++) {
		double w = ert_value_get_float(ws, ws->numel == 1 ? 0 : c);

		if (!(w > 0) ||
		    !ert_quant_product_multiplier(xs, w, ys, &tab[2 * c], &tab[2 * c + 1]))
			return false;
	}
	return true;
}

/* ---- CONV2D --------------------------------------------------------------- */

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
	const struct ert_value *in = in_at(x, 0), *w = in_at(x, 3), *out = x->out[0];
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
	if (c->groups < 1 || c->ic != c->groups * c->icg || c->oc % c->groups)
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

	if (!is_int8(in_at(x, 0)) || !is_int8(in_at(x, 3)) || !is_int8(x->out[0]) ||
	    !in_is_const(x, 3) || !conv_geometry(x, &c))
		return false;
	if (!scalar_scale(x, 1, &xs) || !scalar_zp(x, 2, &zp) || !weight_zp(x, 5, &zp) ||
	    !scalar_scale(x, 6, &ys) || !scalar_zp(x, 7, &zp))
		return false;
	const struct ert_value *b = in_at(x, 8);

	if (b && (!in_is_const(x, 8) || b->dtype != ERT_DTYPE_INT32 || b->numel != c.oc))
		return false;
	int32_t *tab = malloc((size_t)c.oc * 8);
	bool ok = tab && requant_table(x, xs, 4, ys, c.oc, tab);

	free(tab);
	/* the smallest piece lowering cuts, one output row of one unit, must fit a command */
	return ok && conv_work(&c, conv_unit(&c), 1) <= limit;
}

static ert_status lower_conv(struct lower *l)
{
	struct ert_exec *x = l->x;
	const struct ert_value *in = in_at(x, 0), *w = in_at(x, 3), *b = in_at(x, 8);
	struct conv_plan c;
	struct enpu_cs_quant q = { 0 };
	uint32_t r_in, r_w, r_b = 0, r_rq, r_out;
	uint64_t o_in, o_w, o_b = 0, o_rq, o_out;
	double xs, ys;
	ert_status st;

	conv_geometry(x, &c);
	scalar_scale(x, 1, &xs);
	scalar_scale(x, 6, &ys);
	scalar_zp(x, 2, &q.in_zp);
	weight_zp(x, 5, &q.in2_zp);
	scalar_zp(x, 7, &q.out_zp);
	clamp_of(x->node, &q.act_min, &q.act_max);

	int32_t *tab = malloc((size_t)c.oc * 8);

	if (!tab)
		return ERT_STATUS_OUT_OF_MEMORY;
	requant_table(x, xs, 4, ys, c.oc, tab);
	st = locate_bytes(l, tab, (size_t)c.oc * 8, &r_rq, &o_rq);
	free(tab);
	if (st == ERT_OK)
		st = locate(l, in, 0, x->in_const[0], &r_in, &o_in);
	if (st == ERT_OK)
		st = locate(l, w, 3, true, &r_w, &o_w);
	if (st == ERT_OK && b)
		st = locate(l, b, 8, true, &r_b, &o_b);
	if (st == ERT_OK)
		st = locate(l, x->out[0], -1, false, &r_out, &o_out);
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
		return lower_fail(l, ERT_STATUS_UNSUPPORTED,
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

					st = locate_bytes(l, &zp, 1, &r_zp, &o_zp);
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
				return lower_fail(l, ERT_STATUS_INTERNAL, "bad row split");
			e = add_cmd(l, ENPU_OP_CONV2D, sizeof(struct enpu_cs_conv2d),
				    conv_work(&c, oc, ny));
			if (!e)
				return ERT_STATUS_OUT_OF_MEMORY;
			struct enpu_cs_conv2d *cv = &e->c.conv;
			int64_t in_d[4] = { c.n, hn, c.w, icn };
			int64_t out_d[4] = { c.n, ny, c.ow, oc };
			int64_t w_d[4] = { oc, c.kh, c.kw, c.icg };
			int64_t v_d[4] = { oc, 1, 1, 1 }, b_st[4] = { 4, 0, 0, 0 };
			int64_t rq_st[4] = { 8, 0, 0, 0 };

			cv->in = tensor4(rin, oin, in_d, ist);
			cv->weights = tensor4(r_w, o_w + (uint64_t)(o0 * w_st[0]), w_d, w_st);
			cv->bias = b ? tensor4(r_b, o_b + (uint64_t)o0 * 4, v_d, b_st) : tensor_none();
			cv->requant = tensor4(r_rq, o_rq + (uint64_t)o0 * 8, v_d, rq_st);
			cv->out = tensor4(r_out, o_out + (uint64_t)(y0 * out_st[1] + o0 * out_st[3]),
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
	return ERT_OK;
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
	a = in_at(x, p->a_idx);
	w = in_at(x, p->w_idx);
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
		int64_t a_st[4] = { p->m * p->k, p->k, 1, 0 };
		int64_t w_st[4] = { w->rank == 3 ? p->k * p->n : 0, 1, p->n, 0 };
		int64_t o_st[4] = { p->m * p->n, p->n, 1, 0 };

		memcpy(p->a_st, a_st, sizeof(a_st));
		memcpy(p->w_st, w_st, sizeof(w_st));
		memcpy(p->o_st, o_st, sizeof(o_st));
	}
	int64_t d[] = { p->batch, p->m, p->n, p->k };

	for (int i = 0; i < 4; i++)
		if (d[i] < 1 || d[i] > ENPU_CS_MAX_DIM)
			return false;
	return p->batch * p->m * p->k <= UINT32_MAX && p->batch * p->k * p->n <= UINT32_MAX &&
	       p->batch * p->m * p->n <= UINT32_MAX;
}

static bool mm_supported(const struct ert_exec *x)
{
	struct mm_plan p;
	double as, ys;
	int32_t zp;

	if (!mm_geometry(x, &p) || !is_int8(in_at(x, p.a_idx)) || !is_int8(in_at(x, p.w_idx)) ||
	    !is_int8(x->out[0]))
		return false;
	if (!scalar_scale(x, p.as_idx, &as) || !scalar_zp(x, p.azp_idx, &zp) ||
	    !weight_zp(x, p.wzp_idx, &zp) || !scalar_scale(x, p.ys_idx, &ys) ||
	    !scalar_zp(x, p.yzp_idx, &zp))
		return false;
	const struct ert_value *b = p.b_idx != UINT32_MAX ? in_at(x, p.b_idx) : NULL;

	if (b && (!in_is_const(x, p.b_idx) || b->dtype != ERT_DTYPE_INT32 || b->numel != p.n))
		return false;
	int32_t *tab = malloc((size_t)p.n * 8);
	bool ok = tab && requant_table(x, as, p.ws_idx, ys, p.n, tab);

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
	const struct ert_value *b = p.b_idx != UINT32_MAX ? in_at(x, p.b_idx) : NULL;

	scalar_scale(x, p.as_idx, &as);
	scalar_scale(x, p.ys_idx, &ys);
	scalar_zp(x, p.azp_idx, &q.in_zp);
	weight_zp(x, p.wzp_idx, &q.in2_zp);
	scalar_zp(x, p.yzp_idx, &q.out_zp);
	clamp_of(x->node, &q.act_min, &q.act_max);

	int32_t *tab = malloc((size_t)p.n * 8);

	if (!tab)
		return ERT_STATUS_OUT_OF_MEMORY;
	requant_table(x, as, p.ws_idx, ys, p.n, tab);
	st = locate_bytes(l, tab, (size_t)p.n * 8, &r_rq, &o_rq);
	free(tab);
	if (st == ERT_OK)
		st = locate(l, in_at(x, p.a_idx), (int32_t)p.a_idx, x->in_const[p.a_idx], &r_a,
			    &o_a);
	if (st == ERT_OK)
		st = locate(l, in_at(x, p.w_idx), (int32_t)p.w_idx, x->in_const[p.w_idx], &r_w,
			    &o_w);
	if (st == ERT_OK && b)
		st = locate(l, b, (int32_t)p.b_idx, true, &r_b, &o_b);
	if (st == ERT_OK)
		st = locate(l, x->out[0], -1, false, &r_out, &o_out);
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
				struct npu_cmd_entry *e = add_cmd(l, ENPU_OP_MATMUL,
								  sizeof(struct enpu_cs_matmul),
								  (uint64_t)nb * nm * nn * per);

				if (!e)
					return ERT_STATUS_OUT_OF_MEMORY;
				struct enpu_cs_matmul *mm = &e->c.mm;
				int64_t a_d[4] = { nb, nm, p.k, 1 }, w_d[4] = { nb, nn, p.k, 1 };
				int64_t o_d[4] = { nb, nm, nn, 1 }, v_d[4] = { nn, 1, 1, 1 };
				int64_t b_st[4] = { 4, 0, 0, 0 }, rq_st[4] = { 8, 0, 0, 0 };

				mm->a = tensor4(r_a, o_a + (uint64_t)(b0 * p.a_st[0] + m0 * p.a_st[1]),
						a_d, p.a_st);
				mm->w = tensor4(r_w, o_w + (uint64_t)(b0 * p.w_st[0] + n0 * p.w_st[1]),
						w_d, p.w_st);
				mm->bias = b ? tensor4(r_b, o_b + (uint64_t)n0 * 4, v_d, b_st)
					     : tensor_none();
				mm->requant = tensor4(r_rq, o_rq + (uint64_t)n0 * 8, v_d, rq_st);
				mm->out = tensor4(r_out, o_out + (uint64_t)(b0 * p.o_st[0] +
									    m0 * p.o_st[1] + n0),
						  o_d, p.o_st);
				mm->quant = q;
			}
		}
	}
	return ERT_OK;
}

/* ---- ELTWISE (QLinearAdd, QLinearMul) ------------------------------------ */

struct elt_params {
	struct enpu_cs_quant q;
	int32_t a_mult, a_shift, b_mult, b_shift;
};

static bool elt_params(const struct ert_exec *x, struct elt_params *e)
{
	double as, bs, ys;

	memset(e, 0, sizeof(*e));
	if (!scalar_scale(x, 1, &as) || !scalar_zp(x, 2, &e->q.in_zp) ||
	    !scalar_scale(x, 4, &bs) || !scalar_zp(x, 5, &e->q.in2_zp) ||
	    !scalar_scale(x, 6, &ys) || !scalar_zp(x, 7, &e->q.out_zp))
		return false;
	clamp_of(x->node, &e->q.act_min, &e->q.act_max);
	if (x->node->op == ERT_OP_QLinearMul)
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
	if (!as4(v, d, s, 1))
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

static bool elt_supported(const struct ert_exec *x)
{
	struct elt_params e;
	int64_t od[4], os[4], d[4], s[4];

	if (!is_int8(in_at(x, 0)) || !is_int8(in_at(x, 3)) || !is_int8(x->out[0]) ||
	    !as4(x->out[0], od, os, 1) || !bcast4(in_at(x, 0), od, d, s) ||
	    !bcast4(in_at(x, 3), od, d, s))
		return false;
	return elt_params(x, &e);
}

/*
 * A 4-D walk cut into pieces along dims 0, 1 and 2 so that each piece's work
 * fits: whole rows of dim 3 (at most 65535 elements, always within a job's
 * work), as few pieces as halving finds.
 */
struct rows4 {
	int64_t dims[4];      /* the whole walk */
	int64_t chunk[3];     /* piece sizes along dims 0, 1 and 2 */
	int64_t n[3];         /* pieces along dims 0, 1 and 2 */
};

static struct rows4 split_rows(const int64_t *od, uint64_t per_elem, uint64_t per_row,
			       uint64_t limit)
{
	struct rows4 r;
	uint64_t row = (uint64_t)od[3] * per_elem + per_row;

	memcpy(r.dims, od, sizeof(r.dims));
	memcpy(r.chunk, od, sizeof(r.chunk));
	for (int i = 0; i < 3; i++) {
		while (r.chunk[i] > 1 &&
		       (uint64_t)r.chunk[0] * r.chunk[1] * r.chunk[2] * row > limit)
			r.chunk[i] = (r.chunk[i] + 1) / 2;
		r.n[i] = (od[i] + r.chunk[i] - 1) / r.chunk[i];
	}
	return r;
}

static int64_t pieces(const struct rows4 *r)
{
	return r->n[0] * r->n[1] * r->n[2];
}

/* Piece @i (dim 0 slowest): its start @at along dims 0..2 and its dims @d. */
static void piece_at(const struct rows4 *r, int64_t i, int64_t *at, int64_t *d)
{
	for (int k = 2; k >= 0; k--) {
		at[k] = i % r->n[k] * r->chunk[k];
		d[k] = r->dims[k] - at[k] < r->chunk[k] ? r->dims[k] - at[k] : r->chunk[k];
		i /= r->n[k];
	}
	d[3] = r->dims[3];
}

/* Byte offset of a piece starting at @at in a tensor of strides @st. */
static uint64_t piece_offset(const int64_t *at, const int64_t *st)
{
	return (uint64_t)(at[0] * st[0] + at[1] * st[1] + at[2] * st[2]);
}

static ert_status lower_elt(struct lower *l)
{
	struct ert_exec *x = l->x;
	struct elt_params e;
	int64_t od[4], os[4], ad[4], as[4], bd[4], bs[4];
	uint32_t r_a, r_b, r_o;
	uint64_t o_a, o_b, o_o;
	ert_status st;

	elt_params(x, &e);
	as4(x->out[0], od, os, 1);
	bcast4(in_at(x, 0), od, ad, as);
	bcast4(in_at(x, 3), od, bd, bs);
	st = locate(l, in_at(x, 0), 0, x->in_const[0], &r_a, &o_a);
	if (st == ERT_OK)
		st = locate(l, in_at(x, 3), 3, x->in_const[3], &r_b, &o_b);
	if (st == ERT_OK)
		st = locate(l, x->out[0], -1, false, &r_o, &o_o);
	if (st != ERT_OK)
		return st;
	struct rows4 r = split_rows(od, 16, 0, l->limit);

	for (int64_t i = 0; i < pieces(&r); i++) {
		int64_t at[3], cd[4], ca[4], cb[4];
		struct npu_cmd_entry *c;

		piece_at(&r, i, at, cd);
		for (int k = 0; k < 4; k++) {
			ca[k] = ad[k] == 1 ? 1 : cd[k];
			cb[k] = bd[k] == 1 ? 1 : cd[k];
		}
		c = add_cmd(l, ENPU_OP_ELTWISE, sizeof(struct enpu_cs_eltwise),
			    (uint64_t)cd[0] * cd[1] * cd[2] * cd[3] * 16);
		if (!c)
			return ERT_STATUS_OUT_OF_MEMORY;
		if (c->work > l->limit)
			return lower_fail(l, ERT_STATUS_UNSUPPORTED,
					  "a row exceeds the work limit");
		struct enpu_cs_eltwise *el = &c->c.elt;

		el->a = tensor4(r_a, o_a + piece_offset(at, as), ca, as);
		el->b = tensor4(r_b, o_b + piece_offset(at, bs), cb, bs);
		el->out = tensor4(r_o, o_o + piece_offset(at, os), cd, os);
		el->quant = e.q;
		el->op = x->node->op == ERT_OP_QLinearMul ? ENPU_ELTWISE_MUL : ENPU_ELTWISE_ADD;
		el->a_mult = e.a_mult;
		el->a_shift = e.a_shift;
		el->b_mult = e.b_mult;
		el->b_shift = e.b_shift;
	}
	return ERT_OK;
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
	const struct ert_value *in = in_at(x, 0), *out = x->out[0];

	memset(p, 0, sizeof(*p));
	if (!is_int8(in) || !is_int8(out) || in->rank != 4 || out->rank != 4)
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

		if (!scalar_scale(x, 1, &xs) || !scalar_zp(x, 2, &xz) || !scalar_scale(x, 3, &ys) ||
		    !scalar_zp(x, 4, &yz) || xs != ys || xz != yz ||
		    ert_attr_int(n, "channels_last", 0))
			return false;
		clamp_of(n, &p->lo, &p->hi);
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
	st = locate_io(l, &r_in, &o_in, &r_out, &o_out);
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
		return lower_fail(l, ERT_STATUS_UNSUPPORTED,
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
			struct npu_cmd_entry *e = add_cmd(l, ENPU_OP_POOL,
							  sizeof(struct enpu_cs_pool),
							  row * ny * nc);

			if (!e)
				return ERT_STATUS_OUT_OF_MEMORY;
			struct enpu_cs_pool *pc = &e->c.pool;

			pc->in = tensor4(r_in, o_in + (uint64_t)(r0 * in_st[1] + c0 * in_st[3]),
					 in_d, in_st);
			pc->out = tensor4(r_out,
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

/* ---- byte moves: COPY and LUT ---------------------------------------------- */

/* One COPY (or LUT with @table_ref) of 4-D @d from (src, ss) to (dst, ds), split for work. */
static ert_status emit_bytes(struct lower *l, uint32_t rs, uint64_t os, const int64_t *ss,
			     uint32_t rd, uint64_t od, const int64_t *ds, const int64_t *d,
			     int32_t table_ref, uint64_t table_off)
{
	struct rows4 r = split_rows(d, 4, 16, l->limit);

	if (!fits4(d, ss) || !fits4(d, ds))
		return lower_fail(l, ERT_STATUS_UNSUPPORTED, "tensor too large for one command");
	for (int64_t i = 0; i < pieces(&r); i++) {
		int64_t at[3], cd[4];
		uint64_t work, so, doff;
		struct npu_cmd_entry *e;

		piece_at(&r, i, at, cd);
		work = (uint64_t)cd[0] * cd[1] * cd[2] * (cd[3] * 4 + 16);
		so = os + piece_offset(at, ss);
		doff = od + piece_offset(at, ds);
		if (work > l->limit)
			return lower_fail(l, ERT_STATUS_UNSUPPORTED,
					  "a row exceeds the work limit");
		if (table_ref >= 0) {
			int64_t td[4] = { 256, 1, 1, 1 }, ts[4] = { 1, 0, 0, 0 };

			e = add_cmd(l, ENPU_OP_LUT, sizeof(struct enpu_cs_lut), work);
			if (!e)
				return ERT_STATUS_OUT_OF_MEMORY;
			e->c.lut.in = tensor4(rs, so, cd, ss);
			e->c.lut.table = tensor4((uint32_t)table_ref, table_off, td, ts);
			e->c.lut.out = tensor4(rd, doff, cd, ds);
		} else {
			e = add_cmd(l, ENPU_OP_COPY, sizeof(struct enpu_cs_copy), work);
			if (!e)
				return ERT_STATUS_OUT_OF_MEMORY;
			e->c.copy.src = tensor4(rs, so, cd, ss);
			e->c.copy.dst = tensor4(rd, doff, cd, ds);
		}
	}
	return ERT_OK;
}

/*
 * A byte range of @n bytes as a 4-D walk of rows of at most 65535 bytes:
 * (1, rows, 1, width) with a tail handled by the caller.
 */
static ert_status copy_flat(struct lower *l, uint32_t rs, uint64_t os, uint32_t rd, uint64_t od,
			    uint64_t n)
{
	const uint64_t width = 32768;

	while (n) {
		uint64_t rows = n / width, w = width;

		if (!rows) {
			rows = 1;
			w = n;
		}
		if (rows > ENPU_CS_MAX_DIM)
			rows = ENPU_CS_MAX_DIM;
		int64_t d[4] = { 1, (int64_t)rows, 1, (int64_t)w };
		int64_t s[4] = { 0, (int64_t)w, 0, 1 };
		ert_status st = emit_bytes(l, rs, os, s, rd, od, s, d, -1, 0);

		if (st != ERT_OK)
			return st;
		os += rows * w;
		od += rows * w;
		n -= rows * w;
	}
	return ERT_OK;
}

static bool is_view(enum ert_op op)
{
	return op == ERT_OP_Reshape || op == ERT_OP_Flatten || op == ERT_OP_Squeeze ||
	       op == ERT_OP_Unsqueeze || op == ERT_OP_Identity;
}

static ert_status lower_view(struct lower *l)
{
	struct ert_exec *x = l->x;
	uint32_t rs, rd;
	uint64_t os, od;
	ert_status st;

	/* planned in place: nothing to move */
	if (x->in[0]->data == x->out[0]->data)
		return ERT_OK;
	st = locate_io(l, &rs, &os, &rd, &od);
	if (st != ERT_OK)
		return st;
	return copy_flat(l, rs, os, rd, od, x->out[0]->nbytes);
}

static bool transpose_perm(const struct ert_exec *x, int32_t *perm)
{
	const struct ert_value *in = x->in[0];
	uint32_t n = 0;
	const int64_t *p = ert_attr_ints(x->node, "perm", &n);

	if (in->rank > 4)
		return false;
	for (int32_t i = 0; i < in->rank; i++)
		perm[i] = p ? (int32_t)p[i] : in->rank - 1 - i;
	return !p || n == (uint32_t)in->rank;
}

static ert_status lower_transpose(struct lower *l)
{
	struct ert_exec *x = l->x;
	const struct ert_value *in = x->in[0];
	int32_t perm[4];
	int64_t ist[ERT_MAX_RANK], d[4], ss[4], ds[4];
	uint32_t rs, rd;
	uint64_t os, od;
	ert_status st;

	transpose_perm(x, perm);
	dense_strides(in->dims, in->rank, 1, ist);
	as4(x->out[0], d, ds, 1);
	for (int i = 0; i < 4; i++) {
		int32_t j = in->rank - 4 + i;

		ss[i] = j >= 0 ? ist[perm[j]] : 0;
	}
	st = locate_io(l, &rs, &os, &rd, &od);
	if (st != ERT_OK)
		return st;
	return emit_bytes(l, rs, os, ss, rd, od, ds, d, -1, 0);
}

static ert_status lower_concat(struct lower *l)
{
	struct ert_exec *x = l->x;
	const struct ert_value *out = x->out[0];
	int32_t axis;
	int64_t od[4], os[4], at = 0;
	uint32_t rd;
	uint64_t oo;
	ert_status st;

	ert_norm_axis(ert_attr_int(x->node, "axis", 0), out->rank, &axis);
	as4(out, od, os, 1);
	st = locate(l, out, -1, false, &rd, &oo);
	int32_t a4 = axis + 4 - out->rank;

	for (uint32_t k = 0; st == ERT_OK && k < x->n_in; k++) {
		const struct ert_value *in = x->in[k];
		int64_t d[4], s[4];
		uint32_t rs;
		uint64_t os_in;

		if (!in->numel)
			continue;
		as4(in, d, s, 1);
		st = locate(l, in, (int32_t)k, x->in_const[k], &rs, &os_in);
		if (st == ERT_OK)
			st = emit_bytes(l, rs, os_in, s, rd, oo + (uint64_t)(at * os[a4]), os, d,
					-1, 0);
		at += d[a4];
	}
	return st;
}

static bool slice_params(const struct ert_exec *x, struct ert_mv_slice *sp)
{
	struct ert_err e;

	if (x->in[0]->rank > 4 ||
	    ert_mv_slice_params(x->node, &e, (const struct ert_value *const *)x->in, x->n_in,
				sp) != ERT_OK)
		return false;
	for (int32_t i = 0; i < sp->rank; i++)
		if (sp->step[i] < 1 || sp->dims[i] < 1)
			return false;
	return true;
}

static ert_status lower_slice(struct lower *l)
{
	struct ert_exec *x = l->x;
	const struct ert_value *in = x->in[0];
	struct ert_mv_slice sp;
	int64_t ist[ERT_MAX_RANK], d[4], ss[4], ds[4];
	uint64_t off = 0, os, od;
	uint32_t rs, rd;
	ert_status st;

	slice_params(x, &sp);
	dense_strides(in->dims, in->rank, 1, ist);
	as4(x->out[0], d, ds, 1);
	for (int32_t i = 0; i < in->rank; i++)
		off += (uint64_t)(sp.start[i] * ist[i]);
	for (int i = 0; i < 4; i++) {
		int32_t j = in->rank - 4 + i;

		ss[i] = j >= 0 ? ist[j] * sp.step[j] : 0;
	}
	st = locate_io(l, &rs, &os, &rd, &od);
	if (st != ERT_OK)
		return st;
	return emit_bytes(l, rs, os + off, ss, rd, od, ds, d, -1, 0);
}

/*
 * DequantizeLinear int8 -> float32 as four LUTs, one per byte of the float:
 * the tables are the CPU backend's own results for the 256 inputs, so the
 * values are bit-identical by construction.
 */
static ert_status dq_tables(const struct ert_exec *x, uint8_t tables[4][256], struct ert_err *err)
{
	struct ert_value in = { .dtype = ERT_DTYPE_INT8, .rank = 1, .dims = { 256 } };
	struct ert_value out = { 0 };
	int8_t codes[256];
	const struct ert_value *ins[3] = { &in, x->in[1], in_at(x, 2) };
	ert_status st;

	for (int i = 0; i < 256; i++)
		codes[i] = (int8_t)(uint8_t)i;
	in.data = codes;
	ert_value_finish(&in);
	st = ert_cpu_eval_node(x->graph, x->node, ins, x->n_in < 3 ? x->n_in : 3, &out, 1, err);
	if (st != ERT_OK)
		return st;
	for (int i = 0; i < 256; i++)
		for (int b = 0; b < 4; b++)
			tables[b][i] = ((const uint8_t *)out.data)[4 * i + b];
	free(out.data);
	return ERT_OK;
}

static bool dq_supported(const struct ert_exec *x)
{
	double s;
	int32_t zp;
	int64_t d[4], st[4];

	return is_int8(x->in[0]) && x->out[0] && x->out[0]->dtype == ERT_DTYPE_FLOAT32 &&
	       scalar_scale(x, 1, &s) && in_at(x, 1)->dtype == ERT_DTYPE_FLOAT32 &&
	       scalar_zp(x, 2, &zp) && as4(x->in[0], d, st, 1) && as4(x->out[0], d, st, 4);
}

static ert_status lower_dq(struct lower *l)
{
	struct ert_exec *x = l->x;
	uint8_t tables[4][256];
	int64_t d[4], ss[4], ds[4];
	uint32_t rs, rd, rt;
	uint64_t os, od, ot;
	ert_status st = dq_tables(x, tables, l->err);

	if (st == ERT_OK)
		st = locate_bytes(l, tables, sizeof(tables), &rt, &ot);
	if (st == ERT_OK)
		st = locate_io(l, &rs, &os, &rd, &od);
	if (st != ERT_OK)
		return st;
	as4(x->in[0], d, ss, 1);
	as4(x->out[0], d, ds, 4);
	for (int b = 0; b < 4 && st == ERT_OK; b++)
		st = emit_bytes(l, rs, os, ss, rd, od + (uint64_t)b, ds, d, (int32_t)rt,
				ot + 256u * (uint64_t)b);
	return st;
}

/* QLinearLookup: one LUT command (split by rows), the table uploaded with the weights. */
static bool lookup_supported(const struct ert_exec *x)
{
	int64_t d[4], st[4];

	return x->n_in == 2 && is_int8(x->in[0]) && is_int8(x->out[0]) && in_is_const(x, 1) &&
	       is_int8(x->in[1]) && x->in[1]->numel == 256 && as4(x->in[0], d, st, 1);
}

static ert_status lower_lookup(struct lower *l)
{
	struct ert_exec *x = l->x;
	int64_t d[4], ss[4], ds[4];
	uint32_t rs, rd, rt;
	uint64_t os, od, ot;
	ert_status st = locate(l, x->in[1], 1, true, &rt, &ot);

	if (st == ERT_OK)
		st = locate_io(l, &rs, &os, &rd, &od);
	if (st != ERT_OK)
		return st;
	as4(x->in[0], d, ss, 1);
	as4(x->out[0], d, ds, 1);
	return emit_bytes(l, rs, os, ss, rd, od, ds, d, (int32_t)rt, ot);
}

/* ---- dispatch ------------------------------------------------------------- */

/* Pad in constant mode with no crops (begin/end >= 0); the fill value as int8. */
static bool pad_params(const struct ert_exec *x, struct ert_mv_pad *pp, int8_t *value)
{
	struct ert_err e;
	double v;

	if (x->in[0]->rank > 4 ||
	    ert_mv_pad_params(x->node, &e, (const struct ert_value *const *)x->in, x->n_in,
			      pp) != ERT_OK || pp->mode != ERT_MV_PAD_CONSTANT)
		return false;
	for (int32_t i = 0; i < pp->rank; i++)
		if (pp->begin[i] < 0 || pp->end[i] < 0)
			return false;
	if (pp->has_value_input) {
		if (!in_is_const(x, 2) || !is_int8(x->in[2]))
			return false;
		v = (double)ert_value_get_int(x->in[2], 0);
	} else {
		v = pp->value;
	}
	if (v != (double)(int8_t)v)
		return false;
	*value = (int8_t)v;
	return true;
}

/*
 * Pad: one COPY fills the output with the value from a one-byte table read
 * with stride 0, a second COPY places the input inside it.
 */
static ert_status lower_pad(struct lower *l)
{
	struct ert_exec *x = l->x;
	struct ert_mv_pad pp;
	int8_t value;
	int64_t d[4], ds[4], id[4], is[4], ost[ERT_MAX_RANK];
	int64_t zero[4] = { 0, 0, 0, 0 };
	uint32_t rs, rd, rv;
	uint64_t os, od, ov, inner = 0;
	ert_status st;

	pad_params(x, &pp, &value);
	as4(x->out[0], d, ds, 1);
	dense_strides(x->out[0]->dims, x->out[0]->rank, 1, ost);
	for (int32_t i = 0; i < pp.rank; i++)
		inner += (uint64_t)(pp.begin[i] * ost[i]);
	st = locate_bytes(l, &value, 1, &rv, &ov);
	if (st == ERT_OK)
		st = locate(l, x->out[0], -1, false, &rd, &od);
	if (st == ERT_OK)
		st = emit_bytes(l, rv, ov, zero, rd, od, ds, d, -1, 0);
	if (st != ERT_OK || !x->in[0]->numel)
		return st;
	st = locate(l, x->in[0], 0, x->in_const[0], &rs, &os);
	if (st != ERT_OK)
		return st;
	as4(x->in[0], id, is, 1);
	return emit_bytes(l, rs, os, is, rd, od + inner, ds, id, -1, 0);
}

static bool movement_supported(const struct ert_exec *x)
{
	const struct ert_node *n = x->node;
	int64_t d[4], s[4];

	if (!x->n_in || !is_int8(x->in[0]) || !x->out[0] || !is_int8(x->out[0]) ||
	    !x->out[0]->numel)
		return false;
	for (uint32_t k = 1; k < n->n_outputs; k++)
		if (n->outputs[k] >= 0)
			return false;
	if (is_view(n->op))
		return true;
	if (!as4(x->out[0], d, s, 1))
		return false;
	switch (n->op) {
	case ERT_OP_Transpose: {
		int32_t perm[4];

		return transpose_perm(x, perm);
	}
	case ERT_OP_Concat:
		/* a BO for each input (graph inputs have their own) and the output */
		if (x->n_in >= NPU_MAX_REFS)
			return false;
		for (uint32_t k = 0; k < x->n_in; k++)
			if (!x->in[k] || !is_int8(x->in[k]) || x->in[k]->rank != x->out[0]->rank)
				return false;
		return true;
	case ERT_OP_Slice: {
		struct ert_mv_slice sp;

		return slice_params(x, &sp);
	}
	case ERT_OP_Pad: {
		struct ert_mv_pad pp;
		int8_t value;

		return pad_params(x, &pp, &value);
	}
	default:
		return false;
	}
}

bool ert_npu_supports(struct ert_npu *npu, const struct ert_exec *x)
{
	const struct ert_node *n = x->node;

	if (!x->n_out || !x->out[0])
		return false;
	switch (n->op) {
	case ERT_OP_QLinearConv:
		return fixed_rule(n) && conv_supported(x, npu->info->max_job_work);
	case ERT_OP_QLinearMatMul:
	case ERT_OP_QGemm:
		return fixed_rule(n) && mm_supported(x);
	case ERT_OP_QLinearAdd:
	case ERT_OP_QLinearMul:
		return fixed_rule(n) && elt_supported(x);
	case ERT_OP_QLinearAveragePool:
	case ERT_OP_QLinearGlobalAveragePool: {
		struct pool_plan p;

		return fixed_rule(n) && pool_plan(x, &p) &&
		       pool_row_work(&p) <= npu->info->max_job_work;
	}
	case ERT_OP_MaxPool: {
		struct pool_plan p;

		return pool_plan(x, &p) && pool_row_work(&p) <= npu->info->max_job_work;
	}
	case ERT_OP_DequantizeLinear:
		return dq_supported(x);
	case ERT_OP_QLinearLookup:
		return lookup_supported(x);
	default:
		return movement_supported(x);
	}
}

ert_status ert_npu_lower(struct ert_npu *npu, struct ert_exec *x, struct ert_err *err)
{
	struct npu_op *op = calloc(1, sizeof(*op));
	struct lower l = { .npu = npu, .x = x, .op = op, .err = err };
	ert_status st;

	if (!op)
		return ERT_STATUS_OUT_OF_MEMORY;
	l.limit = npu->info->max_job_work;
	switch (x->node->op) {
	case ERT_OP_QLinearConv:
		st = lower_conv(&l);
		break;
	case ERT_OP_QLinearMatMul:
	case ERT_OP_QGemm:
		st = lower_mm(&l);
		break;
	case ERT_OP_QLinearAdd:
	case ERT_OP_QLinearMul:
		st = lower_elt(&l);
		break;
	case ERT_OP_QLinearAveragePool:
	case ERT_OP_QLinearGlobalAveragePool:
	case ERT_OP_MaxPool:
		st = lower_pool(&l);
		break;
	case ERT_OP_DequantizeLinear:
		st = lower_dq(&l);
		break;
	case ERT_OP_QLinearLookup:
		st = lower_lookup(&l);
		break;
	case ERT_OP_Transpose:
		st = lower_transpose(&l);
		break;
	case ERT_OP_Concat:
		st = lower_concat(&l);
		break;
	case ERT_OP_Slice:
		st = lower_slice(&l);
		break;
	case ERT_OP_Pad:
		st = lower_pad(&l);
		break;
	default:
		st = is_view(x->node->op) ? lower_view(&l)
					  : lower_fail(&l, ERT_STATUS_INTERNAL, "no lowering");
		break;
	}
	if (st != ERT_OK) {
		ert_npu_op_free(npu, op);
		return st;
	}
	x->state = op;
	return ERT_OK;
}

void ert_npu_op_free(struct ert_npu *npu, struct npu_op *op)
{
	if (!op)
		return;
	for (uint32_t i = 0; i < op->n_refs; i++)
		if (op->refs[i].input >= 0)
			npu_bo_destroy(npu->dev, &op->refs[i].own);
	free(op->cmds);
	free(op);
}

uint32_t ert_npu_cmd_tensors(union npu_cmd *c, struct enpu_cs_tensor **t)
{
	switch (c->hdr.opcode) {
	case ENPU_OP_CONV2D:
		t[0] = &c->conv.in, t[1] = &c->conv.weights, t[2] = &c->conv.bias;
		t[3] = &c->conv.requant, t[4] = &c->conv.out;
		return 5;
	case ENPU_OP_MATMUL:
		t[0] = &c->mm.a, t[1] = &c->mm.w, t[2] = &c->mm.bias;
		t[3] = &c->mm.requant, t[4] = &c->mm.out;
		return 5;
	case ENPU_OP_ELTWISE:
		t[0] = &c->elt.a, t[1] = &c->elt.b, t[2] = &c->elt.out;
		return 3;
	case ENPU_OP_POOL:
		t[0] = &c->pool.in, t[1] = &c->pool.out;
		return 2;
	case ENPU_OP_LUT:
		t[0] = &c->lut.in, t[1] = &c->lut.table, t[2] = &c->lut.out;
		return 3;
	case ENPU_OP_COPY:
		t[0] = &c->copy.src, t[1] = &c->copy.dst;
		return 2;
	default:
		return 0;
	}
}
