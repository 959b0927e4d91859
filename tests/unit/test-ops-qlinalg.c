/* SPDX-License-Identifier: MIT */
/*
 * Integer linear algebra on the CPU backend: int32 accumulation of
 * zero-point-shifted products, per-tensor and per-channel parameters, and
 * requantisation with round-half-to-even and saturation (ONNX's definition).
 */
#include <stdlib.h>

#include "ert-op-test.h"
#include "ert-test.h"

ERT_TEST(qlinearmatmul_rounding_and_saturation)
{
	struct ert_node *node;
	struct ert_graph *g = one_graph(ERT_OP_QLinearMatMul, 0, 8, 1, &node);
	/* a: 2x2 int8, b: 2x2 int8; acc(0,0) = 5 -> 5 * 0.5 = 2.5 -> 2 (even) + zp 1 = 3 */
	int8_t a[4] = { 1, 2, 100, 100 }, b[4] = { 1, 0, 2, 127 };
	int8_t azp = 0, bzp = 0, yzp = 1;
	float as = 1.0f, bs = 0.5f, ys = 1.0f;
	int64_t d2[2] = { 2, 2 }, one[1] = { 1 };
	struct ert_value v[8] = {
		mkval(ERT_DTYPE_INT8, 2, d2, a), mkval(ERT_DTYPE_FLOAT32, 0, NULL, &as),
		mkval(ERT_DTYPE_INT8, 1, one, &azp), mkval(ERT_DTYPE_INT8, 2, d2, b),
		mkval(ERT_DTYPE_FLOAT32, 0, NULL, &bs), mkval(ERT_DTYPE_INT8, 0, NULL, &bzp),
		mkval(ERT_DTYPE_FLOAT32, 0, NULL, &ys), mkval(ERT_DTYPE_INT8, 0, NULL, &yzp),
	};
	const struct ert_value *in[8];
	struct ert_value y;
	struct ert_err err;

	for (int i = 0; i < 8; i++)
		in[i] = &v[i];
	REQUIRE(ert_cpu_eval_node(g, node, in, 8, &y, 1, &err) == ERT_OK);
	CHECK_EQ_INT(y.dtype, ERT_DTYPE_INT8);
	const int8_t *yd = y.data;

	CHECK_EQ_INT(yd[0], 3);          /* 2.5 rounds to 2 */
	CHECK_EQ_INT(yd[1], 127);        /* 2 * 127 * 0.5 + 1 = 128 saturates */
	CHECK_EQ_INT(yd[2], 127);        /* 300 * 0.5 + 1 saturates */
	/* row 1, col 1: 100*0 + 100*127 = 12700 * 0.5 = 6350 -> 127 */
	CHECK_EQ_INT(yd[3], 127);
	free(y.data);
	ert_graph_destroy(g);
}

/*
 * ONNX's test_qlinearmatmul_2D_int8_float32 inputs. Its expected output
 * holds 20 where the real result -236 must saturate to -128: ONNX's reference
 * wrapped it (onnx/onnx#7835, see tests/conformance/node-errata.txt). Every
 * other element equals ONNX's data.
 */
ERT_TEST(qlinearmatmul_onnx_case_saturates)
{
	struct ert_node *node;
	struct ert_graph *g = one_graph(ERT_OP_QLinearMatMul, 0, 8, 1, &node);
	int8_t a[8] = { 81, 109, -127, 111, -124, 87, -128, -98 };
	int8_t b[12] = { 25, -76, 117, -67, -101, -128, -127, 0, 119, 0, 127, 120 };
	int8_t azp = -14, bzp = -13, yzp = -9;
	float as = 0.0066f, bs = 0.00705f, ys = 0.0107f;
	int64_t da[2] = { 2, 4 }, db[2] = { 4, 3 }, one[1] = { 1 };
	struct ert_value v[8] = {
		mkval(ERT_DTYPE_INT8, 2, da, a), mkval(ERT_DTYPE_FLOAT32, 1, one, &as),
		mkval(ERT_DTYPE_INT8, 1, one, &azp), mkval(ERT_DTYPE_INT8, 2, db, b),
		mkval(ERT_DTYPE_FLOAT32, 1, one, &bs), mkval(ERT_DTYPE_INT8, 1, one, &bzp),
		mkval(ERT_DTYPE_FLOAT32, 1, one, &ys), mkval(ERT_DTYPE_INT8, 1, one, &yzp),
	};
	const int8_t want[6] = { 41, -12, -9, 1, -75, -128 };
	const struct ert_value *in[8];
	struct ert_value y;
	struct ert_err err;

	for (int i = 0; i < 8; i++)
		in[i] = &v[i];
	REQUIRE(ert_cpu_eval_node(g, node, in, 8, &y, 1, &err) == ERT_OK);
	CHECK_EQ_INT(y.numel, 6);
	for (int i = 0; i < 6; i++)
		CHECK_EQ_INT(((const int8_t *)y.data)[i], want[i]);
	free(y.data);
	ert_graph_destroy(g);
}

ERT_TEST(matmulinteger_zero_points)
{
	struct ert_node *node;
	struct ert_graph *g = one_graph(ERT_OP_MatMulInteger, 0, 4, 1, &node);
	uint8_t a[6] = { 11, 7, 3, 10, 6, 2 }, b[6] = { 1, 4, 2, 5, 3, 6 };
	uint8_t azp[2] = { 12, 1 }, bzp = 2;
	int64_t da[2] = { 2, 3 }, db[2] = { 3, 2 }, dz[1] = { 2 };
	struct ert_value v[4] = {
		mkval(ERT_DTYPE_UINT8, 2, da, a), mkval(ERT_DTYPE_UINT8, 2, db, b),
		mkval(ERT_DTYPE_UINT8, 1, dz, azp), mkval(ERT_DTYPE_UINT8, 0, NULL, &bzp),
	};
	const struct ert_value *in[4] = { &v[0], &v[1], &v[2], &v[3] };
	struct ert_value y;
	struct ert_err err;

	REQUIRE(ert_cpu_eval_node(g, node, in, 4, &y, 1, &err) == ERT_OK);
	CHECK_EQ_INT(y.dtype, ERT_DTYPE_INT32);
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2; j++) {
			int32_t acc = 0;

			for (int p = 0; p < 3; p++)
				acc += (a[i * 3 + p] - azp[i]) * (b[p * 2 + j] - bzp);
			CHECK_EQ_INT(((int32_t *)y.data)[i * 2 + j], acc);
		}
	free(y.data);
	ert_graph_destroy(g);
}

ERT_TEST(qlinearconv_per_channel)
{
	struct ert_node *node;
	struct ert_graph *g = one_graph(ERT_OP_QLinearConv, 0, 9, 1, &node);
	enum { C = 2, M = 3, H = 5, W = 4 };
	uint8_t x[C * H * W];
	int8_t w[M * C * 9];
	int32_t bias[M] = { 100, -50, 7 };
	uint8_t xzp = 128, yzp = 120;
	int8_t wzp[M] = { 0, 0, 0 };
	float xs = 0.02f, wsc[M] = { 0.01f, 0.03f, 0.005f }, ys = 0.05f;
	int64_t dx[4] = { 1, C, H, W }, dw[4] = { M, C, 3, 3 }, dm[1] = { M }, pads[4] = { 1, 1, 1, 1 };

	for (int i = 0; i < C * H * W; i++)
		x[i] = (uint8_t)(i * 29 % 256);
	for (int i = 0; i < M * C * 9; i++)
		w[i] = (int8_t)((i * 53) % 255 - 127);
	ert_node_set_attr_ints(g, node, "pads", pads, 4);
	struct ert_value v[9] = {
		mkval(ERT_DTYPE_UINT8, 4, dx, x), mkval(ERT_DTYPE_FLOAT32, 0, NULL, &xs),
		mkval(ERT_DTYPE_UINT8, 0, NULL, &xzp), mkval(ERT_DTYPE_INT8, 4, dw, w),
		mkval(ERT_DTYPE_FLOAT32, 1, dm, wsc), mkval(ERT_DTYPE_INT8, 1, dm, wzp),
		mkval(ERT_DTYPE_FLOAT32, 0, NULL, &ys), mkval(ERT_DTYPE_UINT8, 0, NULL, &yzp),
		mkval(ERT_DTYPE_INT32, 1, dm, bias),
	};
	const struct ert_value *in[9];
	struct ert_value y;
	struct ert_err err;

	for (int i = 0; i < 9; i++)
		in[i] = &v[i];
	REQUIRE(ert_cpu_eval_node(g, node, in, 9, &y, 1, &err) == ERT_OK);
	CHECK_EQ_INT(y.dtype, ERT_DTYPE_UINT8);
	CHECK_EQ_INT(y.numel, M * H * W);
	for (int m = 0; m < M; m++)
		for (int oy = 0; oy < H; oy++)
			for (int ox = 0; ox < W; ox++) {
				int32_t acc = bias[m];

				for (int c = 0; c < C; c++)
					for (int ky = 0; ky < 3; ky++)
						for (int kx = 0; kx < 3; kx++) {
							int iy = oy - 1 + ky, ix = ox - 1 + kx;

							if (iy < 0 || iy >= H || ix < 0 || ix >= W)
								continue;
							acc += (x[(c * H + iy) * W + ix] - xzp) *
							       w[((m * C + c) * 3 + ky) * 3 + kx];
						}
				double r = rint((double)acc * (double)(xs * wsc[m] / ys)) + yzp;
				int want = r < 0 ? 0 : r > 255 ? 255 : (int)r;

				CHECK_EQ_INT(((uint8_t *)y.data)[(m * H + oy) * W + ox], want);
			}
	free(y.data);
	ert_graph_destroy(g);
}

/* ConvInteger, int8 input, stride 2, dilation 2, two groups, per-channel w zero points. */
ERT_TEST(convinteger_strided_grouped)
{
	struct ert_node *node;
	struct ert_graph *g = one_graph(ERT_OP_ConvInteger, 0, 4, 1, &node);
	enum { C = 4, M = 6, H = 11, W = 9, G = 2, CG = C / G, MG = M / G };
	int8_t x[C * H * W];
	uint8_t w[M * CG * 9], wzp[M] = { 3, 0, 200, 7, 128, 1 };
	int8_t xzp = -5;
	int64_t dx[4] = { 1, C, H, W }, dw[4] = { M, CG, 3, 3 }, dm[1] = { M };
	int64_t pads[4] = { 2, 1, 0, 2 }, st[2] = { 2, 2 }, dl[2] = { 2, 2 };

	for (int i = 0; i < C * H * W; i++)
		x[i] = (int8_t)(i * 71 % 256 - 128);
	for (int i = 0; i < M * CG * 9; i++)
		w[i] = (uint8_t)(i * 37 % 256);
	ert_node_set_attr_ints(g, node, "pads", pads, 4);
	ert_node_set_attr_ints(g, node, "strides", st, 2);
	ert_node_set_attr_ints(g, node, "dilations", dl, 2);
	ert_node_set_attr_int(g, node, "group", G);
	struct ert_value v[4] = {
		mkval(ERT_DTYPE_INT8, 4, dx, x), mkval(ERT_DTYPE_UINT8, 4, dw, w),
		mkval(ERT_DTYPE_INT8, 0, NULL, &xzp), mkval(ERT_DTYPE_UINT8, 1, dm, wzp),
	};
	const struct ert_value *in[4] = { &v[0], &v[1], &v[2], &v[3] };
	struct ert_value y;
	struct ert_err err;

	REQUIRE(ert_cpu_eval_node(g, node, in, 4, &y, 1, &err) == ERT_OK);
	CHECK_EQ_INT(y.dtype, ERT_DTYPE_INT32);
	int64_t oh = (H + 2 + 0 - 5) / 2 + 1, ow = (W + 1 + 2 - 5) / 2 + 1;

	CHECK_EQ_INT(y.dims[2], oh);
	CHECK_EQ_INT(y.dims[3], ow);
	for (int m = 0; m < M; m++)
		for (int a = 0; a < oh; a++)
			for (int b = 0; b < ow; b++) {
				int32_t acc = 0;

				for (int c = 0; c < CG; c++)
					for (int ky = 0; ky < 3; ky++)
						for (int kx = 0; kx < 3; kx++) {
							int iy = a * 2 - 2 + ky * 2, ix = b * 2 - 1 + kx * 2;

							if (iy < 0 || iy >= H || ix < 0 || ix >= W)
								continue;
							acc += (x[((m / MG * CG + c) * H + iy) * W + ix] - xzp) *
							       (w[((m * CG + c) * 3 + ky) * 3 + kx] - wzp[m]);
						}
				CHECK_EQ_INT(((int32_t *)y.data)[(m * oh + a) * ow + b], acc);
			}
	free(y.data);
	ert_graph_destroy(g);
}

ERT_TEST(bad_zero_point_shape)
{
	struct ert_node *node;
	struct ert_graph *g = one_graph(ERT_OP_MatMulInteger, 0, 3, 1, &node);
	uint8_t a[4] = { 0 }, zp[3] = { 0 };
	int64_t d2[2] = { 2, 2 }, d3[1] = { 3 };
	struct ert_value v[3] = {
		mkval(ERT_DTYPE_UINT8, 2, d2, a), mkval(ERT_DTYPE_UINT8, 2, d2, a),
		mkval(ERT_DTYPE_UINT8, 1, d3, zp),
	};
	const struct ert_value *in[3] = { &v[0], &v[1], &v[2] };
	struct ert_value y;
	struct ert_err err;

	CHECK_EQ_INT(ert_cpu_eval_node(g, node, in, 3, &y, 1, &err), ERT_STATUS_SHAPE);
	CHECK(strstr(err.msg, "input 2") != NULL);
	ert_graph_destroy(g);
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(qlinearmatmul_rounding_and_saturation),
	      ERT_TEST_ENTRY(qlinearmatmul_onnx_case_saturates),
	      ERT_TEST_ENTRY(matmulinteger_zero_points), ERT_TEST_ENTRY(qlinearconv_per_channel),
	      ERT_TEST_ENTRY(convinteger_strided_grouped),
	      ERT_TEST_ENTRY(bad_zero_point_shape))
