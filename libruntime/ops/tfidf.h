/* SPDX-License-Identifier: MIT */
/*
 * tfidf.h — TfIdfVectorizer's n-gram table, checked once for shape
 * inference (ops/tfidf.c) and again by the CPU kernel, so both agree.
 */
#ifndef ERT_OPS_TFIDF_H
#define ERT_OPS_TFIDF_H

#include "ert-op-impl.h"

enum ert_tfidf_mode { ERT_TFIDF_TF, ERT_TFIDF_IDF, ERT_TFIDF_TFIDF };

struct ert_tfidf_params {
	int64_t min_n, max_n, max_skip;
	enum ert_tfidf_mode mode;
	const int64_t *pool;      /* pool_int64s */
	uint32_t pool_len;
	const int64_t *starts;    /* ngram_counts: where the (i + 1)-grams start in the pool */
	uint32_t n_starts;
	const int64_t *indexes;   /* ngram_indexes: output slot of each n-gram, pool order */
	uint32_t n_indexes;
	const float *weights;     /* one per n-gram, or NULL (all 1) */
	int64_t out_size;         /* max(ngram_indexes) + 1 */
};

/* Read and check the attributes; the n-grams of length n lie at pool[begin, end). */
ert_status ert_tfidf_params(const struct ert_node *n, struct ert_tfidf_params *p,
			    struct ert_err *err);
void ert_tfidf_span(const struct ert_tfidf_params *p, int64_t len, int64_t *begin, int64_t *end);

#endif /* ERT_OPS_TFIDF_H */
