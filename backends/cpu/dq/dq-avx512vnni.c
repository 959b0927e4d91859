/* SPDX-License-Identifier: MIT */
/* Dynamic quantisation, AVX512-VNNI: vpdpbusd on 256-bit vectors (dq-tmpl.h). */
#include <immintrin.h>

#include "cpu/dq/dq.h"

static inline __m256i dq_dot32_vnni(__m256i u, __m256i s)
{
	return _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, s);
}

#define DQ_FN ert_dq_dot__avx512vnni
#define dq_dot32 dq_dot32_vnni
#include "cpu/dq/dq-tmpl.h"
