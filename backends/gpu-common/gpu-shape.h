/* SPDX-License-Identifier: MIT */
/*
 * gpu-shape.h — shape and operand helpers of the GPU op planning
 * (gpu-common/gpu-*.c).
 */
#ifndef ERT_GPU_SHAPE_H
#define ERT_GPU_SHAPE_H

#include "ert-backend-impl.h"

static inline bool ert_gpu_is_f32(const struct ert_value *v)
{
	return v && v->dtype == ERT_DTYPE_FLOAT32;
}

/* Every present input below @n_data and every present output is float32. */
static inline bool ert_gpu_all_f32(const struct ert_exec *x, uint32_t n_data)
{
	for (uint32_t k = 0; k < x->n_in && k < n_data; k++)
		if (x->in[k] && x->in[k]->dtype != ERT_DTYPE_FLOAT32)
			return false;
	for (uint32_t k = 0; k < x->n_out; k++)
		if (x->out[k] && x->out[k]->dtype != ERT_DTYPE_FLOAT32)
			return false;
	return x->n_out > 0 && x->out[0];
}

static inline const struct ert_value *ert_gpu_opt_in(const struct ert_exec *x, uint32_t k)
{
	return k < x->n_in ? x->in[k] : NULL;
}

/* Input @k is absent, or a constant whose value prepare() reads on the host. */
static inline bool ert_gpu_const_or_absent(const struct ert_exec *x, uint32_t k)
{
	return k >= x->n_in || !x->in[k] || (x->in_const[k] && x->in[k]->data);
}

/*
 * A walk over the @rank dims of @dims in which each of @n_ops operands has
 * its own strides (0 on a broadcast dim), reduced: dims of 1 dropped, and
 * neighbours merged where every operand steps through them as one.
 * @strides[o] has @rank entries in, the reduced count out; returns it.
 */
int ert_gpu_fold_dims(int rank, int64_t *dims, int n_ops, int64_t (*strides)[ERT_MAX_RANK]);

/* Row-major strides of @v's dims. */
void ert_gpu_contig_strides(const struct ert_value *v, int64_t *strides);

/* Strides of @v as an operand broadcast to @out's shape (numpy: aligned on the right). */
void ert_gpu_broadcast_strides(const struct ert_value *v, const struct ert_value *out,
			       int64_t *strides);

#endif
