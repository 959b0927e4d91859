/* SPDX-License-Identifier: MIT */
/* gpu-ops-impl.h — the supports functions of gpu-common's op files, for its op table (gpu-ops.c). */
#ifndef ERT_GPU_OPS_IMPL_H
#define ERT_GPU_OPS_IMPL_H

#include "gpu-common/gpu-ops.h"

bool ert_gpu_unary_supports(const struct ert_exec *x);
bool ert_gpu_binary_supports(const struct ert_exec *x);
bool ert_gpu_conv_supports(const struct ert_exec *x);
bool ert_gpu_gemm_supports(const struct ert_exec *x);
bool ert_gpu_matmul_supports(const struct ert_exec *x);
bool ert_gpu_pool_supports(const struct ert_exec *x);
bool ert_gpu_global_pool_supports(const struct ert_exec *x);
bool ert_gpu_softmax_supports(const struct ert_exec *x);
bool ert_gpu_layernorm_supports(const struct ert_exec *x);
bool ert_gpu_view_supports(const struct ert_exec *x);
bool ert_gpu_transpose_supports(const struct ert_exec *x);
bool ert_gpu_slice_supports(const struct ert_exec *x);
bool ert_gpu_concat_supports(const struct ert_exec *x);
bool ert_gpu_gather_supports(const struct ert_exec *x);

#endif
