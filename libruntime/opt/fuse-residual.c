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
 */
#include <stdlib.h>
#include <string.h>

#include "opt/opt-private.h"

static bool same_static_shape(const struct ert_tensor *a, const struct ert_tensor *b)
{
	return ert_opt_shape_static(a) && ert_opt_shape_static(b) && a->rank == b->rank &&
	       !memcmp(a->dims, b->dims, (size_t)a->rank * sizeof(a->dims[0]));
}

static bool from_dequantize(const struct ert_graph *g, const int32_t *producer, int32_t t)
{
	return t >= 0 && producer[t] >= 0 && g->nodes[producer[t]].op == ERT_OP_DequantizeLinear;
}

/* May Conv @c (output @x) take the residual @r? */
static bool fusable(const struct ert_graph *g, const int32_t *producer, const struct ert_node *c,
		    int32_t x, int32_t r)
{
	if (c->op != ERT_OP_Conv || c->n_outputs != 1 || c->outputs[0] != x || c->n_inputs < 2 ||
	    c->n_inputs > 3 || ert_attr_int(c, "group", 1) != 1 ||
	    ert_node_act(c).type != ERT_ACT_NONE || ert_attr_int(c, "ert.residual", 0))
		return false;
	if (g->tensors[x].dtype != ERT_DTYPE_FLOAT32 || g->tensors[r].dtype != ERT_DTYPE_FLOAT32 ||
	    !same_static_shape(&g->tensors[x], &g->tensors[r]))
		return false;
	for (uint32_t k = 0; k < c->n_inputs; k++)
		if (from_dequantize(g, producer, c->inputs[k]))
			return false;
	return !from_dequantize(g, producer, r);
}

ert_status ert_opt_fuse_residual(struct ert_graph *g, bool *changed, struct ert_err *err)
{
	uint32_t *uses = ert_opt_count_uses(g);
	int32_t *producer = ert_opt_producers(g);
	ert_status st = ERT_OK;

	if (!uses || !producer) {
		ert_err_set(err, "failed to fuse residual adds: out of memory");
		st = ERT_STATUS_OUT_OF_MEMORY;
		goto out;
	}
	for (uint32_t ai = 0; ai < g->n_nodes; ai++) {
		struct ert_node *add = &g->nodes[ai];

		if (add->dead || add->op != ERT_OP_Add || add->n_inputs != 2 || add->n_outputs != 1 ||
		    add->outputs[0] < 0 || add->inputs[0] < 0 || add->inputs[1] < 0 ||
		    add->inputs[0] == add->inputs[1])
			continue;
		for (int side = 0; side < 2; side++) {
			int32_t x = add->inputs[side], r = add->inputs[1 - side];

			if (producer[x] < 0 || uses[x] != 1 || ert_opt_is_graph_output(g, x))
				continue;
			struct ert_node *conv = &g->nodes[producer[x]];

			if (conv->dead || !fusable(g, producer, conv, x, r))
				continue;
			struct ert_act_desc a = ert_node_act(add);
			float params[2] = { a.p0, a.p1 };
			int32_t *in = realloc(conv->inputs, 4 * sizeof(*in));

			if (!in) {
				ert_err_set(err, "failed to fuse '%s' into '%s': out of memory",
					    add->name, conv->name);
				st = ERT_STATUS_OUT_OF_MEMORY;
				goto out;
			}
			conv->inputs = in;
			if (conv->n_inputs < 3)
				in[2] = -1;
			in[3] = r;
			if (!ert_node_set_attr_int(g, conv, "ert.act", a.type) ||
			    !ert_opt_set_attr_floats(g, conv, "ert.act_params", params, 2) ||
			    !ert_node_set_attr_int(g, conv, "ert.residual", 1)) {
				/* undo: the Conv computes what it did before */
				ert_node_set_attr_int(g, conv, "ert.act", ERT_ACT_NONE);
				ert_node_set_attr_int(g, conv, "ert.residual", 0);
				ert_err_set(err, "failed to fuse '%s' into '%s': out of memory",
					    add->name, conv->name);
				st = ERT_STATUS_OUT_OF_MEMORY;
				goto out;
			}
			conv->n_inputs = 4;
			conv->outputs[0] = add->outputs[0];
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
