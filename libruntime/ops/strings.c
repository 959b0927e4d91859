/* SPDX-License-Identifier: MIT */
/*
 * Shape inference of the string ops (ert-strings.h says how strings are
 * stored): StringConcat (broadcast), RegexFullMatch (to bool), StringSplit
 * (X's shape plus the most substrings of any element: known when it runs),
 * StringNormalizer ([C] or [1, C], fewer once stopwords are dropped: known
 * when it runs) and ai.onnx.ml's LabelEncoder (X's shape, the values' type).
 */
#include <stdio.h>
#include <string.h>

#include "ert-op-impl.h"

static bool is_string(const struct ert_value *v)
{
	return v && v->dtype == ERT_DTYPE_STRING;
}

static ert_status infer_concat(struct ert_infer_ctx *ctx)
{
	const struct ert_value *v[2] = { ctx->n_in > 0 ? ctx->in[0] : NULL,
					 ctx->n_in > 1 ? ctx->in[1] : NULL };
	char what[200];
	ert_status st;

	if (!is_string(v[0]) || !is_string(v[1]))
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "needs two string inputs");
	snprintf(what, sizeof(what), "StringConcat '%s'", ctx->node->name ? ctx->node->name : "");
	st = ert_broadcast_shapes(v, 2, ctx->out[0], ctx->err, what);
	ctx->out[0]->dtype = ERT_DTYPE_STRING;
	return st;
}

static ert_status infer_regex(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x = ctx->n_in ? ctx->in[0] : NULL;

	if (!is_string(x))
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "input must be strings");
	if (!ert_node_attr(ctx->node, "pattern"))
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "missing attribute 'pattern'");
	ert_value_set_shape(ctx->out[0], ERT_DTYPE_BOOL, x->rank, x->dims);
	return ERT_OK;
}

static ert_status infer_split(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x = ctx->n_in ? ctx->in[0] : NULL;
	int64_t dims[ERT_MAX_RANK];

	if (!is_string(x))
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "input must be strings");
	if (x->rank >= ERT_MAX_RANK)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "input rank %d leaves no room for "
				      "the substrings' axis", (int)x->rank);
	memcpy(dims, x->dims, sizeof(dims[0]) * (size_t)x->rank);
	dims[x->rank] = -1; /* the most substrings of any element */
	ert_value_set_shape(ctx->out[0], ERT_DTYPE_STRING, x->rank + 1, dims);
	if (ctx->n_out > 1 && ctx->out[1])
		ert_value_set_shape(ctx->out[1], ERT_DTYPE_INT64, x->rank, x->dims);
	return ERT_OK;
}

static ert_status infer_normalizer(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x = ctx->n_in ? ctx->in[0] : NULL;
	const char *action = ert_attr_string(ctx->node, "case_change_action", "NONE");
	uint32_t n_stop = 0;
	int64_t dims[2];

	if (!is_string(x))
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "input must be strings");
	if (x->rank != 1 && !(x->rank == 2 && x->dims[0] == 1))
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "input must be [C] or [1, C]");
	if (strcmp(action, "NONE") != 0 && strcmp(action, "LOWER") != 0 &&
	    strcmp(action, "UPPER") != 0)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL,
				      "case_change_action '%s', expected NONE, LOWER or UPPER", action);
	memcpy(dims, x->dims, sizeof(dims));
	if (ert_node_attr(ctx->node, "stopwords")) {
		const struct ert_attr *a = ert_node_attr(ctx->node, "stopwords");

		if (a->type != ERT_ATTR_STRINGS)
			return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "stopwords must be strings");
		n_stop = a->count;
	}
	/* dropping stopwords leaves a count known only from the values */
	if (n_stop)
		dims[x->rank - 1] = -1;
	ert_value_set_shape(ctx->out[0], ERT_DTYPE_STRING, x->rank, dims);
	return ERT_OK;
}

/* LabelEncoder's key and value types, from whichever keys_* and values_* it has. */
static ert_dtype label_type(const struct ert_graph *g, const struct ert_node *n, const char *kind)
{
	static const struct {
		const char *suffix;
		ert_dtype dt;
	} forms[] = {
		{ "strings", ERT_DTYPE_STRING }, { "int64s", ERT_DTYPE_INT64 },
		{ "floats", ERT_DTYPE_FLOAT32 },
	};
	char name[32];
	const struct ert_attr *a;

	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		snprintf(name, sizeof(name), "%s_%s", kind, forms[i].suffix);
		if (ert_node_attr(n, name))
			return forms[i].dt;
	}
	snprintf(name, sizeof(name), "%s_tensor", kind);
	a = ert_node_attr(n, name);
	if (a && a->type == ERT_ATTR_TENSOR && g && a->tensor >= 0 &&
	    (uint32_t)a->tensor < g->n_tensors)
		return g->tensors[a->tensor].dtype;
	return ERT_DTYPE_UNDEFINED;
}

static ert_status infer_label_encoder(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x = ctx->n_in ? ctx->in[0] : NULL;
	ert_dtype kt = label_type(ctx->graph, ctx->node, "keys");
	ert_dtype vt = label_type(ctx->graph, ctx->node, "values");

	if (!x)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "input is missing");
	if (kt == ERT_DTYPE_UNDEFINED || vt == ERT_DTYPE_UNDEFINED)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "needs keys_* and values_*");
	if (x->dtype != kt)
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "input is %s, the keys %s",
				      ert_dtype_name(x->dtype), ert_dtype_name(kt));
	if ((kt != ERT_DTYPE_STRING && kt != ERT_DTYPE_INT64 && kt != ERT_DTYPE_FLOAT32 &&
	     kt != ERT_DTYPE_INT16 && kt != ERT_DTYPE_FLOAT64) ||
	    (vt != ERT_DTYPE_STRING && vt != ERT_DTYPE_INT64 && vt != ERT_DTYPE_FLOAT32 &&
	     vt != ERT_DTYPE_INT16 && vt != ERT_DTYPE_FLOAT64))
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "keys %s to values %s",
				      ert_dtype_name(kt), ert_dtype_name(vt));
	ert_value_set_shape(ctx->out[0], vt, x->rank, x->dims);
	return ERT_OK;
}

static const struct ert_attr_rule split_rules[] = {
	ERT_RULE_INT("maxsplit", 0, ERT_DIM_MAX), ERT_RULE_END,
};
static const struct ert_attr_rule normalizer_rules[] = {
	ERT_RULE_FLAG("is_case_sensitive"), ERT_RULE_END,
};

const struct ert_op_def ert_op_defs_strings[] = {
	{ ERT_OP_StringConcat, infer_concat, NULL },
	{ ERT_OP_StringSplit, infer_split, split_rules },
	{ ERT_OP_StringNormalizer, infer_normalizer, normalizer_rules },
	{ ERT_OP_RegexFullMatch, infer_regex, NULL },
	{ ERT_OP_LabelEncoder, infer_label_encoder, NULL },
	{ .infer = NULL },
};
