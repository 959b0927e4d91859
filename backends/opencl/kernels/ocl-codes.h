/* SPDX-License-Identifier: MIT */
/*
 * ocl-codes.h — numbers only the OpenCL host code and kernels agree on (the
 * GEMM's tiles). Valid C and OpenCL C: the C side includes it, and the build
 * puts it in front of every program after gpu-common/gpu-codes.h, the op
 * codes both GPU backends share (scripts/embed-cl.sh).
 */
#ifndef ERT_OCL_CODES_H
#define ERT_OCL_CODES_H

/* gemm_f32 / conv_gemm_f32 tile: work-groups of TS_N/WPT_N x TS_M/WPT_M items */
#define OCL_GEMM_TS_M 64
#define OCL_GEMM_TS_N 64
#define OCL_GEMM_TS_K 16
#define OCL_GEMM_WPT_M 4
#define OCL_GEMM_WPT_N 4
/* gemm_f32_32x32: 32x32 tiles, the same depth and items of 4x4 (8x8 items) */
#define OCL_GEMM32_TS 32
/* gemm_f32_gemv: items per work-group (one element of C each), a power of two */
#define OCL_GEMV_WG 64

#endif
