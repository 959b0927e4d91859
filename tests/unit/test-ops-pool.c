/* SPDX-License-Identifier: MIT */
/* Pooling on the CPU backend against naive window loops written here. */
#include <stdlib.h>

#include "ert-op-test.h"
#include "ert-test.h"

static uint32_t rng = 777;

struct pool_case {
	enum ert_op op;
	int64_t h, w, k[2], s[2], d[2], pb[2], pe[2];
	int ceil, include_pad;
};

/* Naive 2-D pooling on one (1, 2, h, w) tensor; output dims in @oh/@ow. */
static float *ref_pool(const struct pool_case *c, const float *x, int64_t *oh, int64_t *ow,
		       int64_t **idx_out)
{
	int64_t o[2], in[2] = { c->h, c->w };

	for (int i = 0; i < 2; i++) {
		int64_t span = in[i] + c->pb[i] + c->pe[i] - ((c->k[i] - 1) * c->d[i] + 1);

		o[i] = (c->ceil ? (span + c->s[i] - 1) / c->s[i] : span / c->s[i]) + 1;
		if (c->ceil && (o[i] - 1) * c->s[i] >= in[i] + c->pb[i])
			o[i]--;
	}
	*oh = o[0];
	*ow = o[1];
	float *y = calloc((size_t)(2 * o[0] * o[1]), sizeof(float));
	int64_t *idx = calloc((size_t)(2 * o[0] * o[1]), sizeof(int64_t));

	for (int64_t ch = 0; ch < 2; ch++)
		for (int64_t a = 0; a < o[0]; a++)
			for (int64_t b = 0; b < o[1]; b++) {
				double acc = 0, best = -INFINITY;
				int64_t cnt = 0, bi = 0;

				for (int64_t u = 0; u < c->k[0]; u++)
					for (int64_t v = 0; v < c->k[1]; v++) {
						int64_t iy = a * c->s[0] - c->pb[0] + u * c->d[0];
						int64_t ix = b * c->s[1] - c->pb[1] + v * c->d[1];

						if (iy < 0 || iy >= c->h || ix < 0 || ix >= c->w)
							continue;
						float e = x[(ch * c->h + iy) * c->w + ix];

						cnt++;
						acc += c->op == ERT_OP_LpPool ? (double)e * e : e;
						if (e > best) {
							best = e;
							bi = (ch * c->h + iy) * c->w + ix;
						}
					}
				float r;

				if (c->op == ERT_OP_MaxPool)
					r = (float)best;
				else if (c->op == ERT_OP_LpPool)
					r = (float)sqrt(acc);
				else
					r = (float)(acc / (double)(c->include_pad ? c->k[0] * c->k[1] : cnt));
				y[(ch * o[0] + a) * o[1] + b] = r;
				idx[(ch * o[0] + a) * o[1] + b] = bi;
			}
	*idx_out = idx;
	return y;
}

static void run_pool(int *ert_test_failed_, const struct pool_case *c)
{
	int64_t xd[4] = { 1, 2, c->h, c->w }, pads[4] = { c->pb[0], c->pb[1], c->pe[0], c->pe[1] };
	bool is_max = c->op == ERT_OP_MaxPool;
	struct one o;

	one_init(&o, c->op, 0, 1, is_max ? 2 : 1);
	ert_node_set_attr_ints(o.g, o.n, "kernel_shape", c->k, 2);
	ert_node_set_attr_ints(o.g, o.n, "strides", c->s, 2);
	ert_node_set_attr_ints(o.g, o.n, "dilations", c->d, 2);
	ert_node_set_attr_ints(o.g, o.n, "pads", pads, 4);
	ert_node_set_attr_int(o.g, o.n, "ceil_mode", c->ceil);
	ert_node_set_attr_int(o.g, o.n, "count_include_pad", c->include_pad);

	float *x = malloc(sizeof(float) * (size_t)(2 * c->h * c->w));

	for (int64_t i = 0; i < 2 * c->h * c->w; i++)
		x[i] = frand_r(&rng);
	set_f32(&o.in[0], 4, xd, x);
	int64_t oh, ow, *idx;
	float *ref = ref_pool(c, x, &oh, &ow, &idx);

	CHECK_EQ_INT(one_run(&o), ERT_OK);
	if (o.out[0].data) {
		CHECK_EQ_INT(o.out[0].dims[2], oh);
		CHECK_EQ_INT(o.out[0].dims[3], ow);
		for (int64_t i = 0; i < o.out[0].numel && i < 2 * oh * ow; i++) {
			CHECK_NEAR(((float *)o.out[0].data)[i], ref[i], 1e-5);
			if (is_max)
				CHECK_EQ_INT(((int64_t *)o.out[1].data)[i], idx[i]);
		}
	}
	one_fini(&o);
	free(ref);
	free(idx);
	free(x);
}

ERT_TEST(windowed)
{
	static const struct pool_case cases[] = {
		{ ERT_OP_MaxPool, 9, 11, { 3, 3 }, { 2, 2 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, 0, 0 },
		{ ERT_OP_MaxPool, 10, 7, { 3, 2 }, { 2, 3 }, { 2, 1 }, { 1, 0 }, { 0, 1 }, 1, 0 },
		{ ERT_OP_AveragePool, 8, 8, { 3, 3 }, { 2, 2 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, 0, 0 },
		{ ERT_OP_AveragePool, 8, 8, { 3, 3 }, { 2, 2 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, 0, 1 },
		{ ERT_OP_AveragePool, 7, 9, { 2, 4 }, { 3, 2 }, { 2, 1 }, { 0, 2 }, { 1, 1 }, 1, 0 },
		{ ERT_OP_LpPool, 6, 6, { 2, 2 }, { 1, 2 }, { 1, 1 }, { 0, 1 }, { 1, 0 }, 0, 0 },
		/* windows over the whole unpadded plane: the GlobalAveragePool kernel */
		{ ERT_OP_AveragePool, 7, 7, { 7, 7 }, { 1, 1 }, { 1, 1 }, { 0, 0 }, { 0, 0 }, 0, 0 },
		{ ERT_OP_AveragePool, 5, 9, { 5, 9 }, { 2, 3 }, { 1, 1 }, { 0, 0 }, { 0, 0 }, 1, 1 },
		/* ... and near misses: one pad, one row short */
		{ ERT_OP_AveragePool, 7, 7, { 7, 7 }, { 1, 1 }, { 1, 1 }, { 0, 0 }, { 0, 1 }, 0, 0 },
		{ ERT_OP_AveragePool, 7, 7, { 6, 7 }, { 1, 1 }, { 1, 1 }, { 0, 0 }, { 0, 0 }, 0, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_pool(ert_test_failed_, &cases[i]);
}

ERT_TEST(global_and_uint8)
{
	struct ert_graph *g = ert_graph_create();
	int64_t xd[4] = { 2, 3, 4, 5 };
	int32_t in = ert_graph_add_tensor(g, "x", ERT_DTYPE_FLOAT32, 4, xd);
	int32_t out = ert_graph_add_tensor(g, "y", ERT_DTYPE_FLOAT32, -1, NULL);
	int32_t na = ert_graph_add_node(g, ERT_OP_GlobalAveragePool, "a", 1, &in, 1, &out);
	int32_t nm = ert_graph_add_node(g, ERT_OP_GlobalMaxPool, "m", 1, &in, 1, &out);
	float x[120];
	struct ert_value xv, yv;
	struct ert_err err;

	for (int i = 0; i < 120; i++)
		x[i] = (float)((i * 37) % 23) - 11.0f;
	set_f32(&xv, 4, xd, x);
	const struct ert_value *inv[1] = { &xv };

	REQUIRE(ert_cpu_eval_node(g, &g->nodes[na], inv, 1, &yv, 1, &err) == ERT_OK);
	CHECK_EQ_INT(yv.rank, 4);
	CHECK_EQ_INT(yv.dims[3], 1);
	double s = 0;

	for (int i = 100; i < 120; i++)
		s += x[i];
	CHECK_NEAR(((float *)yv.data)[5], s / 20, 1e-5);
	free(yv.data);
	REQUIRE(ert_cpu_eval_node(g, &g->nodes[nm], inv, 1, &yv, 1, &err) == ERT_OK);
	float mx = x[20];

	for (int i = 20; i < 40; i++)
		mx = x[i] > mx ? x[i] : mx;
	CHECK_NEAR(((float *)yv.data)[1], mx, 0);
	free(yv.data);

	/* uint8 MaxPool keeps its dtype */
	uint8_t u[16];
	int64_t ud[4] = { 1, 1, 4, 4 }, k[2] = { 2, 2 }, st[2] = { 2, 2 };

	for (int i = 0; i < 16; i++)
		u[i] = (uint8_t)(i * 13 % 251);
	int32_t uin = ert_graph_add_tensor(g, "u", ERT_DTYPE_UINT8, 4, ud);
	int32_t uo = ert_graph_add_tensor(g, "uy", ERT_DTYPE_UINT8, -1, NULL);
	int32_t nu = ert_graph_add_node(g, ERT_OP_MaxPool, "u", 1, &uin, 1, &uo);

	ert_node_set_attr_ints(g, &g->nodes[nu], "kernel_shape", k, 2);
	ert_node_set_attr_ints(g, &g->nodes[nu], "strides", st, 2);
	set_val(&xv, ERT_DTYPE_UINT8, 4, ud, u);
	REQUIRE(ert_cpu_eval_node(g, &g->nodes[nu], inv, 1, &yv, 1, &err) == ERT_OK);
	CHECK_EQ_INT(yv.dtype, ERT_DTYPE_UINT8);
	uint8_t want = 0;

	for (int i = 10; i < 16; i += (i == 11 ? 3 : 1))
		want = u[i] > want ? u[i] : want;
	CHECK_EQ_INT(((uint8_t *)yv.data)[3], want);
	free(yv.data);
	ert_graph_destroy(g);
}

/*
 * Byte MaxPool without Indices folds a window's rows first (pool.c's
 * max_rows_*()); with Indices it walks the taps. Both give the max of the
 * taps inside the input, which a naive loop here checks too, for uint8 and
 * int8, strides, dilations, asymmetric pads and ceil_mode.
 */
ERT_TEST(byte_maxpool)
{
	static const struct pool_case cases[] = {
		{ ERT_OP_MaxPool, 112, 112, { 3, 3 }, { 2, 2 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, 0, 0 },
		{ ERT_OP_MaxPool, 9, 11, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, 0, 0 },
		{ ERT_OP_MaxPool, 10, 7, { 3, 2 }, { 2, 3 }, { 2, 1 }, { 1, 0 }, { 0, 1 }, 1, 0 },
		{ ERT_OP_MaxPool, 13, 17, { 2, 5 }, { 3, 2 }, { 1, 3 }, { 0, 4 }, { 1, 2 }, 1, 0 },
		/* one column; a window wider than the row (no interior output) */
		{ ERT_OP_MaxPool, 5, 1, { 2, 1 }, { 1, 1 }, { 1, 1 }, { 0, 0 }, { 0, 0 }, 0, 0 },
		{ ERT_OP_MaxPool, 4, 3, { 3, 5 }, { 1, 1 }, { 1, 1 }, { 1, 2 }, { 1, 2 }, 0, 0 },
		/* k 3 stride 2 along the row (its own loop inside): odd and even
		 * widths, no pad, pads of 1 and 2, ceil_mode, rows of 2 and 3 */
		{ ERT_OP_MaxPool, 3, 9, { 1, 3 }, { 1, 2 }, { 1, 1 }, { 0, 0 }, { 0, 0 }, 1, 0 },
		{ ERT_OP_MaxPool, 4, 10, { 2, 3 }, { 2, 2 }, { 1, 1 }, { 1, 1 }, { 0, 2 }, 1, 0 },
		{ ERT_OP_MaxPool, 5, 31, { 3, 3 }, { 2, 2 }, { 1, 1 }, { 0, 2 }, { 1, 2 }, 0, 0 },
		{ ERT_OP_MaxPool, 3, 2, { 3, 3 }, { 2, 2 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, 0, 0 },
		{ ERT_OP_MaxPool, 2, 3, { 1, 3 }, { 1, 2 }, { 1, 1 }, { 0, 0 }, { 0, 0 }, 0, 0 },
		/* interior windows at dilation 2 next to edge ones of one tap */
		{ ERT_OP_MaxPool, 6, 19, { 2, 3 }, { 2, 1 }, { 1, 2 }, { 0, 3 }, { 0, 3 }, 0, 0 },
	};

	for (size_t ci = 0; ci < sizeof(cases) / sizeof(cases[0]); ci++)
		for (int s8 = 0; s8 < 2; s8++) {
			const struct pool_case *c = &cases[ci];
			int64_t xd[4] = { 1, 2, c->h, c->w };
			int64_t pads[4] = { c->pb[0], c->pb[1], c->pe[0], c->pe[1] };
			size_t n = (size_t)(2 * c->h * c->w);
			uint8_t *x = malloc(n);
			struct one o[2];
			float *fx = malloc(n * sizeof(float));

			for (size_t i = 0; i < n; i++) {
				x[i] = (uint8_t)(frand_r(&rng) * 127.0f + 128.0f);
				fx[i] = s8 ? (float)(int8_t)x[i] : (float)x[i];
			}
			for (int with_idx = 0; with_idx < 2; with_idx++) {
				one_init(&o[with_idx], ERT_OP_MaxPool, 0, 1, 1 + with_idx);
				ert_node_set_attr_ints(o[with_idx].g, o[with_idx].n, "kernel_shape", c->k, 2);
				ert_node_set_attr_ints(o[with_idx].g, o[with_idx].n, "strides", c->s, 2);
				ert_node_set_attr_ints(o[with_idx].g, o[with_idx].n, "dilations", c->d, 2);
				ert_node_set_attr_ints(o[with_idx].g, o[with_idx].n, "pads", pads, 4);
				ert_node_set_attr_int(o[with_idx].g, o[with_idx].n, "ceil_mode", c->ceil);
				set_val(&o[with_idx].in[0], s8 ? ERT_DTYPE_INT8 : ERT_DTYPE_UINT8, 4, xd, x);
				CHECK_EQ_INT(one_run(&o[with_idx]), ERT_OK);
			}
			int64_t oh, ow, *idx;
			float *ref = ref_pool(c, fx, &oh, &ow, &idx);

			if (o[0].out[0].data && o[1].out[0].data) {
				CHECK_EQ_INT(o[0].out[0].numel, 2 * oh * ow);
				CHECK_EQ_INT(o[1].out[0].numel, 2 * oh * ow);
				for (int64_t i = 0; i < o[0].out[0].numel && i < 2 * oh * ow; i++) {
					const uint8_t *a = o[0].out[0].data, *b = o[1].out[0].data;
					float got = s8 ? (float)(int8_t)a[i] : (float)a[i];

					CHECK_EQ_INT(a[i], b[i]);
					CHECK_NEAR(got, ref[i], 0);
				}
			}
			one_fini(&o[0]);
			one_fini(&o[1]);
			free(ref);
			free(idx);
			free(fx);
			free(x);
		}
}

ERT_TEST(bad_kernel_shape)
{
	int64_t xd[4] = { 1, 1, 4, 4 }, k[1] = { 2 };
	float x[16] = { 0 };
	struct one o;

	one_init(&o, ERT_OP_MaxPool, 0, 1, 1);
	ert_node_set_attr_ints(o.g, o.n, "kernel_shape", k, 1);
	set_f32(&o.in[0], 4, xd, x);
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_INVALID_MODEL);
	CHECK(strstr(o.err.msg, "kernel_shape") != NULL);
	one_fini(&o);
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(windowed), ERT_TEST_ENTRY(global_and_uint8),
	      ERT_TEST_ENTRY(byte_maxpool), ERT_TEST_ENTRY(bad_kernel_shape))
