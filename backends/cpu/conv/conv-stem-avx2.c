/* SPDX-License-Identifier: MIT */
/* Stem convolution at the AVX2 level: tiles of 4 channels x 3 blocks of 8 pixels. */
#define ST_LEVEL ert_stem_avx2
#define ST_NAME "f32-conv-stem-avx2"
#define ST_CO 4
#define ST_P 3
#include "cpu/conv/conv-stem-tmpl.h"
