/* SPDX-License-Identifier: MIT */
/*
 * ocl-codes.h — numbers the host code and the kernels agree on. Valid C and
 * OpenCL C: the C side includes it, and the build puts it in front of every
 * program (scripts/embed-cl.sh). Activations are enum ert_act's values.
 */
#ifndef ERT_OCL_CODES_H
#define ERT_OCL_CODES_H

/* fused activations (enum ert_act) */
#define OCL_ACT_NONE 0
#define OCL_ACT_RELU 1
#define OCL_ACT_CLIP 2
#define OCL_ACT_LEAKY_RELU 3
#define OCL_ACT_SIGMOID 4
#define OCL_ACT_HARD_SWISH 5
#define OCL_ACT_HARD_SIGMOID 6
#define OCL_ACT_TANH 7
#define OCL_ACT_GELU 8

/* unary_f32 */
#define OCL_UN_COPY 0
#define OCL_UN_RELU 1
#define OCL_UN_SIGMOID 2
#define OCL_UN_TANH 3
#define OCL_UN_CLIP 4          /* p0 min, p1 max: max first, then min */
#define OCL_UN_LEAKY_RELU 5    /* p0 alpha */
#define OCL_UN_HARD_SWISH 6
#define OCL_UN_HARD_SIGMOID 7  /* p0 alpha, p1 beta */
#define OCL_UN_ELU 8           /* p0 alpha */
#define OCL_UN_EXP 9
#define OCL_UN_LOG 10
#define OCL_UN_NEG 11
#define OCL_UN_ABS 12
#define OCL_UN_SQRT 13
#define OCL_UN_RECIPROCAL 14
#define OCL_UN_ERF 15
#define OCL_UN_GELU 16
#define OCL_UN_GELU_TANH 17
#define OCL_UN_SOFTPLUS 18
#define OCL_UN_FLOOR 19
#define OCL_UN_CEIL 20
#define OCL_UN_SOFTSIGN 21

/* binary_f32 */
#define OCL_BIN_ADD 0
#define OCL_BIN_SUB 1
#define OCL_BIN_MUL 2
#define OCL_BIN_DIV 3
#define OCL_BIN_MAX 4
#define OCL_BIN_MIN 5
#define OCL_BIN_POW 6
#define OCL_BIN_PRELU 7        /* a: x, b: slope */

/* pooling */
#define OCL_POOL_MAX 0
#define OCL_POOL_AVG 1         /* divides by the window's cells inside the input */
#define OCL_POOL_AVG_PAD 2     /* count_include_pad: by the window's cells inside the padded input */

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
