/* SPDX-License-Identifier: MIT */
/*
 * QDQ fusion: the QuantizeLinear / DequantizeLinear form that onnxruntime's
 * quantizer, PyTorch's fake-quant export and `edgert quantize` write becomes
 * the int8 ops of docs/int8.md with "ert.requant = 1" (the fixed-point rule).
 * Each pattern is anchored on a per-tensor QuantizeLinear Q writing y:
 *
 *   DQ(x) -> Conv(DQ(w), [b]) -> [Relu|Clip] -> Q   QLinearConv
 *   DQ(a) -> Gemm(DQ(w), [c]) -> [Relu|Clip] -> Q   QGemm
 *   DQ(a) -> MatMul(DQ(w))    -> [Relu|Clip] -> Q   QLinearMatMul
 *   DQ(a), DQ(b) -> Add | Mul -> [Relu|Clip] -> Q   QLinearAdd | QLinearMul
 *   DQ(x) -> AveragePool | GlobalAveragePool -> Q   QLinearAveragePool | ...Global...
 *   DQ(x) -> MaxPool | Reshape | Flatten | Transpose | Squeeze | Unsqueeze
 *            | Concat | Pad -> Q, same scale and zero point: the op on x itself
 *   DQ(x) -> Q, same scale and zero point: x itself
 *   DQ(x) -> Sigmoid | Tanh | HardSwish | ... (elementwise, float) -> Q
 *            QLinearLookup(x, table): the chain evaluated on the 256 codes by
 *            the CPU kernels, so the lookup gives exactly what it did
 *
 * Weights are constant int8/uint8 behind their DQ, per tensor or per output
 * channel (a QuantizeLinear of a float constant, as PyTorch exports them,
 * is folded into such a constant first); a bias is a DQ of a constant int32
 * with scale x_s * w_s[c], or a float constant, quantised here. A fused
 * Relu or Clip (ert.act, or the node itself) becomes ert.clamp; any other
 * activation stops the fusion. Activation scales must be constant scalars.
 *
 * Nothing is fused unless it is exact with respect to the pattern (single
 * reader of every float intermediate, constants where needed, multipliers
 * the fixed-point rule represents); otherwise the nodes stay as they are.
 * The fused node takes the place of the compute node and writes Q's output
 * tensor, so graph outputs keep their names; DQ and Q nodes left without
 * readers are removed by the dead-node pass.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu-impl.h"
#include "ops/linalg-geom.h"
#include "opt/opt-private.h"
#include "ops/quant-fixed.h"

struct qdq {
	struct ert_graph *g;
	uint32_t *uses;
	int32_t *prod;
	struct ert_err *err;
};

/* Per-tensor quantisation of a DQ's input or a Q's output. */
struct qp {
	int32_t s_t, zp_t;      /* scale and zero point tensors; zp_t -1 when absent */
	double s;
	int32_t zp;
	ert_dtype dt;           /* int8 or uint8 */
};

/* A constant weight behind its DQ, per tensor or per output channel. */
struct wq {
	int32_t t, s_t, zp_t;
	struct ert_value s;     /* the scales, for the multipliers */
};

/* The node a rewrite turns the host into. */
struct rewrite {
	enum ert_op op;
	int32_t in[16];
	uint32_t n_in;
	const char *const *keep;  /* host attributes kept; NULL: all of them */
	bool fixed;               /* add ert.requant = 1 */
	int64_t lo, hi;           /* ert.clamp, when lo <= hi */
};

static ert_status refresh(struct qdq *c)
{
	free(c->uses);
	free(c->prod);
	c->uses = ert_opt_count_uses(c->g);
	c->prod = ert_opt_producers(c->g);
	if (c->uses && c->prod)
		return ERT_OK;
	ert_err_set(c->err, "failed to fuse QDQ patterns: out of memory");
	return ERT_STATUS_OUT_OF_MEMORY;
}

static bool is_const(const struct ert_graph *g, int32_t t)
{
	return t >= 0 && (g->tensors[t].flags & ERT_TENSOR_CONST);
}

static bool is_q8(ert_dtype dt)
{
	return dt == ERT_DTYPE_INT8 || dt == ERT_DTYPE_UINT8;
}

/* Read only by one live node input, and not a graph output. */
static bool single_use(const struct qdq *c, int32_t t)
{
	return t >= 0 && c->uses[t] == 1 && !ert_opt_is_graph_output(c->g, t);
}

/* The live node of op @op producing @t, or NULL. */
static struct ert_node *producer(const struct qdq *c, int32_t t, enum ert_op op)
{
	if (t < 0 || c->prod[t] < 0)
		return NULL;
	struct ert_node *n = &c->g->nodes[c->prod[t]];

	return n->op == op ? n : NULL;
}

/* A constant's value (data pointing into the graph). */
static bool const_value(const struct ert_graph *g, int32_t t, struct ert_value *v)
{
	if (!is_const(g, t))
		return false;
	ert_opt_tensor_value(g, t, v);
	return v->numel >= 0 && v->data && v->nbytes >= ert_dtype_bytes(v->dtype, v->numel);
}

/* Constant positive finite float32/float16 scales, @count of them (0: any count). */
static bool const_scales(const struct ert_graph *g, int32_t t, int64_t count, struct ert_value *v)
{
	if (!const_value(g, t, v) || v->numel < 1 || (count && v->numel != count) ||
	    (v->dtype != ERT_DTYPE_FLOAT32 && v->dtype != ERT_DTYPE_FLOAT16))
		return false;
	for (int64_t i = 0; i < v->numel; i++) {
		double s = ert_value_get_float(v, i);

		if (!(s > 0.0) || !isfinite(s))
			return false;
	}
	return true;
}

/* The int8/uint8 type of the tensor a DQ reads: its dtype, or its producer Q's. */
static ert_dtype q8_type_of(const struct qdq *c, int32_t t)
{
	const struct ert_node *q = producer(c, t, ERT_OP_QuantizeLinear);

	if (is_q8(c->g->tensors[t].dtype))
		return c->g->tensors[t].dtype;
	if (q && !(q->n_inputs > 2 && q->inputs[2] >= 0))
		return (ert_dtype)ert_attr_int(q, "output_dtype", ERT_DTYPE_UINT8);
	if (q)
		return c->g->tensors[q->inputs[2]].dtype;
	return ERT_DTYPE_UNDEFINED;
}

/* Per-tensor parameters of a live DQ or Q node @n. */
static bool node_qp(const struct qdq *c, const struct ert_node *n, struct qp *p)
{
	const struct ert_graph *g = c->g;
	struct ert_value v;

	if (n->dead || n->n_inputs < 2 || n->inputs[0] < 0 || n->n_outputs != 1 ||
	    n->outputs[0] < 0 || ert_attr_int(n, "block_size", 0) != 0)
		return false;
	p->s_t = n->inputs[1];
	p->zp_t = n->n_inputs > 2 ? n->inputs[2] : -1;
	if (!const_scales(g, p->s_t, 1, &v))
		return false;
	p->s = ert_value_get_float(&v, 0);
	p->zp = 0;
	if (p->zp_t >= 0) {
		if (!const_value(g, p->zp_t, &v) || v.numel != 1 || !is_q8(v.dtype))
			return false;
		p->zp = (int32_t)ert_value_get_int(&v, 0);
		p->dt = v.dtype;
	} else if (n->op == ERT_OP_QuantizeLinear) {
		p->dt = (ert_dtype)ert_attr_int(n, "output_dtype", ERT_DTYPE_UINT8);
	} else {
		p->dt = q8_type_of(c, n->inputs[0]);
	}
	return is_q8(p->dt);
}

static bool same_qp(const struct qp *a, const struct qp *b)
{
	return a->dt == b->dt && a->s == b->s && a->zp == b->zp;
}

/* @t is the output of a live per-tensor DQ: its parameters, and the quantised tensor. */
static bool dq_input(const struct qdq *c, int32_t t, struct qp *p, int32_t *x)
{
	const struct ert_node *dq = producer(c, t, ERT_OP_DequantizeLinear);

	if (!dq || !node_qp(c, dq, p))
		return false;
	*x = dq->inputs[0];
	return true;
}

/*
 * @t is a DQ of a constant int8/uint8 weight of rank @rank (-1: at least 3)
 * whose scales are per tensor or per channel along @axis (the output channels).
 */
static bool dq_weight(const struct qdq *c, int32_t t, int32_t rank, int32_t axis, struct wq *w)
{
	const struct ert_graph *g = c->g;
	const struct ert_node *dq = producer(c, t, ERT_OP_DequantizeLinear);
	struct ert_value wv, zv;

	if (!dq || dq->n_inputs < 2 || ert_attr_int(dq, "block_size", 0) != 0)
		return false;
	w->t = dq->inputs[0];
	w->s_t = dq->inputs[1];
	w->zp_t = dq->n_inputs > 2 ? dq->inputs[2] : -1;
	if (!const_value(g, w->t, &wv) || !is_q8(wv.dtype) ||
	    (rank < 0 ? wv.rank < 3 : wv.rank != rank) || !const_scales(g, w->s_t, 0, &w->s))
		return false;
	if (w->s.numel > 1) {
		int64_t ax = ert_attr_int(dq, "axis", 1);

		ax = ax < 0 ? ax + rank : ax;
		if (ax != axis || w->s.rank != 1 || w->s.dims[0] != wv.dims[axis])
			return false;
	}
	if (w->zp_t >= 0 && (!const_value(g, w->zp_t, &zv) || zv.dtype != wv.dtype ||
			     zv.numel != w->s.numel || zv.rank > 1))
		return false;
	return true;
}

/* Every multiplier x_s * w_s[c] / y_s of @count channels fits the fixed-point rule. */
static bool mults_ok(double xs, const struct ert_value *ws, double ys, int64_t count)
{
	for (int64_t ch = 0; ch < count; ch++) {
		int32_t m, s;

		if (!ert_quant_product_multiplier(xs, ert_value_get_float(ws, ws->numel > 1 ? ch : 0),
						  ys, &m, &s))
			return false;
	}
	return true;
}

/*
 * The int32 bias of @count channels for accumulator scale xs * ws[c]: a DQ
 * of a constant int32 of that scale (zero point 0), or a float32 constant
 * quantised here; a vector, or a (1, count) row for Gemm (@row). Returns the
 * tensor, -1 for no bias, -2 when it does not fit, -3 when out of memory.
 */
static int32_t bias_tensor(struct qdq *c, int32_t bt, double xs, const struct ert_value *ws,
			   int64_t count, bool row, const char *name)
{
	struct ert_graph *g = c->g;
	const struct ert_node *dq;
	struct ert_value bv, sv, zv;

	if (bt < 0)
		return -1;
	dq = producer(c, bt, ERT_OP_DequantizeLinear);
	if (dq) {
		int32_t t = dq->inputs[0];

		if (dq->n_inputs < 2 || !const_value(g, t, &bv) || bv.dtype != ERT_DTYPE_INT32 ||
		    bv.numel != count || (bv.rank != 1 && !(row && bv.rank == 2)) ||
		    !const_scales(g, dq->inputs[1], 0, &sv) ||
		    (sv.numel != 1 && sv.numel != count))
			return -2;
		if (dq->n_inputs > 2 && dq->inputs[2] >= 0) {
			if (!const_value(g, dq->inputs[2], &zv))
				return -2;
			for (int64_t i = 0; i < zv.numel; i++)
				if (ert_value_get_int(&zv, i) != 0)
					return -2;
		}
		/* the quantiser's x_s * w_s[c], to float32 rounding */
		for (int64_t ch = 0; ch < count; ch++) {
			double want = xs * ert_value_get_float(ws, ws->numel > 1 ? ch : 0);
			double got = ert_value_get_float(&sv, sv.numel > 1 ? ch : 0);

			if (fabs(got - want) > 1e-6 * want)
				return -2;
		}
		return t;
	}
	if (!const_value(g, bt, &bv) || bv.dtype != ERT_DTYPE_FLOAT32 || bv.numel != count)
		return -2;
	int32_t *q = malloc((size_t)(count ? count : 1) * sizeof(*q));
	char hint[160];

	if (!q)
		return -3;
	for (int64_t ch = 0; ch < count; ch++) {
		double r = rint(ert_value_get_float(&bv, ch) /
				(xs * ert_value_get_float(ws, ws->numel > 1 ? ch : 0)));

		if (!(r >= INT32_MIN && r <= INT32_MAX)) {
			free(q);
			return -2;
		}
		q[ch] = (int32_t)r;
	}
	snprintf(hint, sizeof(hint), "%.120s.bias_q", name);
	int32_t t = ert_opt_add_const(g, hint, ERT_DTYPE_INT32, 1, &count, q,
				      (size_t)count * sizeof(*q));

	return t < 0 ? -3 : t;
}

/* A scalar zero point tensor of @p's type: its own, or a new constant when it has none. */
static int32_t zp_tensor(struct qdq *c, const struct qp *p, const char *name)
{
	char hint[160];
	uint8_t *v;

	if (p->zp_t >= 0)
		return p->zp_t;
	v = calloc(1, 1);
	if (!v)
		return -3;
	snprintf(hint, sizeof(hint), "%.120s.zero_point", name);
	int32_t t = ert_opt_add_const(c->g, hint, p->dt, 0, NULL, v, 1);

	return t < 0 ? -3 : t;
}

/*
 * The clamp of a fused activation in y's integer domain (docs/int8.md):
 * Relu: [y_zp, qmax]; Clip(a, b): y_zp + round(a / y_s) .. y_zp + round(b / y_s),
 * inside [qmin, qmax]. False for any other activation.
 */
static bool act_clamp(const struct ert_act_desc *a, const struct qp *y, int64_t *lo, int64_t *hi)
{
	double qmin = y->dt == ERT_DTYPE_UINT8 ? 0 : -128, qmax = y->dt == ERT_DTYPE_UINT8 ? 255 : 127;
	double l = qmin, h = qmax;

	switch (a->type) {
	case ERT_ACT_NONE:
		break;
	case ERT_ACT_RELU:
		l = y->zp;
		break;
	case ERT_ACT_CLIP:
		if (!(a->p0 <= a->p1))
			return false;
		l = y->zp + rint((double)a->p0 / y->s);
		h = y->zp + rint((double)a->p1 / y->s);
		l = l < qmin ? qmin : l > qmax ? qmax : l;
		h = h < qmin ? qmin : h > qmax ? qmax : h;
		break;
	default:
		return false;
	}
	*lo = (int64_t)l;
	*hi = (int64_t)h;
	if (*lo == qmin && *hi == qmax) {
		/* nothing to clamp beyond the type's range */
		*lo = 1;
		*hi = 0;
	}
	return true;
}

/* An explicit Relu, or Clip with constant float bounds (absent: unbounded). */
static bool act_node(const struct ert_graph *g, const struct ert_node *n, struct ert_act_desc *a)
{
	a->p0 = -FLT_MAX;
	a->p1 = FLT_MAX;
	if (n->op == ERT_OP_Relu) {
		a->type = ERT_ACT_RELU;
		return true;
	}
	if (n->op != ERT_OP_Clip)
		return false;
	a->type = ERT_ACT_CLIP;
	if (n->opset && n->opset < 11) {
		a->p0 = ert_attr_float(n, "min", -FLT_MAX);
		a->p1 = ert_attr_float(n, "max", FLT_MAX);
		return true;
	}
	for (uint32_t k = 1; k < 3 && k < n->n_inputs; k++) {
		const struct ert_tensor *t;

		if (n->inputs[k] < 0)
			continue;
		t = &g->tensors[n->inputs[k]];
		if (!is_const(g, n->inputs[k]) || t->dtype != ERT_DTYPE_FLOAT32 || t->nbytes != 4)
			return false;
		*(k == 1 ? &a->p0 : &a->p1) = *(const float *)t->data;
	}
	return true;
}

static bool keep_attr(const char *const *keep, const char *name)
{
	if (!keep)
		return true;
	for (; *keep; keep++)
		if (strcmp(*keep, name) == 0)
			return true;
	return false;
}

/*
 * Turn node @hi into @r writing Q node @qi's output; @qi and @ai (the
 * activation node, or -1) die. Everything is allocated before the graph is
 * touched.
 */
static ert_status apply(struct qdq *c, uint32_t hi, uint32_t qi, int32_t ai, const struct rewrite *r)
{
	struct ert_graph *g = c->g;
	struct ert_node *n = &g->nodes[hi];
	uint32_t na = 0;
	struct ert_attr *attrs = ert_graph_alloc(g, (n->n_attrs + 2) * sizeof(*attrs));
	int32_t *in = malloc(r->n_in * sizeof(*in));
	int64_t *clamp = ert_graph_alloc(g, 2 * sizeof(*clamp));
	char *rq = ert_graph_strdup(g, "ert.requant"), *cl = ert_graph_strdup(g, "ert.clamp");

	if (!attrs || !in || !clamp || !rq || !cl) {
		free(in);
		ert_err_set(c->err, "failed to fuse QDQ pattern at '%s': out of memory", n->name);
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	for (uint32_t i = 0; i < n->n_attrs; i++)
		if (keep_attr(r->keep, n->attrs[i].name))
			attrs[na++] = n->attrs[i];
	if (r->fixed) {
		memset(&attrs[na], 0, sizeof(attrs[na]));
		attrs[na].name = rq;
		attrs[na].type = ERT_ATTR_INT;
		attrs[na].count = 1;
		attrs[na++].i = 1;
	}
	if (r->lo <= r->hi) {
		clamp[0] = r->lo;
		clamp[1] = r->hi;
		memset(&attrs[na], 0, sizeof(attrs[na]));
		attrs[na].name = cl;
		attrs[na].type = ERT_ATTR_INTS;
		attrs[na].count = 2;
		attrs[na++].ints = clamp;
	}
	memcpy(in, r->in, r->n_in * sizeof(*in));
	free(n->inputs);
	n->inputs = in;
	n->n_inputs = r->n_in;
	n->attrs = attrs;
	n->n_attrs = na;
	n->op = r->op;
	n->outputs[0] = g->nodes[qi].outputs[0];
	n->n_outputs = 1;
	g->nodes[qi].dead = true;
	if (ai >= 0)
		g->nodes[ai].dead = true;
	return ERT_OK;
}

/* ---- the patterns: each returns OK (fused or not, *done says) or an allocation failure ---- */

struct match {
	uint32_t host, q;
	int32_t act;            /* explicit Relu/Clip node, or -1 */
	struct qp y;
	int64_t lo, hi;         /* clamp from the activation */
};

static const char *const conv_attrs[] = { "auto_pad", "dilations", "group", "kernel_shape",
					  "pads", "strides", NULL };
static const char *const avgpool_attrs[] = { "auto_pad", "ceil_mode", "kernel_shape", "pads",
					     "strides", NULL };
static const char *const gemm_attrs[] = { "transA", "transB", NULL };
static const char *const no_attrs[] = { NULL };

static ert_status fuse_conv_gemm(struct qdq *c, const struct match *mt, bool *done)
{
	struct ert_node *n = &c->g->nodes[mt->host];
	bool gemm = n->op == ERT_OP_Gemm, mm = n->op == ERT_OP_MatMul;
	bool tb = gemm && ert_attr_int(n, "transB", 0) != 0;
	int32_t rank = gemm || mm ? 2 : -1;
	int32_t axis = gemm ? (tb ? 0 : 1) : mm ? 1 : 0;
	struct rewrite r = { .fixed = true, .lo = mt->lo, .hi = mt->hi };
	struct qp xq;
	struct wq w;
	int32_t x, bias, yzp;

	/* a MatMul with folded Transposes (fold-transpose.c) has no int8 form */
	if (mm && ert_matmul_has_perm(n))
		return ERT_OK;
	if (n->n_inputs < 2 || !dq_input(c, n->inputs[0], &xq, &x) ||
	    !dq_weight(c, n->inputs[1], rank, axis, &w))
		return ERT_OK;
	int64_t count = c->g->tensors[w.t].dims[axis];

	if (gemm && (ert_attr_float(n, "alpha", 1.0f) != 1.0f ||
		     (n->n_inputs > 2 && n->inputs[2] >= 0 && ert_attr_float(n, "beta", 1.0f) != 1.0f)))
		return ERT_OK;
	/* the contrib QGemm takes float32 scales only */
	if (gemm && (c->g->tensors[xq.s_t].dtype != ERT_DTYPE_FLOAT32 ||
		     w.s.dtype != ERT_DTYPE_FLOAT32 ||
		     c->g->tensors[mt->y.s_t].dtype != ERT_DTYPE_FLOAT32))
		return ERT_OK;
	if (mm && n->n_inputs > 2)
		return ERT_OK;
	if (!mults_ok(xq.s, &w.s, mt->y.s, count))
		return ERT_OK;
	bias = bias_tensor(c, n->n_inputs > 2 ? n->inputs[2] : -1, xq.s, &w.s, count, gemm,
			   n->name);
	if (bias == -3)
		goto oom;
	if (bias == -2)
		return ERT_OK;
	yzp = zp_tensor(c, &mt->y, n->name);
	if (yzp < 0)
		goto oom;
	n = &c->g->nodes[mt->host];
	int32_t common[8] = { x, xq.s_t, xq.zp_t, w.t, w.s_t, w.zp_t, mt->y.s_t, yzp };

	memcpy(r.in, common, sizeof(common));
	if (gemm) {
		r.op = ERT_OP_QGemm;
		r.keep = gemm_attrs;
		r.in[6] = bias;
		r.in[7] = mt->y.s_t;
		r.in[8] = yzp;
		r.n_in = 9;
	} else if (mm) {
		r.op = ERT_OP_QLinearMatMul;
		r.keep = no_attrs;
		r.n_in = 8;
	} else {
		r.op = ERT_OP_QLinearConv;
		r.keep = conv_attrs;
		r.in[8] = bias;
		r.n_in = bias >= 0 ? 9 : 8;
	}
	*done = true;
	return apply(c, mt->host, mt->q, mt->act, &r);
oom:
	ert_err_set(c->err, "failed to fuse QDQ pattern at '%s': out of memory",
		    c->g->nodes[mt->host].name);
	return ERT_STATUS_OUT_OF_MEMORY;
}

static bool scale_f32(const struct qdq *c, const struct qp *p)
{
	return c->g->tensors[p->s_t].dtype == ERT_DTYPE_FLOAT32;
}

static ert_status fuse_binary(struct qdq *c, const struct match *mt, bool *done)
{
	struct ert_node *n = &c->g->nodes[mt->host];
	struct rewrite r = { .fixed = true, .keep = no_attrs, .lo = mt->lo, .hi = mt->hi, .n_in = 8 };
	struct qp a, b;
	struct ert_quant_add ap;
	int32_t xa, xb, m, s;

	if (n->n_inputs != 2 || !dq_input(c, n->inputs[0], &a, &xa) ||
	    !dq_input(c, n->inputs[1], &b, &xb) || a.dt != mt->y.dt || b.dt != mt->y.dt ||
	    !scale_f32(c, &a) || !scale_f32(c, &b) || !scale_f32(c, &mt->y))
		return ERT_OK;
	if (n->op == ERT_OP_Add ? !ert_quant_add_params(a.s, b.s, mt->y.s, &ap)
				: !ert_quant_product_multiplier(a.s, b.s, mt->y.s, &m, &s))
		return ERT_OK;
	int32_t in[8] = { xa, a.s_t, a.zp_t, xb, b.s_t, b.zp_t, mt->y.s_t, mt->y.zp_t };

	memcpy(r.in, in, sizeof(in));
	r.op = n->op == ERT_OP_Add ? ERT_OP_QLinearAdd : ERT_OP_QLinearMul;
	*done = true;
	return apply(c, mt->host, mt->q, mt->act, &r);
}

/* A pool whose windows never reach past the input: no pads, no auto_pad, no ceil_mode. */
static bool unpadded(const struct ert_node *n)
{
	const char *ap = ert_attr_string(n, "auto_pad", "NOTSET");
	const int64_t *pads;
	uint32_t np;

	if ((strcmp(ap, "NOTSET") != 0 && strcmp(ap, "VALID") != 0) ||
	    ert_attr_int(n, "ceil_mode", 0) != 0)
		return false;
	pads = ert_attr_ints(n, "pads", &np);
	for (uint32_t i = 0; pads && i < np; i++)
		if (pads[i] != 0)
			return false;
	return true;
}

static ert_status fuse_avgpool(struct qdq *c, const struct match *mt, bool *done)
{
	struct ert_node *n = &c->g->nodes[mt->host];
	bool global = n->op == ERT_OP_GlobalAveragePool;
	struct rewrite r = { .fixed = true, .keep = global ? no_attrs : avgpool_attrs,
			     .lo = mt->lo, .hi = mt->hi, .n_in = 5 };
	const int64_t *dil;
	struct qp x;
	int32_t xt;
	uint32_t nd;

	if (n->n_inputs != 1 || !dq_input(c, n->inputs[0], &x, &xt) || !same_qp(&x, &mt->y) ||
	    !scale_f32(c, &x) || !scale_f32(c, &mt->y))
		return ERT_OK;
	/*
	 * The fixed rule averages raw values: no padding in the count (nor
	 * count_include_pad, unless nothing is padded), no dilations.
	 */
	if (!global && ert_attr_int(n, "count_include_pad", 0) != 0 && !unpadded(n))
		return ERT_OK;
	dil = ert_attr_ints(n, "dilations", &nd);
	for (uint32_t i = 0; dil && i < nd; i++)
		if (dil[i] != 1)
			return ERT_OK;
	int32_t in[5] = { xt, x.s_t, x.zp_t, mt->y.s_t, mt->y.zp_t };

	memcpy(r.in, in, sizeof(in));
	r.op = global ? ERT_OP_QLinearGlobalAveragePool : ERT_OP_QLinearAveragePool;
	*done = true;
	return apply(c, mt->host, mt->q, mt->act, &r);
}

/*
 * Ops that only move or select values: on x itself when every DQ input has
 * y's parameters (then Q(op(DQ(x))) = op(x)). Pad's constant becomes Q(value).
 */
static ert_status fuse_passthrough(struct qdq *c, const struct match *mt, bool *done)
{
	struct ert_node *n = &c->g->nodes[mt->host];
	struct rewrite r = { .op = n->op, .lo = 1, .hi = 0, .n_in = n->n_inputs };
	uint32_t data = n->op == ERT_OP_Concat ? n->n_inputs : 1;
	struct qp x;

	if (mt->act >= 0 || mt->lo <= mt->hi || n->n_inputs < data || n->n_inputs > 16)
		return ERT_OK;
	/* MaxPool's Indices must be unread */
	for (uint32_t k = 1; k < n->n_outputs; k++)
		if (n->outputs[k] >= 0 && c->uses[n->outputs[k]])
			return ERT_OK;
	memcpy(r.in, n->inputs, n->n_inputs * sizeof(int32_t));
	for (uint32_t k = 0; k < data; k++)
		if (!dq_input(c, n->inputs[k], &x, &r.in[k]) || !same_qp(&x, &mt->y))
			return ERT_OK;
	if (n->op == ERT_OP_Pad) {
		bool constant = strcmp(ert_attr_string(n, "mode", "constant"), "constant") == 0;
		int32_t vt = n->n_inputs > 2 ? n->inputs[2] : -1;
		double v = 0.0;

		if (n->opset && n->opset < 11)
			return ERT_OK; /* pads and value as attributes */
		if (constant && vt >= 0) {
			const struct ert_tensor *t = &c->g->tensors[vt];

			if (!is_const(c->g, vt) || t->dtype != ERT_DTYPE_FLOAT32 || t->nbytes != 4)
				return ERT_OK;
			v = *(const float *)t->data;
		}
		if (n->n_inputs > 2)
			r.in[2] = -1;
		if (constant) {
			double qmin = mt->y.dt == ERT_DTYPE_UINT8 ? 0 : -128;
			double qmax = mt->y.dt == ERT_DTYPE_UINT8 ? 255 : 127;
			double q = rint(v / mt->y.s) + mt->y.zp;
			uint8_t *b = malloc(1);
			char hint[160];

			if (!b)
				goto oom;
			q = q < qmin ? qmin : q > qmax ? qmax : q;
			if (mt->y.dt == ERT_DTYPE_UINT8)
				*b = (uint8_t)q;
			else
				*(int8_t *)b = (int8_t)q;
			snprintf(hint, sizeof(hint), "%.120s.value_q", n->name);
			r.in[2] = ert_opt_add_const(c->g, hint, mt->y.dt, 0, NULL, b, 1);
			if (r.in[2] < 0)
				goto oom;
			if (r.n_in < 3)
				r.n_in = 3;
		}
	}
	*done = true;
	return apply(c, mt->host, mt->q, -1, &r);
oom:
	ert_err_set(c->err, "failed to fuse QDQ pattern at '%s': out of memory",
		    c->g->nodes[mt->host].name);
	return ERT_STATUS_OUT_OF_MEMORY;
}

/* Q(DQ(x)) with the same parameters is x. */
static ert_status drop_pair(struct qdq *c, uint32_t qi, const struct ert_node *dq, bool *done)
{
	struct ert_graph *g = c->g;
	struct ert_node *q = &g->nodes[qi];
	int32_t x = dq->inputs[0], y = q->outputs[0];

	if (!ert_opt_is_graph_output(g, y)) {
		q->dead = true;
		ert_opt_replace_uses(g, y, x);
		*done = true;
		return ERT_OK;
	}
	/* y must keep its name: x's producer writes y, and x's readers read y */
	const struct ert_tensor *xt = &g->tensors[x];

	if (c->prod[x] < 0 || (xt->flags & (ERT_TENSOR_CONST | ERT_TENSOR_INPUT | ERT_TENSOR_OUTPUT)))
		return ERT_OK;
	struct ert_node *pn = &g->nodes[c->prod[x]];

	for (uint32_t k = 0; k < pn->n_outputs; k++)
		if (pn->outputs[k] == x)
			pn->outputs[k] = y;
	q->dead = true;
	ert_opt_replace_uses(g, x, y);
	*done = true;
	return ERT_OK;
}

bool ert_opt_table_op(enum ert_op op)
{
	switch (op) {
	case ERT_OP_Sigmoid: case ERT_OP_Tanh: case ERT_OP_HardSwish: case ERT_OP_HardSigmoid:
	case ERT_OP_LeakyRelu: case ERT_OP_Elu: case ERT_OP_Selu: case ERT_OP_Celu:
	case ERT_OP_Gelu: case ERT_OP_Softplus: case ERT_OP_Softsign: case ERT_OP_Mish:
	case ERT_OP_Exp: case ERT_OP_Erf: case ERT_OP_Relu: case ERT_OP_Clip: case ERT_OP_Abs:
	case ERT_OP_Neg: case ERT_OP_ThresholdedRelu: case ERT_OP_Shrink:
		return true;
	default:
		return false;
	}
}

/* Evaluate node @n on the CPU with input 0 replaced by @x and the rest its constants. */
static bool eval_with(struct qdq *c, const struct ert_node *n, const struct ert_value *x,
		      struct ert_value *out)
{
	const struct ert_value *in[8] = { x };
	struct ert_value cv[8];
	struct ert_err e;

	if (n->n_inputs > 8 || n->n_outputs != 1)
		return false;
	for (uint32_t k = 1; k < n->n_inputs; k++) {
		in[k] = NULL;
		if (n->inputs[k] < 0)
			continue;
		if (!const_value(c->g, n->inputs[k], &cv[k]))
			return false;
		in[k] = &cv[k];
	}
	memset(out, 0, sizeof(*out));
	return ert_cpu_eval_node(c->g, n, in, n->n_inputs, out, 1, &e) == ERT_OK;
}

/*
 * DQ(x) -> elementwise op -> Q: QLinearLookup(x, table), the table being
 * Q(op(DQ(code))) for the 256 codes, computed by the same CPU kernels.
 */
static ert_status fuse_table(struct qdq *c, uint32_t hi, uint32_t qi, const struct qp *y,
			     bool *done)
{
	struct ert_graph *g = c->g;
	const struct ert_node *h = &g->nodes[hi];
	struct ert_node *dq = producer(c, h->inputs[0], ERT_OP_DequantizeLinear);
	struct ert_value codes = { .rank = 1, .dims = { 256 } }, f = { 0 }, u = { 0 }, q = { 0 };
	struct rewrite r = { .op = ERT_OP_QLinearLookup, .n_in = 2, .keep = no_attrs, .lo = 1,
			     .hi = 0 };
	uint8_t bytes[256];
	struct qp x;
	int32_t xt, tt;
	char hint[160];
	bool ok;

	if (!dq || !dq_input(c, h->inputs[0], &x, &xt) || x.dt != y->dt ||
	    g->tensors[h->outputs[0]].dtype != ERT_DTYPE_FLOAT32)
		return ERT_OK;
	for (int i = 0; i < 256; i++)
		bytes[i] = (uint8_t)i;
	codes.dtype = x.dt;
	codes.data = bytes;
	ert_value_finish(&codes);
	ok = eval_with(c, dq, &codes, &f) && f.numel == 256 && eval_with(c, h, &f, &u) &&
	     u.numel == 256 && eval_with(c, &g->nodes[qi], &u, &q) && q.numel == 256 &&
	     q.dtype == y->dt;
	free(f.data);
	free(u.data);
	if (!ok) {
		free(q.data);
		return ERT_OK;
	}
	snprintf(hint, sizeof(hint), "%.120s.table", h->name);
	tt = ert_opt_add_const(g, hint, y->dt, 1, (const int64_t[]){ 256 }, q.data, 256);
	if (tt < 0) {	/* ert_opt_add_const freed the table */
		ert_err_set(c->err, "failed to fuse QDQ pattern at '%s': out of memory", h->name);
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	r.in[0] = xt;
	r.in[1] = tt;
	*done = true;
	return apply(c, hi, qi, -1, &r);
}

static ert_status try_q(struct qdq *c, uint32_t qi, bool *done)
{
	struct ert_graph *g = c->g;
	struct match mt = { .q = qi, .act = -1, .lo = 1, .hi = 0 };
	struct ert_node *q = &g->nodes[qi], *h;
	struct ert_act_desc act = { ERT_ACT_NONE, 0.0f, 0.0f };
	int32_t t;

	if (!node_qp(c, q, &mt.y))
		return ERT_OK;
	t = q->inputs[0];
	if (t < 0 || c->prod[t] < 0)
		return ERT_OK;
	h = &g->nodes[c->prod[t]];
	if (h->op == ERT_OP_DequantizeLinear) {
		struct qp x;
		int32_t xt;

		if (dq_input(c, t, &x, &xt) && same_qp(&x, &mt.y))
			return drop_pair(c, qi, h, done);
		return ERT_OK;
	}
	if (!single_use(c, t) || h->n_outputs < 1 || h->outputs[0] != t)
		return ERT_OK;
	if (ert_opt_table_op(h->op) && h->n_inputs >= 1 &&
	    producer(c, h->inputs[0], ERT_OP_DequantizeLinear))
		return fuse_table(c, (uint32_t)(h - g->nodes), qi, &mt.y, done);
	if (act_node(g, h, &act)) {
		int32_t ht = h->n_inputs > 0 ? h->inputs[0] : -1;

		if (!single_use(c, ht) || c->prod[ht] < 0)
			return ERT_OK;
		mt.act = c->prod[t];
		h = &g->nodes[c->prod[ht]];
		if (h->outputs[0] != ht || ert_node_act(h).type != ERT_ACT_NONE)
			return ERT_OK;
	} else {
		act = ert_node_act(h);
	}
	mt.host = (uint32_t)(h - g->nodes);
	if (!act_clamp(&act, &mt.y, &mt.lo, &mt.hi))
		return ERT_OK;
	switch (h->op) {
	case ERT_OP_Conv:
	case ERT_OP_Gemm:
	case ERT_OP_MatMul:
		return fuse_conv_gemm(c, &mt, done);
	case ERT_OP_Add:
	case ERT_OP_Mul:
		return fuse_binary(c, &mt, done);
	case ERT_OP_AveragePool:
	case ERT_OP_GlobalAveragePool:
		return fuse_avgpool(c, &mt, done);
	case ERT_OP_MaxPool:
	case ERT_OP_Reshape:
	case ERT_OP_Flatten:
	case ERT_OP_Transpose:
	case ERT_OP_Squeeze:
	case ERT_OP_Unsqueeze:
	case ERT_OP_Concat:
	case ERT_OP_Pad:
		return fuse_passthrough(c, &mt, done);
	default:
		return ERT_OK;
	}
}

/*
 * A QuantizeLinear of constants read only by DequantizeLinear nodes (a
 * weight as PyTorch exports it) becomes the int8 constant it computes.
 */
static ert_status fold_weight_q(struct qdq *c, uint32_t qi, bool *done)
{
	struct ert_graph *g = c->g;
	struct ert_node *q = &g->nodes[qi];
	const struct ert_value *in[3] = { NULL };
	struct ert_value vals[3], out;
	struct ert_err local;
	int32_t y = q->outputs[0];

	if (q->n_inputs < 2 || q->n_inputs > 3 || q->n_outputs != 1 || y < 0 ||
	    ert_opt_is_graph_output(g, y) || !c->uses[y])
		return ERT_OK;
	for (uint32_t k = 0; k < q->n_inputs; k++) {
		if (q->inputs[k] < 0)
			continue;
		if (!const_value(g, q->inputs[k], &vals[k]))
			return ERT_OK;
		in[k] = &vals[k];
	}
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct ert_node *n = &g->nodes[i];

		if (n->dead || n->op == ERT_OP_DequantizeLinear)
			continue;
		for (uint32_t k = 0; k < n->n_inputs; k++)
			if (n->inputs[k] == y)
				return ERT_OK;
	}
	memset(&out, 0, sizeof(out));
	/* a model the kernel refuses simply keeps its Q node */
	if (ert_cpu_eval_node(g, q, in, q->n_inputs, &out, 1, &local) != ERT_OK)
		return ERT_OK;
	ert_tensor_make_const(g, y, &out);
	q->dead = true;
	*done = true;
	return ERT_OK;
}

ert_status ert_opt_fuse_qdq(struct ert_graph *g, bool *changed, struct ert_err *err)
{
	struct qdq c = { .g = g, .err = err };
	ert_status st = refresh(&c);

	for (uint32_t i = 0; i < g->n_nodes && st == ERT_OK; i++) {
		bool done = false;

		if (g->nodes[i].dead || g->nodes[i].op != ERT_OP_QuantizeLinear)
			continue;
		st = fold_weight_q(&c, i, &done);
		if (st == ERT_OK && !done && !g->nodes[i].dead)
			st = try_q(&c, i, &done);
		if (st == ERT_OK && done) {
			*changed = true;
			st = refresh(&c);
		}
	}
	free(c.uses);
	free(c.prod);
	return st;
}
