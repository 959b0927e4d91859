/* SPDX-License-Identifier: MIT */
/* fp32 vector kernels at the AVX-512 level (16 lanes, k-masks; see vec-tmpl.h). */
#define ERT_SIMD_AVX512
#define VEC_TABLE ert_vec_kernels_avx512
#define VEC_LEVEL "avx512"
#include "cpu/vec/vec-tmpl.h"
