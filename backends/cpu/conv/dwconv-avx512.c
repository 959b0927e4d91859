/* SPDX-License-Identifier: MIT */
/* Depthwise convolution planes at the AVX-512 level (16 lanes, k-masks; see dwconv-tmpl.h). */
#define ERT_SIMD_AVX512
#define DW_LEVEL ert_dwconv_avx512
#define DW_NAME "f32-dwconv-avx512"
#define DW_NAME3 "f32-dwconv3x3-avx512"
/* whole stores at the edges of the 3x3 planes (dwconv-tmpl.h), as at avx2 */
#define DW_PLAIN_EDGE_STORES 1
#include "cpu/conv/dwconv-tmpl.h"
