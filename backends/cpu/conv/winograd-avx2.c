/* SPDX-License-Identifier: MIT */
/* Winograd F(4x4, 3x3) transforms at the AVX2 level (see winograd-tmpl.h). */
#define WINO_LEVEL avx2
#include "cpu/conv/winograd-tmpl.h"
