/* SPDX-License-Identifier: MIT */
/*
 * Shape inference: TfIdfVectorizer on integer tokens ([C] or [N, C] of
 * int32/int64; string tokens are not supported, docs/onnx-support.md).
 * The output holds one float per n-gram slot: [size] or [N, size], size
 * max(ngram_indexes) + 1.
 */
#include <string.h>

#include "ops/tfidf.h"

void ert_tfidf_span(const struct ert_tfidf_params *p, int64_t len, int64_t *begin, int64_t *end)
{
	*begin = len - 1 < p->n_starts ? p->starts[len - 1] : p->pool_len;
	*end = len < p->n_starts ? p->starts[len] : p->pool_len;
}

ert_status ert_tfidf_params(const struct ert_node *n, struct ert_tfidf_params *p,
			    struct ert_err *err)
{
	const char *mode = ert_attr_string(n, "mode", "");
	uint32_t n_w = 0, grams = 0;

	memset(p, 0, sizeof(*p));
	p->min_n = ert_attr_int(n, "min_gram_length", 0);
	p->max_n = ert_attr_int(n, "max_gram_length", 0);
	p->max_skip = ert_attr_int(n, "max_skip_count", 0);
	p->pool = ert_attr_ints(n, "pool_int64s", &p->pool_len);
	p->starts = ert_attr_ints(n, "ngram_counts", &p->n_starts);
	p->indexes = ert_attr_ints(n, "ngram_indexes", &p->n_indexes);
	p->weights = ert_attr_floats(n, "weights", &n_w);
	if (strcmp(mode, "TF") == 0)
		p->mode = ERT_TFIDF_TF;
	else if (strcmp(mode, "IDF") == 0)
		p->mode = ERT_TFIDF_IDF;
	else if (strcmp(mode, "TFIDF") == 0)
		p->mode = ERT_TFIDF_TFIDF;
	else
		goto bad_mode;
	if (!p->pool)
		return ert_node_fail(n, err, ERT_STATUS_UNSUPPORTED,
				     "needs pool_int64s (string tokens, pool_strings, are not "
				     "supported)");
	if (p->min_n < 1 || p->max_n < p->min_n || p->max_n > (int64_t)p->n_starts)
		return ert_node_fail(n, err, ERT_STATUS_INVALID_MODEL,
				     "needs 1 <= min_gram_length (%lld) <= max_gram_length (%lld) "
				     "<= the %u ngram_counts", (long long)p->min_n,
				     (long long)p->max_n, p->n_starts);
	for (uint32_t i = 0; i < p->n_starts; i++) {
		int64_t b, e;

		if (p->starts[i] < (i ? p->starts[i - 1] : 0) || p->starts[i] > p->pool_len)
			return ert_node_fail(n, err, ERT_STATUS_INVALID_MODEL,
					     "ngram_counts[%u] = %lld is not a non-decreasing "
					     "start within pool_int64s (%u values)", i,
					     (long long)p->starts[i], p->pool_len);
		ert_tfidf_span(p, (int64_t)i + 1, &b, &e);
		if ((e - b) % ((int64_t)i + 1))
			return ert_node_fail(n, err, ERT_STATUS_INVALID_MODEL,
					     "the %u-grams of ngram_counts are not a whole number "
					     "of %u values", i + 1, i + 1);
		grams += (uint32_t)((e - b) / ((int64_t)i + 1));
	}
	if (p->n_indexes != grams || (p->weights && n_w != grams))
		return ert_node_fail(n, err, ERT_STATUS_INVALID_MODEL,
				     "pool_int64s and ngram_counts hold %u n-grams; ngram_indexes "
				     "has %u, weights %u", grams, p->n_indexes,
				     p->weights ? n_w : grams);
	p->out_size = 0;
	for (uint32_t i = 0; i < p->n_indexes; i++) {
		if (p->indexes[i] < 0 || p->indexes[i] >= ERT_DIM_MAX)
			return ert_node_fail(n, err, ERT_STATUS_INVALID_MODEL,
					     "ngram_indexes[%u] = %lld is outside [0, 2^48)", i,
					     (long long)p->indexes[i]);
		if (p->indexes[i] + 1 > p->out_size)
			p->out_size = p->indexes[i] + 1;
	}
	return ERT_OK;

bad_mode:
	return ert_node_fail(n, err, ERT_STATUS_INVALID_MODEL,
			     "mode '%s', expected TF, IDF or TFIDF", mode);
}

static ert_status infer_tfidf(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x = ctx->n_in ? ctx->in[0] : NULL;
	struct ert_tfidf_params p;
	int64_t dims[2];
	ert_status st;

	if (!x)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "input is missing");
	if (x->dtype != ERT_DTYPE_INT32 && x->dtype != ERT_DTYPE_INT64)
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE,
				      "input has type %s, expected int32 or int64 tokens",
				      ert_dtype_name(x->dtype));
	if (x->rank != 1 && x->rank != 2)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "input rank %d, expected [C] or [N, C]",
				      (int)x->rank);
	if ((st = ert_tfidf_params(ctx->node, &p, ctx->err)))
		return st;
	dims[0] = x->dims[0];
	dims[1] = p.out_size;
	if (x->rank == 1)
		ert_value_set_shape(ctx->out[0], ERT_DTYPE_FLOAT32, 1, &p.out_size);
	else
		ert_value_set_shape(ctx->out[0], ERT_DTYPE_FLOAT32, 2, dims);
	return ERT_OK;
}

static const struct ert_attr_rule tfidf_rules[] = {
	ERT_RULE_INT("min_gram_length", 1, ERT_DIM_MAX), ERT_RULE_INT("max_gram_length", 1, ERT_DIM_MAX),
	ERT_RULE_INT("max_skip_count", 0, ERT_DIM_MAX), ERT_RULE_END,
};

const struct ert_op_def ert_op_defs_tfidf[] = {
	{ ERT_OP_TfIdfVectorizer, infer_tfidf, tfidf_rules },
	{ .infer = NULL },
};
