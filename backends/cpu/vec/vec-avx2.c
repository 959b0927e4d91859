/* SPDX-License-Identifier: MIT */
/* fp32 vector kernels at the AVX2 level (8 lanes; see vec-tmpl.h). */
#define VEC_TABLE ert_vec_kernels_avx2
#define VEC_LEVEL "avx2"
#include "cpu/vec/vec-tmpl.h"
