/* SPDX-License-Identifier: MIT */
/* Valid .ert images built with the graph API: the starting points for damage. */
#include <stdlib.h>
#include <string.h>

#include "bad-input.h"
#include "ert-strings.h"
#include "format/ert-format.h"
#include "../unit/ert-test-control.h"

static float *rand_floats(int64_t n, uint64_t seed)
{
	float *p = malloc((size_t)n * sizeof(float));

	for (int64_t i = 0; p && i < n; i++)
		p[i] = (float)(bi_rand(&seed) % 2001) / 1000.0f - 1.0f;
	return p;
}

static int32_t add_const_f32(struct ert_graph *g, const char *name, int32_t rank,
			     const int64_t *dims, uint64_t seed)
{
	int64_t n = ert_shape_numel(rank, dims);
	int32_t t = ert_graph_add_tensor(g, name, ERT_DTYPE_FLOAT32, rank, dims);
	float *d = rand_floats(n ? n : 1, seed);

	if (t < 0 || !d) {
		free(d);
		return -1;
	}
	ert_graph_set_const(g, t, d, (size_t)n * 4, true);
	return t;
}

static int32_t add_const_i64(struct ert_graph *g, const char *name, int64_t n, const int64_t *v)
{
	int32_t t = ert_graph_add_tensor(g, name, ERT_DTYPE_INT64, 1, &n);
	int64_t *d = malloc((size_t)(n ? n : 1) * 8);

	if (t < 0 || !d) {
		free(d);
		return -1;
	}
	memcpy(d, v, (size_t)n * 8);
	ert_graph_set_const(g, t, d, (size_t)n * 8, true);
	return t;
}

/* x[N,16] → MatMul → Add → Relu → MatMul → Softmax */
static struct ert_graph *build_mlp(void)
{
	struct ert_graph *g = ert_graph_create();

	if (!g)
		return NULL;
	g->producer = "bad-input mlp";
	g->opset = 17;
	int32_t x = ert_graph_add_tensor(g, "x", ERT_DTYPE_FLOAT32, 2, (int64_t[]){ -1, 16 });
	int32_t w1 = add_const_f32(g, "w1", 2, (int64_t[]){ 16, 32 }, 1);
	int32_t b1 = add_const_f32(g, "b1", 1, (int64_t[]){ 32 }, 2);
	int32_t w2 = add_const_f32(g, "w2", 2, (int64_t[]){ 32, 10 }, 3);
	int32_t h1 = ert_graph_add_tensor(g, "h1", ERT_DTYPE_FLOAT32, 2, (int64_t[]){ -1, 32 });
	int32_t h2 = ert_graph_add_tensor(g, "h2", ERT_DTYPE_FLOAT32, 2, (int64_t[]){ -1, 32 });
	int32_t h3 = ert_graph_add_tensor(g, "h3", ERT_DTYPE_FLOAT32, 2, (int64_t[]){ -1, 32 });
	int32_t h4 = ert_graph_add_tensor(g, "h4", ERT_DTYPE_FLOAT32, 2, (int64_t[]){ -1, 10 });
	int32_t y = ert_graph_add_tensor(g, "y", ERT_DTYPE_FLOAT32, 2, (int64_t[]){ -1, 10 });

	if (x < 0 || w1 < 0 || b1 < 0 || w2 < 0 || y < 0) {
		ert_graph_destroy(g);
		return NULL;
	}
	g->tensors[x].dim_names[0] = ert_graph_strdup(g, "batch");
	ert_graph_add_input(g, x);
	ert_graph_add_node(g, ERT_OP_MatMul, "fc1", 2, (int32_t[]){ x, w1 }, 1, &h1);
	ert_graph_add_node(g, ERT_OP_Add, "bias1", 2, (int32_t[]){ h1, b1 }, 1, &h2);
	ert_graph_add_node(g, ERT_OP_Relu, "relu1", 1, &h2, 1, &h3);
	ert_graph_add_node(g, ERT_OP_MatMul, "fc2", 2, (int32_t[]){ h3, w2 }, 1, &h4);
	int32_t n = ert_graph_add_node(g, ERT_OP_Softmax, "softmax", 1, &h4, 1, &y);

	ert_node_set_attr_int(g, &g->nodes[n], "axis", 1);
	ert_graph_add_output(g, y);
	return g;
}

/* Conv → Clip → MaxPool → Reshape → Gemm, plus attributes of every type. */
static struct ert_graph *build_conv(void)
{
	struct ert_graph *g = ert_graph_create();

	if (!g)
		return NULL;
	g->producer = "bad-input conv";
	g->opset = 13;
	int32_t x = ert_graph_add_tensor(g, "image", ERT_DTYPE_FLOAT32, 4, (int64_t[]){ 1, 3, 8, 8 });
	int32_t w = add_const_f32(g, "conv.w", 4, (int64_t[]){ 16, 3, 3, 3 }, 4);
	int32_t b = add_const_f32(g, "conv.b", 1, (int64_t[]){ 16 }, 5);
	int32_t lo = add_const_f32(g, "clip.min", 0, NULL, 6);
	int32_t shape = add_const_i64(g, "shape", 2, (int64_t[]){ 1, -1 });
	int32_t fw = add_const_f32(g, "fc.w", 2, (int64_t[]){ 10, 256 }, 7);
	int32_t c1 = ert_graph_add_tensor(g, "c1", ERT_DTYPE_FLOAT32, -1, NULL);
	int32_t c2 = ert_graph_add_tensor(g, "c2", ERT_DTYPE_FLOAT32, -1, NULL);
	int32_t c3 = ert_graph_add_tensor(g, "c3", ERT_DTYPE_FLOAT32, -1, NULL);
	int32_t c4 = ert_graph_add_tensor(g, "c4", ERT_DTYPE_FLOAT32, -1, NULL);
	int32_t y = ert_graph_add_tensor(g, "logits", ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 1, 10 });

	if (x < 0 || w < 0 || b < 0 || lo < 0 || shape < 0 || fw < 0 || y < 0) {
		ert_graph_destroy(g);
		return NULL;
	}
	ert_graph_add_input(g, x);
	int32_t n = ert_graph_add_node(g, ERT_OP_Conv, "conv", 3, (int32_t[]){ x, w, b }, 1, &c1);
	struct ert_node *nd = &g->nodes[n];

	ert_node_set_attr_ints(g, nd, "pads", (int64_t[]){ 1, 1, 1, 1 }, 4);
	ert_node_set_attr_ints(g, nd, "kernel_shape", (int64_t[]){ 3, 3 }, 2);
	ert_node_set_attr_int(g, nd, "group", 1);
	struct ert_attr *a = ert_node_add_attr(g, nd, "auto_pad", ERT_ATTR_STRING);

	if (a) {
		a->s = ert_graph_strdup(g, "NOTSET");
		a->len = 6;
	}
	a = ert_node_add_attr(g, nd, "ert.act_params", ERT_ATTR_FLOATS);
	float *fp = ert_graph_alloc(g, 2 * sizeof(float));

	if (a && fp) {
		fp[0] = 0.0f;
		fp[1] = 6.0f;
		a->floats = fp;
		a->count = 2;
	}
	ert_graph_add_node(g, ERT_OP_Clip, "clip", 3, (int32_t[]){ c1, lo, -1 }, 1, &c2);
	n = ert_graph_add_node(g, ERT_OP_MaxPool, "pool", 1, &c2, 1, &c3);
	ert_node_set_attr_ints(g, &g->nodes[n], "kernel_shape", (int64_t[]){ 2, 2 }, 2);
	ert_node_set_attr_ints(g, &g->nodes[n], "strides", (int64_t[]){ 2, 2 }, 2);
	n = ert_graph_add_node(g, ERT_OP_Reshape, "flatten", 2, (int32_t[]){ c3, shape }, 1, &c4);
	a = ert_node_add_attr(g, &g->nodes[n], "ert.tags", ERT_ATTR_STRINGS);
	const char **ss = ert_graph_alloc(g, 2 * sizeof(char *));

	if (a && ss) {
		ss[0] = ert_graph_strdup(g, "flatten");
		ss[1] = ert_graph_strdup(g, "");
		a->strings = ss;
		a->count = 2;
	}
	a = ert_node_add_attr(g, &g->nodes[n], "ert.shape_source", ERT_ATTR_TENSOR);
	if (a)
		a->tensor = shape;
	n = ert_graph_add_node(g, ERT_OP_Gemm, "fc", 2, (int32_t[]){ c4, fw }, 1, &y);
	ert_node_set_attr_int(g, &g->nodes[n], "transB", 1);
	ert_node_set_attr_float(g, &g->nodes[n], "alpha", 1.0f);
	ert_graph_add_output(g, y);
	return g;
}

/* QuantizeLinear / DequantizeLinear with per-axis quantisation parameters. */
static struct ert_graph *build_quant(void)
{
	static const float scale[1] = { 0.05f };
	static const float chs[4] = { 0.1f, 0.2f, 0.3f, 0.4f };
	static const int32_t chz[4] = { 0, 1, -1, 2 };
	struct ert_graph *g = ert_graph_create();

	if (!g)
		return NULL;
	int32_t x = ert_graph_add_tensor(g, "x", ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 4, 5 });
	int32_t s = ert_graph_add_tensor(g, "scale", ERT_DTYPE_FLOAT32, 0, NULL);
	int32_t zp = ert_graph_add_tensor(g, "zp", ERT_DTYPE_INT8, 0, NULL);
	int32_t q = ert_graph_add_tensor(g, "q", ERT_DTYPE_INT8, 2, (int64_t[]){ 4, 5 });
	int32_t y = ert_graph_add_tensor(g, "y", ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 4, 5 });
	int8_t *zpd = malloc(1);
	float *sd = malloc(4);

	if (x < 0 || s < 0 || zp < 0 || q < 0 || y < 0 || !zpd || !sd) {
		free(zpd);
		free(sd);
		ert_graph_destroy(g);
		return NULL;
	}
	*zpd = 3;
	memcpy(sd, scale, 4);
	ert_graph_set_const(g, s, sd, 4, true);
	ert_graph_set_const(g, zp, zpd, 1, true);
	g->tensors[q].quant = (struct ert_quant){ 0, 4, chs, chz };
	ert_graph_add_input(g, x);
	ert_graph_add_node(g, ERT_OP_QuantizeLinear, "q", 3, (int32_t[]){ x, s, zp }, 1, &q);
	ert_graph_add_node(g, ERT_OP_DequantizeLinear, "dq", 3, (int32_t[]){ q, s, zp }, 1, &y);
	ert_graph_add_output(g, y);
	return g;
}

/*
 * Constants in subgraphs one and two levels down: If 'outer' (c) {
 * If 'inner' (c) { x + k1 } else { x * k2 } } else { x - k3 }, x and the
 * k's f32[64].
 */
static struct ert_graph *build_body_consts(void)
{
	const int64_t d[1] = { 64 };
	struct ert_graph *g = ert_graph_create();
	struct ert_graph *tb, *eb, *itb, *ieb;
	float v[64];
	int32_t x, c, y, t, bx, bc, caps[2];

	if (!g)
		return NULL;
	for (int i = 0; i < 64; i++)
		v[i] = (float)i * 0.25f - 3;
	g->producer = "bad-input";
	g->opset = 13;
	x = ct_tensor(g, "x", ERT_DTYPE_FLOAT32, 1, d);
	c = ct_tensor(g, "c", ERT_DTYPE_BOOL, 0, NULL);
	tb = ert_graph_add_subgraph(g);
	eb = ert_graph_add_subgraph(g);
	if (x < 0 || c < 0 || !tb || !eb || !ert_graph_add_input(g, x) || !ert_graph_add_input(g, c))
		goto error;
	bx = ct_capture(tb, x);
	bc = ct_capture(tb, c);
	itb = ert_graph_add_subgraph(tb);
	ieb = ert_graph_add_subgraph(tb);
	if (bx < 0 || bc < 0 || !itb || !ieb)
		goto error;
	t = ct_binary(itb, ERT_OP_Add, "add_k1", ct_capture(itb, bx),
		      ct_const_f32(itb, "k1", 1, d, v), "y1");
	if (t < 0 || !ert_graph_add_output(itb, t))
		goto error;
	t = ct_binary(ieb, ERT_OP_Mul, "mul_k2", ct_capture(ieb, bx),
		      ct_const_f32(ieb, "k2", 1, d, v), "y2");
	if (t < 0 || !ert_graph_add_output(ieb, t))
		goto error;
	t = ct_if(tb, "inner", bc, itb, &bx, ieb, &bx, "yi", ERT_DTYPE_FLOAT32, 1, d);
	if (t < 0 || !ert_graph_add_output(tb, t))
		goto error;
	t = ct_binary(eb, ERT_OP_Sub, "sub_k3", ct_capture(eb, x), ct_const_f32(eb, "k3", 1, d, v),
		      "y3");
	if (t < 0 || !ert_graph_add_output(eb, t))
		goto error;
	caps[0] = x;
	caps[1] = c;
	y = ct_if(g, "outer", c, tb, caps, eb, caps, "y", ERT_DTYPE_FLOAT32, 1, d);
	if (y < 0 || !ert_graph_add_output(g, y))
		goto error;
	return g;
error:
	ert_graph_destroy(g);
	return NULL;
}

/* One string constant of @n strings (docs/strings.md: handles, then bytes). */
static int32_t add_const_str(struct ert_graph *g, const char *name, int64_t n,
			     const ert_string *v)
{
	int32_t t = ert_graph_add_tensor(g, name, ERT_DTYPE_STRING, 1, &n);
	ert_string *d = ert_strings_pack(v, (size_t)n, NULL);

	if (t < 0 || !d) {
		free(d);
		return -1;
	}
	ert_graph_set_const(g, t, d, (size_t)n * sizeof(ert_string), true);
	return t;
}

/* x[3] string → StringConcat(x, suffix) → Equal(…, want) → y; the constants are strings */
static struct ert_graph *build_strings(void)
{
	static const ert_string suffix[3] = { { "-a", 2 }, { "", 0 }, { "b\0c", 3 } };
	static const ert_string want[3] = { { "x-a", 3 }, { "yy", 2 }, { "zb\0c", 4 } };
	struct ert_graph *g = ert_graph_create();

	if (!g)
		return NULL;
	g->opset = 20;
	int32_t x = ert_graph_add_tensor(g, "x", ERT_DTYPE_STRING, 1, (int64_t[]){ 3 });
	int32_t s = add_const_str(g, "suffix", 3, suffix), w = add_const_str(g, "want", 3, want);
	int32_t c = ert_graph_add_tensor(g, "c", ERT_DTYPE_STRING, 1, (int64_t[]){ 3 });
	int32_t y = ert_graph_add_tensor(g, "y", ERT_DTYPE_BOOL, 1, (int64_t[]){ 3 });

	if (x < 0 || s < 0 || w < 0 || c < 0 || y < 0) {
		ert_graph_destroy(g);
		return NULL;
	}
	ert_graph_add_input(g, x);
	ert_graph_add_node(g, ERT_OP_StringConcat, "cat", 2, (int32_t[]){ x, s }, 1, &c);
	ert_graph_add_node(g, ERT_OP_Equal, "eq", 2, (int32_t[]){ c, w }, 1, &y);
	ert_graph_add_output(g, y);
	return g;
}

static int add_image(struct bi_image *out, int n, int max, const char *name,
		     struct ert_graph *g, const struct ert_write_options *opt)
{
	struct ert_err err;
	void *data = NULL;
	size_t size = 0;

	if (!g || n >= max || ert_format_write_memory(g, opt, &data, &size, &err) != ERT_OK)
		return n;
	out[n] = (struct bi_image){ name, data, size };
	return n + 1;
}

int bi_ert_images(struct bi_image *out, int max)
{
	struct ert_graph *mlp = build_mlp(), *conv = build_conv(), *quant = build_quant();
	const struct ert_write_options fp16 = { .fp16 = true };
	const struct ert_write_options q8 = { .weight_bits = 8, .weight_block = 32 };
	const struct ert_write_options q4 = { .weight_bits = 4, .weight_block = 16, .fp16 = true };
	int n = 0;

	n = add_image(out, n, max, "ert mlp", mlp, NULL);
	n = add_image(out, n, max, "ert conv", conv, NULL);
	n = add_image(out, n, max, "ert quant", quant, NULL);
	n = add_image(out, n, max, "ert mlp fp16", mlp, &fp16);
	n = add_image(out, n, max, "ert conv int8", conv, &q8);
	n = add_image(out, n, max, "ert conv int4", conv, &q4);
	/* subgraphs: If and a Loop whose body holds an If, captures two levels deep; Scan */
	struct ert_graph *cf = ct_build_if_loop(), *scan = ct_build_scan();
	struct ert_err err;

	if (cf && ert_graph_toposort(cf, &err) == ERT_OK)
		n = add_image(out, n, max, "ert control flow", cf, NULL);
	n = add_image(out, n, max, "ert scan", scan, NULL);
	/* constants one and two levels down, damaged like the main graph's */
	struct ert_graph *bc = build_body_consts();

	n = add_image(out, n, max, "ert body constants", bc, NULL);
	ert_graph_destroy(bc);
	/* string constants (format version 7): hostile offsets and lengths */
	struct ert_graph *strs = build_strings();

	n = add_image(out, n, max, "ert strings", strs, NULL);
	ert_graph_destroy(strs);
	ert_graph_destroy(cf);
	ert_graph_destroy(scan);
	ert_graph_destroy(mlp);
	ert_graph_destroy(conv);
	ert_graph_destroy(quant);
	return n;
}
