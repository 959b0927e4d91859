/* SPDX-License-Identifier: MIT */
/*
 * Control flow: If, Loop, Scan (docs/control-flow.md). The structure of
 * their subgraphs, checked when a graph is validated, and shape inference.
 *
 * Shape inference runs the subgraph's own node inference for the shapes
 * the node sees (nothing is evaluated; constants' values are known). Where
 * that tells every output's shape, the node is planned like any other;
 * where it does not (a branch chosen at run time whose outputs differ, a
 * Loop's scan outputs, a body whose shapes depend on computed values),
 * those extents are -1 and the kernel gives them when it runs, as for the
 * data-dependent ops (docs/dynamic-shapes.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu-impl.h"
#include "ert-op-impl.h"

/* "Op 'name': ..." into @err, returning ERT_STATUS_INVALID_MODEL (ert_node_fail). */
#define sub_fail(n, err, ...) ert_node_fail(n, err, ERT_STATUS_INVALID_MODEL, __VA_ARGS__)

static uint32_t explicit_inputs(const struct ert_node *n)
{
	return n->n_inputs - ert_node_implicit_inputs(n);
}

/* A GRAPH attribute the op needs. */
static const struct ert_graph *need_graph(const struct ert_node *n, const char *name,
					  struct ert_err *err)
{
	const struct ert_graph *g = ert_attr_graph(n, name);

	if (!g)
		sub_fail(n, err, "needs the graph attribute '%s'", name);
	return g;
}

void ert_scan_layout(const struct ert_node *n, struct ert_scan_layout *out)
{
	const struct ert_graph *body = ert_attr_graph(n, "body");
	uint32_t ex = explicit_inputs(n);

	memset(out, 0, sizeof(*out));
	out->v8 = n->opset > 0 && n->opset < 9;
	out->first = out->v8 ? 1 : 0;
	out->n_scan = (uint32_t)ert_attr_int(n, "num_scan_inputs", 0);
	out->n_state = ex - out->first - out->n_scan;
	out->n_out = body->n_outputs - out->n_state;
}

static ert_status check_if(const struct ert_node *n, struct ert_err *err)
{
	const struct ert_graph *t = need_graph(n, "then_branch", err);
	const struct ert_graph *e = t ? need_graph(n, "else_branch", err) : NULL;

	if (!t || !e)
		return ERT_STATUS_INVALID_MODEL;
	if (explicit_inputs(n) != 1)
		return sub_fail(n, err, "has %u inputs of its own, expected 1 (cond)",
				explicit_inputs(n));
	if (t->n_inputs || e->n_inputs)
		return sub_fail(n, err, "a branch has inputs (then_branch %u, else_branch %u); "
				"branches take none", t->n_inputs, e->n_inputs);
	if (t->n_outputs != e->n_outputs || t->n_outputs != n->n_outputs)
		return sub_fail(n, err, "then_branch has %u outputs and else_branch %u: both "
				"branches must give the node's %u outputs", t->n_outputs,
				e->n_outputs, n->n_outputs);
	/* declared types (a type left undefined is inferred when planning) */
	for (uint32_t k = 0; k < t->n_outputs; k++) {
		ert_dtype a = t->tensors[t->outputs[k]].dtype, b = e->tensors[e->outputs[k]].dtype;

		if (a != ERT_DTYPE_UNDEFINED && b != ERT_DTYPE_UNDEFINED && a != b)
			return sub_fail(n, err, "then_branch gives output %u as %s, else_branch "
					"as %s", k, ert_dtype_name(a), ert_dtype_name(b));
	}
	return ERT_OK;
}

static ert_status check_loop(const struct ert_node *n, struct ert_err *err)
{
	const struct ert_graph *b = need_graph(n, "body", err);
	uint32_t ex = explicit_inputs(n), carried;

	if (!b)
		return ERT_STATUS_INVALID_MODEL;
	if (ex < 2)
		return sub_fail(n, err, "has %u inputs of its own, expected at least 2 "
				"(M, cond)", ex);
	carried = ex - 2;
	if (b->n_inputs != carried + 2)
		return sub_fail(n, err, "body has %u inputs; with %u loop-carried values it "
				"needs %u (iteration, cond, the values)", b->n_inputs, carried,
				carried + 2);
	if (b->n_outputs < carried + 1)
		return sub_fail(n, err, "body has %u outputs; with %u loop-carried values it "
				"needs at least %u (cond, the values, scan outputs)", b->n_outputs,
				carried, carried + 1);
	if (n->n_outputs != b->n_outputs - 1)
		return sub_fail(n, err, "has %u outputs, its body gives %u (besides cond)",
				n->n_outputs, b->n_outputs - 1);
	return ERT_OK;
}

static ert_status check_count(const struct ert_node *n, struct ert_err *err, const char *name,
			      uint32_t want)
{
	uint32_t count = 0;

	if (ert_node_attr(n, name) && (!ert_attr_ints(n, name, &count) || count != want))
		return sub_fail(n, err, "attribute %s has %u entries, expected %u", name, count,
				want);
	return ERT_OK;
}

static ert_status check_scan(const struct ert_node *n, struct ert_err *err)
{
	const struct ert_graph *b = need_graph(n, "body", err);
	uint32_t ex = explicit_inputs(n), first = n->opset > 0 && n->opset < 9 ? 1 : 0;
	int64_t m = ert_attr_int(n, "num_scan_inputs", 0);
	uint32_t states, outs;
	ert_status st;

	if (!b)
		return ERT_STATUS_INVALID_MODEL;
	if (!ert_node_attr(n, "num_scan_inputs") || m < 1 || (uint64_t)m + first > ex)
		return sub_fail(n, err, "num_scan_inputs is %lld with %u inputs", (long long)m, ex);
	states = ex - first - (uint32_t)m;
	if (b->n_inputs != ex - first)
		return sub_fail(n, err, "body has %u inputs, expected %u (%u states, %lld scan "
				"inputs)", b->n_inputs, ex - first, states, (long long)m);
	if (b->n_outputs != n->n_outputs || b->n_outputs < states)
		return sub_fail(n, err, "body has %u outputs and the node %u; both must be the "
				"%u states and the scan outputs", b->n_outputs, n->n_outputs, states);
	outs = b->n_outputs - states;
	if ((st = check_count(n, err, first ? "directions" : "scan_input_directions",
			      (uint32_t)m)) != ERT_OK ||
	    (st = check_count(n, err, "scan_input_axes", (uint32_t)m)) != ERT_OK ||
	    (st = check_count(n, err, "scan_output_directions", outs)) != ERT_OK ||
	    (st = check_count(n, err, "scan_output_axes", outs)) != ERT_OK)
		return st;
	if (first && (ert_node_attr(n, "scan_input_axes") || ert_node_attr(n, "scan_output_axes")))
		return sub_fail(n, err, "opset %u's Scan has no axes attributes", n->opset);
	return ERT_OK;
}

/* SequenceMap: the body takes one value per input of the node and gives one per output. */
static ert_status check_map(const struct ert_node *n, struct ert_err *err)
{
	const struct ert_graph *b = need_graph(n, "body", err);

	if (!b)
		return ERT_STATUS_INVALID_MODEL;
	if (explicit_inputs(n) < 1 || b->n_inputs != explicit_inputs(n))
		return sub_fail(n, err, "body has %u inputs, the node %u: one per input",
				b->n_inputs, explicit_inputs(n));
	if (b->n_outputs != n->n_outputs || !n->n_outputs)
		return sub_fail(n, err, "body has %u outputs, the node %u: one per output",
				b->n_outputs, n->n_outputs);
	return ERT_OK;
}

ert_status ert_op_check_subgraphs(const struct ert_node *n, struct ert_err *err)
{
	switch (n->op) {
	case ERT_OP_SequenceMap:
		return check_map(n, err);
	case ERT_OP_If:
		return check_if(n, err);
	case ERT_OP_Loop:
		return check_loop(n, err);
	case ERT_OP_Scan:
		return check_scan(n, err);
	default:
		break;
	}
	for (uint32_t a = 0; a < n->n_attrs; a++)
		if (n->attrs[a].type == ERT_ATTR_GRAPH) {
			sub_fail(n, err, "attribute '%s' is a graph; only If, Loop, Scan and SequenceMap take "
				 "graphs", n->attrs[a].name);
			return ERT_STATUS_UNSUPPORTED;
		}
	return ERT_OK;
}

/* ---- shape inference ---- */

static bool same_dims(const struct ert_value *a, const struct ert_value *b)
{
	if (a->dtype != b->dtype || a->rank != b->rank)
		return false;
	for (int32_t i = 0; i < a->rank; i++)
		if (a->dims[i] != b->dims[i])
			return false;
	return true;
}

static bool value_static(const struct ert_value *v)
{
	if (v->rank < 0 || v->rank > ERT_MAX_RANK)
		return false;
	for (int32_t i = 0; i < v->rank; i++)
		if (v->dims[i] < 0)
			return false;
	return true;
}

/* Values computed while inferring a subgraph: small ones only. */
#define SUB_EVAL_MAX_BYTES (64u << 10)

/*
 * Compute node @n of @sub on the CPU when its inputs are known (Shape and
 * Size: their shapes), as planning does, so that the nodes after it can read
 * the value (a Reshape's shape computed from a Shape). The data is malloc'd
 * and listed in @owned. False when it is not computed (which is no error).
 */
static bool eval_known(const struct ert_graph *sub, const struct ert_node *n,
		       const struct ert_value **ins, struct ert_value **outp, void ***owned,
		       uint32_t *n_owned)
{
	struct ert_value out[8];
	uint64_t bytes = 0;
	struct ert_err e;
	void **o;

	if (n->op == ERT_OP_If || n->op == ERT_OP_Loop || n->op == ERT_OP_Scan ||
	    ert_op_is_sequence(n->op) || n->n_outputs > 8 || n->n_inputs > 64)
		return false;
	for (uint32_t k = 0; k < n->n_inputs; k++)
		if (ins[k] && ((!ins[k]->data && n->op != ERT_OP_Shape && n->op != ERT_OP_Size) ||
			       ins[k]->kind != ERT_VALUE_TENSOR))
			return false;
	for (uint32_t k = 0; k < n->n_outputs; k++)
		bytes += outp[k] ? outp[k]->nbytes : 0;
	if (bytes > SUB_EVAL_MAX_BYTES)
		return false;
	o = realloc(*owned, (*n_owned + n->n_outputs) * sizeof(*o));
	if (!o)
		return false;
	*owned = o;
	if (ert_cpu_eval_node(sub, n, ins, n->n_inputs, out, n->n_outputs, &e) != ERT_OK)
		return false;
	for (uint32_t k = 0; k < n->n_outputs; k++) {
		o[(*n_owned)++] = out[k].data;
		if (outp[k] && same_dims(outp[k], &out[k]))
			outp[k]->data = out[k].data;
	}
	return true;
}

/*
 * The shapes of @sub's outputs into @outs, for formal inputs @in and
 * captures @caps (values of the node's graph; data where known): each
 * node's inference in order, small values computed where their inputs are
 * known. False when one cannot tell (it needs a value computed from what
 * is known only at run time, or gives a run-time extent), or on
 * out-of-memory.
 */
static bool infer_sub(const struct ert_graph *sub, const struct ert_value *const *in,
		      const struct ert_value *const *caps, struct ert_value *outs)
{
	struct ert_value *v = calloc(sub->n_tensors ? sub->n_tensors : 1, sizeof(*v));
	uint8_t *known = calloc(sub->n_tensors ? sub->n_tensors : 1, 1);
	const struct ert_value **ins = NULL;
	struct ert_value **outp = NULL;
	void **owned = NULL;
	uint32_t max_io = 1, n_owned = 0;
	bool ok = false;

	if (!v || !known)
		goto out;
	for (uint32_t i = 0; i < sub->n_nodes; i++)
		if (sub->nodes[i].n_inputs + sub->nodes[i].n_outputs > max_io)
			max_io = sub->nodes[i].n_inputs + sub->nodes[i].n_outputs;
	ins = calloc(max_io, sizeof(*ins));
	outp = calloc(max_io, sizeof(*outp));
	if (!ins || !outp)
		goto out;
	for (uint32_t t = 0; t < sub->n_tensors; t++) {
		const struct ert_tensor *x = &sub->tensors[t];

		if (!(x->flags & ERT_TENSOR_CONST))
			continue;
		ert_value_set_shape(&v[t], x->dtype, x->rank, x->dims);
		if (!ert_value_finish(&v[t]))
			goto out;
		v[t].data = (void *)ert_graph_const_data(sub, (int32_t)t);
		if (!v[t].data)
			goto out;
		known[t] = 1;
	}
	for (uint32_t k = 0; k < sub->n_inputs; k++) {
		if (!in[k] || !value_static(in[k]))
			goto out;
		v[sub->inputs[k]] = *in[k];
		known[sub->inputs[k]] = 1;
	}
	for (uint32_t k = 0; k < sub->n_captures; k++) {
		if (!caps[k] || !value_static(caps[k]))
			goto out;
		v[sub->captures[k]] = *caps[k];
		known[sub->captures[k]] = 1;
	}
	for (uint32_t i = 0; i < sub->n_nodes; i++) {
		const struct ert_node *n = &sub->nodes[i];
		ert_infer_fn infer = ert_op_infer(n->op);
		struct ert_err e;

		if (!infer)
			goto out;
		for (uint32_t k = 0; k < n->n_inputs; k++) {
			int32_t t = n->inputs[k];

			if (t >= 0 && !known[t])
				goto out;
			/* as planning promises inference: values it reads are known */
			if (t >= 0 && k < 32 && ((ert_op_value_inputs(n->op) >> k) & 1) && !v[t].data)
				goto out;
			ins[k] = t >= 0 ? &v[t] : NULL;
		}
		for (uint32_t k = 0; k < n->n_outputs; k++) {
			int32_t t = n->outputs[k];

			outp[k] = t >= 0 ? &v[t] : NULL;
			if (t >= 0) {
				memset(&v[t], 0, sizeof(v[t]));
				v[t].quant = sub->tensors[t].quant.count ? &sub->tensors[t].quant : NULL;
			}
		}
		struct ert_infer_ctx ic = {
			.graph = sub, .node = n, .in = ins, .out = outp,
			.n_in = n->n_inputs, .n_out = n->n_outputs, .err = &e,
		};

		if (infer(&ic) != ERT_OK)
			goto out;
		for (uint32_t k = 0; k < n->n_outputs; k++) {
			int32_t t = n->outputs[k];

			if (t < 0)
				continue;
			/* shape inference leaves values it does not compute without data */
			if (!value_static(&v[t]) || !ert_value_finish(&v[t]))
				goto out;
			known[t] = 1;
		}
		eval_known(sub, n, ins, outp, &owned, &n_owned);
	}
	for (uint32_t k = 0; k < sub->n_outputs; k++) {
		int32_t t = sub->outputs[k];

		if (!known[t])
			goto out;
		outs[k] = v[t];
		outs[k].data = NULL;
	}
	ok = true;
out:
	for (uint32_t k = 0; k < n_owned; k++)
		free(owned[k]);
	free(owned);
	free(v);
	free(known);
	free(ins);
	free(outp);
	return ok;
}

/* Output @k's shape from @sub's declared output type: every extent -1. */
static ert_status declared(struct ert_infer_ctx *ctx, const struct ert_graph *sub, uint32_t k,
			   struct ert_value *out)
{
	const struct ert_tensor *x = &sub->tensors[sub->outputs[k]];

	if (x->dtype == ERT_DTYPE_UNDEFINED || x->rank < 0)
		return ert_infer_fail(ctx, ERT_STATUS_UNSUPPORTED,
				      "cannot tell the type and rank of output %u (its subgraph "
				      "output '%s' declares none, and its inference needs values "
				      "computed at run time)", k, x->name);
	memset(out, 0, sizeof(*out));
	out->dtype = x->dtype;
	out->rank = x->rank;
	out->kind = x->kind;
	out->elem = x->elem;
	for (int32_t i = 0; i < x->rank; i++)
		out->dims[i] = -1;
	return ERT_OK;
}

static void set_out(struct ert_infer_ctx *ctx, uint32_t k, const struct ert_value *v)
{
	if (k < ctx->n_out && ctx->out[k]) {
		ert_value_set_shape(ctx->out[k], v->dtype, v->rank, v->dims);
		ert_value_copy_kind(ctx->out[k], v);
	}
}

static const struct ert_value *const *captures(const struct ert_infer_ctx *ctx,
					       const struct ert_graph *before)
{
	/* the implicit inputs, attribute by attribute: @before's captures come first */
	uint32_t at = ctx->n_in - ert_node_implicit_inputs(ctx->node);

	for (uint32_t a = 0; a < ctx->node->n_attrs; a++) {
		const struct ert_attr *attr = &ctx->node->attrs[a];

		if (attr->type != ERT_ATTR_GRAPH)
			continue;
		if (attr->graph == before)
			break;
		at += attr->graph->n_captures;
	}
	return ctx->in + at;
}

static bool is_scalar_of(const struct ert_value *v, ert_dtype dt)
{
	return v && v->dtype == dt && v->rank >= 0 && ert_shape_numel(v->rank, v->dims) == 1;
}

static ert_status infer_if(struct ert_infer_ctx *ctx)
{
	const struct ert_graph *br[2] = { ert_attr_graph(ctx->node, "then_branch"),
					  ert_attr_graph(ctx->node, "else_branch") };
	const struct ert_value *cond = ctx->in[0];
	struct ert_value *res[2];
	bool ok[2] = { false, false }, take[2] = { true, true };
	ert_status st = ERT_OK;

	if (!cond || !is_scalar_of(cond, ERT_DTYPE_BOOL))
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "cond must be a bool of one element");
	if (cond->data) {
		take[0] = *(const uint8_t *)cond->data != 0;
		take[1] = !take[0];
	}
	res[0] = calloc(2 * (size_t)(ctx->n_out ? ctx->n_out : 1), sizeof(**res));
	if (!res[0])
		return ert_infer_fail(ctx, ERT_STATUS_OUT_OF_MEMORY, "out of memory");
	res[1] = res[0] + (ctx->n_out ? ctx->n_out : 1);
	for (int b = 0; b < 2; b++)
		if (take[b])
			ok[b] = infer_sub(br[b], NULL, captures(ctx, br[b]), res[b]);
	for (uint32_t k = 0; k < ctx->n_out && st == ERT_OK; k++) {
		struct ert_value v[2];
		int n = 0;

		for (int b = 0; b < 2; b++) {
			if (!take[b])
				continue;
			if (ok[b])
				v[n] = res[b][k];
			else if ((st = declared(ctx, br[b], k, &v[n])) != ERT_OK)
				break;
			n++;
		}
		if (st != ERT_OK)
			break;
		if (n == 2) {
			if (v[0].kind != v[1].kind) {
				st = ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL,
						    "then_branch gives output %u as a %s, else_branch as a %s",
						    k, ert_value_kind_name(v[0].kind),
						    ert_value_kind_name(v[1].kind));
				break;
			}
			if (v[0].elem == ERT_DTYPE_UNDEFINED)
				v[0].elem = v[1].elem;
			if (v[0].dtype != v[1].dtype) {
				st = ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL,
						    "then_branch gives output %u as %s, else_branch as %s",
						    k, ert_dtype_name(v[0].dtype),
						    ert_dtype_name(v[1].dtype));
				break;
			}
			/* the branch taken at run time decides what differs */
			for (int32_t i = 0; i < v[0].rank; i++)
				if (v[0].rank != v[1].rank || v[0].dims[i] != v[1].dims[i])
					v[0].dims[i] = -1;
		}
		set_out(ctx, k, &v[0]);
	}
	free(res[0]);
	return st;
}

static ert_status infer_loop(struct ert_infer_ctx *ctx)
{
	const struct ert_graph *body = ert_attr_graph(ctx->node, "body");
	uint32_t carried = explicit_inputs(ctx->node) - 2;
	const struct ert_value *m = ctx->in[0], *cond = ctx->in[1];
	const struct ert_value **in = calloc(body->n_inputs, sizeof(*in));
	struct ert_value *res = calloc(body->n_outputs, sizeof(*res));
	struct ert_value iter = { .dtype = ERT_DTYPE_INT64, .rank = 0 };
	struct ert_value cv = { .dtype = ERT_DTYPE_BOOL, .rank = 0 };
	int64_t trips = -1;
	ert_status st = ERT_OK;
	bool ok;

	if (!in || !res) {
		free(in);
		free(res);
		return ert_infer_fail(ctx, ERT_STATUS_OUT_OF_MEMORY, "out of memory");
	}
	if ((m && !is_scalar_of(m, ERT_DTYPE_INT64)) || (cond && !is_scalar_of(cond, ERT_DTYPE_BOOL))) {
		st = ert_infer_fail(ctx, ERT_STATUS_SHAPE, "M must be an int64 and cond a bool, "
				    "of one element each");
		goto out;
	}
	/* a trip count alone, known now, tells the scan outputs' length */
	if (m && m->data && !cond)
		trips = *(const int64_t *)m->data < 0 ? 0 : *(const int64_t *)m->data;
	ert_value_finish(&iter);
	ert_value_finish(&cv);
	in[0] = &iter;
	in[1] = &cv;
	for (uint32_t j = 0; j < carried; j++) {
		in[2 + j] = ctx->in[2 + j];
		if (!in[2 + j]) {
			st = ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL,
					    "loop-carried input %u is missing", j);
			goto out;
		}
	}
	ok = infer_sub(body, in, captures(ctx, body), res);
	for (uint32_t k = 0; k < ctx->n_out; k++) {
		struct ert_value v;

		if (ok)
			v = res[1 + k];
		else if ((st = declared(ctx, body, 1 + k, &v)) != ERT_OK)
			goto out;
		if (k < carried) {
			const struct ert_value *init = in[2 + k];

			/* an optional sequence carried in may come back a sequence (ONNX's tests) */
			bool seqs = (v.kind == ERT_VALUE_SEQUENCE ||
				     v.kind == ERT_VALUE_OPTIONAL_SEQUENCE) &&
				    (init->kind == ERT_VALUE_SEQUENCE ||
				     init->kind == ERT_VALUE_OPTIONAL_SEQUENCE);

			if (v.kind != init->kind && !seqs) {
				st = ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL,
						    "loop-carried value %u is a %s, its body gives a %s",
						    k, ert_value_kind_name(init->kind),
						    ert_value_kind_name(v.kind));
				goto out;
			}
			if (v.dtype != init->dtype) {
				st = ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL,
						    "loop-carried value %u is %s, its body gives %s", k,
						    ert_dtype_name(init->dtype), ert_dtype_name(v.dtype));
				goto out;
			}
			/* the same shape each iteration, or known only at run time */
			for (int32_t i = 0; i < v.rank; i++)
				if (v.rank != init->rank || v.dims[i] != init->dims[i])
					v.dims[i] = -1;
		} else {
			if (v.kind != ERT_VALUE_TENSOR) {
				st = ert_infer_fail(ctx, ERT_STATUS_UNSUPPORTED,
						    "scan output %u is a %s; only tensors are stacked",
						    k - carried, ert_value_kind_name(v.kind));
				goto out;
			}
			if (v.rank >= ERT_MAX_RANK) {
				st = ert_infer_fail(ctx, ERT_STATUS_UNSUPPORTED,
						    "scan output %u would have rank %d", k - carried,
						    (int)v.rank + 1);
				goto out;
			}
			memmove(v.dims + 1, v.dims, (size_t)v.rank * sizeof(v.dims[0]));
			v.dims[0] = trips;
			v.rank++;
		}
		set_out(ctx, k, &v);
	}
out:
	free(in);
	free(res);
	return st;
}

static ert_status infer_scan(struct ert_infer_ctx *ctx)
{
	const struct ert_graph *body = ert_attr_graph(ctx->node, "body");
	const struct ert_node *n = ctx->node;
	struct ert_scan_layout L;
	struct ert_value *slices = calloc(body->n_inputs + 1, sizeof(*slices));
	const struct ert_value **in = calloc(body->n_inputs + 1, sizeof(*in));
	struct ert_value *res = calloc(body->n_outputs + 1, sizeof(*res));
	const int64_t *in_axes, *out_axes;
	uint32_t n_in_axes = 0, n_out_axes = 0;
	int64_t len = -1, batch = -1;
	ert_status st = ERT_OK;
	bool ok;

	ert_scan_layout(n, &L);
	in_axes = ert_attr_ints(n, "scan_input_axes", &n_in_axes);
	out_axes = ert_attr_ints(n, "scan_output_axes", &n_out_axes);
	if (!slices || !in || !res) {
		st = ert_infer_fail(ctx, ERT_STATUS_OUT_OF_MEMORY, "out of memory");
		goto out;
	}
	for (uint32_t j = 0; j < L.n_state + L.n_scan; j++) {
		const struct ert_value *x = ctx->in[L.first + j];
		struct ert_value *s = &slices[j];
		int32_t axis = 0, drop = L.v8 ? 1 : 0;

		if (!x) {
			st = ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "input %u is missing",
					    L.first + j);
			goto out;
		}
		*s = *x;
		s->data = NULL;
		if (j >= L.n_state) {
			/* a scan input: one slice per iteration, its scan axis dropped */
			int64_t a = in_axes ? in_axes[j - L.n_state] : 0;

			if (L.v8)
				axis = 1;
			else if (!ert_norm_axis(a, x->rank, &axis)) {
				st = ert_infer_fail(ctx, ERT_STATUS_SHAPE, "scan_input_axes[%u] = %lld "
						    "is outside rank %d", j - L.n_state,
						    (long long)a, (int)x->rank);
				goto out;
			}
			drop++;
			if (x->rank <= axis) {
				st = ert_infer_fail(ctx, ERT_STATUS_SHAPE, "scan input %u has rank %d",
						    j - L.n_state, (int)x->rank);
				goto out;
			}
			if (len >= 0 && x->dims[axis] != len) {
				st = ert_infer_fail(ctx, ERT_STATUS_SHAPE, "scan inputs have %lld and "
						    "%lld iterations", (long long)len,
						    (long long)x->dims[axis]);
				goto out;
			}
			len = x->dims[axis];
		}
		if (L.v8) {
			/* opset 8: every input has a batch axis 0, the body sees one batch entry */
			if (x->rank < drop || (batch >= 0 && x->dims[0] != batch)) {
				st = ert_infer_fail(ctx, ERT_STATUS_SHAPE, "input %u has no batch axis "
						    "of %lld", L.first + j, (long long)batch);
				goto out;
			}
			batch = x->dims[0];
			s->rank = x->rank - drop;
			memmove(s->dims, x->dims + drop, (size_t)s->rank * sizeof(s->dims[0]));
		} else if (j >= L.n_state) {
			s->rank = x->rank - 1;
			memmove(s->dims + axis, x->dims + axis + 1,
				(size_t)(x->rank - axis - 1) * sizeof(s->dims[0]));
		}
		ert_value_finish(s);
		in[j] = s;
	}
	ok = infer_sub(body, in, captures(ctx, body), res);
	for (uint32_t k = 0; k < ctx->n_out; k++) {
		struct ert_value v;
		int32_t axis = 0;

		if (ok)
			v = res[k];
		else if ((st = declared(ctx, body, k, &v)) != ERT_OK)
			goto out;
		if (k < L.n_state) {
			const struct ert_value *init = in[k];

			for (int32_t i = 0; i < v.rank; i++)
				if (v.rank != init->rank || v.dims[i] != init->dims[i])
					v.dims[i] = -1;
		}
		if (k >= L.n_state) {
			int64_t a = out_axes ? out_axes[k - L.n_state] : 0;

			if (v.rank >= ERT_MAX_RANK - 1 ||
			    (!L.v8 && !ert_norm_axis(a, v.rank + 1, &axis))) {
				st = ert_infer_fail(ctx, ERT_STATUS_SHAPE, "scan output %u: axis %lld "
						    "for rank %d", k - L.n_state, (long long)a,
						    (int)v.rank + 1);
				goto out;
			}
			memmove(v.dims + axis + 1, v.dims + axis,
				(size_t)(v.rank - axis) * sizeof(v.dims[0]));
			v.dims[axis] = len;
			v.rank++;
		}
		if (L.v8) {
			memmove(v.dims + 1, v.dims, (size_t)v.rank * sizeof(v.dims[0]));
			v.dims[0] = batch;
			v.rank++;
		}
		set_out(ctx, k, &v);
	}
out:
	free(slices);
	free(in);
	free(res);
	return st;
}

static const struct ert_attr_rule scan_rules[] = {
	ERT_RULE_INT("num_scan_inputs", 1, ERT_NODE_MAX_IO),
	ERT_RULE_INTS("scan_input_directions", ERT_NODE_MAX_IO, 0, 1),
	ERT_RULE_INTS("scan_output_directions", ERT_NODE_MAX_IO, 0, 1),
	ERT_RULE_INTS("directions", ERT_NODE_MAX_IO, 0, 1),
	ERT_RULE_INTS("scan_input_axes", ERT_NODE_MAX_IO, -ERT_MAX_RANK, ERT_MAX_RANK - 1),
	ERT_RULE_INTS("scan_output_axes", ERT_NODE_MAX_IO, -ERT_MAX_RANK, ERT_MAX_RANK - 1),
	ERT_RULE_END
};

const struct ert_op_def ert_op_defs_control[] = {
	{ ERT_OP_If, infer_if, NULL },
	{ ERT_OP_Loop, infer_loop, NULL },
	{ ERT_OP_Scan, infer_scan, scan_rules },
	{ 0, NULL, NULL },
};
