/* SPDX-License-Identifier: MIT */
/*
 * gpu-backend.h — checks of struct ert_backend_ops that the GPU backends
 * (OpenCL, Vulkan) share: neither depends on the API.
 */
#ifndef ERT_GPU_BACKEND_H
#define ERT_GPU_BACKEND_H

#include "ert-backend-impl.h"

/* Are all of @x's outputs empty (nothing to launch: prepare() records no step)? */
static inline bool ert_gpu_outputs_empty(const struct ert_exec *x)
{
	for (uint32_t k = 0; k < x->n_out; k++)
		if (x->out[k] && x->out[k]->numel)
			return false;
	return x->n_out > 0;
}

/* A transfer of @size bytes at @offset must lie inside @buf; @api names the backend in the error. */
static inline ert_status ert_gpu_check_range(const struct ert_buffer *buf, size_t offset,
					     size_t size, const char *what, const char *api,
					     struct ert_err *err)
{
	if (offset <= buf->size && size <= buf->size - offset)
		return ERT_OK;
	ert_err_set(err, "%s: %s of %zu bytes at %zu is outside the %zu-byte buffer", api, what,
		    size, offset, buf->size);
	return ERT_STATUS_INTERNAL;
}

/*
 * The variant a step's kernels run in, as the step records it (the OpenCL
 * and Vulkan steps' f16). Each has the tag that ends its kernels' names
 * where the float32 ones end in "-f32"; a new variant (a shader or program
 * built another way) adds itself here, with its tag.
 */
enum ert_gpu_variant {
	ERT_GPU_VARIANT_F32,         /* float32 storage and arithmetic: "-f32" */
	ERT_GPU_VARIANT_F16,         /* float32 tensors stored as float16 (precision LOW): "-f16" */
	ERT_GPU_VARIANT_F16A,        /* and computed in half (elementwise ops, where the device can): "-f16a" */
	ERT_GPU_N_VARIANTS
};

/*
 * The name `edgert profile` shows for kernel @name (its float32 name, as the
 * backends' op tables and tuners give it: "vk-gemm-f32", "ocl-gemm-f32-32x32")
 * run in variant @v: the "-f32" element of @name (before a '-' or the end)
 * becomes the variant's tag ("ocl-gemm-f16-32x32"). @name itself for
 * ERT_GPU_VARIANT_F32 and for names without "-f32"; the names made live
 * as long as the process (interned: ert_exec.kernel may point at them).
 */
const char *ert_gpu_kernel_name(const char *name, enum ert_gpu_variant v);

#endif
