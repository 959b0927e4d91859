/* SPDX-License-Identifier: MIT */
/* The ops the GPU backends take, indexed by op, and the API-independent part of supports_op. */
#include <limits.h>
#include <pthread.h>

#include "gpu-common/gpu-ops-impl.h"

#define UNARY(name) { ERT_OP_##name, ERT_GPU_UNARY, ert_gpu_unary_supports }
#define BINARY(name) { ERT_OP_##name, ERT_GPU_BINARY, ert_gpu_binary_supports }
#define VIEW(name) { ERT_OP_##name, ERT_GPU_VIEW, ert_gpu_view_supports }

static const struct ert_gpu_op ops[] = {
	/* elementwise */
	UNARY(Relu), UNARY(Sigmoid), UNARY(Tanh), UNARY(Clip), UNARY(LeakyRelu),
	UNARY(HardSwish), UNARY(HardSigmoid), UNARY(Elu), UNARY(Exp), UNARY(Log),
	UNARY(Neg), UNARY(Abs), UNARY(Sqrt), UNARY(Reciprocal), UNARY(Erf), UNARY(Gelu),
	UNARY(Softplus), UNARY(Floor), UNARY(Ceil), UNARY(Softsign),
	BINARY(Add), BINARY(Sub), BINARY(Mul), BINARY(Div), BINARY(Max), BINARY(Min),
	BINARY(Sum), BINARY(Pow), BINARY(PRelu),
	/* linalg */
	{ ERT_OP_Conv, ERT_GPU_CONV, ert_gpu_conv_supports },
	{ ERT_OP_Gemm, ERT_GPU_GEMM, ert_gpu_gemm_supports },
	{ ERT_OP_MatMul, ERT_GPU_GEMM, ert_gpu_matmul_supports },
	/* pooling */
	{ ERT_OP_MaxPool, ERT_GPU_POOL, ert_gpu_pool_supports },
	{ ERT_OP_AveragePool, ERT_GPU_POOL, ert_gpu_pool_supports },
	{ ERT_OP_GlobalAveragePool, ERT_GPU_PLANE_REDUCE, ert_gpu_global_pool_supports },
	{ ERT_OP_GlobalMaxPool, ERT_GPU_PLANE_REDUCE, ert_gpu_global_pool_supports },
	/* normalization */
	{ ERT_OP_Softmax, ERT_GPU_SOFTMAX, ert_gpu_softmax_supports },
	{ ERT_OP_LogSoftmax, ERT_GPU_SOFTMAX, ert_gpu_softmax_supports },
	{ ERT_OP_LayerNormalization, ERT_GPU_LAYERNORM, ert_gpu_layernorm_supports },
	/* movement */
	VIEW(Reshape), VIEW(Flatten), VIEW(Squeeze), VIEW(Unsqueeze), VIEW(Identity),
	VIEW(Dropout),
	{ ERT_OP_Transpose, ERT_GPU_COPY, ert_gpu_transpose_supports },
	{ ERT_OP_Slice, ERT_GPU_COPY, ert_gpu_slice_supports },
	{ ERT_OP_Concat, ERT_GPU_COPY, ert_gpu_concat_supports },
	{ ERT_OP_Gather, ERT_GPU_GATHER, ert_gpu_gather_supports },
};

static const struct ert_gpu_op *by_op[ERT_OP_COUNT];
static pthread_once_t by_op_once = PTHREAD_ONCE_INIT;

static void build_index(void)
{
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		by_op[ops[i].op] = &ops[i];
}

const struct ert_gpu_op *ert_gpu_op_find(enum ert_op op)
{
	if ((unsigned)op >= ERT_OP_COUNT)
		return NULL;
	pthread_once(&by_op_once, build_index);
	return by_op[op];
}

/* Elements the kernels index with int: every tensor must fit. */
static bool fits_int(const struct ert_value *v)
{
	return !v || (v->numel <= INT_MAX / 2 && v->nbytes <= (size_t)INT_MAX);
}

bool ert_gpu_supports(const struct ert_exec *x)
{
	const struct ert_gpu_op *op = ert_gpu_op_find(x->node->op);

	if (!op)
		return false;
	for (uint32_t k = 0; k < x->n_in; k++)
		if (!fits_int(x->in[k]))
			return false;
	for (uint32_t k = 0; k < x->n_out; k++)
		if (!fits_int(x->out[k]))
			return false;
	return op->supports(x);
}
