/* SPDX-License-Identifier: MIT */
/* Elementwise float32 ops: unary, and binary with numpy broadcasting. */
#include <math.h>
#include <string.h>

#include "opencl/ops/ocl-ops.h"

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

static bool unary_supports(const struct ert_ocl *cl, const struct ert_exec *x)
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

static ert_status unary_prepare(struct ert_ocl *cl, struct ert_exec *x, struct ert_ocl_step *st,
				struct ert_err *err)
{
	const struct ert_node *n = x->node;
	struct ert_ocl_ref in, out;
	float p0 = 0.0f, p1 = 0.0f;
	ert_status s;

	switch (n->op) {
	case ERT_OP_Clip:
		clip_bounds(x, &p0, &p1);
		break;
	case ERT_OP_LeakyRelu:
		p0 = ert_attr_float(n, "alpha", 0.01f);
		break;
	case ERT_OP_Elu:
		p0 = ert_attr_float(n, "alpha", 1.0f);
		break;
	case ERT_OP_HardSigmoid:
		p0 = ert_attr_float(n, "alpha", 0.2f);
		p1 = ert_attr_float(n, "beta", 0.5f);
		break;
	default:
		break;
	}
	s = ert_ocl_in(cl, x, st, 0, &in, err);
	if (s == ERT_OK)
		s = ert_ocl_out(x, 0, &out, err);
	if (s == ERT_OK)
		s = ocl_launch_1d(cl, st, "eltwise", "unary_f32", x->out[0]->numel, err);
	if (s != ERT_OK)
		return s;
	ert_ocl_arg_ref(st, &in);
	ert_ocl_arg_ref(st, &out);
	ert_ocl_arg_int(st, (cl_int)x->out[0]->numel);
	ert_ocl_arg_int(st, unary_code(n));
	ert_ocl_arg_float(st, p0);
	ert_ocl_arg_float(st, p1);
	return ERT_OK;
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

static bool binary_supports(const struct ert_ocl *cl, const struct ert_exec *x)
{
	/* Sum, Max and Min take any number of inputs: two here */
	return binary_code(x->node->op) >= 0 && x->n_in == 2 && ert_gpu_is_f32(x->in[0]) &&
	       ert_gpu_is_f32(x->in[1]) && ert_gpu_all_f32(x, 2) && x->out[0]->rank <= 8;
}

/* Strides of @v as an operand broadcast to @out's shape (numpy: aligned on the right). */
static void broadcast_strides(const struct ert_value *v, const struct ert_value *out,
			      int64_t *strides)
{
	int64_t own[ERT_MAX_RANK];
	int shift = out->rank - v->rank;

	ocl_contig_strides(v, own);
	for (int d = 0; d < out->rank; d++) {
		int vd = d - shift;

		strides[d] = vd < 0 || v->dims[vd] == 1 ? 0 : own[vd];
	}
}

static ert_status binary_prepare(struct ert_ocl *cl, struct ert_exec *x, struct ert_ocl_step *st,
				 struct ert_err *err)
{
	const struct ert_value *out = x->out[0];
	struct ert_act_desc act = ert_node_act(x->node);
	int64_t dims[ERT_MAX_RANK], strides[3][ERT_MAX_RANK];
	struct ert_ocl_ref a, b, c;
	cl_int d8[8], sa8[8], sb8[8];
	int rank;
	ert_status s;

	memcpy(dims, out->dims, sizeof(dims));
	broadcast_strides(x->in[0], out, strides[0]);
	broadcast_strides(x->in[1], out, strides[1]);
	ocl_contig_strides(out, strides[2]);
	rank = ocl_fold_dims(out->rank, dims, 3, strides);
	s = ert_ocl_in(cl, x, st, 0, &a, err);
	if (s == ERT_OK)
		s = ert_ocl_in(cl, x, st, 1, &b, err);
	if (s == ERT_OK)
		s = ert_ocl_out(x, 0, &c, err);
	if (s != ERT_OK)
		return s;
	if (rank == 1 && strides[0][0] == 1 && strides[1][0] == 1) {
		s = ocl_launch_1d(cl, st, "eltwise", "binary_same_f32", out->numel, err);
		if (s != ERT_OK)
			return s;
		ert_ocl_arg_ref(st, &a);
		ert_ocl_arg_ref(st, &b);
		ert_ocl_arg_ref(st, &c);
		ert_ocl_arg_int(st, (cl_int)out->numel);
		ert_ocl_arg_int(st, binary_code(x->node->op));
	} else {
		s = ocl_launch_1d(cl, st, "eltwise", "binary_f32", out->numel, err);
		if (s != ERT_OK)
			return s;
		ocl_int8(d8, dims, rank);
		ocl_int8(sa8, strides[0], rank);
		ocl_int8(sb8, strides[1], rank);
		ert_ocl_arg_ref(st, &a);
		ert_ocl_arg_ref(st, &b);
		ert_ocl_arg_ref(st, &c);
		ert_ocl_arg_int(st, (cl_int)out->numel);
		ert_ocl_arg_int(st, binary_code(x->node->op));
		ert_ocl_arg_int(st, rank);
		ert_ocl_arg_int8(st, d8);
		ert_ocl_arg_int8(st, sa8);
		ert_ocl_arg_int8(st, sb8);
	}
	ert_ocl_arg_int(st, (cl_int)act.type);
	ert_ocl_arg_float(st, act.p0);
	ert_ocl_arg_float(st, act.p1);
	return ERT_OK;
}

#define UNARY(name) { ERT_OP_##name, unary_supports, NULL, unary_prepare, "ocl-unary-f32" }
#define BINARY(name) { ERT_OP_##name, binary_supports, NULL, binary_prepare, "ocl-binary-f32" }

const struct ert_ocl_op ert_ocl_ops_eltwise[] = {
	UNARY(Relu), UNARY(Sigmoid), UNARY(Tanh), UNARY(Clip), UNARY(LeakyRelu),
	UNARY(HardSwish), UNARY(HardSigmoid), UNARY(Elu), UNARY(Exp), UNARY(Log),
	UNARY(Neg), UNARY(Abs), UNARY(Sqrt), UNARY(Reciprocal), UNARY(Erf), UNARY(Gelu),
	UNARY(Softplus), UNARY(Floor), UNARY(Ceil), UNARY(Softsign),
	BINARY(Add), BINARY(Sub), BINARY(Mul), BINARY(Div), BINARY(Max), BINARY(Min),
	BINARY(Sum), BINARY(Pow), BINARY(PRelu),
	{ ERT_OP_COUNT, NULL, NULL, NULL, NULL },
};
