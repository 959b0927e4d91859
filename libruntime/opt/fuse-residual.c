/* SPDX-License-Identifier: MIT */
/*
 * Residual fusion: Add(Conv(...), R), where the Add is the Conv output's only
 * use and R has exactly the Conv output's (static) shape, becomes the Conv
 * with R as a fourth input and the attribute "ert.residual" = 1. The Conv
 * then adds R to its result after the bias and before its activation, which
 * it takes over from the Add (activation fusion has put the Relu of a
 * ResNet block there): the sum is written once instead of read back.
 *
 * Float32 Conv of group 1 only, whose own activation is none (the sum must
 * come before it). Runs after QDQ fusion, so an int8 pattern is never
 * broken up, and leaves alone a Conv or an R that a DequantizeLinear feeds.
 * ert_opt_unfuse_activations() undoes it for the quantizer.
 *
 * Bias fusion, the same for a MatMul: Add(MatMul(A, B), b), where the Add is
 * the MatMul output's only use and b a float32 vector of B's last dim N (a
 * linear layer's bias, on either side of the Add), becomes the MatMul with b
 * as a third input and "ert.bias" = 1; the MatMul adds b to every row once
 * its sum is complete (the value a separate Add computes) and takes the
 * Add's activation (a ViT MLP's Gelu). Float32, B of rank 2 or more, and no
 * activation of the MatMul's own; not where a DequantizeLinear feeds it.
 * The residual fusion above takes a MatMul too (float32, with or without
 * its fused bias, no activation of its own; ERT_FUSE_MATMUL_RESIDUAL=0
 * turns that off): its input 3, added after the bias. And a Mul of a
 * MatMul's product by a constant float32 scalar (a ViT's attention scale
 * after Q K^T), the Mul the product's only use and of its static shape,
 * becomes the MatMul's float "ert.scale": the complete sum times it once,
 * the Mul's single rounding, before any bias, residual and activation
 * (so only a MatMul with none of them takes it, and those fused later
 * come after it, as in the graph; ERT_FUSE_MATMUL_SCALE=0 turns it off).
 *
 * The int8 form (docs/int8.md, "Fused residual"): a fixed-rule QLinearAdd
 * of a fixed-rule QLinearConv's output, its only use, whose scale and zero
 * point the Add reads as the Conv wrote them, and of R of exactly that
 * shape and type, becomes the QLinearConv with "ert.residual" = 1 and five
 * more inputs: R, R's scale and zero point, the sum's scale and zero point.
 * The Conv keeps its own requantisation, which must not clamp (no ert.clamp
 * narrower than its type), and takes the Add's ert.clamp. The Add's
 * arithmetic is symmetric in its inputs, so which side the Conv was on does
 * not matter. The graph optimiser runs it only with ERT_FUSE_Q8_RESIDUAL=1
 * (ert_opt_fuse_q8_residual_pass(); ert_opt_fuse_q8_residual() is called by
 * whoever asks for it): measured on Sapphire Rapids at the amx level, the
 * fused int8 resnet50 was about 4 % slower than the two ops while the conv
 * epilogue added in the three requantisations' lanes, and with the Add's
 * 32-bit form in the epilogue still 11 % slower (19.6 against 17.6 ms,
 * docs/int8.md), so the default stays off.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/linalg-geom.h"
#include "ops/qlinear.h"
#include "opt/opt-private.h"
#include "opt/passes.h"

static bool same_static_shape(const struct ert_tensor *a, const struct ert_tensor *b)
{
	return ert_opt_shape_static(a) && ert_opt_shape_static(b) && a->rank == b->rank &&
	       !memcmp(a->dims, b->dims, (size_t)a->rank * sizeof(a->dims[0]));
}

static bool from_dequantize(const struct ert_graph *g, const int32_t *producer, int32_t t)
{
	return t >= 0 && producer[t] >= 0 && g->nodes[producer[t]].op == ERT_OP_DequantizeLinear;
}

/* May Conv or MatMul @c (output @x) take the residual @r? */
static bool fusable(const struct ert_graph *g, const int32_t *producer, const struct ert_node *c,
		    int32_t x, int32_t r)
{
	bool mm = c->op == ERT_OP_MatMul;

	if ((c->op != ERT_OP_Conv && !mm) || c->n_outputs != 1 || c->outputs[0] != x ||
	    c->n_inputs < 2 || c->n_inputs > 3 || ert_node_act(c).type != ERT_ACT_NONE ||
	    ert_attr_int(c, "ert.residual", 0))
		return false;
	if (mm ? !ert_opt_env_switch("ERT_FUSE_MATMUL_RESIDUAL", true) ||
			 c->inputs[0] < 0 || c->inputs[1] < 0 ||
			 (c->n_inputs == 3 && !ert_attr_int(c, "ert.bias", 0))
	       : ert_attr_int(c, "group", 1) != 1)
		return false;
	if (g->tensors[x].dtype != ERT_DTYPE_FLOAT32 || g->tensors[r].dtype != ERT_DTYPE_FLOAT32 ||
	    !same_static_shape(&g->tensors[x], &g->tensors[r]))
		return false;
	for (uint32_t k = 0; k < c->n_inputs; k++)
		if (c->inputs[k] >= 0 && from_dequantize(g, producer, c->inputs[k]))
			return false;
	return !from_dequantize(g, producer, r);
}

/* A constant scalar float32 scale at @t, or NaN. */
static double const_scale(const struct ert_graph *g, int32_t t)
{
	const float *v = t >= 0 ? ert_opt_const_f32(g, t, 1) : NULL;

	return v ? (double)*v : NAN;
}

/* A zero point of @dt at @t: absent is 0; false unless a constant scalar. */
static bool const_zp(const struct ert_graph *g, int32_t t, ert_dtype dt, int32_t *zp)
{
	struct ert_value v;

	*zp = 0;
	if (t < 0)
		return true;
	ert_opt_tensor_value(g, t, &v);
	if (!v.data || v.dtype != dt || v.numel != 1)
		return false;
	*zp = ert_qparam_int(&v, 0);
	return true;
}

/* ert.clamp of @n is absent or the whole range of @dt. */
static bool clamp_is_full(const struct ert_node *n, ert_dtype dt)
{
	struct ert_qrule r;

	return !ert_qrule_read(n, dt, &r) && r.lo == (dt == ERT_DTYPE_UINT8 ? 0 : -128) &&
	       r.hi == (dt == ERT_DTYPE_UINT8 ? 255 : 127);
}

/* May QLinearConv @c (output @x) take QLinearAdd @add's other input, side @side? */
static bool q8_fusable(const struct ert_graph *g, const struct ert_node *c,
		       const struct ert_node *add, int side)
{
	int32_t x = add->inputs[3 * side], r = add->inputs[3 - 3 * side];
	int32_t xzp = add->n_inputs > (uint32_t)(3 * side + 2) ? add->inputs[3 * side + 2] : -1;
	ert_dtype dt = g->tensors[x].dtype;
	struct ert_qrule rule;
	int32_t a, b;
	double ys, as;

	if (c->op != ERT_OP_QLinearConv || c->n_outputs != 1 || c->outputs[0] != x ||
	    c->n_inputs < 8 || c->n_inputs > 9 || ert_attr_int(c, "ert.requant", 0) != 1 ||
	    ert_attr_int(c, "ert.residual", 0) || ert_node_act(c).type != ERT_ACT_NONE ||
	    (dt != ERT_DTYPE_INT8 && dt != ERT_DTYPE_UINT8) || !clamp_is_full(c, dt) ||
	    ert_qrule_read(add, dt, &rule))
		return false;
	if (r < 0 || g->tensors[r].dtype != dt || g->tensors[add->outputs[0]].dtype != dt ||
	    !same_static_shape(&g->tensors[x], &g->tensors[r]) ||
	    !same_static_shape(&g->tensors[x], &g->tensors[add->outputs[0]]))
		return false;
	/* the Add reads the Conv's output with the scale and zero point it was written with */
	ys = const_scale(g, c->inputs[6]);
	as = const_scale(g, add->inputs[3 * side + 1]);
	if (!(ys > 0.0) || ys != as || !const_zp(g, c->inputs[7], dt, &a) ||
	    !const_zp(g, xzp, dt, &b) || a != b)
		return false;
	/* R's and the sum's scales and zero points, as shape inference will want them */
	return const_scale(g, add->inputs[4 - 3 * side]) > 0.0 && const_scale(g, add->inputs[6]) > 0.0 &&
	       const_zp(g, add->n_inputs > (uint32_t)(5 - 3 * side) ? add->inputs[5 - 3 * side] : -1,
			dt, &a) &&
	       const_zp(g, add->n_inputs > 7 ? add->inputs[7] : -1, dt, &b);
}

/* QLinearConv @ci takes QLinearAdd @add (the Conv on @side); false on out-of-memory. */
static bool q8_fuse(struct ert_graph *g, uint32_t ci, struct ert_node *add, int side)
{
	struct ert_node *c = &g->nodes[ci];
	int32_t *in = realloc(c->inputs, 14 * sizeof(*in));
	struct ert_qrule rule;
	bool clamp = ert_node_attr(add, "ert.clamp") != NULL;
	int64_t lohi[2];

	ert_qrule_read(add, g->tensors[add->outputs[0]].dtype, &rule); /* q8_fusable() checked it */
	lohi[0] = rule.lo;
	lohi[1] = rule.hi;
	if (!in)
		return false;
	c->inputs = in;
	if (c->n_inputs < 9)
		in[8] = -1;
	in[9] = add->inputs[3 - 3 * side];
	in[10] = add->inputs[4 - 3 * side];
	in[11] = add->n_inputs > (uint32_t)(5 - 3 * side) ? add->inputs[5 - 3 * side] : -1;
	in[12] = add->inputs[6];
	in[13] = add->n_inputs > 7 ? add->inputs[7] : -1;
	if (!ert_node_set_attr_int(g, c, "ert.residual", 1))
		return false;
	if (clamp && !ert_node_set_attr_ints(g, c, "ert.clamp", lohi, 2)) {
		/* undo: the Conv computes what it did before */
		ert_node_set_attr_int(g, c, "ert.residual", 0);
		return false;
	}
	c->n_inputs = 14;
	c->outputs[0] = add->outputs[0];
	return true;
}

/*
 * A float Add(X, Y) fusion: the node that writes X (the Add its only use)
 * takes Y as input @slot (inputs between its own and @slot absent), the
 * attribute @flag = 1, and the Add's activation and output.
 */
struct add_fusion {
	const char *what;  /* "residual", "bias": in messages */
	/* may node @n (output @x) take @y? */
	bool (*fusable)(const struct ert_graph *g, const int32_t *producer,
			const struct ert_node *n, int32_t x, int32_t y);
	uint32_t slot;
	const char *flag;
};

/* The float Add fusion @fu, or with @fu NULL the int8 residual one. */
static ert_status fuse(struct ert_graph *g, const struct add_fusion *fu, bool *changed,
		       struct ert_err *err)
{
	uint32_t *uses = ert_opt_count_uses(g);
	int32_t *producer = ert_opt_producers(g);
	ert_status st = ERT_OK;

	if (!uses || !producer) {
		ert_err_set(err, "failed to fuse %s adds: out of memory",
			    fu ? fu->what : "residual");
		st = ERT_STATUS_OUT_OF_MEMORY;
		goto out;
	}
	for (uint32_t ai = 0; ai < g->n_nodes; ai++) {
		struct ert_node *add = &g->nodes[ai];

		if (!fu && !add->dead && add->op == ERT_OP_QLinearAdd &&
		    ert_attr_int(add, "ert.requant", 0) == 1 &&
		    add->n_inputs >= 7 && add->n_inputs <= 8 && add->n_outputs == 1 &&
		    add->outputs[0] >= 0 && add->inputs[0] >= 0 && add->inputs[3] >= 0 &&
		    add->inputs[0] != add->inputs[3] && ert_node_act(add).type == ERT_ACT_NONE) {
			for (int side = 0; side < 2; side++) {
				int32_t x = add->inputs[3 * side];

				if (producer[x] < 0 || uses[x] != 1 || ert_opt_is_graph_output(g, x) ||
				    g->nodes[producer[x]].dead ||
				    !q8_fusable(g, &g->nodes[producer[x]], add, side))
					continue;
				if (!q8_fuse(g, (uint32_t)producer[x], add, side)) {
					ert_err_set(err, "failed to fuse '%s' into '%s': out of memory",
						    add->name, g->nodes[producer[x]].name);
					st = ERT_STATUS_OUT_OF_MEMORY;
					goto out;
				}
				producer[add->outputs[0]] = producer[x];
				add->dead = true;
				*changed = true;
				break;
			}
			continue;
		}
		if (!fu || add->dead || add->op != ERT_OP_Add || add->n_inputs != 2 ||
		    add->n_outputs != 1 || add->outputs[0] < 0 || add->inputs[0] < 0 || add->inputs[1] < 0 ||
		    add->inputs[0] == add->inputs[1])
			continue;
		for (int side = 0; side < 2; side++) {
			int32_t x = add->inputs[side], y = add->inputs[1 - side];

			if (producer[x] < 0 || uses[x] != 1 || ert_opt_is_graph_output(g, x))
				continue;
			struct ert_node *n = &g->nodes[producer[x]];

			if (n->dead || !fu->fusable(g, producer, n, x, y))
				continue;
			struct ert_act_desc a = ert_node_act(add);
			float params[2] = { a.p0, a.p1 };
			int32_t *in = realloc(n->inputs, (fu->slot + 1) * sizeof(*in));

			if (in)
				n->inputs = in;
			if (!in || !ert_node_set_attr_int(g, n, "ert.act", a.type) ||
			    !ert_opt_set_attr_floats(g, n, "ert.act_params", params, 2) ||
			    !ert_node_set_attr_int(g, n, fu->flag, 1)) {
				/* undo: the node computes what it did before */
				ert_node_set_attr_int(g, n, "ert.act", ERT_ACT_NONE);
				ert_node_set_attr_int(g, n, fu->flag, 0);
				ert_err_set(err, "failed to fuse '%s' into '%s': out of memory",
					    add->name, n->name);
				st = ERT_STATUS_OUT_OF_MEMORY;
				goto out;
			}
			for (uint32_t k = n->n_inputs; k < fu->slot; k++)
				in[k] = -1;
			in[fu->slot] = y;
			n->n_inputs = fu->slot + 1;
			n->outputs[0] = add->outputs[0];
			producer[add->outputs[0]] = producer[x];
			add->dead = true;
			*changed = true;
			break;
		}
	}
out:
	free(uses);
	free(producer);
	return st;
}

/* May MatMul @mm (output @x, read by an Add alone) take the Add's other input @b as ert.bias? */
static bool bias_fusable(const struct ert_graph *g, const int32_t *producer,
			 const struct ert_node *mm, int32_t x, int32_t b)
{
	const struct ert_tensor *w, *bt = &g->tensors[b];

	if (mm->op != ERT_OP_MatMul || mm->n_inputs != 2 || mm->n_outputs != 1 ||
	    mm->outputs[0] != x || mm->inputs[0] < 0 || mm->inputs[1] < 0 ||
	    ert_node_act(mm).type != ERT_ACT_NONE || ert_attr_int(mm, "ert.bias", 0))
		return false;
	w = &g->tensors[mm->inputs[1]];
	/* N: B's last dim, after a folded Transpose of B (ert.perm_b, fold-transpose.c) */
	int32_t perm[ERT_MAX_RANK];

	if (w->rank < 2 || !ert_matmul_perm(mm, ERT_MATMUL_PERM_B, w->rank, perm))
		return false;
	int64_t n = w->dims[perm[w->rank - 1]];

	/* the product's type is B's (its shape may be unknown: a symbolic batch PyTorch reshapes) */
	if ((g->tensors[x].dtype != ERT_DTYPE_FLOAT32 && g->tensors[x].dtype != ERT_DTYPE_UNDEFINED) ||
	    bt->dtype != ERT_DTYPE_FLOAT32 || w->dtype != ERT_DTYPE_FLOAT32 || n < 1 ||
	    !ert_opt_shape_static(bt) || bt->rank != 1 || bt->dims[0] != n)
		return false;
	return !from_dequantize(g, producer, mm->inputs[0]) &&
	       !from_dequantize(g, producer, mm->inputs[1]) && !from_dequantize(g, producer, b);
}

ert_status ert_opt_fuse_matmul_bias(struct ert_graph *g, bool *changed, struct ert_err *err)
{
	static const struct add_fusion bias = { "bias", bias_fusable, 2, "ert.bias" };

	return fuse(g, &bias, changed, err);
}

ert_status ert_opt_fuse_residual(struct ert_graph *g, bool *changed, struct ert_err *err)
{
	static const struct add_fusion residual = { "residual", fusable, 3, "ert.residual" };

	return fuse(g, &residual, changed, err);
}

/* May MatMul @mm (output @x, read by Mul @mul alone) take the Mul's constant @s as ert.scale? */
static bool scale_fusable(const struct ert_graph *g, const int32_t *producer,
			  const struct ert_node *mm, int32_t x, int32_t s, const struct ert_node *mul)
{
	if (mm->op != ERT_OP_MatMul || mm->n_inputs != 2 || mm->n_outputs != 1 ||
	    mm->outputs[0] != x || mm->inputs[0] < 0 || mm->inputs[1] < 0 ||
	    ert_node_act(mm).type != ERT_ACT_NONE || ert_attr_int(mm, "ert.bias", 0) ||
	    ert_attr_int(mm, "ert.residual", 0) || ert_node_attr(mm, "ert.scale") ||
	    ert_node_act(mul).type != ERT_ACT_NONE)
		return false;
	/* a scalar that broadcasts to nothing wider: the Mul keeps the product's shape */
	if (g->tensors[x].dtype != ERT_DTYPE_FLOAT32 || !ert_opt_const_f32(g, s, 1) ||
	    g->tensors[mul->outputs[0]].dtype != ERT_DTYPE_FLOAT32 ||
	    !same_static_shape(&g->tensors[x], &g->tensors[mul->outputs[0]]))
		return false;
	return !from_dequantize(g, producer, mm->inputs[0]) &&
	       !from_dequantize(g, producer, mm->inputs[1]);
}

ert_status ert_opt_fuse_matmul_scale(struct ert_graph *g, bool *changed, struct ert_err *err)
{
	uint32_t *uses;
	int32_t *producer;
	ert_status st = ERT_OK;

	if (!ert_opt_env_switch("ERT_FUSE_MATMUL_SCALE", true))
		return ERT_OK;
	uses = ert_opt_count_uses(g);
	producer = ert_opt_producers(g);
	if (!uses || !producer) {
		ert_err_set(err, "failed to fuse scales: out of memory");
		st = ERT_STATUS_OUT_OF_MEMORY;
		goto out;
	}
	for (uint32_t mi = 0; mi < g->n_nodes; mi++) {
		struct ert_node *mul = &g->nodes[mi];

		if (mul->dead || mul->op != ERT_OP_Mul || mul->n_inputs != 2 || mul->n_outputs != 1 ||
		    mul->outputs[0] < 0 || mul->inputs[0] < 0 || mul->inputs[1] < 0)
			continue;
		for (int side = 0; side < 2; side++) {
			int32_t x = mul->inputs[side], sc = mul->inputs[1 - side];

			if (producer[x] < 0 || uses[x] != 1 || ert_opt_is_graph_output(g, x))
				continue;
			struct ert_node *mm = &g->nodes[producer[x]];

			if (mm->dead || !scale_fusable(g, producer, mm, x, sc, mul))
				continue;
			/* x * s and s * x round alike */
			if (!ert_node_set_attr_float(g, mm, "ert.scale", *ert_opt_const_f32(g, sc, 1))) {
				ert_err_set(err, "failed to fuse '%s' into '%s': out of memory",
					    mul->name, mm->name);
				st = ERT_STATUS_OUT_OF_MEMORY;
				goto out;
			}
			mm->outputs[0] = mul->outputs[0];
			producer[mul->outputs[0]] = producer[x];
			mul->dead = true;
			*changed = true;
			break;
		}
	}
out:
	free(uses);
	free(producer);
	return st;
}

ert_status ert_opt_fuse_q8_residual(struct ert_graph *g, bool *changed, struct ert_err *err)
{
	bool fused = false;
	ert_status st = fuse(g, NULL, &fused, err);

	/* the fused Adds go, then the optimiser's passes tidy up (shapes, order) */
	if (fused) {
		ert_status cst = ert_graph_compact(g);

		*changed = true;
		if (cst != ERT_OK && st == ERT_OK) {
			ert_err_set(err, "failed to compact graph: out of memory");
			st = cst;
		}
		if (st == ERT_OK)
			st = ert_graph_optimize(g, err);
	}
	return st;
}

ert_status ert_opt_fuse_q8_residual_pass(struct ert_graph *g, bool *changed, struct ert_err *err)
{
	/* the driver compacts the graph and sorts it again after the round */
	if (!ert_opt_env_switch("ERT_FUSE_Q8_RESIDUAL", ERT_OPT_Q8_RESIDUAL_DEFAULT))
		return ERT_OK;
	return fuse(g, NULL, changed, err);
}
