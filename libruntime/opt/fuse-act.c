/* SPDX-License-Identifier: MIT */
/*
 * Activation fusion: an activation reading the only use of a Conv,
 * ConvTranspose, Gemm, MatMul or Add output is folded into that node as the
 * attributes "ert.act" / "ert.act_params" (see enum ert_act), and the
 * activation node goes away. Float32 only: ert_act_apply() works on floats.
 */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt/opt-private.h"

static bool is_fusion_host(enum ert_op op)
{
	return op == ERT_OP_Conv || op == ERT_OP_ConvTranspose || op == ERT_OP_Gemm ||
	       op == ERT_OP_MatMul || op == ERT_OP_Add;
}

/* A constant float32 scalar (or one-element tensor) input, or @def when omitted. */
static bool clip_bound(const struct ert_graph *g, const struct ert_node *n, uint32_t k,
		       float def, float *out)
{
	const struct ert_tensor *t;

	if (n->n_inputs <= k || n->inputs[k] < 0) {
		*out = def;
		return true;
	}
	t = &g->tensors[n->inputs[k]];
	if (!(t->flags & ERT_TENSOR_CONST) || t->dtype != ERT_DTYPE_FLOAT32 || t->nbytes != 4)
		return false;
	*out = *(const float *)t->data;
	return true;
}

/* The fused form of activation node @n, or false when it has none. */
static bool act_of(const struct ert_graph *g, const struct ert_node *n, struct ert_act_desc *a)
{
	a->p0 = a->p1 = 0.0f;
	switch (n->op) {
	case ERT_OP_Relu:
		a->type = ERT_ACT_RELU;
		return true;
	case ERT_OP_Sigmoid:
		a->type = ERT_ACT_SIGMOID;
		return true;
	case ERT_OP_Tanh:
		a->type = ERT_ACT_TANH;
		return true;
	case ERT_OP_Gelu: {
		const char *how = ert_attr_string(n, "approximate", "none");

		/* anything else is refused by the op's own check: leave it to that */
		if (strcmp(how, "none") && strcmp(how, "tanh"))
			return false;
		a->type = ERT_ACT_GELU;
		a->p0 = strcmp(how, "tanh") ? 0.0f : 1.0f;
		return true;
	}
	case ERT_OP_HardSwish:
		a->type = ERT_ACT_HARD_SWISH;
		return true;
	case ERT_OP_LeakyRelu:
		a->type = ERT_ACT_LEAKY_RELU;
		a->p0 = ert_attr_float(n, "alpha", 0.01f);
		return true;
	case ERT_OP_HardSigmoid:
		a->type = ERT_ACT_HARD_SIGMOID;
		a->p0 = ert_attr_float(n, "alpha", 0.2f);
		a->p1 = ert_attr_float(n, "beta", 0.5f);
		return true;
	case ERT_OP_Clip:
		a->type = ERT_ACT_CLIP;
		if (n->opset && n->opset < 11) {
			a->p0 = ert_attr_float(n, "min", -FLT_MAX);
			a->p1 = ert_attr_float(n, "max", FLT_MAX);
			return true;
		}
		return clip_bound(g, n, 1, -FLT_MAX, &a->p0) && clip_bound(g, n, 2, FLT_MAX, &a->p1);
	default:
		return false;
	}
}

/*
 * The host's output is float32: known from the tensor, else from any input
 * (every host op takes one element type T for its inputs and output).
 */
static bool host_is_f32(const struct ert_graph *g, const struct ert_node *h)
{
	ert_dtype dt = g->tensors[h->outputs[0]].dtype;

	if (dt != ERT_DTYPE_UNDEFINED)
		return dt == ERT_DTYPE_FLOAT32;
	for (uint32_t k = 0; k < h->n_inputs; k++)
		if (h->inputs[k] >= 0 && g->tensors[h->inputs[k]].dtype == ERT_DTYPE_FLOAT32)
			return true;
	return false;
}

ert_status ert_opt_fuse_activations(struct ert_graph *g, bool *changed, struct ert_err *err)
{
	uint32_t *uses = ert_opt_count_uses(g);
	int32_t *producer = ert_opt_producers(g);
	ert_status st = ERT_OK;

	if (!uses || !producer) {
		ert_err_set(err, "failed to fuse activations: out of memory");
		st = ERT_STATUS_OUT_OF_MEMORY;
		goto out;
	}
	for (uint32_t ai = 0; ai < g->n_nodes; ai++) {
		struct ert_node *act = &g->nodes[ai];
		struct ert_act_desc a;

		if (act->dead || act->n_inputs < 1 || act->inputs[0] < 0 || act->n_outputs != 1 ||
		    act->outputs[0] < 0 || !act_of(g, act, &a))
			continue;
		int32_t x = act->inputs[0];

		if (producer[x] < 0 || uses[x] != 1 || ert_opt_is_graph_output(g, x))
			continue;
		struct ert_node *host = &g->nodes[producer[x]];

		if (!is_fusion_host(host->op) || host->n_outputs != 1 || host->outputs[0] != x ||
		    ert_node_act(host).type != ERT_ACT_NONE || !host_is_f32(g, host))
			continue;
		float params[2] = { a.p0, a.p1 };

		if (!ert_node_set_attr_int(g, host, "ert.act", a.type) ||
		    !ert_opt_set_attr_floats(g, host, "ert.act_params", params, 2)) {
			/* undo: a half-set attribute would change what the host computes */
			ert_node_set_attr_int(g, host, "ert.act", ERT_ACT_NONE);
			ert_err_set(err, "failed to fuse '%s' into '%s': out of memory", act->name,
				    host->name);
			st = ERT_STATUS_OUT_OF_MEMORY;
			goto out;
		}
		host->outputs[0] = act->outputs[0];
		producer[act->outputs[0]] = producer[x];
		act->dead = true;
		*changed = true;
	}
out:
	free(uses);
	free(producer);
	return st;
}

/* The standalone op of a fused activation the int8 path has no clamp for. */
static enum ert_op unfused_op(enum ert_act a)
{
	switch (a) {
	case ERT_ACT_LEAKY_RELU: return ERT_OP_LeakyRelu;
	case ERT_ACT_SIGMOID: return ERT_OP_Sigmoid;
	case ERT_ACT_HARD_SWISH: return ERT_OP_HardSwish;
	case ERT_ACT_HARD_SIGMOID: return ERT_OP_HardSigmoid;
	case ERT_ACT_TANH: return ERT_OP_Tanh;
	case ERT_ACT_GELU: return ERT_OP_Gelu;
	default: return ERT_OP_COUNT;
	}
}

/*
 * The int8 form: a QLinearConv with "ert.residual" writes a new tensor again
 * (inputs 0 to 8, no clamp), and a fixed-rule QLinearAdd of it (y_scale,
 * y_zero_point) and the residual (inputs 9 to 13), with the Conv's clamp,
 * writes the Conv's old output.
 */
static ert_status unfuse_q8_residual(struct ert_graph *g, uint32_t i)
{
	struct ert_node *c = &g->nodes[i];
	const struct ert_attr *cl = ert_node_attr(c, "ert.clamp");
	int64_t lohi[2] = { 0, 0 };
	uint32_t n_cl = 0;
	char name[160];
	int32_t y = c->outputs[0], t, ai, in[8];

	if (cl) {
		const int64_t *v = ert_attr_ints(c, "ert.clamp", &n_cl);

		if (n_cl != 2)
			return ERT_STATUS_INVALID_MODEL;
		lohi[0] = v[0];
		lohi[1] = v[1];
	}
	snprintf(name, sizeof(name), "%.120s.pre_residual", g->tensors[y].name);
	t = ert_graph_add_tensor_unique(g, name, g->tensors[y].dtype, -1, NULL);
	if (t < 0)
		return ERT_STATUS_OUT_OF_MEMORY;
	c = &g->nodes[i];
	int32_t sides[8] = { t, c->inputs[6], c->inputs[7], c->inputs[9], c->inputs[10],
			     c->inputs[11], c->inputs[12], c->inputs[13] };

	memcpy(in, sides, sizeof(in));
	snprintf(name, sizeof(name), "%.120s.residual", g->nodes[i].name);
	ai = ert_graph_add_node(g, ERT_OP_QLinearAdd, name, 8, in, 1, &y);
	if (ai < 0)
		return ERT_STATUS_OUT_OF_MEMORY;
	c = &g->nodes[i];   /* the node array may have moved */
	struct ert_node *an = &g->nodes[ai];
	int64_t full[2] = { g->tensors[y].dtype == ERT_DTYPE_UINT8 ? 0 : -128,
			    g->tensors[y].dtype == ERT_DTYPE_UINT8 ? 255 : 127 };

	an->opset = c->opset;
	if (!ert_node_set_attr_int(g, an, "ert.requant", 1) ||
	    (cl && !ert_node_set_attr_ints(g, an, "ert.clamp", lohi, 2)) ||
	    (cl && !ert_node_set_attr_ints(g, c, "ert.clamp", full, 2)) ||
	    !ert_node_set_attr_int(g, c, "ert.residual", 0))
		return ERT_STATUS_OUT_OF_MEMORY;
	c->n_inputs = c->inputs[8] >= 0 ? 9 : 8;
	c->outputs[0] = t;
	return ERT_OK;
}

/* Remove attribute @name of @n (the arena keeps its storage). */
static void drop_attr(struct ert_node *n, const char *name)
{
	for (uint32_t k = 0; k < n->n_attrs; k++) {
		if (strcmp(n->attrs[k].name, name))
			continue;
		memmove(&n->attrs[k], &n->attrs[k + 1], (n->n_attrs - k - 1) * sizeof(n->attrs[0]));
		n->n_attrs--;
		return;
	}
}

/*
 * One step of node @i's fused epilogue as a node of its own: @op (Add or
 * Mul) of a new tensor "<y>.pre_<what>", which node @i writes instead of
 * its output y, and @in1 (< 0: out of memory making it), writing y under
 * the name "<node>.<what>" and taking node @i's activation; @flag, where
 * not NULL, is the attribute that marked the step, set to 0 on node @i.
 * Node @i's inputs are the caller's to drop.
 */
static ert_status split_step(struct ert_graph *g, uint32_t i, enum ert_op op, const char *what,
			     int32_t in1, const char *flag)
{
	struct ert_node *c = &g->nodes[i];
	struct ert_act_desc a = ert_node_act(c);
	float params[2] = { a.p0, a.p1 };
	int32_t y = c->outputs[0], ai, in[2] = { -1, in1 };
	char name[160];

	snprintf(name, sizeof(name), "%.120s.pre_%s", g->tensors[y].name, what);
	if (in1 >= 0)
		in[0] = ert_graph_add_tensor_unique(g, name, g->tensors[y].dtype, -1, NULL);
	snprintf(name, sizeof(name), "%.120s.%s", c->name, what);
	ai = in[0] < 0 ? -1 : ert_graph_add_node(g, op, name, 2, in, 1, &y);
	if (ai < 0)
		return ERT_STATUS_OUT_OF_MEMORY;
	c = &g->nodes[i];   /* the node array may have moved */
	struct ert_node *an = &g->nodes[ai];

	an->opset = c->opset;
	if ((a.type != ERT_ACT_NONE &&
	     (!ert_node_set_attr_int(g, an, "ert.act", a.type) ||
	      !ert_opt_set_attr_floats(g, an, "ert.act_params", params, 2))) ||
	    !ert_node_set_attr_int(g, c, "ert.act", ERT_ACT_NONE) ||
	    (flag && !ert_node_set_attr_int(g, c, flag, 0)))
		return ERT_STATUS_OUT_OF_MEMORY;
	c->outputs[0] = in[0];
	return ERT_OK;
}

/*
 * A MatMul's fused epilogue (opt/fuse-residual.c) as nodes again, from the
 * outside in: the residual's Add (input 3), the bias's Add (input 2), the
 * Mul by "ert.scale" (a new scalar constant), each writing what the MatMul
 * wrote and reading a new tensor the MatMul writes instead; the outermost
 * takes the MatMul's activation.
 */
static ert_status unfuse_matmul(struct ert_graph *g, uint32_t i)
{
	const struct ert_node *c = &g->nodes[i];
	const struct ert_attr *sa;
	char name[160];

	if (ert_attr_int(c, "ert.residual", 0) && c->n_inputs == 4) {
		if (split_step(g, i, ERT_OP_Add, "residual", c->inputs[3], "ert.residual") != ERT_OK)
			return ERT_STATUS_OUT_OF_MEMORY;
		g->nodes[i].n_inputs = g->nodes[i].inputs[2] >= 0 ? 3 : 2;
	}
	c = &g->nodes[i];
	if (ert_attr_int(c, "ert.bias", 0) && c->n_inputs >= 3) {
		if (split_step(g, i, ERT_OP_Add, "bias", c->inputs[2], "ert.bias") != ERT_OK)
			return ERT_STATUS_OUT_OF_MEMORY;
		g->nodes[i].n_inputs = 2;
	}
	c = &g->nodes[i];
	sa = ert_node_attr(c, "ert.scale");
	if (sa && sa->type == ERT_ATTR_FLOAT) {
		float *v = malloc(sizeof(*v));
		int32_t s;

		if (!v)
			return ERT_STATUS_OUT_OF_MEMORY;
		*v = sa->f;
		snprintf(name, sizeof(name), "%.120s.scale", c->name);
		s = ert_opt_add_const(g, name, ERT_DTYPE_FLOAT32, 0, NULL, v, sizeof(*v));
		if (split_step(g, i, ERT_OP_Mul, "scale", s, NULL) != ERT_OK)
			return ERT_STATUS_OUT_OF_MEMORY;
		drop_attr(&g->nodes[i], "ert.scale");
	}
	return ERT_OK;
}

/*
 * Undo residual fusion (opt/fuse-residual.c): each Conv with "ert.residual"
 * writes a new tensor again, and an Add of it and the residual, carrying the
 * Conv's activation, writes the Conv's old output; likewise the int8 form,
 * and a MatMul's fused residual, bias and scale (unfuse_matmul()).
 */
static ert_status unfuse_residuals(struct ert_graph *g, struct ert_err *err)
{
	uint32_t n_nodes = g->n_nodes;

	for (uint32_t i = 0; i < n_nodes; i++) {
		struct ert_node *c = &g->nodes[i];

		if (!c->dead && c->op == ERT_OP_QLinearConv && ert_attr_int(c, "ert.residual", 0) &&
		    c->n_inputs == 14 && c->n_outputs == 1 && c->outputs[0] >= 0) {
			ert_status st = unfuse_q8_residual(g, i);

			if (st == ERT_STATUS_OUT_OF_MEMORY)
				goto oom;
			if (st != ERT_OK) {
				ert_err_set(err, "failed to split the fused residual of '%s': bad ert.clamp",
					    g->nodes[i].name);
				return st;
			}
			continue;
		}
		if (!c->dead && c->op == ERT_OP_MatMul && c->n_outputs == 1 && c->outputs[0] >= 0) {
			if (unfuse_matmul(g, i) != ERT_OK)
				goto oom;
			continue;
		}
		if (c->dead || c->op != ERT_OP_Conv || !ert_attr_int(c, "ert.residual", 0) ||
		    c->n_inputs != 4 || c->inputs[3] < 0 || c->n_outputs != 1 || c->outputs[0] < 0)
			continue;
		if (split_step(g, i, ERT_OP_Add, "residual", c->inputs[3], "ert.residual") != ERT_OK)
			goto oom;
		g->nodes[i].n_inputs = 3;
	}
	return ERT_OK;
oom:
	ert_err_set(err, "failed to split fused residual, bias and scale: out of memory");
	return ERT_STATUS_OUT_OF_MEMORY;
}

ert_status ert_opt_unfuse_activations(struct ert_graph *g, struct ert_err *err)
{
	/* the fused attention's MatMuls first: their folded Transposes are split next */
	ert_status st = ert_opt_unfuse_attention(g, err);

	/* the inverted-residual blocks' Convs next: their residuals and activations are split below */
	if (st == ERT_OK)
		st = ert_opt_unfuse_irblock(g, err);
	/*
	 * residuals before the folded Transposes: a MatMul's residual has the
	 * stored (transposed) output's shape, which its own output would lose
	 */
	if (st == ERT_OK)
		st = unfuse_residuals(g, err);
	if (st == ERT_OK)
		st = ert_opt_unfold_matmul_perms(g, err);
	uint32_t n_nodes = g->n_nodes;

	if (st != ERT_OK)
		return st;

	for (uint32_t i = 0; i < n_nodes; i++) {
		struct ert_node *host = &g->nodes[i];
		struct ert_act_desc a = ert_node_act(host);
		enum ert_op op = unfused_op(a.type);
		char name[160];
		int32_t y, t, ai;

		if (host->dead || op == ERT_OP_COUNT || host->n_outputs != 1 || host->outputs[0] < 0)
			continue;
		y = host->outputs[0];
		snprintf(name, sizeof(name), "%.120s.pre_act", g->tensors[y].name);
		t = ert_graph_add_tensor_unique(g, name, g->tensors[y].dtype, -1, NULL);
		snprintf(name, sizeof(name), "%.120s.act", g->nodes[i].name);
		ai = t < 0 ? -1 : ert_graph_add_node(g, op, name, 1, &t, 1, &y);
		if (ai < 0)
			goto oom;
		host = &g->nodes[i];   /* the node array may have moved */
		struct ert_node *an = &g->nodes[ai];

		/* Gelu exists from opset 20: a host of an older opset got it from a newer model */
		an->opset = op == ERT_OP_Gelu && host->opset && host->opset < 20 ? 20 : host->opset;
		if ((op == ERT_OP_LeakyRelu && !ert_node_set_attr_float(g, an, "alpha", a.p0)) ||
		    (op == ERT_OP_Gelu && a.p0 != 0.0f &&
		     !ert_node_set_attr_string(g, an, "approximate", "tanh")) ||
		    (op == ERT_OP_HardSigmoid && (!ert_node_set_attr_float(g, an, "alpha", a.p0) ||
						  !ert_node_set_attr_float(g, an, "beta", a.p1))) ||
		    !ert_node_set_attr_int(g, host, "ert.act", ERT_ACT_NONE))
			goto oom;
		host->outputs[0] = t;
	}
	return ert_graph_toposort(g, err);
oom:
	ert_err_set(err, "failed to split fused activations: out of memory");
	return ERT_STATUS_OUT_OF_MEMORY;
}
