/* SPDX-License-Identifier: MIT */
/*
 * Elementwise ops: one work-item per output element, in CT (half where the
 * float16 variant runs on a device with cl_khr_fp16, float otherwise).
 */

inline CT unary_op(CT v, int op, float p0, float p1)
{
	switch (op) {
	case ERT_GPU_UN_RELU:
		return v < 0.0f ? 0.0f : v;  /* NaN passes through */
	case ERT_GPU_UN_SIGMOID:
		return 1.0f / (1.0f + exp(-v));
	case ERT_GPU_UN_TANH:
		return tanh(v);
	case ERT_GPU_UN_CLIP: {
		float t = v < p0 ? p0 : v;

		return t > p1 ? p1 : t;
	}
	case ERT_GPU_UN_LEAKY_RELU:
		return v < 0.0f ? v * p0 : v;
	case ERT_GPU_UN_HARD_SWISH:
		return v * clamp(v / 6.0f + 0.5f, 0.0f, 1.0f);
	case ERT_GPU_UN_HARD_SIGMOID:
		return clamp(p0 * v + p1, 0.0f, 1.0f);
	case ERT_GPU_UN_ELU:
		return v < 0.0f ? p0 * expm1(v) : v;
	case ERT_GPU_UN_EXP:
		return exp(v);
	case ERT_GPU_UN_LOG:
		return log(v);
	case ERT_GPU_UN_NEG:
		return -v;
	case ERT_GPU_UN_ABS:
		return fabs(v);
	case ERT_GPU_UN_SQRT:
		return sqrt(v);
	case ERT_GPU_UN_RECIPROCAL:
		return 1.0f / v;
	case ERT_GPU_UN_ERF:
		return erf(v);
	case ERT_GPU_UN_GELU:
		return ert_gelu(v);
	case ERT_GPU_UN_GELU_TANH:
		return ert_gelu_tanh(v);
	case ERT_GPU_UN_SOFTPLUS:
		return v > 0.0f ? v + log1p(exp(-v)) : log1p(exp(v));
	case ERT_GPU_UN_FLOOR:
		return floor(v);
	case ERT_GPU_UN_CEIL:
		return ceil(v);
	case ERT_GPU_UN_SOFTSIGN:
		return v / (1.0f + fabs(v));
	default:
		return v;
	}
}

__kernel void unary_f32(__global const T *x, int xo, __global T *y, int yo, int n,
			int op, float p0, float p1)
{
	int i = get_global_id(0);

	if (i < n)
		STC(y, yo + i, unary_op(LDC(x, xo + i), op, p0, p1));
}

inline CT binary_op(CT a, CT b, int op)
{
	switch (op) {
	case ERT_GPU_BIN_ADD: return a + b;
	case ERT_GPU_BIN_SUB: return a - b;
	case ERT_GPU_BIN_MUL: return a * b;
	case ERT_GPU_BIN_DIV: return a / b;
	case ERT_GPU_BIN_MAX: return isnan(a) || isnan(b) ? NAN : fmax(a, b);
	case ERT_GPU_BIN_MIN: return isnan(a) || isnan(b) ? NAN : fmin(a, b);
	case ERT_GPU_BIN_POW: return pow(a, b);
	case ERT_GPU_BIN_PRELU: return a < 0.0f ? a * b : a;
	default: return 0.0f;
	}
}

/*
 * c = act(a op b), numpy broadcasting: the host folds the shapes into
 * @rank <= 8 dims of the output and each input's strides (0 where it is
 * broadcast), merging dims where it can.
 */
__kernel void binary_f32(__global const T *a, int ao, __global const T *b, int bo,
			 __global T *c, int co, int n, int op, int rank, int8 dims8,
			 int8 sa8, int8 sb8, int act, float p0, float p1)
{
	int i = get_global_id(0);
	int dims[8], sa[8], sb[8];

	if (i >= n)
		return;
	vstore8(dims8, 0, dims);
	vstore8(sa8, 0, sa);
	vstore8(sb8, 0, sb);
	CT v = binary_op(LDC(a, ao + ert_strided_index(i, rank, dims, sa)),
			 LDC(b, bo + ert_strided_index(i, rank, dims, sb)), op);

	ST(c, co + i, ert_act(v, act, p0, p1));
}

/* Same shapes: no index arithmetic. */
__kernel void binary_same_f32(__global const T *a, int ao, __global const T *b, int bo,
			      __global T *c, int co, int n, int op, int act, float p0,
			      float p1)
{
	int i = get_global_id(0);

	if (i < n)
		ST(c, co + i, ert_act(binary_op(LDC(a, ao + i), LDC(b, bo + i), op), act, p0, p1));
}
