/* SPDX-License-Identifier: MIT */
/*
 * Inverted-residual fusion (MobileNet v2): Conv 1x1 (expand) -> depthwise
 * Conv 3x3 -> Conv 1x1 (project), each intermediate tensor read by the next
 * Conv alone, becomes one InvertedResidual node (edgert's own op), which the
 * CPU runs by bands of rows so that neither intermediate tensor goes out to
 * memory (cpu/conv/irblock.h), with the same bits as the three Convs. A
 * block without the expand conv (MobileNet v2's first) fuses the depthwise
 * and project convs alone.
 *
 * The Convs: float32, static shapes, constant weights and biases (each Conv
 * with its bias), no auto_pad; the expand and project convs 1x1, stride 1, no
 * padding, group 1; the depthwise conv one channel per group, 3x3, dilation
 * 1, the same stride 1 or 2 along both axes, rows at most 4096 wide (the
 * depthwise band kernels' limit), and input and output planes of more than
 * 64 pixels (smaller ones take the CPU Conv's swapped small-plane GEMM,
 * whose sums the band cannot reproduce, and gain nothing from banding); the
 * depthwise conv's input (the expanded tensor) at least
 * ERT_OPT_IRBLOCK_MIN_BYTES an image (smaller ones stay in the caches
 * between the Convs anyway).
 * The project conv may carry a fused residual ("ert.residual", so this runs
 * after residual fusion); each Conv keeps its fused activation ("ert.ex_act",
 * "ert.dw_act", and the node's own "ert.act").
 *
 * Only the CPU runs the op (the GPU and NPU backends do not take it, so a
 * session on them would run these blocks on the CPU). Off by default
 * (ERT_OPT_IRBLOCK_DEFAULT): ERT_FUSE_IRBLOCK=1 in the environment of what
 * optimises the graph (edgert convert / zoo, the ONNX importer) turns it
 * on, =0 off; the form is then in the model file (docs/cpu-kernels.md).
 * ert_opt_unfuse_irblock() gives the Convs back (for the quantizer).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt/opt-private.h"

static bool f32_static(const struct ert_graph *g, int32_t t)
{
	return t >= 0 && g->tensors[t].dtype == ERT_DTYPE_FLOAT32 &&
	       ert_opt_shape_static(&g->tensors[t]);
}

/* Every one of @n's @count INTS attribute @name is @v (absent: the default, @v). */
static bool ints_all(const struct ert_node *n, const char *name, int64_t v)
{
	uint32_t count = 0;
	const int64_t *p = ert_attr_ints(n, name, &count);

	for (uint32_t i = 0; p && i < count; i++)
		if (p[i] != v)
			return false;
	return true;
}

/* A float32 Conv with a constant W and B, static shapes, no auto_pad or residual (unless @res). */
static bool plain_conv(const struct ert_graph *g, const struct ert_node *c, bool res)
{
	const struct ert_tensor *w;

	if (c->dead || c->op != ERT_OP_Conv || c->n_outputs != 1 || c->n_inputs < 3 ||
	    c->n_inputs > (res ? 4u : 3u) || ert_node_attr(c, "auto_pad"))
		return false;
	if (ert_attr_int(c, "ert.residual", 0) != (c->n_inputs == 4))
		return false;
	for (uint32_t i = 0; i < c->n_inputs; i++)
		if (!f32_static(g, c->inputs[i]))
			return false;
	if (!f32_static(g, c->outputs[0]) || g->tensors[c->inputs[0]].rank != 4)
		return false;
	w = &g->tensors[c->inputs[1]];
	return ert_opt_const_f32(g, c->inputs[1], w->dims[0] * w->dims[1] * w->dims[2] * w->dims[3]) &&
	       ert_opt_const_f32(g, c->inputs[2], w->dims[0]);
}

/* 1x1, stride 1, no padding, group 1. */
static bool pointwise(const struct ert_graph *g, const struct ert_node *c, bool res)
{
	const struct ert_tensor *w;

	if (!plain_conv(g, c, res) || ert_attr_int(c, "group", 1) != 1 ||
	    !ints_all(c, "strides", 1) || !ints_all(c, "pads", 0))
		return false;
	w = &g->tensors[c->inputs[1]];
	return w->dims[2] == 1 && w->dims[3] == 1;
}

static bool depthwise(const struct ert_graph *g, const struct ert_node *c)
{
	const struct ert_tensor *x, *w, *y;
	uint32_t ns = 0;
	const int64_t *s;

	if (!plain_conv(g, c, false) || !ints_all(c, "dilations", 1))
		return false;
	x = &g->tensors[c->inputs[0]];
	w = &g->tensors[c->inputs[1]];
	y = &g->tensors[c->outputs[0]];
	s = ert_attr_ints(c, "strides", &ns);
	if (ns && (ns != 2 || s[0] != s[1] || s[0] < 1 || s[0] > 2))
		return false;
	return ert_attr_int(c, "group", 1) == x->dims[1] && w->dims[0] == x->dims[1] &&
	       w->dims[1] == 1 && w->dims[2] == 3 && w->dims[3] == 3 && x->dims[3] <= 4096 &&
	       x->dims[2] * x->dims[3] > 64 && y->dims[2] * y->dims[3] > 64 &&
	       x->dims[1] * x->dims[2] * x->dims[3] * (int64_t)sizeof(float) >=
		       ERT_OPT_IRBLOCK_MIN_BYTES;
}

/* The live node reading tensor @t (its only use), or -1. */
static int32_t only_reader(const struct ert_graph *g, const uint32_t *uses, int32_t t)
{
	if (uses[t] != 1 || ert_opt_is_graph_output(g, t))
		return -1;
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct ert_node *n = &g->nodes[i];

		for (uint32_t k = 0; !n->dead && k < n->n_inputs; k++)
			if (n->inputs[k] == t)
				return (int32_t)i;
	}
	return -1;
}

/* Activation @a as attributes @to, @to_params of @dst (NONE: nothing); false on out-of-memory. */
static bool set_act(struct ert_graph *g, struct ert_node *dst, struct ert_act_desc a,
		    const char *to, const char *to_params)
{
	float p[2] = { a.p0, a.p1 };

	if (a.type == ERT_ACT_NONE)
		return true;
	return ert_node_set_attr_int(g, dst, to, a.type) &&
	       ert_opt_set_attr_floats(g, dst, to_params, p, 2);
}

/* @src's fused activation ("ert.act") as @to, @to_params on @dst. */
static bool copy_act(struct ert_graph *g, const struct ert_node *src, struct ert_node *dst,
		     const char *to, const char *to_params)
{
	return set_act(g, dst, ert_node_act(src), to, to_params);
}

static bool copy_ints(struct ert_graph *g, const struct ert_node *src, struct ert_node *dst,
		      const char *name)
{
	uint32_t count = 0;
	const int64_t *v = ert_attr_ints(src, name, &count);

	return !v || ert_node_set_attr_ints(g, dst, name, v, count);
}

/* The InvertedResidual node for @e (or -1: none), @d, @p; false on out-of-memory. */
static bool fuse(struct ert_graph *g, int32_t ei, uint32_t di, uint32_t pi)
{
	const struct ert_node *d = &g->nodes[di], *p = &g->nodes[pi];
	const struct ert_node *e = ei >= 0 ? &g->nodes[ei] : NULL;
	int32_t in[8] = { e ? e->inputs[0] : d->inputs[0], d->inputs[1], d->inputs[2],
			  p->inputs[1], p->inputs[2] };
	int32_t out = p->outputs[0];
	uint32_t n_in = 5;
	char name[256];
	int32_t ni;
	struct ert_node *n;

	if (e) {
		in[5] = e->inputs[1];
		in[6] = e->inputs[2];
		n_in = 7;
	}
	if (p->n_inputs == 4)
		in[n_in++] = p->inputs[3];
	snprintf(name, sizeof(name), "%s+irblock", d->name ? d->name : "");
	ni = ert_graph_add_node(g, ERT_OP_InvertedResidual, name, n_in, in, 1, &out);
	if (ni < 0)
		return false;
	/* the nodes array may have moved */
	d = &g->nodes[di];
	p = &g->nodes[pi];
	e = ei >= 0 ? &g->nodes[ei] : NULL;
	n = &g->nodes[ni];
	n->opset = d->opset;
	/* the Convs' own names, for ert_opt_unfuse_irblock() to give back */
	if ((d->name && !ert_node_set_attr_string(g, n, "ert.dw_name", d->name)) ||
	    (p->name && !ert_node_set_attr_string(g, n, "ert.project_name", p->name)) ||
	    (e && e->name && !ert_node_set_attr_string(g, n, "ert.expand_name", e->name)) ||
	    !copy_ints(g, d, n, "strides") || !copy_ints(g, d, n, "pads") ||
	    !copy_act(g, d, n, "ert.dw_act", "ert.dw_act_params") ||
	    !copy_act(g, p, n, "ert.act", "ert.act_params") ||
	    (e && !copy_act(g, e, n, "ert.ex_act", "ert.ex_act_params")) ||
	    (p->n_inputs == 4 && !ert_node_set_attr_int(g, n, "ert.residual", 1))) {
		n->dead = true;
		return false;
	}
	g->nodes[di].dead = true;
	g->nodes[pi].dead = true;
	if (ei >= 0)
		g->nodes[ei].dead = true;
	return true;
}

ert_status ert_opt_fuse_irblock(struct ert_graph *g, bool *changed, struct ert_err *err)
{
	uint32_t *uses;
	int32_t *producer;
	uint32_t n0 = g->n_nodes;

	if (!ert_opt_env_switch("ERT_FUSE_IRBLOCK", ERT_OPT_IRBLOCK_DEFAULT))
		return ERT_OK;
	uses = ert_opt_count_uses(g);
	producer = ert_opt_producers(g);
	if (!uses || !producer) {
		free(uses);
		free(producer);
		ert_err_set(err, "inverted-residual fusion: out of memory");
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	for (uint32_t di = 0; di < n0; di++) {
		const struct ert_node *d = &g->nodes[di];
		int32_t pi, ei, t;

		if (!depthwise(g, d))
			continue;
		pi = only_reader(g, uses, d->outputs[0]);
		if (pi < 0 || !pointwise(g, &g->nodes[pi], true) ||
		    g->nodes[pi].inputs[0] != d->outputs[0])
			continue;
		t = d->inputs[0];
		ei = producer[t];
		if (ei >= 0 && (!pointwise(g, &g->nodes[ei], false) || uses[t] != 1 ||
				ert_opt_is_graph_output(g, t)))
			ei = -1;
		/* the block's input is the expand conv's, or the depthwise conv's own */
		if (ei < 0 && g->nodes[pi].n_inputs == 4)
			continue;
		if (!fuse(g, ei, di, (uint32_t)pi)) {
			free(uses);
			free(producer);
			ert_err_set(err, "inverted-residual fusion: out of memory");
			return ERT_STATUS_OUT_OF_MEMORY;
		}
		*changed = true;
	}
	free(uses);
	free(producer);
	return ERT_OK;
}

/*
 * A Conv of @xwbr (X, W, B, and a residual where the fourth is >= 0) into
 * @y, named @orig (the Conv's name before the fusion) or else after node
 * @host and @suffix, of @group, with @host's strides, pads and dilations
 * where @spatial, and activation @a; false on out-of-memory.
 */
static bool add_conv(struct ert_graph *g, uint32_t host, const char *orig, const char *suffix,
		     const int32_t *xwbr, int32_t y, int64_t group, bool spatial,
		     struct ert_act_desc a)
{
	const struct ert_tensor *w = &g->tensors[xwbr[1]];
	int64_t ks[2] = { w->dims[2], w->dims[3] };
	char name[160];
	struct ert_node *n;
	int32_t ni;

	if (orig && orig[0])
		snprintf(name, sizeof(name), "%s", orig);
	else
		snprintf(name, sizeof(name), "%.120s.%s",
			 g->nodes[host].name ? g->nodes[host].name : "", suffix);
	ni = ert_graph_add_node(g, ERT_OP_Conv, name, xwbr[3] >= 0 ? 4 : 3, xwbr, 1, &y);
	if (ni < 0)
		return false;
	n = &g->nodes[ni];
	n->opset = g->nodes[host].opset;
	if (!ert_node_set_attr_int(g, n, "group", group) ||
	    !ert_node_set_attr_ints(g, n, "kernel_shape", ks, 2) ||
	    (spatial && (!copy_ints(g, &g->nodes[host], n, "strides") ||
			 !copy_ints(g, &g->nodes[host], n, "pads") ||
			 !copy_ints(g, &g->nodes[host], n, "dilations"))) ||
	    !set_act(g, n, a, "ert.act", "ert.act_params"))
		return false;
	return xwbr[3] < 0 || ert_node_set_attr_int(g, n, "ert.residual", 1);
}

/* A new float32 tensor named after @t's name and @suffix; -1 on out-of-memory. */
static int32_t new_tensor(struct ert_graph *g, int32_t t, const char *suffix)
{
	char name[160];

	snprintf(name, sizeof(name), "%.120s.%s", g->tensors[t].name ? g->tensors[t].name : "",
		 suffix);
	return ert_graph_add_tensor_unique(g, name, ERT_DTYPE_FLOAT32, -1, NULL);
}

/* InvertedResidual @i as its Convs again: false on out-of-memory. */
static bool unfuse_one(struct ert_graph *g, uint32_t i)
{
	const struct ert_node *n = &g->nodes[i];
	int32_t in[8], y = n->outputs[0], x, d;
	uint32_t n_in = n->n_inputs;
	struct ert_act_desc ex = ert_node_act_named(n, "ert.ex_act", "ert.ex_act_params");
	struct ert_act_desc dw = ert_node_act_named(n, "ert.dw_act", "ert.dw_act_params");
	struct ert_act_desc pj = ert_node_act(n);
	/* arena strings: they outlive the nodes array's moves below */
	const char *en = ert_attr_string(n, "ert.expand_name", NULL);
	const char *dn = ert_attr_string(n, "ert.dw_name", NULL);
	const char *pn = ert_attr_string(n, "ert.project_name", NULL);

	memcpy(in, n->inputs, n_in * sizeof(in[0]));
	x = in[0];
	if (n_in >= 7) {
		x = new_tensor(g, y, "expanded");
		if (x < 0 || !add_conv(g, i, en, "expand", (int32_t[]){ in[0], in[5], in[6], -1 }, x,
				       1, false, ex))
			return false;
	}
	d = new_tensor(g, y, "depthwise");
	if (d < 0 ||
	    !add_conv(g, i, dn, "depthwise", (int32_t[]){ x, in[1], in[2], -1 }, d,
		      g->tensors[in[1]].dims[0], true, dw) ||
	    !add_conv(g, i, pn, "project",
		      (int32_t[]){ d, in[3], in[4], n_in == 8 ? in[7] : -1 }, y, 1, false, pj))
		return false;
	g->nodes[i].dead = true;
	return true;
}

ert_status ert_opt_unfuse_irblock(struct ert_graph *g, struct ert_err *err)
{
	uint32_t n_nodes = g->n_nodes;
	bool any = false;

	for (uint32_t i = 0; i < n_nodes; i++) {
		const struct ert_node *n = &g->nodes[i];

		if (n->dead || n->op != ERT_OP_InvertedResidual || n->n_outputs != 1 ||
		    n->outputs[0] < 0 || (n->n_inputs != 5 && n->n_inputs != 7 && n->n_inputs != 8))
			continue;
		if (!unfuse_one(g, i)) {
			ert_err_set(err, "failed to split the inverted-residual block '%s': out of memory",
				    g->nodes[i].name ? g->nodes[i].name : "");
			return ERT_STATUS_OUT_OF_MEMORY;
		}
		any = true;
	}
	/* the fused nodes go: their outputs have new producers */
	if (any && ert_graph_compact(g) != ERT_OK) {
		ert_err_set(err, "failed to compact graph: out of memory");
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	return any ? ert_graph_toposort(g, err) : ERT_OK;
}
