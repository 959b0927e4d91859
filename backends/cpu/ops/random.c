/* SPDX-License-Identifier: MIT */
/*
 * CPU kernels: the random generators. Values come from a counter-based
 * generator: element i of run r of a step is splitmix64's mix of
 * key + (r * 2^32 + i) * golden ratio, so a run needs no state but the
 * step's key and run count, and any element can be computed alone.
 *
 * The key is the node's "seed" attribute (its double's bits, mixed) when the
 * model gives one, else a hash of the node's name and position in the
 * graph: the same model gives the same sequence in every session, and runs
 * of one session draw different values (docs/onnx-support.md).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/ops/value-store.h"

struct rng {
	uint64_t key;
	uint64_t run;  /* runs so far; advanced by compute() */
};

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* uniform in [0, 1): the top 53 bits */
static double u01(const struct rng *r, uint64_t i)
{
	uint64_t z = mix64(r->key + ((r->run << 32) + i) * UINT64_C(0x9e3779b97f4a7c15));

	return (double)(z >> 11) * 0x1.0p-53;
}

static uint64_t node_key(const struct ert_exec *x)
{
	const struct ert_attr *s = ert_node_attr(x->node, "seed");
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	if (s && s->type == ERT_ATTR_FLOAT) {
		double d = s->f;

		memcpy(&h, &d, sizeof(h));
		return mix64(h ^ UINT64_C(0x5eed));
	}
	/* FNV-1a of the name, then the node's index */
	for (const char *c = x->node->name ? x->node->name : ""; *c; c++)
		h = (h ^ (unsigned char)*c) * UINT64_C(0x100000001b3);
	return mix64(h + (uint64_t)(x->node - x->graph->nodes));
}

static ert_status rng_prepare(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	struct rng *r = calloc(1, sizeof(*r));

	if (!r)
		return ert_node_fail(x->node, err, ERT_STATUS_OUT_OF_MEMORY, "out of memory");
	r->key = node_key(x);
	x->state = r;
	return ERT_OK;
}

static void rng_release(struct ert_exec *x)
{
	free(x->state);
	x->state = NULL;
}

/* The step's generator for this run; one-off evaluations (no prepare) use run 0. */
static struct rng rng_take(struct ert_exec *x)
{
	struct rng r = { node_key(x), 0 };

	if (x->state) {
		r = *(struct rng *)x->state;
		((struct rng *)x->state)->run++;
	}
	return r;
}

static ert_status normal_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	struct ert_value *out = x->out[0];
	struct rng r = rng_take(x);
	double mean = ert_attr_float(x->node, "mean", 0.0f);
	double scale = ert_attr_float(x->node, "scale", 1.0f);

	/* Box-Muller: one normal from two uniforms, 1 - u keeps log() finite */
	for (int64_t i = 0; i < out->numel; i++) {
		double u1 = 1.0 - u01(&r, 2 * (uint64_t)i), u2 = u01(&r, 2 * (uint64_t)i + 1);

		ert_cpu_store_f64(out, i, mean + scale * sqrt(-2.0 * log(u1)) * cos(2 * M_PI * u2));
	}
	return ERT_OK;
}

static ert_status uniform_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	struct ert_value *out = x->out[0];
	struct rng r = rng_take(x);
	double lo = ert_attr_float(x->node, "low", 0.0f), hi = ert_attr_float(x->node, "high", 1.0f);

	for (int64_t i = 0; i < out->numel; i++)
		ert_cpu_store_f64(out, i, lo + (hi - lo) * u01(&r, (uint64_t)i));
	return ERT_OK;
}

/* 1 with probability p (the input), else 0: u < p, as ONNX's function body. */
static ert_status bernoulli_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *p = x->in[0];
	struct ert_value *out = x->out[0];
	struct rng r = rng_take(x);

	for (int64_t i = 0; i < out->numel; i++)
		ert_cpu_store_f64(out, i, u01(&r, (uint64_t)i) < ert_value_get_float(p, i) ? 1 : 0);
	return ERT_OK;
}

static size_t multinomial_workspace(const struct ert_cpu *cpu, const struct ert_exec *x)
{
	return (size_t)x->in[0]->dims[1] * sizeof(double);
}

/* Draws from softmax(row): the input holds unnormalised log-probabilities. */
static ert_status multinomial_compute(struct ert_cpu *cpu, struct ert_exec *x,
				      struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	struct ert_value *out = x->out[0];
	struct rng r = rng_take(x);
	int64_t rows = in->dims[0], k = in->dims[1], samples = out->dims[1];
	double *cum = x->workspace;

	for (int64_t b = 0; b < rows; b++) {
		double mx = -INFINITY, total = 0;

		for (int64_t c = 0; c < k; c++)
			mx = fmax(mx, ert_value_get_float(in, b * k + c));
		for (int64_t c = 0; c < k; c++) {
			double e = ert_value_get_float(in, b * k + c) - mx;

			total += isnan(e) ? 0 : exp(e);
			cum[c] = total;
		}
		for (int64_t s = 0; s < samples; s++) {
			double u = u01(&r, (uint64_t)(b * samples + s)) * total;
			int64_t lo = 0, hi = k - 1;

			/* the first class whose cumulative weight exceeds u */
			while (lo < hi) {
				int64_t mid = lo + (hi - lo) / 2;

				if (cum[mid] > u)
					hi = mid;
				else
					lo = mid + 1;
			}
			ert_cpu_store_f64(out, b * samples + s, k > 0 ? (double)lo : 0);
		}
	}
	return ERT_OK;
}

static bool out_storable(const struct ert_exec *x)
{
	return ert_cpu_storable(x->out[0]->dtype);
}

#define RNG_OP(name, fn) { .op = ERT_OP_##name, .supports = out_storable, .prepare = rng_prepare, \
			   .compute = fn, .release = rng_release }

const struct ert_cpu_op ert_cpu_ops_random[] = {
	RNG_OP(RandomNormal, normal_compute),
	RNG_OP(RandomNormalLike, normal_compute),
	RNG_OP(RandomUniform, uniform_compute),
	RNG_OP(RandomUniformLike, uniform_compute),
	RNG_OP(Bernoulli, bernoulli_compute),
	{ .op = ERT_OP_Multinomial, .supports = out_storable, .workspace = multinomial_workspace,
	  .prepare = rng_prepare, .compute = multinomial_compute, .release = rng_release },
	{ .compute = NULL },
};
