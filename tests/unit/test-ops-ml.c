/* SPDX-License-Identifier: MIT */
/*
 * ai.onnx.preview.training's optimizers and ai.onnx.ml's numeric ops
 * (ops/training.c, ops/ml.c and their CPU kernels): values worked out by
 * hand from the ONNX formulas, the operators' defaults, and hostile trees
 * (a cycle, an out-of-range child, too few membership sets) refused with a
 * message instead of looping or reading out of bounds.
 */
#include <float.h>
#include <math.h>

#include "ert-op-test.h"
#include "ert-test.h"

static bool near(double got, double want)
{
	if (fabs(got - want) <= 1e-6 * fmax(1, fabs(want)))
		return true;
	fprintf(stderr, "got %.9g, want %.9g\n", got, want);
	return false;
}

/* R = 0.1, T = @t, then X, G, states (each [2]) */
static void optim_inputs(struct one *o, int64_t *t, float *r, float (*v)[2], uint32_t n_vals)
{
	int64_t two = 2;

	set_in(o, 0, ERT_DTYPE_FLOAT32, 0, NULL, r);
	set_in(o, 1, ERT_DTYPE_INT64, 0, NULL, t);
	for (uint32_t i = 0; i < n_vals; i++)
		set_in(o, 2 + i, ERT_DTYPE_FLOAT32, 1, &two, v[i]);
}

ERT_TEST(adagrad)
{
	struct one o;
	float r = 0.1f, v[3][2] = { { 1, -2 }, { 0.5f, 0.25f }, { 1, 0 } };
	int64_t t = 2;

	one_init(&o, ERT_OP_Adagrad, 1, 5, 2);
	ert_node_set_attr_float(o.g, o.n, "decay_factor", 0.5f);
	ert_node_set_attr_float(o.g, o.n, "norm_coefficient", 0.1f);
	optim_inputs(&o, &t, &r, v, 3);
	REQUIRE(one_run(&o) == ERT_OK);
	for (int i = 0; i < 2; i++) {
		double g = 0.1 * v[0][i] + v[1][i], h = v[2][i] + g * g;
		/* epsilon defaults to 1e-6 (ONNX's schema) */
		double x = v[0][i] - 0.1 / (1 + 2 * 0.5) * g / (sqrt(h) + 1e-6);

		CHECK(near(((float *)o.out[0].data)[i], (float)x));
		CHECK(near(((float *)o.out[1].data)[i], (float)h));
	}
	one_fini(&o);
}

ERT_TEST(momentum_standard_nesterov)
{
	float r = 0.1f, v[3][2] = { { 1, -2 }, { 0.5f, 0.25f }, { 0.3f, -0.7f } };

	for (int nesterov = 0; nesterov < 2; nesterov++) {
		for (int64_t t = 0; t < 2; t++) {
			struct one o;

			one_init(&o, ERT_OP_Momentum, 1, 5, 2);
			ert_node_set_attr_float(o.g, o.n, "alpha", 0.9f);
			ert_node_set_attr_float(o.g, o.n, "beta", 0.5f);
			ert_node_set_attr_float(o.g, o.n, "norm_coefficient", 0.01f);
			ert_node_set_attr_string(o.g, o.n, "mode", nesterov ? "nesterov" : "standard");
			optim_inputs(&o, &t, &r, v, 3);
			REQUIRE(one_run(&o) == ERT_OK);
			for (int i = 0; i < 2; i++) {
				double g = 0.01 * (double)v[0][i] + v[1][i];
				/* the first update (T = 0) takes the gradient whole */
				double vn = 0.9f * (double)v[2][i] + (t > 0 ? 0.5 : 1) * g;
				double x = v[0][i] - 0.1f * (nesterov ? g + 0.9f * vn : vn);

				CHECK(near(((float *)o.out[0].data)[i], (float)x));
				CHECK(near(((float *)o.out[1].data)[i], (float)vn));
			}
			one_fini(&o);
		}
	}
	/* an unknown mode is refused */
	struct one o;
	int64_t t = 1;

	one_init(&o, ERT_OP_Momentum, 1, 5, 2);
	ert_node_set_attr_string(o.g, o.n, "mode", "heavy-ball");
	optim_inputs(&o, &t, &r, v, 3);
	CHECK(one_run(&o) == ERT_STATUS_INVALID_MODEL);
	CHECK(strstr(o.err.msg, "heavy-ball") != NULL);
	one_fini(&o);
}

ERT_TEST(adam_two_tensors)
{
	struct one o;
	float r = 0.1f;
	float v[8][2] = { { 1, -2 }, { 3, 4 }, { 0.5f, 0.25f }, { -1, 2 },
			  { 0.1f, 0.2f }, { 0, 0 }, { 1, 0.5f }, { 0, 0.1f } };
	int64_t t = 3;

	one_init(&o, ERT_OP_Adam, 1, 10, 6);
	ert_node_set_attr_float(o.g, o.n, "alpha", 0.9f);
	ert_node_set_attr_float(o.g, o.n, "beta", 0.99f);
	ert_node_set_attr_float(o.g, o.n, "norm_coefficient_post", 0.01f);
	optim_inputs(&o, &t, &r, v, 8);
	REQUIRE(one_run(&o) == ERT_OK);
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < 2; i++) {
			double g = v[2 + k][i];
			double vn = 0.9f * (double)v[4 + k][i] + (1 - 0.9f) * g;
			double hn = 0.99f * (double)v[6 + k][i] + (1 - 0.99f) * g * g;
			double ra = 0.1f * sqrt(1 - pow(0.99f, 3)) / (1 - pow(0.9f, 3));
			double x = (1 - 0.01f) * (v[k][i] - ra * vn / (sqrt(hn) + 1e-6));

			CHECK(near(((float *)o.out[k].data)[i], (float)x));
			CHECK(near(((float *)o.out[2 + k].data)[i], (float)vn));
			CHECK(near(((float *)o.out[4 + k].data)[i], (float)hn));
		}
	one_fini(&o);
	/* inputs must come as R, T and whole groups */
	one_init(&o, ERT_OP_Adam, 1, 9, 6);
	optim_inputs(&o, &t, &r, v, 7);
	CHECK(one_run(&o) == ERT_STATUS_INVALID_MODEL);
	one_fini(&o);
}

ERT_TEST(binarizer_and_feature_extractor)
{
	struct one o;
	float x[6] = { -1, 0.5f, 2, 0.4f, 0.6f, 7 };
	int64_t dims[2] = { 2, 3 }, idx[2] = { 2, 0 }, n_idx = 2, bad[1] = { 3 }, one1 = 1;

	one_init(&o, ERT_OP_Binarizer, 1, 1, 1);
	ert_node_set_attr_float(o.g, o.n, "threshold", 0.5f);
	set_in(&o, 0, ERT_DTYPE_FLOAT32, 2, dims, x);
	REQUIRE(one_run(&o) == ERT_OK);
	for (int i = 0; i < 6; i++)
		CHECK(((float *)o.out[0].data)[i] == (x[i] > 0.5f ? 1.0f : 0.0f));
	one_fini(&o);

	one_init(&o, ERT_OP_ArrayFeatureExtractor, 1, 2, 1);
	set_in(&o, 0, ERT_DTYPE_FLOAT32, 2, dims, x);
	set_in(&o, 1, ERT_DTYPE_INT64, 1, &n_idx, idx);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK(o.out[0].rank == 2 && o.out[0].dims[0] == 2 && o.out[0].dims[1] == 2);
	CHECK(((float *)o.out[0].data)[0] == 2 && ((float *)o.out[0].data)[1] == -1);
	CHECK(((float *)o.out[0].data)[2] == 7 && ((float *)o.out[0].data)[3] == 0.4f);
	/* an index past the last axis is an error, not a read out of bounds */
	set_in(&o, 1, ERT_DTYPE_INT64, 1, &one1, bad);
	CHECK(one_run(&o) == ERT_STATUS_INVALID_ARGUMENT);
	CHECK(strstr(o.err.msg, "index 3") != NULL);
	one_fini(&o);
}

static void tree_const(struct one *o, const char *name, ert_dtype dt, int64_t n, const void *data)
{
	int32_t t = ert_graph_add_tensor(o->g, name, dt, 1, &n);
	struct ert_attr *a;

	if (t < 0)
		abort();
	o->g->tensors[t].flags |= ERT_TENSOR_CONST;
	o->g->tensors[t].data = data;
	o->g->tensors[t].nbytes = ert_dtype_bytes(dt, n);
	a = ert_node_add_attr(o->g, o->n, name, ERT_ATTR_TENSOR);
	if (!a)
		abort();
	a->tensor = t;
}

/*
 * Two trees over features [f0, f1]: tree 0 is node 0 (f0 <= 1.5: leaf 0 (w 1,
 * target 0), else node 1 (f1 in {2, 4}: leaf 1 (w 10, target 1), else leaf 2
 * (w 100, target 1))); tree 1 is node 2 (f1 < 0: leaf 3 (w 1000, target 0),
 * else leaf 4 (w 5, target 1)).
 */
static void tree_model(struct one *o, int64_t agg, int64_t post, const int64_t *true_ids)
{
	static const uint8_t modes[3] = { 0, 6, 1 };
	static const float splits[3] = { 1.5f, 0, 0 }, weights[5] = { 1, 10, 100, 1000, 5 };
	static const float members[3] = { 2, 4, NAN };

	one_init(o, ERT_OP_TreeEnsemble, 1, 1, 1);
	ert_node_set_attr_ints(o->g, o->n, "nodes_featureids", (int64_t[]){ 0, 1, 1 }, 3);
	ert_node_set_attr_ints(o->g, o->n, "nodes_truenodeids", true_ids, 3);
	ert_node_set_attr_ints(o->g, o->n, "nodes_trueleafs", (int64_t[]){ 1, 1, 1 }, 3);
	ert_node_set_attr_ints(o->g, o->n, "nodes_falsenodeids", (int64_t[]){ 1, 2, 4 }, 3);
	ert_node_set_attr_ints(o->g, o->n, "nodes_falseleafs", (int64_t[]){ 0, 1, 1 }, 3);
	ert_node_set_attr_ints(o->g, o->n, "tree_roots", (int64_t[]){ 0, 2 }, 2);
	ert_node_set_attr_ints(o->g, o->n, "leaf_targetids", (int64_t[]){ 0, 1, 1, 0, 1 }, 5);
	ert_node_set_attr_int(o->g, o->n, "n_targets", 2);
	ert_node_set_attr_int(o->g, o->n, "aggregate_function", agg);
	ert_node_set_attr_int(o->g, o->n, "post_transform", post);
	tree_const(o, "nodes_modes", ERT_DTYPE_UINT8, 3, modes);
	tree_const(o, "nodes_splits", ERT_DTYPE_FLOAT32, 3, splits);
	tree_const(o, "leaf_weights", ERT_DTYPE_FLOAT32, 5, weights);
	tree_const(o, "membership_values", ERT_DTYPE_FLOAT32, 3, members);
}

ERT_TEST(tree_ensemble)
{
	static const float x[8] = { 1, 0, 2, 4, 2, 3, 2, -1 };
	/* rows: leaf 0 + leaf 4; leaf 1 + leaf 4; leaf 2 + leaf 4; leaf 2 + leaf 3 */
	static const float sum[8] = { 1, 5, 0, 15, 0, 105, 1000, 100 };
	int64_t dims[2] = { 4, 2 };
	struct one o;

	tree_model(&o, 1 /* SUM */, 0, (int64_t[]){ 0, 1, 3 });
	set_in(&o, 0, ERT_DTYPE_FLOAT32, 2, dims, x);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK(o.out[0].dims[0] == 4 && o.out[0].dims[1] == 2);
	for (int i = 0; i < 8; i++)
		CHECK(near(((float *)o.out[0].data)[i], sum[i]));
	one_fini(&o);

	/* AVERAGE over the 2 trees, then LOGISTIC */
	tree_model(&o, 0, 2, (int64_t[]){ 0, 1, 3 });
	set_in(&o, 0, ERT_DTYPE_FLOAT32, 2, dims, x);
	REQUIRE(one_run(&o) == ERT_OK);
	for (int i = 0; i < 8; i++)
		CHECK(near(((float *)o.out[0].data)[i], 1 / (1 + exp(-sum[i] / 2.0))));
	one_fini(&o);

	/* MAX; a target no leaf reached keeps the type's lowest value, as ONNX's reference */
	tree_model(&o, 3, 0, (int64_t[]){ 0, 1, 3 });
	set_in(&o, 0, ERT_DTYPE_FLOAT32, 2, dims, x);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK(near(((float *)o.out[0].data)[3], 10) && near(((float *)o.out[0].data)[5], 100));
	CHECK(((float *)o.out[0].data)[2] == -FLT_MAX);
	one_fini(&o);
}

ERT_TEST(tree_ensemble_hostile)
{
	static const float x[2] = { 1, 0 };
	int64_t dims[2] = { 1, 2 };
	struct one o;

	/* node 1's false child is node 1 itself (trueleafs says leaf for node 1's true side) */
	tree_model(&o, 1, 0, (int64_t[]){ 0, 1, 3 });
	ert_node_set_attr_ints(o.g, o.n, "nodes_falseleafs", (int64_t[]){ 0, 0, 1 }, 3);
	ert_node_set_attr_ints(o.g, o.n, "nodes_falsenodeids", (int64_t[]){ 1, 1, 4 }, 3);
	ert_node_set_attr_ints(o.g, o.n, "nodes_trueleafs", (int64_t[]){ 0, 0, 1 }, 3);
	ert_node_set_attr_ints(o.g, o.n, "nodes_truenodeids", (int64_t[]){ 1, 1, 3 }, 3);
	set_in(&o, 0, ERT_DTYPE_FLOAT32, 2, dims, x);
	CHECK(one_run(&o) == ERT_STATUS_INVALID_MODEL);
	CHECK(strstr(o.err.msg, "cycle") != NULL);
	one_fini(&o);

	/* a leaf index past leaf_weights */
	tree_model(&o, 1, 0, (int64_t[]){ 0, 1, 5 });
	set_in(&o, 0, ERT_DTYPE_FLOAT32, 2, dims, x);
	CHECK(one_run(&o) == ERT_STATUS_INVALID_MODEL);
	CHECK(strstr(o.err.msg, "nodes_truenodeids[2] = 5 is out of range") != NULL);
	one_fini(&o);

	/* a feature past the input's columns */
	tree_model(&o, 1, 0, (int64_t[]){ 0, 1, 3 });
	ert_node_set_attr_ints(o.g, o.n, "nodes_featureids", (int64_t[]){ 0, 7, 1 }, 3);
	set_in(&o, 0, ERT_DTYPE_FLOAT32, 2, dims, x);
	CHECK(one_run(&o) == ERT_STATUS_SHAPE);
	one_fini(&o);

	/* a member node without its set */
	tree_model(&o, 1, 0, (int64_t[]){ 0, 1, 3 });
	o.g->tensors[ert_node_attr(o.n, "membership_values")->tensor].nbytes = 0;
	set_in(&o, 0, ERT_DTYPE_FLOAT32, 2, dims, x);
	CHECK(one_run(&o) == ERT_STATUS_INVALID_MODEL);
	CHECK(strstr(o.err.msg, "membership_values") != NULL);
	one_fini(&o);
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(adagrad), ERT_TEST_ENTRY(momentum_standard_nesterov),
	      ERT_TEST_ENTRY(adam_two_tensors), ERT_TEST_ENTRY(binarizer_and_feature_extractor),
	      ERT_TEST_ENTRY(tree_ensemble), ERT_TEST_ENTRY(tree_ensemble_hostile))
