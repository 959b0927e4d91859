/* SPDX-License-Identifier: MIT */
/* Helpers every program shares; ocl-codes.h comes before this. */

/*
 * Storage. Every program is built in two variants: float32 storage (the
 * default) and float16 storage (-DERT_F16, precision LOW). Kernels declare
 * their float tensors as T and read and write them only through LD()/ST(),
 * which convert to and from float: vload_half/vstore_half are core OpenCL
 * 1.2, so the float16 variant builds on any device. Where the device has
 * cl_khr_fp16 the backend adds -DERT_F16_ARITH: the elementwise ops then
 * compute in half (CT, LDC()/STC()); convolutions, matrix products and
 * reductions always accumulate in float.
 */
#ifdef ERT_F16_ARITH
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#endif
#ifdef ERT_F16
#define T half
#define LD(p, i) vload_half((i), (p))
#define ST(p, i, v) vstore_half_rte((float)(v), (i), (p))
#else
#define T float
#define LD(p, i) ((p)[i])
#define ST(p, i, v) ((p)[i] = (float)(v))
#endif
#ifdef ERT_F16_ARITH
#define CT half
#define LDC(p, i) ((p)[i])
#define STC(p, i, v) ((p)[i] = (half)(v))
#else
#define CT float
#define LDC(p, i) LD(p, i)
#define STC(p, i, v) ST(p, i, v)
#endif

/* Gelu's two forms (the op's approximate = "none" and "tanh"). */
inline float ert_gelu(float v)
{
	return 0.5f * v * (1.0f + erf(v * 0.70710678118654752440f));
}

inline float ert_gelu_tanh(float v)
{
	return 0.5f * v * (1.0f + tanh(0.79788456080286535588f * (v + 0.044715f * v * v * v)));
}

/* A fused activation, as ert_act_apply() computes it on the CPU. */
inline float ert_act(float v, int act, float p0, float p1)
{
	switch (act) {
	case ERT_GPU_ACT_RELU:
		return v > 0.0f ? v : 0.0f;
	case ERT_GPU_ACT_CLIP:
		return v < p0 ? p0 : v > p1 ? p1 : v;
	case ERT_GPU_ACT_LEAKY_RELU:
		return v >= 0.0f ? v : v * p0;
	case ERT_GPU_ACT_SIGMOID:
		return 1.0f / (1.0f + exp(-v));
	case ERT_GPU_ACT_HARD_SWISH:
		return v * clamp(v / 6.0f + 0.5f, 0.0f, 1.0f);
	case ERT_GPU_ACT_HARD_SIGMOID:
		return clamp(p0 * v + p1, 0.0f, 1.0f);
	case ERT_GPU_ACT_TANH:
		return tanh(v);
	case ERT_GPU_ACT_GELU: /* p0: 1 for approximate="tanh" */
		return p0 != 0.0f ? ert_gelu_tanh(v) : ert_gelu(v);
	default:
		return v;
	}
}

/* Row-major index of flat position @i of @dims (@rank <= 8) with @strides. */
inline int ert_strided_index(int i, int rank, const int *dims, const int *strides)
{
	int idx = 0;

	for (int d = rank - 1; d >= 0; d--) {
		int c = i % dims[d];

		i /= dims[d];
		idx += c * strides[d];
	}
	return idx;
}
