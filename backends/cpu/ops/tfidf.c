/* SPDX-License-Identifier: MIT */
/*
 * CPU reference kernel: TfIdfVectorizer on integer tokens. For each row,
 * each n-gram length in [min, max] and each skip in [0, max_skip_count]
 * (unigrams once), every n tokens d = skip + 1 apart that match an n-gram
 * of the pool count towards its slot; the mode turns counts into TF, IDF
 * (weight where the count is not 0) or TF-IDF (count * weight).
 */
#include <string.h>

#include "cpu/cpu-impl.h"
#include "ops/tfidf.h"

static size_t tfidf_workspace(const struct ert_cpu *cpu, const struct ert_exec *x)
{
	return (size_t)x->out[0]->numel * sizeof(double);
}

static ert_status tfidf_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	struct ert_value *out = x->out[0];
	struct ert_tfidf_params p;
	ert_status st = ert_tfidf_params(x->node, &p, err);
	int64_t rows = in->rank == 2 ? in->dims[0] : 1, c = in->dims[in->rank - 1];
	double *count = x->workspace;

	if (st != ERT_OK)
		return st;
	for (int64_t i = 0; i < out->numel; i++)
		count[i] = 0;
	for (int64_t r = 0; r < rows; r++) {
		double *row = count + r * p.out_size;
		uint32_t gram0 = 0; /* index of the first n-gram of this length */

		for (int64_t n = 1; n <= p.max_n; n++) {
			int64_t b, e;

			ert_tfidf_span(&p, n, &b, &e);
			if (n >= p.min_n && e > b) {
				/* a skip beyond the row matches nothing: stop at c */
				int64_t skips = n == 1 ? 0 : (p.max_skip < c ? p.max_skip : c);

				for (int64_t s = 0; s <= skips; s++)
					for (int64_t i = 0; i + (n - 1) * (s + 1) < c; i++)
						for (int64_t g = 0; g < (e - b) / n; g++) {
							int64_t k = 0;

							while (k < n && ert_value_get_int(in, r * c + i + k * (s + 1)) ==
									p.pool[b + g * n + k])
								k++;
							if (k == n)
								row[p.indexes[gram0 + g]] += 1;
						}
			}
			gram0 += (uint32_t)((e - b) / n);
		}
	}
	for (int64_t i = 0; i < out->numel; i++) {
		double w = 1, v = count[i];

		/* weights are per n-gram; slots may be shared, take the n-gram's that maps here */
		if (p.weights)
			for (uint32_t g = 0; g < p.n_indexes; g++)
				if (p.indexes[g] == i % p.out_size) {
					w = p.weights[g];
					break;
				}
		if (p.mode == ERT_TFIDF_IDF)
			v = v > 0 ? w : 0;
		else if (p.mode == ERT_TFIDF_TFIDF)
			v *= w;
		((float *)out->data)[i] = (float)v;
	}
	return ERT_OK;
}

const struct ert_cpu_op ert_cpu_ops_tfidf[] = {
	{ .op = ERT_OP_TfIdfVectorizer, .workspace = tfidf_workspace, .compute = tfidf_compute },
	{ .compute = NULL },
};
