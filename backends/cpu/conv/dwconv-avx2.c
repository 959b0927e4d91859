/* SPDX-License-Identifier: MIT */
/* Depthwise convolution planes at the AVX2 level (8 lanes; see dwconv-tmpl.h). */
#define DW_LEVEL ert_dwconv_avx2
#define DW_NAME "f32-dwconv-avx2"
#define DW_NAME3 "f32-dwconv3x3-avx2"
/* whole stores at the edges of the 3x3 planes (dwconv-tmpl.h): vmaskmovps stores are slow */
#define DW_PLAIN_EDGE_STORES 1
#include "cpu/conv/dwconv-tmpl.h"
