/* SPDX-License-Identifier: MIT */
/*
 * ert-test-qgraph.h — build int8 graphs with the fixed-point rule
 * (ert.requant = 1, docs/int8.md) from seeded random weights, scales, zero
 * points and biases: QLinearConv, QLinearMatMul, QGemm, QLinearAdd/Mul, the
 * pools, movement ops, QuantizeLinear and DequantizeLinear. Each builder
 * takes and returns activations as struct qt (tensor, quantisation, shape)
 * and picks output scales that spread results over the int8 range. Load the
 * graph with model_from_graph() (ert-test-model.h). Everything is static
 * inline, so each program compiles only what it calls.
 */
#ifndef ERT_TEST_QGRAPH_H
#define ERT_TEST_QGRAPH_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ert-graph.h"

struct qb {
	struct ert_graph *g;
	uint64_t rng;
};

/* An int8 activation: its tensor, quantisation and shape. */
struct qt {
	int32_t t;
	float scale;
	int8_t zp;
	int32_t rank;
	int64_t dims[4];
};

static inline uint64_t rnd(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [lo, hi]. */
static inline int rnd_int(struct qb *b, int lo, int hi)
{
	return lo + (int)(rnd(&b->rng) % (uint64_t)(hi - lo + 1));
}

static inline float rnd_float(struct qb *b, float lo, float hi)
{
	return lo + (hi - lo) * (float)(rnd(&b->rng) >> 40) / (float)(1 << 24);
}

static inline struct qb qb_begin(uint64_t seed)
{
	struct qb b = { ert_graph_create(), seed };

	b.g->opset = 13;
	return b;
}

static inline int32_t qb_value(struct qb *b, const char *hint)
{
	return ert_graph_add_tensor_unique(b->g, hint, ERT_DTYPE_UNDEFINED, -1, NULL);
}

static inline int32_t qb_const(struct qb *b, const char *hint, ert_dtype dt, int32_t rank,
			       const int64_t *dims, const void *data)
{
	size_t n = ert_dtype_bytes(dt, ert_shape_numel(rank, dims));
	void *copy = malloc(n ? n : 1);
	int32_t t = ert_graph_add_tensor_unique(b->g, hint, dt, rank, dims);

	memcpy(copy, data, n);
	ert_graph_set_const(b->g, t, copy, n, true);
	return t;
}

static inline int32_t qb_f32(struct qb *b, float v)
{
	return qb_const(b, "scale", ERT_DTYPE_FLOAT32, 0, NULL, &v);
}

static inline int32_t qb_i8(struct qb *b, int8_t v)
{
	return qb_const(b, "zp", ERT_DTYPE_INT8, 0, NULL, &v);
}

static inline int32_t qb_ints(struct qb *b, int64_t n, const int64_t *v)
{
	return qb_const(b, "ints", ERT_DTYPE_INT64, 1, &n, v);
}

static inline int32_t qb_rand_i8(struct qb *b, const char *hint, int32_t rank, const int64_t *dims)
{
	int64_t n = ert_shape_numel(rank, dims);
	int8_t *v = malloc((size_t)n);
	int32_t t;

	for (int64_t i = 0; i < n; i++)
		v[i] = (int8_t)rnd_int(b, -127, 127);
	t = qb_const(b, hint, ERT_DTYPE_INT8, rank, dims, v);
	free(v);
	return t;
}

static inline struct ert_node *qb_node(struct qb *b, enum ert_op op, const char *name,
				       uint32_t n_in, const int32_t *in, int32_t out)
{
	int32_t i = ert_graph_add_node(b->g, op, name, n_in, in, 1, &out);

	/* (the node array moves as it grows: index it after the call) */
	return &b->g->nodes[i];
}

static inline void set_ints(struct qb *b, struct ert_node *n, const char *name, const int64_t *v,
			    uint32_t count)
{
	ert_node_set_attr_ints(b->g, n, name, v, count);
}

/* The fixed-point rule, with ert.clamp [lo, hi] when lo < hi. */
static inline void set_fixed(struct qb *b, struct ert_node *n, int lo, int hi)
{
	ert_node_set_attr_int(b->g, n, "ert.requant", 1);
	if (lo < hi) {
		int64_t c[2] = { lo, hi };

		set_ints(b, n, "ert.clamp", c, 2);
	}
}

static inline struct qt qt_of(int32_t t, float scale, int8_t zp, int32_t rank, const int64_t *dims)
{
	struct qt q = { .t = t, .scale = scale, .zp = zp, .rank = rank };

	memcpy(q.dims, dims, (size_t)rank * sizeof(*dims));
	return q;
}

/* Graph input @name: int8, scale 0.02..0.06; dims[0] < 0 makes it a "batch" dimension. */
static inline struct qt qb_input(struct qb *b, const char *name, int32_t rank, const int64_t *dims)
{
	int32_t t = ert_graph_add_tensor(b->g, name, ERT_DTYPE_INT8, rank, dims);

	if (dims[0] < 0)
		b->g->tensors[t].dim_names[0] = ert_graph_strdup(b->g, "batch");
	ert_graph_add_input(b->g, t);
	return qt_of(t, rnd_float(b, 0.02f, 0.06f), (int8_t)rnd_int(b, -10, 10), rank, dims);
}

/* A constant int8 operand with the quantisation of an activation. */
static inline struct qt qb_const_act(struct qb *b, int32_t rank, const int64_t *dims)
{
	return qt_of(qb_rand_i8(b, "k", rank, dims), rnd_float(b, 0.02f, 0.06f),
		     (int8_t)rnd_int(b, -10, 10), rank, dims);
}

static inline void qb_output(struct qb *b, int32_t t)
{
	ert_graph_add_output(b->g, t);
}

/*
 * A scale for an output that sums @k products of int8 values (scale product
 * @in_scale): about 40 steps per standard deviation of the sum, so that most
 * values are in range and some saturate.
 */
static inline float out_scale(struct qb *b, double in_scale, int64_t k)
{
	return (float)(in_scale * sqrt((double)k) * 74.0 * 74.0 / 40.0 * rnd_float(b, 0.7f, 1.4f));
}

/* Weight scales, @n of them (per channel) or one, around @base; returns the input. */
static inline int32_t weight_scales(struct qb *b, float base, int64_t n, bool per_channel)
{
	float *ws = malloc((size_t)n * sizeof(float));
	int32_t t;

	for (int64_t i = 0; i < n; i++)
		ws[i] = base * rnd_float(b, 0.5f, 1.5f);
	if (per_channel)
		t = qb_const(b, "w_scale", ERT_DTYPE_FLOAT32, 1, &n, ws);
	else
		t = qb_f32(b, base);
	free(ws);
	return t;
}

/* An int32 bias of @n values of about one standard deviation of a @k-term sum. */
static inline int32_t bias_of(struct qb *b, int64_t n, int64_t k)
{
	int32_t *v = malloc((size_t)n * sizeof(int32_t)), t;
	int span = (int)(sqrt((double)k) * 74.0 * 74.0);

	for (int64_t i = 0; i < n; i++)
		v[i] = rnd_int(b, -span, span);
	t = qb_const(b, "bias", ERT_DTYPE_INT32, 1, &n, v);
	free(v);
	return t;
}

struct conv_spec {
	int64_t oc, kh, kw, group;   /* group 0: 1 */
	int64_t pads[4];             /* top, left, bottom, right */
	int64_t stride[2], dil[2];   /* 0: 1 */
	bool per_channel, bias;
	int8_t wzp;
	int lo, hi;                  /* ert.clamp when lo < hi */
};

static inline struct qt q_conv(struct qb *b, const char *name, struct qt x,
			       const struct conv_spec *c)
{
	int64_t group = c->group ? c->group : 1, icg = x.dims[1] / group;
	int64_t st[2] = { c->stride[0] ? c->stride[0] : 1, c->stride[1] ? c->stride[1] : 1 };
	int64_t dil[2] = { c->dil[0] ? c->dil[0] : 1, c->dil[1] ? c->dil[1] : 1 };
	int64_t wd[4] = { c->oc, icg, c->kh, c->kw }, ks[2] = { c->kh, c->kw };
	int64_t k = icg * c->kh * c->kw;
	float ws = rnd_float(b, 0.002f, 0.02f);
	float ys = out_scale(b, (double)x.scale * ws, k);
	int8_t yzp = (int8_t)rnd_int(b, -20, 20);
	int32_t in[9] = { x.t, qb_f32(b, x.scale), qb_i8(b, x.zp), qb_rand_i8(b, "w", 4, wd),
			  weight_scales(b, ws, c->oc, c->per_channel), qb_i8(b, c->wzp),
			  qb_f32(b, ys), qb_i8(b, yzp), c->bias ? bias_of(b, c->oc, k) : -1 };
	int32_t y = qb_value(b, name);
	struct ert_node *n = qb_node(b, ERT_OP_QLinearConv, name, c->bias ? 9 : 8, in, y);
	int64_t od[4] = {
		x.dims[0], c->oc,
		(x.dims[2] + c->pads[0] + c->pads[2] - dil[0] * (c->kh - 1) - 1) / st[0] + 1,
		(x.dims[3] + c->pads[1] + c->pads[3] - dil[1] * (c->kw - 1) - 1) / st[1] + 1,
	};

	set_ints(b, n, "kernel_shape", ks, 2);
	set_ints(b, n, "pads", c->pads, 4);
	set_ints(b, n, "strides", st, 2);
	set_ints(b, n, "dilations", dil, 2);
	ert_node_set_attr_int(b->g, n, "group", group);
	set_fixed(b, n, c->lo, c->hi);
	return qt_of(y, ys, yzp, 4, od);
}

/* QLinearMatMul of @a (..., M, K) by a constant (K, N), or (B, K, N) when @wbatch. */
static inline struct qt q_matmul(struct qb *b, const char *name, struct qt a, int64_t n,
				 bool wbatch, bool per_col)
{
	int64_t k = a.dims[a.rank - 1];
	int64_t wd[3] = { a.dims[0], k, n };
	float ws = rnd_float(b, 0.002f, 0.02f);
	float ys = out_scale(b, (double)a.scale * ws, k);
	int8_t yzp = (int8_t)rnd_int(b, -20, 20);
	int32_t in[8] = { a.t, qb_f32(b, a.scale), qb_i8(b, a.zp),
			  wbatch ? qb_rand_i8(b, "w", 3, wd) : qb_rand_i8(b, "w", 2, wd + 1),
			  weight_scales(b, ws, n, per_col), qb_i8(b, 0), qb_f32(b, ys),
			  qb_i8(b, yzp) };
	int32_t y = qb_value(b, name);
	struct ert_node *nd = qb_node(b, ERT_OP_QLinearMatMul, name, 8, in, y);
	struct qt out = qt_of(y, ys, yzp, a.rank, a.dims);

	set_fixed(b, nd, 1, 0);
	out.dims[a.rank - 1] = n;
	return out;
}

/* QGemm of @a (M, K) by a constant (K, N), or (N, K) with @trans_b; int32 bias C. */
static inline struct qt q_gemm(struct qb *b, const char *name, struct qt a, int64_t n, bool trans_b,
			       bool bias, int lo, int hi)
{
	int64_t k = a.dims[1];
	int64_t wd[2] = { trans_b ? n : k, trans_b ? k : n }, od[2] = { a.dims[0], n };
	float ws = rnd_float(b, 0.002f, 0.02f);
	float ys = out_scale(b, (double)a.scale * ws, k);
	int8_t yzp = (int8_t)rnd_int(b, -20, 20);
	int32_t in[9] = { a.t, qb_f32(b, a.scale), qb_i8(b, a.zp), qb_rand_i8(b, "w", 2, wd),
			  weight_scales(b, ws, n, true), qb_i8(b, (int8_t)rnd_int(b, -3, 3)),
			  bias ? bias_of(b, n, k) : -1, qb_f32(b, ys), qb_i8(b, yzp) };
	int32_t y = qb_value(b, name);
	struct ert_node *nd = qb_node(b, ERT_OP_QGemm, name, 9, in, y);

	ert_node_set_attr_int(b->g, nd, "transB", trans_b);
	set_fixed(b, nd, lo, hi);
	return qt_of(y, ys, yzp, 2, od);
}

/* QLinearAdd or QLinearMul of @a and @c with numpy broadcast (right-aligned). */
static inline struct qt q_binary(struct qb *b, enum ert_op op, const char *name, struct qt a,
				 struct qt c, int lo, int hi)
{
	float ys = op == ERT_OP_QLinearMul ? out_scale(b, (double)a.scale * c.scale, 1)
					   : (a.scale > c.scale ? a.scale : c.scale) *
						     rnd_float(b, 1.0f, 2.0f);
	int8_t yzp = (int8_t)rnd_int(b, -20, 20);
	int32_t in[8] = { a.t, qb_f32(b, a.scale), qb_i8(b, a.zp), c.t, qb_f32(b, c.scale),
			  qb_i8(b, c.zp), qb_f32(b, ys), qb_i8(b, yzp) };
	int32_t y = qb_value(b, name);
	struct qt out = qt_of(y, ys, yzp, a.rank > c.rank ? a.rank : c.rank,
			      a.rank > c.rank ? a.dims : c.dims);

	set_fixed(b, qb_node(b, op, name, 8, in, y), lo, hi);
	for (int32_t i = 1; i <= out.rank; i++) {
		int64_t da = i <= a.rank ? a.dims[a.rank - i] : 1;
		int64_t dc = i <= c.rank ? c.dims[c.rank - i] : 1;

		out.dims[out.rank - i] = da > dc ? da : dc;
	}
	return out;
}

struct pool_spec {
	int64_t kh, kw;
	int64_t pads[4];
	int64_t stride[2];
	int lo, hi;
};

/* QLinearAveragePool, or MaxPool (@max), of @x; output quantised as @x. */
static inline struct qt q_pool(struct qb *b, const char *name, struct qt x,
			       const struct pool_spec *p, bool max)
{
	int64_t ks[2] = { p->kh, p->kw };
	int32_t in[5] = { x.t, qb_f32(b, x.scale), qb_i8(b, x.zp), qb_f32(b, x.scale),
			  qb_i8(b, x.zp) };
	int32_t y = qb_value(b, name);
	struct ert_node *n = max ? qb_node(b, ERT_OP_MaxPool, name, 1, in, y)
				 : qb_node(b, ERT_OP_QLinearAveragePool, name, 5, in, y);
	int64_t od[4] = { x.dims[0], x.dims[1],
			  (x.dims[2] + p->pads[0] + p->pads[2] - p->kh) / p->stride[0] + 1,
			  (x.dims[3] + p->pads[1] + p->pads[3] - p->kw) / p->stride[1] + 1 };

	set_ints(b, n, "kernel_shape", ks, 2);
	set_ints(b, n, "pads", p->pads, 4);
	set_ints(b, n, "strides", p->stride, 2);
	if (!max)
		set_fixed(b, n, p->lo, p->hi);
	return qt_of(y, x.scale, x.zp, 4, od);
}

static inline struct qt q_global_avg(struct qb *b, const char *name, struct qt x)
{
	int32_t in[5] = { x.t, qb_f32(b, x.scale), qb_i8(b, x.zp), qb_f32(b, x.scale),
			  qb_i8(b, x.zp) };
	int32_t y = qb_value(b, name);
	int64_t od[4] = { x.dims[0], x.dims[1], 1, 1 };

	set_fixed(b, qb_node(b, ERT_OP_QLinearGlobalAveragePool, name, 5, in, y), 1, 0);
	return qt_of(y, x.scale, x.zp, 4, od);
}

static inline struct qt mv_transpose(struct qb *b, const char *name, struct qt x,
				     const int64_t *perm)
{
	int32_t y = qb_value(b, name);
	struct qt out = x;

	set_ints(b, qb_node(b, ERT_OP_Transpose, name, 1, &x.t, y), "perm", perm,
		 (uint32_t)x.rank);
	out.t = y;
	for (int32_t i = 0; i < x.rank; i++)
		out.dims[i] = x.dims[perm[i]];
	return out;
}

/* Concat of @n (at most 32) activations along @axis. */
static inline struct qt mv_concat(struct qb *b, const char *name, int64_t axis, uint32_t n,
				  const struct qt *xs)
{
	int32_t in[32], y = qb_value(b, name);
	struct qt out = xs[0];

	out.dims[axis] = 0;
	for (uint32_t i = 0; i < n; i++) {
		in[i] = xs[i].t;
		out.dims[axis] += xs[i].dims[axis];
	}
	ert_node_set_attr_int(b->g, qb_node(b, ERT_OP_Concat, name, n, in, y), "axis", axis);
	out.t = y;
	return out;
}

/* Slice of @x along axes 0..rank-1 (starts may be negative; steps positive). */
static inline struct qt mv_slice(struct qb *b, const char *name, struct qt x, const int64_t *starts,
				 const int64_t *ends, const int64_t *steps)
{
	int64_t axes[4] = { 0, 1, 2, 3 };
	int32_t in[5] = { x.t, qb_ints(b, x.rank, starts), qb_ints(b, x.rank, ends),
			  qb_ints(b, x.rank, axes), qb_ints(b, x.rank, steps) };
	int32_t y = qb_value(b, name);
	struct qt out = x;

	qb_node(b, ERT_OP_Slice, name, 5, in, y);
	out.t = y;
	for (int32_t i = 0; i < x.rank; i++) {
		int64_t s = starts[i] < 0 ? starts[i] + x.dims[i] : starts[i];
		int64_t e = ends[i] > x.dims[i] ? x.dims[i] : ends[i];

		out.dims[i] = (e - s + steps[i] - 1) / steps[i];
	}
	return out;
}

static inline struct qt mv_reshape(struct qb *b, const char *name, struct qt x, int32_t rank,
				   const int64_t *dims)
{
	int32_t in[2] = { x.t, qb_ints(b, rank, dims) }, y = qb_value(b, name);

	qb_node(b, ERT_OP_Reshape, name, 2, in, y);
	return qt_of(y, x.scale, x.zp, rank, dims);
}

static inline struct qt mv_flatten(struct qb *b, const char *name, struct qt x)
{
	int32_t y = qb_value(b, name);
	int64_t d[2] = { x.dims[0], x.dims[1] * x.dims[2] * x.dims[3] };

	ert_node_set_attr_int(b->g, qb_node(b, ERT_OP_Flatten, name, 1, &x.t, y), "axis", 1);
	return qt_of(y, x.scale, x.zp, 2, d);
}

/* Pad of @x by @pads (begin then end per axis, >= 0) with int8 @value, constant mode. */
static inline struct qt mv_pad(struct qb *b, const char *name, struct qt x, const int64_t *pads,
			       int8_t value)
{
	int32_t in[3] = { x.t, qb_ints(b, 2 * x.rank, pads), qb_i8(b, value) };
	int32_t y = qb_value(b, name);
	struct qt out = x;

	qb_node(b, ERT_OP_Pad, name, 3, in, y);
	out.t = y;
	for (int32_t i = 0; i < x.rank; i++)
		out.dims[i] = x.dims[i] + pads[i] + pads[x.rank + i];
	return out;
}

/* DequantizeLinear of @x to float32. */
static inline int32_t dequant(struct qb *b, const char *name, struct qt x)
{
	int32_t in[3] = { x.t, qb_f32(b, x.scale), qb_i8(b, x.zp) }, y = qb_value(b, name);

	qb_node(b, ERT_OP_DequantizeLinear, name, 3, in, y);
	return y;
}

/* QuantizeLinear of float32 @x (shape @dims) to int8. */
static inline struct qt quant(struct qb *b, const char *name, int32_t x, int32_t rank,
			      const int64_t *dims)
{
	float s = rnd_float(b, 0.02f, 0.05f);
	int8_t zp = (int8_t)rnd_int(b, -10, 10);
	int32_t in[3] = { x, qb_f32(b, s), qb_i8(b, zp) }, y = qb_value(b, name);

	qb_node(b, ERT_OP_QuantizeLinear, name, 3, in, y);
	return qt_of(y, s, zp, rank, dims);
}

#endif
