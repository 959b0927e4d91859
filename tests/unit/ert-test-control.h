/* SPDX-License-Identifier: MIT */
/*
 * ert-test-control.h — graphs with subgraphs (If, Loop, Scan) built with the
 * graph API, for the control-flow tests, the bad-input corpus and the fuzz
 * seeds. Each builder returns a graph the caller destroys, or NULL on
 * out-of-memory.
 */
#ifndef ERT_TEST_CONTROL_H
#define ERT_TEST_CONTROL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ert-graph.h"

static inline int32_t ct_tensor(struct ert_graph *g, const char *name, ert_dtype dt,
				int32_t rank, const int64_t *dims)
{
	return ert_graph_add_tensor(g, name, dt, rank, dims);
}

/* A float32 constant holding @v (copied). */
static inline int32_t ct_const_f32(struct ert_graph *g, const char *name, int32_t rank,
				   const int64_t *dims, const float *v)
{
	int64_t n = ert_shape_numel(rank, dims);
	int32_t t = ert_graph_add_tensor(g, name, ERT_DTYPE_FLOAT32, rank, dims);
	float *d = malloc((size_t)(n ? n : 1) * sizeof(float));

	if (t < 0 || !d) {
		free(d);
		return -1;
	}
	memcpy(d, v, (size_t)n * sizeof(float));
	ert_graph_set_const(g, t, d, (size_t)n * sizeof(float), true);
	return t;
}

/* Subgraph @sub's view of tensor @t of its parent: a capture of the same name and type. */
static inline int32_t ct_capture(struct ert_graph *sub, int32_t t)
{
	const struct ert_tensor *x = &sub->parent->tensors[t];
	int32_t c = ert_graph_add_tensor(sub, x->name, x->dtype, x->rank, x->dims);

	if (c >= 0 && !ert_graph_add_capture(sub, c))
		return -1;
	return c;
}

/* A one-input node writing a new tensor @out (shape of @in) of @g; returns it. */
static inline int32_t ct_unary(struct ert_graph *g, enum ert_op op, const char *name,
			       int32_t in, const char *out)
{
	const struct ert_tensor *x = &g->tensors[in];
	int32_t o = ert_graph_add_tensor(g, out, x->dtype, x->rank, x->dims);

	if (o < 0 || ert_graph_add_node(g, op, name, 1, &in, 1, &o) < 0)
		return -1;
	return o;
}

static inline int32_t ct_binary(struct ert_graph *g, enum ert_op op, const char *name,
				int32_t a, int32_t b, const char *out)
{
	const struct ert_tensor *x = &g->tensors[a];
	int32_t o = ert_graph_add_tensor(g, out, x->dtype, x->rank, x->dims);
	int32_t in[2] = { a, b };

	if (o < 0 || ert_graph_add_node(g, op, name, 2, in, 1, &o) < 0)
		return -1;
	return o;
}

/*
 * If(@c) in @g over the two branches made by the caller (their captures
 * bound, in order, to @then_caps and @else_caps of @g); output @out of @dt
 * and shape @rank/@dims. Returns the output tensor.
 */
static inline int32_t ct_if(struct ert_graph *g, const char *name, int32_t c,
			    struct ert_graph *then_g, const int32_t *then_caps,
			    struct ert_graph *else_g, const int32_t *else_caps, const char *out,
			    ert_dtype dt, int32_t rank, const int64_t *dims)
{
	int32_t in[64], o = ert_graph_add_tensor(g, out, dt, rank, dims), ni;
	uint32_t n = 0;

	if (o < 0 || then_g->n_captures + else_g->n_captures >= 63)
		return -1;
	in[n++] = c;
	for (uint32_t k = 0; k < then_g->n_captures; k++)
		in[n++] = then_caps[k];
	for (uint32_t k = 0; k < else_g->n_captures; k++)
		in[n++] = else_caps[k];
	ni = ert_graph_add_node(g, ERT_OP_If, name, n, in, 1, &o);
	if (ni < 0 || !ert_node_set_attr_graph(g, &g->nodes[ni], "then_branch", then_g) ||
	    !ert_node_set_attr_graph(g, &g->nodes[ni], "else_branch", else_g))
		return -1;
	return o;
}

/*
 * Main graph: inputs x f32[2,3], c bool, n int64; constant w f32[2,3].
 *   sel = If(c) { x + w } else { x * w }
 *   yf, ys = Loop(n, "", sel) body(i, cond, y) {
 *       y2 = y + x;  y3 = If(c) { -y2 } else { Relu(y2) };  (cond, y3, scan y2) }
 * Outputs sel, yf, ys. The Loop body reads x and c of the main graph, and its
 * If reads y2 of the body: captures two levels deep.
 */
static inline struct ert_graph *ct_build_if_loop(void)
{
	static const float wv[6] = { 0.5f, -1, 2, 3, -0.25f, 1 };
	const int64_t d23[2] = { 2, 3 };
	struct ert_graph *g = ert_graph_create();
	struct ert_graph *tb, *eb, *body, *itb, *ieb;
	int32_t x, c, n, w, sel, yf, ys, t, caps[2];

	if (!g)
		return NULL;
	g->producer = "control-flow test";
	g->opset = 13;
	x = ct_tensor(g, "x", ERT_DTYPE_FLOAT32, 2, d23);
	c = ct_tensor(g, "c", ERT_DTYPE_BOOL, 0, NULL);
	n = ct_tensor(g, "n", ERT_DTYPE_INT64, 0, NULL);
	w = ct_const_f32(g, "w", 2, d23, wv);
	if (x < 0 || c < 0 || n < 0 || w < 0)
		goto error;
	ert_graph_add_input(g, x);
	ert_graph_add_input(g, c);
	ert_graph_add_input(g, n);

	tb = ert_graph_add_subgraph(g);
	eb = ert_graph_add_subgraph(g);
	if (!tb || !eb)
		goto error;
	t = ct_binary(tb, ERT_OP_Add, "then_add", ct_capture(tb, x), ct_capture(tb, w), "then_out");
	if (t < 0 || !ert_graph_add_output(tb, t))
		goto error;
	t = ct_binary(eb, ERT_OP_Mul, "else_mul", ct_capture(eb, x), ct_capture(eb, w), "else_out");
	if (t < 0 || !ert_graph_add_output(eb, t))
		goto error;
	caps[0] = x;
	caps[1] = w;
	sel = ct_if(g, "select", c, tb, caps, eb, caps, "sel", ERT_DTYPE_FLOAT32, 2, d23);
	if (sel < 0)
		goto error;

	body = ert_graph_add_subgraph(g);
	if (!body)
		goto error;
	{
		int32_t i = ct_tensor(body, "i", ERT_DTYPE_INT64, 0, NULL);
		int32_t cin = ct_tensor(body, "cond_in", ERT_DTYPE_BOOL, 0, NULL);
		int32_t y = ct_tensor(body, "y", ERT_DTYPE_FLOAT32, 2, d23);
		int32_t bx, bc, y2, y3, cout;

		if (i < 0 || cin < 0 || y < 0)
			goto error;
		ert_graph_add_input(body, i);
		ert_graph_add_input(body, cin);
		ert_graph_add_input(body, y);
		bx = ct_capture(body, x);
		bc = ct_capture(body, c);
		y2 = ct_binary(body, ERT_OP_Add, "acc", y, bx, "y2");
		cout = ct_unary(body, ERT_OP_Identity, "keep", cin, "cond_out");
		if (bx < 0 || bc < 0 || y2 < 0 || cout < 0)
			goto error;
		itb = ert_graph_add_subgraph(body);
		ieb = ert_graph_add_subgraph(body);
		if (!itb || !ieb)
			goto error;
		t = ct_unary(itb, ERT_OP_Neg, "neg", ct_capture(itb, y2), "neg_out");
		if (t < 0 || !ert_graph_add_output(itb, t))
			goto error;
		t = ct_unary(ieb, ERT_OP_Relu, "relu", ct_capture(ieb, y2), "relu_out");
		if (t < 0 || !ert_graph_add_output(ieb, t))
			goto error;
		y3 = ct_if(body, "inner", bc, itb, &y2, ieb, &y2, "y3", ERT_DTYPE_FLOAT32, 2, d23);
		if (y3 < 0 || !ert_graph_add_output(body, cout) || !ert_graph_add_output(body, y3) ||
		    !ert_graph_add_output(body, y2))
			goto error;
	}
	yf = ct_tensor(g, "yf", ERT_DTYPE_FLOAT32, 2, d23);
	ys = ct_tensor(g, "ys", ERT_DTYPE_FLOAT32, 3, (const int64_t[]){ -1, 2, 3 });
	if (yf < 0 || ys < 0)
		goto error;
	{
		int32_t in[5] = { n, -1, sel, x, c }, out[2] = { yf, ys };
		int32_t ni = ert_graph_add_node(g, ERT_OP_Loop, "loop", 5, in, 2, out);

		if (ni < 0 || !ert_node_set_attr_graph(g, &g->nodes[ni], "body", body))
			goto error;
	}
	if (!ert_graph_add_output(g, sel) || !ert_graph_add_output(g, yf) ||
	    !ert_graph_add_output(g, ys))
		goto error;
	return g;
error:
	ert_graph_destroy(g);
	return NULL;
}

/*
 * Scan (opset 11): state s0 f32[2], scan input X f32[2,4] along axis 1,
 * read backwards. body(s, xs) { s2 = s + xs; o = xs * s2; (s2, o, s2) };
 * outputs sf, o stacked along axis 0 ([4,2]), s2 stacked along axis 1 in
 * reverse ([2,4]).
 */
static inline struct ert_graph *ct_build_scan(void)
{
	const int64_t d2[1] = { 2 }, d24[2] = { 2, 4 };
	struct ert_graph *g = ert_graph_create(), *body;
	int32_t s0, xin, sf, o1, o2, s, xs, s2, o;

	if (!g)
		return NULL;
	g->producer = "control-flow test";
	g->opset = 11;
	s0 = ct_tensor(g, "s0", ERT_DTYPE_FLOAT32, 1, d2);
	xin = ct_tensor(g, "X", ERT_DTYPE_FLOAT32, 2, d24);
	sf = ct_tensor(g, "sf", ERT_DTYPE_FLOAT32, 1, d2);
	o1 = ct_tensor(g, "o1", ERT_DTYPE_FLOAT32, 2, (const int64_t[]){ 4, 2 });
	o2 = ct_tensor(g, "o2", ERT_DTYPE_FLOAT32, 2, d24);
	body = ert_graph_add_subgraph(g);
	if (s0 < 0 || xin < 0 || sf < 0 || o1 < 0 || o2 < 0 || !body)
		goto error;
	ert_graph_add_input(g, s0);
	ert_graph_add_input(g, xin);
	s = ct_tensor(body, "s", ERT_DTYPE_FLOAT32, 1, d2);
	xs = ct_tensor(body, "xs", ERT_DTYPE_FLOAT32, 1, d2);
	if (s < 0 || xs < 0)
		goto error;
	ert_graph_add_input(body, s);
	ert_graph_add_input(body, xs);
	s2 = ct_binary(body, ERT_OP_Add, "acc", s, xs, "s2");
	o = ct_binary(body, ERT_OP_Mul, "mul", xs, s2, "o");
	if (s2 < 0 || o < 0 || !ert_graph_add_output(body, s2) || !ert_graph_add_output(body, o) ||
	    !ert_graph_add_output(body, s2))
		goto error;
	{
		int32_t in[2] = { s0, xin }, out[3] = { sf, o1, o2 };
		int32_t ni = ert_graph_add_node(g, ERT_OP_Scan, "scan", 2, in, 3, out);
		struct ert_node *nd;

		if (ni < 0)
			goto error;
		nd = &g->nodes[ni];
		if (!ert_node_set_attr_graph(g, nd, "body", body) ||
		    !ert_node_set_attr_int(g, nd, "num_scan_inputs", 1) ||
		    !ert_node_set_attr_ints(g, nd, "scan_input_axes", (const int64_t[]){ 1 }, 1) ||
		    !ert_node_set_attr_ints(g, nd, "scan_input_directions", (const int64_t[]){ 1 }, 1) ||
		    !ert_node_set_attr_ints(g, nd, "scan_output_axes", (const int64_t[]){ 0, 1 }, 2) ||
		    !ert_node_set_attr_ints(g, nd, "scan_output_directions", (const int64_t[]){ 0, 1 },
					    2))
			goto error;
	}
	if (!ert_graph_add_output(g, sf) || !ert_graph_add_output(g, o1) ||
	    !ert_graph_add_output(g, o2))
		goto error;
	return g;
error:
	ert_graph_destroy(g);
	return NULL;
}

/* If nested @levels deep in @g: then-branches hold the next If, else-branches Neg(x). */
static inline int32_t ct_if_chain(struct ert_graph *g, int32_t c, int32_t x, uint32_t levels,
				  uint32_t depth)
{
	struct ert_graph *tb = ert_graph_add_subgraph(g), *eb = ert_graph_add_subgraph(g);
	int32_t t, tcaps[2], ecaps[1] = { x };
	char name[32];

	if (!tb || !eb)
		return -1;
	if (levels > 1) {
		int32_t tc = ct_capture(tb, c), tx = ct_capture(tb, x);

		t = tc < 0 || tx < 0 ? -1 : ct_if_chain(tb, tc, tx, levels - 1, depth + 1);
		tcaps[0] = c;
		tcaps[1] = x;
	} else {
		t = ct_capture(tb, x);
		tcaps[0] = x;
	}
	if (t < 0 || !ert_graph_add_output(tb, t))
		return -1;
	t = ct_unary(eb, ERT_OP_Neg, "neg", ct_capture(eb, x), "neg_out");
	if (t < 0 || !ert_graph_add_output(eb, t))
		return -1;
	snprintf(name, sizeof(name), "if%u", depth);
	return ct_if(g, name, c, tb, tcaps, eb, ecaps, name, ERT_DTYPE_FLOAT32, 1,
		     (const int64_t[]){ 1 });
}

/* c bool, x f32[1] → If nested @levels deep (its branches at depth @levels) → out. */
static inline struct ert_graph *ct_build_deep(uint32_t levels)
{
	struct ert_graph *g = ert_graph_create();
	int32_t c, x, o;

	if (!g)
		return NULL;
	g->opset = 13;
	c = ct_tensor(g, "c", ERT_DTYPE_BOOL, 0, NULL);
	x = ct_tensor(g, "x", ERT_DTYPE_FLOAT32, 1, (const int64_t[]){ 1 });
	if (c < 0 || x < 0)
		goto error;
	ert_graph_add_input(g, c);
	ert_graph_add_input(g, x);
	o = ct_if_chain(g, c, x, levels, 0);
	if (o < 0 || !ert_graph_add_output(g, o))
		goto error;
	return g;
error:
	ert_graph_destroy(g);
	return NULL;
}

#endif /* ERT_TEST_CONTROL_H */
