/* SPDX-License-Identifier: MIT */
/*
 * Shape inference: sequences and optionals (docs/sequences.md). A sequence
 * or optional is a uint64 scalar to the planner (a handle, ert-seq.h) with
 * its kind and element dtype beside; the tensors such a value holds are
 * known only at run time, so an op that takes a tensor out of one
 * (SequenceAt, ConcatFromSequence, OptionalGetElement of an optional
 * tensor) gives an output of unknown rank: a data-dependent step.
 */
#include <string.h>

#include "ops/scalar-input.h"

bool ert_op_is_sequence(enum ert_op op)
{
	switch (op) {
	case ERT_OP_SequenceConstruct: case ERT_OP_SequenceEmpty: case ERT_OP_SequenceInsert:
	case ERT_OP_SequenceAt: case ERT_OP_SequenceErase: case ERT_OP_SequenceLength:
	case ERT_OP_SplitToSequence: case ERT_OP_ConcatFromSequence: case ERT_OP_SequenceMap:
	case ERT_OP_Optional: case ERT_OP_OptionalHasElement: case ERT_OP_OptionalGetElement:
		return true;
	default:
		return false;
	}
}

const char *ert_value_kind_name(int kind)
{
	switch (kind) {
	case ERT_VALUE_TENSOR: return "tensor";
	case ERT_VALUE_SEQUENCE: return "sequence";
	case ERT_VALUE_OPTIONAL: return "optional";
	case ERT_VALUE_OPTIONAL_SEQUENCE: return "optional sequence";
	default: return "?";
	}
}

ert_status ert_infer_check_kinds(struct ert_infer_ctx *ctx)
{
	const struct ert_node *n = ctx->node;
	uint32_t explicit_in = ctx->n_in - ert_node_implicit_inputs(n);

	/* these check their inputs' kinds themselves; captures may be anything */
	if (ert_op_is_sequence(n->op) || n->op == ERT_OP_Identity || n->op == ERT_OP_If ||
	    n->op == ERT_OP_Loop)
		return ERT_OK;
	for (uint32_t k = 0; k < explicit_in; k++) {
		const struct ert_value *v = ctx->in[k];

		if (v && v->kind != ERT_VALUE_TENSOR)
			return ert_infer_fail(ctx, ERT_STATUS_DTYPE,
					      "input %u '%s' is a %s; %s takes tensors", k,
					      ctx->graph->tensors[n->inputs[k]].name,
					      ert_value_kind_name(v->kind), ert_op_name(n->op));
	}
	return ERT_OK;
}

/* Output @k is a value of @kind holding @elem tensors. */
static void set_kind(struct ert_infer_ctx *ctx, uint32_t k, uint8_t kind, ert_dtype elem)
{
	struct ert_value *o = k < ctx->n_out ? ctx->out[k] : NULL;

	if (!o)
		return;
	ert_value_set_shape(o, ERT_DTYPE_UINT64, 0, NULL);
	o->kind = kind;
	o->elem = elem;
}

/* Output @k is a tensor of @dt whose rank and shape the kernel gives. */
static void set_unknown_tensor(struct ert_infer_ctx *ctx, uint32_t k, ert_dtype dt)
{
	struct ert_value *o = k < ctx->n_out ? ctx->out[k] : NULL;

	if (!o)
		return;
	ert_value_set_shape(o, dt, -1, NULL);
}

static ert_status need_kind(struct ert_infer_ctx *ctx, uint32_t k, const char *what,
			    uint8_t kind, const struct ert_value **out)
{
	const struct ert_value *v = ert_op_input(ctx, k);

	if (!v)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "input %s is missing", what);
	if (v->kind != kind)
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "input %s is a %s, expected a %s",
				      what, ert_value_kind_name(v->kind), ert_value_kind_name(kind));
	*out = v;
	return ERT_OK;
}

/* An optional position input @k: an int32/int64 scalar tensor. */
static ert_status check_position(struct ert_infer_ctx *ctx, uint32_t k, bool required)
{
	const struct ert_value *v = ert_op_input(ctx, k);

	if (!v)
		return required ? ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL,
						 "input position is missing") : ERT_OK;
	if (v->kind != ERT_VALUE_TENSOR ||
	    (v->dtype != ERT_DTYPE_INT32 && v->dtype != ERT_DTYPE_INT64))
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE,
				      "position is a %s of %s, expected an int32 or int64 tensor",
				      ert_value_kind_name(v->kind), ert_dtype_name(v->dtype));
	if (v->rank < 0 || ert_shape_numel(v->rank, v->dims) != 1)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "position must be one element");
	return ERT_OK;
}

static ert_status need_elem(struct ert_infer_ctx *ctx, const struct ert_value *s)
{
	if (s->elem == ERT_DTYPE_UNDEFINED)
		return ert_infer_fail(ctx, ERT_STATUS_UNSUPPORTED,
				      "the %s's element type is not declared",
				      ert_value_kind_name(s->kind));
	return ERT_OK;
}

static ert_status infer_empty(struct ert_infer_ctx *ctx)
{
	ert_dtype dt = ERT_DTYPE_FLOAT32;
	ert_status st = ert_op_attr_dtype(ctx, "dtype", ERT_DTYPE_FLOAT32, false, &dt);

	if (st != ERT_OK)
		return st;
	set_kind(ctx, 0, ERT_VALUE_SEQUENCE, dt);
	return ERT_OK;
}

static ert_status infer_construct(struct ert_infer_ctx *ctx)
{
	ert_dtype dt = ERT_DTYPE_UNDEFINED;

	if (!ctx->n_in)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "takes at least one tensor");
	for (uint32_t k = 0; k < ctx->n_in; k++) {
		const struct ert_value *v = ctx->in[k];

		if (!v || v->kind != ERT_VALUE_TENSOR)
			return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "input %u is %s, expected a "
					      "tensor", k, v ? ert_value_kind_name(v->kind) : "missing");
		if (k && v->dtype != dt)
			return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "input %u is %s, input 0 %s: a "
					      "sequence holds one dtype", k, ert_dtype_name(v->dtype),
					      ert_dtype_name(dt));
		dt = v->dtype;
	}
	set_kind(ctx, 0, ERT_VALUE_SEQUENCE, dt);
	return ERT_OK;
}

static ert_status infer_insert(struct ert_infer_ctx *ctx)
{
	const struct ert_value *s, *t;
	ert_status st;

	if ((st = need_kind(ctx, 0, "input_sequence", ERT_VALUE_SEQUENCE, &s)) ||
	    (st = need_kind(ctx, 1, "tensor", ERT_VALUE_TENSOR, &t)) ||
	    (st = check_position(ctx, 2, false)))
		return st;
	if (s->elem != ERT_DTYPE_UNDEFINED && s->elem != t->dtype)
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "inserting a %s tensor into a "
				      "sequence of %s", ert_dtype_name(t->dtype),
				      ert_dtype_name(s->elem));
	set_kind(ctx, 0, ERT_VALUE_SEQUENCE, t->dtype);
	return ERT_OK;
}

static ert_status infer_at(struct ert_infer_ctx *ctx)
{
	const struct ert_value *s;
	ert_status st;

	if ((st = need_kind(ctx, 0, "input_sequence", ERT_VALUE_SEQUENCE, &s)) ||
	    (st = check_position(ctx, 1, true)) || (st = need_elem(ctx, s)))
		return st;
	set_unknown_tensor(ctx, 0, s->elem);
	return ERT_OK;
}

static ert_status infer_erase(struct ert_infer_ctx *ctx)
{
	const struct ert_value *s;
	ert_status st;

	if ((st = need_kind(ctx, 0, "input_sequence", ERT_VALUE_SEQUENCE, &s)) ||
	    (st = check_position(ctx, 1, false)))
		return st;
	set_kind(ctx, 0, ERT_VALUE_SEQUENCE, s->elem);
	return ERT_OK;
}

static ert_status infer_length(struct ert_infer_ctx *ctx)
{
	const struct ert_value *s;
	ert_status st;

	if ((st = need_kind(ctx, 0, "input_sequence", ERT_VALUE_SEQUENCE, &s)))
		return st;
	ert_value_set_shape(ctx->out[0], ERT_DTYPE_INT64, 0, NULL);
	return ERT_OK;
}

static ert_status infer_split(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x, *split = ert_op_input(ctx, 1);
	int32_t axis;
	ert_status st;

	if ((st = need_kind(ctx, 0, "input", ERT_VALUE_TENSOR, &x)))
		return st;
	if (x->rank < 1 || !ert_norm_axis(ert_attr_int(ctx->node, "axis", 0), x->rank, &axis))
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "axis %lld is outside the input's "
				      "rank %d", (long long)ert_attr_int(ctx->node, "axis", 0),
				      (int)x->rank);
	if (split && (split->kind != ERT_VALUE_TENSOR || split->rank > 1 ||
		      (split->dtype != ERT_DTYPE_INT32 && split->dtype != ERT_DTYPE_INT64)))
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "split must be an int32 or int64 "
				      "scalar or 1-D tensor");
	set_kind(ctx, 0, ERT_VALUE_SEQUENCE, x->dtype);
	return ERT_OK;
}

static ert_status infer_concat(struct ert_infer_ctx *ctx)
{
	const struct ert_value *s;
	ert_status st;

	if ((st = need_kind(ctx, 0, "input_sequence", ERT_VALUE_SEQUENCE, &s)) ||
	    (st = need_elem(ctx, s)))
		return st;
	if (!ert_node_attr(ctx->node, "axis"))
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "attribute axis is missing");
	set_unknown_tensor(ctx, 0, s->elem);
	return ERT_OK;
}

/* Each output a sequence of the body's output's declared dtype (any when it declares none). */
static ert_status infer_map(struct ert_infer_ctx *ctx)
{
	const struct ert_graph *body = ert_attr_graph(ctx->node, "body");
	uint32_t explicit_in = ctx->n_in - ert_node_implicit_inputs(ctx->node);
	const struct ert_value *s;
	ert_status st;

	if ((st = need_kind(ctx, 0, "input_sequence", ERT_VALUE_SEQUENCE, &s)))
		return st;
	for (uint32_t k = 1; k < explicit_in; k++) {
		const struct ert_value *v = ctx->in[k];

		if (!v || (v->kind != ERT_VALUE_TENSOR && v->kind != ERT_VALUE_SEQUENCE))
			return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "additional input %u is %s, "
					      "expected a tensor or a sequence", k,
					      v ? ert_value_kind_name(v->kind) : "missing");
	}
	for (uint32_t k = 0; k < ctx->n_out; k++) {
		const struct ert_tensor *o = &body->tensors[body->outputs[k]];

		if (o->kind != ERT_VALUE_TENSOR)
			return ert_infer_fail(ctx, ERT_STATUS_UNSUPPORTED, "body output %u '%s' is "
					      "a %s; sequences of tensors only", k, o->name,
					      ert_value_kind_name(o->kind));
		set_kind(ctx, k, ERT_VALUE_SEQUENCE, o->dtype);
	}
	return ERT_OK;
}

static ert_status infer_optional(struct ert_infer_ctx *ctx)
{
	const struct ert_value *v = ert_op_input(ctx, 0);
	uint32_t n = 0;
	const int64_t *type = ert_attr_ints(ctx->node, "type", &n);

	if (v) {
		if (v->kind == ERT_VALUE_TENSOR)
			set_kind(ctx, 0, ERT_VALUE_OPTIONAL, v->dtype);
		else if (v->kind == ERT_VALUE_SEQUENCE)
			set_kind(ctx, 0, ERT_VALUE_OPTIONAL_SEQUENCE, v->elem);
		else
			return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "input is a %s: optionals of "
					      "tensors and sequences only",
					      ert_value_kind_name(v->kind));
		return ERT_OK;
	}
	/* the importer reads the TypeProto attribute as [kind, element dtype] */
	if (!type || n != 2 || (type[0] != ERT_VALUE_TENSOR && type[0] != ERT_VALUE_SEQUENCE) ||
	    !ert_dtype_valid((int32_t)type[1]))
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "without an input it needs "
				      "the attribute type (a tensor or sequence type)");
	set_kind(ctx, 0, type[0] == ERT_VALUE_TENSOR ? ERT_VALUE_OPTIONAL :
		 ERT_VALUE_OPTIONAL_SEQUENCE, (ert_dtype)type[1]);
	return ERT_OK;
}

static ert_status infer_has(struct ert_infer_ctx *ctx)
{
	ert_value_set_shape(ctx->out[0], ERT_DTYPE_BOOL, 0, NULL);
	return ERT_OK;
}

static ert_status infer_get(struct ert_infer_ctx *ctx)
{
	const struct ert_value *v = ert_op_input(ctx, 0);

	if (!v)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "input is missing");
	switch (v->kind) {
	case ERT_VALUE_TENSOR:
		/* opset 18: a tensor is its own element */
		ert_value_set_shape(ctx->out[0], v->dtype, v->rank, v->dims);
		return ERT_OK;
	case ERT_VALUE_SEQUENCE:
	case ERT_VALUE_OPTIONAL_SEQUENCE:
		set_kind(ctx, 0, ERT_VALUE_SEQUENCE, v->elem);
		return ERT_OK;
	default:
		if (v->elem == ERT_DTYPE_UNDEFINED)
			return need_elem(ctx, v);
		set_unknown_tensor(ctx, 0, v->elem);
		return ERT_OK;
	}
}

static const struct ert_attr_rule split_rules[] = {
	ERT_RULE_AXIS("axis"),
	ERT_RULE_FLAG("keepdims"),
	ERT_RULE_END,
};

static const struct ert_attr_rule concat_rules[] = {
	ERT_RULE_AXIS("axis"),
	ERT_RULE_FLAG("new_axis"),
	ERT_RULE_END,
};

static const struct ert_attr_rule optional_rules[] = {
	ERT_RULE_INTS("type", 2, 0, ERT_DTYPE_COUNT),
	ERT_RULE_END,
};

const struct ert_op_def ert_op_defs_sequence[] = {
	{ ERT_OP_SequenceEmpty, infer_empty, NULL },
	{ ERT_OP_SequenceConstruct, infer_construct, NULL },
	{ ERT_OP_SequenceInsert, infer_insert, NULL },
	{ ERT_OP_SequenceAt, infer_at, NULL },
	{ ERT_OP_SequenceErase, infer_erase, NULL },
	{ ERT_OP_SequenceLength, infer_length, NULL },
	{ ERT_OP_SplitToSequence, infer_split, split_rules },
	{ ERT_OP_ConcatFromSequence, infer_concat, concat_rules },
	{ ERT_OP_SequenceMap, infer_map, NULL },
	{ ERT_OP_Optional, infer_optional, optional_rules },
	{ ERT_OP_OptionalHasElement, infer_has, NULL },
	{ ERT_OP_OptionalGetElement, infer_get, NULL },
	{ .infer = NULL },
};
