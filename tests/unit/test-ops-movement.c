/* SPDX-License-Identifier: MIT */
/*
 * Movement family, shape ops: Reshape, Flatten, Squeeze, Unsqueeze, Transpose,
 * Concat, Split, Expand, Tile, DepthToSpace, SpaceToDepth — through
 * ert_cpu_eval_node() on one-node graphs, and the threaded paths through the
 * kernel table with a real pool, against naive reference loops.
 */
#include <stdlib.h>

#include "ert-op-test.h"
#include "ert-test.h"

ERT_TEST(reshape_zero_and_minus_one)
{
	struct one o;
	float x[24];
	int64_t shape[3] = { 0, -1, 2 };

	fill_f32(x, 24);
	one_init(&o, ERT_OP_Reshape, 14, 2, 1);
	set_val(&o.in[0], ERT_DTYPE_FLOAT32, 3, (int64_t[]){ 2, 3, 4 }, x);
	set_val(&o.in[1], ERT_DTYPE_INT64, 1, (int64_t[]){ 3 }, shape);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].rank, 3);
	CHECK_EQ_INT(o.out[0].dims[0], 2);
	CHECK_EQ_INT(o.out[0].dims[1], 6);
	CHECK(memcmp(o.out[0].data, x, sizeof(x)) == 0);
	one_fini(&o);

	/* allowzero: a 0 is a real zero-sized dim, and needs an empty input */
	int64_t zshape[2] = { 0, 4 };

	one_init(&o, ERT_OP_Reshape, 14, 2, 1);
	ert_node_set_attr_int(o.g, o.n, "allowzero", 1);
	set_val(&o.in[0], ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 0, 3 }, x);
	set_val(&o.in[1], ERT_DTYPE_INT64, 1, (int64_t[]){ 2 }, zshape);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].dims[0], 0);
	CHECK_EQ_INT(o.out[0].dims[1], 4);
	one_fini(&o);
}

ERT_TEST(reshape_errors)
{
	struct one o;
	float x[6] = { 0 };
	int64_t two_neg[2] = { -1, -1 }, wrong[2] = { 4, 2 };

	one_init(&o, ERT_OP_Reshape, 13, 2, 1);
	set_val(&o.in[0], ERT_DTYPE_FLOAT32, 1, (int64_t[]){ 6 }, x);
	set_val(&o.in[1], ERT_DTYPE_INT64, 1, (int64_t[]){ 2 }, two_neg);
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_SHAPE);
	CHECK(strstr(o.err.msg, "Reshape") && strstr(o.err.msg, "-1"));
	o.in[1].data = wrong;
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_SHAPE);
	/* the shape must be known at plan time */
	o.in[1].data = NULL;
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_UNSUPPORTED);
	CHECK(strstr(o.err.msg, "shape") != NULL);
	one_fini(&o);
}

ERT_TEST(reshape_in_place_and_overlap)
{
	struct one o;
	float buf[8];

	fill_f32(buf, 8);
	one_init(&o, ERT_OP_Flatten, 13, 1, 1);
	set_val(&o.in[0], ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 2, 3 }, buf);
	const struct ert_cpu_op *k = ert_cpu_op_find(ERT_OP_Flatten);
	struct ert_value *inp[1] = { &o.in[0] }, *outp[1] = { &o.out[0] };
	bool in_const[1] = { false };
	struct ert_exec x = { .graph = o.g, .node = o.n, .in = inp, .out = outp, .n_in = 1,
			      .n_out = 1, .in_const = in_const };
	struct ert_cpu cpu = { 0 };

	/* in place: the same buffer, nothing moves */
	set_val(&o.out[0], ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 2, 3 }, buf);
	REQUIRE(k->compute(&cpu, &x, &o.err) == ERT_OK);
	CHECK(buf[5] == 5.0f);
	/* overlapping by two elements: must behave like memmove */
	o.out[0].data = buf + 2;
	REQUIRE(k->compute(&cpu, &x, &o.err) == ERT_OK);
	CHECK(buf[2] == 0.0f && buf[7] == 5.0f);
	o.out[0].data = NULL;
	one_fini(&o);
}

ERT_TEST(flatten_axes)
{
	struct one o;
	float x[24];

	fill_f32(x, 24);
	one_init(&o, ERT_OP_Flatten, 13, 1, 1);
	ert_node_set_attr_int(o.g, o.n, "axis", 0);
	set_val(&o.in[0], ERT_DTYPE_FLOAT32, 3, (int64_t[]){ 2, 3, 4 }, x);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].dims[0], 1);
	CHECK_EQ_INT(o.out[0].dims[1], 24);
	one_fini(&o);

	one_init(&o, ERT_OP_Flatten, 13, 1, 1);
	ert_node_set_attr_int(o.g, o.n, "axis", -1);
	set_val(&o.in[0], ERT_DTYPE_FLOAT32, 3, (int64_t[]){ 2, 3, 4 }, x);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].dims[0], 6);
	CHECK_EQ_INT(o.out[0].dims[1], 4);
	one_fini(&o);

	one_init(&o, ERT_OP_Flatten, 13, 1, 1);
	ert_node_set_attr_int(o.g, o.n, "axis", 4);
	set_val(&o.in[0], ERT_DTYPE_FLOAT32, 3, (int64_t[]){ 2, 3, 4 }, x);
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_SHAPE);
	one_fini(&o);
}

ERT_TEST(squeeze_unsqueeze_both_forms)
{
	struct one o;
	float x[6];
	int64_t axes[2] = { -1, 0 };

	fill_f32(x, 6);
	/* opset 11: axes attribute */
	one_init(&o, ERT_OP_Squeeze, 11, 1, 1);
	ert_node_set_attr_ints(o.g, o.n, "axes", (int64_t[]){ 0 }, 1);
	set_val(&o.in[0], ERT_DTYPE_FLOAT32, 4, (int64_t[]){ 1, 2, 3, 1 }, x);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].rank, 3);
	CHECK_EQ_INT(o.out[0].dims[2], 1);
	one_fini(&o);

	/* opset 13: axes input; and no axes removes every 1 */
	one_init(&o, ERT_OP_Squeeze, 13, 2, 1);
	set_val(&o.in[0], ERT_DTYPE_FLOAT32, 4, (int64_t[]){ 1, 2, 3, 1 }, x);
	set_val(&o.in[1], ERT_DTYPE_INT64, 1, (int64_t[]){ 2 }, axes);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].rank, 2);
	o.inp[1] = NULL;
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].rank, 2);
	one_fini(&o);

	one_init(&o, ERT_OP_Squeeze, 11, 1, 1);
	ert_node_set_attr_ints(o.g, o.n, "axes", (int64_t[]){ 1 }, 1);
	set_val(&o.in[0], ERT_DTYPE_FLOAT32, 4, (int64_t[]){ 1, 2, 3, 1 }, x);
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_SHAPE);
	CHECK(strstr(o.err.msg, "not 1") != NULL);
	one_fini(&o);

	/* Unsqueeze: axes count against the output rank, any order */
	int64_t uaxes[3] = { 4, 0, -3 };

	one_init(&o, ERT_OP_Unsqueeze, 13, 2, 1);
	set_val(&o.in[0], ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 2, 3 }, x);
	set_val(&o.in[1], ERT_DTYPE_INT64, 1, (int64_t[]){ 3 }, uaxes);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].rank, 5);
	CHECK(o.out[0].dims[0] == 1 && o.out[0].dims[1] == 2 && o.out[0].dims[2] == 1 &&
	      o.out[0].dims[3] == 3 && o.out[0].dims[4] == 1);
	one_fini(&o);

	one_init(&o, ERT_OP_Unsqueeze, 11, 1, 1);
	ert_node_set_attr_ints(o.g, o.n, "axes", (int64_t[]){ 1, 1 }, 2);
	set_val(&o.in[0], ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 2, 3 }, x);
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_SHAPE);
	one_fini(&o);
}

/* Naive transpose of a row-major tensor of @es-byte elements. */
static void ref_transpose(const char *src, char *dst, size_t es, int32_t rank, const int64_t *dims,
			  const int64_t *perm)
{
	int64_t n = ert_shape_numel(rank, dims), istr[8], odims[8], idx[8];

	for (int32_t i = rank - 1, s = 1; i >= 0; s *= (int32_t)dims[i], i--)
		istr[i] = s;
	for (int32_t i = 0; i < rank; i++)
		odims[i] = dims[perm[i]];
	for (int64_t o = 0; o < n; o++) {
		int64_t rem = o, off = 0;

		for (int32_t i = rank - 1; i >= 0; i--) {
			idx[i] = rem % odims[i];
			rem /= odims[i];
			off += idx[i] * istr[perm[i]];
		}
		memcpy(dst + (size_t)o * es, src + (size_t)off * es, es);
	}
}

ERT_TEST(transpose_against_reference)
{
	static const int64_t perms[][4] = {
		{ 0, 2, 3, 1 }, { 0, 3, 1, 2 }, { 3, 2, 1, 0 }, { 1, 0, 2, 3 }, { 0, 1, 3, 2 },
		{ 2, 0, 3, 1 },
	};
	static const ert_dtype types[] = { ERT_DTYPE_UINT8, ERT_DTYPE_FLOAT16, ERT_DTYPE_FLOAT32,
					   ERT_DTYPE_INT64 };
	int64_t dims[4] = { 3, 37, 41, 19 };
	int64_t n = ert_shape_numel(4, dims);
	struct ert_threadpool *pool = ert_threadpool_create(4);
	char *src = malloc((size_t)n * 8), *ref = malloc((size_t)n * 8);

	REQUIRE(pool && src && ref);
	for (int64_t i = 0; i < n * 8; i++)
		src[i] = (char)(i * 7 + (i >> 8));
	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		size_t es = ert_dtype_size(types[t]);

		for (size_t p = 0; p < sizeof(perms) / sizeof(perms[0]); p++) {
			struct one o;

			one_init(&o, ERT_OP_Transpose, 13, 1, 1);
			ert_node_set_attr_ints(o.g, o.n, "perm", perms[p], 4);
			set_val(&o.in[0], types[t], 4, dims, src);
			ref_transpose(src, ref, es, 4, dims, perms[p]);
			CHECK_EQ_INT(one_run_pool(&o, pool), ERT_OK);
			if (memcmp(o.out[0].data, ref, (size_t)n * es)) {
				fprintf(stderr, "transpose perm %zu type %s differs\n", p,
					ert_dtype_name(types[t]));
				CHECK(0);
			}
			one_fini(&o);
		}
	}
	/* default perm reverses; a 2-D matrix takes the blocked path */
	struct one o;
	int64_t rev[2] = { 1, 0 }, d2[2] = { 129, 67 };

	one_init(&o, ERT_OP_Transpose, 13, 1, 1);
	set_val(&o.in[0], ERT_DTYPE_FLOAT32, 2, d2, src);
	ref_transpose(src, ref, 4, 2, d2, rev);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK(memcmp(o.out[0].data, ref, 129 * 67 * 4) == 0);
	one_fini(&o);

	one_init(&o, ERT_OP_Transpose, 13, 1, 1);
	ert_node_set_attr_ints(o.g, o.n, "perm", (int64_t[]){ 0, 0 }, 2);
	set_val(&o.in[0], ERT_DTYPE_FLOAT32, 2, d2, src);
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_SHAPE);
	one_fini(&o);
	ert_threadpool_destroy(pool);
	free(src);
	free(ref);
}

ERT_TEST(concat_and_split)
{
	struct one o;
	int64_t a[6] = { 1, 2, 3, 4, 5, 6 }, b[2] = { 7, 8 };

	one_init(&o, ERT_OP_Concat, 13, 2, 1);
	ert_node_set_attr_int(o.g, o.n, "axis", -1);
	set_val(&o.in[0], ERT_DTYPE_INT64, 2, (int64_t[]){ 2, 3 }, a);
	set_val(&o.in[1], ERT_DTYPE_INT64, 2, (int64_t[]){ 2, 1 }, b);
	REQUIRE(one_run(&o) == ERT_OK);
	const int64_t *y = o.out[0].data;

	CHECK_EQ_INT(o.out[0].dims[1], 4);
	CHECK(y[0] == 1 && y[3] == 7 && y[4] == 4 && y[7] == 8);
	one_fini(&o);

	one_init(&o, ERT_OP_Concat, 13, 2, 1);
	ert_node_set_attr_int(o.g, o.n, "axis", 0);
	set_val(&o.in[0], ERT_DTYPE_INT64, 2, (int64_t[]){ 2, 3 }, a);
	set_val(&o.in[1], ERT_DTYPE_INT64, 2, (int64_t[]){ 2, 1 }, b);
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_SHAPE);
	one_fini(&o);

	/* opset 18 num_outputs: 7 splits into 3, 3, 1 */
	float x[14];

	fill_f32(x, 14);
	one_init(&o, ERT_OP_Split, 18, 1, 3);
	ert_node_set_attr_int(o.g, o.n, "axis", 1);
	ert_node_set_attr_int(o.g, o.n, "num_outputs", 3);
	set_val(&o.in[0], ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 2, 7 }, x);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].dims[1], 3);
	CHECK_EQ_INT(o.out[2].dims[1], 1);
	CHECK(((float *)o.out[1].data)[3] == 10.0f);
	CHECK(((float *)o.out[2].data)[1] == 13.0f);
	one_fini(&o);

	/* opset 11 split attribute, opset 13 split input */
	one_init(&o, ERT_OP_Split, 11, 1, 2);
	ert_node_set_attr_ints(o.g, o.n, "split", (int64_t[]){ 5, 2 }, 2);
	ert_node_set_attr_int(o.g, o.n, "axis", -1);
	set_val(&o.in[0], ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 2, 7 }, x);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK(((float *)o.out[1].data)[2] == 12.0f);
	one_fini(&o);

	int64_t sp[2] = { 1, 1 };

	one_init(&o, ERT_OP_Split, 13, 2, 2);
	set_val(&o.in[0], ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 2, 7 }, x);
	set_val(&o.in[1], ERT_DTYPE_INT64, 1, (int64_t[]){ 2 }, sp);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK(((float *)o.out[1].data)[0] == 7.0f);
	sp[1] = 3;
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_SHAPE);
	one_fini(&o);
}

ERT_TEST(expand_and_tile)
{
	struct one o;
	int32_t x[3] = { 1, 2, 3 };
	int64_t shape[3] = { 2, 1, 1 }, rep[2] = { 2, 3 };

	/* [3,1] expanded by [2,1,1]: bidirectional broadcast to [2,3,1] */
	one_init(&o, ERT_OP_Expand, 13, 2, 1);
	set_val(&o.in[0], ERT_DTYPE_INT32, 2, (int64_t[]){ 3, 1 }, x);
	set_val(&o.in[1], ERT_DTYPE_INT64, 1, (int64_t[]){ 3 }, shape);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].rank, 3);
	CHECK_EQ_INT(o.out[0].numel, 6);
	CHECK(((int32_t *)o.out[0].data)[5] == 3);
	one_fini(&o);

	shape[0] = 4;
	shape[1] = 4;
	one_init(&o, ERT_OP_Expand, 13, 2, 1);
	set_val(&o.in[0], ERT_DTYPE_INT32, 2, (int64_t[]){ 3, 1 }, x);
	set_val(&o.in[1], ERT_DTYPE_INT64, 1, (int64_t[]){ 2 }, shape);
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_SHAPE);
	one_fini(&o);

	one_init(&o, ERT_OP_Tile, 13, 2, 1);
	set_val(&o.in[0], ERT_DTYPE_INT32, 2, (int64_t[]){ 1, 3 }, x);
	set_val(&o.in[1], ERT_DTYPE_INT64, 1, (int64_t[]){ 2 }, rep);
	REQUIRE(one_run(&o) == ERT_OK);
	const int32_t *y = o.out[0].data;

	CHECK_EQ_INT(o.out[0].dims[0], 2);
	CHECK_EQ_INT(o.out[0].dims[1], 9);
	CHECK(y[0] == 1 && y[4] == 2 && y[8] == 3 && y[9] == 1 && y[17] == 3);
	one_fini(&o);

	/* big enough for several threads */
	struct ert_threadpool *pool = ert_threadpool_create(3);
	float *big = malloc(sizeof(float) * 64 * 50);
	int64_t brep[3] = { 3, 1, 2 };

	REQUIRE(pool && big);
	fill_f32(big, 64 * 50);
	one_init(&o, ERT_OP_Tile, 13, 2, 1);
	set_val(&o.in[0], ERT_DTYPE_FLOAT32, 3, (int64_t[]){ 64, 50, 1 }, big);
	set_val(&o.in[1], ERT_DTYPE_INT64, 1, (int64_t[]){ 3 }, brep);
	REQUIRE(one_run_pool(&o, pool) == ERT_OK);
	const float *t = o.out[0].data;
	bool same = true;

	for (int64_t i = 0; i < 3 * 64 * 50 * 2; i++)
		same &= t[i] == big[(i / 2) % (64 * 50)];
	CHECK(same);
	one_fini(&o);
	ert_threadpool_destroy(pool);
	free(big);
}

ERT_TEST(depth_space_round_trip)
{
	struct one o, back;
	float x[32];

	fill_f32(x, 32);
	one_init(&o, ERT_OP_DepthToSpace, 13, 1, 1);
	ert_node_set_attr_int(o.g, o.n, "blocksize", 2);
	set_val(&o.in[0], ERT_DTYPE_FLOAT32, 4, (int64_t[]){ 1, 8, 2, 2 }, x);
	REQUIRE(one_run(&o) == ERT_OK);
	const float *y = o.out[0].data;

	CHECK_EQ_INT(o.out[0].dims[1], 2);
	CHECK_EQ_INT(o.out[0].dims[3], 4);
	/* DCR: channel (i * 2 + j) * 2 + c lands at (2h + i, 2w + j) */
	CHECK(y[1] == 8.0f && y[4] == 16.0f && y[2] == 1.0f);

	one_init(&back, ERT_OP_SpaceToDepth, 13, 1, 1);
	ert_node_set_attr_int(back.g, back.n, "blocksize", 2);
	set_val(&back.in[0], ERT_DTYPE_FLOAT32, 4, o.out[0].dims, o.out[0].data);
	REQUIRE(one_run(&back) == ERT_OK);
	CHECK(memcmp(back.out[0].data, x, sizeof(x)) == 0);
	one_fini(&back);
	one_fini(&o);

	one_init(&o, ERT_OP_DepthToSpace, 13, 1, 1);
	ert_node_set_attr_int(o.g, o.n, "blocksize", 2);
	ert_node_add_attr(o.g, o.n, "mode", ERT_ATTR_STRING)->s = "CRD";
	set_val(&o.in[0], ERT_DTYPE_FLOAT32, 4, (int64_t[]){ 1, 8, 2, 2 }, x);
	REQUIRE(one_run(&o) == ERT_OK);
	y = o.out[0].data;
	/* CRD: channel c*4 + r*2 + s lands at (2h + r, 2w + s) */
	CHECK(y[1] == 4.0f && y[4] == 8.0f && y[2] == 1.0f);
	one_fini(&o);

	one_init(&o, ERT_OP_SpaceToDepth, 13, 1, 1);
	ert_node_set_attr_int(o.g, o.n, "blocksize", 3);
	set_val(&o.in[0], ERT_DTYPE_FLOAT32, 4, (int64_t[]){ 1, 2, 4, 4 }, x);
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_SHAPE);
	one_fini(&o);
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(reshape_zero_and_minus_one), ERT_TEST_ENTRY(reshape_errors),
	      ERT_TEST_ENTRY(reshape_in_place_and_overlap), ERT_TEST_ENTRY(flatten_axes),
	      ERT_TEST_ENTRY(squeeze_unsqueeze_both_forms),
	      ERT_TEST_ENTRY(transpose_against_reference), ERT_TEST_ENTRY(concat_and_split),
	      ERT_TEST_ENTRY(expand_and_tile), ERT_TEST_ENTRY(depth_space_round_trip))
