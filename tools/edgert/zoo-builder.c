/* SPDX-License-Identifier: MIT */
/* Builder helpers for the model zoo: constants, random weights, layers. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zoo.h"

bool zoo_begin(struct zoo_builder *b, int64_t opset, uint64_t seed)
{
	memset(b, 0, sizeof(*b));
	b->relu6_min = b->relu6_max = -1;
	b->batch = 1;
	cli_rng_seed(&b->rng, seed);
	b->g = ert_graph_create();
	if (!b->g)
		return false;
	b->g->opset = opset;
	b->g->ir_version = 8;
	b->g->producer = ert_graph_strdup(b->g, "edgert zoo");
	return true;
}

void zoo_abort(struct zoo_builder *b)
{
	ert_graph_destroy(b->g);
	b->g = NULL;
}

/* Every helper is a no-op after a failure, so builders check once at the end. */
static int32_t failed(struct zoo_builder *b)
{
	b->failed = true;
	return -1;
}

int32_t zoo_input(struct zoo_builder *b, const char *name, int32_t rank, const int64_t *dims)
{
	int32_t t;

	if (b->failed)
		return -1;
	t = ert_graph_add_tensor(b->g, name, ERT_DTYPE_FLOAT32, rank, dims);
	if (t < 0 || !ert_graph_add_input(b->g, t))
		return failed(b);
	return t;
}

bool zoo_end(struct zoo_builder *b, int32_t t)
{
	if (b->failed || t < 0 || !ert_graph_add_output(b->g, t))
		return false;
	return true;
}

static int32_t add_const(struct zoo_builder *b, const char *hint, ert_dtype dt, int32_t rank,
			 const int64_t *dims, void *data, size_t nbytes)
{
	int32_t t;

	if (b->failed || !data) {
		free(data);
		return failed(b);
	}
	t = ert_graph_add_tensor_unique(b->g, hint, dt, rank, dims);
	if (t < 0) {
		free(data);
		return failed(b);
	}
	ert_graph_set_const(b->g, t, data, nbytes, true);
	return t;
}

int32_t zoo_weight(struct zoo_builder *b, const char *hint, int32_t rank, const int64_t *dims,
		   float std)
{
	int64_t n = ert_shape_numel(rank, dims);
	/* uniform on [-a, a] has standard deviation a / sqrt(3) */
	float a = std * sqrtf(3.0f);
	float *w;

	if (b->failed || n < 0)
		return failed(b);
	w = malloc((size_t)(n ? n : 1) * sizeof(float));
	for (int64_t i = 0; w && i < n; i++)
		w[i] = (float)((2.0 * cli_rng_uniform(&b->rng) - 1.0) * a);
	return add_const(b, hint, ERT_DTYPE_FLOAT32, rank, dims, w, (size_t)n * sizeof(float));
}

int32_t zoo_fill(struct zoo_builder *b, const char *hint, int32_t rank, const int64_t *dims,
		 float value)
{
	int64_t n = ert_shape_numel(rank, dims);
	float *w;

	if (b->failed || n < 0)
		return failed(b);
	w = malloc((size_t)(n ? n : 1) * sizeof(float));
	for (int64_t i = 0; w && i < n; i++)
		w[i] = value;
	return add_const(b, hint, ERT_DTYPE_FLOAT32, rank, dims, w, (size_t)n * sizeof(float));
}

int32_t zoo_ints(struct zoo_builder *b, const char *hint, uint32_t n, const int64_t *vals)
{
	uint32_t count = n ? n : 1;
	int64_t dims[1] = { n };
	int64_t *v = malloc(count * sizeof(int64_t));

	if (v)
		memcpy(v, vals, count * sizeof(int64_t));
	return add_const(b, hint, ERT_DTYPE_INT64, n ? 1 : 0, dims, v, count * sizeof(int64_t));
}

int32_t zoo_op(struct zoo_builder *b, enum ert_op op, const char *hint, uint32_t n_in,
	       const int32_t *in, const char *out_name, struct ert_node **node_out)
{
	char name[64];
	int32_t out, ni;

	if (b->failed)
		return -1;
	for (uint32_t i = 0; i < n_in; i++)
		if (in[i] < 0)
			return failed(b);
	if (out_name)
		out = ert_graph_add_tensor(b->g, out_name, ERT_DTYPE_FLOAT32, -1, NULL);
	else
		out = ert_graph_add_tensor_unique(b->g, hint, ERT_DTYPE_FLOAT32, -1, NULL);
	if (out < 0)
		return failed(b);
	snprintf(name, sizeof(name), "%s_%u", hint, b->counter++);
	ni = ert_graph_add_node(b->g, op, name, n_in, in, 1, &out);
	if (ni < 0)
		return failed(b);
	if (node_out)
		*node_out = &b->g->nodes[ni];
	return out;
}

int32_t zoo_op1(struct zoo_builder *b, enum ert_op op, const char *hint, int32_t x)
{
	return zoo_op(b, op, hint, 1, &x, NULL, NULL);
}

int32_t zoo_op2(struct zoo_builder *b, enum ert_op op, const char *hint, int32_t x, int32_t y)
{
	int32_t in[2] = { x, y };

	return zoo_op(b, op, hint, 2, in, NULL, NULL);
}

/* Attribute setters report out-of-memory through the sticky flag. */
static void set_ints(struct zoo_builder *b, struct ert_node *n, const char *name,
		     const int64_t *v, uint32_t count)
{
	if (!b->failed && !ert_node_set_attr_ints(b->g, n, name, v, count))
		b->failed = true;
}

static void set_int(struct zoo_builder *b, struct ert_node *n, const char *name, int64_t v)
{
	if (!b->failed && !ert_node_set_attr_int(b->g, n, name, v))
		b->failed = true;
}

static void set_float(struct zoo_builder *b, struct ert_node *n, const char *name, float v)
{
	if (!b->failed && !ert_node_set_attr_float(b->g, n, name, v))
		b->failed = true;
}

int32_t zoo_conv(struct zoo_builder *b, int32_t x, int64_t cin, int64_t cout, int64_t k,
		 int64_t stride, int64_t group, float gain, float scale)
{
	int64_t wdims[4] = { cout, cin / group, k, k };
	int64_t bdims[1] = { cout };
	int64_t fan_in = cin / group * k * k;
	int64_t p = k / 2;
	int64_t pads[4] = { p, p, p, p }, kern[2] = { k, k }, strides[2] = { stride, stride };
	int64_t dil[2] = { 1, 1 };
	int32_t in[3];
	struct ert_node *n = NULL;
	int32_t y;

	in[0] = x;
	in[1] = zoo_weight(b, "conv.weight", 4, wdims, scale * sqrtf(gain / (float)fan_in));
	in[2] = zoo_weight(b, "conv.bias", 1, bdims, 0.02f);
	y = zoo_op(b, ERT_OP_Conv, "conv", 3, in, NULL, &n);
	if (y < 0)
		return -1;
	set_ints(b, n, "kernel_shape", kern, 2);
	set_ints(b, n, "strides", strides, 2);
	set_ints(b, n, "pads", pads, 4);
	set_ints(b, n, "dilations", dil, 2);
	set_int(b, n, "group", group);
	return b->failed ? -1 : y;
}

int32_t zoo_relu(struct zoo_builder *b, int32_t x)
{
	return zoo_op1(b, ERT_OP_Relu, "relu", x);
}

int32_t zoo_relu6(struct zoo_builder *b, int32_t x)
{
	int32_t in[3];

	if (b->relu6_min < 0) {
		b->relu6_min = zoo_fill(b, "clip.min", 0, NULL, 0.0f);
		b->relu6_max = zoo_fill(b, "clip.max", 0, NULL, 6.0f);
	}
	in[0] = x;
	in[1] = b->relu6_min;
	in[2] = b->relu6_max;
	return zoo_op(b, ERT_OP_Clip, "relu6", 3, in, NULL, NULL);
}

int32_t zoo_maxpool(struct zoo_builder *b, int32_t x, int64_t k, int64_t stride, int64_t pad)
{
	int64_t kern[2] = { k, k }, strides[2] = { stride, stride };
	int64_t pads[4] = { pad, pad, pad, pad };
	struct ert_node *n = NULL;
	int32_t y = zoo_op(b, ERT_OP_MaxPool, "maxpool", 1, &x, NULL, &n);

	if (y < 0)
		return -1;
	set_ints(b, n, "kernel_shape", kern, 2);
	set_ints(b, n, "strides", strides, 2);
	set_ints(b, n, "pads", pads, 4);
	return b->failed ? -1 : y;
}

int32_t zoo_gemm(struct zoo_builder *b, int32_t x, int64_t in, int64_t out,
		 const char *out_name)
{
	int64_t wdims[2] = { out, in }, bdims[1] = { out };
	int32_t ins[3];
	struct ert_node *n = NULL;
	int32_t y;

	ins[0] = x;
	ins[1] = zoo_weight(b, "fc.weight", 2, wdims, sqrtf(1.0f / (float)in));
	ins[2] = zoo_weight(b, "fc.bias", 1, bdims, 0.02f);
	y = zoo_op(b, ERT_OP_Gemm, "gemm", 3, ins, out_name, &n);
	if (y < 0)
		return -1;
	set_float(b, n, "alpha", 1.0f);
	set_float(b, n, "beta", 1.0f);
	set_int(b, n, "transB", 1);
	return b->failed ? -1 : y;
}

int32_t zoo_classifier(struct zoo_builder *b, int32_t x, int64_t channels, int64_t classes)
{
	struct ert_node *n = NULL;

	x = zoo_op1(b, ERT_OP_GlobalAveragePool, "gap", x);
	x = zoo_op(b, ERT_OP_Flatten, "flatten", 1, &x, NULL, &n);
	if (x < 0)
		return -1;
	set_int(b, n, "axis", 1);
	return zoo_gemm(b, x, channels, classes, "logits");
}

int32_t zoo_linear(struct zoo_builder *b, int32_t x, int64_t in, int64_t out, float scale)
{
	int64_t wdims[2] = { in, out }, bdims[1] = { out };
	int32_t w = zoo_weight(b, "linear.weight", 2, wdims, scale * sqrtf(1.0f / (float)in));
	int32_t bias = zoo_weight(b, "linear.bias", 1, bdims, 0.02f);

	return zoo_op2(b, ERT_OP_Add, "linear.add", zoo_op2(b, ERT_OP_MatMul, "linear", x, w),
		       bias);
}

int32_t zoo_reshape(struct zoo_builder *b, int32_t x, uint32_t rank, const int64_t *shape)
{
	return zoo_op2(b, ERT_OP_Reshape, "reshape", x, zoo_ints(b, "reshape.shape", rank, shape));
}

int32_t zoo_transpose(struct zoo_builder *b, int32_t x, uint32_t rank, const int64_t *perm)
{
	struct ert_node *n = NULL;
	int32_t y = zoo_op(b, ERT_OP_Transpose, "transpose", 1, &x, NULL, &n);

	if (y < 0)
		return -1;
	set_ints(b, n, "perm", perm, rank);
	return b->failed ? -1 : y;
}

int32_t zoo_layernorm(struct zoo_builder *b, int32_t x, int64_t dim)
{
	int64_t dims[1] = { dim };
	int32_t in[3];
	struct ert_node *n = NULL;
	int32_t y;

	in[0] = x;
	in[1] = zoo_fill(b, "ln.scale", 1, dims, 1.0f);
	in[2] = zoo_fill(b, "ln.bias", 1, dims, 0.0f);
	y = zoo_op(b, ERT_OP_LayerNormalization, "layernorm", 3, in, NULL, &n);
	if (y < 0)
		return -1;
	set_int(b, n, "axis", -1);
	set_float(b, n, "epsilon", 1e-6f);
	return b->failed ? -1 : y;
}
