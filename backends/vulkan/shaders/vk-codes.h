/* SPDX-License-Identifier: MIT */
/*
 * vk-codes.h — numbers the host code and the shaders agree on. Valid C and
 * GLSL: the C side includes it, and every shader includes common.glsl,
 * which includes it. Activations are enum ert_act's values.
 */
#ifndef ERT_VK_CODES_H
#define ERT_VK_CODES_H

/* fused activations (enum ert_act) */
#define VK_ACT_NONE 0
#define VK_ACT_RELU 1
#define VK_ACT_CLIP 2
#define VK_ACT_LEAKY_RELU 3
#define VK_ACT_SIGMOID 4
#define VK_ACT_HARD_SWISH 5
#define VK_ACT_HARD_SIGMOID 6
#define VK_ACT_TANH 7
#define VK_ACT_GELU 8

/* eltwise.comp */
#define VK_UN_RELU 1
#define VK_UN_SIGMOID 2
#define VK_UN_TANH 3
#define VK_UN_CLIP 4          /* p0 min, p1 max: max first, then min */
#define VK_UN_LEAKY_RELU 5    /* p0 alpha */
#define VK_UN_HARD_SWISH 6
#define VK_UN_HARD_SIGMOID 7  /* p0 alpha, p1 beta */
#define VK_UN_ELU 8           /* p0 alpha */
#define VK_UN_EXP 9
#define VK_UN_LOG 10
#define VK_UN_NEG 11
#define VK_UN_ABS 12
#define VK_UN_SQRT 13
#define VK_UN_RECIPROCAL 14
#define VK_UN_ERF 15
#define VK_UN_GELU 16
#define VK_UN_GELU_TANH 17
#define VK_UN_SOFTPLUS 18
#define VK_UN_FLOOR 19
#define VK_UN_CEIL 20
#define VK_UN_SOFTSIGN 21

/* binary.comp, binary_same.comp */
#define VK_BIN_ADD 0
#define VK_BIN_SUB 1
#define VK_BIN_MUL 2
#define VK_BIN_DIV 3
#define VK_BIN_MAX 4
#define VK_BIN_MIN 5
#define VK_BIN_POW 6
#define VK_BIN_PRELU 7        /* a: x, b: slope */

/* pool2d.comp, plane_reduce.comp */
#define VK_POOL_MAX 0
#define VK_POOL_AVG 1         /* divides by the window's cells inside the input */
#define VK_POOL_AVG_PAD 2     /* count_include_pad: by the window's cells inside the padded input */

/* gemm.comp: flags, and its built-in tile (work-groups of LX x LY items, WPT x WPT each) */
#define VK_GEMM_HAS_BIAS 1
#define VK_GEMM_HAS_RES 2
#define VK_GEMM_CONV 4
#define VK_GEMM_WPT 4
#define VK_GEMM_LX 16
#define VK_GEMM_LY 16
#define VK_GEMM_TS_K 16

/* 1-D shaders: items per work-group (specialization constant 0) */
#define VK_WG_1D 64
/* row reductions (softmax, layernorm, plane_reduce): items per work-group */
#define VK_RED_WG 64

#endif
