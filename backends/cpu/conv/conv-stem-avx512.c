/* SPDX-License-Identifier: MIT */
/* Stem convolution at the AVX-512 level: tiles of 8 channels x 3 blocks of 16 pixels. */
#define ERT_SIMD_AVX512
#define ST_LEVEL ert_stem_avx512
#define ST_NAME "f32-conv-stem-avx512"
#define ST_CO 8
#define ST_P 3
#include "cpu/conv/conv-stem-tmpl.h"
