/* SPDX-License-Identifier: MIT */
/*
 * Movement family, indexed and generated values: Slice, Gather*, Scatter*, Pad,
 * CenterCropPad, Shape, Size, Constant, ConstantOfShape, Range, Trilu, EyeLike,
 * OneHot — through ert_cpu_eval_node() on one-node graphs (helpers from
 * ert-op-test.h).
 */
#include <stdlib.h>

#include "ert-op-test.h"
#include "ert-test.h"

static const float *outf(const struct one *o, uint32_t i)
{
	return o->out[i].data;
}

ERT_TEST(slice_forms_and_clamping)
{
	struct one o;
	float x[20];
	int64_t starts[2] = { -1, 0 }, ends[2] = { -1000, 10 }, axes[2] = { 0, -1 };
	int64_t steps[2] = { -2, 2 };

	fill_f32(x, 20);
	one_init(&o, ERT_OP_Slice, 13, 5, 1);
	set_val(&o.in[0], ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 4, 5 }, x);
	set_val(&o.in[1], ERT_DTYPE_INT64, 1, (int64_t[]){ 2 }, starts);
	set_val(&o.in[2], ERT_DTYPE_INT64, 1, (int64_t[]){ 2 }, ends);
	set_val(&o.in[3], ERT_DTYPE_INT64, 1, (int64_t[]){ 2 }, axes);
	set_val(&o.in[4], ERT_DTYPE_INT64, 1, (int64_t[]){ 2 }, steps);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].dims[0], 2);
	CHECK_EQ_INT(o.out[0].dims[1], 3);
	const float *y = outf(&o, 0);

	CHECK(y[0] == 15 && y[1] == 17 && y[2] == 19 && y[3] == 5 && y[5] == 9);
	steps[1] = 0;
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_INVALID_MODEL);
	CHECK(strstr(o.err.msg, "step") != NULL);
	axes[1] = 0;
	steps[1] = 1;
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_SHAPE);
	one_fini(&o);

	/* opset 9: attributes; an end of INT64_MAX means "to the end" */
	one_init(&o, ERT_OP_Slice, 9, 1, 1);
	ert_node_set_attr_ints(o.g, o.n, "starts", (int64_t[]){ 1 }, 1);
	ert_node_set_attr_ints(o.g, o.n, "ends", (int64_t[]){ INT64_MAX }, 1);
	ert_node_set_attr_ints(o.g, o.n, "axes", (int64_t[]){ 1 }, 1);
	set_val(&o.in[0], ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 4, 5 }, x);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].dims[1], 4);
	CHECK(outf(&o, 0)[0] == 1 && outf(&o, 0)[4] == 6);
	one_fini(&o);

	/* start past the end: empty, not an error */
	int64_t s1[1] = { 7 }, e1[1] = { 9 };

	one_init(&o, ERT_OP_Slice, 13, 3, 1);
	set_val(&o.in[0], ERT_DTYPE_FLOAT32, 1, (int64_t[]){ 5 }, x);
	set_val(&o.in[1], ERT_DTYPE_INT64, 1, (int64_t[]){ 1 }, s1);
	set_val(&o.in[2], ERT_DTYPE_INT64, 1, (int64_t[]){ 1 }, e1);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].dims[0], 0);
	/* starts not known while planning (ert_check_known's message) */
	o.in[1].data = NULL;
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_UNSUPPORTED);
	CHECK_EQ_STR(o.err.msg, "Slice 'Slice_0': starts must be known when the model is planned");
	one_fini(&o);
}

ERT_TEST(gathers)
{
	struct one o;
	float x[8];
	int64_t idx[2] = { -1, 0 };

	fill_f32(x, 8);
	one_init(&o, ERT_OP_Gather, 13, 2, 1);
	set_val(&o.in[0], ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 3, 2 }, x);
	set_val(&o.in[1], ERT_DTYPE_INT64, 2, (int64_t[]){ 1, 2 }, idx);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].rank, 3);
	CHECK(outf(&o, 0)[0] == 4 && outf(&o, 0)[1] == 5 && outf(&o, 0)[2] == 0);
	idx[0] = 3;
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_INVALID_ARGUMENT);
	CHECK(strstr(o.err.msg, "out of range") != NULL);
	one_fini(&o);

	int32_t ei[4] = { 0, 0, 1, -2 };

	one_init(&o, ERT_OP_GatherElements, 13, 2, 1);
	ert_node_set_attr_int(o.g, o.n, "axis", 1);
	set_val(&o.in[0], ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 2, 2 }, x);
	set_val(&o.in[1], ERT_DTYPE_INT32, 2, (int64_t[]){ 2, 2 }, ei);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK(outf(&o, 0)[0] == 0 && outf(&o, 0)[1] == 0 && outf(&o, 0)[2] == 3 &&
	      outf(&o, 0)[3] == 2);
	one_fini(&o);

	int64_t ni[2] = { 1, 0 };

	one_init(&o, ERT_OP_GatherND, 13, 2, 1);
	ert_node_set_attr_int(o.g, o.n, "batch_dims", 1);
	set_val(&o.in[0], ERT_DTYPE_FLOAT32, 3, (int64_t[]){ 2, 2, 2 }, x);
	set_val(&o.in[1], ERT_DTYPE_INT64, 2, (int64_t[]){ 2, 1 }, ni);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].rank, 2);
	CHECK(outf(&o, 0)[0] == 2 && outf(&o, 0)[1] == 3 && outf(&o, 0)[2] == 4 &&
	      outf(&o, 0)[3] == 5);
	one_fini(&o);
}

ERT_TEST(scatters_with_reductions)
{
	struct one o;
	float data[5] = { 0 }, upd[3] = { 1, 2, 3 };
	int64_t idx[3] = { 1, 1, 3 };

	one_init(&o, ERT_OP_ScatterElements, 18, 3, 1);
	ert_node_set_attr_int(o.g, o.n, "axis", 1);
	ert_node_add_attr(o.g, o.n, "reduction", ERT_ATTR_STRING)->s = "add";
	set_val(&o.in[0], ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 1, 5 }, data);
	set_val(&o.in[1], ERT_DTYPE_INT64, 2, (int64_t[]){ 1, 3 }, idx);
	set_val(&o.in[2], ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 1, 3 }, upd);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK(outf(&o, 0)[1] == 3 && outf(&o, 0)[3] == 3 && outf(&o, 0)[0] == 0);
	one_fini(&o);

	int32_t d4[4] = { 1, 2, 3, 4 }, u4[3] = { 2, 3, 5 };
	int64_t nd[3] = { 1, 1, -1 };

	one_init(&o, ERT_OP_ScatterND, 18, 3, 1);
	ert_node_add_attr(o.g, o.n, "reduction", ERT_ATTR_STRING)->s = "mul";
	set_val(&o.in[0], ERT_DTYPE_INT32, 1, (int64_t[]){ 4 }, d4);
	set_val(&o.in[1], ERT_DTYPE_INT64, 2, (int64_t[]){ 3, 1 }, nd);
	set_val(&o.in[2], ERT_DTYPE_INT32, 1, (int64_t[]){ 3 }, u4);
	REQUIRE(one_run(&o) == ERT_OK);
	const int32_t *y = o.out[0].data;

	CHECK(y[0] == 1 && y[1] == 12 && y[2] == 3 && y[3] == 20);
	CHECK(d4[1] == 2); /* the input is not touched */
	one_fini(&o);

	one_init(&o, ERT_OP_ScatterND, 18, 3, 1);
	ert_node_add_attr(o.g, o.n, "reduction", ERT_ATTR_STRING)->s = "avg";
	set_val(&o.in[0], ERT_DTYPE_INT32, 1, (int64_t[]){ 4 }, d4);
	set_val(&o.in[1], ERT_DTYPE_INT64, 2, (int64_t[]){ 3, 1 }, nd);
	set_val(&o.in[2], ERT_DTYPE_INT32, 1, (int64_t[]){ 3 }, u4);
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_UNSUPPORTED);
	one_fini(&o);
}

/* Pad [2, 3] = 1..6 with @pads in @mode: does the first output row match @want? */
static bool pad_row(const char *mode, const int64_t *pads, uint32_t np, const float *want,
		    int64_t want_cols)
{
	struct one o;
	float x[6] = { 1, 2, 3, 4, 5, 6 }, value = 9;
	bool ok;

	one_init(&o, ERT_OP_Pad, 19, 3, 1);
	ert_node_add_attr(o.g, o.n, "mode", ERT_ATTR_STRING)->s = mode;
	set_val(&o.in[0], ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 2, 3 }, x);
	set_val(&o.in[1], ERT_DTYPE_INT64, 1, (int64_t[]){ np }, (void *)pads);
	set_val(&o.in[2], ERT_DTYPE_FLOAT32, 0, NULL, &value);
	ok = one_run(&o) == ERT_OK && o.out[0].dims[1] == want_cols &&
	     memcmp(o.out[0].data, want, sizeof(float) * (size_t)want_cols) == 0;
	one_fini(&o);
	return ok;
}

ERT_TEST(pad_modes)
{
	CHECK(pad_row("constant", (int64_t[]){ 0, 1, 1, 0 }, 4, (float[]){ 9, 1, 2, 3 }, 4));
	CHECK(pad_row("reflect", (int64_t[]){ 0, 2, 0, 2 }, 4, (float[]){ 3, 2, 1, 2, 3, 2, 1 }, 7));
	CHECK(pad_row("edge", (int64_t[]){ 1, 0, 0, 1 }, 4, (float[]){ 1, 2, 3, 3 }, 4));
	CHECK(pad_row("wrap", (int64_t[]){ 0, 1, 0, 2 }, 4, (float[]){ 3, 1, 2, 3, 1, 2 }, 6));
	CHECK(pad_row("constant", (int64_t[]){ 0, -1, 0, 0 }, 4, (float[]){ 2, 3 }, 2));
	CHECK(!pad_row("mirror", (int64_t[]){ 0, 0, 0, 0 }, 4, (float[]){ 1 }, 3));

	/* opset 2: attributes, value 0.5 */
	struct one o;
	float x[6] = { 1, 2, 3, 4, 5, 6 };

	one_init(&o, ERT_OP_Pad, 2, 1, 1);
	ert_node_set_attr_ints(o.g, o.n, "pads", (int64_t[]){ 1, 0, 0, 0 }, 4);
	ert_node_set_attr_float(o.g, o.n, "value", 0.5f);
	set_val(&o.in[0], ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 2, 3 }, x);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].dims[0], 3);
	CHECK(outf(&o, 0)[2] == 0.5f && outf(&o, 0)[3] == 1);
	one_fini(&o);

	/* opset 18: axes input */
	int64_t pads[2] = { 1, 1 }, axes[1] = { -1 };

	one_init(&o, ERT_OP_Pad, 18, 4, 1);
	set_val(&o.in[0], ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 2, 3 }, x);
	set_val(&o.in[1], ERT_DTYPE_INT64, 1, (int64_t[]){ 2 }, pads);
	set_val(&o.in[3], ERT_DTYPE_INT64, 1, (int64_t[]){ 1 }, axes);
	o.inp[2] = NULL;
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].dims[0], 2);
	CHECK_EQ_INT(o.out[0].dims[1], 5);
	CHECK(outf(&o, 0)[0] == 0 && outf(&o, 0)[1] == 1 && outf(&o, 0)[5] == 0);
	one_fini(&o);

	/* CenterCropPad: rows padded 1 + 1, columns cropped to the middle one */
	int64_t shape[2] = { 4, 1 };

	one_init(&o, ERT_OP_CenterCropPad, 18, 2, 1);
	set_val(&o.in[0], ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 2, 3 }, x);
	set_val(&o.in[1], ERT_DTYPE_INT64, 1, (int64_t[]){ 2 }, shape);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].dims[0], 4);
	CHECK(outf(&o, 0)[0] == 0 && outf(&o, 0)[1] == 2 && outf(&o, 0)[2] == 5 &&
	      outf(&o, 0)[3] == 0);
	one_fini(&o);
}

ERT_TEST(shape_size_constants)
{
	struct one o;
	float x[120] = { 0 };

	one_init(&o, ERT_OP_Shape, 15, 1, 1);
	ert_node_set_attr_int(o.g, o.n, "start", -3);
	ert_node_set_attr_int(o.g, o.n, "end", -1);
	set_val(&o.in[0], ERT_DTYPE_FLOAT32, 4, (int64_t[]){ 2, 3, 4, 5 }, x);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].dims[0], 2);
	CHECK(((int64_t *)o.out[0].data)[0] == 3 && ((int64_t *)o.out[0].data)[1] == 4);
	one_fini(&o);

	one_init(&o, ERT_OP_Size, 13, 1, 1);
	set_val(&o.in[0], ERT_DTYPE_FLOAT32, 4, (int64_t[]){ 2, 3, 4, 5 }, x);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].rank, 0);
	CHECK_EQ_INT(*(int64_t *)o.out[0].data, 120);
	one_fini(&o);

	one_init(&o, ERT_OP_Constant, 13, 0, 1);
	ert_node_set_attr_ints(o.g, o.n, "value_ints", (int64_t[]){ 3, 4 }, 2);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].dtype, ERT_DTYPE_INT64);
	CHECK(((int64_t *)o.out[0].data)[1] == 4);
	one_fini(&o);

	/* a tensor attribute refers to a constant tensor of the graph */
	static const int32_t seven = 7;
	int64_t shape[2] = { 2, 3 };

	one_init(&o, ERT_OP_ConstantOfShape, 13, 1, 1);
	int32_t t = ert_graph_add_tensor(o.g, "seven", ERT_DTYPE_INT32, 1, (int64_t[]){ 1 });

	ert_graph_set_const(o.g, t, &seven, sizeof(seven), false);
	ert_node_add_attr(o.g, o.n, "value", ERT_ATTR_TENSOR)->tensor = t;
	set_val(&o.in[0], ERT_DTYPE_INT64, 1, (int64_t[]){ 2 }, shape);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].dtype, ERT_DTYPE_INT32);
	CHECK_EQ_INT(o.out[0].numel, 6);
	CHECK(((int32_t *)o.out[0].data)[5] == 7);
	one_fini(&o);

	/* an 8-byte value of unlike bytes over 3 x 50001 elements: past the 64 KiB block */
	static const double val = -1.2345678901234567;
	int64_t big[2] = { 3, 50001 };

	one_init(&o, ERT_OP_ConstantOfShape, 13, 1, 1);
	t = ert_graph_add_tensor(o.g, "val", ERT_DTYPE_FLOAT64, 1, (int64_t[]){ 1 });
	ert_graph_set_const(o.g, t, &val, sizeof(val), false);
	ert_node_add_attr(o.g, o.n, "value", ERT_ATTR_TENSOR)->tensor = t;
	set_val(&o.in[0], ERT_DTYPE_INT64, 1, (int64_t[]){ 2 }, big);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].numel, 150003);
	int64_t wrong = 0;

	for (int64_t i = 0; i < o.out[0].numel; i++)
		wrong += memcmp((const double *)o.out[0].data + i, &val, sizeof(val)) != 0;
	CHECK_EQ_INT(wrong, 0);
	one_fini(&o);

	one_init(&o, ERT_OP_ConstantOfShape, 13, 1, 1);
	shape[0] = 0;
	set_val(&o.in[0], ERT_DTYPE_INT64, 1, (int64_t[]){ 2 }, shape);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].dtype, ERT_DTYPE_FLOAT32);
	CHECK_EQ_INT(o.out[0].numel, 0);
	one_fini(&o);
}

ERT_TEST(range_counts)
{
	struct one o;
	int32_t s = 10, l = 4, d = -3;

	one_init(&o, ERT_OP_Range, 11, 3, 1);
	set_val(&o.in[0], ERT_DTYPE_INT32, 0, NULL, &s);
	set_val(&o.in[1], ERT_DTYPE_INT32, 0, NULL, &l);
	set_val(&o.in[2], ERT_DTYPE_INT32, 0, NULL, &d);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].dims[0], 2);
	CHECK(((int32_t *)o.out[0].data)[1] == 7);
	d = 0;
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_INVALID_MODEL);
	one_fini(&o);

	float fs = 1.0f, fl = 2.0f, fd = 0.3f;

	one_init(&o, ERT_OP_Range, 11, 3, 1);
	set_val(&o.in[0], ERT_DTYPE_FLOAT32, 0, NULL, &fs);
	set_val(&o.in[1], ERT_DTYPE_FLOAT32, 0, NULL, &fl);
	set_val(&o.in[2], ERT_DTYPE_FLOAT32, 0, NULL, &fd);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].dims[0], 4);
	CHECK_NEAR(outf(&o, 0)[3], 1.9, 1e-6);
	one_fini(&o);
}

ERT_TEST(trilu_eyelike_onehot)
{
	struct one o;
	float x[12];
	int64_t k = -1;

	fill_f32(x, 12);
	one_init(&o, ERT_OP_Trilu, 14, 1, 1);
	set_val(&o.in[0], ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 3, 4 }, x);
	REQUIRE(one_run(&o) == ERT_OK);
	/* upper, k = 0: keep j >= i */
	CHECK(outf(&o, 0)[0] == 0 && outf(&o, 0)[4] == 0 && outf(&o, 0)[5] == 5 &&
	      outf(&o, 0)[9] == 0 && outf(&o, 0)[10] == 10);
	one_fini(&o);

	one_init(&o, ERT_OP_Trilu, 14, 2, 1);
	ert_node_set_attr_int(o.g, o.n, "upper", 0);
	set_val(&o.in[0], ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 3, 4 }, x);
	set_val(&o.in[1], ERT_DTYPE_INT64, 0, NULL, &k);
	REQUIRE(one_run(&o) == ERT_OK);
	/* lower, k = -1: keep j <= i - 1 */
	CHECK(outf(&o, 0)[4] == 4 && outf(&o, 0)[5] == 0 && outf(&o, 0)[9] == 9 &&
	      outf(&o, 0)[10] == 0 && outf(&o, 0)[0] == 0);
	one_fini(&o);

	one_init(&o, ERT_OP_EyeLike, 9, 1, 1);
	ert_node_set_attr_int(o.g, o.n, "dtype", ERT_DTYPE_INT32);
	ert_node_set_attr_int(o.g, o.n, "k", 1);
	set_val(&o.in[0], ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 3, 4 }, x);
	REQUIRE(one_run(&o) == ERT_OK);
	const int32_t *e = o.out[0].data;

	CHECK_EQ_INT(o.out[0].dtype, ERT_DTYPE_INT32);
	CHECK(e[0] == 0 && e[1] == 1 && e[6] == 1 && e[11] == 1 && e[10] == 0);
	one_fini(&o);

	int64_t idx[3] = { 1, -1, 5 };
	float depth = 3;
	int32_t vals[2] = { 0, 7 };

	one_init(&o, ERT_OP_OneHot, 11, 3, 1);
	set_val(&o.in[0], ERT_DTYPE_INT64, 1, (int64_t[]){ 3 }, idx);
	set_val(&o.in[1], ERT_DTYPE_FLOAT32, 0, NULL, &depth);
	set_val(&o.in[2], ERT_DTYPE_INT32, 1, (int64_t[]){ 2 }, vals);
	REQUIRE(one_run(&o) == ERT_OK);
	const int32_t *h = o.out[0].data;

	CHECK_EQ_INT(o.out[0].dims[1], 3);
	CHECK(h[1] == 7 && h[0] == 0 && h[5] == 7 && h[6] == 0 && h[7] == 0 && h[8] == 0);
	one_fini(&o);

	one_init(&o, ERT_OP_OneHot, 11, 3, 1);
	ert_node_set_attr_int(o.g, o.n, "axis", 0);
	set_val(&o.in[0], ERT_DTYPE_INT64, 1, (int64_t[]){ 3 }, idx);
	set_val(&o.in[1], ERT_DTYPE_FLOAT32, 0, NULL, &depth);
	set_val(&o.in[2], ERT_DTYPE_INT32, 1, (int64_t[]){ 2 }, vals);
	REQUIRE(one_run(&o) == ERT_OK);
	h = o.out[0].data;
	/* [depth, 3]: column j has its 7 in row idx[j] */
	CHECK(h[3] == 7 && h[7] == 7 && h[0] == 0 && h[8] == 0);
	one_fini(&o);
}

/* The threaded paths give the same bytes as the single-threaded ones. */
ERT_TEST(pool_matches_inline)
{
	struct ert_threadpool *pool = ert_threadpool_create(4);
	int64_t dims[3] = { 7, 130, 90 }, n = 7 * 130 * 90;
	float *x = malloc(sizeof(float) * (size_t)n);
	int64_t pads[6] = { 1, 3, 2, 2, -5, 4 }, gidx[5] = { 129, 0, -1, 64, 3 };
	int64_t starts[2] = { 120, 1 }, ends[2] = { 2, 89 }, axes[2] = { 1, 2 }, steps[2] = { -3, 2 };

	REQUIRE(pool && x);
	fill_f32(x, n);
	for (int op = 0; op < 3; op++) {
		struct one a, b;

		for (int pass = 0; pass < 2; pass++) {
			struct one *o = pass ? &b : &a;

			if (op == 0) {
				one_init(o, ERT_OP_Pad, 13, 2, 1);
				ert_node_add_attr(o->g, o->n, "mode", ERT_ATTR_STRING)->s = "reflect";
				set_val(&o->in[1], ERT_DTYPE_INT64, 1, (int64_t[]){ 6 }, pads);
			} else if (op == 1) {
				one_init(o, ERT_OP_Gather, 13, 2, 1);
				ert_node_set_attr_int(o->g, o->n, "axis", 1);
				set_val(&o->in[1], ERT_DTYPE_INT64, 1, (int64_t[]){ 5 }, gidx);
			} else {
				one_init(o, ERT_OP_Slice, 13, 5, 1);
				set_val(&o->in[1], ERT_DTYPE_INT64, 1, (int64_t[]){ 2 }, starts);
				set_val(&o->in[2], ERT_DTYPE_INT64, 1, (int64_t[]){ 2 }, ends);
				set_val(&o->in[3], ERT_DTYPE_INT64, 1, (int64_t[]){ 2 }, axes);
				set_val(&o->in[4], ERT_DTYPE_INT64, 1, (int64_t[]){ 2 }, steps);
			}
			set_val(&o->in[0], ERT_DTYPE_FLOAT32, 3, dims, x);
		}
		CHECK_EQ_INT(one_run(&a), ERT_OK);
		CHECK_EQ_INT(one_run_pool(&b, pool), ERT_OK);
		CHECK_EQ_INT(a.out[0].numel, b.out[0].numel);
		CHECK(a.out[0].numel > 1000);
		if (a.out[0].data && b.out[0].data)
			CHECK(memcmp(a.out[0].data, b.out[0].data, a.out[0].nbytes) == 0);
		one_fini(&a);
		one_fini(&b);
	}
	ert_threadpool_destroy(pool);
	free(x);
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(slice_forms_and_clamping), ERT_TEST_ENTRY(gathers),
	      ERT_TEST_ENTRY(scatters_with_reductions), ERT_TEST_ENTRY(pad_modes),
	      ERT_TEST_ENTRY(shape_size_constants), ERT_TEST_ENTRY(range_counts),
	      ERT_TEST_ENTRY(trilu_eyelike_onehot), ERT_TEST_ENTRY(pool_matches_inline))
