/* SPDX-License-Identifier: MIT */
/* Elementwise float32 ops on a GPU: unary, and binary with numpy broadcasting. */
#include <math.h>
#include <string.h>

#include "gpu-common/gpu-ops-impl.h"

static int unary_code(const struct ert_node *n)
{
	switch (n->op) {
	case ERT_OP_Relu: return ERT_GPU_UN_RELU;
	case ERT_OP_Sigmoid: return ERT_GPU_UN_SIGMOID;
	case ERT_OP_Tanh: return ERT_GPU_UN_TANH;
	case ERT_OP_Clip: return ERT_GPU_UN_CLIP;
	case ERT_OP_LeakyRelu: return ERT_GPU_UN_LEAKY_RELU;
	case ERT_OP_HardSwish: return ERT_GPU_UN_HARD_SWISH;
	case ERT_OP_HardSigmoid: return ERT_GPU_UN_HARD_SIGMOID;
	case ERT_OP_Elu: return ERT_GPU_UN_ELU;
	case ERT_OP_Exp: return ERT_GPU_UN_EXP;
	case ERT_OP_Log: return ERT_GPU_UN_LOG;
	case ERT_OP_Neg: return ERT_GPU_UN_NEG;
	case ERT_OP_Abs: return ERT_GPU_UN_ABS;
	case ERT_OP_Sqrt: return ERT_GPU_UN_SQRT;
	case ERT_OP_Reciprocal: return ERT_GPU_UN_RECIPROCAL;
	case ERT_OP_Erf: return ERT_GPU_UN_ERF;
	case ERT_OP_Gelu:
		return strcmp(ert_attr_string(n, "approximate", "none"), "tanh") ? ERT_GPU_UN_GELU :
			ERT_GPU_UN_GELU_TANH;
	case ERT_OP_Softplus: return ERT_GPU_UN_SOFTPLUS;
	case ERT_OP_Floor: return ERT_GPU_UN_FLOOR;
	case ERT_OP_Ceil: return ERT_GPU_UN_CEIL;
	case ERT_OP_Softsign: return ERT_GPU_UN_SOFTSIGN;
	default: return -1;
	}
}

/* Clip's bounds: attributes before opset 11, constant scalar inputs after. */
static bool clip_bounds(const struct ert_exec *x, float *lo, float *hi)
{
	const struct ert_value *b[2] = { ert_gpu_opt_in(x, 1), ert_gpu_opt_in(x, 2) };

	*lo = ert_attr_float(x->node, "min", -INFINITY);
	*hi = ert_attr_float(x->node, "max", INFINITY);
	for (uint32_t k = 0; k < 2; k++) {
		if (!b[k])
			continue;
		if (!ert_gpu_const_or_absent(x, k + 1) || !ert_gpu_is_f32(b[k]) || b[k]->numel != 1)
			return false;
		*(k ? hi : lo) = *(const float *)b[k]->data;
	}
	return true;
}

bool ert_gpu_unary_supports(const struct ert_exec *x)
{
	float lo, hi;

	if (unary_code(x->node) < 0 || !ert_gpu_is_f32(x->in[0]) || !ert_gpu_all_f32(x, 1) ||
	    x->out[0]->numel != x->in[0]->numel)
		return false;
	if (x->node->op == ERT_OP_Clip)
		return clip_bounds(x, &lo, &hi);
	if (x->node->op == ERT_OP_Gelu) {
		const char *a = ert_attr_string(x->node, "approximate", "none");

		return !strcmp(a, "none") || !strcmp(a, "tanh");
	}
	return x->n_in == 1;
}

void ert_gpu_unary_plan(const struct ert_exec *x, struct ert_gpu_unary *u)
{
	const struct ert_node *n = x->node;

	*u = (struct ert_gpu_unary){ .n = x->out[0]->numel, .code = unary_code(n) };
	switch (n->op) {
	case ERT_OP_Clip:
		clip_bounds(x, &u->p0, &u->p1);
		break;
	case ERT_OP_LeakyRelu:
		u->p0 = ert_attr_float(n, "alpha", 0.01f);
		break;
	case ERT_OP_Elu:
		u->p0 = ert_attr_float(n, "alpha", 1.0f);
		break;
	case ERT_OP_HardSigmoid:
		u->p0 = ert_attr_float(n, "alpha", 0.2f);
		u->p1 = ert_attr_float(n, "beta", 0.5f);
		break;
	default:
		break;
	}
}

static int binary_code(enum ert_op op)
{
	switch (op) {
	case ERT_OP_Add: case ERT_OP_Sum: return ERT_GPU_BIN_ADD;
	case ERT_OP_Sub: return ERT_GPU_BIN_SUB;
	case ERT_OP_Mul: return ERT_GPU_BIN_MUL;
	case ERT_OP_Div: return ERT_GPU_BIN_DIV;
	case ERT_OP_Max: return ERT_GPU_BIN_MAX;
	case ERT_OP_Min: return ERT_GPU_BIN_MIN;
	case ERT_OP_Pow: return ERT_GPU_BIN_POW;
	case ERT_OP_PRelu: return ERT_GPU_BIN_PRELU;
	default: return -1;
	}
}

bool ert_gpu_binary_supports(const struct ert_exec *x)
{
	/* Sum, Max and Min take any number of inputs: two here */
	return binary_code(x->node->op) >= 0 && x->n_in == 2 && ert_gpu_is_f32(x->in[0]) &&
	       ert_gpu_is_f32(x->in[1]) && ert_gpu_all_f32(x, 2) && x->out[0]->rank <= 8;
}

void ert_gpu_binary_plan(const struct ert_exec *x, struct ert_gpu_binary *b)
{
	const struct ert_value *out = x->out[0];
	int64_t strides[3][ERT_MAX_RANK];

	*b = (struct ert_gpu_binary){ .n = out->numel, .op = binary_code(x->node->op),
				      .act = ert_node_act(x->node) };
	memcpy(b->dims, out->dims, sizeof(b->dims));
	ert_gpu_broadcast_strides(x->in[0], out, strides[0]);
	ert_gpu_broadcast_strides(x->in[1], out, strides[1]);
	ert_gpu_contig_strides(out, strides[2]);
	b->rank = ert_gpu_fold_dims(out->rank, b->dims, 3, strides);
	memcpy(b->sa, strides[0], sizeof(b->sa));
	memcpy(b->sb, strides[1], sizeof(b->sb));
	b->same = b->rank == 1 && b->sa[0] == 1 && b->sb[0] == 1;
}
