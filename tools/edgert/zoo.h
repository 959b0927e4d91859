/* SPDX-License-Identifier: MIT */
/*
 * zoo.h — building standard architectures with the graph API and seeded random
 * weights, so that demos and tests need no download.
 *
 * The graphs use ONNX op forms of the opset they declare (Reshape/Split/Clip
 * take their parameters as constant inputs). Intermediate tensors are added
 * with unknown shape; shape inference fills them in at plan time.
 *
 * Weights are uniform with a He/Kaiming standard deviation (sqrt(gain/fan_in))
 * so that activations stay in a sane range; BatchNorm is taken as already
 * folded into each Conv's bias.
 */
#ifndef ERT_ZOO_H
#define ERT_ZOO_H

#include "cli.h"
#include "ert-graph.h"

struct zoo_builder {
	struct ert_graph *g;
	struct cli_rng rng;
	bool failed;          /* sticky: some step ran out of memory */
	int32_t relu6_min, relu6_max; /* shared Clip bounds, created on first use */
	uint32_t counter;     /* for unique node names */
	int64_t batch;        /* the input's first dim (zoo_begin: 1) */
};

/* Start a graph with the default-domain @opset. False on out-of-memory. */
bool zoo_begin(struct zoo_builder *b, int64_t opset, uint64_t seed);
/* Drop the graph still held by @b (b->g may be NULL). */
void zoo_abort(struct zoo_builder *b);

int32_t zoo_input(struct zoo_builder *b, const char *name, int32_t rank, const int64_t *dims);
/* Mark @t the graph output; false when any step failed. The graph stays in b->g. */
bool zoo_end(struct zoo_builder *b, int32_t t);

/* Random float32 constant, uniform with standard deviation @std. */
int32_t zoo_weight(struct zoo_builder *b, const char *hint, int32_t rank, const int64_t *dims,
		   float std);
/* Float32 constant with every element @value (rank 0 for a scalar). */
int32_t zoo_fill(struct zoo_builder *b, const char *hint, int32_t rank, const int64_t *dims,
		 float value);
/* 1-D int64 constant (rank 0 when @n is 0: a scalar holding vals[0]). */
int32_t zoo_ints(struct zoo_builder *b, const char *hint, uint32_t n, const int64_t *vals);

/*
 * Add a node of @op reading @in, with one output named @out_name (NULL: a fresh
 * name derived from @hint). Returns the output tensor; *@node_out (optional) is
 * the node, valid until the next node is added.
 */
int32_t zoo_op(struct zoo_builder *b, enum ert_op op, const char *hint, uint32_t n_in,
	       const int32_t *in, const char *out_name, struct ert_node **node_out);
/* Shorthands for one and two inputs. */
int32_t zoo_op1(struct zoo_builder *b, enum ert_op op, const char *hint, int32_t x);
int32_t zoo_op2(struct zoo_builder *b, enum ert_op op, const char *hint, int32_t x, int32_t y);

/*
 * Conv with bias, square kernel @k, padding k/2. @gain is 2 before a ReLU, 1
 * for a linear output; @scale shrinks the weights further (residual branches).
 */
int32_t zoo_conv(struct zoo_builder *b, int32_t x, int64_t cin, int64_t cout, int64_t k,
		 int64_t stride, int64_t group, float gain, float scale);
int32_t zoo_relu(struct zoo_builder *b, int32_t x);
/* Clip(x, 0, 6) with constant min/max inputs. */
int32_t zoo_relu6(struct zoo_builder *b, int32_t x);
/* MaxPool with a square window, stride and padding. */
int32_t zoo_maxpool(struct zoo_builder *b, int32_t x, int64_t k, int64_t stride, int64_t pad);
/* Gemm(x, W[out,in], bias, transB=1); output @out_name when non-NULL. */
int32_t zoo_gemm(struct zoo_builder *b, int32_t x, int64_t in, int64_t out,
		 const char *out_name);
/* GlobalAveragePool → Flatten → Gemm to @classes logits named "logits". */
int32_t zoo_classifier(struct zoo_builder *b, int32_t x, int64_t channels, int64_t classes);
/* MatMul(x, W[in,out]) + bias: the transformer linear layer as exporters write it. */
int32_t zoo_linear(struct zoo_builder *b, int32_t x, int64_t in, int64_t out, float scale);
/* Reshape with a constant shape tensor. */
int32_t zoo_reshape(struct zoo_builder *b, int32_t x, uint32_t rank, const int64_t *shape);
int32_t zoo_transpose(struct zoo_builder *b, int32_t x, uint32_t rank, const int64_t *perm);
/* LayerNormalization over the last axis, scale 1 and bias 0. */
int32_t zoo_layernorm(struct zoo_builder *b, int32_t x, int64_t dim);

struct zoo_arch {
	const char *name;
	const char *description;
	int64_t opset;
	bool (*build)(struct zoo_builder *b); /* false after b->failed */
};

extern const struct zoo_arch zoo_mobilenet_v2;
extern const struct zoo_arch zoo_resnet18;
extern const struct zoo_arch zoo_resnet50;
extern const struct zoo_arch zoo_vit_s16;

/* Every architecture, in the order 'edgert zoo --list' prints them. */
extern const struct zoo_arch *const zoo_archs[];
extern const size_t zoo_n_archs;
/* The architecture called @name, or NULL. */
const struct zoo_arch *zoo_find(const char *name);

/*
 * Build @arch with weight seed @seed, validate it, optimise it (when
 * @optimize) and write it to @path as an .ert model; *@n_nodes_out (optional)
 * gets its node count. On failure prints "edgert @cmd: ..." and returns false.
 */
bool zoo_write_file(const char *cmd, const struct zoo_arch *arch, uint64_t seed, bool optimize,
		    const char *path, uint32_t *n_nodes_out);
/* The same with a batch of @batch images (1..1024): input Nx3x224x224, logits Nx1000. */
bool zoo_write_file_batch(const char *cmd, const struct zoo_arch *arch, uint64_t seed,
			  int64_t batch, bool optimize, const char *path, uint32_t *n_nodes_out);

#endif /* ERT_ZOO_H */
