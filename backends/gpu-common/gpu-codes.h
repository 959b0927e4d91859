/* SPDX-License-Identifier: MIT */
/*
 * gpu-codes.h — the op codes the GPU backends' host code and their kernels
 * agree on, one copy for both APIs. Valid C, OpenCL C and GLSL (defines and
 * block comments only): the C side includes it (gpu-common/gpu-ops.h), the
 * OpenCL build puts it in front of every program (scripts/embed-cl.sh, before
 * kernels/ocl-codes.h), and the Vulkan shaders include it from common.glsl.
 * What only one API has (tile sizes, Vulkan's packed flags) stays in
 * opencl/kernels/ocl-codes.h and vulkan/shaders/vk-codes.h.
 */
#ifndef ERT_GPU_CODES_H
#define ERT_GPU_CODES_H

/* fused activations: enum ert_act's values */
#define ERT_GPU_ACT_NONE 0
#define ERT_GPU_ACT_RELU 1
#define ERT_GPU_ACT_CLIP 2
#define ERT_GPU_ACT_LEAKY_RELU 3
#define ERT_GPU_ACT_SIGMOID 4
#define ERT_GPU_ACT_HARD_SWISH 5
#define ERT_GPU_ACT_HARD_SIGMOID 6
#define ERT_GPU_ACT_TANH 7
#define ERT_GPU_ACT_GELU 8

/* unary kernels (OpenCL unary_f32, Vulkan eltwise.comp) */
#define ERT_GPU_UN_COPY 0
#define ERT_GPU_UN_RELU 1
#define ERT_GPU_UN_SIGMOID 2
#define ERT_GPU_UN_TANH 3
#define ERT_GPU_UN_CLIP 4          /* p0 min, p1 max: max first, then min */
#define ERT_GPU_UN_LEAKY_RELU 5    /* p0 alpha */
#define ERT_GPU_UN_HARD_SWISH 6
#define ERT_GPU_UN_HARD_SIGMOID 7  /* p0 alpha, p1 beta */
#define ERT_GPU_UN_ELU 8           /* p0 alpha */
#define ERT_GPU_UN_EXP 9
#define ERT_GPU_UN_LOG 10
#define ERT_GPU_UN_NEG 11
#define ERT_GPU_UN_ABS 12
#define ERT_GPU_UN_SQRT 13
#define ERT_GPU_UN_RECIPROCAL 14
#define ERT_GPU_UN_ERF 15
#define ERT_GPU_UN_GELU 16
#define ERT_GPU_UN_GELU_TANH 17
#define ERT_GPU_UN_SOFTPLUS 18
#define ERT_GPU_UN_FLOOR 19
#define ERT_GPU_UN_CEIL 20
#define ERT_GPU_UN_SOFTSIGN 21

/* binary kernels (OpenCL binary_f32/binary_same_f32, Vulkan binary*.comp) */
#define ERT_GPU_BIN_ADD 0
#define ERT_GPU_BIN_SUB 1
#define ERT_GPU_BIN_MUL 2
#define ERT_GPU_BIN_DIV 3
#define ERT_GPU_BIN_MAX 4
#define ERT_GPU_BIN_MIN 5
#define ERT_GPU_BIN_POW 6
#define ERT_GPU_BIN_PRELU 7        /* a: x, b: slope */

/* 1-D kernels: items per work-group (OpenCL: the tuner's first size) */
#define ERT_GPU_WG_1D 64
/* row reductions (softmax, layernorm, plane_reduce): items per work-group, a power of two */
#define ERT_GPU_RED_WG 64

/* pooling (pool2d, plane_reduce) */
#define ERT_GPU_POOL_MAX 0
#define ERT_GPU_POOL_AVG 1         /* divides by the window's cells inside the input */
#define ERT_GPU_POOL_AVG_PAD 2     /* count_include_pad: by the window's cells inside the padded input */

#endif
