/* SPDX-License-Identifier: MIT */
/*
 * Constant folding: a node whose inputs are all constants is evaluated once on
 * the CPU and its outputs become constants; Shape and Size of a tensor whose
 * shape is static become constants too. Walking in topological order, the
 * Shape→Gather→Unsqueeze→Concat chains PyTorch exports collapse in one walk,
 * leaving Reshape with a constant shape.
 *
 * Not folded: nodes writing a graph output (the output stays computed by a
 * node, so sessions never see a constant output), Quantize/DequantizeLinear
 * (quantised backends match Q/DQ patterns), and outputs much larger than their
 * inputs (ConstantOfShape filling weights would inflate the model file).
 */
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu-impl.h"
#include "opt/opt-private.h"

static bool writes_graph_output(const struct ert_graph *g, const struct ert_node *n)
{
	for (uint32_t k = 0; k < n->n_outputs; k++)
		if (n->outputs[k] >= 0 && ert_opt_is_graph_output(g, n->outputs[k]))
			return true;
	return false;
}

/* Shape (start/end since opset 15) and Size of a statically shaped tensor. */
static ert_status fold_shape(struct ert_graph *g, struct ert_node *n, bool *changed,
			     struct ert_err *err)
{
	const struct ert_tensor *x;
	struct ert_value v;
	int64_t *data;

	if (n->n_inputs < 1 || n->inputs[0] < 0 || n->n_outputs < 1 || n->outputs[0] < 0)
		return ERT_OK;
	x = &g->tensors[n->inputs[0]];
	if (!ert_opt_shape_static(x))
		return ERT_OK;
	memset(&v, 0, sizeof(v));
	v.dtype = ERT_DTYPE_INT64;
	if (n->op == ERT_OP_Size) {
		v.rank = 0;
		v.numel = 1;
	} else {
		int64_t r = x->rank;
		int64_t start = ert_attr_int(n, "start", 0), end = ert_attr_int(n, "end", r);

		start = start < 0 ? start + r : start;
		end = end < 0 ? end + r : end;
		start = start < 0 ? 0 : start > r ? r : start;
		end = end < 0 ? 0 : end > r ? r : end;
		v.rank = 1;
		v.dims[0] = end > start ? end - start : 0;
		v.numel = v.dims[0];
	}
	v.nbytes = (size_t)v.numel * sizeof(int64_t);
	data = malloc(v.nbytes ? v.nbytes : 1);
	if (!data) {
		ert_err_set(err, "failed to fold '%s': out of memory", n->name);
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	if (n->op == ERT_OP_Size) {
		data[0] = ert_shape_numel(x->rank, x->dims);
	} else {
		int64_t start = n->op == ERT_OP_Shape ? ert_attr_int(n, "start", 0) : 0;

		start = start < 0 ? start + x->rank : start;
		start = start < 0 ? 0 : start;
		for (int64_t i = 0; i < v.numel; i++)
			data[i] = x->dims[start + i];
	}
	v.data = data;
	ert_tensor_make_const(g, n->outputs[0], &v);
	n->dead = true;
	*changed = true;
	return ERT_OK;
}

static bool all_inputs_const(const struct ert_graph *g, const struct ert_node *n)
{
	bool any = false;

	for (uint32_t k = 0; k < n->n_inputs; k++) {
		int32_t t = n->inputs[k];

		if (t < 0)
			continue;
		if (!(g->tensors[t].flags & ERT_TENSOR_CONST))
			return false;
		any = true;
	}
	return any;
}

/* Ops whose cost is not linear in their input and output sizes. */
static bool is_heavy(enum ert_op op)
{
	switch (op) {
	case ERT_OP_Conv: case ERT_OP_ConvTranspose: case ERT_OP_ConvInteger:
	case ERT_OP_QLinearConv: case ERT_OP_Gemm: case ERT_OP_MatMul:
	case ERT_OP_MatMulInteger: case ERT_OP_QLinearMatMul: case ERT_OP_Einsum:
	case ERT_OP_MaxPool: case ERT_OP_AveragePool: case ERT_OP_LpPool:
	case ERT_OP_Resize: case ERT_OP_Upsample: case ERT_OP_LRN:
		return true;
	default:
		return false;
	}
}

/*
 * Infer first, so that oversized outputs are refused before anything is
 * allocated. For heavy ops, output elements times the largest input bounds the
 * work (a matmul's K, a convolution's taps, a pool's window); a model of a few
 * bytes must not keep the importer busy for minutes.
 */
static bool fold_size_ok(const struct ert_graph *g, const struct ert_node *n,
			 const struct ert_value *const *in, struct ert_value *out)
{
	ert_infer_fn infer = ert_op_infer(n->op);
	struct ert_value *outp[64 + 8] = { NULL };
	struct ert_err local;
	size_t in_bytes = 0, out_bytes = 0;
	int64_t max_in = 0, out_numel = 0;

	if (!infer || n->n_outputs > 64)
		return false;
	for (uint32_t k = 0; k < n->n_outputs; k++) {
		memset(&out[k], 0, sizeof(out[k]));
		outp[k] = &out[k];
	}
	struct ert_infer_ctx ctx = {
		.graph = g, .node = n, .in = in, .out = outp,
		.n_in = n->n_inputs, .n_out = n->n_outputs, .err = &local,
	};

	if (infer(&ctx) != ERT_OK)
		return false;
	for (uint32_t k = 0; k < n->n_inputs; k++) {
		if (!in[k])
			continue;
		in_bytes += in[k]->nbytes;
		max_in = in[k]->numel > max_in ? in[k]->numel : max_in;
	}
	for (uint32_t k = 0; k < n->n_outputs; k++) {
		if (!ert_value_finish(&out[k]))
			return false;
		if (out[k].nbytes > SIZE_MAX / 4 - out_bytes)
			return false;
		out_bytes += out[k].nbytes;
		out_numel += out[k].numel;
	}
	if (is_heavy(n->op) && max_in && out_numel > ERT_OPT_FOLD_MAX_WORK / max_in)
		return false;
	return out_bytes <= ERT_OPT_FOLD_MAX_BYTES || out_bytes <= 2 * in_bytes;
}

static ert_status fold_node(struct ert_graph *g, struct ert_node *n, bool *changed,
			    struct ert_err *err)
{
	struct ert_value in_vals[64], out[64];
	const struct ert_value *in[64 + 8] = { NULL }; /* spare NULLs for reading ahead */
	struct ert_err local;

	/*
	 * Control flow stays a node: a Loop of constants could run for as long
	 * as its trip count says, at import time (docs/control-flow.md).
	 */
	if (n->n_inputs > 64 || n->n_outputs > 64 || n->n_outputs == 0 ||
	    n->op == ERT_OP_If || n->op == ERT_OP_Loop || n->op == ERT_OP_Scan)
		return ERT_OK;
	for (uint32_t k = 0; k < n->n_inputs; k++) {
		if (n->inputs[k] >= 0) {
			ert_opt_tensor_value(g, n->inputs[k], &in_vals[k]);
			in[k] = &in_vals[k];
		}
	}
	if (!fold_size_ok(g, n, in, out))
		return ERT_OK;
	/* Ops without a CPU kernel yet, or cases it refuses, simply stay nodes. */
	if (ert_cpu_eval_node(g, n, in, n->n_inputs, out, n->n_outputs, &local) != ERT_OK)
		return ERT_OK;
	bool sane = true;

	for (uint32_t k = 0; k < n->n_outputs; k++)
		sane = sane && out[k].rank >= 0 && out[k].rank <= ERT_MAX_RANK &&
		       ert_dtype_valid(out[k].dtype);
	for (uint32_t k = 0; k < n->n_outputs; k++) {
		if (sane && n->outputs[k] >= 0)
			ert_tensor_make_const(g, n->outputs[k], &out[k]);
		free(out[k].data);
	}
	if (sane) {
		n->dead = true;
		*changed = true;
	}
	(void)err;
	return ERT_OK;
}

ert_status ert_opt_fold_constants(struct ert_graph *g, bool *changed, struct ert_err *err)
{
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		struct ert_node *n = &g->nodes[i];
		ert_status st = ERT_OK;

		/* a random generator draws anew at every run */
		if (n->dead || writes_graph_output(g, n) || n->op == ERT_OP_QuantizeLinear ||
		    n->op == ERT_OP_DequantizeLinear || ert_op_is_random(n->op) ||
		    ert_op_is_sequence(n->op))
			continue;
		if (n->op == ERT_OP_Shape || n->op == ERT_OP_Size)
			st = fold_shape(g, n, changed, err);
		else if (all_inputs_const(g, n))
			st = fold_node(g, n, changed, err);
		if (st != ERT_OK)
			return st;
	}
	return ERT_OK;
}
