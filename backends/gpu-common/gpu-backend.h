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

#endif
