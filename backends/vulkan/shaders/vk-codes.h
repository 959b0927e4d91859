/* SPDX-License-Identifier: MIT */
/*
 * vk-codes.h — numbers only the Vulkan host code and shaders agree on (the
 * GEMM's flags and tile, work-group sizes). Valid C and GLSL: the C side
 * includes it, and every shader includes common.glsl, which includes it and
 * gpu-common/gpu-codes.h, the op codes both GPU backends share.
 */
#ifndef ERT_VK_CODES_H
#define ERT_VK_CODES_H

/* gemm.comp: flags, and its built-in tile (work-groups of LX x LY items, WPT x WPT each) */
#define VK_GEMM_HAS_BIAS 1
#define VK_GEMM_HAS_RES 2
#define VK_GEMM_CONV 4
#define VK_GEMM_WPT 4
#define VK_GEMM_LX 16
#define VK_GEMM_LY 16
#define VK_GEMM_TS_K 16

#endif
