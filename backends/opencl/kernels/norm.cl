/* SPDX-License-Identifier: MIT */
/*
 * Normalisations, one work-group of ERT_GPU_RED_WG items per row, with reductions in
 * local memory. A row of Softmax is @len elements @inner apart; LayerNorm's
 * rows are contiguous. Tensors are T (common.cl); sums and the arithmetic
 * are float in both variants.
 */
/* Reduce part[] to part[0] (max when @is_max, else sum); every item then reads part[0]. */
inline float wg_reduce(__local float *part, float v, bool is_max)
{
	int l = get_local_id(0);

	part[l] = v;
	for (int s = ERT_GPU_RED_WG / 2; s > 0; s >>= 1) {
		/* each halving reads what the previous one wrote */
		barrier(CLK_LOCAL_MEM_FENCE);
		if (l < s)
			part[l] = is_max ? fmax(part[l], part[l + s]) : part[l] + part[l + s];
	}
	/* part[0] is final before anyone reads it */
	barrier(CLK_LOCAL_MEM_FENCE);
	v = part[0];
	/* and read by all before the next reduction writes part[] */
	barrier(CLK_LOCAL_MEM_FENCE);
	return v;
}

__kernel __attribute__((reqd_work_group_size(ERT_GPU_RED_WG, 1, 1)))
void softmax_f32(__global const T *x, int xo, __global T *y, int yo, int len,
		 int inner, int log_softmax)
{
	__local float part[ERT_GPU_RED_WG];
	int row = get_group_id(0), l = get_local_id(0);
	int base = (row / inner) * len * inner + row % inner;
	__global const T *xp = x + xo + base;
	__global T *yp = y + yo + base;
	float m = -INFINITY, s = 0.0f;

	for (int j = l; j < len; j += ERT_GPU_RED_WG)
		m = fmax(m, LD(xp, j * inner));
	m = wg_reduce(part, m, true);
	for (int j = l; j < len; j += ERT_GPU_RED_WG)
		s += exp(LD(xp, j * inner) - m);
	s = wg_reduce(part, s, false);
	if (log_softmax) {
		float ls = log(s);

		for (int j = l; j < len; j += ERT_GPU_RED_WG)
			ST(yp, j * inner, LD(xp, j * inner) - m - ls);
	} else {
		for (int j = l; j < len; j += ERT_GPU_RED_WG)
			ST(yp, j * inner, exp(LD(xp, j * inner) - m) / s);
	}
}

/* y = (x - mean) / sqrt(var + eps) * scale + bias over each row of @len. */
__kernel __attribute__((reqd_work_group_size(ERT_GPU_RED_WG, 1, 1)))
void layernorm_f32(__global const T *x, int xo, __global const T *sc, int so,
		   __global const T *b, int bo, int has_bias, __global T *y, int yo,
		   int len, float eps)
{
	__local float part[ERT_GPU_RED_WG];
	int row = get_group_id(0), l = get_local_id(0);
	__global const T *xp = x + xo + row * len;
	__global T *yp = y + yo + row * len;
	float s = 0.0f, mean, var;

	for (int j = l; j < len; j += ERT_GPU_RED_WG)
		s += LD(xp, j);
	mean = wg_reduce(part, s, false) / (float)len;
	s = 0.0f;
	for (int j = l; j < len; j += ERT_GPU_RED_WG) {
		float d = LD(xp, j) - mean;

		s += d * d;
	}
	var = wg_reduce(part, s, false) / (float)len;
	float inv = 1.0f / sqrt(var + eps);

	for (int j = l; j < len; j += ERT_GPU_RED_WG) {
		float v = (LD(xp, j) - mean) * inv * LD(sc, so + j);

		ST(yp, j, has_bias ? v + LD(b, bo + j) : v);
	}
}
